/* The call graph's event API (mech.h): the shadow stack of a traced
 * thread, built from what its mechanism saw (calls, returns, jumps,
 * signal handlers), and the call and return records that follow. A
 * shadow stack of frames (stack pointer at the call, function) pairs
 * returns with calls and closes frames skipped by longjmp or exceptions;
 * a signal handler entered by the kernel opens a frame like a call from
 * the interrupted function, closed by the handler's return; a call to a
 * PLT stub becomes a call to the function the stub jumps to. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "dcg_internal.h"
#include "lang/debug.h"
#include "sym/symbols.h"
#include "arch/x86_64/insn.h"

#include <fnmatch.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

static struct frame *push(struct dthread *d, uint64_t sp, uint64_t func, int known)
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
	*f = (struct frame){.sp = sp, .func = func, .ns = d->now, .known = (uint8_t)known};
	return f;
}

/* Close the top frame with a return record (unwound: it was left without
 * returning, by longjmp or an exception). */
static void pop(struct dthread *d, uint64_t from, uint64_t to, int unwound)
{
	struct frame *f = &d->f[--d->nf];
	if (f->stub && d->hold != NO_HOLD && !f->hide) /* never resolved: show what ran */
		dcg_emit_held(d, (uint32_t)d->nf, f->site, f->func, f->ns);
	else if (f->stub && d->hold != NO_HOLD)
		d->nr = d->hold, d->hold = NO_HOLD;
	else if (!f->stub && !f->hide) {
		d->unwinding = unwound; /* for the script's retval */
		if (dcg_emit(d, DCG_RET, (uint32_t)d->nf, from, to, f->func))
			d->r[d->nr - 1].unwound = (uint8_t)unwound;
		d->unwinding = 0;
	}
}

/* Frames whose return-address slot is at or below `limit` are gone. Those
 * that returned have the slot a return used (ret_slot; 0: none did):
 * after a ret seen, any of them; where only the return address was
 * reached (innermost), the innermost frame and the frames it replaced by
 * tail calls only (a longjmp back to where setjmp returned leaves the
 * frame called from there too). The others were left without returning. */
static void pop_dead(struct dthread *d, uint64_t limit, uint64_t from, uint64_t to,
		     uint64_t ret_slot, int innermost)
{
	int first = 1, chain = 0;

	while (d->nf && d->f[d->nf - 1].known && d->f[d->nf - 1].sp <= limit) {
		uint64_t sp = d->f[d->nf - 1].sp;
		int sig = d->f[d->nf - 1].sig, tail = d->f[d->nf - 1].tail;
		int returned = ret_slot && sp == ret_slot && (!innermost || first || chain);
		pop(d, from, to, !returned);
		chain = returned && tail;
		first = 0;
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
static void enter(struct dthread *d, uint64_t from, uint64_t to, uint64_t sp, int known, int tail,
		  int sig)
{
	struct frame *f = push(d, sp, to, known);
	if (!f)
		return;
	f->tail = (uint8_t)tail;
	f->sig = (uint8_t)(sig ? sig : 0);
	if (dcg_is_stub(&d->rd, to)) {
		f->stub = 1;
		f->site = from;
		/* hidden already if its caller is muted */
		f->hide = f->mute = d->nf > 1 && d->f[d->nf - 2].mute;
		return;
	}
	classify(d, to);
	if (!f->hide && dcg_emit(d, DCG_CALL, (uint32_t)(d->nf - 1), from, to, to))
		d->r[d->nr - 1].sig = (uint8_t)sig;
}

static void on_call(struct dthread *d, uint64_t from, uint64_t to, uint64_t rsp)
{
	pop_dead(d, rsp, from, to, 0, 0);
	enter(d, from, to, rsp, 1, 0, 0);
}

static void on_ret(struct dthread *d, uint64_t from, uint64_t to, uint64_t rsp)
{
	size_t before = d->nf;

	/* after ret, rsp is above the slot of every frame that returned */
	pop_dead(d, rsp - 1, from, to, rsp - 8, 0);
	/* a frame whose slot is not known (a root entered mid-function):
	 * it returns, and so do the frames it replaced by tail calls */
	while (d->nf == before && d->nf && !d->f[d->nf - 1].known) {
		int tail = d->f[d->nf - 1].tail;
		pop(d, from, to, 0);
		if (!tail)
			break;
		before = d->nf;
	}
	if (!d->nf) /* returned out of the root: the caller is the new root */
		push(d, 0, dcg_func_of(d->pid, to), 0);
}

static void on_jump(struct dthread *d, uint64_t from, uint64_t to, uint64_t rsp, int indirect)
{
	size_t nf0 = d->nf;
	struct frame *top;

	if (indirect) /* longjmp: frames above the new stack pointer are gone */
		pop_dead(d, rsp - 1, from, to, 0, 0);
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
				dcg_emit_held(d, (uint32_t)(d->nf - 1), top->site, to, top->ns);
			} else {
				dcg_emit(d, DCG_CALL, (uint32_t)(d->nf - 1), top->site, to, to);
			}
		}
		return;
	}
	/* a jump that left frames (longjmp, an exception's landing pad) is
	 * a return, whatever its target */
	if (!top || d->nf < nf0)
		return;
	if (dcg_enters_func(&d->rd, from, to))
		enter(d, from, to, top->sp, top->known, 1, 0);
}

/* After lost events: the frames of the root's callees as they are (g,
 * outermost first). The frames the shadow stack has in common with them
 * from the root on (the same slot and function, tail calls too) stay;
 * the others have returned meanwhile; those it lacks are entered now. */
void dcg_place_stack(struct dthread *d, const struct dcg_frame_at *g, size_t n, int64_t ns)
{
	size_t i = 1, j = 0;

	if (!d->on || !d->nf)
		return;
	dcg_set_time(d, ns);
	while (i < d->nf && j < n && d->f[i].known && d->f[i].sp == g[j].sp &&
	       (d->f[i].func == g[j].func || dcg_same_func(d->pid, d->f[i].func, g[j].func)))
		i++, j++;
	while (d->nf > i)
		pop(d, 0, 0, 0);
	for (; j < n; j++)
		enter(d, 0, g[j].func, g[j].sp, 1, g[j].tail, g[j].sig);
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

/* Tracing on: the root is the function the thread is in; at its first
 * instruction the return-address slot is at sp. */
static void tracing_on(struct dthread *d, uint64_t pc, uint64_t sp, int64_t ns)
{
	d->on = 1;
	d->prev_pc = pc;
	d->nf = 0;
	d->gaps = 0;
	d->q_to = 0;
	int at_entry = dcg_func_start(d->pid, pc);
	uint64_t f = dcg_func_of(d->pid, pc);
	d->t0 = ns;
	d->now = 0;
	push(d, sp, f, at_entry);
	d->root_pending = dcg_probes_wanted();
	if (!d->root_pending)
		dcg_emit(d, DCG_CALL, 0, 0, pc, f);
	if (d->nr)
		d->r[d->nr - 1].ns = 0; /* the root starts the clock */
}

static void set_time(struct dthread *d, int64_t ns)
{
	dcg_set_time(d, ns);
}

static void event(struct dthread *d, const struct dcg_event *e);

void dcg_event(struct dthread *d, const struct dcg_event *e)
{
	d->ev = e; /* the registers of the script's probes */
	event(d, e);
	d->ev = NULL;
}

static void event(struct dthread *d, const struct dcg_event *e)
{
	switch (e->kind) {
	case DCG_EV_ON:
		tracing_on(d, e->to, e->sp, e->ns);
		return;
	case DCG_EV_OFF:
	case DCG_EV_EXIT:
		/* open frames get no return records (what ran after is not
		 * known); the formats that need them closed close them here */
		d->on = 0;
		d->hold = NO_HOLD;
		dcg_records_stop(d, e->ns);
		d->nf = 0;
		return;
	default:
		break;
	}
	if (!d->on)
		return;
	set_time(d, e->ns);
	switch (e->kind) {
	case DCG_EV_CALL:
		on_call(d, e->from, e->to, e->sp);
		break;
	case DCG_EV_RETURN:
		if (e->from)
			on_ret(d, e->from, e->to, e->sp);
		else /* only where it went: the frames it left */
			pop_dead(d, e->sp - 1, 0, e->to, e->sp - 8, 1);
		break;
	case DCG_EV_JUMP:
		on_jump(d, e->from, e->to, e->sp, e->indirect);
		break;
	case DCG_EV_SIGNAL:
		enter(d, e->from, e->to, e->sp, 1, 0, e->sig > 0 ? e->sig : 1);
		break;
	case DCG_EV_SIGRETURN:
		/* the handler's frames have returned already, into the
		 * restorer; any left (it did not return there) are gone */
		pop_dead(d, e->sp - 1, e->from, e->to, 0, 0);
		break;
	case DCG_EV_GAP:
		d->gaps++;
		_stp_dbg(STP_DBG_DCG, 1,
			 "thread %d: events lost at 0x%" PRIx64 " (%" PRIu64 " so far)",
			 (int)d->tid, e->from, d->gaps);
		break;
	default:
		break;
	}
}

/* The root's call event for the script's probes, at the first stop after
 * tracing was switched on. Returns 1 if a probe switched tracing off. */
int dcg_stopped(struct dthread *d, int64_t ns)
{
	if (d->root_pending && d->nf) {
		d->root_pending = 0;
		set_time(d, ns);
		dcg_emit(d, DCG_CALL, 0, 0, d->f[0].func, d->f[0].func);
		return !d->on;
	}
	return 0;
}

/* The instruction x at pc has run, leaving the thread at now with rsp:
 * a call, return or jump of the call graph. Returns 1 if x branched. */
int dcg_ran(struct dthread *d, uint64_t pc, const struct dec *x, uint64_t now, uint64_t rsp,
	    int64_t ns)
{
	struct dcg_event e = {.from = pc, .to = now, .sp = rsp, .ns = ns};

	switch (x->kind) {
	case STP_X86_CALL:
	case STP_X86_CALL_IND:
		e.kind = DCG_EV_CALL;
		break;
	case STP_X86_RET:
		e.kind = DCG_EV_RETURN;
		break;
	case STP_X86_JMP:
	case STP_X86_JMP_IND:
		e.kind = DCG_EV_JUMP;
		e.indirect = x->kind == STP_X86_JMP_IND;
		break;
	case STP_X86_JCC:
		if (now == x->target && now != pc + x->len) {
			e.kind = DCG_EV_JUMP;
			break;
		}
		return 0;
	default:
		return 0;
	}
	dcg_event(d, &e);
	return 1;
}

uint64_t dcg_quick_gen;

int dcg_event_quick_ok(void)
{
	/* the symbol cache does not change inside a batch (the probe hooks
	 * change it, between batches) */
	dcg_quick_gen = _stp_sym_generation();
	return !dcg_probes_wanted() && !dcg_nleaf && !dcg_nexcl && dcg_max_depth < 0;
}
