/* Target of calls.exp. Run with -e it prints what calls.stp prints when
 * it traces a plain run (which prints nothing itself). */
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum color { RED, GREEN = 5, BLUE };

static const int add_line = __LINE__; __attribute__((noinline)) int add(int a, int b)
{
	return a + b;
}

__attribute__((noinline)) long flags(bool on, enum color c, const char *p, unsigned char u,
				     short s)
{
	return on + c + (p != 0) + u + s;
}

int main(int argc, char **argv)
{
	int expect = argc > 1 && !strcmp(argv[1], "-e");
	static const struct { int a, b; } calls[] = { { 1, 2 }, { -5, 3 }, { INT_MAX, 0 } };
	char exe[PATH_MAX];
	long sum = 0;

	if (!realpath("/proc/self/exe", exe))
		return 1;
	if (expect)
		printf("begin 1\n");
	for (int i = 0; i < 3; i++) {
		if (expect) {
			printf("process(\"%s\").function(\"add@%s:%d\") add a=%d b=%d\n", exe,
			       __FILE__, add_line, calls[i].a, calls[i].b);
			/* SystemTap's %#x of a sign-extended 64-bit value */
			printf("parms a=0x%llx b=0x%llx\n", (unsigned long long)(long long)calls[i].a,
			       (unsigned long long)(long long)calls[i].b);
			printf("return %d 1\n", calls[i].a + calls[i].b);
		}
		sum += add(calls[i].a, calls[i].b);
	}
	if (expect)
		printf("flags on=1 c=6 p=1 u=200 s=-7\n");
	sum += flags(true, BLUE, exe, 200, -7);
	if (expect)
		printf("end 1\nadds 3\n");
	return sum == 0;
}
