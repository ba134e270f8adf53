/* Target of the @entry test in process.exp: recursion, so each return
 * must get the values of its own call. Run with -e it prints what the
 * script prints. */
#include <stdio.h>
#include <string.h>

__attribute__((noinline)) int fact(int n)
{
	if (n <= 1)
		return 1;
	return n * fact(n - 1);
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "-e")) {
		int f = 1;
		for (int n = 1; n <= 5; n++) {
			f *= n;
			printf("fact(%d)=%d %d\n", n, f, n);
		}
		return 0;
	}
	return fact(5) != 120;
}
