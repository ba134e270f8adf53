/* The marginal cost of a traced call: region(n) makes n calls of a tiny
 * leaf; the program prints how long the region took (its own clock, so
 * what tracing adds is in it). Run with two n: the difference cancels the
 * switch-on and switch-off. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define NOINLINE __attribute__((noinline, noclone, noipa))

NOINLINE int leaf(int x)
{
	__asm__ volatile("" : "+r"(x));
	return x + 1;
}

NOINLINE int region(int n)
{
	int s = 0;
	for (int i = 0; i < n; i++)
		s = leaf(s);
	return s;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 1000;
	struct timespec a, b;

	clock_gettime(CLOCK_MONOTONIC, &a);
	int s = region(n);
	clock_gettime(CLOCK_MONOTONIC, &b);
	printf("region %d calls %lld ns (%d)\n", n,
	       (long long)(b.tv_sec - a.tv_sec) * 1000000000 + (b.tv_nsec - a.tv_nsec), s);
	return 0;
}
