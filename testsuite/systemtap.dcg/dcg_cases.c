/* The dynamic call graph's correctness cases (systemtap.dcg/cases.exp).
 * Built at -O2, functions noinline. Each mode runs one root function:
 *   retimm   a function returning with `ret $8` (asm) and tiny asm
 *            functions of 1 and 3 bytes (`ret`; `xor %eax,%eax; ret`)
 *   switch   a switch compiled to a jump table (an indirect jump inside
 *            the function, never a call)
 *   cold     a function whose __attribute__((cold)) path -O2 splits out
 *            into X.cold (shown as part of X)
 *   longjmp  longjmp out of several frames
 *   signal   a signal handler running in the traced thread
 *   syscall  system calls (getpid, write) between calls
 *   exit     the traced thread exits two frames deep
 *   fork     fork inside the traced region (the child is not traced) */
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#define NI __attribute__((noinline))

volatile int sink;

NI int leaf(int x)
{
	sink = x;
	return x + 1;
}

/* ret $8: the caller pushes 8 bytes of arguments, the callee pops them */
int retimm(void);
int tiny1(void);
int tiny3(void);
__asm__(".text\n"
	".globl retimm\n.type retimm,@function\nretimm:\n"
	"\tmov 8(%rsp), %rax\n\tret $8\n.size retimm, .-retimm\n"
	".globl tiny1\n.type tiny1,@function\ntiny1:\n\tret\n.size tiny1, .-tiny1\n"
	".globl tiny3\n.type tiny3,@function\ntiny3:\n"
	"\txor %eax, %eax\n\tret\n.size tiny3, .-tiny3\n"
	".globl call_retimm\n.type call_retimm,@function\ncall_retimm:\n"
	"\tpush $7\n\tcall retimm\n\tret\n.size call_retimm, .-call_retimm\n");
int call_retimm(void);

NI void root_retimm(void)
{
	sink = call_retimm();
	sink = tiny1();
	sink = tiny3();
	sink = leaf(1);
}

NI int sw(int k)
{
	switch (k) {
	case 0: return leaf(10) + 3;
	case 1: sink = 11; return 7;
	case 2: return leaf(12) * 5;
	case 3: sink = 13; return 9;
	case 4: return leaf(14) - 1;
	case 5: sink = 15; return 2;
	case 6: return leaf(16) ^ 4;
	default: return -1;
	}
}

NI void root_switch(void)
{
	sink = sw(sink);
	sink = sw(sink - 10);
	sink = sw(-1);
}

__attribute__((cold, noinline)) void rare(int x)
{
	sink = x;
}

NI int hot(int x)
{
	if (__builtin_expect(x > 100, 0)) {
		rare(x);
		sink = leaf(x) * 3 + x;
		return sink;
	}
	return leaf(x);
}

NI void root_cold(void)
{
	sink = hot(1);
	sink = hot(1000);
}

static jmp_buf jb;

NI void deep3(int n)
{
	sink = leaf(n);
	longjmp(jb, 1);
}

NI void deep2(int n)
{
	deep3(n + 1);
	sink = n;
}

NI void deep1(int n)
{
	deep2(n + 1);
	sink = n;
}

NI void root_longjmp(void)
{
	if (!setjmp(jb))
		deep1(1);
	sink = leaf(5);
}

NI void handler(int s)
{
	sink = leaf(s);
}

/* kill(getpid(), SIGUSR1) with no libc in between; the handler runs
 * once the kill returns: at the mov, the next branch is the ret */
NI void kill_self(void)
{
	long pid;
	__asm__ volatile("syscall" : "=a"(pid) : "a"(39) : "rcx", "r11", "memory");
	__asm__ volatile("syscall" : "=a"(sink) : "a"(62), "D"(pid), "S"(SIGUSR1)
			 : "rcx", "r11", "memory");
}

NI void root_signal(void)
{
	sink = leaf(1);
	kill_self();
	sink = leaf(2);
}

NI void root_syscall(void)
{
	sink = leaf(1);
	__asm__ volatile("syscall" : "=a"(sink) : "a"(39) : "rcx", "r11", "memory");
	sink = leaf(2);
	__asm__ volatile("syscall" : "=a"(sink) : "a"(39) : "rcx", "r11", "memory");
	sink = leaf(3);
}

NI void root_fork(void)
{
	sink = leaf(1);
	long p;
	/* fork, without libc's atfork work */
	__asm__ volatile("syscall" : "=a"(p) : "a"(57) : "rcx", "r11", "memory");
	if (p == 0) {
		sink = leaf(9);
		_exit(0);
	}
	sink = leaf(2);
	waitpid((pid_t)p, NULL, 0);
	sink = leaf(3);
}

/* the traced thread exits (exit_group) two frames deep */
NI void quit(int n)
{
	sink = leaf(n);
	__asm__ volatile("syscall" : : "a"(231), "D"(0) : "rcx", "r11", "memory");
}

NI void root_exit(void)
{
	sink = leaf(1);
	quit(2);
}

int main(int argc, char **argv)
{
	const char *m = argc > 1 ? argv[1] : "";
	signal(SIGUSR1, handler);
	switch (m[0]) {
	case 'r': root_retimm(); break;
	case 's': if (m[1] == 'w') root_switch(); else if (m[1] == 'i') root_signal(); else root_syscall(); break;
	case 'c': root_cold(); break;
	case 'l': root_longjmp(); break;
	case 'f': root_fork(); break;
	case 'e': root_exit(); break;
	default: return 2;
	}
	return 0;
}
