/* The call graph's translate mechanism: the in-process engine
 * (runtime/xlate/, doc/in-process-engine.md). While traced, a thread runs
 * from a cache of translated blocks inside its own process and writes a
 * record at each call, return, jump into another function and signal
 * handler entry into a ring shared with staprun, without stopping; the
 * records drained from the ring are the core's events. What the engine
 * cannot translate (an instruction it does not know, a limit) hands the
 * thread over to the breakpoint mechanism, with a -v note.
 *
 * The engine must not be called from inside its own callbacks (records
 * are drained in the middle of its stop handling): what the script asks
 * there (a dynamic_call_graph probe switching tracing off) is recorded,
 * and the thread runs on translated, its records ignored, until it is
 * switched on again, exits or the run ends. A thread still translated at
 * the end of the run is switched off where it is; in a process we
 * attached to (-x) it leaves the cache at its next request to staprun
 * through the engine's safety net, installed for such processes.
 *
 * With the flight recorder (and no dynamic_call_graph probes, no
 * registers captured) the engine's rings run in overwrite mode: the
 * translated code never waits for staprun, and a thread's ring (4 times
 * the recorder's N at least) is read only at a snapshot, a switch-off, a
 * fallback and the thread's end; its records go through the core into
 * the recorder as ever, the older ones giving the frames open at the
 * window's start. Records overwritten before a read are lost to the
 * core, which mends its stack by the stack pointer (events.c); when the
 * thread is stopped at the read (a snapshot in its own handler, a
 * switch-off), the frames it entered meanwhile are found on its real
 * stack and in the returns read (mech_translate_gap.c). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "dcg_internal.h"
#include "dcg.h"
#include "mech_translate_gap.h"
#include "sink_run.h"
#include "lang/debug.h"
#include "ptrace/ptrace_engine.h"
#include "sym/symbols.h"
#include "xlate/xlate.h"
#include "arch/x86_64/insn.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern const struct dcg_mech dcg_mech_translate;

/* Threads the engine knows (switched on once, until they exit). */
struct xthread {
	pid_t tid, pid;
	struct _stp_pt_thread *t;
	int on; /* running translated (also after tracing was switched off
		 * inside a callback of the engine: its records ignored) */
	/* XL_REC_ARGS records seen, for the record that follows them (a
	 * drain may end between them) */
	uint64_t regs[7];
	int have_regs;
	/* records were lost (overwrite mode): a jump waits for a call or a
	 * return to place the thread's stack again (it moves the top frame,
	 * which may be gone); gap: some were lost since tracing went on */
	int lost, gap;
};
static struct xthread *xts;
static size_t nxts;
/* Processes the engine knows (until they exec or end: after their
 * threads, which may all be gone by then). */
struct xproc {
	pid_t pid;
	struct _stp_pt_proc *p;
};
static struct xproc *xps;
static size_t nxps;
static struct _stp_xl_engine *X;
static int busy;	/* inside a callback of the engine */
static int overwrite;	/* the rings in overwrite mode (the flight recorder) */
static char ow_why[96]; /* the flight recorder on, overwrite mode not: why */
static uint64_t fallbacks;
static char fallback_why[160];

/* Overwrite mode: the thread, stopped or gone, whose records are read
 * (its stack is unwound after a gap), whether that failed, and the
 * snapshots after a gap whose frames were not found. */
static pid_t placing;
static int place_failed;
static uint64_t unplaced;
static int no_stop; /* STAP_DCG_SNAPSHOT_NOSTOP=1: read running threads as
		     * they run (bench/dcg-snapshot-bench.sh compares) */

static struct xthread *xthread_of(pid_t tid)
{
	for (size_t i = 0; i < nxts; i++)
		if (xts[i].tid == tid)
			return &xts[i];
	return NULL;
}

static void xthread_drop(struct xthread *x)
{
	*x = xts[--nxts];
}

/* ---- what the engine asks of the core ---- */

/* Tags keep the answers of func_of apart (user addresses are below 2^47). */
#define FN_BODY (1ull << 62)   /* a function past its first instruction */
#define FN_MODULE (1ull << 61) /* a module's code without symbols */
#define FN_NOMOD (1ull << 60)  /* code in no module (JIT): one "function" */
#define FN_PLT (1ull << 59)    /* an address in a PLT section */

/* The engine records a jump when the answers for its two ends differ: so
 * they differ wherever the core may see a call (dcg_enters_func) or the
 * end of a PLT stub. A function's entry is apart from its body, so a jump
 * back to it (a self tail call, by callgrind's rules) gets its record;
 * each address of a PLT is apart (a jump to a stub is a call even from
 * code of the same module without symbols; lazy binding's jumps inside
 * the PLT lead to the resolver). The core sorts out the jumps that are no
 * calls (into a .cold part, inside the PLT). */
static uint64_t func_of(void *core, struct _stp_pt_thread *t, uint64_t addr, uint64_t *lo,
			uint64_t *hi)
{
	const struct _stp_syminfo *si = dcg_sym(_stp_pt_pid(t), addr);

	(void)core;
	*lo = *hi = 0;
	if (!si || !si->module)
		return FN_NOMOD;
	if (si->plt)
		return addr | FN_PLT;
	if (!si->name)
		return si->modstart | FN_MODULE;
	if (addr == si->symaddr) {
		*lo = addr;
		*hi = addr + 1;
		return si->symaddr;
	}
	if (si->size) {
		*lo = si->symaddr + 1;
		*hi = si->symaddr + si->size;
	}
	return si->symaddr | FN_BODY;
}

/* What the script uses of the events' registers (_stp_dcg_needs): the
 * engine records them (XL_CAP_*) only then. */
static int capture;

/* An XL_REC_ARGS record: its values kept for the next record. */
static void feed_regs(struct xthread *x, const struct xl_rec *r)
{
	unsigned part = (unsigned)(r->from_kind & XL_ADDR_MASK);

	if (!x || part > 3)
		return;
	if (part == 3) {
		x->regs[6] = r->to;
	} else {
		x->regs[2 * part] = r->to;
		x->regs[2 * part + 1] = r->sp;
	}
	x->have_regs = 1;
}

/* Events of the kinds whose handlers need the thread stopped
 * (DCG_CAP_STOP_*): the engine stops it at each (XL_STOP_*). */
static int stops;

/* held: the thread is held at r's event (the handlers get the thread
 * itself, not the record's registers). */
static void feed(struct dthread *d, struct xthread *xr, const struct xl_rec *r, int held)
{
	unsigned kind = (unsigned)(r->from_kind >> XL_KIND_SHIFT);
	struct dcg_event e = {.from = r->from_kind & XL_ADDR_MASK,
			      .to = r->to,
			      .sp = r->sp,
			      .ns = (int64_t)r->tsc,
			      .late = !held};
	const struct dec *x;

	if (xr && kind == XL_REC_ARGS) {
		feed_regs(xr, r);
		return;
	}
	if (xr && xr->have_regs) {
		e.regs = xr->regs;
		xr->have_regs = 0;
	}
	if (kind & 0x80) {
		e.kind = DCG_EV_SIGNAL;
		e.sig = (int)(kind & 0x7f);
	} else if (kind == XL_REC_CALL) {
		e.kind = DCG_EV_CALL;
	} else if (kind == XL_REC_RET) {
		e.kind = DCG_EV_RETURN;
	} else if (kind == XL_REC_JUMP) {
		e.kind = DCG_EV_JUMP;
		e.indirect = (x = dcg_decode_at(&d->rd, e.from)) && x->kind == STP_X86_JMP_IND;
	} else {
		return;
	}
	dcg_event(d, &e);
}

/* After lost records, a return of a frame entered while they were lost:
 * the core would take it for its top frame's when that one's slot is not
 * known (a root entered mid-function), but it comes from below where the
 * root's stack was. */
static int stray_return(const struct dthread *d, uint64_t sp)
{
	const struct frame *top = d->nf ? &d->f[d->nf - 1] : NULL;

	return top && !top->known && sp - 8 < top->sp;
}

/* Held at the jump out of a PLT stub: breakpoint runs a call through a
 * bound stub at once (mech_breakpoint.c), so its handlers see the
 * callee's entry; so do these (the engine puts its registers back). */
static void held_past_stub(struct dthread *d, const struct xl_rec *r)
{
	struct user_regs_struct regs;
	uint64_t from = r->from_kind & XL_ADDR_MASK;

	if (r->from_kind >> XL_KIND_SHIFT == XL_REC_JUMP && dcg_is_stub(&d->rd, from) &&
	    _stp_pt_get_regs(d->t, &regs) == 0) {
		regs.rip = r->to;
		_stp_pt_set_regs(d->t, &regs);
	}
}

/* Code the thread replaced with its own system call: its names too
 * (what breakpoint's mech_breakpoint_mem.c does at the call's exit). */
static void on_code_changed(void *core, struct _stp_pt_thread *t, uint64_t lo, uint64_t hi)
{
	(void)core;
	dcg_code_changed(_stp_pt_pid(t), lo, hi);
}

/* on_records' loop where nothing was lost and no registers come: runs
 * of calls and returns through the shortcut, each other record (and
 * any the shortcut leaves) through feed() between them. */
static __attribute__((noinline)) void quick_run(struct dthread *d, const struct xl_rec *r, size_t n)
{
	size_t i = 0;

	while (i < n && d->on) {
		struct dcg_quick q;
		if (dcg_quick_begin(d, &q)) {
			for (; i < n; i++) {
				const struct xl_rec *x = &r[i];
				unsigned kind = (unsigned)(x->from_kind >> XL_KIND_SHIFT);
				uint64_t from = x->from_kind & XL_ADDR_MASK;
				if (kind == XL_REC_CALL) {
					if (!dcg_quick_call(&q, from, x->to, x->sp,
							    (int64_t)x->tsc))
						break;
				} else if (kind != XL_REC_RET ||
					   !dcg_quick_ret(&q, from, x->to, x->sp,
							  (int64_t)x->tsc)) {
					break;
				}
			}
			dcg_quick_end(&q);
		}
		if (i < n) {
			feed(d, NULL, &r[i], d->held && i == n - 1);
			i++;
		}
	}
}

static void on_records(void *core, struct _stp_pt_thread *t, const struct xl_rec *r, size_t n)
{
	struct dthread *d = dcg_find_thread(_stp_pt_tid(t), 0);

	(void)core;
	if (!d || !d->on || d->mech != &dcg_mech_translate || !n)
		return;
	struct xthread *x = xthread_of(d->tid), *xr = capture ? x : NULL;
	busy++;
	if ((d->held = stops && _stp_xl_at_event(X, t)))
		held_past_stub(d, &r[n - 1]);
	if (x && x->lost && d->tid == placing) { /* mech_translate_gap.c */
		if (dcg_xl_place(d, r, n) == 0)
			x->lost = 0; /* the stack is placed again */
		else
			place_failed = 1;
	}

	size_t first = 0; /* the time of the first event (not of its registers) */
	while (first + 1 < n && r[first].from_kind >> XL_KIND_SHIFT == XL_REC_ARGS)
		first++;
	if (!dcg_stopped(d, (int64_t)r[first].tsc)) {
		/* no shortcut while registers are captured: they go with their
		 * event through feed() */
		int quick = !xr && dcg_event_quick_ok();
		if (quick && !(x && x->gap)) {
			quick_run(d, r, n);
			n = 0;
		}
		for (size_t i = 0; i < n && d->on; i++) {
			unsigned kind = (unsigned)(r[i].from_kind >> XL_KIND_SHIFT);
			uint64_t from = r[i].from_kind & XL_ADDR_MASK;
			if (x && x->gap) {
				if ((x->lost && kind == XL_REC_JUMP) ||
				    (kind == XL_REC_RET && stray_return(d, r[i].sp)))
					continue;
				if (kind != XL_REC_ARGS)
					x->lost = 0;
			}
			if (!quick || (kind != XL_REC_CALL && kind != XL_REC_RET) ||
			    !dcg_event_quick(d, kind == XL_REC_CALL ? DCG_EV_CALL : DCG_EV_RETURN,
					     from, r[i].to, r[i].sp, (int64_t)r[i].tsc))
				feed(d, xr, &r[i], d->held && i == n - 1);
		}
	}
	d->held = 0;
	busy--;
}

static void on_lost(void *core, struct _stp_pt_thread *t, uint64_t n)
{
	struct xthread *x = xthread_of(_stp_pt_tid(t));

	(void)core;
	(void)n;
	if (x)
		x->lost = x->gap = 1;
}

/* The thread left the cache for good at native pc: breakpoint goes on. */
static void on_fallback(void *core, struct _stp_pt_thread *t, uint64_t pc, const char *why)
{
	struct dthread *d = dcg_find_thread(_stp_pt_tid(t), 0);
	struct xthread *x = xthread_of(_stp_pt_tid(t));

	(void)core;
	if (x)
		x->on = 0;
	if (!fallbacks++)
		snprintf(fallback_why, sizeof fallback_why, "%s", why);
	_stp_dbg(STP_DBG_DCG, 1, "thread %d: translate gives up at 0x%" PRIx64 ": %s",
		 (int)_stp_pt_tid(t), pc, why);
	if (!d || !d->on || d->mech != &dcg_mech_translate)
		return;
	busy++;
	if (dcg_mech_switch(d, &dcg_mech_breakpoint, pc) < 0)
		dcg_thread_off(d, DCG_OFF_SCRIPT);
	busy--;
}

/* ---- the mechanism ---- */

/* Started by us (-c, or what that started)? It dies with staprun
 * (PTRACE_O_EXITKILL): no safety net needed. */
static int ours(pid_t pid)
{
	for (int i = 0; i < 64 && pid > 1; i++) {
		char path[64];
		int ppid = 0;
		if (pid == getpid())
			return 1;
		snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
		FILE *f = fopen(path, "re");
		/* pid (comm) state ppid: comm may hold anything but ')' last */
		char buf[512];
		size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
		if (f)
			fclose(f);
		buf[n] = '\0';
		char *rp = strrchr(buf, ')');
		if (!rp || sscanf(rp + 1, " %*c %d", &ppid) != 1)
			return 0;
		pid = ppid;
	}
	return 0;
}

/* d's process, known to the engine from now on; its first time: the
 * safety net (an attached process outlives us: our int3s must never kill
 * it). */
static int proc_known(struct dthread *d)
{
	for (size_t i = 0; i < nxps; i++)
		if (xps[i].pid == d->pid)
			return 0;
	struct xproc *v = realloc(xps, (nxps + 1) * sizeof *v);
	if (!v)
		return -ENOMEM;
	xps = v;
	xps[nxps++] = (struct xproc){d->pid, _stp_pt_thread_proc(d->t)};
	if (!ours(d->pid)) {
		int rc = _stp_xl_protect(X, d->t);
		_stp_dbg(STP_DBG_DCG, 1, "process %d: safety net %s", (int)d->pid,
			 rc < 0 ? strerror(-rc) : "installed");
	}
	return 0;
}

/* The thread will not be translated: breakpoint traces it from pc. */
static int hand_over(struct dthread *d, uint64_t pc, const char *why)
{
	if (!fallbacks++)
		snprintf(fallback_why, sizeof fallback_why, "%s", why);
	_stp_dbg(STP_DBG_DCG, 1, "thread %d: not translated: %s", (int)d->tid, why);
	return dcg_mech_switch(d, &dcg_mech_breakpoint, pc);
}

/* A CET shadow stack (kernels from 6.6 list it in the status file): its
 * returns check the real return addresses, which the engine keeps, but
 * the translated returns are jumps the shadow stack never sees. */
static int shadow_stack(pid_t tid)
{
	char path[64], line[256];
	int on = 0;

	snprintf(path, sizeof path, "/proc/%d/status", (int)tid);
	FILE *f = fopen(path, "re");
	while (f && fgets(line, sizeof line, f))
		if (!strncmp(line, "x86_Thread_features:", 20) && strstr(line + 20, "shstk"))
			on = 1;
	if (f)
		fclose(f);
	return on;
}

/* A snapshot: the threads' records read first (overwrite mode), each
 * thread stopped meanwhile (a running one for the read: its stack can
 * then be unwound, its registers made native by the engine's stop hook;
 * one that stopped for something else at that moment is read running). */
static void before_snapshot(pid_t pid, pid_t tid, int all)
{
	(void)pid;
	if (!X || busy)
		return;
	for (size_t i = 0; i < dcg_nthreads; i++) {
		struct dthread *d = dcg_threads[i];
		struct xthread *x = xthread_of(d->tid);
		if (!d->on || d->mech != &dcg_mech_translate || !x || !x->on ||
		    (!all && d->tid != tid))
			continue;
		struct _stp_xl_stats st0, st1;
		int held = d->tid == tid ? 0 : no_stop ? -1 : _stp_pt_stop_thread(d->t);
		placing = held >= 0 ? d->tid : 0;
		place_failed = 0;
		_stp_xl_get_stats(X, &st0);
		_stp_xl_drain(X, d->t);
		_stp_xl_get_stats(X, &st1);
		if (held > 0)
			_stp_pt_stop_thread_end(d->t);
		if (st1.overwritten > st0.overwritten && (!placing || place_failed))
			unplaced++;
		placing = 0;
		dcg_flush_thread(d);
	}
}

/* The engine's configuration: the rings in overwrite mode for the flight
 * recorder of n records where nothing else needs every record. */
#define RING_WAIT_US 20000
static void engine_config(struct _stp_xl_config *cfg, unsigned n)
{
	size_t bytes = 1 << 20;
	int need = dcg_capture();

	cfg->capture = capture =
	    (need & DCG_CAP_ARGS ? XL_CAP_ARGS : 0) | (need & DCG_CAP_RET ? XL_CAP_RET : 0);
	cfg->stop = stops = (need & DCG_CAP_STOP_CALL ? XL_STOP_CALL : 0) |
	    (need & DCG_CAP_STOP_RET ? XL_STOP_RET : 0);
	/* a full ring waits while the event loop's reads (poll.c, 2 ms apart
	 * at most) come; it stops at its doorbell when none came for
	 * RING_WAIT_US (staprun starved, or gone); the environment's
	 * STAP_DCG_RING_WAIT_US for tests and comparisons */
	const char *wait = getenv("STAP_DCG_RING_WAIT_US");
	cfg->ring_wait_us = wait && *wait ? (unsigned)strtoul(wait, NULL, 10) : RING_WAIT_US;
	if (!_stp_dcg_poll_period())
		cfg->ring_wait_us = 0;
	if (!n)
		return;
	while (bytes < 4 * (size_t)n * sizeof(struct xl_rec) && bytes < (8 << 20))
		bytes *= 2;
	const char *drain = getenv("STAP_DCG_RING_DRAIN");
	if (drain && *drain == '1') /* for comparisons (bench/dcg-ring-bench.sh) */
		snprintf(ow_why, sizeof ow_why, "STAP_DCG_RING_DRAIN=1");
	else if (dcg_probes_wanted())
		snprintf(ow_why, sizeof ow_why, "dynamic_call_graph probes see every event");
	else if (capture)
		snprintf(ow_why, sizeof ow_why, "registers are captured");
	else if (bytes < 4 * (size_t)n * sizeof(struct xl_rec))
		snprintf(ow_why, sizeof ow_why, "%u records are more than a ring keeps", n);
	if (ow_why[0])
		return;
	cfg->overwrite = overwrite = 1;
	cfg->ring_bytes = bytes;
	const char *ns = getenv("STAP_DCG_SNAPSHOT_NOSTOP");
	no_stop = ns && *ns == '1';
	dcg_run_on_snapshot(before_snapshot);
}

static int xl_on(struct dthread *d, uint64_t pc)
{
	static const struct _stp_xl_ops ops = {func_of, on_records, on_fallback, on_lost,
					       on_code_changed};
	struct xthread *x = xthread_of(d->tid);
	int rc;

	if (x && x->on) {
		/* still translated (switched off inside a callback): its
		 * records of meanwhile go first, ignored (d is off) */
		if (!busy)
			_stp_xl_drain(X, d->t);
		return 0;
	}
	if (busy)
		return -EBUSY;
	if (!X) {
		struct _stp_xl_config cfg = {0};
		engine_config(&cfg, dcg_run_ring_size());
		if (!(X = _stp_xl_new(NULL, &ops, NULL, &cfg)))
			return -ENOMEM;
	}
	if (!x && shadow_stack(d->tid))
		return hand_over(d, pc, "a CET shadow stack is enabled");
	if (!x) {
		struct xthread *v = realloc(xts, (nxts + 1) * sizeof *v);
		if (!v)
			return -ENOMEM;
		xts = v;
		x = &xts[nxts++];
		*x = (struct xthread){.tid = d->tid, .pid = d->pid, .t = d->t};
	}
	x->have_regs = 0; /* none kept from an earlier time on */
	x->lost = x->gap = 0;
	if ((rc = proc_known(d)) < 0)
		return rc;
	rc = _stp_xl_thread_on(X, d->t);
	if (rc == -EBUSY) /* the cap on translated threads */
		return hand_over(d, pc, "too many translated threads");
	if (rc < 0) { /* the target's sandbox forbids a system call, no memory */
		char why[96];
		snprintf(why, sizeof why, "cannot set up the engine in the process: %s",
			 strerror(-rc));
		return hand_over(d, pc, why);
	}
	x->on = 1;
	return 0;
}

static void xl_off(struct dthread *d, enum dcg_off how, int last)
{
	struct xthread *x = xthread_of(d->tid);

	(void)last;
	if (!x || !x->on)
		return;
	if (how == DCG_OFF_SCRIPT && busy)
		return; /* it runs on translated: see the top */
	/* exit and exec: the thread or its memory is gone (thread_exit,
	 * mem_changed) */
	if (how == DCG_OFF_SCRIPT || how == DCG_OFF_END) {
		_stp_xl_thread_off(X, d->t);
		x->on = 0;
	}
}

/* At a switch-off (the thread stopped, or gone: then not unwound). */
static void xl_drain(struct dthread *d)
{
	struct xthread *x = xthread_of(d->tid);

	if (!busy && x && x->on) {
		placing = d->tid;
		_stp_xl_drain(X, d->t);
		placing = 0;
	}
}

/* Before a handler: in overwrite mode the records wait for a read. */
static void xl_flush(struct dthread *d)
{
	if (!overwrite)
		xl_drain(d);
}

static void xl_thread_start(struct _stp_pt_thread *t)
{
	if (X)
		_stp_xl_thread_start(X, t);
}

static void xl_thread_exit(pid_t tid)
{
	struct xthread *x = xthread_of(tid);

	if (!x)
		return;
	_stp_xl_thread_gone(X, x->t);
	xthread_drop(x);
}

static void xl_mem_changed(pid_t pid, struct _stp_pt_thread *t, enum dcg_mem what)
{
	if (!X)
		return;
	if (what == DCG_MEM_LIBS) {
		_stp_xl_mem_changed(X, t);
		return;
	}
	for (size_t i = 0; i < nxps; i++)
		if (xps[i].pid == pid) {
			_stp_xl_proc_gone(X, xps[i].p);
			xps[i] = xps[--nxps];
			break;
		}
	for (size_t i = nxts; i-- > 0;)
		if (xts[i].pid == pid)
			xthread_drop(&xts[i]);
}

static void xl_report(char *how, size_t len)
{
	struct _stp_xl_stats st;
	char fb[256] = "", ow[256] = "", rf[160] = "";

	if (!X)
		return;
	_stp_xl_get_stats(X, &st);
	/* the stops of a translated thread: its requests to staprun */
	dcg_n_stops += st.doorbells + st.event_stops;
	char ev[320] = "";
	if (stops) /* dcg_stop_why(): pass 2's first reason */
		snprintf(ev, sizeof ev,
			 "; %" PRIu64 " stops at events (the handlers need the thread: %s)",
			 st.event_stops, dcg_stop_why() ? dcg_stop_why() : "?");
	if (fallbacks)
		snprintf(fb, sizeof fb, "; %" PRIu64 " handed over to breakpoint (%s)", fallbacks,
			 fallback_why);
	if (st.ring_full) /* the thread's waits for staprun's reads */
		snprintf(rf, sizeof rf,
			 "; rings full %" PRIu64 " times: %" PRIu64 " waits, %" PRIu64
			 " stops, %.3f ms waited",
			 st.ring_full, st.ring_waits, st.ring_stops, (double)st.ring_wait_ns / 1e6);
	if (overwrite) {
		int k = snprintf(ow, sizeof ow,
				 "; flight recorder on the engine's rings: %" PRIu64
				 " records overwritten unread",
				 st.overwritten);
		if (unplaced && k > 0 && (size_t)k < sizeof ow)
			snprintf(ow + k, sizeof ow - (size_t)k,
				 "; in %" PRIu64 " thread snapshots the frames entered meanwhile "
				 "are missing: the thread was running, or its stack could not be "
				 "unwound",
				 unplaced);
	} else if (ow_why[0])
		snprintf(ow, sizeof ow, "; flight recorder: every record read (%s)", ow_why);
	snprintf(how, len,
		 " (in-process: on %" PRIu64 " times, %" PRIu64 " blocks, %" PRIu64
		 " KiB of code, %" PRIu64 " records, %" PRIu64 " requests%s%s%s%s)",
		 st.threads, st.blocks, st.code_bytes >> 10, st.records, st.doorbells, ev, rf, fb,
		 ow);
}

static void xl_finish(void)
{
	_stp_xl_leave_all(X);
	for (size_t i = 0; X && i < nxts; i++)
		if (xts[i].on)
			_stp_xl_thread_off(X, xts[i].t);
	_stp_xl_free(X);
	X = NULL;
	free(xts);
	xts = NULL;
	nxts = 0;
	free(xps);
	xps = NULL;
	nxps = 0;
	fallbacks = 0;
	fallback_why[0] = '\0';
	overwrite = 0;
	stops = 0;
	unplaced = 0;
	no_stop = 0;
	ow_why[0] = '\0';
}

const struct dcg_mech dcg_mech_translate = {
    .name = "translate",
    .auto_rank = 1,
    .late = 1,
    .usable = _stp_xl_usable,
    .thread_on = xl_on,
    .thread_off = xl_off,
    .drain = xl_drain,
    .flush = xl_flush,
    .thread_start = xl_thread_start,
    .thread_exit = xl_thread_exit,
    .mem_changed = xl_mem_changed,
    .report = xl_report,
    .finish = xl_finish,
};
