/* lines.exp: .statement("F@FILE+N"), line lists and ranges, and
 * .function("F").label("L"). With -e it prints the lines the tests name:
 * body's declaration line and the line of walk's label. */
#include <stdio.h>
#include <string.h>

static const int decl = __LINE__ + 1;
__attribute__((noinline)) static int body(int n)
{
	int s = 0;
	for (int i = 0; i < n; i++)
		s += i;
	s = s * 2;
	return s;
}

static const int label = __LINE__ + 4;
__attribute__((noinline)) static int walk(int t)
{
	/* the label's line */
again:
	t++;
	if (t < 3)
		goto again;
	return t;
}

int main(int argc, char **argv)
{
	int sum = 0;

	if (argc > 1 && !strcmp(argv[1], "-e")) {
		printf("%s %d %d\n", __FILE__, decl, label);
		return 0;
	}
	for (int k = 0; k < 3; k++)
		sum += body(4);
	sum += walk(0);
	printf("sum %d\n", sum);
	return 0;
}
