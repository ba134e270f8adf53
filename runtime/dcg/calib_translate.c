/* The translate mechanism's cost per event, for the overhead-corrected
 * times (calib_ptrace.c does the ptrace mechanisms): what the traced
 * thread really pays, measured under the real engine. A helper process
 * (forked: the engine's event loop owns every child of the process it
 * runs in, so it cannot run in staprun's own) attaches to a child of its
 * own, which times batches of calls of an empty function with rdtsc:
 * first native, then translated (switched on and off at probes on a
 * marker function, as a script's probes do). The median batch translated
 * less the median native, over the batch's events (a call and a return
 * per call), is the cost of one event: the record written, the
 * reservation's checks, a return's look-up, everything the translated
 * code adds; a full ring's doorbell (once per 32768 records, set by
 * staprun's speed, not per event) falls outside the median. Start-up:
 * about 7 ms on these machines (-v says), most of it the engine's
 * attach (its 1 ms polls) and set-up in the child.
 * If the helper fails, the record writing alone is timed in staprun (a
 * lower bound, as for the ptrace mechanisms). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "dcg_internal.h"
#include "ptrace/ptrace_engine.h"
#include "xlate/layout.h"
#include "xlate/xlate.h"

#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <x86intrin.h>

#define SAMPLES 101
#define BATCH 256
#define WARMUP 8
#define RING_BYTES (1u << 20)
#define DEADLINE_NS 2000000000 /* the helper's time at most */

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* ---- the child: batches of calls, native then translated ---- */

/* Shared by staprun, the helper and the child (MAP_SHARED before fork). */
struct calib {
	volatile int go;			   /* the helper is attached: the child may start */
	volatile int done;			   /* the child measured both */
	volatile int on;			   /* the helper switched the child on (then off) */
	uint64_t native[SAMPLES], traced[SAMPLES]; /* ticks per batch */
	int64_t ns0, ns1;			   /* the TSC's rate over the samples */
	uint64_t tsc0, tsc1;
	char why[96];	  /* the helper's failure */
	uint64_t records; /* the helper's count of the child's records */
};

__attribute__((noinline, noclone, noipa)) void _stp_dcg_calib_leaf(void)
{
	__asm__ volatile("");
}

/* The probes' place: the first call switches translation on, the second
 * off. */
__attribute__((noinline, noclone, noipa)) void _stp_dcg_calib_mark(void)
{
	__asm__ volatile("");
}

__attribute__((noinline, noclone, noipa)) static uint64_t batch(void)
{
	uint64_t t0 = __rdtsc();
	for (int i = 0; i < BATCH; i++)
		_stp_dcg_calib_leaf();
	return __rdtsc() - t0;
}

static void child(struct calib *k)
{
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	while (!k->go)
		sched_yield();
	k->ns0 = dcg_now_ns();
	k->tsc0 = __rdtsc();
	for (int i = 0; i < WARMUP; i++)
		batch();
	for (int i = 0; i < SAMPLES; i++)
		k->native[i] = batch();
	_stp_dcg_calib_mark();
	for (int i = 0; i < WARMUP; i++) /* the blocks translated */
		batch();
	for (int i = 0; i < SAMPLES; i++)
		k->traced[i] = batch();
	_stp_dcg_calib_mark();
	k->ns1 = dcg_now_ns();
	k->tsc1 = __rdtsc();
	k->done = 1;
	_exit(0);
}

/* ---- the helper: the real engine over the child ---- */

static struct _stp_xl_engine *hx;
static struct calib *hk;
static int exited;

static uint64_t h_func_of(void *core, struct _stp_pt_thread *t, uint64_t addr, uint64_t *lo,
			  uint64_t *hi)
{
	(void)core;
	(void)t;
	(void)addr;
	*lo = *hi = 0;
	return 1; /* one function: no jump records, as the loop has none */
}

static void h_records(void *core, struct _stp_pt_thread *t, const struct xl_rec *r, size_t n)
{
	(void)core;
	(void)t;
	(void)r;
	hk->records += n;
}

static void h_fallback(void *core, struct _stp_pt_thread *t, uint64_t pc, const char *why)
{
	(void)core;
	(void)t;
	(void)pc;
	(void)why;
}

static int h_mark(struct _stp_pt_thread *t, struct _stp_pt_probe *p, void *data)
{
	struct calib *k = data;

	(void)p;
	if (!k->on) {
		int rc = _stp_xl_thread_on(hx, t);
		if (rc < 0)
			snprintf(k->why, sizeof k->why, "switch-on: %s", strerror(-rc));
		k->on = 1;
		return rc;
	}
	_stp_xl_thread_off(hx, t);
	return 0;
}

static void h_exit(struct _stp_pt_proc *p, int status, void *user)
{
	(void)p;
	(void)status;
	(void)user;
	exited = 1;
}

static void helper(struct calib *k)
{
	static const struct _stp_xl_ops ops = {h_func_of, h_records, h_fallback, NULL, NULL};
	struct _stp_pt_callbacks cb = {.proc_exit = h_exit};
	struct _stp_xl_config cfg = {.ring_bytes = RING_BYTES, .raw_tsc = 1};
	struct _stp_pt_session *s;
	struct _stp_pt_proc *p;
	pid_t pid;
	int rc;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	hk = k;
	if (!(s = _stp_pt_session_new(&cb, NULL, 0)) || !(hx = _stp_xl_new(s, &ops, NULL, &cfg))) {
		snprintf(k->why, sizeof k->why, "no memory");
		_exit(1);
	}
	if ((pid = fork()) == 0)
		child(k);
	if (pid < 0 || (rc = _stp_pt_attach(s, pid, &p)) < 0 ||
	    (rc = _stp_pt_probe_add(p, (uint64_t)(uintptr_t)_stp_dcg_calib_mark, h_mark, NULL, k,
				    NULL)) < 0 ||
	    (rc = _stp_pt_resume(p)) < 0) {
		snprintf(k->why, sizeof k->why, "attach: %s", strerror(pid < 0 ? errno : -rc));
		_exit(1);
	}
	k->go = 1;
	while (!exited && (rc = _stp_pt_wait(s, -1)) >= 0)
		;
	if (k->done && k->records < 2 * BATCH * SAMPLES)
		snprintf(k->why, sizeof k->why, "%llu records of the child's %d calls",
			 (unsigned long long)k->records, BATCH * SAMPLES);
	_exit(k->done && k->records >= 2 * BATCH * SAMPLES ? 0 : 1);
}

/* The helper's run: 0, or -1 with why in k. */
static int run_helper(struct calib *k)
{
	pid_t pid = fork();
	int st;

	if (pid == 0)
		helper(k);
	if (pid < 0) {
		snprintf(k->why, sizeof k->why, "fork: %s", strerror(errno));
		return -1;
	}
	int64_t end = dcg_now_ns() + DEADLINE_NS;
	struct timespec ms = {0, 200000};
	pid_t w;
	while ((w = waitpid(pid, &st, WNOHANG)) == 0 && dcg_now_ns() < end)
		nanosleep(&ms, NULL);
	if (w == 0) {
		kill(pid, SIGKILL);
		waitpid(pid, &st, 0);
		snprintf(k->why, sizeof k->why, "timed out");
		return -1;
	}
	if (w < 0 || !WIFEXITED(st) || WEXITSTATUS(st) || !k->done) {
		if (!k->why[0])
			snprintf(k->why, sizeof k->why, "the helper failed");
		return -1;
	}
	return 0;
}

/* ---- the lower bound: the record writing alone, in staprun ---- */

static uint64_t write_batch(struct xl_rec *ring, size_t n, volatile uint64_t *wp)
{
	uint64_t w = *wp;
	uint64_t t0 = __rdtsc();
	for (unsigned i = 0; i < BATCH; i++) {
		struct xl_rec *r = &ring[w % n];
		r->tsc = __rdtsc();
		r->from_kind = (uint64_t)(uintptr_t)r | (uint64_t)(1 + (i & 1)) << XL_KIND_SHIFT;
		r->to = w;
		r->sp = (uint64_t)(uintptr_t)&r;
		*wp = ++w; /* the commit */
	}
	return __rdtsc() - t0;
}

static int64_t lower_bound(struct calib *k)
{
	size_t n = RING_BYTES / sizeof(struct xl_rec);
	struct xl_rec *ring = calloc(n, sizeof *ring);
	volatile uint64_t wp = 0;

	if (!ring)
		return -1;
	for (size_t i = 0; i < n; i += 64)
		ring[i].tsc = 1; /* touched: no page faults in the samples */
	k->ns0 = dcg_now_ns();
	k->tsc0 = __rdtsc();
	for (int i = 0; i < SAMPLES; i++)
		k->traced[i] = write_batch(ring, n, &wp);
	k->ns1 = dcg_now_ns();
	k->tsc1 = __rdtsc();
	free(ring);
	qsort(k->traced, SAMPLES, sizeof *k->traced, cmp_u64);
	return (int64_t)k->traced[SAMPLES / 2];
}

int64_t dcg_calibrate_translate(char *how, size_t len)
{
	struct calib *k =
	    mmap(NULL, sizeof *k, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	int64_t t0 = dcg_now_ns(), ticks;
	double per = 2.0 * BATCH; /* events per batch */

	if (k == MAP_FAILED) {
		snprintf(how, len,
			 "translate: the calibration failed (no memory), nothing subtracted");
		return 0;
	}
	if (run_helper(k) == 0) {
		qsort(k->native, SAMPLES, sizeof *k->native, cmp_u64);
		qsort(k->traced, SAMPLES, sizeof *k->traced, cmp_u64);
		uint64_t a = k->native[SAMPLES / 2], b = k->traced[SAMPLES / 2];
		ticks = b > a ? (int64_t)(b - a) : 0;
		snprintf(how, len,
			 "translate: the median of %d batches of %d calls translated less native, "
			 "in a child under the engine (%.1f ms)",
			 SAMPLES, BATCH, (double)(dcg_now_ns() - t0) / 1e6);
	} else {
		char why[96];
		snprintf(why, sizeof why, "%s", k->why);
		ticks = lower_bound(k);
		per = BATCH;
		snprintf(how, len,
			 "translate: the calibration in a child failed (%s): the median of %d "
			 "batches of %d records written in staprun (a lower bound)",
			 why, SAMPLES, BATCH);
	}
	int64_t ns = 0;
	if (ticks >= 0 && k->ns1 > k->ns0 && k->tsc1 > k->tsc0)
		ns = (int64_t)((double)ticks * (double)(k->ns1 - k->ns0) /
				   (double)(k->tsc1 - k->tsc0) / per +
			       0.5);
	else
		snprintf(how, len,
			 "translate: the calibration failed (no clock), nothing subtracted");
	munmap(k, sizeof *k);
	return ns;
}
