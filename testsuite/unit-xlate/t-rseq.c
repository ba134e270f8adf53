/* Restartable sequences under translation (systemtap.xlate/rseq.exp).
 * Critical sections in the style of librseq (descriptor in .data, rseq_cs
 * stored through fs: at glibc's __rseq_offset, signature before the
 * abort handler), run by work():
 *
 *   preempt  a section that spins until another thread, pinned to the
 *            same CPU, has run: that needs a preemption of this thread
 *            inside the section, so the kernel must abort it; a commit
 *            is a violation ("rseq preempt: committed")
 *   signal   a section that spins until a signal handler has run: the
 *            delivery must abort it
 *   count    N increments of a counter in a section, retried on abort,
 *            with a call of leaf() after each: the counter is N
 *
 * "rseq: none" when the thread has no rseq area (old kernel or glibc,
 * or glibc.pthread.rseq=0). The expected lines are printed as
 * "expect: ..." for the driver's side. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/rseq.h>
#include <sys/syscall.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline, noclone, noipa))
#define SIG "0x53053053" /* glibc's RSEQ_SIG on x86 */

/* A section [1, 2) with its descriptor (3) and abort handler (4, after
 * the signature), which sets ab to 1; rax is taken. */
#define SECTION_START                  \
	".pushsection .data, \"aw\"\n" \
	".balign 32\n"                 \
	"3: .long 0, 0\n"              \
	".quad 1f, 2f - 1f, 4f\n"      \
	".popsection\n"                \
	"leaq 3b(%%rip), %%rax\n"      \
	"movq %%rax, %%fs:8(%[off])\n"
#define SECTION_END            \
	"jmp 5f\n"             \
	".long " SIG "\n"      \
	"4: movl $1, %k[ab]\n" \
	"5:\n"

static volatile long other_runs, stop_other, in_section, handled;
static pid_t main_tid;

NOINLINE long leaf(long x)
{
	__asm__ volatile("" : "+r"(x));
	return x + 1;
}

/* Spins in the section until *v changes (read inside it: a change seen
 * means the writer ran after the section began); 1 if it ended by an
 * abort. */
static int spin_section(volatile long *v)
{
	int aborted;

	__asm__ volatile(SECTION_START "1: movq $1, %[insec]\n"
				       "movq (%[v]), %%rcx\n"
				       "6: cmpq %%rcx, (%[v])\n"
				       "je 6b\n"
				       "xorl %k[ab], %k[ab]\n"
				       "2:" SECTION_END
			 : [ab] "=&r"(aborted), [insec] "=m"(in_section)
			 : [off] "r"(__rseq_offset), [v] "r"(v)
			 : "rax", "rcx", "memory", "cc");
	return aborted;
}

/* counter + 1 in a section; 1 if aborted (nothing stored). */
static int inc_section(long *counter)
{
	int aborted;

	__asm__ volatile(SECTION_START "1: movq (%[c]), %%rcx\n"
				       "leaq 1(%%rcx), %%rcx\n"
				       "movq %%rcx, (%[c])\n"
				       "2: xorl %k[ab], %k[ab]\n" SECTION_END
			 : [ab] "=&r"(aborted)
			 : [off] "r"(__rseq_offset), [c] "r"(counter)
			 : "rax", "rcx", "memory", "cc");
	return aborted;
}

static void *other(void *arg)
{
	(void)arg;
	while (!stop_other)
		other_runs++;
	return NULL;
}

/* Sends the signal once the main thread is in its section. */
static void *sender(void *arg)
{
	(void)arg;
	while (!in_section)
		;
	syscall(SYS_tgkill, getpid(), main_tid, SIGUSR1);
	return NULL;
}

static void on_usr1(int sig)
{
	(void)sig;
	handled = 1;
}

NOINLINE long work(const char *what, long n)
{
	long counter = 0, retries = 0;

	if (!strcmp(what, "preempt")) {
		int ab = spin_section(&other_runs);
		printf("rseq preempt: %s\n", ab ? "aborted" : "committed");
	} else if (!strcmp(what, "signal")) {
		int ab = spin_section(&handled);
		printf("rseq signal: %s\n", ab ? "aborted" : "committed");
	} else {
		for (long i = 0; i < n; i++) {
			while (inc_section(&counter))
				retries++;
			counter = leaf(counter) - 1;
		}
		printf("rseq count: %ld\n", counter);
	}
	return retries;
}

int main(int argc, char **argv)
{
	const char *what = argc > 1 ? argv[1] : "count";
	long n = argc > 2 ? atol(argv[2]) : 1000;
	pthread_t th;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (__rseq_size == 0) {
		puts("rseq: none");
		return 0;
	}
	main_tid = (pid_t)syscall(SYS_gettid);
	if (!strcmp(what, "preempt")) {
		cpu_set_t set;
		CPU_ZERO(&set);
		CPU_SET(sched_getcpu(), &set);
		if (sched_setaffinity(0, sizeof set, &set) < 0) {
			perror("sched_setaffinity");
			return 1;
		}
		pthread_create(&th, NULL, other, NULL); /* inherits the CPU */
		while (!other_runs)
			sched_yield();
	} else if (!strcmp(what, "signal")) {
		signal(SIGUSR1, on_usr1);
		pthread_create(&th, NULL, sender, NULL);
	}
	work(what, n);
	if (!strcmp(what, "preempt") || !strcmp(what, "signal")) {
		stop_other = 1;
		pthread_join(th, NULL);
	}
	if (!strcmp(what, "count"))
		printf("expect: calls of leaf=%ld\n", n);
	return 0;
}
