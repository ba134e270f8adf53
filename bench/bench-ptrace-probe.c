/* The cost of a probe hit under the ptrace engine, as a ratio to one bare
 * ptrace stop measured in the same run.
 *
 *   bench-ptrace-probe [N]     (default N = 20000 calls per measurement)
 *
 * Each measurement runs this program again as a child that times its own
 * loop of N calls (clock_gettime around the loop, written to a pipe):
 *   - untraced, calling the function (the baseline loop time);
 *   - a bare stop: the loop executes an int3 per iteration and a minimal
 *     tracer only PTRACE_CONTs (one stop, nothing else);
 *   - the engine with an entry probe (empty handler) on a function whose
 *     first instruction is emulated (sub $8,%rsp), on push %rbp and on a
 *     RIP-relative store (both run out of line), then an entry and return
 *     probe.
 * Cost per hit = (traced loop - untraced loop) / N. Not a test: numbers
 * vary with the machine; the ratios are what to compare. */
#define _GNU_SOURCE
#include "ptrace/ptrace_engine.h"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile long sink;

/* first instruction: push %rbp (run out of line: cheaper than emulating
 * its write into the stack) */
void f_emul(void);
/* first instruction: sub $8,%rsp (emulated: registers only) */
void f_sub(void);
/* first instruction: movq %rdi, sink(%rip) (out of line) */
void f_ool(void);
__asm__(".text\n.globl f_emul\n.type f_emul,@function\nf_emul:\n"
	"\tpush %rbp\n\tmov %rsp,%rbp\n\tpop %rbp\n\tret\n.size f_emul, .-f_emul\n"
	".globl f_sub\n.type f_sub,@function\nf_sub:\n"
	"\tsub $8,%rsp\n\tadd $8,%rsp\n\tret\n.size f_sub, .-f_sub\n"
	".globl f_ool\n.type f_ool,@function\nf_ool:\n"
	"\tmovq %rdi, sink(%rip)\n\tret\n.size f_ool, .-f_ool\n");

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* The child side: run the loop, write its time on fd 3. */
static int child(const char *mode, long n)
{
	double t0 = now(), t;

	if (strcmp(mode, "int3") == 0) {
		for (long i = 0; i < n; i++)
			__asm__ volatile("int3");
	} else if (strcmp(mode, "nop") == 0) {
		for (long i = 0; i < n; i++)
			__asm__ volatile("nop");
	} else if (strcmp(mode, "ool") == 0) {
		for (long i = 0; i < n; i++)
			f_ool();
	} else if (strcmp(mode, "sub") == 0) {
		for (long i = 0; i < n; i++)
			f_sub();
	} else {
		for (long i = 0; i < n; i++)
			f_emul();
	}
	t = now() - t0;
	if (write(3, &t, sizeof t) != sizeof t)
		return 1;
	return 0;
}

static char self[4096];
static long N;

/* Offset of a function in this executable (the child is the same file,
 * loaded elsewhere: same offset from its base). */
static uint64_t base_of(pid_t pid)
{
	char path[64], line[4096];
	uint64_t base = 0;
	FILE *f;

	snprintf(path, sizeof path, "/proc/%d/maps", (int)pid);
	if (!(f = fopen(path, "r")))
		return 0;
	while (fgets(line, sizeof line, f)) {
		unsigned long lo, off;
		char *p = strchr(line, '/');
		if (!p || sscanf(line, "%lx-%*x %*s %lx", &lo, &off) != 2)
			continue;
		p[strcspn(p, "\n")] = 0;
		if (off == 0 && strcmp(p, self) == 0) {
			base = lo;
			break;
		}
	}
	fclose(f);
	return base;
}

static int pfd[2];

/* A pipe for the child's loop time, its ends moved out of the way of fd 3
 * (where the child writes). */
static int open_pipe(void)
{
	int p[2];

	if (pipe(p) < 0)
		return -1;
	pfd[0] = fcntl(p[0], F_DUPFD_CLOEXEC, 10);
	pfd[1] = fcntl(p[1], F_DUPFD_CLOEXEC, 10);
	close(p[0]);
	close(p[1]);
	return 0;
}

static void set_fd3(void)
{
	dup2(pfd[1], 3); /* not close-on-exec */
}

static double read_time(void)
{
	double t = -1;
	close(pfd[1]);
	close(3);
	if (read(pfd[0], &t, sizeof t) != sizeof t)
		t = -1;
	close(pfd[0]);
	return t;
}

static double run_untraced(const char *mode)
{
	char nbuf[32];
	pid_t pid;
	int st;

	snprintf(nbuf, sizeof nbuf, "%ld", N);
	if (open_pipe() < 0)
		return -1;
	if ((pid = fork()) == 0) {
		set_fd3();
		execl(self, self, "--child", mode, nbuf, (char *)NULL);
		_exit(127);
	}
	waitpid(pid, &st, 0);
	return read_time();
}

/* Bare stops: PTRACE_TRACEME child, the tracer only continues it. */
static double run_bare(void)
{
	char nbuf[32];
	pid_t pid;
	int st;

	snprintf(nbuf, sizeof nbuf, "%ld", N);
	if (open_pipe() < 0)
		return -1;
	if ((pid = fork()) == 0) {
		set_fd3();
		ptrace(PTRACE_TRACEME, 0, 0, 0);
		execl(self, self, "--child", "int3", nbuf, (char *)NULL);
		_exit(127);
	}
	while (waitpid(pid, &st, 0) == pid && WIFSTOPPED(st)) {
		int sig = WSTOPSIG(st) == SIGTRAP ? 0 : WSTOPSIG(st);
		ptrace(PTRACE_CONT, pid, 0, (long)sig);
	}
	return read_time();
}

static int empty(struct _stp_pt_thread *t, struct _stp_pt_probe *p, void *d)
{
	(void)t, (void)p, (void)d;
	return 0;
}

static double run_engine(const char *mode, void (*fn)(void), int with_return,
			 struct _stp_pt_stats *stats)
{
	char nbuf[32];
	char *argv[5];
	struct _stp_pt_session *s;
	struct _stp_pt_proc *p;
	uint64_t off = (uint64_t)(uintptr_t)fn - base_of(getpid());

	snprintf(nbuf, sizeof nbuf, "%ld", N);
	argv[0] = self;
	argv[1] = "--child";
	argv[2] = (char *)mode;
	argv[3] = nbuf;
	argv[4] = NULL;
	if (open_pipe() < 0)
		return -1;
	set_fd3(); /* the launched child inherits it */
	s = _stp_pt_session_new(NULL, NULL, 0);
	if (_stp_pt_launch(s, argv, &p) < 0)
		return -1;
	if (_stp_pt_probe_add(p, base_of(_stp_pt_proc_pid(p)) + off, empty,
			      with_return ? empty : NULL, NULL, NULL) < 0)
		return -1;
	_stp_pt_resume(p);
	while (_stp_pt_active(s))
		if (_stp_pt_wait(s, -1) < 0)
			break;
	_stp_pt_get_stats(s, stats);
	_stp_pt_session_free(s);
	return read_time();
}

/* The same loop under bpftrace with an empty uprobe (and uretprobe) on
 * fn: bpftrace starts the command once its probes are attached. -1 when
 * bpftrace is not installed or cannot attach here. */
static double run_bpftrace(const char *mode, const char *fn, int with_return)
{
	char nbuf[32], prog[8192], cmd[8192];
	pid_t pid;
	int st;

	if (access("/usr/bin/bpftrace", X_OK) != 0)
		return -1;
	snprintf(nbuf, sizeof nbuf, "%ld", N);
	snprintf(prog, sizeof prog, "uprobe:%s:%s {}%s%s%s", self, fn,
		 with_return ? " uretprobe:" : "", with_return ? self : "", with_return ? ":" : "");
	if (with_return)
		snprintf(prog + strlen(prog), sizeof prog - strlen(prog), "%s {}", fn);
	snprintf(cmd, sizeof cmd, "%s --child %s %s", self, mode, nbuf);
	if (open_pipe() < 0)
		return -1;
	if ((pid = fork()) == 0) {
		set_fd3(); /* first: /dev/null must not land on fd 3 */
		int null = open("/dev/null", O_WRONLY);
		dup2(null, 1);
		dup2(null, 2);
		execl("/usr/bin/bpftrace", "bpftrace", "-e", prog, "-c", cmd, (char *)NULL);
		_exit(127);
	}
	waitpid(pid, &st, 0);
	return read_time();
}

#define ROUNDS 5
#define NCASES 4

int main(int argc, char **argv)
{
	struct _stp_pt_stats st;
	double stop = 1e9, cost[NCASES], stops[NCASES];
	ssize_t n;
	struct {
		const char *label, *mode;
		void (*fn)(void);
		int ret;
	} cases[NCASES] = {
	    {"entry probe, emulated (sub $8,%rsp)", "sub", f_sub, 0},
	    {"entry probe, push %rbp (out of line)", "emul", f_emul, 0},
	    {"entry probe, RIP-relative store (ool)", "ool", f_ool, 0},
	    {"entry + return probe (push %rbp)", "emul", f_emul, 1},
	};

	if (argc == 4 && strcmp(argv[1], "--child") == 0)
		return child(argv[2], atol(argv[3]));
	N = argc > 1 ? atol(argv[1]) : 20000;
	n = readlink("/proc/self/exe", self, sizeof self - 1);
	if (n <= 0)
		return 1;
	self[n] = 0;
	for (int c = 0; c < NCASES; c++)
		cost[c] = 1e9;
	/* interleaved rounds, the best of each: other load only adds time */
	for (int r = 0; r < ROUNDS; r++) {
		double b = (run_bare() - run_untraced("nop")) / (double)N;
		if (b < stop)
			stop = b;
		for (int c = 0; c < NCASES; c++) {
			double base = run_untraced(cases[c].mode);
			double t =
			    (run_engine(cases[c].mode, cases[c].fn, cases[c].ret, &st) - base) /
			    (double)N;
			if (t < cost[c])
				cost[c] = t;
			stops[c] = (double)st.stops / (double)N;
		}
	}
	/* bpftrace's uprobes, for comparison (slow to start: fewer rounds) */
	double bpf[2] = {1e9, 1e9};
	for (int r = 0; r < 2; r++)
		for (int ret = 0; ret < 2; ret++) {
			double base = run_untraced("sub");
			double t = run_bpftrace("sub", "f_sub", ret);
			if (t >= 0 && (t - base) / (double)N < bpf[ret])
				bpf[ret] = (t - base) / (double)N;
		}
	printf("calls per measurement: %ld, best of %d rounds\n", N, ROUNDS);
	printf("%-38s %7.2f us\n", "bare ptrace stop:", stop * 1e6);
	for (int c = 0; c < NCASES; c++)
		printf("%-38s %7.2f us = %.2f x stop (%.2f stops per call)\n", cases[c].label,
		       cost[c] * 1e6, cost[c] / stop, stops[c]);
	for (int ret = 0; ret < 2; ret++) {
		const char *label =
		    ret ? "bpftrace uprobe + uretprobe:" : "bpftrace uprobe (empty):";
		if (bpf[ret] < 1e9)
			printf("%-38s %7.2f us = %.2f x stop (in the kernel, no ptrace stop)\n",
			       label, bpf[ret] * 1e6, bpf[ret] / stop);
		else
			printf("%-38s skipped: bpftrace not installed or cannot attach uprobes\n",
			       label);
	}
	return 0;
}
