/* The call graph's records: kept per thread as small binary structs,
 * named (symbolized) only when they are printed, through the output
 * format chosen (dcg/sink.h), or handed to the script's
 * dynamic_call_graph.call/.return probes instead when it has any. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "dcg.h"
#include "dcg_internal.h"
#include "sink.h"
#include "sink_out.h"
#include "sink_run.h"
#include "lang/stp_internal.h"
#include "sym/symbols.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the output formats: one line per format ---- */

extern const struct dcg_sink dcg_sink_tree, dcg_sink_chrome, dcg_sink_folded, dcg_sink_dot,
    dcg_sink_report, dcg_sink_graph;
const struct dcg_sink *const dcg_sink_table[] = {
    &dcg_sink_tree, /* the default: the first */
    &dcg_sink_chrome, &dcg_sink_folded, &dcg_sink_dot, &dcg_sink_report, &dcg_sink_graph,
};
const unsigned dcg_sink_count = sizeof dcg_sink_table / sizeof *dcg_sink_table;

/* A record's name, grown as needed: names are printed whole (C++ template
 * functions may differ only past the first kilobyte). */
static char *name;
static size_t name_cap;

void dcg_records_finish(void)
{
	dcg_run_finish();
	free(name);
	name = NULL;
	name_cap = 0;
}

int64_t dcg_run_calibrate(char *how, size_t len)
{
	const char *m = dcg_mech_name();

	how[0] = '\0';
	return m ? dcg_calibrate(m, how, len) : 0;
}

/* ---- records ---- */

_Static_assert((int)DCG_CALL == (int)DCG_REC_CALL && (int)DCG_RET == (int)DCG_REC_RETURN,
	       "plain() reads the records' kinds");

/* A call or return: a record for the tree, or the script's probes when it
 * has any. Returns 1 when a record was added. */
int dcg_emit(struct dthread *d, int kind, uint32_t depth, uint64_t from, uint64_t to, uint64_t name)
{
	if (kind == DCG_CALL)
		dcg_n_calls++;
	else
		dcg_n_rets++;
	/* the script's probes fire now, except under a lazily bound PLT
	 * call, whose own event must come first: kept until it is known */
	if (dcg_probes_wanted() && d->hold == NO_HOLD) {
		dcg_fire_event(d, kind, depth, from, to, name);
		return 0;
	}
	return dcg_emit_rec(d, kind, depth, from, to, name);
}

int dcg_rec_room(struct dthread *d)
{
	/* before adding: callers look at the record they added */
	if (d->nr >= 4096 && d->hold == NO_HOLD)
		_stp_dcg_flush_all();
	if (d->nr == d->capr) {
		size_t cap = d->capr ? 2 * d->capr : 256;
		struct dcg_rec *v = realloc(d->r, cap * sizeof *v);
		if (!v)
			return -1;
		d->r = v;
		d->capr = cap;
	}
	return 0;
}

int dcg_emit_rec(struct dthread *d, int kind, uint32_t depth, uint64_t from, uint64_t to,
		 uint64_t name)
{
	if (dcg_rec_room(d) < 0)
		return 0;
	/* symbolize the callee now (a cached lookup after the first): once
	 * the process has exited, its modules can no longer be read */
	if (kind == DCG_CALL)
		(void)dcg_sym(d->pid, name);
	struct dcg_rec *r = &d->r[d->nr++];
	r->kind = (uint8_t)kind;
	r->sig = 0;
	r->unwound = 0;
	r->depth = depth;
	r->ns = d->now;
	r->from = from;
	r->to = to;
	r->name = name;
	return 1;
}

/* The held call record of a PLT call resolved lazily, in its place. */
void dcg_emit_held(struct dthread *d, uint32_t depth, uint64_t from, uint64_t to, uint64_t ns)
{
	size_t at = d->hold;

	d->hold = NO_HOLD;
	if (dcg_probes_wanted()) {
		size_t n = d->nr;
		d->nr = at; /* kept only to be fired, never printed */
		dcg_fire_event(d, DCG_CALL, depth, from, to, to);
		for (size_t i = at; i < n && d->on; i++)
			dcg_fire_event(d, d->r[i].kind, d->r[i].depth, d->r[i].from, d->r[i].to,
				       d->r[i].name);
		return;
	}
	if (!dcg_emit(d, DCG_CALL, depth, from, to, to) || at >= d->nr)
		return;
	struct dcg_rec r = d->r[d->nr - 1];
	memmove(&d->r[at + 1], &d->r[at], (d->nr - 1 - at) * sizeof r);
	r.ns = ns;
	d->r[at] = r;
}

/* ---- printing ---- */

/* The call-graph name of a, whole if memory allows. */
static const char *name_of(struct _stp_symtab *st, uint64_t a)
{
	if (!name && !(name = malloc(name_cap = 256)))
		return name_cap = 0, "?";
	for (;;) {
		size_t n;
		if (st)
			n = _stp_sym_cgname(st, a, name, name_cap);
		else
			n = (size_t)snprintf(name, name_cap, "0x%" PRIx64, a);
		char *v = n + 1 < name_cap ? NULL : realloc(name, 2 * name_cap);
		if (!v)
			return name;
		name = v;
		name_cap *= 2;
	}
}

void dcg_flush_thread(struct dthread *d)
{
	struct _stp_symtab *st = d->nr ? dcg_symtab_of(d->pid) : NULL;
	size_t upto = d->hold < d->nr ? d->hold : d->nr;
	int k = upto && dcg_run_open() == 0;
	struct dcg_sink_thread th = {d->pid, d->tid, d->comm};

	if (k)
		dcg_run_thread(&th);
	dcg_plain_fn *plain = k ? dcg_run_plain() : NULL;
	const struct _stp_syminfo *si = NULL;
	const char *nm = NULL;
	size_t nm_len = 0;
	uint64_t si_of = 0;
	for (size_t i = 0; k && i < upto; i++) {
		const struct dcg_rec *r = &d->r[i];
		/* a call and its return name the same function */
		if (!nm || si_of != r->name) {
			si = st ? _stp_sym_lookup(st, r->name) : NULL;
			si_of = r->name;
			if (!(nm = _stp_sym_cgname_kept(si, &nm_len)))
				nm = name_of(st, r->name), nm_len = strlen(nm);
		}
		if (plain && !r->sig) { /* and the plain records after it of this name */
			const struct dcg_rec *end = d->r + upto, *run = r;
			while (++r < end && r->name == si_of && !r->sig)
				;
			plain(&th, nm, nm_len, run, (size_t)(r - run));
			i = (size_t)(r - d->r) - 1;
			continue;
		}
		struct dcg_sink_rec sr = {
		    .kind = r->kind == DCG_CALL ? DCG_REC_CALL : DCG_REC_RETURN,
		    .thread = &th,
		    .depth = r->depth,
		    .ns = r->ns,
		    .mono_ns = (uint64_t)d->t0 + r->ns,
		    .addr = r->name,
		    .func = si ? si->name : NULL,
		    .module = si ? si->module : NULL,
		    .is_main = si && si->is_main,
		    .from = r->from,
		    .to = r->to,
		    .sig = r->sig,
		    .unwound = r->unwound,
		};
		sr.name = nm;
		sr.name_len = nm_len;
		dcg_run_record(&sr);
	}
	if (k) /* plain()'s lines, before any handler prints */
		dcg_out_flush();
	if (d->nr > upto && upto)
		memmove(d->r, d->r + upto, (d->nr - upto) * sizeof *d->r);
	d->nr -= upto;
	if (d->hold != NO_HOLD)
		d->hold -= upto;
}

void dcg_records_stop(struct dthread *d, int64_t ns)
{
	struct dcg_sink_thread th = {d->pid, d->tid, d->comm};
	uint64_t t = ns > d->t0 ? (uint64_t)(ns - d->t0) : 0;

	if (t < d->now) /* never before the thread's last record */
		t = d->now;
	dcg_flush_thread(d);
	if (d->nf)
		dcg_run_stop(&th, t, (uint64_t)d->t0 + t);
}

void _stp_dcg_flush_all(void)
{
	for (size_t i = 0; i < dcg_nthreads; i++) {
		struct dthread *d = dcg_threads[i];
		/* events a mechanism still holds come first */
		void (*flush)(struct dthread *) = !d->on ? NULL
		    : d->mech->flush			 ? d->mech->flush
							 : d->mech->drain;
		if (flush)
			flush(d);
		dcg_flush_thread(d);
	}
}
