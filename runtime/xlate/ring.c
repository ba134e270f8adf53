/* A thread's ring of records, and time. The translated code writes at wp
 * while ring_left > 1 (layout.h); at 1 the agent makes room (ring_lap.h):
 * a new lap from the start at the end, and only over records staprun has
 * read. A record's sequence number (records written before it, wrap_seq
 * / 2 laps of ring_n plus its slot) gives its slot. staprun reads when it
 * likes (the event loop's reads while threads run, doorbells, switch-off,
 * exit): the records [read, written), each complete before wp moves past
 * it; it publishes read as it goes and wakes a thread waiting for room
 * (the futex word wake). Records carry the TSC; they reach the client in
 * CLOCK_MONOTONIC nanoseconds.
 *
 * In overwrite mode (cfg.overwrite, the flight recorder) the agent starts
 * a full ring again whatever staprun read, and nothing waits for staprun.
 * A read copies the ring while the thread runs on, then takes as read
 * only the records that were not overwritten meanwhile, judged by the
 * sequence number after the copy. */
#include "xlate/xl_internal.h"
#include "xlate/ring_lap.h"

#include <errno.h>
#include <linux/futex.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <x86intrin.h>

static int64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* A pair (tsc, ns) now; the rate is measured at its first use, over at
 * least span_ns from here: a busy wait only for what is left of them (the
 * engine's set-up in the target and the first records usually take
 * longer). A rough rate (a timeout's) takes 100 us; the records' rate
 * 2 ms, refined by each later read over the longer span (refine). */
void xl_time_init(struct _stp_xl_engine *x)
{
	x->ns0 = mono_ns();
	x->tsc0 = __rdtsc();
	x->ns_per_tick = 0;
}

static double rate_over(struct _stp_xl_engine *x, int64_t span_ns)
{
	int64_t n1;
	uint64_t t1;

	do {
		n1 = mono_ns();
		t1 = __rdtsc();
	} while (n1 - x->ns0 < span_ns);
	return t1 > x->tsc0 ? (double)(n1 - x->ns0) / (double)(t1 - x->tsc0) : 0;
}

double xl_ns_per_tick(struct _stp_xl_engine *x)
{
	if (!(x->ns_per_tick > 0))
		x->ns_per_tick = rate_over(x, 2000000);
	return x->ns_per_tick;
}

static double rough_ns_per_tick(struct _stp_xl_engine *x)
{
	return x->ns_per_tick > 0 ? x->ns_per_tick : rate_over(x, 100000);
}

/* The time of a TSC value, from the pair (ns0, tsc0) and the rate. */
static inline int64_t tsc_to_ns(int64_t ns0, uint64_t tsc0, double per, uint64_t tsc)
{
	return ns0 + (int64_t)((double)(int64_t)(tsc - tsc0) * per);
}

int64_t xl_tsc_ns(struct _stp_xl_engine *x, uint64_t tsc)
{
	return tsc_to_ns(x->ns0, x->tsc0, xl_ns_per_tick(x), tsc);
}

static void refine(struct _stp_xl_engine *x)
{
	double r = mono_ns() - x->ns0 > 50000000 ? rate_over(x, 0) : 0;

	if (r > 0)
		x->ns_per_tick = r;
}

void xl_ring_reset(struct xl_thread *xt)
{
	struct xl_ctl *c = xt->ctl;
	struct _stp_xl_engine *x = xt->xp->x;

	c->ring_wp = c->ring_base;
	c->ring_left = xt->ring_n + 1;
	c->wrap_seq = c->read = 0;
	c->overwrite = (uint64_t)x->cfg.overwrite;
	c->waiting = 0;
	c->wait_ns = (uint64_t)x->cfg.ring_wait_us * 1000;
	double per = x->cfg.raw_tsc ? 0 : rough_ns_per_tick(x);
	c->wait_tsc = per > 0 ? (uint64_t)((double)c->wait_ns / per) : 0;
	c->read_tsc = __rdtsc();
	c->ring_need = 1; /* the largest reservation of the translated code */
	if (x->cfg.capture & XL_CAP_ARGS)
		c->ring_need += XL_ARGS_SLOTS;
	else if (x->cfg.capture & XL_CAP_RET)
		c->ring_need += 1;
	xt->ow_done = 0;
}

/* The records written so far (a lower bound while the agent starts a lap:
 * the lap before is whole then). */
static uint64_t written(struct xl_thread *xt)
{
	volatile struct xl_ctl *c = xt->ctl;

	for (;;) {
		uint64_t s = __atomic_load_n(&c->wrap_seq, __ATOMIC_ACQUIRE);
		if (s & 1)
			return (s / 2 + 1) * xt->ring_n;
		uint64_t wp = __atomic_load_n(&c->ring_wp, __ATOMIC_ACQUIRE);
		if (__atomic_load_n(&c->wrap_seq, __ATOMIC_ACQUIRE) != s)
			continue; /* a lap began between */
		uint64_t i = wp >= c->ring_base ? (wp - c->ring_base) / sizeof(struct xl_rec) : 0;
		return s / 2 * xt->ring_n + (i < xt->ring_n ? i : xt->ring_n);
	}
}

static void give(struct xl_thread *xt, struct xl_rec *r, size_t n)
{
	struct _stp_xl_engine *x = xt->xp->x;

	if (!x->cfg.raw_tsc && n) { /* xl_tsc_ns, its terms read once */
		double per = xl_ns_per_tick(x);
		int64_t ns0 = x->ns0;
		uint64_t tsc0 = x->tsc0;
		for (size_t i = 0; i < n; i++)
			r[i].tsc = (uint64_t)tsc_to_ns(ns0, tsc0, per, r[i].tsc);
	}
	x->st.records += n;
	if (x->ops.records)
		x->ops.records(x->core, xt->t, r, n);
}

/* ---- every record read ---- */

/* A thread waiting for room (the agent's full()) goes on. read is
 * published before; the fence: either the agent's check after it set
 * waiting sees read, or this sees waiting. */
static int wake(struct xl_thread *xt)
{
	struct xl_ctl *c = xt->ctl;

	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (!__atomic_load_n(&c->waiting, __ATOMIC_RELAXED))
		return 0;
	/* cleared here too: a thread that left the agent meanwhile (a
	 * signal) would not; one that waits again sets it after this */
	__atomic_store_n(&c->waiting, 0, __ATOMIC_RELAXED);
	__atomic_add_fetch(&c->wake, 1, __ATOMIC_RELEASE);
	syscall(SYS_futex, &c->wake, FUTEX_WAKE, 1, NULL, NULL, 0);
	xt->xp->x->st.ring_wakes++;
	return 1;
}

static size_t unpad(struct xl_rec *r, size_t n)
{
	size_t k = 0;

	for (size_t i = 0; i < n; i++)
		if (r[i].from_kind)
			r[k++] = r[i];
	return k;
}

/* The records [read, w) a slice at a time, read published after each
 * copy; a waiting thread is woken once half the ring is free (checked
 * after each slice from then on), and goes on while the rest is handed
 * to the client. */
static void drain(struct xl_thread *xt)
{
	struct _stp_xl_engine *x = xt->xp->x;
	struct xl_ctl *c = xt->ctl;
	const struct xl_rec *ring = (const struct xl_rec *)(xt->rg.mem + XL_RING_OFF);
	struct xl_rec buf[256];
	size_t n = xt->ring_n;
	uint64_t w = written(xt), r = c->read;
	int woken = 0;

	/* staprun reads: a thread waits for it */
	__atomic_store_n(&c->read_tsc, __rdtsc(), __ATOMIC_RELAXED);
	if (r > w || w - r > n)
		r = w; /* nonsense: the program wrote over our memory */
	/* tests: a slow reader, the thread waits */
	if (r < w && x->read_delay_us)
		usleep(x->read_delay_us * (unsigned)(++x->reads % 8 + 1) / 8);
	while (r < w) {
		size_t at = (size_t)(r % n), k = (size_t)(w - r);
		if (k > sizeof buf / sizeof *buf)
			k = sizeof buf / sizeof *buf;
		if (k > n - at)
			k = n - at;
		memcpy(buf, ring + at, k * sizeof *buf);
		r += k;
		__atomic_store_n(&c->read, r, __ATOMIC_RELEASE);
		__atomic_store_n(&c->read_tsc, __rdtsc(), __ATOMIC_RELAXED);
		if (!woken && w - r <= n / 2) /* (it may begin to wait meanwhile) */
			woken = wake(xt);
		if (c->ring_need > 1) /* pads (ring_lap.h) */
			k = unpad(buf, k);
		xt->last_part = r == w; /* ends with the held event's record */
		give(xt, buf, k);
	}
	xt->last_part = 0;
	if (!woken)
		wake(xt);
}

/* ---- overwrite mode ---- */

/* Read what was written since the last read, oldest first: the records
 * [lo, w1) still in the ring copied, then those the thread overwrote
 * meanwhile left out; the ones before are lost. */
static void ow_drain(struct xl_thread *xt)
{
	struct _stp_xl_engine *x = xt->xp->x;
	const struct xl_rec *ring = (const struct xl_rec *)(xt->rg.mem + XL_RING_OFF);
	size_t n = xt->ring_n;
	uint64_t w1 = written(xt);
	uint64_t lo = w1 > n ? w1 - n : 0;

	if (lo < xt->ow_done)
		lo = xt->ow_done;
	if (w1 <= lo)
		return;
	if (x->ow_copy_n < n) {
		struct xl_rec *v = realloc(x->ow_copy, n * sizeof *v);
		if (!v)
			return; /* read at the next chance */
		x->ow_copy = v;
		x->ow_copy_n = n;
	}
	if (x->read_delay_us) /* tests: the thread overwrites part of what is read */
		usleep(x->read_delay_us * (unsigned)(++x->reads % 8 + 1) / 8);
	size_t k = (size_t)(w1 - lo), at = (size_t)(lo % n), first = k < n - at ? k : n - at;
	memcpy(x->ow_copy, ring + at, first * sizeof *ring);
	memcpy(x->ow_copy + first, ring, (k - first) * sizeof *ring);
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	/* the thread went on: it wrote up to w2 and may be writing the
	 * record w2, over the record w2 - n */
	uint64_t w2 = written(xt), skip = 0;
	if (w2 + 1 > n && w2 + 1 - n > lo)
		skip = w2 + 1 - n - lo < k ? w2 + 1 - n - lo : k;
	uint64_t lost = lo + skip - xt->ow_done;
	x->st.overwritten += lost;
	xt->ow_done = w1;
	if (lost && x->ops.lost)
		x->ops.lost(x->core, xt->t, lost);
	give(xt, x->ow_copy + skip, k - (size_t)skip);
}

void xl_ring_drain(struct xl_thread *xt)
{
	struct _stp_xl_engine *x = xt->xp->x;
	int64_t t0 = mono_ns();

	refine(x);
	if (xt->ctl->overwrite)
		ow_drain(xt);
	else
		drain(xt);
	x->st.drain_ns += (uint64_t)(mono_ns() - t0);
}

/* A record written by staprun (the thread is stopped with native state,
 * maybe inside the agent's full()): after the ring's, in order. */
int xl_ring_put(struct xl_thread *xt, const struct xl_rec *r)
{
	struct xl_ctl *c = xt->ctl;

	char *ring = (char *)xt->rg.mem + XL_RING_OFF;

	if (c->ring_left <= 1 && !xl_ring_room(c, ring)) {
		xl_ring_drain(xt); /* every record read: room */
		xl_ring_room(c, ring);
	}
	memcpy((char *)xt->rg.mem + (c->ring_wp - xt->rg.addr), r, sizeof *r);
	c->ring_wp += sizeof *r;
	c->ring_left--;
	return 0;
}

/* The registers' records (config capture) before a record of kind that
 * staprun writes, from the registers r at it. */
void xl_ring_put_args(struct xl_thread *xt, unsigned kind, const struct user_regs_struct *r)
{
	int cap = xt->xp->x->cfg.capture;
	const uint64_t A = (uint64_t)XL_REC_ARGS << XL_KIND_SHIFT;

	if (kind == XL_REC_RET) {
		if (cap & XL_CAP_RET) {
			struct xl_rec a = {0, A | 3, r->rax, r->rax};
			xl_ring_put(xt, &a);
		}
		return;
	}
	if (!(cap & XL_CAP_ARGS))
		return;
	struct xl_rec a[XL_ARGS_SLOTS] = {
	    {0, A | 0, r->rdi, r->rsi}, {0, A | 1, r->rdx, r->rcx}, {0, A | 2, r->r8, r->r9}};
	for (int i = 0; i < XL_ARGS_SLOTS; i++)
		xl_ring_put(xt, &a[i]);
}
