/* Signals in a traced region. t-sig MODE; the traced function is work().
 *   segv    a load faults; the handler moves uc_mcontext's rip past it
 *   trap    the program's own int3; its SIGTRAP handler counts
 *   fpe     a division by zero; the handler leaves by siglongjmp
 *   alt     raise(SIGUSR1) with the handler on an alternate stack; the
 *           handler raises SIGUSR2 (a nested handler)
 *   timer   SIGALRM every 200 us while work() makes N calls of leaf()
 *           (t-sig timer N), unblocked only inside work(); every handler
 *           checks that the interrupted pc is the program's own code (or
 *           libc's) and that backtrace() works from there
 * Every handler checks that its frame holds a pc of the program's or
 * libc's code (never translated code). The deterministic modes print the
 * tree the driver must show ("expect: LINE"); timer prints the driver's
 * counts (-q -c leaf) as "expect: LINE". */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <execinfo.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <ucontext.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline, noclone, noipa))

extern char __executable_start[], etext[];
static volatile sig_atomic_t bad_pc, nsig, ntrap;
static sigjmp_buf jb;
extern char fault_at[], fault_after[];

static int ours(uintptr_t pc)
{
	return pc >= (uintptr_t)__executable_start && pc < (uintptr_t)etext;
}

NOINLINE int leaf(int x)
{
	__asm__ volatile("" : "+r"(x));
	return x + 1;
}

/* The interrupted pc: the program's code, or (libc_ok) any loaded
 * object's (translated code belongs to none). */
static void check_frame(void *uc, int libc_ok)
{
	uintptr_t pc = (uintptr_t)((ucontext_t *)uc)->uc_mcontext.gregs[REG_RIP];
	Dl_info di;
	if (!ours(pc) && (!libc_ok || !dladdr((void *)pc, &di) || !di.dli_fname))
		bad_pc++;
}

NOINLINE static void on_segv(int sig, siginfo_t *si, void *uc)
{
	(void)sig, (void)si;
	ucontext_t *u = uc;
	if ((uintptr_t)u->uc_mcontext.gregs[REG_RIP] != (uintptr_t)fault_at)
		bad_pc++;
	u->uc_mcontext.gregs[REG_RIP] = (greg_t)(uintptr_t)fault_after;
}

NOINLINE static void on_trap(int sig, siginfo_t *si, void *uc)
{
	(void)sig, (void)si;
	check_frame(uc, 0);
	ntrap++;
}

NOINLINE static void on_fpe(int sig, siginfo_t *si, void *uc)
{
	(void)sig, (void)si;
	check_frame(uc, 0);
	siglongjmp(jb, 1);
}

static char altstack[64 * 1024];

NOINLINE static void on_usr2(int sig, siginfo_t *si, void *uc)
{
	(void)sig, (void)si;
	check_frame(uc, 1); /* interrupted in raise() */
	int v = leaf(2);
	__asm__ volatile("" : "+r"(v)); /* no tail call */
}

NOINLINE static void on_usr1(int sig, siginfo_t *si, void *uc)
{
	char here;
	(void)sig, (void)si;
	check_frame(uc, 1);
	if (&here < altstack || &here >= altstack + sizeof altstack)
		bad_pc++; /* not on the alternate stack */
	raise(SIGUSR2);
	int v = leaf(1);
	__asm__ volatile("" : "+r"(v));
}

NOINLINE static void on_alarm(int sig, siginfo_t *si, void *uc)
{
	void *bt[8];
	(void)sig, (void)si;
	check_frame(uc, 1);
	if (backtrace(bt, 8) < 3)
		bad_pc++;
	nsig++;
}

static void handle(int sig, void (*fn)(int, siginfo_t *, void *), int flags)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = fn;
	sa.sa_flags = SA_SIGINFO | flags;
	sigaction(sig, &sa, NULL);
}

static int *volatile nowhere;
static volatile int zero;
enum { SEGV, TRAP, FPE, ALT, TIMER };
static int mode;
static long ncalls;

NOINLINE int work(void)
{
	int s = 0;

	if (mode == SEGV) {
		int v = 0;
		__asm__ volatile(".globl fault_at, fault_after\n"
				 "fault_at: movl (%1), %0\n"
				 "fault_after:\n"
				 : "+r"(v)
				 : "r"(nowhere)
				 : "memory");
		s = leaf(v);
	} else if (mode == TRAP) {
		__asm__ volatile("int3");
		s = leaf(s);
	} else if (mode == FPE) {
		if (!sigsetjmp(jb, 1))
			s = leaf(10 / zero);
		s = leaf(s);
	} else if (mode == ALT) {
		raise(SIGUSR1);
		s = leaf(s);
	} else {
		sigset_t alrm;
		sigemptyset(&alrm);
		sigaddset(&alrm, SIGALRM);
		sigprocmask(SIG_UNBLOCK, &alrm, NULL);
		for (long i = 0; i < ncalls; i++)
			s = leaf(s);
		sigprocmask(SIG_BLOCK, &alrm, NULL);
	}
	return s;
}

int main(int argc, char **argv)
{
	static const char *modes[] = { "segv", "trap", "fpe", "alt", "timer" };
	const char *m = argc > 1 ? argv[1] : "segv";
	for (mode = 0; mode < TIMER && strcmp(m, modes[mode]); mode++)
		;
	ncalls = argc > 2 ? atol(argv[2]) : 1000;
	handle(SIGSEGV, on_segv, 0);
	handle(SIGTRAP, on_trap, 0);
	handle(SIGFPE, on_fpe, 0);
	handle(SIGUSR1, on_usr1, SA_ONSTACK);
	handle(SIGUSR2, on_usr2, 0);
	handle(SIGALRM, on_alarm, SA_RESTART);
	stack_t ss = { .ss_sp = altstack, .ss_size = sizeof altstack };
	sigaltstack(&ss, NULL);
	if (mode == TIMER) {
		struct itimerval it = { { 0, 200 }, { 0, 200 } };
		sigset_t alrm;
		sigemptyset(&alrm);
		sigaddset(&alrm, SIGALRM);
		sigprocmask(SIG_BLOCK, &alrm, NULL);
		setitimer(ITIMER_REAL, &it, NULL);
	}
	int s = work();
	if (mode == TIMER) {
		struct itimerval off = { { 0, 0 }, { 0, 0 } };
		setitimer(ITIMER_REAL, &off, NULL);
	}
	printf("%s: result %d, bad pc %d\n", modes[mode], s, (int)bad_pc);
	fflush(stdout);
	if (mode == SEGV)
		printf("expect: -> work\nexpect:  -> on_segv (signal 11)\nexpect:  <- on_segv\n"
		       "expect:  -> leaf\nexpect:  <- leaf\nexpect: <- work\n");
	else if (mode == TRAP)
		printf("expect: -> work\nexpect:  -> on_trap (signal 5)\nexpect:  <- on_trap\n"
		       "expect:  -> leaf\nexpect:  <- leaf\nexpect: <- work\n");
	else if (mode == FPE)
		printf("expect: -> work\nexpect:  -> @libc.so.6\nexpect:  <- @libc.so.6\n"
		       "expect:  -> on_fpe (signal 8)\nexpect:   -> @libc.so.6\n"
		       "expect:   <- @libc.so.6\nexpect:  <- on_fpe\n"
		       "expect:  -> leaf\nexpect:  <- leaf\nexpect: <- work\n");
	else if (mode == ALT) /* raise(), dladdr() in check_frame(), raise() */
		printf("expect: -> work\nexpect:  -> @libc.so.6\nexpect:   -> on_usr1 (signal 10)\n"
		       "expect:    -> @libc.so.6\nexpect:    <- @libc.so.6\n"
		       "expect:    -> @libc.so.6\nexpect:     -> on_usr2 (signal 12)\n"
		       "expect:      -> @libc.so.6\nexpect:      <- @libc.so.6\n"
		       "expect:      -> leaf\nexpect:      <- leaf\nexpect:     <- on_usr2\n"
		       "expect:    <- @libc.so.6\nexpect:    -> leaf\nexpect:    <- leaf\n"
		       "expect:   <- on_usr1\nexpect:  <- @libc.so.6\nexpect:  -> leaf\n"
		       "expect:  <- leaf\nexpect: <- work\n");
	else
		printf("expect: signals=%d\nexpect: calls of leaf=%ld\n", (int)nsig, ncalls);
	return bad_pc != 0;
}
