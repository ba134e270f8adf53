/* Target of the threads test in process.exp: THREADS threads call work()
 * CALLS times each. Run with -e it prints what the script prints. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#define THREADS 4
#define CALLS 200

static volatile long total;

__attribute__((noinline)) void work(int i)
{
	__sync_fetch_and_add(&total, i);
}

static void *run(void *arg)
{
	(void)arg;
	for (int i = 0; i < CALLS; i++)
		work(i);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t[THREADS];

	if (argc > 1 && !strcmp(argv[1], "-e")) {
		printf("hits %d threads %d\n", THREADS * CALLS, THREADS);
		return 0;
	}
	for (int i = 0; i < THREADS; i++)
		pthread_create(&t[i], NULL, run, NULL);
	for (int i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	return 0;
}
