/* The tracer's own cost per call-graph event, measured once per run for
 * the overhead-corrected times (sink_run.c). A child of staprun runs a
 * loop of known events under ptrace, stopped as the mechanism stops the
 * traced thread, and the median of the samples is the cost of one event:
 *   breakpoint  one int3 stop per event (the registers read and written
 *               back, as at a site): a sample is one stop's round trip;
 *   blockstep,  a call and a return per round (three taken branches, three
 *   singlestep  instructions): a sample is half a round.
 * Only the stops are measured, not the core's own work per event, nor
 * the extra stops of real code between two events (singlestep, blockstep
 * where the processor ignores BTF): the figure is a lower bound. The
 * translate mechanism writes records without stopping: calib_translate.c. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "dcg_internal.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#define SAMPLES 201

/* The child's loops (never return). */
__asm__(".pushsection .text\n"
	".globl _stp_dcg_calib_int3\n"
	".hidden _stp_dcg_calib_int3\n"
	"_stp_dcg_calib_int3:\n"
	"1: int3\n"
	" jmp 1b\n"
	".globl _stp_dcg_calib_calls\n"
	".hidden _stp_dcg_calib_calls\n"
	"_stp_dcg_calib_calls:\n"
	"1: call 2f\n"
	" jmp 1b\n"
	"2: ret\n"
	".popsection\n");
extern void _stp_dcg_calib_int3(void) __attribute__((visibility("hidden")));
extern void _stp_dcg_calib_calls(void) __attribute__((visibility("hidden")));

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* Stop-and-resume rounds of a traced child running loop: the samples'
 * median in ns (per event: divided by per), or -errno. */
static int64_t measure(void (*loop)(void), int req, int per)
{
	uint64_t s[SAMPLES];
	struct user_regs_struct r;
	int st, n = -1, rc = -EIO;
	int64_t last = 0;
	pid_t pid = fork();

	if (pid < 0)
		return -errno;
	if (pid == 0) {
		ptrace(PTRACE_TRACEME, 0, 0, 0);
		raise(SIGSTOP);
		loop();
		_exit(0);
	}
	if (waitpid(pid, &st, __WALL) < 0 || !WIFSTOPPED(st))
		goto out;
	/* a sample ends each time the loop is back at its start (int3: at
	 * each stop); the first one only starts the clock */
	for (long stops = 0; n < SAMPLES && stops < 40 * SAMPLES; stops++) {
		if (ptrace(req, pid, 0, 0) < 0 || waitpid(pid, &st, __WALL) < 0 ||
		    !WIFSTOPPED(st) || WSTOPSIG(st) != SIGTRAP ||
		    ptrace(PTRACE_GETREGS, pid, 0, &r) < 0 ||
		    ptrace(PTRACE_SETREGS, pid, 0, &r) < 0)
			goto out;
		if (req != PTRACE_CONT && r.rip != (uint64_t)(uintptr_t)loop)
			continue;
		int64_t now = dcg_now_ns();
		if (n >= 0)
			s[n] = (uint64_t)(now - last);
		n++;
		last = now;
	}
	if (n == SAMPLES) {
		qsort(s, SAMPLES, sizeof *s, cmp_u64);
		rc = 0;
	}
out:
	kill(pid, SIGKILL);
	waitpid(pid, &st, __WALL);
	return rc < 0 ? rc : (int64_t)(s[SAMPLES / 2] / (uint64_t)per);
}

int64_t dcg_calibrate(const char *mech, char *how, size_t len)
{
	int64_t ns;

	if (!strcmp(mech, "breakpoint"))
		ns = measure(_stp_dcg_calib_int3, PTRACE_CONT, 1);
	else if (!strcmp(mech, "blockstep"))
		ns = measure(_stp_dcg_calib_calls, PTRACE_SINGLEBLOCK, 2);
	else if (!strcmp(mech, "singlestep"))
		ns = measure(_stp_dcg_calib_calls, PTRACE_SINGLESTEP, 2);
	else if (!strcmp(mech, "translate"))
		return dcg_calibrate_translate(how, len);
	else {
		snprintf(how, len, "%s: not measured, nothing subtracted", mech);
		return 0;
	}
	if (ns < 0) {
		snprintf(how, len, "%s: the calibration failed (%s), nothing subtracted", mech,
			 strerror((int)-ns));
		return 0;
	}
	snprintf(how, len, "%s: the median of %d %s in a child", mech, SAMPLES,
		 !strcmp(mech, "breakpoint") ? "int3 stops" : "calls and returns");
	return ns;
}
