/* Threads of the in-process engine: switching on and off, the hooks into
 * the ptrace engine (every stop made native, every resume back into the
 * cache), the agent's doorbell, signal handler entries, and the public
 * API of xlate.h. */
#include "xlate/xl_internal.h"
#include "xlate/agent.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <x86intrin.h>

int _stp_xl_debug_on;

void _stp_xl_msg(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("xlate: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

static int read_code(void *ctx, uint64_t addr, void *buf, size_t len)
{
	return _stp_pt_read_code(ctx, addr, buf, len);
}

static struct xl_proc *proc_of(struct _stp_xl_engine *x, struct _stp_pt_proc *p, int create)
{
	for (struct xl_proc *xp = x->procs; xp; xp = xp->next)
		if (xp->p == p)
			return xp;
	if (!create)
		return NULL;
	struct xl_proc *xp = calloc(1, sizeof *xp);
	if (!xp)
		return NULL;
	xp->x = x;
	xp->p = p;
	xp->pid = _stp_pt_proc_pid(p);
	xp->next = x->procs;
	x->procs = xp;
	_stp_pt_watch_breakpoints(p, xl_watch_fn, xp);
	return xp;
}

static struct xl_thread *thread_of(struct _stp_xl_engine *x, struct _stp_pt_thread *t)
{
	struct xl_proc *xp = proc_of(x, _stp_pt_thread_proc(t), 0);

	for (struct xl_thread *xt = xp ? xp->threads : NULL; xt; xt = xt->next)
		if (xt->t == t)
			return xt;
	return NULL;
}

/* ---- the region ---- */

static void region_init(struct xl_thread *xt)
{
	struct xl_ctl *c = xt->ctl = (struct xl_ctl *)(xt->rg.mem + XL_CTL_OFF);

	memset(xt->rg.mem, 0, XL_RKEYS_OFF);
	memcpy(xt->rg.mem, _stp_xl_agent.code, _stp_xl_agent.size);
	for (int k = 0; k < XL_E_N; k++)
		c->entry[k] = xt->rg.addr + _stp_xl_agent.entry[k];
	c->exit_native = xt->rg.addr + _stp_xl_agent.exit;
	c->doorbell = xt->rg.addr + _stp_xl_agent.doorbell_after;
	c->region = xt->rg.addr;
	c->ring_base = xt->rg.addr + XL_RING_OFF;
	c->ring_end = c->ring_base + xt->ring_n * sizeof(struct xl_rec);
	xl_ring_reset(xt);
	xl_code_publish(xt);
}

static int region_get(struct xl_thread *xt)
{
	struct xl_proc *xp = xt->xp;
	size_t ring = xp->x->cfg.ring_bytes / sizeof(struct xl_rec) * sizeof(struct xl_rec);
	size_t size = XL_REGION_FIXED + ring;
	int rc;

	xt->ring_n = ring / sizeof(struct xl_rec);
	for (size_t i = 0; i < xp->nfree_rg; i++) {
		if (xp->free_rg[i].size != size)
			continue;
		xt->rg = xp->free_rg[i];
		xp->free_rg[i] = xp->free_rg[--xp->nfree_rg];
		/* tables and directory of the thread before: gone */
		madvise(xt->rg.mem + XL_RKEYS_OFF, XL_RING_OFF - XL_RKEYS_OFF, MADV_REMOVE);
		region_init(xt);
		return 0;
	}
	if ((rc = xl_map_region(xt, size)) < 0)
		return rc;
	region_init(xt);
	xl_protect_region(xp, xt->rg.addr);
	return 0;
}

/* ---- stops and resumes ---- */

static int regs_equal(const struct user_regs_struct *a, const struct user_regs_struct *b)
{
	return !memcmp(a, b, sizeof *a);
}

static void fallback(struct xl_thread *xt, uint64_t pc, const char *why);
static void mem_changed(struct xl_proc *xp, pid_t tid, struct _stp_pt_thread *t);

/* A block's check after a store at fs: met a descriptor it did not know
 * (the thread is at pc, after the store): learn it, make its section's
 * start begin a block in every thread, and translate the store's block
 * again with the descriptor known. Where the thread goes on. */
static uint64_t rseq_learn(struct xl_thread *xt, uint64_t pc)
{
	const struct xl_rseq_sec *s;
	const char *why = NULL;
	struct xl_block *b;
	uint64_t ans;
	int rc = xl_rseq_learn(xt, xt->ctl->s_tgt, &s);

	if (rc < 0) {
		fallback(xt, pc, "too many rseq critical sections");
		return 0;
	}
	xl_invalidate(xt, pc - 1, pc);
	if (rc && s && s->end > s->start)
		xl_invalidate_all(xt->xp, s->start, s->end);
	if (s && s->start == pc && s->end > pc && (b = xl_translate(xt, pc, &why)) && b->copy_entry)
		return b->cache + b->copy_entry; /* the section's copy, at once */
	if (!(ans = xl_enter_at(xt, pc, 0, &why)))
		fallback(xt, pc, why);
	return ans;
}

static void doorbell(struct xl_thread *xt)
{
	struct _stp_xl_engine *x = xt->xp->x;
	struct xl_ctl *c = xt->ctl;
	const char *why = NULL;
	uint64_t ans = 0;
	struct timespec t0, t1;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	x->st.doorbells++;
	if (!c->overwrite) /* the records wait for a read (ring.c) */
		xl_ring_drain(xt);
	switch (c->req) {
	case XL_REQ_TRANSLATE: {
		struct xl_block *b = xl_block_at(xt, c->arg);
		if (b && xl_block_changed(xt, b))
			xl_invalidate(xt, b->native, b->native_end); /* its check failed */
		b = xl_translate(xt, c->arg, &why);
		if (b)
			ans = b->cache + b->body;
		else
			fallback(xt, c->arg, why);
		break;
	}
	case XL_REQ_DRAIN: /* read above: the agent makes room */
		ans = c->retry;
		break;
	case XL_REQ_SIGRETURN: {
		int after = c->arg == xt->frame_after_trap;
		xt->frame_after_trap = 0;
		if (xl_block_of_cache(xt, c->arg))
			ans = c->arg; /* a nested frame, done already */
		else if (!(ans = xl_enter_at(xt, c->arg, after, &why)))
			fallback(xt, c->arg, why);
		break;
	}
	case XL_REQ_RSEQ:
		ans = rseq_learn(xt, c->arg);
		break;
	case XL_REQ_MEMSYS: /* the maps again; the thread goes on after its call */
		mem_changed(xt->xp, xt->tid, xt->t);
		if (!(ans = xl_enter_at(xt, c->arg, 0, &why)))
			fallback(xt, c->arg, why);
		break;
	case XL_REQ_FALLBACK:
	default: {
		struct xl_insn in;
		xl_reader_drop(&xt->rd);
		xl_read_insn(&xt->rd, c->arg, &in);
		if (xl_rseq_at(xt->xp, c->arg))
			in.why = "an rseq critical section it cannot copy";
		fallback(xt, c->arg,
			 in.why ? in.why : "an instruction the translator does not handle");
		break;
	}
	}
	xl_debug("doorbell %d of %d (%#llx): %#llx", (int)c->req, (int)xt->tid,
		 (unsigned long long)c->arg, (unsigned long long)ans);
	c->answer = XL_ANSWERED | ans;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	x->st.doorbell_ns +=
	    (uint64_t)((t1.tv_sec - t0.tv_sec) * 1000000000 + t1.tv_nsec - t0.tv_nsec);
}

/* The engine ran the instruction under the breakpoint the thread trapped
 * on (emulated or out of line): the thread is at pc with sp. A call, a
 * return or a jump into another function gets its record here. */
static void displaced_done(struct xl_thread *xt, uint64_t pc, uint64_t sp)
{
	const struct user_regs_struct *b = &xt->trap_regs;
	uint64_t at = xt->trapped_at, ra = 0;
	struct xl_insn in;
	unsigned kind = 0;

	if (xl_read_insn(&xt->rd, at, &in) < 0)
		return;
	switch (in.cls) {
	case XL_I_CALL:
	case XL_I_CALL_IND:
		if (sp == b->rsp - 8 && _stp_pt_read(xt->t, sp, &ra, 8) == 0 && ra == at + in.len)
			kind = XL_REC_CALL;
		break;
	case XL_I_RET:
		if (sp == b->rsp + 8 + in.ret_imm)
			kind = XL_REC_RET;
		break;
	case XL_I_JMP:
	case XL_I_JCC:
	case XL_I_JMP_IND:
		if (pc != at + in.len && xl_fid(xt, at) != xl_fid(xt, pc))
			kind = XL_REC_JUMP;
		break;
	default:
		break;
	}
	if (kind) {
		struct xl_rec rec = {__rdtsc(), at | (uint64_t)kind << XL_KIND_SHIFT, pc, sp};
		xl_ring_put_args(xt, kind, b);
		xl_ring_put(xt, &rec);
	}
}

static int stop_is_int3(struct _stp_pt_thread *t, int st)
{
	siginfo_t si;

	return WIFSTOPPED(st) && (st >> 16) == 0 && WSTOPSIG(st) == SIGTRAP &&
	    ptrace(PTRACE_GETSIGINFO, _stp_pt_tid(t), 0, &si) == 0 && si.si_code == SI_KERNEL;
}

/* Blocks over [lo, hi) go: now if the thread is stopped, else at the stop
 * an interrupt brings (before it runs them again, mostly: a breakpoint
 * placed while a thread runs takes effect at some point, as natively). */
static void invalidate(struct xl_thread *xt, uint64_t lo, uint64_t hi)
{
	if (!xt->nbyc)
		return;
	if (_stp_pt_interrupt(xt->t) <= 0) {
		xl_invalidate(xt, lo, hi);
		return;
	}
	if (xt->ninval == (int)(sizeof xt->inval / sizeof *xt->inval)) {
		lo = 0; /* too many: everything */
		hi = UINT64_MAX;
		xt->ninval = 0;
	}
	xt->inval[xt->ninval][0] = lo;
	xt->inval[xt->ninval++][1] = hi;
}

static void invalidate_pending(struct xl_thread *xt)
{
	for (int i = 0; i < xt->ninval; i++)
		xl_invalidate(xt, xt->inval[i][0], xt->inval[i][1]);
	xt->ninval = 0;
}

/* The ptrace engine armed or disarmed an int3 at addr in the address
 * space of xp (and of processes sharing it). */
void xl_watch_fn(uint64_t addr, int armed, uint8_t orig, void *data)
{
	struct xl_proc *xp = data;

	if (xp->pctl)
		xl_mirror_bkpt(xp, addr, armed, orig);
	xl_invalidate_all(xp, addr, addr + 1);
}

void xl_invalidate_all(struct xl_proc *xp, uint64_t lo, uint64_t hi)
{
	for (struct xl_proc *q = xp->x->procs; q; q = q->next) {
		if (q != xp && !_stp_pt_proc_shares_mm(q->p, xp->p))
			continue;
		for (struct xl_thread *xt = q->threads; xt; xt = xt->next)
			invalidate(xt, lo, hi);
	}
}

/* The blocks (and cached function ranges) of the code of xp's address
 * space no longer mapped as it was go, in every thread of it; t (the
 * thread whose system call changed it, or NULL) has the client told. */
static void mem_changed(struct xl_proc *xp, pid_t tid, struct _stp_pt_thread *t)
{
	const struct _stp_xl_ops *ops = &xp->x->ops;
	uint64_t gone[16][2];
	int n = xl_mem_gone(xp, tid, gone, 16);

	for (int i = 0; i < n; i++) {
		xl_debug("code at %#llx-%#llx unmapped or replaced", (unsigned long long)gone[i][0],
			 (unsigned long long)gone[i][1]);
		xl_invalidate_all(xp, gone[i][0], gone[i][1]);
		xl_funcs_forget(xp, gone[i][0], gone[i][1]);
		if (t && ops->code_changed)
			ops->code_changed(xp->x->core, t, gone[i][0], gone[i][1]);
	}
}

void _stp_xl_mem_changed(struct _stp_xl_engine *x, struct _stp_pt_thread *t)
{
	struct xl_proc *xp = proc_of(x, _stp_pt_thread_proc(t), 0);

	if (xp)
		mem_changed(xp, _stp_pt_tid(t), NULL); /* (the client's own news) */
}

/* Is pc in the agent or the cache of xt? */
static int in_our_code(struct xl_thread *xt, uint64_t pc)
{
	return (pc >= xt->rg.addr && pc < xt->rg.addr + XL_AGENT_MAX) || xl_block_of_cache(xt, pc);
}

/* xl_to_native for stopped thread xt, stepping it out of an agent stub
 * first (a few instructions); INT_MIN when a step failed. */
static int to_native(struct xl_thread *xt, struct user_regs_struct *r, int trap, uint64_t *after)
{
	int rc;

	for (int steps = 0; (rc = xl_to_native(xt, r, trap, after)) < 0 && steps < 64; steps++) {
		if (_stp_pt_step_insn(xt->t) < 0 || _stp_pt_get_regs(xt->t, r) < 0)
			return INT_MIN;
		trap = 0;
	}
	return rc;
}

/* xt's ring read with the thread held where it is: the handlers of the
 * last record read get the thread (_stp_xl_at_event). */
static void drain_held(struct xl_thread *xt)
{
	xt->at_event = 1;
	xl_ring_drain(xt);
	xt->at_event = 0;
}

/* An event trap (cfg.stop): its record committed here, then read with
 * the thread held in the native state before the event's instruction
 * (what a breakpoint there shows), then on in the cache past the
 * commit. Registers a handler set are not kept (the instruction is
 * translated already); its memory writes are. */
static void event_stop(struct xl_thread *xt, const struct user_regs_struct *native)
{
	struct user_regs_struct cache;
	uint64_t resume;

	if (_stp_pt_get_regs(xt->t, &cache) < 0 || !(resume = xl_event_resume(xt, cache.rip)))
		return;
	xt->xp->x->st.event_stops++;
	xt->ctl->ring_wp = cache.rcx; /* the commit the thread skips */
	_stp_pt_set_regs(xt->t, native);
	drain_held(xt);
	cache.rip = resume;
	_stp_pt_set_regs(xt->t, &cache);
}

int _stp_xl_at_event(struct _stp_xl_engine *x, struct _stp_pt_thread *t)
{
	struct xl_thread *xt = thread_of(x, t);

	return xt && xt->at_event && xt->last_part;
}

static int on_stop(struct _stp_pt_thread *t, int st, void *data)
{
	struct xl_thread *xt = data;
	struct user_regs_struct r;
	int trap, rc;

	if (xt->ninval)
		invalidate_pending(xt);
	if (!xt->on || _stp_pt_get_regs(t, &r) < 0)
		return 0;
	trap = stop_is_int3(t, st);
	if (trap && r.rip == xt->rg.addr + _stp_xl_agent.doorbell_after) {
		doorbell(xt);
		return 1;
	}
	uint64_t after = 0;
	if ((rc = to_native(xt, &r, trap, &after)) == INT_MIN)
		return 0;
	if (rc == 3) {
		event_stop(xt, &r);
		return 1;
	}
	xt->mapped = 0;
	if (rc > 0 && WIFSTOPPED(st) && (st >> 16) == 0 && WSTOPSIG(st) == SIGSEGV) {
		struct user_regs_struct at;
		if (_stp_pt_get_regs(t, &at) == 0 && xl_is_our_rdtsc(xt, at.rip)) {
			/* the thread disabled rdtsc: it goes on natively, where
			 * it was (the record rolled back), without the signal */
			_stp_pt_set_regs(t, &r);
			fallback(xt, r.rip, "rdtsc disabled in the thread (prctl PR_SET_TSC)");
			return 1;
		}
	}
	if (rc <= 0)
		return 0; /* trapped_at stays: a step into a handler comes here */
	xt->trapped_at = 0;
	xt->pending_after = after;
	if (rc == 2) {
		xt->trapped_at = r.rip - 1;
		xt->trap_regs = r;
	}
	_stp_pt_get_regs(t, &xt->cache_regs);
	_stp_pt_set_regs(t, &r);
	xt->native_regs = r;
	xt->mapped = 1;
	xt->mapped_gen = xt->gen;
	return 0;
}

/* Would sig kill the thread here (not caught, not ignored, default
 * action terminate)? Then it dies at its native pc. */
static int fatal(struct _stp_pt_thread *t, int sig)
{
	char path[64], line[256];
	unsigned long long ign = 0, cgt = 0;
	FILE *f;

	switch (sig) {
	case SIGCHLD:
	case SIGCONT:
	case SIGURG:
	case SIGWINCH:
	case SIGSTOP:
	case SIGTSTP:
	case SIGTTIN:
	case SIGTTOU:
		return 0;
	}
	snprintf(path, sizeof path, "/proc/%d/status", (int)_stp_pt_tid(t));
	if (!(f = fopen(path, "re")))
		return 1;
	while (fgets(line, sizeof line, f)) {
		sscanf(line, "SigIgn: %llx", &ign);
		sscanf(line, "SigCgt: %llx", &cgt);
	}
	fclose(f);
	return !(((ign | cgt) >> (sig - 1)) & 1);
}

static void on_resume(struct _stp_pt_thread *t, int sig, void *data)
{
	struct xl_thread *xt = data;
	struct user_regs_struct r;
	const char *why = NULL;

	if (!xt->on || _stp_pt_get_regs(t, &r) < 0)
		return;
	if (in_our_code(xt, r.rip))
		return; /* in our code already (a doorbell answered) */
	int no_restore = xt->no_restore;
	xt->no_restore = 0;
	if (xt->mapped && !no_restore && xt->mapped_gen == xt->gen &&
	    regs_equal(&r, &xt->native_regs)) {
		_stp_pt_set_regs(t, &xt->cache_regs); /* as if it had not stopped */
		xt->mapped = 0;
		xt->trapped_at = 0;
		return;
	}
	xt->mapped = 0;
	/* back at the breakpoint, or sent to the engine's out-of-line copy of
	 * its instruction: our translation of it runs instead. (Not when the
	 * engine ran it and it went to its own address: a ret to a return
	 * address that is the ret itself moved rsp.) */
	int after_trap = (xt->trapped_at && r.rsp == xt->trap_regs.rsp &&
			  (r.rip == xt->trapped_at ||
			   r.rip == _stp_pt_bkpt_slot(_stp_pt_thread_proc(t), xt->trapped_at)));
	if (after_trap)
		r.rip = xt->trapped_at;
	after_trap |= xt->pending_after && r.rip == xt->pending_after;
	xt->pending_after = 0;
	if (xt->trapped_at && !after_trap)
		displaced_done(xt, r.rip, r.rsp);
	xt->trapped_at = 0;
	if (sig && fatal(t, sig))
		return;
	uint64_t c = xl_enter_at(xt, r.rip, after_trap, &why);
	if (!c) {
		fallback(xt, r.rip, why);
		return;
	}
	r.rip = c;
	_stp_pt_set_regs(t, &r);
}

static const struct _stp_pt_thread_hooks hooks = {on_stop, on_resume};

/* The cache entry of native pc, where a signal frame goes back to,
 * given to the agent now (layout.h sigret_*): its rt_sigreturn then
 * needs no doorbell. Not for a block from code that may change (its
 * check is made at the doorbell). */
static void sigret_learn(struct xl_thread *xt, uint64_t pc)
{
	struct xl_ctl *c = xt->ctl;
	const struct xl_block *b;
	const char *why = NULL;
	uint64_t to;

	for (int i = 0; i < XL_SIGRETS; i++)
		if (c->sigret_pc[i] == pc)
			return;
	if (!(to = xl_enter_at(xt, pc, 0, &why)) || !(b = xl_block_of_cache(xt, to)) || b->checked)
		return; /* the doorbell says what to do */
	int i = xt->sigret_next++ % XL_SIGRETS;
	c->sigret_to[i] = to;
	c->sigret_pc[i] = pc;
}

void xl_sigret_forget(struct xl_thread *xt)
{
	if (xt->ctl)
		memset(xt->ctl->sigret_pc, 0, sizeof xt->ctl->sigret_pc);
}

/* A handler's first instruction (the engine stepped into it): the
 * signal's record, after the ring's. */
static void on_sigstep(struct _stp_pt_thread *t, int sig, void *data)
{
	struct xl_thread *xt = data;
	struct user_regs_struct r;
	uint64_t from = 0;

	if (!xt->on || _stp_pt_get_regs(t, &r) < 0)
		return;
	xt->xp->x->st.signals++;
	if (!xt->trapped_at && xt->pending_after) {
		/* stopped after a trap stub: the frame comes back there */
		uint64_t pc = 0;
		_stp_pt_read(xt->t, r.rsp + 8 + 168, &pc, sizeof pc);
		if (pc == xt->pending_after)
			xt->frame_after_trap = pc;
	}
	xt->pending_after = 0;
	if (xt->trapped_at) {
		/* delivered at the end of a breakpoint's stop: the frame has
		 * where the engine left the thread */
		uint64_t pc = 0, sp = 0, at = xt->trapped_at;
		_stp_pt_read(xt->t, r.rsp + 8 + 160, &sp, sizeof sp);
		_stp_pt_read(xt->t, r.rsp + 8 + 168, &pc, sizeof pc);
		if (pc == at || pc == _stp_pt_bkpt_slot(_stp_pt_thread_proc(t), at)) {
			/* the instruction is still to run (not from the engine's
			 * copy: from ours, when the handler returns) */
			_stp_pt_write(xt->t, r.rsp + 8 + 168, &at, sizeof at);
			xt->frame_after_trap = at;
		} else {
			displaced_done(xt, pc, sp);
		}
		xt->trapped_at = 0;
	}
	/* the interrupted pc: the frame's uc_mcontext.rip (rt_sigframe:
	 * the restorer's address, then the ucontext) */
	_stp_pt_read(t, r.rsp + 8 + 168, &from, sizeof from);
	struct xl_rec rec = {__rdtsc(), from | (uint64_t)(0x80 | (sig & 0x7f)) << XL_KIND_SHIFT,
			     r.rip, r.rsp};
	xl_ring_put_args(xt, XL_REC_SIGNAL, &r);
	xl_ring_put(xt, &rec);
	if (xt->xp->x->cfg.stop & XL_STOP_CALL) {
		/* its handlers need the thread: held here, at the entry */
		drain_held(xt);
	}
	if (from && from != xt->frame_after_trap && !xl_block_of_cache(xt, from))
		sigret_learn(xt, from);
}

static void unhook(struct xl_thread *xt)
{
	if (!xt->on)
		return;
	_stp_pt_thread_hooks(xt->t, NULL, NULL);
	_stp_pt_signal_step(xt->t, NULL, NULL);
	xt->on = 0;
	xt->mapped = 0;
	xt->xp->x->nthreads_on--;
}

static void fallback(struct xl_thread *xt, uint64_t pc, const char *why)
{
	struct _stp_xl_engine *x = xt->xp->x;

	x->st.fallbacks++;
	xl_debug("thread %d leaves the cache at %#llx: %s", (int)xt->tid, (unsigned long long)pc,
		 why ? why : "?");
	xl_ring_drain(xt);
	unhook(xt);
	if (x->ops.fallback)
		x->ops.fallback(x->core, xt->t, pc, why ? why : "translation failed");
}

/* ---- the API ---- */

/* rdtsc trapped by a hypervisor costs microseconds; one not trapped, tens
 * of nanoseconds. The best of several short trials (a trial the thread
 * was preempted in says nothing). */
int _stp_xl_usable(char *why, size_t len)
{
	int64_t best = INT64_MAX;
	uint64_t first = __rdtsc(), last = first;

	for (int trial = 0; trial < 20 && best > 200 * 1000; trial++) {
		struct timespec a, b;
		clock_gettime(CLOCK_MONOTONIC, &a);
		for (int i = 0; i < 200; i++)
			last = __rdtsc();
		clock_gettime(CLOCK_MONOTONIC, &b);
		int64_t ns = (b.tv_sec - a.tv_sec) * 1000000000 + (b.tv_nsec - a.tv_nsec);
		if (ns < best)
			best = ns;
	}
	if (best > 200 * 1000 || last == first) { /* over 1 us per read */
		snprintf(why, len, "rdtsc is trapped or broken here (%lld ns per read)",
			 (long long)(best / 200));
		return 0;
	}
	/* the shared memory is a memfd made in the target, which a program
	 * started by us (-c) gets from staprun's own sandbox (seccomp) */
	int fd = memfd_create("ustap-selftest", MFD_CLOEXEC);
	if (fd < 0) {
		snprintf(why, len, "memfd_create fails here: %s", strerror(errno));
		return 0;
	}
	close(fd);
	return 1;
}

struct _stp_xl_engine *_stp_xl_new(struct _stp_pt_session *s, const struct _stp_xl_ops *ops,
				   void *core, const struct _stp_xl_config *cfg)
{
	struct _stp_xl_engine *x = calloc(1, sizeof *x);

	if (!x)
		return NULL;
	x->s = s;
	x->ops = *ops;
	x->core = core;
	if (cfg)
		x->cfg = *cfg;
	if (!x->cfg.ring_bytes)
		x->cfg.ring_bytes = 1 << 20;
	if (!x->cfg.cache_bytes)
		x->cfg.cache_bytes = 11 << 20;
	if (!x->cfg.max_threads)
		x->cfg.max_threads = 64;
	if (x->cfg.capture) /* a lap is then not a whole number of events */
		x->cfg.overwrite = 0;
	if (getenv("STAP_XLATE_DEBUG"))
		_stp_xl_debug_on = 1;
	const char *delay = getenv("STAP_XLATE_READ_DELAY_US");
	if (delay)
		x->read_delay_us = (unsigned)strtoul(delay, NULL, 10) % 1000000;
	if (!x->cfg.raw_tsc)
		xl_time_init(x);
	return x;
}

/* The agent's counters of xt, into st. */
static void agent_stats(const struct xl_thread *xt, struct _stp_xl_stats *st)
{
	const struct xl_ctl *c = xt->ctl;

	st->agent += c->n_agent;
	st->dir_hits += c->n_dir_hits;
	st->ring_full += c->n_full;
	st->ring_waits += c->n_waits;
	st->ring_stops += c->n_full_doorbells;
	if (c->tsc_waited)
		st->ring_wait_ns += (uint64_t)((double)c->tsc_waited * xl_ns_per_tick(xt->xp->x));
}

static void thread_free(struct xl_thread *xt)
{
	struct xl_proc *xp = xt->xp;

	if (xt->on)
		xl_ring_drain(xt); /* exec, exit: what it did before */
	if (xt->ctl)
		agent_stats(xt, &xp->x->st); /* its region is reused */
	unhook(xt);
	xl_cache_free(xt);
	for (struct xl_thread **pp = &xp->threads; *pp; pp = &(*pp)->next)
		if (*pp == xt) {
			*pp = xt->next;
			break;
		}
	/* the region and chunks stay mapped (reused, or unmapped at the end) */
	if (xt->rg.mem) {
		struct xl_mapping *v = realloc(xp->free_rg, (xp->nfree_rg + 1) * sizeof *v);
		if (v) {
			xp->free_rg = v;
			xp->free_rg[xp->nfree_rg++] = xt->rg;
		}
	}
	free(xt);
}

static void proc_free(struct _stp_xl_engine *x, struct xl_proc *xp, struct _stp_pt_thread *t)
{
	while (xp->threads)
		thread_free(xp->threads);
	xl_unmap_all(xp, t);
	free(xp->free_rg);
	free(xp->fr);
	xl_mem_free(xp);
	xl_map_free(&xp->nofunc);
	for (struct xl_proc **pp = &x->procs; *pp; pp = &(*pp)->next)
		if (*pp == xp) {
			*pp = xp->next;
			break;
		}
	free(xp);
}

/* At the end of a run, xt's thread stopped and held for the detach:
 * wherever it is in our code, it goes on natively from there. A SIGTRAP
 * kept for it from our int3 (its doorbell, a trap stub, an event trap,
 * whose record is then dropped: the detach's drain does not know them)
 * is dropped; the stub's probed instruction
 * runs natively again (its int3 goes with the detach). */
static void leave_native(struct xl_thread *xt)
{
	struct _stp_pt_thread *t = xt->t;
	struct user_regs_struct r;
	int sig = _stp_pt_resume_signal(t), rc;

	if (_stp_pt_get_regs(t, &r) < 0)
		return;
	if (!in_our_code(xt, r.rip))
		return; /* native already */
	int doorbell = r.rip == xt->rg.addr + _stp_xl_agent.doorbell_after;
	if ((rc = to_native(xt, &r, sig == SIGTRAP, NULL)) <= 0)
		return;
	if (rc == 2)
		r.rip -= 1;
	if (sig == SIGTRAP && (rc >= 2 || doorbell))
		_stp_pt_set_resume_signal(t, 0);
	_stp_pt_set_regs(t, &r);
}

static struct xl_proc *proc_by_pid(struct _stp_xl_engine *x, pid_t pid)
{
	for (struct xl_proc *xp = x->procs; xp; xp = xp->next)
		if (xp->pid == pid)
			return xp;
	return NULL;
}

void _stp_xl_leave_all(struct _stp_xl_engine *x)
{
	struct xl_proc *xp;
	size_t n = 0;
	pid_t *pids;

	if (!x)
		return;
	for (xp = x->procs; xp; xp = xp->next)
		n++;
	if (!n || !(pids = calloc(n, sizeof *pids)))
		return;
	n = 0;
	for (xp = x->procs; xp; xp = xp->next)
		pids[n++] = xp->pid;
	for (size_t i = 0; i < n; i++) {
		if (!(xp = proc_by_pid(x, pids[i])))
			continue;
		/* its threads' exits may come in meanwhile and free xp */
		int rc = _stp_pt_hold_for_detach(xp->p);
		if (!(xp = proc_by_pid(x, pids[i])))
			continue;
		if (rc == -ESRCH) {
			proc_free(x, xp, NULL); /* gone: nothing to clean */
			continue;
		}
		struct _stp_pt_thread *t = rc < 0 ? NULL : _stp_pt_proc_thread(xp->p);
		if (!t)
			continue; /* in a handler: left as before (the safety net) */
		for (struct xl_thread *xt = xp->threads; xt; xt = xt->next)
			leave_native(xt);
		xl_debug("process %d left: its threads native, our mappings unmapped",
			 (int)xp->pid);
		xl_unprotect(xp, t);
		_stp_pt_watch_breakpoints(xp->p, NULL, NULL);
		proc_free(x, xp, t);
	}
	free(pids);
}

void _stp_xl_free(struct _stp_xl_engine *x)
{
	if (!x)
		return;
	for (struct xl_proc *xp = x->procs; xp; xp = xp->next)
		_stp_pt_watch_breakpoints(xp->p, NULL, NULL);
	while (x->procs)
		proc_free(x, x->procs, NULL);
	xl_map_free(&x->fids);
	free(x->ow_copy);
	free(x);
}

int _stp_xl_thread_on(struct _stp_xl_engine *x, struct _stp_pt_thread *t)
{
	struct xl_thread *xt = thread_of(x, t);
	int rc;

	if (xt && xt->on)
		return 0;
	if (x->nthreads_on >= x->cfg.max_threads)
		return -EBUSY;
	if (!xt) {
		struct xl_proc *xp = proc_of(x, _stp_pt_thread_proc(t), 1);
		if (!xp || !(xt = calloc(1, sizeof *xt)))
			return -ENOMEM;
		if (x->cfg.protect && (rc = xl_protect(xp, t)) < 0) {
			free(xt);
			return rc;
		}
		xt->xp = xp;
		xt->t = t;
		xt->tid = _stp_pt_tid(t);
		if ((rc = region_get(xt)) < 0) {
			free(xt);
			return rc;
		}
		xl_reader_init(&xt->rd, read_code, t);
		xt->next = xp->threads;
		xp->threads = xt;
	}
	xt->on = 1;
	xt->mapped = 0;
	xt->no_restore = 0;
	xt->trapped_at = 0;
	xl_rseq_thread_init(xt);
	/* on in the handler of a breakpoint: the engine runs the instruction
	 * there before the thread enters the cache */
	struct user_regs_struct r;
	if (_stp_pt_get_regs(t, &r) == 0 && r.rip == _stp_pt_probe_point(t) &&
	    _stp_pt_bkpt_at(_stp_pt_thread_proc(t), r.rip)) {
		xt->trapped_at = r.rip;
		xt->trap_regs = r;
	}
	x->nthreads_on++;
	x->st.threads++;
	_stp_pt_thread_hooks(t, &hooks, xt);
	_stp_pt_signal_step(t, on_sigstep, xt);
	return 0;
}

int _stp_xl_thread_off(struct _stp_xl_engine *x, struct _stp_pt_thread *t)
{
	struct xl_thread *xt = thread_of(x, t);
	struct user_regs_struct r;

	if (!xt || !xt->on)
		return 0;
	/* the registers are native at every stop; in case not (a call from
	 * outside a stop's handling), make them so */
	if (_stp_pt_get_regs(t, &r) == 0 && xl_to_native(xt, &r, 0, NULL) > 0)
		_stp_pt_set_regs(t, &r);
	xl_ring_drain(xt);
	unhook(xt);
	return 0;
}

int _stp_xl_thread_is_on(struct _stp_xl_engine *x, struct _stp_pt_thread *t)
{
	struct xl_thread *xt = thread_of(x, t);

	return xt && xt->on;
}

void _stp_xl_thread_start(struct _stp_xl_engine *x, struct _stp_pt_thread *t)
{
	struct user_regs_struct r;

	if (_stp_pt_get_regs(t, &r) < 0)
		return;
	for (struct xl_proc *xp = x->procs; xp; xp = xp->next)
		for (struct xl_thread *xt = xp->threads; xt; xt = xt->next)
			if (xl_block_of_cache(xt, r.rip) && xl_to_native(xt, &r, 0, NULL) > 0) {
				_stp_pt_set_regs(t, &r);
				return;
			}
}

int _stp_xl_protect(struct _stp_xl_engine *x, struct _stp_pt_thread *t)
{
	struct xl_proc *xp = proc_of(x, _stp_pt_thread_proc(t), 1);

	return xp ? xl_protect(xp, t) : -ENOMEM;
}

int _stp_xl_release(struct _stp_xl_engine *x, struct _stp_pt_thread *t)
{
	struct xl_proc *xp = proc_of(x, _stp_pt_thread_proc(t), 0);

	if (!xp)
		return 0;
	for (struct xl_thread *xt = xp->threads; xt; xt = xt->next)
		if (xt->on)
			return -EBUSY;
	int rc = xl_unprotect(xp, t);
	_stp_pt_watch_breakpoints(xp->p, NULL, NULL);
	proc_free(x, xp, t);
	return rc;
}

void _stp_xl_thread_gone(struct _stp_xl_engine *x, struct _stp_pt_thread *t)
{
	struct xl_thread *xt = thread_of(x, t);

	if (!xt)
		return;
	if (xt->on)
		xl_ring_drain(xt);
	thread_free(xt);
}

void _stp_xl_proc_gone(struct _stp_xl_engine *x, struct _stp_pt_proc *p)
{
	struct xl_proc *xp = proc_of(x, p, 0);

	if (xp)
		proc_free(x, xp, NULL);
}

void _stp_xl_drain(struct _stp_xl_engine *x, struct _stp_pt_thread *t)
{
	struct xl_thread *xt = thread_of(x, t);

	if (xt)
		xl_ring_drain(xt);
}

void _stp_xl_get_stats(const struct _stp_xl_engine *x, struct _stp_xl_stats *st)
{
	*st = x->st;
	for (const struct xl_proc *xp = x->procs; xp; xp = xp->next)
		for (const struct xl_thread *xt = xp->threads; xt; xt = xt->next)
			agent_stats(xt, st);
}
