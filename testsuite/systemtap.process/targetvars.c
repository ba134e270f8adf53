/* Target of targetvars.exp. Run with -e it prints what targetvars.stp
 * prints when it traces a plain run (which prints nothing itself); with
 * -w it prints what the -g write test prints. Built at -O0 and -O2. */
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

enum color { RED, GREEN = 5, BLUE };

struct inner {
	short s;
	unsigned int bf : 3;
	int sbf : 5;
};

struct outer {
	int a;
	struct inner in;
	struct inner *pin;
	int arr[4];
	const char *name;
	union {
		int i;
		unsigned char b[4];
	} u;
};

struct small {
	int x;
	long y;
	char tag[6];
	const char *s;
	struct {
		int p, q;
	} in;
	int arr[3];
};

int tv_global = 42;
static volatile long tv_static = -7;
volatile long tv_sink;

__attribute__((noinline, noipa)) long tv_ints(signed char sc, unsigned char uc, short ss,
					      unsigned short us, int si, unsigned int ui, long sl,
					      unsigned long ul, enum color c, bool b)
{
	tv_sink = sc + uc + ss + us + si + ui + sl + (long)ul + c + b;
	return tv_sink;
}

__attribute__((noinline, noipa)) int tv_struct(struct outer *o, int idx)
{
	int loc = o->arr[idx] + o->in.s;

	tv_sink = loc + tv_static;
	return loc;
}

__attribute__((noinline, noipa)) int tv_pretty(struct small *p)
{
	tv_sink = p->x;
	return p->x;
}

__attribute__((noinline, noipa)) int tv_write(int x)
{
	int y = x * 2;

	tv_sink = y;
	return y;
}

int main(int argc, char **argv)
{
	struct inner pi = {-7, 5, -3};
	struct outer o = {1, {-3, 2, 11}, &pi, {10, 20, 30, 40}, "hello\tworld", {.i = 0x01020304}};
	struct small sm = {7, -8, "abc", "str\"q", {1, 2}, {4, 5, 6}};

	if (argc > 1 && !strcmp(argv[1], "-e")) {
		/* tv_ints */
		printf("%d %d %d %d %d %u %ld %lu %d %d\n", -5, 250, -300, 65000, -100000,
		       4000000000u, -5000000000l, 18446744073709551615ul, BLUE, 1);
		/* tv_struct */
		printf("%d %d %d %d %d\n", o.a, o.in.s, pi.s, pi.bf, pi.sbf);
		printf("%d %d %d %d\n", o.arr[0], o.arr[3], o.arr[2], o.u.b[0]);
		printf("%d %d\n", (int)offsetof(struct outer, arr[2]), 1);
		printf("%d %ld\n", tv_global, tv_static);
		printf("%d %d\n", -3, 20);
		printf("1 0 no\n");
		printf("\"%s\"\n", "hello\\tworld");
		/* tv_pretty */
		printf("{.x=%d, .y=%ld, .tag=\"%s\", .s=\"%s\", .in={...}, .arr=[...]}\n", sm.x, sm.y,
		       sm.tag, "str\\\"q");
		printf("{.x=%d, .y=%ld, .tag=\"%s\", .s=\"%s\", .in={.p=%d, .q=%d}, .arr=[%d, %d, %d]}\n",
		       sm.x, sm.y, sm.tag, "str\\\"q", sm.in.p, sm.in.q, sm.arr[0], sm.arr[1],
		       sm.arr[2]);
		printf("%d\n", sm.in.q);
		return 0;
	}
	if (argc > 1 && !strcmp(argv[1], "-w")) {
		printf("10\n");
		return 0;
	}
	tv_ints(-5, 250, -300, 65000, -100000, 4000000000u, -5000000000l, 18446744073709551615ul,
		BLUE, true);
	tv_struct(&o, 2);
	tv_pretty(&sm);
	tv_write(3);
	return 0;
}
