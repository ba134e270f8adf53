/* mark.exp: SDT markers, one with a semaphore (it fires only while the
 * semaphore is set: the program then says so), with arguments of several
 * sizes and kinds (-loop: for -x, until SIGUSR1, then prints the
 * semaphore, which must be back to 0). With -e, prints what the tests' scripts print. */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#define _SDT_HAS_SEMAPHORES 1
#include <sys/sdt.h>
#include <unistd.h>

#define SEMAPHORE(n) unsigned short tst_##n##_semaphore __attribute__((unused, section(".probes")))
SEMAPHORE(point);
SEMAPHORE(global_arg);
SEMAPHORE(guarded);
SEMAPHORE(noargs);

static long glob = -5;

__attribute__((noinline)) static void work(int i, long big, char c)
{
	STAP_PROBE3(tst, point, i, big, c);
	STAP_PROBE1(tst, global_arg, glob);
	if (tst_guarded_semaphore)
		STAP_PROBE2(tst, guarded, i * 2, "str");
	STAP_PROBE(tst, noargs);
}

static volatile sig_atomic_t done;

static void on_usr1(int sig)
{
	(void)sig;
	done = 1;
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "-loop")) { /* for -x: until SIGUSR1 */
		signal(SIGUSR1, on_usr1);
		printf("ready\n");
		fflush(stdout);
		for (int i = 0; !done && i < 30000; i++) {
			if (tst_guarded_semaphore)
				STAP_PROBE2(tst, guarded, i, "loop");
			usleep(2000);
		}
		printf("semaphore %d\n", tst_guarded_semaphore);
		return 0;
	}
	if (argc > 1 && !strcmp(argv[1], "-e")) {
		for (int i = 1; i <= 3; i++)
			printf("point %d %ld %d\nguarded %d str\n", i, 1000000000L * i, 'a' + i,
			       2 * i);
		printf("semaphore set\nglobal 3\n");
		return 0;
	}
	for (int i = 1; i <= 3; i++)
		work(i, 1000000000L * i, (char)('a' + i));
	printf("semaphore %s\n", tst_guarded_semaphore ? "set" : "0");
	return 0;
}
