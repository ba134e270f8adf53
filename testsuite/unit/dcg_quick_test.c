/* The call graph's shortcut for plain calls and returns (dcg_event_quick,
 * used by the translate mechanism's drain) against the general path
 * (dcg_event): two threads fed the same varied stream of events, one
 * through the general path alone, the other through the shortcut where
 * it takes the event; after every event their shadow stacks, their
 * records and the -v counts must be the same. The stream runs over this
 * program's own functions (so the symbol lookups are real) and has
 * nested calls and returns, returns past frames, longjmp-like jumps,
 * tail calls, signal handlers, returns with no instruction, time going
 * back, calls through a PLT stub of this program (the stub's jump to
 * libc, then the return), the symbol cache invalidated now and then
 * (the shortcut keeps its last callee per batch of the cache), and
 * stretches under a depth limit (where the shortcut is off). */
#include "dcg/dcg_internal.h"
#include "sym/symbols.h"
#include "unit.h"

#include "arch/x86_64/insn.h"

#include <inttypes.h>
#include <unistd.h>

#define NFN 6
__attribute__((noinline, used)) static int fn0(int x)
{
	return x + 1;
}
__attribute__((noinline, used)) static int fn1(int x)
{
	return fn0(x) * 3;
}
__attribute__((noinline, used)) static int fn2(int x)
{
	return fn1(x) ^ 5;
}
__attribute__((noinline, used)) static int fn3(int x)
{
	return fn2(x) - 7;
}
__attribute__((noinline, used)) static int fn4(int x)
{
	return fn3(x) | 9;
}
__attribute__((noinline, used)) static int fn5(int x)
{
	return fn4(x) + 11;
}
static int (*const fns[NFN])(int) = {fn0, fn1, fn2, fn3, fn4, fn5};

static int read_self(void *ctx, uint64_t addr, void *buf, size_t len)
{
	(void)ctx;
	memcpy(buf, (const void *)(uintptr_t)addr, len);
	return 0;
}

/* A libc call through this program's PLT (a call or tail jump to the
 * stub): the stub's address, or 0 if none is found. */
__attribute__((noinline, used)) static int via_plt(int x)
{
	return (int)getpid() + x;
}

static uint64_t plt_stub(const struct dcg_reader *rd)
{
	uint64_t a = (uint64_t)(uintptr_t)via_plt;

	for (int i = 0; i < 16; i++) {
		struct _stp_x86_insn in;
		if (_stp_dcg_read_insn(rd, a, &in) < 0 || !in.len)
			return 0;
		if ((in.kind == STP_X86_CALL || in.kind == STP_X86_JMP) &&
		    dcg_is_stub(rd, in.target))
			return in.target;
		if (in.kind == STP_X86_RET)
			return 0;
		a += in.len;
	}
	return 0;
}

static uint64_t rnd_state = 12345;
static unsigned rnd(unsigned n)
{
	rnd_state = rnd_state * 6364136223846793005ull + 1442695040888963407ull;
	return (unsigned)(rnd_state >> 33) % n;
}

static uint64_t fn_addr(unsigned i)
{
	return (uint64_t)(uintptr_t)fns[i];
}

static struct dthread *new_thread(void)
{
	struct dthread *d = calloc(1, sizeof *d);
	d->tid = d->pid = getpid();
	d->hold = NO_HOLD;
	d->rd = (struct dcg_reader){read_self, NULL, getpid()};
	snprintf(d->comm, sizeof d->comm, "unit");
	return d;
}

static int same_rec(const struct dcg_rec *a, const struct dcg_rec *b)
{
	return a->kind == b->kind && a->sig == b->sig && a->unwound == b->unwound &&
	    a->depth == b->depth && a->ns == b->ns && a->from == b->from && a->to == b->to &&
	    a->name == b->name;
}

static int same_frame(const struct frame *a, const struct frame *b)
{
	return a->sp == b->sp && a->func == b->func && a->ns == b->ns && a->known == b->known &&
	    a->stub == b->stub && a->tail == b->tail && a->hide == b->hide && a->mute == b->mute &&
	    a->sig == b->sig;
}

/* Where they differ, or NULL. */
static const char *differ(const struct dthread *g, const struct dthread *q)
{
	if (g->nf != q->nf || g->nr != q->nr || g->now != q->now || g->on != q->on)
		return "frame count, record count, time or on";
	for (size_t i = 0; i < g->nf; i++)
		if (!same_frame(&g->f[i], &q->f[i]))
			return "a frame";
	for (size_t i = 0; i < g->nr; i++)
		if (!same_rec(&g->r[i], &q->r[i]))
			return "a record";
	return NULL;
}

/* The model of the program: its stack of (slot, return address, function). */
struct mframe {
	uint64_t slot, ret;
	unsigned fn;
};

/* Feed e to both threads (g: dcg_event alone, q: the shortcut where it
 * takes it): NULL, or where they differ. */
static size_t quick_taken, events;
static const char *feed(struct dthread *g, struct dthread *q, const struct dcg_event *e)
{
	uint64_t c0 = dcg_n_calls, r0 = dcg_n_rets;
	dcg_event(g, e);
	uint64_t gc = dcg_n_calls - c0, gr = dcg_n_rets - r0;
	c0 = dcg_n_calls, r0 = dcg_n_rets;
	/* once per event here, once per ring batch in a drain */
	int ok = dcg_event_quick_ok();
	if ((e->kind == DCG_EV_CALL || e->kind == DCG_EV_RETURN) && ok &&
	    dcg_event_quick(q, e->kind, e->from, e->to, e->sp, e->ns))
		quick_taken++;
	else
		dcg_event(q, e);
	events++;
	if (dcg_n_calls - c0 != gc || dcg_n_rets - r0 != gr)
		return "the -v counts";
	return differ(g, q);
}

int main(void)
{
	struct dthread *g = new_thread(), *q = new_thread();
	struct mframe m[256];
	size_t depth = 0, plt_calls = 0;
	uint64_t stub = plt_stub(&g->rd), libc_getpid = (uint64_t)(uintptr_t)&getpid;
	uint64_t sp = 0x7ffc00100000ull, ns = 1000;
	unsigned cur = 5;
	const char *bad = NULL;
	char detail[256] = "";

	struct dcg_event on = {.kind = DCG_EV_ON, .to = fn_addr(cur), .sp = sp, .ns = (int64_t)ns};
	dcg_event(g, &on);
	dcg_event(q, &on);
	unit_result("dcg shortcut: a PLT stub of this program is found",
		    stub && !dcg_in_plt(getpid(), libc_getpid), "");
	for (int i = 0; i < 20000 && !bad; i++) {
		struct dcg_event e = {0};
		unsigned pick = rnd(100);
		uint64_t here = fn_addr(cur) + 1 + rnd(8);

		ns += rnd(5) ? rnd(900) : 0;
		if (!rnd(50))
			ns -= rnd(300); /* a clock converted from another CPU */
		e.ns = (int64_t)ns;
		/* under a depth limit now and then: no shortcut there */
		dcg_max_depth = (i / 2000) % 3 == 1 ? 3 : -1;
		if (!(i % 1500)) /* the cache forgets (a dlclose elsewhere) */
			_stp_sym_unmap(getpid(), 0, 1);
		if (pick < 4 && stub && depth < 200) {
			/* a call of getpid through the stub, its jump to libc
			 * (the call's record then), the return */
			struct dcg_event seq[3] = {
			    {.kind = DCG_EV_CALL,
			     .from = here,
			     .to = stub,
			     .sp = sp - 8,
			     .ns = e.ns},
			    {.kind = DCG_EV_JUMP,
			     .from = stub,
			     .to = libc_getpid,
			     .sp = sp - 8,
			     .indirect = 1,
			     .ns = e.ns + 1},
			    {.kind = DCG_EV_RETURN,
			     .from = libc_getpid + 1,
			     .to = here + 5,
			     .sp = sp,
			     .ns = e.ns + 2},
			};
			for (int k = 0; k < 3 && !bad; k++)
				if ((bad = feed(g, q, &seq[k])))
					snprintf(
					    detail, sizeof detail,
					    "after event %zu (through the PLT, step %d): not the "
					    "same: %s",
					    events, k, bad);
			ns += 2;
			plt_calls++;
			continue;
		}
		if (pick < 42 && depth < 200) { /* a call */
			unsigned to = rnd(NFN);
			sp -= 8 + 16 * rnd(4);
			m[depth++] = (struct mframe){sp, here + 5, cur};
			e = (struct dcg_event){.kind = DCG_EV_CALL,
					       .from = here,
					       .to = fn_addr(to),
					       .sp = sp,
					       .ns = e.ns};
			cur = to;
		} else if (pick < 82 && depth) { /* a return, mostly to the caller */
			size_t k = pick < 79 || depth < 3 ? 1 : 2; /* or past a frame */
			struct mframe *f = &m[depth - k];
			e = (struct dcg_event){.kind = DCG_EV_RETURN,
					       .from = pick == 81 ? 0 : here,
					       .to = f->ret,
					       .sp = f->slot + 8,
					       .ns = e.ns};
			sp = f->slot + 8;
			cur = f->fn;
			depth -= k;
		} else if (pick < 87 && depth > 2) { /* longjmp out of frames */
			size_t k = 1 + rnd((unsigned)depth - 1);
			struct mframe *f = &m[depth - k];
			e = (struct dcg_event){.kind = DCG_EV_JUMP,
					       .from = here,
					       .to = f->ret,
					       .sp = f->slot + 8,
					       .indirect = 1,
					       .ns = e.ns};
			sp = f->slot + 8;
			cur = f->fn;
			depth -= k;
		} else if (pick < 94) { /* a tail call */
			unsigned to = rnd(NFN);
			e = (struct dcg_event){.kind = DCG_EV_JUMP,
					       .from = here,
					       .to = fn_addr(to),
					       .sp = sp,
					       .ns = e.ns};
			cur = to;
		} else if (pick < 97 && depth < 200) { /* a signal handler */
			unsigned to = rnd(NFN);
			sp -= 512;
			m[depth++] = (struct mframe){sp, here, cur};
			e = (struct dcg_event){.kind = DCG_EV_SIGNAL,
					       .from = here,
					       .to = fn_addr(to),
					       .sp = sp,
					       .sig = 14,
					       .ns = e.ns};
			cur = to;
		} else { /* a return to where no frame says (the root's caller) */
			e = (struct dcg_event){.kind = DCG_EV_RETURN,
					       .from = here,
					       .to = here + 100,
					       .sp = sp + 8 + 8 * rnd(3),
					       .ns = e.ns};
			sp = e.sp;
			depth = 0;
		}
		if ((bad = feed(g, q, &e)))
			snprintf(detail, sizeof detail,
				 "after event %zu (kind %d, from 0x%" PRIx64 " to 0x%" PRIx64
				 " sp 0x%" PRIx64 "): not the same: %s",
				 events, (int)e.kind, e.from, e.to, e.sp, bad);
	}
	unit_result("dcg shortcut: the same frames and records as the general path", !bad, detail);
	snprintf(detail, sizeof detail, "%zu of %zu events taken by the shortcut", quick_taken,
		 events);
	unit_result("dcg shortcut: takes many events of the stream, not all",
		    quick_taken > events / 4 && quick_taken < events, detail);
	size_t shown = 0; /* calls of getpid, not of its stub (some too deep) */
	for (size_t i = 0; i < g->nr; i++)
		shown += g->r[i].kind == DCG_CALL && g->r[i].name == libc_getpid;
	snprintf(detail, sizeof detail, "%zu calls through the PLT, %zu shown", plt_calls, shown);
	unit_result("dcg shortcut: the stream calls getpid through the PLT",
		    plt_calls > 100 && shown > plt_calls / 2, detail);
	free(g->f);
	free(g->r);
	free(q->f);
	free(q->r);
	free(g);
	free(q);
	_stp_sym_cache_free();
	return unit_failures != 0;
}
