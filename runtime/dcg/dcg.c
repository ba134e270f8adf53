/* The dynamic call graph's core (see dcg.h): its threads, the table of
 * mechanisms (mech.h), switching tracing on and off, the limits, memory
 * that changed, and the end of the run with its -v report. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "dcg.h"
#include "dcg_internal.h"
#include "sink_run.h"
#include "lang/stp_internal.h"
#include "lang/debug.h"
#include "sym/symbols.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct dthread **dcg_threads;
size_t dcg_nthreads;

/* Limits (dynamic_call_graph_max_depth/_leaf/_exclude). */
int64_t dcg_max_depth = -1;
char **dcg_leafpat, **dcg_exclpat;
size_t dcg_nleaf, dcg_nexcl;

uint64_t dcg_n_stops, dcg_n_calls, dcg_n_rets;
uint64_t dcg_n_other; /* stops of untraced threads at the sites */

/* ---- the mechanisms: one line each ---- */

extern const struct dcg_mech dcg_mech_breakpoint, dcg_mech_blockstep, dcg_mech_singlestep,
    dcg_mech_translate;
static const struct dcg_mech *const mechs[] = {
    &dcg_mech_breakpoint,
    &dcg_mech_blockstep,
    &dcg_mech_singlestep,
    &dcg_mech_translate,
};
#define NMECHS (sizeof mechs / sizeof *mechs)

static const struct dcg_mech *mech; /* of this run, once chosen */
/* For -v: how it was chosen, and what auto passed over, with why. */
static char how_chosen[512];

int64_t dcg_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* What the script's dynamic_call_graph handlers need (pass 2's verdict,
 * given at each switch-on). */
static int capture;
static char *stop_why;

void _stp_dcg_needs(struct _stp_context *c, int64_t cap, const char *stop)
{
	(void)c;
	capture = (int)cap;
	if (stop && !stop_why)
		stop_why = strdup(stop);
}

int dcg_capture(void)
{
	return capture;
}

const char *dcg_stop_why(void)
{
	return stop_why;
}

const char *dcg_mech_name(void)
{
	return mech ? mech->name : NULL;
}

const struct dcg_mech *dcg_mech_named(const char *name)
{
	for (size_t i = 0; name && i < NMECHS; i++)
		if (!strcmp(name, mechs[i]->name))
			return mechs[i];
	return NULL;
}

/* auto: the usable mechanism of the lowest rank; what it passed over
 * goes to how_chosen. */
static const struct dcg_mech *pick_auto(void)
{
	char why[256];
	const size_t head = (size_t)snprintf(how_chosen, sizeof how_chosen, "chosen by auto");
	size_t n = head;

	for (int rank = 1; rank <= 16; rank++)
		for (size_t i = 0; i < NMECHS; i++) {
			const struct dcg_mech *m = mechs[i];
			if (m->auto_rank != rank)
				continue;
			why[0] = '\0';
			if (!m->usable || m->usable(why, sizeof why)) {
				if (n < sizeof how_chosen && m->usable)
					snprintf(how_chosen + n, sizeof how_chosen - n,
						 "%s%s's self-test passed", n > head ? ", " : ": ",
						 m->name);
				return m;
			}
			_stp_dbg(STP_DBG_DCG, 1, "auto: %s cannot run here: %s", m->name, why);
			if (n < sizeof how_chosen)
				n += (size_t)snprintf(how_chosen + n, sizeof how_chosen - n,
						      "%s%s cannot run here (%s)",
						      n > head ? ", " : ": ", m->name, why);
		}
	return &dcg_mech_breakpoint;
}

const struct dcg_mech *dcg_mech_pick(const char *m)
{
	const char *env = getenv("STAP_DCG_MECHANISM");

	if (mech)
		return mech;
	if (env && *env)
		m = env;
	if ((mech = dcg_mech_named(m))) {
		snprintf(how_chosen, sizeof how_chosen, "chosen by %s",
			 env && *env ? "STAP_DCG_MECHANISM" : "-D STP_DCG_MECHANISM");
		_stp_dbg(STP_DBG_DCG, 1, "mechanism %s (chosen)", mech->name);
		return mech;
	}
	if (m && *m && strcmp(m, "auto")) {
		char names[256] = "auto";
		size_t n = strlen(names);
		for (size_t i = 0; i < NMECHS && n < sizeof names; i++)
			n += (size_t)snprintf(names + n, sizeof names - n, ", %s", mechs[i]->name);
		_stp_msg_warn("dynamic call graph: unknown mechanism '%s' (%s): using auto", m,
			      names);
	}
	mech = pick_auto();
	_stp_dbg(STP_DBG_DCG, 1, "mechanism %s (auto)", mech->name);
	return mech;
}

/* Is tracing on in another thread of pid? */
static int pid_traced(pid_t pid)
{
	for (size_t i = 0; i < dcg_nthreads; i++)
		if (dcg_threads[i]->on && dcg_threads[i]->pid == pid)
			return 1;
	return 0;
}

struct dthread *dcg_find_thread(pid_t tid, int create)
{
	for (size_t i = 0; i < dcg_nthreads; i++)
		if (dcg_threads[i]->tid == tid)
			return dcg_threads[i];
	if (!create)
		return NULL;
	struct dthread **v = realloc(dcg_threads, (dcg_nthreads + 1) * sizeof *v);
	if (!v)
		return NULL;
	dcg_threads = v;
	struct dthread *d = calloc(1, sizeof *d);
	if (!d)
		return NULL;
	d->tid = tid;
	d->hold = NO_HOLD;
	dcg_threads[dcg_nthreads++] = d;
	return d;
}

/* ---- on and off ---- */

int dcg_thread_on(struct dthread *d, uint64_t pc, uint64_t sp)
{
	const struct dcg_mech *m = dcg_mech_pick(NULL);
	int rc;

	d->mech = m; /* it may hand the thread over (dcg_mech_switch) */
	if ((rc = m->thread_on(d, pc)) < 0) {
		_stp_dbg(STP_DBG_DCG, 1, "thread %d: %s cannot trace it: %s", (int)d->tid, m->name,
			 strerror(-rc));
		return rc;
	}
	struct dcg_event e = {.kind = DCG_EV_ON, .to = pc, .sp = sp, .ns = dcg_now_ns()};
	dcg_event(d, &e);
	_stp_dbg(STP_DBG_DCG, 1, "thread %d: on at 0x%" PRIx64 " (%s)", (int)d->tid, pc,
		 d->mech->name);
	return 0;
}

int dcg_mech_switch(struct dthread *d, const struct dcg_mech *to, uint64_t pc)
{
	int rc = to->thread_on(d, pc);

	_stp_dbg(STP_DBG_DCG, 1, "thread %d: handed over to %s at 0x%" PRIx64 "%s", (int)d->tid,
		 to->name, pc, rc < 0 ? ": failed" : "");
	if (rc < 0)
		return rc;
	d->mech = to;
	return 0;
}

void dcg_thread_off(struct dthread *d, enum dcg_off how)
{
	int was_on = d->on;

	/* what the mechanism still holds happened while on */
	if (was_on && d->mech->drain)
		d->mech->drain(d);
	d->on = 0;
	if (was_on) {
		d->mech->thread_off(d, how, !pid_traced(d->pid));
		_stp_dbg(STP_DBG_DCG, 1, "thread %d: off (%s)", (int)d->tid,
			 how == DCG_OFF_SCRIPT	   ? "script"
			     : how == DCG_OFF_GONE ? "exited"
			     : how == DCG_OFF_EXEC ? "exec"
						   : "end of run");
	}
	d->t = NULL;
	struct dcg_event e = {.kind = DCG_EV_OFF, .ns = dcg_now_ns()};
	dcg_event(d, &e);
}

void dcg_new_thread(struct _stp_pt_thread *t)
{
	for (size_t i = 0; i < NMECHS; i++)
		if (mechs[i]->thread_start)
			mechs[i]->thread_start(t);
}

void dcg_thread_exit(pid_t tid)
{
	for (size_t i = 0; i < NMECHS; i++)
		if (mechs[i]->thread_exit)
			mechs[i]->thread_exit(tid);
}

/* What was learnt about pid's code and symbols may be wrong now (every
 * mechanism is told: one that traced no thread has nothing to forget). */
void dcg_mem_changed(pid_t pid, struct _stp_pt_thread *t, enum dcg_mem what)
{
	if (what == DCG_MEM_EXEC)
		for (size_t i = 0; i < dcg_nthreads; i++)
			if (dcg_threads[i]->pid == pid && dcg_threads[i]->on)
				dcg_thread_off(dcg_threads[i], DCG_OFF_EXEC);
	for (size_t i = 0; i < NMECHS; i++)
		if (mechs[i]->mem_changed)
			mechs[i]->mem_changed(pid, t, what);
	dcg_decodings_drop(pid);
	if (what != DCG_MEM_LIBS)
		return;
	/* records are named from the symbol cache: print them first */
	for (size_t i = 0; i < dcg_nthreads; i++)
		if (dcg_threads[i]->pid == pid)
			dcg_flush_thread(dcg_threads[i]);
}

void dcg_code_changed(pid_t pid, uint64_t lo, uint64_t hi)
{
	for (size_t i = 0; i < dcg_nthreads; i++)
		if (dcg_threads[i]->pid == pid)
			dcg_flush_thread(dcg_threads[i]);
	dcg_decodings_drop_range(pid, lo, hi);
	_stp_sym_unmap(pid, lo, hi);
}

/* ---- the script side ---- */

void _stp_dcg_limit(int what, int64_t n, const char *pattern)
{
	char ***v = what == 1 ? &dcg_leafpat : &dcg_exclpat;
	size_t *nv = what == 1 ? &dcg_nleaf : &dcg_nexcl;

	if (what == 0) {
		dcg_max_depth = n < 0 ? -1 : n;
		return;
	}
	if (!pattern || !*pattern)
		return;
	char **w = realloc(*v, (*nv + 1) * sizeof *w);
	if (!w)
		return;
	*v = w;
	if ((w[*nv] = strdup(pattern)))
		(*nv)++;
}

/* ---- the end of the run ---- */

static void report(void)
{
	char how[512] = "";

	if (mech->report)
		mech->report(how, sizeof how);
	fprintf(stderr,
		"dynamic call graph: mechanism %s%s, %" PRIu64 " stops, %" PRIu64 " calls, %" PRIu64
		" returns, %.2f stops per traced call",
		mech->name, how, dcg_n_stops, dcg_n_calls, dcg_n_rets,
		dcg_n_calls ? (double)dcg_n_stops / (double)dcg_n_calls : 0.0);
	if (dcg_n_other)
		fprintf(stderr, "; %" PRIu64 " stops of other threads at its breakpoints",
			dcg_n_other);
	fprintf(stderr, "; %s\n", how_chosen);
	dcg_run_calibration(how, sizeof how);
	if (how[0])
		fprintf(stderr, "dynamic call graph: %s\n", how);
}

void _stp_dcg_finish(int verbose)
{
	int traced = dcg_nthreads > 0;

	for (size_t i = 0; i < dcg_nthreads; i++) {
		dcg_thread_off(dcg_threads[i], DCG_OFF_END);
		free(dcg_threads[i]->f);
		free(dcg_threads[i]->r);
		free(dcg_threads[i]);
	}
	free(dcg_threads);
	dcg_threads = NULL;
	dcg_nthreads = 0;
	const char *rep = getenv("STAP_DCG_REPORT");
	if (traced && mech && (verbose >= 1 || (rep && *rep == '1')))
		report();
	dcg_decode_free();
	for (size_t i = 0; i < NMECHS; i++)
		if (mechs[i]->finish)
			mechs[i]->finish();
	for (size_t i = 0; i < dcg_nleaf; i++)
		free(dcg_leafpat[i]);
	for (size_t i = 0; i < dcg_nexcl; i++)
		free(dcg_exclpat[i]);
	free(dcg_leafpat);
	free(dcg_exclpat);
	dcg_leafpat = dcg_exclpat = NULL;
	dcg_nleaf = dcg_nexcl = 0;
	dcg_max_depth = -1;
	mech = NULL;
	how_chosen[0] = '\0';
	dcg_probes_reset();
	dcg_records_finish();
	dcg_n_stops = dcg_n_calls = dcg_n_rets = dcg_n_other = 0;
}
