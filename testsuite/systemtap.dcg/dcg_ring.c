/* The flight recorder on a long region (ring.exp): region(N) makes N
 * calls of mid(i), each calling leaf_a() when i % 3 == 0, else leaf_b(),
 * then calls mark(), where a script takes its snapshot. */
#include <stdlib.h>

static volatile int sink;

__attribute__((noinline)) void leaf_a(void)
{
	sink++;
}

__attribute__((noinline)) void leaf_b(void)
{
	sink--;
}

__attribute__((noinline)) void mid(long i)
{
	if (i % 3 == 0)
		leaf_a();
	else
		leaf_b();
}

__attribute__((noinline)) void mark(void)
{
	__asm__ volatile("");
}

__attribute__((noinline)) void region(long n)
{
	for (long i = 0; i < n; i++)
		mid(i);
	mark();
}

int main(int argc, char **argv)
{
	region(argc > 1 ? atol(argv[1]) : 1000);
	return 0;
}
