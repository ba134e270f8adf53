/* Plain-ptrace helpers for the DWARF tests (the runtime's engine is not
 * used here): start a program stopped at exec, find where a file is
 * mapped, stop at a breakpoint, read registers and memory, kill. */
#ifndef DWTRACE_H
#define DWTRACE_H

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/types.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

/* Fork and exec ARGV under ptrace; the child's stdout goes to *OUT_FD (a
 * pipe) when OUT_FD is not NULL. Returns the pid stopped after exec, or
 * -1. */
static __attribute__((unused)) pid_t dwt_start(char *const argv[], int *out_fd)
{
	int fds[2] = {-1, -1}, status;
	pid_t pid;

	if (out_fd && pipe(fds) < 0)
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		if (out_fd) {
			dup2(fds[1], 1);
			close(fds[0]);
			close(fds[1]);
		}
		ptrace(PTRACE_TRACEME, 0, NULL, NULL);
		execv(argv[0], argv);
		_exit(127);
	}
	if (out_fd) {
		close(fds[1]);
		*out_fd = fds[0];
	}
	if (waitpid(pid, &status, 0) != pid || !WIFSTOPPED(status)) {
		return -1;
	}
	ptrace(PTRACE_SETOPTIONS, pid, NULL, (void *)(long)PTRACE_O_EXITKILL);
	return pid;
}

static __attribute__((unused)) void dwt_kill(pid_t pid)
{
	int status;

	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
}

/* Load base of PATH (by realpath) in PID: start of its offset-0 mapping. */
static __attribute__((unused)) uint64_t dwt_base(pid_t pid, const char *path)
{
	char maps[64], line[1024], real[PATH_MAX];
	uint64_t base = 0;
	FILE *f;

	if (!realpath(path, real))
		return 0;
	snprintf(maps, sizeof maps, "/proc/%d/maps", (int)pid);
	f = fopen(maps, "r");
	if (!f)
		return 0;
	while (fgets(line, sizeof line, f)) {
		uint64_t start, off;
		char file[PATH_MAX] = "";

		if (sscanf(line, "%" SCNx64 "-%*x %*s %" SCNx64 " %*s %*s %4095s", &start, &off, file) >= 2 &&
		    off == 0 && !strcmp(file, real)) {
			base = start;
			break;
		}
	}
	fclose(f);
	return base;
}

/* Run PID to the breakpoint at ADDR; on return rip = ADDR, the original
 * byte is back. 0 on success. */
static __attribute__((unused)) int dwt_run_to(pid_t pid, uint64_t addr)
{
	long orig;
	int status;
	struct user_regs_struct regs;

	errno = 0;
	orig = ptrace(PTRACE_PEEKTEXT, pid, (void *)addr, NULL);
	if (errno)
		return -1;
	if (ptrace(PTRACE_POKETEXT, pid, (void *)addr, (void *)((orig & ~0xffL) | 0xcc)) < 0)
		return -1;
	for (;;) {
		if (ptrace(PTRACE_CONT, pid, NULL, NULL) < 0)
			return -1;
		if (waitpid(pid, &status, 0) != pid || !WIFSTOPPED(status))
			return -1;
		if (WSTOPSIG(status) == SIGTRAP)
			break;
	}
	ptrace(PTRACE_POKETEXT, pid, (void *)addr, (void *)orig);
	ptrace(PTRACE_GETREGS, pid, NULL, &regs);
	if (regs.rip != addr + 1)
		return -1;
	regs.rip = addr;
	return ptrace(PTRACE_SETREGS, pid, NULL, &regs) < 0 ? -1 : 0;
}

/* Execute one instruction. 0 on success. */
static __attribute__((unused)) int dwt_step(pid_t pid)
{
	int status;

	if (ptrace(PTRACE_SINGLESTEP, pid, NULL, NULL) < 0)
		return -1;
	return waitpid(pid, &status, 0) == pid && WIFSTOPPED(status) ? 0 : -1;
}

/* Add DELTA to the 16-bit counter at ADDR (an SDT semaphore). */
static __attribute__((unused)) int dwt_add16(pid_t pid, uint64_t addr, int delta)
{
	uint64_t base = addr & ~7ull;
	unsigned shift = (unsigned)(addr & 7) * 8;
	unsigned long w, v;

	if ((addr & 7) == 7)
		return -1; /* straddles two words: not needed here */
	errno = 0;
	w = (unsigned long)ptrace(PTRACE_PEEKDATA, pid, (void *)base, NULL);
	if (errno)
		return -1;
	v = ((w >> shift) + (unsigned long)delta) & 0xffff;
	w = (w & ~(0xfffful << shift)) | (v << shift);
	return ptrace(PTRACE_POKEDATA, pid, (void *)base, (void *)w) < 0 ? -1 : 0;
}

/* A register by DWARF number (x86-64). */
static __attribute__((unused)) uint64_t dwt_reg(pid_t pid, int dwreg)
{
	struct user_regs_struct r;

	ptrace(PTRACE_GETREGS, pid, NULL, &r);
	switch (dwreg) {
	case 0: return r.rax;
	case 1: return r.rdx;
	case 2: return r.rcx;
	case 3: return r.rbx;
	case 4: return r.rsi;
	case 5: return r.rdi;
	case 6: return r.rbp;
	case 7: return r.rsp;
	case 8: return r.r8;
	case 9: return r.r9;
	case 10: return r.r10;
	case 11: return r.r11;
	case 12: return r.r12;
	case 13: return r.r13;
	case 14: return r.r14;
	case 15: return r.r15;
	case 16: return r.rip;
	default: return 0;
	}
}

static __attribute__((unused)) int dwt_read(pid_t pid, uint64_t addr, void *buf, size_t n)
{
	unsigned char *b = buf;

	for (size_t i = 0; i < n; i++) {
		uint64_t a = addr + i;
		long w;

		errno = 0;
		w = ptrace(PTRACE_PEEKDATA, pid, (void *)(a & ~7ull), NULL);
		if (errno)
			return -1;
		b[i] = (unsigned char)((unsigned long)w >> (8 * (a & 7)));
	}
	return 0;
}

/* Read a NUL-terminated string (at most N-1 bytes). */
static __attribute__((unused)) int dwt_read_str(pid_t pid, uint64_t addr, char *buf, size_t n)
{
	for (size_t i = 0; i + 1 < n; i++) {
		if (dwt_read(pid, addr + i, &buf[i], 1) < 0)
			return -1;
		if (!buf[i])
			return 0;
	}
	buf[n - 1] = '\0';
	return 0;
}

/* Sign- or zero-extend the low SIZE bytes of V. */
static __attribute__((unused)) int64_t dwt_extend(uint64_t v, int size, int is_signed)
{
	if (size >= 8)
		return (int64_t)v;
	v &= (1ull << (8 * size)) - 1;
	if (is_signed && (v >> (8 * size - 1)) & 1)
		v |= ~0ull << (8 * size);
	return (int64_t)v;
}

#endif
