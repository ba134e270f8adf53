/* The workload of bench/affinity-bench.sh.
 *
 *   bench-affinity calls N        calls tiny() N times (the probed or
 *                                 call-graph-traced function is region(),
 *                                 which calls tiny() N times)
 *   bench-affinity threads SECS K four busy threads for SECS seconds;
 *                                 thread 0 calls hot() every K loops of
 *                                 its work, the others never do. Prints
 *                                 "untraced_per_s X": the other three
 *                                 threads' loops per second, summed
 * Output: "key value" lines. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline, noipa))

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

NOINLINE long tiny(long x)
{
	__asm__ volatile("" : "+r"(x));
	return x + 1;
}

NOINLINE long region(long n)
{
	long acc = 0;

	for (long i = 0; i < n; i++)
		acc += tiny(i);
	return acc;
}

NOINLINE long hot(long x)
{
	__asm__ volatile("" : "+r"(x));
	return x ^ 1;
}

static atomic_int stop;
static long every = 1000;
static long loops[4];

/* one loop: a little arithmetic the compiler cannot drop */
static long spin(long acc)
{
	for (int k = 0; k < 200; k++) {
		acc = acc * 6364136223846793005L + 1442695040888963407L;
		__asm__ volatile("" : "+r"(acc));
	}
	return acc;
}

static void *busy(void *arg)
{
	long id = (long)arg, n = 0, acc = id;

	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		acc = spin(acc);
		if (id == 0 && ++n % every == 0)
			acc = hot(acc);
		loops[id]++;
	}
	return (void *)acc;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "calls")) {
		long long t0 = now_ns();
		long r = region(atol(argv[2]));
		printf("region_ns %lld\nresult %ld\n", now_ns() - t0, r);
		return 0;
	}
	if (argc == 4 && !strcmp(argv[1], "threads")) {
		pthread_t th[4];
		double secs = atof(argv[2]);
		long long t0, t1;

		every = atol(argv[3]) > 0 ? atol(argv[3]) : 1;
		t0 = now_ns();
		for (long i = 0; i < 4; i++)
			pthread_create(&th[i], NULL, busy, (void *)i);
		usleep((useconds_t)(secs * 1e6));
		atomic_store(&stop, 1);
		for (int i = 0; i < 4; i++)
			pthread_join(th[i], NULL);
		t1 = now_ns();
		printf("untraced_per_s %.0f\nhot_per_s %.0f\n",
		       (double)(loops[1] + loops[2] + loops[3]) * 1e9 / (double)(t1 - t0),
		       (double)loops[0] / (double)every * 1e9 / (double)(t1 - t0));
		return 0;
	}
	fprintf(stderr, "usage: bench-affinity calls N | threads SECS K\n");
	return 2;
}
