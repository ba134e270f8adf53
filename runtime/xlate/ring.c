/* A thread's ring of records, and time. The ring is a linear buffer: the
 * translated code writes at wp while ring_left > 1 (layout.h), staprun
 * reads [rp, wp) whenever it likes (a record is complete before wp moves
 * past it) and starts the buffer again at a doorbell for a full ring,
 * when the thread is in the agent and writes nothing. Records carry the
 * TSC; they reach the client in CLOCK_MONOTONIC nanoseconds. */
#include "xlate/xl_internal.h"

#include <errno.h>
#include <string.h>
#include <time.h>
#include <x86intrin.h>

static int64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* A pair (tsc, ns) now, and the rate from a short busy wait: refined by
 * each later conversion over the longer span (xl_tsc_ns). */
void xl_time_init(struct _stp_xl_engine *x)
{
	int64_t n0 = mono_ns(), n1;
	uint64_t t0 = __rdtsc(), t1;

	do {
		n1 = mono_ns();
		t1 = __rdtsc();
	} while (n1 - n0 < 2000000);
	x->tsc0 = t0;
	x->ns0 = n0;
	x->ns_per_tick = (double)(n1 - n0) / (double)(t1 - t0);
}

int64_t xl_tsc_ns(struct _stp_xl_engine *x, uint64_t tsc)
{
	return x->ns0 + (int64_t)((double)(int64_t)(tsc - x->tsc0) * x->ns_per_tick);
}

static void refine(struct _stp_xl_engine *x)
{
	int64_t n = mono_ns();
	uint64_t t = __rdtsc();

	if (n - x->ns0 > 50000000 && t > x->tsc0)
		x->ns_per_tick = (double)(n - x->ns0) / (double)(t - x->tsc0);
}

static struct xl_rec *at(struct xl_thread *xt, uint64_t addr)
{
	return (struct xl_rec *)(xt->rg.mem + (addr - xt->rg.addr));
}

void xl_ring_reset(struct xl_thread *xt)
{
	struct xl_ctl *c = xt->ctl;

	c->ring_wp = c->rp = c->ring_base;
	c->ring_left = xt->ring_n + 1;
}

void xl_ring_drain(struct xl_thread *xt)
{
	struct _stp_xl_engine *x = xt->xp->x;
	struct xl_ctl *c = xt->ctl;
	struct xl_rec buf[256];
	uint64_t wp = __atomic_load_n(&c->ring_wp, __ATOMIC_ACQUIRE);

	int64_t t0 = mono_ns();

	if (wp < c->ring_base || wp > c->ring_end || c->rp > wp)
		c->rp = wp; /* nonsense: the program wrote over our memory */
	refine(x);
	while (c->rp < wp) {
		size_t n = (size_t)(wp - c->rp) / sizeof *buf;
		if (n > sizeof buf / sizeof *buf)
			n = sizeof buf / sizeof *buf;
		memcpy(buf, at(xt, c->rp), n * sizeof *buf);
		for (size_t i = 0; i < n; i++)
			buf[i].tsc = (uint64_t)xl_tsc_ns(x, buf[i].tsc);
		c->rp += n * sizeof *buf;
		x->st.records += n;
		if (x->ops.records)
			x->ops.records(x->core, xt->t, buf, n);
	}
	x->st.drain_ns += (uint64_t)(mono_ns() - t0);
}

/* A record written by staprun (the thread is stopped with native state):
 * after the ring's, in order. */
int xl_ring_put(struct xl_thread *xt, const struct xl_rec *r)
{
	struct xl_ctl *c = xt->ctl;

	if (c->ring_left <= 1) {
		xl_ring_drain(xt);
		xl_ring_reset(xt);
	}
	memcpy(at(xt, c->ring_wp), r, sizeof *r);
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
