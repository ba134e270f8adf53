/* Target for a fault in an instruction run out of line: load() starts
 * with a load through its argument (copied to a scratch slot when probed);
 * called with a bad pointer it faults, and the program must see the fault
 * at load(), not in the scratch page.
 *   t-fault jump N   N faults; the SIGSEGV handler checks the pc and
 *                    jumps out (siglongjmp)
 *   t-fault retry    the handler points the argument at good memory and
 *                    returns: load() runs again (its probe fires again)
 *   t-fault die      no handler: killed by SIGSEGV */
#define _GNU_SOURCE
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ucontext.h>

int load(int *p);
__asm__(".text\n.globl load\n.type load,@function\nload:\n"
	"\tmovl (%rdi), %eax\n\tret\n.size load,.-load\n");

static sigjmp_buf env;
static int good = 7, retry, bad_pc;

static void on_segv(int sig, siginfo_t *si, void *ctx)
{
	ucontext_t *uc = ctx;
	greg_t pc = uc->uc_mcontext.gregs[REG_RIP];

	(void)sig;
	if (pc != (greg_t)(long)load || si->si_addr != (void *)16)
		bad_pc++;
	if (retry) {
		uc->uc_mcontext.gregs[REG_RDI] = (greg_t)(long)&good;
		return;
	}
	siglongjmp(env, 1);
}

int main(int argc, char **argv)
{
	struct sigaction sa;
	int n = argc == 3 ? atoi(argv[2]) : 1, faults = 0;

	if (argc < 2)
		return 2;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = on_segv;
	sa.sa_flags = SA_SIGINFO;
	if (strcmp(argv[1], "die") != 0)
		sigaction(SIGSEGV, &sa, NULL);
	printf("good load %d\n", load(&good));
	if (strcmp(argv[1], "jump") == 0) {
		for (int i = 0; i < n; i++)
			if (sigsetjmp(env, 1) == 0)
				load((int *)16);
			else
				faults++;
		printf("faults %d, at another pc %d\n", faults, bad_pc);
		printf("expect: probe load hits=%d\n", 1 + n);
	} else if (strcmp(argv[1], "retry") == 0) {
		int v;
		retry = 1;
		v = load((int *)16);
		printf("retried load %d, at another pc %d\n", v, bad_pc);
		printf("expect: probe load hits=3\n");
	} else {
		printf("expect: probe load hits=2\n");
		fflush(stdout);
		load((int *)16);
	}
	return 0;
}
