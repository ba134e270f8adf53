/* callee.exp: .callee and .callees probes. Built with -gdwarf-4 -O2: GCC
 * writes the calls a function makes (DW_TAG_GNU_call_site) only when it
 * optimises. With -e it prints what the test's script prints (the calls
 * made from f, down to the given depth); with -L, the points -L lists. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

volatile int sink;

static const int g_line = __LINE__ + 1;
__attribute__((noinline, noclone)) int g(int x)
{
	sink++;
	return x + 1;
}

static const int h_line = __LINE__ + 1;
__attribute__((noinline, noclone)) int h(int x)
{
	return g(x) * 2;
}

static const int f_line = __LINE__ + 1;
__attribute__((noinline, noclone)) int f(int x)
{
	return g(x) + h(x + 10);
}

int main(int argc, char **argv)
{
	if (argc > 2 && !strcmp(argv[1], "-e")) {
		/* f calls g(1), then h(11), which calls g(11) */
		printf("g 1\n");
		if (atoi(argv[2]) > 1)
			printf("h 11\ng 11\n");
		return 0;
	}
	if (argc > 2 && !strcmp(argv[1], "-L")) {
		printf("process(\"%s\").function(\"f@%s:%d\").callee(\"g@%s:%d\") $x:int\n", argv[2],
		       __FILE__, f_line, __FILE__, g_line);
		printf("process(\"%s\").function(\"f@%s:%d\").callee(\"h@%s:%d\") $x:int\n", argv[2],
		       __FILE__, f_line, __FILE__, h_line);
		return 0;
	}
	sink = f(1);
	sink = g(2); /* main's calls: no .callee probe of f fires */
	sink = h(3);
	return 0;
}
