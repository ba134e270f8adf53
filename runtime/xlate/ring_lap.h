/* Room in a thread's ring (layout.h: wp, left, wrap_seq, read), for both
 * writers: the agent at a full ring while the thread runs, and staprun
 * with the thread stopped (a record it writes). Freestanding (the agent
 * includes it). The thread may stop and leave the agent between any two
 * stores here and come back later, or staprun may go on from there: each
 * prefix of the stores is a state that ring.c reads right and that this
 * finishes. A lap begins with wrap_seq odd, wp back at the start, then
 * wrap_seq even; no record is written while wrap_seq is odd. */
#ifndef STP_XL_RING_LAP_H
#define STP_XL_RING_LAP_H

#include "layout.h"

/* Sets ring_left to one more than the slots the thread may write now,
 * at least ring_need (its largest reservation: records of registers
 * before an event's, all or none), up to the end and outside overwrite
 * mode none that staprun has not read, and says 1; or 0 when there are
 * not that many. Fewer than ring_need before the end: the slots left
 * get pads (kind 0, dropped by the reader) and a new lap begins. ring
 * is the ring's memory as the caller sees it. */
static inline int xl_ring_room(volatile struct xl_ctl *c, char *ring)
{
	uint64_t base = c->ring_base;
	uint64_t n = (c->ring_end - base) / sizeof(struct xl_rec);
	uint64_t need = c->ring_need ? c->ring_need : 1;

	for (;;) {
		if (c->wrap_seq & 1) { /* a lap begun: finish it */
			c->ring_wp = base;
			c->wrap_seq = c->wrap_seq + 1;
		}
		uint64_t i = (c->ring_wp - base) / sizeof(struct xl_rec);
		if (i >= n) { /* at the end (or nonsense): a new lap */
			c->wrap_seq = c->wrap_seq | 1;
			c->ring_wp = base;
			c->wrap_seq = c->wrap_seq + 1;
			i = 0;
		}
		uint64_t k = n - i, free = n;
		if (!c->overwrite) {
			/* the slot of record w held record w - n: read? */
			uint64_t w = c->wrap_seq / 2 * n + i, r = c->read;
			free = r <= w && w - r <= n ? n - (w - r) : 0;
		}
		if (k >= need) {
			if (free < k)
				k = free;
			if (k < need)
				return 0;
			c->ring_left = k + 1;
			return 1;
		}
		if (free < k)
			return 0;
		for (; i < n; i++) {
			volatile struct xl_rec *p =
			    (volatile struct xl_rec *)(ring + i * sizeof *p);
			p->from_kind = 0;
			c->ring_wp = c->ring_wp + sizeof *p;
		}
	}
}

#endif
