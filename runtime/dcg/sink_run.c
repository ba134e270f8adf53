/* The layer between the call graph's core and its formats (sink_run.h).
 *
 * The format and the output are chosen once, at the first switch-on: by
 * the script (dynamic_call_graph_format / _output in a begin probe), else
 * by -D STP_DCG_FORMAT / STP_DCG_OUTPUT, else by STAP_DCG_FORMAT in the
 * environment; a format with a file of its own (chrome, folded, ...)
 * writes ustap-dcg.EXT when no output is given, and says so at the end.
 *
 * Each thread's open frames are kept here (names in a per-thread arena,
 * so a call costs no allocation) to give returns their duration and self
 * time, and to close what is still open when tracing stops. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "sink_run.h"
#include "sink_out.h"
#include "lang/stp_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- the choice ---- */

static struct {
	const struct dcg_sink *sink;
	const char *option;
	int by_script;	   /* dynamic_call_graph_format() was called */
	int out_by_script; /* dynamic_call_graph_output() opened the output */
	int default_file;  /* the output is ustap-dcg.EXT, named by us */
	int durations;	   /* -1: not set by the script */
	int64_t ring;	   /* flight recorder: records per thread (0: off; -1: not set) */
	int raw;	   /* raw times, no overhead correction (-1: not set) */
	int calibrated;	   /* overhead measured (once, at the first record) */
	uint64_t overhead; /* ns subtracted per event */
	char calib_how[160];
	int resolved; /* chosen; no more changes */
	int begun;    /* 1: the sink's begin ran; -1: it failed */
} cfg = {.durations = -1, .ring = -1, .raw = -1};

const char *dcg_sink_option(void)
{
	return cfg.option ? cfg.option : "";
}

int dcg_sink_durations(void)
{
	return cfg.durations > 0;
}

static void names_of_formats(char *dst, size_t len)
{
	size_t n = 0;

	dst[0] = '\0';
	for (unsigned i = 0; i < dcg_sink_count; i++)
		n += (size_t)snprintf(dst + n, n < len ? len - n : 0, "%s%s", i ? ", " : "",
				      dcg_sink_table[i]->name);
}

/* NAME or NAME:OPTION: 0 and its sink and option, else -1 and why. */
static int parse_format(const char *text, const struct dcg_sink **sink, const char **option,
			char *why, size_t whylen)
{
	const char *colon = strchr(text, ':');
	size_t nl = colon ? (size_t)(colon - text) : strlen(text);
	char names[256];

	for (unsigned i = 0; i < dcg_sink_count; i++) {
		const struct dcg_sink *k = dcg_sink_table[i];
		if (strlen(k->name) != nl || strncmp(k->name, text, nl))
			continue;
		*sink = k;
		*option = k->options ? k->options[0] : "";
		if (!colon)
			return 0;
		for (size_t j = 0; k->options && k->options[j]; j++)
			if (!strcmp(k->options[j], colon + 1)) {
				*option = k->options[j];
				return 0;
			}
		size_t n = 0;
		names[0] = '\0';
		for (size_t j = 0; k->options && k->options[j]; j++)
			if (*k->options[j]) /* "": the format alone */
				n += (size_t)snprintf(names + n,
						      n < sizeof names ? sizeof names - n : 0,
						      "%s%s", n ? ", " : "", k->options[j]);
		snprintf(why, whylen, "unknown option '%s' of format %s (%s)", colon + 1, k->name,
			 k->options ? names : "it has none");
		return -1;
	}
	names_of_formats(names, sizeof names);
	snprintf(why, whylen, "unknown output format '%.*s' (%s)", (int)nl, text, names);
	return -1;
}

/* An error of the script's call (c), or a message when there is none. */
static void report(struct _stp_context *c, const char *why)
{
	if (c)
		_stp_error(c, "dynamic call graph: %s", why);
	else
		_stp_msg_error("dynamic call graph: %s", why);
}

static int too_late(struct _stp_context *c, const char *what)
{
	char why[160];

	if (!cfg.resolved)
		return 0;
	snprintf(why, sizeof why,
		 "%s must be called before tracing is first switched on (in a "
		 "begin probe)",
		 what);
	report(c, why);
	return 1;
}

void _stp_dcg_format(struct _stp_context *c, const char *text)
{
	const struct dcg_sink *k;
	const char *opt;
	char why[512];

	if (too_late(c, "dynamic_call_graph_format"))
		return;
	if (parse_format(text ? text : "", &k, &opt, why, sizeof why) < 0) {
		report(c, why);
		return;
	}
	cfg.sink = k;
	cfg.option = opt;
	cfg.by_script = 1;
}

static int open_output(struct _stp_context *c, const char *path)
{
	char why[512];
	int rc;

	if (!*path) {
		report(c, "the output file name is empty (\"-\": stap's output)");
		return -1;
	}
	if ((rc = dcg_out_open(path)) < 0) {
		snprintf(why, sizeof why, "cannot open '%s' for writing: %s", path, strerror(-rc));
		report(c, why);
		return -1;
	}
	return 0;
}

void _stp_dcg_output(struct _stp_context *c, const char *path)
{
	if (too_late(c, "dynamic_call_graph_output"))
		return;
	if (open_output(c, path ? path : "") == 0) {
		cfg.out_by_script = 1;
		cfg.default_file = 0;
	}
}

void _stp_dcg_sink_opt(struct _stp_context *c, int what, int64_t v)
{
	if (what == 0) {
		cfg.durations = v != 0;
		return;
	}
	if (what == 2) {
		if (!too_late(c, "dynamic_call_graph_raw_times"))
			cfg.raw = v != 0;
		return;
	}
	if (too_late(c, "dynamic_call_graph_flight_recorder"))
		return;
	if (v < 0 || v > (1 << 24)) {
		report(c, "the flight recorder keeps 0 (off) to 16777216 records per thread");
		return;
	}
	cfg.ring = v;
}

/* The choice made, from what the script, -D and the environment say. */
static int resolve(struct _stp_context *c, const char *fmt, const char *out, int64_t durations,
		   int64_t ring, int64_t raw)
{
	const char *env = getenv("STAP_DCG_FORMAT");
	char why[512];

	if (cfg.resolved)
		return 0;
	if (!cfg.by_script && fmt && *fmt) {
		if (parse_format(fmt, &cfg.sink, &cfg.option, why, sizeof why) < 0) {
			char msg[600];
			snprintf(msg, sizeof msg, "-D STP_DCG_FORMAT: %s", why);
			report(c, msg);
			return -1;
		}
	} else if (!cfg.by_script && env && *env) {
		if (parse_format(env, &cfg.sink, &cfg.option, why, sizeof why) < 0) {
			_stp_msg_warn("dynamic call graph: STAP_DCG_FORMAT: %s: using %s", why,
				      dcg_sink_table[0]->name);
			cfg.sink = NULL;
		}
	}
	if (!cfg.sink) {
		cfg.sink = dcg_sink_table[0];
		cfg.option = cfg.sink->options ? cfg.sink->options[0] : "";
	}
	if (!cfg.out_by_script && out && *out) {
		if (open_output(c, out) < 0)
			return -1;
	} else if (!cfg.out_by_script && cfg.sink->ext) {
		char name[64];
		snprintf(name, sizeof name, "ustap-dcg.%s", cfg.sink->ext);
		if (open_output(c, name) < 0)
			return -1;
		cfg.default_file = 1;
	}
	if (cfg.durations < 0)
		cfg.durations = durations > 0;
	if (cfg.ring < 0)
		cfg.ring = ring > 0 && ring <= (1 << 24) ? ring : 0;
	if (cfg.raw < 0)
		cfg.raw = raw != 0;
	cfg.resolved = 1;
	return 0;
}

void _stp_dcg_sink_defaults(struct _stp_context *c, const char *fmt, const char *out,
			    int64_t durations, int64_t ring, int64_t raw)
{
	if (!cfg.resolved)
		(void)resolve(c, fmt, out, durations, ring, raw);
}

/* ---- the open frames of each thread ---- */

struct lframe {
	uint32_t depth;
	int sig, is_main;
	uint64_t ns, child, addr;
	size_t name, func, module; /* offsets in the arena; (size_t)-1: NULL */
};

struct lthread {
	struct dcg_sink_thread th;
	char comm[32];
	struct lframe *f;
	size_t n, cap;
	struct dcg_buf arena;	     /* the open frames' names, innermost last */
	uint64_t last_ns, last_mono; /* of its last record (raw) */
	/* the corrected clock: at the last record, raw and corrected */
	uint64_t raw_at, cor_at, t0;
	int clocked;
};

static struct dcg_tmap threads = {.size = sizeof(struct lthread)};

static void lthread_free(void *v)
{
	struct lthread *t = v;
	free(t->f);
	dcg_buf_free(&t->arena);
}

static size_t arena_put(struct dcg_buf *a, const char *s)
{
	size_t at = a->n;

	if (!s)
		return (size_t)-1;
	dcg_buf_put(a, s, strlen(s) + 1);
	return a->oom ? (size_t)-1 : at;
}

static const char *arena_at(const struct dcg_buf *a, size_t at)
{
	return at == (size_t)-1 || !a->p ? NULL : a->p + at;
}

static int sink_ready(void)
{
	if (!cfg.begun)
		cfg.begun = cfg.sink->begin && cfg.sink->begin() ? -1 : 1;
	return cfg.begun > 0;
}

/* ---- overhead-corrected times ---- */

/* The overhead is measured once, before the first record goes through
 * the layer (the mechanism is chosen by then); STAP_DCG_OVERHEAD_NS in
 * the environment gives the figure instead (for tests). */
static void calibrate(void)
{
	const char *env = getenv("STAP_DCG_OVERHEAD_NS");

	cfg.calibrated = 1;
	if (env && *env) {
		cfg.overhead = strtoull(env, NULL, 10);
		snprintf(cfg.calib_how, sizeof cfg.calib_how, "STAP_DCG_OVERHEAD_NS");
		return;
	}
	int64_t ns = dcg_run_calibrate(cfg.calib_how, sizeof cfg.calib_how);
	cfg.overhead = ns > 0 ? (uint64_t)ns : 0;
}

/* t's corrected clock at raw (ns since tracing began in it): each
 * interval between two of its records loses the cost of one event,
 * never below zero. The first record keeps its time. */
static uint64_t corrected(struct lthread *t, uint64_t raw)
{
	if (!t->clocked) {
		t->clocked = 1;
		t->raw_at = t->cor_at = raw;
		return raw;
	}
	uint64_t d = raw > t->raw_at ? raw - t->raw_at : 0;
	t->raw_at = raw;
	t->cor_at += d > cfg.overhead ? d - cfg.overhead : 0;
	return t->cor_at;
}

void dcg_run_calibration(char *how, size_t len)
{
	if (!cfg.resolved)
		how[0] = '\0';
	else if (cfg.raw > 0)
		snprintf(how, len, "raw times (no overhead correction)");
	else if (cfg.calibrated)
		snprintf(how, len, "%llu ns subtracted per event (%s)",
			 (unsigned long long)cfg.overhead, cfg.calib_how);
	else
		how[0] = '\0';
}

/* A return made up for t's innermost frame, at ns / mono_ns. */
static void close_top(struct lthread *t, uint64_t ns, uint64_t mono_ns)
{
	struct lframe *f = &t->f[t->n - 1];
	struct dcg_sink_rec r = {
	    .kind = DCG_REC_RETURN,
	    .thread = &t->th,
	    .depth = f->depth,
	    .ns = ns,
	    .mono_ns = mono_ns,
	    .addr = f->addr,
	    .name = arena_at(&t->arena, f->name),
	    .func = arena_at(&t->arena, f->func),
	    .module = arena_at(&t->arena, f->module),
	    .is_main = f->is_main,
	    .matched = 1,
	    .call_sig = f->sig,
	    .closed = 1,
	};
	if (!r.name)
		r.name = "?";
	r.dur_ns = ns > f->ns ? ns - f->ns : 0;
	r.self_ns = r.dur_ns > f->child ? r.dur_ns - f->child : 0;
	if (t->n > 1)
		t->f[t->n - 2].child += r.dur_ns;
	t->arena.n = f->name == (size_t)-1 ? t->arena.n : f->name;
	t->n--;
	cfg.sink->record(&r);
}

static void pop_quietly(struct lthread *t)
{
	struct lframe *f = &t->f[--t->n];
	if (f->name != (size_t)-1)
		t->arena.n = f->name;
}

/* The thread of the last record (a batch is one thread's). */
static struct lthread *last_t;

static void deliver(struct dcg_sink_rec *r)
{
	const struct dcg_sink_thread *th = r->thread;
	int closes = cfg.sink->closes_open;

	r->matched = r->call_sig = 0;
	r->dur_ns = r->self_ns = 0;
	r->closed = 0;
	if (!sink_ready())
		return;
	if (!closes && cfg.durations <= 0) { /* the plain tree: as the records come */
		cfg.sink->record(r);
		return;
	}
	struct lthread *t = last_t && last_t->th.tid == th->tid && last_t->th.pid == th->pid
	    ? last_t
	    : dcg_tmap_get(&threads, th->pid, th->tid, 1);
	last_t = t;
	if (t && !t->th.tid) {
		t->th = *th;
		snprintf(t->comm, sizeof t->comm, "%s", th->execname ? th->execname : "");
		t->th.execname = t->comm;
	}
	/* ns: the time of durations and made-up returns, corrected unless
	 * raw times were asked for; the record's own time too, unless its
	 * format shows the raw clock (the tree's time column) */
	uint64_t ns = r->ns;
	if (t) {
		t->last_ns = r->ns;
		t->last_mono = r->mono_ns;
		t->t0 = r->mono_ns - r->ns;
		if (cfg.raw <= 0) {
			if (!cfg.calibrated)
				calibrate();
			ns = corrected(t, r->ns);
			if (!cfg.sink->raw_clock) {
				r->ns = ns;
				r->mono_ns = t->t0 + ns;
			}
		}
	}
	uint64_t mono_ns = t ? t->t0 + ns : r->mono_ns;
	if (t && r->kind == DCG_REC_CALL) {
		/* a call at the depth of open frames: they are over */
		while (t->n && t->f[t->n - 1].depth >= r->depth)
			closes ? close_top(t, ns, mono_ns) : pop_quietly(t);
		if (dcg_grow(&t->f, t->n, &t->cap, sizeof *t->f) == 0) {
			struct lframe *f = &t->f[t->n++];
			f->depth = r->depth;
			f->sig = r->sig;
			f->is_main = r->is_main;
			f->ns = ns;
			f->child = 0;
			f->addr = r->addr;
			f->name = arena_put(&t->arena, r->name);
			f->func = arena_put(&t->arena, r->func);
			f->module = arena_put(&t->arena, r->module);
		}
	} else if (t) {
		while (t->n && t->f[t->n - 1].depth > r->depth)
			closes ? close_top(t, ns, mono_ns) : pop_quietly(t);
		if (t->n && t->f[t->n - 1].depth == r->depth) {
			struct lframe *f = &t->f[t->n - 1];
			r->matched = 1;
			r->call_sig = f->sig;
			r->dur_ns = ns > f->ns ? ns - f->ns : 0;
			r->self_ns = r->dur_ns > f->child ? r->dur_ns - f->child : 0;
			if (t->n > 1)
				t->f[t->n - 2].child += r->dur_ns;
			pop_quietly(t);
		}
	}
	cfg.sink->record(r);
}

static void thread_to_sink(const struct dcg_sink_thread *th)
{
	if (sink_ready() && cfg.sink->thread)
		cfg.sink->thread(th);
}

static void stop_thread(const struct dcg_sink_thread *th, uint64_t ns, uint64_t mono_ns)
{
	struct lthread *t = dcg_tmap_get(&threads, th->pid, th->tid, 0);

	if (!t)
		return;
	if (t->n && cfg.sink->closes_open && sink_ready()) {
		if (cfg.raw <= 0 && t->clocked) {
			ns = corrected(t, ns);
			mono_ns = t->t0 + ns;
		}
		thread_to_sink(&t->th);
		while (t->n)
			close_top(t, ns, mono_ns);
	}
	last_t = NULL;
	dcg_tmap_del(&threads, th->pid, th->tid, lthread_free);
}

/* ---- for records.c ---- */

int dcg_run_open(void)
{
	if (!cfg.resolved && resolve(NULL, NULL, NULL, 0, 0, 0) < 0)
		return -1;
	return cfg.ring > 0 || sink_ready() ? 0 : -1;
}

void dcg_run_thread(const struct dcg_sink_thread *th)
{
	if (cfg.ring <= 0)
		thread_to_sink(th);
}

void dcg_run_record(struct dcg_sink_rec *r)
{
	if (cfg.ring > 0)
		dcg_ring_record(r, (unsigned)cfg.ring);
	else
		deliver(r);
}

dcg_plain_fn *dcg_run_plain(void)
{
	/* as deliver() gives them to such a format: as they come */
	if (cfg.ring > 0 || cfg.durations > 0 || cfg.sink->closes_open || !sink_ready())
		return NULL;
	return cfg.sink->plain;
}

void dcg_run_stop(const struct dcg_sink_thread *th, uint64_t ns, uint64_t mono_ns)
{
	if (!cfg.resolved)
		return;
	if (cfg.ring > 0)
		dcg_ring_stop(th, ns, mono_ns);
	else
		stop_thread(th, ns, mono_ns);
}

static uint64_t mono_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void (*before_snapshot)(pid_t pid, pid_t tid, int all);

unsigned dcg_run_ring_size(void)
{
	return cfg.resolved && cfg.ring > 0 ? (unsigned)cfg.ring : 0;
}

void dcg_run_on_snapshot(void (*fn)(pid_t pid, pid_t tid, int all))
{
	before_snapshot = fn;
}

int64_t _stp_dcg_snapshot(struct _stp_context *c, int all)
{
	if (cfg.ring <= 0) {
		report(c,
		       "dynamic_call_graph_snapshot: the flight recorder is off "
		       "(dynamic_call_graph_flight_recorder(N) or -D STP_DCG_RING=N)");
		return 0;
	}
	if (!cfg.resolved || !sink_ready()) /* never switched on yet: nothing kept */
		return 0;
	if (before_snapshot)
		before_snapshot((pid_t)_stp_ctx_pid(c), (pid_t)_stp_ctx_tid(c), all);
	return (int64_t)dcg_ring_snapshot((pid_t)_stp_ctx_pid(c), (pid_t)_stp_ctx_tid(c), all,
					  mono_now(), thread_to_sink, deliver, stop_thread);
}

void dcg_run_finish(void)
{
	int had_file = dcg_out_is_file();
	char *path = had_file ? strdup(dcg_out_path()) : NULL;

	dcg_ring_free();
	/* frames the core did not say were over (none should be): closed at
	 * their thread's last record */
	while (threads.n) {
		struct lthread *t = threads.e[0].v;
		stop_thread(&t->th, t->last_ns, t->last_mono);
	}
	/* nothing traced: a file format still writes a valid, empty file */
	if (had_file && !cfg.begun && (cfg.resolved || resolve(NULL, NULL, NULL, 0, 0, 0) == 0))
		(void)sink_ready();
	if (cfg.begun > 0 && cfg.sink->end)
		cfg.sink->end();
	int rc = dcg_out_close();
	if (rc == 0 && cfg.default_file && path)
		fprintf(stderr,
			"dynamic call graph: %s written to %s (dynamic_call_graph_output() or -D "
			"STP_DCG_OUTPUT=PATH names the file)\n",
			cfg.sink->name, path);
	free(path);
	dcg_tmap_free(&threads, lthread_free);
	last_t = NULL;
	before_snapshot = NULL;
	memset(&cfg, 0, sizeof cfg);
	cfg.durations = -1;
	cfg.ring = -1;
	cfg.raw = -1;
}
