/* systemtap.dcg/codemap.exp: code the program maps, replaces, unmaps and
 * protects itself, with its own system calls (raw_syscall: a syscall
 * instruction in this program, translated while traced). In root():
 *   1. file A's code mapped, called; file B's mapped over it (MAP_FIXED)
 *      and called: B's result;
 *   2. that unmapped, anonymous memory mapped at the same address, code
 *      written into it and called: the new result;
 *   3. that unmapped, file B mapped there again and called; made
 *      PROT_NONE and called: SIGSEGV with si_addr = the code, caught;
 *      PROT_READ|PROT_EXEC again and called: B's result;
 *   4. that moved (mremap) over a page reserved for it, called there;
 *   5. made writable there, rewritten to call fc, made executable again
 *      and called (a JIT's way).
 * Each piece of code calls a function of the program (fa, fb, fc).
 *   dcg_codemap DIR   writes DIR/cm_a.bin and DIR/cm_b.bin first */
#define _GNU_SOURCE
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define NI __attribute__((noinline, noclone))
#define PAGE 4096

NI int fa(int x)
{
	__asm__ volatile("");
	return x + 1;
}

NI int fb(int x)
{
	__asm__ volatile("");
	return x * 3;
}

NI int fc(int x)
{
	__asm__ volatile("");
	return x - 7;
}

NI long raw_syscall(long n, long a, long b, long c, long d, long e, long f)
{
	long r;
	register long r10 __asm__("r10") = d, r8 __asm__("r8") = e, r9 __asm__("r9") = f;

	__asm__ volatile("syscall"
			 : "=a"(r)
			 : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8), "r"(r9)
			 : "rcx", "r11", "memory");
	return r;
}

/* sub $8,%rsp; movabs $fn,%rax; call *%rax; add $8,%rsp; ret */
static void blob(unsigned char *p, int (*fn)(int))
{
	static const unsigned char head[] = {0x48, 0x83, 0xec, 0x08, 0x48, 0xb8};
	static const unsigned char tail[] = {0xff, 0xd0, 0x48, 0x83, 0xc4, 0x08, 0xc3};
	uint64_t a = (uint64_t)(uintptr_t)fn;

	memcpy(p, head, sizeof head);
	memcpy(p + sizeof head, &a, 8);
	memcpy(p + sizeof head + 8, tail, sizeof tail);
}

NI int call_code(void *p, int x)
{
	return ((int (*)(int))p)(x);
}

static int fd_a, fd_b;
static sigjmp_buf jb;
static void *volatile fault_addr;

static void on_segv(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)uc;
	fault_addr = si->si_addr;
	siglongjmp(jb, 1);
}

NI int root(void)
{
	long p = raw_syscall(9, 0, PAGE, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd_a, 0);
	if (p < 0 && p > -4096)
		return -1;
	int r1 = call_code((void *)p, 5);
	long q = raw_syscall(9, p, PAGE, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_FIXED, fd_b, 0);
	int r2 = q == p ? call_code((void *)p, 5) : -1;
	printf("remap: %d %d\n", r1, r2);

	raw_syscall(11, p, PAGE, 0, 0, 0, 0);
	q = raw_syscall(9, p, PAGE, PROT_READ | PROT_WRITE | PROT_EXEC,
			MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	if (q != p)
		return -2;
	blob((unsigned char *)p, fc);
	printf("anonymous: %d\n", call_code((void *)p, 5));

	raw_syscall(11, p, PAGE, 0, 0, 0, 0);
	q = raw_syscall(9, p, PAGE, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_FIXED_NOREPLACE, fd_b,
			0);
	if (q != p)
		return -3;
	int r3 = call_code((void *)p, 5);
	raw_syscall(10, p, PAGE, PROT_NONE, 0, 0, 0);
	const char *seen = "no fault";
	if (!sigsetjmp(jb, 1))
		call_code((void *)p, 5);
	else
		seen = fault_addr == (void *)p ? "SIGSEGV at the code" : "SIGSEGV elsewhere";
	raw_syscall(10, p, PAGE, PROT_READ | PROT_EXEC, 0, 0, 0);
	printf("protected: %d %s %d\n", r3, seen, call_code((void *)p, 5));

	long m = raw_syscall(9, 0, PAGE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	q = raw_syscall(25, p, PAGE, PAGE, MREMAP_MAYMOVE | MREMAP_FIXED, m, 0);
	if (q != m)
		return -4;
	printf("moved: %d\n", call_code((void *)q, 5));

	raw_syscall(10, q, PAGE, PROT_READ | PROT_WRITE, 0, 0, 0);
	blob((unsigned char *)q, fc);
	raw_syscall(10, q, PAGE, PROT_READ | PROT_EXEC, 0, 0, 0);
	printf("rewritten: %d\n", call_code((void *)q, 5));
	return 0;
}

static int write_code(const char *dir, const char *name, int (*fn)(int))
{
	static unsigned char page[PAGE];
	char path[4096];
	int fd;

	snprintf(path, sizeof path, "%s/%s", dir, name);
	memset(page, 0xcc, sizeof page);
	blob(page, fn);
	if ((fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644)) < 0 ||
	    write(fd, page, sizeof page) != sizeof page)
		return -1;
	return fd;
}

int main(int argc, char **argv)
{
	const char *dir = argc > 1 ? argv[1] : ".";
	struct sigaction sa;

	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = on_segv;
	sa.sa_flags = SA_SIGINFO;
	sigaction(SIGSEGV, &sa, NULL);
	if ((fd_a = write_code(dir, "cm_a.bin", fa)) < 0 ||
	    (fd_b = write_code(dir, "cm_b.bin", fb)) < 0)
		return 2;
	int rc = root();
	printf("root: %d\n", rc);
	fflush(stdout);
	return rc ? 1 : 3;
}
