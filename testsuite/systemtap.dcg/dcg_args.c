/* The call graph's arguments and return values (systemtap.dcg/args.exp).
 * Built at -O2; the test checks with objdump that each case is in the
 * code. root_args() makes:
 *   six(1, 2, 3, 4, 5, -6)       a direct call with six integer arguments
 *   tailer(10) -> six(10..14, -10) a tail call (jmp six): the registers at
 *                                the jump
 *   call_strtol("42")            strtol through the PLT: (s, NULL, 10)
 *   raise(SIGUSR1)               the handler on_usr1(10), entered by the
 *                                kernel inside libc
 *   jumper(7) -> deep(7)         deep longjmps back to root_args: both
 *                                frames are left without returning
 * and prints the sum of what the calls returned. "dcg_args plain" runs
 * root_plain() instead: six() and tailer() only (3 calls, of which one
 * tail call, and 2 returns under it: for the records' count).
 * "dcg_args sig N" runs root_sig(N): N calls of mix(i, 2i, 3i, i+4, i^5,
 * -i) while a 200 us interval timer interrupts them anywhere (also in the
 * middle of the engine's record writes), its handler on_alrm(14) traced
 * too; prints N and whether signals came. */
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#define NI __attribute__((noinline))

volatile long sink;
static jmp_buf jb;

NI long six(long a, long b, long c, long d, long e, long f)
{
	sink = a;
	return a * 100000 + b * 10000 + c * 1000 + d * 100 + e * 10 + f;
}

/* a tail call: its arguments are set up, then jmp six */
NI long tailer(long x)
{
	return six(x, x + 1, x + 2, x + 3, x + 4, -x);
}

NI long call_strtol(const char *s)
{
	return strtol(s, NULL, 10) + 1;
}

static void on_usr1(int sig)
{
	sink = sig;
}

NI void deep(long x)
{
	if (x)
		longjmp(jb, 1);
	sink = x;
}

NI long jumper(long x)
{
	deep(x);
	sink = x;
	return x;
}

NI long root_args(void)
{
	long s = six(1, 2, 3, 4, 5, -6);
	s += tailer(10);
	s += call_strtol("42");
	raise(SIGUSR1);
	if (!setjmp(jb))
		s += jumper(7);
	return s;
}

static volatile long nalrm;

static void on_alrm(int sig)
{
	nalrm += sig == SIGALRM;
}

NI long mix(long a, long b, long c, long d, long e, long f)
{
	sink = a;
	return a + 2 * b + 3 * c + 5 * d + 7 * e + 11 * f;
}

NI long root_sig(long n)
{
	long s = 0;
	for (long i = 0; i < n; i++)
		s += mix(i, 2 * i, 3 * i, i + 4, i ^ 5, -i);
	return s;
}

NI long root_plain(void)
{
	long s = six(1, 2, 3, 4, 5, -6);
	return s + tailer(10);
}

int main(int argc, char **argv)
{
	signal(SIGUSR1, on_usr1);
	if (argc > 2 && !strcmp(argv[1], "sig")) {
		struct sigaction sa;
		memset(&sa, 0, sizeof sa);
		sa.sa_handler = on_alrm;
		sa.sa_flags = SA_RESTART;
		sigaction(SIGALRM, &sa, NULL);
		struct itimerval it = {{0, 200}, {0, 200}};
		setitimer(ITIMER_REAL, &it, NULL);
		long n = atol(argv[2]);
		root_sig(n);
		struct itimerval off = {{0, 0}, {0, 0}};
		setitimer(ITIMER_REAL, &off, NULL);
		printf("calls %ld, signals %s\n", n, nalrm > 0 ? "yes" : "no");
	} else if (argc > 1)
		printf("sum %ld\n", root_plain());
	else
		printf("sum %ld\n", root_args());
	return 0;
}
