/* Four threads switch tracing on and off at once: each runs root(N),
 * which makes N calls of mid(), each calling leaf() twice. Every thread's
 * tree must hold exactly its own calls. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define NI __attribute__((noinline))

volatile long sink;

NI long leaf(long x)
{
	sink += x;
	return x + 1;
}

NI long mid(long x)
{
	return leaf(x) + leaf(x + 1);
}

NI long root(long n)
{
	long s = 0;
	for (long i = 0; i < n; i++)
		s += mid(i);
	return s;
}

static long n;

static void *run(void *a)
{
	(void)a;
	sink += root(n);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t[4];

	n = argc > 1 ? atol(argv[1]) : 500;
	for (int i = 0; i < 4; i++)
		pthread_create(&t[i], NULL, run, NULL);
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	printf("threads done\n");
	return 0;
}
