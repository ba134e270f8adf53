/* More code than a small cache holds: work() calls 128 different
 * functions through a table, twice (traced with -C 128K the cache is
 * flushed and translation starts again, several times); or, with
 * "threads", two threads call work() at once (with -M 1 only one is
 * translated: the other is refused). The tree (-L) is printed as
 * "expect:" (for the first use only). */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#define NOINLINE __attribute__((noinline, noclone, noipa))

/* each function: a few dozen instructions of its own */
#define FN(n)                                           \
	NOINLINE static int f##n(int x)                 \
	{                                               \
		for (int i = 0; i < 3; i++) {           \
			x = x * (n + 3) + (x >> 3) + i; \
			if (x & 4)                      \
				x ^= n * 7;             \
			else                            \
				x += n;                 \
			__asm__ volatile("" : "+r"(x)); \
		}                                       \
		return x & 0xffff;                      \
	}
#define FN8(n) FN(n##0) FN(n##1) FN(n##2) FN(n##3) FN(n##4) FN(n##5) FN(n##6) FN(n##7)
FN8(1)
FN8(2) FN8(3) FN8(4) FN8(5) FN8(6) FN8(7) FN8(8) FN8(11) FN8(12) FN8(13) FN8(14) FN8(15) FN8(16)
    FN8(17) FN8(18)
#define T8(n) f##n##0, f##n##1, f##n##2, f##n##3, f##n##4, f##n##5, f##n##6, f##n##7
	static int (*const fns[])(int) = { T8(1),  T8(2),  T8(3),  T8(4),  T8(5),  T8(6),
					   T8(7),  T8(8),  T8(11), T8(12), T8(13), T8(14),
					   T8(15), T8(16), T8(17), T8(18) };
#define NFNS (int)(sizeof fns / sizeof *fns)

static pthread_barrier_t bar;
static int threads;

NOINLINE int work(void)
{
	int s = 1;
	if (threads)
		pthread_barrier_wait(&bar);
	for (int round = 0; round < 2; round++)
		for (int i = 0; i < NFNS; i++)
			s = fns[i](s);
	return s;
}

static void *run(void *arg)
{
	work();
	return arg;
}

int main(int argc, char **argv)
{
	threads = argc > 1 && !strcmp(argv[1], "threads");
	if (threads) {
		pthread_t a, b;
		pthread_barrier_init(&bar, NULL, 2);
		pthread_create(&a, NULL, run, NULL);
		pthread_create(&b, NULL, run, NULL);
		pthread_join(a, NULL);
		pthread_join(b, NULL);
		printf("threads: done\n");
		return 0;
	}
	printf("work: %d\n", work());
	static const int groups[] = { 1, 2, 3, 4, 5, 6, 7, 8, 11, 12, 13, 14, 15, 16, 17, 18 };
	printf("expect: -> work\n");
	for (int round = 0; round < 2; round++)
		for (int i = 0; i < NFNS; i++)
			printf("expect:  -> f%d%d\nexpect:  <- f%d%d\n", groups[i / 8], i % 8,
			       groups[i / 8], i % 8);
	printf("expect: <- work\n");
	return 0;
}
