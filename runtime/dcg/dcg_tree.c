/* The dynamic call graph's tree: records (printed as thread_indent lines
 * or handed to the dynamic_call_graph.* probes) and the shadow stack that
 * turns calls, returns and jumps into them. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "dcg.h"
#include "dcg_internal.h"
#include "lang/stp_internal.h"
#include "probes/process.h"
#include "sym/symbols.h"
#include "arch/x86_64/insn.h"

#include <fnmatch.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- dynamic_call_graph.call / .return probes ---- */

static int want_call = -1, want_ret;
static struct {
	int active, kind;
	pid_t pid;
	uint64_t from, to, caller, callee;
	int64_t depth, tail, ns, dur;
} ev;

void dcg_tree_reset(void)
{
	want_call = -1;
}

int dcg_probes_wanted(void)
{
	if (want_call < 0) {
		const struct _stp_module *m = _stp_proc_module();
		want_call = want_ret = 0;
		for (int i = 0; m && i < m->nprobes; i++) {
			want_call |= m->probes[i].kind == STP_PROBE_DCG_CALL;
			want_ret |= m->probes[i].kind == STP_PROBE_DCG_RETURN;
		}
	}
	return want_call || want_ret;
}

void dcg_fire_event(struct dthread *d, int kind, uint32_t depth, uint64_t from, uint64_t to,
		    uint64_t name)
{
	const struct _stp_module *m = _stp_proc_module();
	enum _stp_probe_kind pk = kind == DCG_CALL ? STP_PROBE_DCG_CALL : STP_PROBE_DCG_RETURN;
	const struct frame *f = depth < d->capf ? &d->f[depth] : NULL;
	struct _stp_tctx tc;

	if (!m || !d->t || ev.active || (kind == DCG_CALL ? !want_call : !want_ret))
		return;
	memset(&ev, 0, sizeof ev);
	ev.kind = kind;
	ev.pid = d->pid;
	ev.from = from;
	ev.to = to;
	ev.depth = depth;
	ev.ns = dcg_now_ns() - d->t0;
	ev.callee = name;
	if (kind == DCG_CALL) {
		ev.caller = from ? dcg_func_of(d->pid, from) : 0;
		ev.tail = f ? f->tail : 0;
	} else {
		ev.caller = dcg_func_of(d->pid, to);
		ev.dur = f ? ev.ns - (int64_t)f->ns : 0;
	}
	memset(&tc, 0, sizeof tc);
	tc.t = d->t;
	tc.pid = d->pid;
	tc.tid = d->tid;
	tc.uaddr = kind == DCG_CALL ? to : from;
	tc.comm = d->comm;
	ev.active = 1;
	for (int i = 0; i < m->nprobes; i++)
		if (m->probes[i].kind == pk && _stp_session_state == STP_SESSION_RUNNING &&
		    !_stp_exit_requested)
			_stp_run_probe(&m->probes[i], &tc);
	ev.active = 0;
}

int64_t _stp_dcg_event(struct _stp_context *c, int field)
{
	(void)c;
	if (!ev.active)
		return 0;
	switch (field) {
	case 0:
		return (int64_t)ev.from;
	case 1:
		return (int64_t)ev.to;
	case 2:
		return ev.depth;
	case 3:
		return ev.tail;
	case 4:
		return ev.ns;
	case 5:
		return ev.dur;
	default:
		return 0;
	}
}

void _stp_dcg_event_name(struct _stp_context *c, int which, char *dst, size_t len)
{
	uint64_t a = which ? ev.callee : ev.caller;
	struct _stp_symtab *st;

	(void)c;
	if (!len)
		return;
	dst[0] = '\0';
	if (!ev.active || !a)
		return;
	if ((st = dcg_symtab_of(ev.pid)))
		_stp_sym_cgname(st, a, dst, len);
	else
		snprintf(dst, len, "0x%" PRIx64, a);
}

/* ---- the shadow stack ---- */

struct frame *dcg_push(struct dthread *d, uint64_t sp, uint64_t func, int known)
{
	if (d->nf == d->capf) {
		size_t cap = d->capf ? 2 * d->capf : 64;
		struct frame *v = realloc(d->f, cap * sizeof *v);
		if (!v)
			return NULL;
		d->f = v;
		d->capf = cap;
	}
	struct frame *f = &d->f[d->nf++];
	memset(f, 0, sizeof *f);
	f->sp = sp;
	f->func = func;
	f->known = (uint8_t)known;
	f->ns = (uint64_t)(dcg_now_ns() - d->t0);
	return f;
}

/* Close the top frame with a return record. */
static void pop(struct dthread *d, uint64_t from, uint64_t to)
{
	struct frame *f = &d->f[--d->nf];
	if (f->stub && d->hold != NO_HOLD && !f->hide) /* never resolved: show what ran */
		dcg_emit_held(d, (uint32_t)d->nf, f->func, f->func, f->ns);
	else if (f->stub && d->hold != NO_HOLD)
		d->nr = d->hold, d->hold = NO_HOLD;
	else if (!f->stub && !f->hide)
		dcg_emit(d, DCG_RET, (uint32_t)d->nf, from, to, f->func);
}

/* Frames whose return-address slot is at or below `limit` are gone. */
void dcg_pop_dead(struct dthread *d, uint64_t limit, uint64_t from, uint64_t to)
{
	while (d->nf && d->f[d->nf - 1].known && d->f[d->nf - 1].sp <= limit) {
		uint64_t sp = d->f[d->nf - 1].sp;
		int sig = d->f[d->nf - 1].sig;
		pop(d, from, to);
		/* below a signal frame on another stack (sigaltstack above
		 * the thread's stack): those frames are alive */
		if (sig && d->nf && d->f[d->nf - 1].sp < sp)
			break;
	}
}

static int matches(char **pat, size_t n, const struct _stp_syminfo *si)
{
	for (size_t i = 0; si && i < n; i++)
		if ((si->name && !fnmatch(pat[i], si->name, 0)) ||
		    (si->module && !fnmatch(pat[i], si->module, 0)))
			return 1;
	return 0;
}

/* Whether the top frame (callee at `to`) is shown and descended into. */
static void classify(struct dthread *d, uint64_t to)
{
	struct frame *f = &d->f[d->nf - 1];
	const struct frame *parent = d->nf > 1 ? &d->f[d->nf - 2] : NULL;

	f->hide = f->mute = 0;
	/* a signal handler is no callee of the function it interrupted */
	if (parent && parent->mute && !f->sig) {
		f->hide = f->mute = 1;
		return;
	}
	if (dcg_max_depth >= 0 && (int64_t)(d->nf - 1) > dcg_max_depth) {
		f->hide = f->mute = 1;
		return;
	}
	if (!dcg_nleaf && !dcg_nexcl)
		return;
	const struct _stp_syminfo *si = dcg_sym(d->pid, to);
	if (matches(dcg_exclpat, dcg_nexcl, si))
		f->hide = f->mute = 1;
	else if (matches(dcg_leafpat, dcg_nleaf, si))
		f->mute = 1;
}

/* A new callee at `to` (a call, or a tail call with the caller's slot). */
void dcg_enter(struct dthread *d, struct _stp_pt_thread *t, uint64_t from, uint64_t to, uint64_t sp,
	       int known, int tail, int sig)
{
	struct frame *f = dcg_push(d, sp, to, known);
	if (!f)
		return;
	f->tail = (uint8_t)tail;
	f->sig = (uint8_t)(sig ? sig : 0);
	if (dcg_is_stub(t, to)) {
		f->stub = 1;
		/* hidden already if its caller is muted */
		f->hide = f->mute = d->nf > 1 && d->f[d->nf - 2].mute;
		return;
	}
	classify(d, to);
	if (!f->hide && dcg_emit(d, DCG_CALL, (uint32_t)(d->nf - 1), from, to, to))
		d->r[d->nr - 1].sig = (uint8_t)sig;
}

static void on_call(struct dthread *d, struct _stp_pt_thread *t, uint64_t from, uint64_t to,
		    uint64_t rsp)
{
	dcg_pop_dead(d, rsp, from, to);
	dcg_enter(d, t, from, to, rsp, 1, 0, 0);
}

static void on_ret(struct dthread *d, uint64_t from, uint64_t to, uint64_t rsp)
{
	size_t before = d->nf;

	/* after ret, rsp is above the slot of every frame that returned */
	dcg_pop_dead(d, rsp - 1, from, to);
	/* a frame whose slot is not known (a root entered mid-function):
	 * it returns, and so do the frames it replaced by tail calls */
	while (d->nf == before && d->nf && !d->f[d->nf - 1].known) {
		int tail = d->f[d->nf - 1].tail;
		pop(d, from, to);
		if (!tail)
			break;
		before = d->nf;
	}
	if (!d->nf) /* returned out of the root: the caller is the new root */
		dcg_push(d, 0, dcg_func_of(d->pid, to), 0);
}

static void on_jump(struct dthread *d, struct _stp_pt_thread *t, uint64_t from, uint64_t to,
		    uint64_t rsp, int indirect)
{
	size_t nf0 = d->nf;
	struct frame *top;

	if (indirect) /* longjmp: frames above the new stack pointer are gone */
		dcg_pop_dead(d, rsp - 1, from, to);
	top = d->nf ? &d->f[d->nf - 1] : NULL;
	if (top && top->stub) {
		/* leaving the PLT (a stub, or the lazy-binding code there), or
		 * the lazy resolver, for a function, with or without a symbol */
		if (!dcg_in_plt(d->pid, to) &&
		    (dcg_in_plt(d->pid, from) || !dcg_same_func(d->pid, from, to))) {
			const struct _stp_syminfo *si = dcg_sym(d->pid, to);
			if (d->hold == NO_HOLD && si && si->name &&
			    !strncmp(si->name, "_dl_runtime_", 12)) {
				/* lazy binding: its calls go under the call */
				d->hold = d->nr;
				return;
			}
			top->stub = 0;
			top->func = to;
			classify(d, to);
			if (top->mute && !top->hide && d->hold != NO_HOLD) {
				/* a leaf: what the resolver did is inside it */
				d->nr = d->hold;
				d->hold = NO_HOLD;
			}
			if (top->hide) {
				if (d->hold != NO_HOLD) /* what the resolver did: hidden too */
					d->nr = d->hold;
				d->hold = NO_HOLD;
			} else if (d->hold != NO_HOLD) {
				dcg_emit_held(d, (uint32_t)(d->nf - 1), from, to, top->ns);
			} else {
				dcg_emit(d, DCG_CALL, (uint32_t)(d->nf - 1), from, to, to);
			}
		}
		return;
	}
	/* a jump that left frames (longjmp, an exception's landing pad) is
	 * a return, whatever its target */
	if (!top || d->nf < nf0)
		return;
	if (_stp_dcg_enters_func(t, from, to))
		dcg_enter(d, t, from, to, top->sp, top->known, 1, 0);
}

/* A signal handler's entry: the kernel pushed the return address of the
 * restorer (mov $15,%rax; syscall: rt_sigreturn) at rsp. */
int dcg_restorer_at(struct _stp_pt_thread *t, uint64_t a)
{
	const struct dec *d = dcg_decode_at(t, a), *e;

	return d && d->mov_rt && (e = dcg_decode_at(t, a + 7)) && e->syscall;
}

int dcg_sig_entry(struct _stp_pt_thread *t, uint64_t rsp)
{
	uint64_t ra;

	return _stp_pt_read_code(t, rsp, &ra, sizeof ra) == 0 && dcg_restorer_at(t, ra);
}

/* rsp is the slot of the innermost handler's frame: back in the handler
 * from a callee, or the handler's tail call (not a new signal). */
int dcg_in_handler_frame(struct dthread *d, uint64_t rsp)
{
	for (size_t i = d->nf; i-- > 0;)
		if (d->f[i].sig)
			return d->f[i].sp == rsp;
	return 0;
}

/* The root's call event for the script's probes, at the first trap after
 * tracing was switched on. Returns 1 if a probe switched tracing off. */
int dcg_root_event(struct dthread *d)
{
	if (d->root_pending && d->nf) {
		d->root_pending = 0;
		dcg_emit(d, DCG_CALL, 0, 0, d->f[0].func, d->f[0].func);
		return !d->on;
	}
	return 0;
}

/* The instruction x at pc has run, leaving the thread at now with rsp:
 * a call, return or jump of the call graph. Returns 1 if x branched. */
int dcg_transfer(struct dthread *d, struct _stp_pt_thread *t, uint64_t pc, const struct dec *x,
		 uint64_t now, uint64_t rsp)
{
	switch (x->kind) {
	case STP_X86_CALL:
	case STP_X86_CALL_IND:
		on_call(d, t, pc, now, rsp);
		return 1;
	case STP_X86_RET:
		on_ret(d, pc, now, rsp);
		return 1;
	case STP_X86_JMP:
	case STP_X86_JMP_IND:
		on_jump(d, t, pc, now, rsp, x->kind == STP_X86_JMP_IND);
		return 1;
	case STP_X86_JCC:
		if (now == x->target && now != pc + x->len) {
			on_jump(d, t, pc, now, rsp, 0);
			return 1;
		}
		return 0;
	default:
		return 0;
	}
}
