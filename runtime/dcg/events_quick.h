/* The shortcut of the event API (dcg_event_quick, dcg_internal.h), inline
 * so that a drain's loop over a ring batch runs it without a call. Only
 * where dcg_event's path is plain (see events.c: on_call, enter,
 * classify, on_ret, pop_dead and pop for the cases left to it): the same
 * frames and records, with fewer tests and calls. Nothing changes before
 * it knows it takes the event (dcg_set_time twice is once). */
#ifndef STP_DCG_EVENTS_QUICK_H
#define STP_DCG_EVENTS_QUICK_H

#include "sym/symbols.h"

/* Times never go back in a thread (clocks converted from another one may). */
static inline void dcg_set_time(struct dthread *d, int64_t ns)
{
	int64_t t = ns - d->t0;

	if (t > 0 && (uint64_t)t > d->now)
		d->now = (uint64_t)t;
}

/* dcg_emit_rec's record (no hold, the callee named already): in place
 * while there is room and no flush is due. */
static inline void dcg_quick_rec(struct dthread *d, int kind, uint32_t depth, uint64_t from,
				 uint64_t to, uint64_t name)
{
	if (d->nr >= 4096 || d->nr == d->capr) {
		(void)dcg_emit_rec(d, kind, depth, from, to, name);
		return;
	}
	struct rec *r = &d->r[d->nr++];
	r->kind = (uint8_t)kind;
	r->sig = r->unwound = 0;
	r->depth = depth;
	r->ns = d->now;
	r->from = from;
	r->to = to;
	r->name = name;
}

static inline int dcg_event_quick(struct dthread *d, int kind, uint64_t from, uint64_t to,
				  uint64_t sp, int64_t ns)
{
	if (!d->on || d->hold != NO_HOLD || !d->nf)
		return 0;
	struct frame *top = &d->f[d->nf - 1];
	if (kind == DCG_EV_CALL) {
		/* no frame left (pop_dead), the caller not muted (classify),
		 * room for the frame (push), no PLT stub (enter: dcg_is_stub
		 * is 0 outside a PLT), the callee named as dcg_emit_rec would
		 * (once in a row of calls of one function) */
		if ((top->known && top->sp <= sp) || top->mute || d->nf == d->capf)
			return 0;
		if (to != d->q_to || d->q_gen != dcg_quick_gen) {
			const struct _stp_syminfo *si = dcg_sym(d->pid, to);
			if ((si && si->plt) || d->rd.pid != d->pid)
				return 0;
			d->q_to = to;
			d->q_gen = dcg_quick_gen;
		}
		dcg_set_time(d, ns);
		d->f[d->nf++] = (struct frame){.sp = sp, .func = to, .ns = d->now, .known = 1};
		dcg_n_calls++;
		dcg_quick_rec(d, DCG_CALL, (uint32_t)(d->nf - 1), from, to, to);
		return 1;
	}
	/* a return of the innermost frame only (its slot just below sp),
	 * shown, to a caller that stays (pop_dead stops there, on_ret
	 * pushes no new root) */
	if (kind != DCG_EV_RETURN || !from || sp < 16 || d->nf < 2 || !top->known ||
	    top->sp != sp - 8 || top->stub || top->hide)
		return 0;
	const struct frame *caller = top - 1;
	if (caller->known && caller->sp <= sp - 1)
		return 0;
	dcg_set_time(d, ns);
	d->nf--;
	dcg_n_rets++;
	dcg_quick_rec(d, DCG_RET, (uint32_t)d->nf, from, to, top->func);
	return 1;
}

#endif
