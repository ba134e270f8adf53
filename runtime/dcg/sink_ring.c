/* The flight recorder (sink_run.h): while tracing is on, each thread's
 * records go into a ring that keeps its last N; nothing is printed until
 * dynamic_call_graph_snapshot() gives the ring to the format. The frames
 * open when the ring's window starts are kept apart (the records pushed
 * out of the ring are applied to them), so that a snapshot opens with
 * them, as calls at the time they were made (or at the previous
 * snapshot's end, so that a thread's times never go back).
 *
 * Names are kept once each (interned): the memory is N records per
 * thread, the open frames and the distinct names. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "sink_run.h"
#include "sink_out.h"

#include <stdlib.h>
#include <string.h>

enum { RING_STOP = 3 }; /* tracing stopped in the thread (past the record kinds) */

struct rent {
	uint8_t kind, is_main, unwound;
	int sig;
	uint32_t depth;
	uint64_t ns, mono_ns, addr, from, to;
	const char *name, *func, *module; /* interned */
};

struct ring {
	struct dcg_sink_thread th;
	char comm[32];
	struct rent *e;
	unsigned cap, head, n; /* the oldest at head */
	struct rent *open;     /* frames open at the window's start */
	size_t nopen, capopen;
	uint64_t last_end; /* the previous snapshot's end (CLOCK_MONOTONIC ns) */
	int has_end;
};

static struct dcg_tmap rings = {.size = sizeof(struct ring)};

static struct dcg_strtab names;

static const char *intern(const char *s)
{
	return s ? dcg_strtab_str(&names, dcg_strtab_id(&names, s)) : NULL;
}

/* ---- the rings ---- */

/* An entry leaves the window: the frames open at its start follow it. */
static void apply_to_open(struct ring *g, const struct rent *e)
{
	if (e->kind == RING_STOP) {
		g->nopen = 0;
		return;
	}
	/* a call or return at depth d ends the frames at d and deeper */
	while (g->nopen && g->open[g->nopen - 1].depth >= e->depth)
		g->nopen--;
	if (e->kind != DCG_REC_CALL)
		return;
	if (dcg_grow(&g->open, g->nopen, &g->capopen, sizeof *g->open) < 0)
		return;
	g->open[g->nopen++] = *e;
}

static void ring_add(struct ring *g, const struct rent *e, unsigned cap)
{
	if (!g->e) {
		if (!(g->e = calloc(cap, sizeof *g->e)))
			return;
		g->cap = cap;
	}
	if (g->n == g->cap) {
		apply_to_open(g, &g->e[g->head]);
		g->head = (g->head + 1) % g->cap;
		g->n--;
	}
	g->e[(g->head + g->n) % g->cap] = *e;
	g->n++;
}

static struct ring *ring_of(const struct dcg_sink_thread *th)
{
	struct ring *g = dcg_tmap_get(&rings, th->pid, th->tid, 1);

	if (g && !g->th.tid) {
		g->th = *th;
		strncpy(g->comm, th->execname ? th->execname : "", sizeof g->comm - 1);
		g->th.execname = g->comm;
	}
	return g;
}

void dcg_ring_record(const struct dcg_sink_rec *r, unsigned n)
{
	struct ring *g = ring_of(r->thread);
	struct rent e = {
	    .kind = (uint8_t)r->kind,
	    .is_main = (uint8_t)r->is_main,
	    .unwound = (uint8_t)r->unwound,
	    .sig = r->sig,
	    .depth = r->depth,
	    .ns = r->ns,
	    .mono_ns = r->mono_ns,
	    .addr = r->addr,
	    .from = r->from,
	    .to = r->to,
	    .name = intern(r->name),
	    .func = intern(r->func),
	    .module = intern(r->module),
	};
	if (g)
		ring_add(g, &e, n);
}

void dcg_ring_stop(const struct dcg_sink_thread *th, uint64_t ns, uint64_t mono_ns)
{
	struct ring *g = dcg_tmap_get(&rings, th->pid, th->tid, 0);
	struct rent e = {.kind = RING_STOP, .ns = ns, .mono_ns = mono_ns};

	if (g && g->cap)
		ring_add(g, &e, g->cap);
}

/* Give e, at mono_min at the earliest (ns moves with it). */
static void give(struct ring *g, const struct rent *e, uint64_t mono_min,
		 void (*deliver)(struct dcg_sink_rec *r))
{
	struct dcg_sink_rec r = {
	    .kind = e->kind,
	    .thread = &g->th,
	    .depth = e->depth,
	    .ns = e->ns,
	    .mono_ns = e->mono_ns,
	    .addr = e->addr,
	    .name = e->name ? e->name : "?",
	    .func = e->func,
	    .module = e->module,
	    .is_main = e->is_main,
	    .from = e->from,
	    .to = e->to,
	    .sig = e->sig,
	    .unwound = e->unwound,
	};
	if (r.mono_ns < mono_min) {
		r.ns += mono_min - r.mono_ns;
		r.mono_ns = mono_min;
	}
	deliver(&r);
}

static uint64_t
snapshot_one(struct ring *g, uint64_t now_mono, void (*thread)(const struct dcg_sink_thread *th),
	     void (*deliver)(struct dcg_sink_rec *r),
	     void (*stop)(const struct dcg_sink_thread *th, uint64_t ns, uint64_t mono_ns))
{
	uint64_t given = 0, min = g->has_end ? g->last_end : 0;
	/* the clock of the thread's last period: mono_ns - ns of its last record */
	const struct rent *last = g->n ? &g->e[(g->head + g->n - 1) % g->cap]
	    : g->nopen		       ? &g->open[g->nopen - 1]
				       : NULL;

	if (!last)
		return 0;
	uint64_t t0 = last->mono_ns - last->ns;
	thread(&g->th);
	for (size_t i = 0; i < g->nopen; i++, given++)
		give(g, &g->open[i], min, deliver);
	for (unsigned i = 0; i < g->n; i++) {
		const struct rent *e = &g->e[(g->head + i) % g->cap];
		if (e->kind != RING_STOP) {
			give(g, e, min, deliver);
			given++;
		} else if (e->mono_ns < min) {
			stop(&g->th, e->ns + (min - e->mono_ns), min);
		} else {
			stop(&g->th, e->ns, e->mono_ns);
		}
	}
	uint64_t end = now_mono > min ? now_mono : min;
	stop(&g->th, end > t0 ? end - t0 : 0, end);
	/* the window is given: what is open at its end opens the next one */
	for (unsigned i = 0; i < g->n; i++)
		apply_to_open(g, &g->e[(g->head + i) % g->cap]);
	g->head = g->n = 0;
	g->last_end = end;
	g->has_end = 1;
	return given;
}

uint64_t dcg_ring_snapshot(pid_t pid, pid_t tid, int all, uint64_t now_mono,
			   void (*thread)(const struct dcg_sink_thread *th),
			   void (*deliver)(struct dcg_sink_rec *r),
			   void (*stop)(const struct dcg_sink_thread *th, uint64_t ns,
					uint64_t mono_ns))
{
	uint64_t given = 0;

	for (size_t i = 0; i < rings.n; i++)
		if (all || (rings.e[i].pid == pid && rings.e[i].tid == tid))
			given += snapshot_one(rings.e[i].v, now_mono, thread, deliver, stop);
	return given;
}

static void ring_free(void *v)
{
	struct ring *g = v;
	free(g->e);
	free(g->open);
}

void dcg_ring_free(void)
{
	dcg_tmap_free(&rings, ring_free);
	dcg_strtab_free(&names);
}
