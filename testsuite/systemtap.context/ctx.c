/* The traced program of context.exp. Run with -e it prints what ctx.stp
 * prints when it traces "ctx run one two" (same environment and user). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct vals {
	signed char c;
	unsigned char uc;
	short s;
	unsigned short us;
	int i;
	unsigned u;
	long l;
	unsigned long ul;
};

static struct vals v = { -7, 200, -1234, 60000, -123456789, 4000000000u, -1234567890123L,
			 18000000000000000000ul };
static const char *str = "hello \"w\"\n";
static int call_line;

__attribute__((noinline)) long leaf(int a, unsigned b, long c, const char *s, int e,
				    struct vals *p, long g, long h)
{
	return a + b + c + s[0] + e + p->c + g + h;
}

__attribute__((noinline)) long middle(int x)
{
	long r = leaf(-5, 4000000000u, -1234567890123L, str, -3, &v, 77, 88); call_line = __LINE__;

	return r + x;
}

__attribute__((noinline)) long outer(void)
{
	return middle(1) + 1;
}

int main(int argc, char **argv)
{
	const char *env = getenv("CTX_TEST_VAR");

	if (argc > 1 && !strcmp(argv[1], "-e")) {
		middle(0); /* sets call_line */
		printf("ppfunc leaf probemod [] env %s\n", env ? env : "");
		printf("cmdline %s run one two|one|\n", argv[0]);
		printf("ids %d %d\n", (int)getgid(), (int)geteuid());
		printf("args -5 4000000000 -1234567890123 hello \"w\"\n -3\n");
		printf("u32 4294967291 s64 -1234567890123 regs -5 4294967291 1\n");
		printf("quoted \"hello \\\"w\\\"\\n\" n hello nq \"hello\"\n");
		printf("ints %d %d %d %d %d %u %ld %lu\n", v.c, v.uc, v.s, v.us, v.i, v.u, v.l,
		       v.ul);
		printf("sized %d %d %d %d %d %u %ld\n", v.c, v.uc, v.s, v.us, v.i, v.u, v.l);
		printf("stack leaf middle outer main\n");
		printf("line %d\n", call_line);
		printf("checks 1 1 1 1 1\n");
		return 0;
	}
	outer();
	return 0;
}
