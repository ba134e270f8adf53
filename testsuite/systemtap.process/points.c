/* points.exp: .statement, .plt, .inline and .exported probes. With -e it
 * prints what the tests' scripts print. Built with -rdynamic (so step
 * and main are exported; hidden, being static, is not). */
#include <stdio.h>
#include <string.h>

static inline __attribute__((always_inline)) int sq(int x)
{
	return x * x;
}

static const int line_a = __LINE__ + 4;
__attribute__((noinline)) int step(int k)
{
	int v = k + 1;
	v = sq(v);
	return v;
}

__attribute__((noinline)) static int hidden(int k)
{
	return k;
}

int main(int argc, char **argv)
{
	int sum = 0;

	if (argc > 1 && !strcmp(argv[1], "-e")) {
		printf("statement(\"step@%s:%d\") v=2\nv=3\nv=4\n", __FILE__, line_a);
		printf("sq 3\nexported main 1 step 3\n");
		return 0;
	}
	for (int i = 1; i <= 3; i++)
		sum += step(i) + hidden(i);
	puts(sum ? "done" : "none");
	return 0;
}
