/* System calls in a traced region (work()):
 *   t-sys regs      a raw syscall (getppid): after it, rcx holds the
 *                   native address of the next instruction and r11 the
 *                   flags, as untraced
 *   t-sys restart   SIGALRM every 500 us (SA_RESTART) while work() blocks
 *                   in read() on a pipe a child writes to once the
 *                   eleventh signal has come (not after a fixed time: a
 *                   loaded machine may deliver fewer signals in it),
 *                   then sleeps 20 ms with nanosleep (interrupted and
 *                   restarted through restart_syscall): both end as
 *                   untraced
 *   t-sys getppid   N getppid() calls (for system-call probes)
 * It prints what it checked, and for regs and restart the tree the driver
 * (-L) must show, as "expect:". */
#define _GNU_SOURCE
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline, noclone, noipa))

enum { REGS, RESTART, GETPPID };
static int mode, fds[2], go[2];
static long ncalls;
static volatile sig_atomic_t nsig;
static char rbuf[8];
static int slept = -1;
extern char after_syscall[];

static void on_alarm(int sig)
{
	(void)sig;
	if (++nsig == 11 && write(go[1], "g", 1) != 1)
		_exit(2);
}

NOINLINE long work(void)
{
	long r = 0;

	if (mode == REGS) {
		uint64_t rcx, r11, flags;
		__asm__ volatile("pushfq; popq %3\n"
				 "movl $110, %%eax\n" /* getppid */
				 "syscall\n"
				 ".globl after_syscall\n"
				 "after_syscall:\n"
				 "movq %%rcx, %1\n"
				 "movq %%r11, %2\n"
				 : "=a"(r), "=r"(rcx), "=r"(r11), "=r"(flags)
				 :
				 : "rcx", "r11", "memory");
		printf("rcx %s, r11 %s\n", rcx == (uintptr_t)after_syscall ? "native" : "WRONG",
		       (r11 & 0xcd5) == (flags & 0xcd5) ? "the flags" : "WRONG");
	} else if (mode == RESTART) {
		struct timespec ts = { 0, 20 * 1000 * 1000 };
		r = read(fds[0], rbuf, sizeof rbuf);
		slept = clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, NULL);
	} else {
		for (long i = 0; i < ncalls; i++)
			r += getppid() == getppid();
	}
	return r;
}

int main(int argc, char **argv)
{
	const char *m = argc > 1 ? argv[1] : "regs";
	pid_t writer = 0;

	mode = !strcmp(m, "restart") ? RESTART : !strcmp(m, "getppid") ? GETPPID : REGS;
	ncalls = argc > 2 ? atol(argv[2]) : 10;
	if (mode == RESTART) {
		struct sigaction sa = { .sa_handler = on_alarm, .sa_flags = SA_RESTART };
		struct itimerval it = { { 0, 500 }, { 0, 500 } };
		char g;
		if (pipe(fds) < 0 || pipe(go) < 0)
			return 1;
		if ((writer = fork()) == 0) {
			close(go[1]);
			_exit(read(go[0], &g, 1) == 1 && write(fds[1], "hello", 6) == 6 ? 0 : 1);
		}
		sigaction(SIGALRM, &sa, NULL);
		setitimer(ITIMER_REAL, &it, NULL);
	}
	long r = work();
	if (mode == RESTART) {
		struct itimerval off = { { 0, 0 }, { 0, 0 } };
		int st;
		setitimer(ITIMER_REAL, &off, NULL);
		waitpid(writer, &st, 0);
		printf("read: %s; slept: %d; interrupted: %s\n", rbuf, slept,
		       nsig > 10 ? "yes" : "too few signals");
	}
	if (mode == REGS)
		r = r == getppid();
	printf("%s: %ld\n", m, r);
	fflush(stdout);
	if (mode == REGS) /* printf */
		printf("expect: -> work\nexpect:  -> @libc.so.6\nexpect:  <- @libc.so.6\n"
		       "expect: <- work\n");
	else if (mode == GETPPID)
		printf("expect: getppid entries=%ld exits=%ld\n", 2 * ncalls, 2 * ncalls);
	else if (mode == RESTART) /* read, clock_nanosleep (-G: no handlers) */
		printf("expect: -> work\nexpect:  -> @libc.so.6\nexpect:  <- @libc.so.6\n"
		       "expect:  -> @libc.so.6\nexpect:  <- @libc.so.6\nexpect: <- work\n");
	return 0;
}
