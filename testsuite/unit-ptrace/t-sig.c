/* Target for signal handler entries (_stp_pt_signal_step, driver -g):
 * the driver checks that its callback runs once per handler run, with rip
 * at the handler, and that no trap of its reaches the program.
 *   t-sig basic N    N raises each of SIGUSR1 (on_sig) and SIGALRM
 *                    (on_info, SA_SIGINFO, on an alternate stack), one
 *                    nested signal (SIGUSR2 raised inside on_sig), an
 *                    ignored and a default-ignored signal (no call), in
 *                    the main thread and in a second thread
 *   t-sig timer N    a profiling timer interrupts N calls of work() (a
 *                    probe there runs out of line: signals land in the
 *                    scratch slot too)
 *   t-sig step       SIGUSR1 raised in stepped_raise() (single-stepped
 *                    with -s: step mode takes precedence, no call) and
 *                    once more outside it
 *   t-sig fatal      SIGTERM without a handler kills it
 *   t-sig spin       raise SIGUSR1 and call work() until killed ("ready"
 *                    on fd 3; attach tests)
 * It prints the driver lines to expect ("expect: ..."). */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

static volatile sig_atomic_t n_sig, n_info, nested;
static volatile int sink;

__attribute__((noinline)) void on_sig(int sig)
{
	n_sig++;
	if (sig == SIGUSR1 && !nested) {
		nested = 1;
		raise(SIGUSR2); /* a frame on top of this one */
	}
}

__attribute__((noinline)) void on_info(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)uc;
	if (si->si_signo == SIGALRM || si->si_signo == SIGPROF)
		n_info++;
}

__attribute__((noinline)) int work(int x)
{
	sink = x;
	return x * 3 + 1;
}

__attribute__((noinline)) void stepped_raise(void)
{
	raise(SIGUSR1);
}

static int rounds;

static void *raiser(void *arg)
{
	(void)arg;
	for (int i = 0; i < rounds; i++) {
		raise(SIGUSR1);
		raise(SIGALRM);
	}
	return NULL;
}

static void handlers(void)
{
	struct sigaction sa;
	static char altstack[65536];
	stack_t ss = {.ss_sp = altstack, .ss_size = sizeof altstack};

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_sig;
	sigaction(SIGUSR1, &sa, NULL);
	sigaction(SIGUSR2, &sa, NULL);
	sigaltstack(&ss, NULL);
	sa.sa_sigaction = on_info;
	sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART;
	sigaction(SIGALRM, &sa, NULL);
	sigaction(SIGPROF, &sa, NULL);
	signal(SIGHUP, SIG_IGN);
}

int main(int argc, char **argv)
{
	if (argc == 3 && strcmp(argv[1], "basic") == 0) {
		pthread_t th;
		rounds = atoi(argv[2]);
		handlers();
		raiser(NULL);
		raise(SIGHUP);	 /* ignored */
		raise(SIGWINCH); /* default: ignored */
		pthread_create(&th, NULL, raiser, NULL); /* no altstack there */
		pthread_join(th, NULL);
		printf("sig=%d info=%d\n", (int)n_sig, (int)n_info);
		printf("expect: sigstep on_sig calls=%d\n", 2 * rounds + 1);
		printf("expect: sigstep on_info calls=%d\n", 2 * rounds);
		printf("expect: probe on_sig hits=%d\n", 2 * rounds + 1);
		return 0;
	}
	if (argc == 3 && strcmp(argv[1], "timer") == 0) {
		struct itimerval it = {{0, 200}, {0, 200}};
		int n = atoi(argv[2]);
		handlers();
		setitimer(ITIMER_PROF, &it, NULL);
		for (int i = 0; i < n; i++)
			work(i);
		memset(&it, 0, sizeof it);
		setitimer(ITIMER_PROF, &it, NULL);
		printf("expect: sigstep on_info calls=%d\n", (int)n_info);
		printf("expect: probe work hits=%d\n", n);
		return 0;
	}
	if (argc == 2 && strcmp(argv[1], "step") == 0) {
		handlers();
		nested = 1;
		stepped_raise();
		raise(SIGUSR1);
		printf("sig=%d\n", (int)n_sig);
		printf("expect: sigstep on_sig calls=1\n");
		return 0;
	}
	if (argc == 2 && strcmp(argv[1], "fatal") == 0) {
		handlers();
		raise(SIGUSR1);
		printf("expect: sigstep on_sig calls=2\n");
		fflush(stdout);
		raise(SIGTERM);
		return 0;
	}
	if (argc == 2 && strcmp(argv[1], "spin") == 0) {
		handlers();
		if (write(3, "r", 1) != 1)
			perror("ready");
		for (int i = 0;; i++) {
			work(i);
			nested = 1;
			raise(SIGUSR1);
			usleep(500);
		}
	}
	return 2;
}
