/* Target for stap.exp: 3 threads that sleep in a loop; "ready" on stdout
 * once they all exist (stap then attaches with -x). */
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

static void *run(void *arg)
{
	(void)arg;
	for (;;)
		usleep(1000);
	return NULL;
}

int main(void)
{
	pthread_t t;

	for (int i = 0; i < 3; i++)
		pthread_create(&t, NULL, run, NULL);
	printf("ready\n");
	fflush(stdout);
	for (;;)
		pause();
}
