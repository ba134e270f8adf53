/* The flight recorder on a long region (ring.exp): region(N) makes N
 * calls of mid(i), each calling leaf_a() when i % 3 == 0, else leaf_b(),
 * then calls mark(), where a script takes its snapshot. With "sig", a
 * SIGALRM every 100 us interrupts all but the last 100 calls, at most
 * MAX_ALARMS times, and the program prints how many came
 * (ring_signals.exp). The cap: where a signal costs the tracer more than
 * the interval (two ptrace stops across CPUs, a loaded machine), the loop
 * would make little progress between signals and take minutes. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

static volatile int sink;
#define MAX_ALARMS 20000
static volatile sig_atomic_t alarms;
static int with_signals, stopped;

static void on_alarm(int sig)
{
	(void)sig;
	alarms++;
}

static void timer(long us)
{
	struct itimerval it = {{0, us}, {0, us}};

	setitimer(ITIMER_REAL, &it, NULL);
}

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
	for (long i = 0; i < n; i++) {
		if (with_signals && i == 0)
			timer(100);
		if (with_signals && !stopped && (i == n - 100 || alarms >= MAX_ALARMS)) {
			timer(0);
			stopped = 1;
		}
		mid(i);
	}
	mark();
}

int main(int argc, char **argv)
{
	with_signals = argc > 2 && !strcmp(argv[2], "sig");
	if (with_signals)
		signal(SIGALRM, on_alarm);
	region(argc > 1 ? atol(argv[1]) : 1000);
	if (with_signals)
		printf("alarms: %d\n", (int)alarms);
	return 0;
}
