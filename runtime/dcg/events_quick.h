/* The shortcut of the event API (dcg_event_quick, dcg_internal.h), inline
 * so that a drain's loop over a ring batch runs it without a call. Only
 * where dcg_event's path is plain (see events.c: on_call, enter,
 * classify, on_ret, pop_dead and pop for the cases left to it): the same
 * frames and records, with fewer tests and calls. Nothing changes before
 * it knows it takes the event (dcg_set_time twice is once) but the room
 * for a record, made first as dcg_emit_rec would (a flush, a growth). */
#ifndef STP_DCG_EVENTS_QUICK_H
#define STP_DCG_EVENTS_QUICK_H

#include "sym/symbols.h"

/* Times never go back in a thread (clocks converted from another one
 * may): the thread's time since t0 after one at ns, now before. */
static inline uint64_t dcg_later(uint64_t now, int64_t t0, int64_t ns)
{
	int64_t t = ns - t0;

	return t > 0 && (uint64_t)t > now ? (uint64_t)t : now;
}

static inline void dcg_set_time(struct dthread *d, int64_t ns)
{
	d->now = dcg_later(d->now, d->t0, ns);
}

/* The shortcut's view of a thread over a run of events (dcg_quick_begin
 * to dcg_quick_end, with no other use of the thread between): what it
 * reads and counts, in a local the compiler keeps in registers, not
 * read again after each frame or record it writes. */
struct dcg_quick {
	struct dthread *d;
	struct frame *f;
	size_t nf, capf;
	struct dcg_rec *r;
	size_t nr, lim; /* lim: dcg_rec_lim */
	uint64_t now;
	int64_t t0;
	uint64_t q_to;	      /* d->q_to of this generation, else NO_CALLEE */
	uint64_t calls, rets; /* for the -v counts */
};

#define NO_CALLEE UINT64_MAX

/* Records in place from d->nr on before dcg_rec_room must run. */
static inline size_t dcg_rec_lim(const struct dthread *d)
{
	/* past 4096: a flush was due but could not be (a unit test's thread) */
	return d->nr >= 4096 ? d->nr : d->capr < 4096 ? d->capr : 4096;
}

/* 0: the shortcut cannot take d's events now (dcg_event must). */
static inline int dcg_quick_begin(struct dthread *d, struct dcg_quick *q)
{
	if (!d->on || d->hold != NO_HOLD || !d->nf)
		return 0;
	*q = (struct dcg_quick){.d = d,
				.f = d->f,
				.nf = d->nf,
				.capf = d->capf,
				.r = d->r,
				.nr = d->nr,
				.lim = dcg_rec_lim(d),
				.now = d->now,
				.t0 = d->t0,
				.q_to = d->q_gen == dcg_quick_gen ? d->q_to : NO_CALLEE};
	return 1;
}

static inline void dcg_quick_end(struct dcg_quick *q)
{
	struct dthread *d = q->d;

	d->nf = q->nf;
	d->nr = q->nr;
	d->now = q->now;
	d->q_to = q->q_to;
	d->q_gen = dcg_quick_gen;
	dcg_n_calls += q->calls;
	dcg_n_rets += q->rets;
}

/* dcg_emit_rec's flush or growth before a record, as it would (the
 * frames are not read there): 0, or -1 (out of memory). */
static inline int dcg_quick_room(struct dcg_quick *q)
{
	struct dthread *d = q->d;

	d->nr = q->nr;
	int rc = dcg_rec_room(d);
	q->r = d->r;
	q->nr = d->nr;
	q->lim = d->nr < 4096 ? dcg_rec_lim(d) : d->nr + 1;
	return rc;
}

/* dcg_emit_rec's record (no hold, the callee named already), room for it
 * known. */
static inline void dcg_quick_rec(struct dcg_quick *q, int kind, uint32_t depth, uint64_t from,
				 uint64_t to, uint64_t name)
{
	struct dcg_rec *r = &q->r[q->nr++];
	r->kind = (uint8_t)kind;
	r->sig = r->unwound = 0;
	r->depth = depth;
	r->ns = q->now;
	r->from = from;
	r->to = to;
	r->name = name;
}

/* A call (dcg_quick_event). */
static inline int dcg_quick_call(struct dcg_quick *q, uint64_t from, uint64_t to, uint64_t sp,
				 int64_t ns)
{
	const struct frame *top = &q->f[q->nf - 1];

	if (q->nr >= q->lim && dcg_quick_room(q) < 0)
		return 0;
	/* no frame left (pop_dead), the caller not muted (classify), room
	 * for the frame (push), no PLT stub (enter: dcg_is_stub is 0
	 * outside a PLT), the callee named as dcg_emit_rec would (once in a
	 * row of calls of one function) */
	if ((top->known && top->sp <= sp) || top->mute || q->nf == q->capf)
		return 0;
	if (to != q->q_to) {
		struct dthread *d = q->d;
		const struct _stp_syminfo *si = dcg_sym(d->pid, to);
		if ((si && si->plt) || d->rd.pid != d->pid)
			return 0;
		q->q_to = to;
	}
	q->now = dcg_later(q->now, q->t0, ns);
	q->f[q->nf++] = (struct frame){.sp = sp, .func = to, .ns = q->now, .known = 1};
	q->calls++;
	dcg_quick_rec(q, DCG_CALL, (uint32_t)(q->nf - 1), from, to, to);
	return 1;
}

/* A return (dcg_quick_event). */
static inline int dcg_quick_ret(struct dcg_quick *q, uint64_t from, uint64_t to, uint64_t sp,
				int64_t ns)
{
	const struct frame *top = &q->f[q->nf - 1];

	if (q->nr >= q->lim && dcg_quick_room(q) < 0)
		return 0;
	/* of the innermost frame only (its slot just below sp), shown, to a
	 * caller that stays (pop_dead stops there, on_ret pushes no new
	 * root) */
	if (!from || sp < 16 || q->nf < 2 || !top->known || top->sp != sp - 8 || top->stub ||
	    top->hide)
		return 0;
	const struct frame *caller = top - 1;
	if (caller->known && caller->sp <= sp - 1)
		return 0;
	q->now = dcg_later(q->now, q->t0, ns);
	q->nf--;
	q->rets++;
	dcg_quick_rec(q, DCG_RET, (uint32_t)q->nf, from, to, top->func);
	return 1;
}

/* One event: 1 if taken as dcg_event would, 0 (nothing changed but
 * the room for a record) if dcg_event must take it. */
static inline int dcg_quick_event(struct dcg_quick *q, int kind, uint64_t from, uint64_t to,
				  uint64_t sp, int64_t ns)
{
	if (kind == DCG_EV_CALL)
		return dcg_quick_call(q, from, to, sp, ns);
	return kind == DCG_EV_RETURN && dcg_quick_ret(q, from, to, sp, ns);
}

/* One event alone (dcg_internal.h). */
static inline int dcg_event_quick(struct dthread *d, int kind, uint64_t from, uint64_t to,
				  uint64_t sp, int64_t ns)
{
	struct dcg_quick q;

	if (!dcg_quick_begin(d, &q))
		return 0;
	int taken = dcg_quick_event(&q, kind, from, to, sp, ns);
	if (taken)
		dcg_quick_end(&q);
	return taken;
}

#endif
