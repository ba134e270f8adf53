/* A translated thread falls back (leaves the cache for good; the client
 * traces it on another way) where translating cannot be right, and runs
 * on natively, as untraced:
 *   t-fall iret  work() calls do_iret(), which returns to itself with an
 *                iretq (an instruction the translator does not handle)
 *   t-fall tsc   work() disables rdtsc for itself (prctl PR_SET_TSC,
 *                PR_TSC_SIGSEGV): the next record's rdtsc would fault
 * It prints the tree (-L) and the driver's fallback line as "expect:".
 * Where the prctl does not make rdtsc fault (some virtual machines), tsc
 * says so and exits 77. */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>
#include <x86intrin.h>

#define NOINLINE __attribute__((noinline, noclone, noipa))

NOINLINE int leaf(int x)
{
	__asm__ volatile("" : "+r"(x));
	return x + 1;
}

NOINLINE void do_iret(void)
{
	__asm__ volatile("mov %%rsp, %%rdx\n"
			 "mov %%ss, %%eax\n"
			 "push %%rax\n"
			 "push %%rdx\n"
			 "pushfq\n"
			 "mov %%cs, %%eax\n"
			 "push %%rax\n"
			 "lea 1f(%%rip), %%rax\n"
			 "push %%rax\n"
			 "iretq\n"
			 "1:\n"
			 :
			 :
			 : "rax", "rdx", "memory");
}

static int tsc;

NOINLINE int work(void)
{
	int s = leaf(0);
	if (tsc)
		prctl(PR_SET_TSC, PR_TSC_SIGSEGV);
	else
		do_iret();
	s = leaf(s);
	__asm__ volatile("" : "+r"(s));
	return s;
}

int main(int argc, char **argv)
{
	tsc = argc > 1 && !strcmp(argv[1], "tsc");
	if (tsc) { /* does it fault here at all? */
		int st;
		pid_t p = fork();
		if (p == 0) {
			prctl(PR_SET_TSC, PR_TSC_SIGSEGV);
			_exit((int)(__rdtsc() & 1) * 0);
		}
		waitpid(p, &st, 0);
		if (!WIFSIGNALED(st) || WTERMSIG(st) != SIGSEGV) {
			printf("tsc: rdtsc cannot be disabled here\n");
			return 77;
		}
	}
	printf("work: %d\n", work());
	printf("expect: -> work\nexpect:  -> leaf\nexpect:  <- leaf\n");
	if (tsc)
		printf(
		    "expect:  -> @libc.so.6\nexpect: fallback at @libc.so.6: rdtsc disabled in the "
		    "thread (prctl PR_SET_TSC)\n");
	else
		printf("expect:  -> do_iret\nexpect: fallback at do_iret: a privileged return\n");
	return 0;
}
