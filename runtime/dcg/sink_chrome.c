/* The call graph as a Chrome / Perfetto trace (the Trace Event Format's
 * JSON), written as the records come: a call is a "B" (begin) event, a
 * return an "E" (end) event of the same name, so the trace never sits in
 * memory. One track per thread, named execname(tid), under its process
 * (pid); times in microseconds of CLOCK_MONOTONIC with three decimals.
 *
 *   {"traceEvents":[
 *   {"ph":"M","pid":4242,"tid":4242,"name":"process_name","args":{"name":"app"}},
 *   {"ph":"M","pid":4242,"tid":4242,"name":"thread_name","args":{"name":"app(4242)"}},
 *   {"ph":"B","pid":4242,"tid":4242,"ts":81532.125,"name":"parse","cat":"app"},
 *   {"ph":"E","pid":4242,"tid":4242,"ts":81540.503,"name":"parse"},
 *   ...
 *   ],"displayTimeUnit":"ns"}
 *
 * Every "B" gets its "E": frames left by longjmp or an exception are
 * closed by the core, each marked by an instant event ("ph":"i",
 * "unwound NAME") at its "E"; those still open when tracing stops (switched off,
 * the thread gone, exit, SIGINT) are closed at that time by the layer. An
 * "E" has the name of its "B" (speedscope matches ends that share a time
 * by name); the category (on the "B") is the module; a signal handler's frame is "NAME (signal
 * SIGX)". No args: speedscope makes them part of the frame's name. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "sink_out.h"
#include "sink_run.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct dcg_buf line, name;
static unsigned long long events;

/* With a file of its own, the events gather here and go out in large
 * writes (one stdio call per event cost as much as the event); on stap's
 * output each is written as it comes, in order with the script's. */
static struct {
	char b[1 << 16];
	size_t n;
	int on;
} ob;

static void ob_flush(void)
{
	if (ob.n)
		dcg_out_write(ob.b, ob.n);
	ob.n = 0;
}

static void put(const void *p, size_t n)
{
	if (!ob.on) {
		dcg_out_write(p, n);
		return;
	}
	if (n > sizeof ob.b - ob.n) {
		ob_flush();
		if (n > sizeof ob.b) {
			dcg_out_write(p, n);
			return;
		}
	}
	memcpy(ob.b + ob.n, p, n);
	ob.n += n;
}

static void put_buf(struct dcg_buf *b)
{
	if (!b->oom)
		put(b->p, b->n);
	b->n = 0;
	b->oom = 0;
}

/* ts in microseconds with three decimals, backwards to end: its start.
 * Two digits at a time. */
static char *put_ts(char *end, uint64_t ns)
{
	static const char d2[] = "00010203040506070809101112131415161718192021222324"
				 "25262728293031323334353637383940414243444546474849"
				 "50515253545556575859606162636465666768697071727374"
				 "75767778798081828384858687888990919293949596979899";
	uint64_t us = ns / 1000;
	unsigned f = (unsigned)(ns % 1000);

	*--end = (char)('0' + f % 10);
	memcpy(end -= 2, d2 + 2 * (f / 10), 2);
	*--end = '.';
	while (us >= 100) {
		memcpy(end -= 2, d2 + 2 * (us % 100), 2);
		us /= 100;
	}
	if (us >= 10)
		memcpy(end -= 2, d2 + 2 * us, 2);
	else
		*--end = (char)('0' + us);
	return end;
}
/* the threads and processes named so far */
static struct dcg_tmap named = {.size = 1};

/* What a "B" or "E" event has before its time, for the thread of the
 * last records: {"ph":"B","pid":P,"tid":T,"ts": */
static struct {
	pid_t pid, tid;
	int set;
	char b[80], e[80];
	size_t b_len, e_len;
} head;

/* What follows the time: ,"name":"NAME","cat":"MODULE"} for a "B" and
 * ,"name":"NAME"} for an "E", escaped once per function and kept in a
 * small table keyed by the record's name and module pointers and signal.
 * Those pointers are valid only during one call (another name may come
 * at the same address later), so a hit is checked against copies of the
 * text too. */
struct tail {
	const char *name_p, *module_p;
	int sig, used;
	char *name, *module; /* copies (module NULL: none) */
	size_t name_len;
	char *b, *e;
	size_t b_len, e_len;
};
#define TAILS 1024
static struct tail tails[TAILS];

static void tail_free(struct tail *t)
{
	free(t->name);
	free(t->module);
	free(t->b);
	free(t->e);
	memset(t, 0, sizeof *t);
}

static int tail_is(const struct tail *t, const struct dcg_sink_rec *r, int sig)
{
	if (!t->used || t->name_p != r->name || t->module_p != r->module || t->sig != sig)
		return 0;
	/* the length the core knows saves a strcmp (names are long) */
	if (r->name_len ? r->name_len != t->name_len || memcmp(t->name, r->name, r->name_len)
			: strcmp(t->name, r->name))
		return 0;
	return r->module ? t->module && !strcmp(t->module, r->module) : !t->module;
}

/* The record's tail, or NULL when out of memory (the caller writes the
 * event the long way). */
static const struct tail *tail_of(const struct dcg_sink_rec *r)
{
	int sig = r->kind == DCG_REC_CALL ? r->sig : r->call_sig;
	uintptr_t k = (uintptr_t)r->name ^ ((uintptr_t)r->module >> 3) ^ (uintptr_t)sig;
	struct tail *t = &tails[(k ^ k >> 10) & (TAILS - 1)];

	if (tail_is(t, r, sig))
		return t;
	tail_free(t);
	struct dcg_buf b = {0};
	dcg_buf_puts(&b, ",\"name\":\"");
	dcg_esc_json(&b, dcg_display_name(&name, r));
	dcg_buf_puts(&b, "\"}");
	t->e_len = b.n;
	t->e = b.oom ? NULL : strdup(dcg_buf_str(&b));
	b.n--; /* the "}" */
	dcg_buf_puts(&b, ",\"cat\":\"");
	dcg_esc_json(&b, r->module ? r->module : "?");
	dcg_buf_puts(&b, "\"}");
	t->b_len = b.n;
	t->b = b.oom ? NULL : strdup(dcg_buf_str(&b));
	dcg_buf_free(&b);
	t->name_len = strlen(r->name);
	t->name = strdup(r->name);
	t->module = r->module ? strdup(r->module) : NULL;
	if (!t->b || !t->e || !t->name || (r->module && !t->module)) {
		tail_free(t);
		return NULL;
	}
	t->name_p = r->name;
	t->module_p = r->module;
	t->sig = sig;
	t->used = 1;
	return t;
}

static void head_of(const struct dcg_sink_thread *th)
{
	if (head.set && head.pid == th->pid && head.tid == th->tid)
		return;
	head.pid = th->pid;
	head.tid = th->tid;
	head.set = 1;
	head.b_len = (size_t)snprintf(head.b, sizeof head.b,
				      "{\"ph\":\"B\",\"pid\":%d,\"tid\":%d,\"ts\":", (int)th->pid,
				      (int)th->tid);
	head.e_len = (size_t)snprintf(head.e, sizeof head.e,
				      "{\"ph\":\"E\",\"pid\":%d,\"tid\":%d,\"ts\":", (int)th->pid,
				      (int)th->tid);
}

static int chrome_begin(void)
{
	static const char opening[] = "{\"traceEvents\":[";

	events = 0;
	ob.n = 0;
	ob.on = dcg_out_is_file();
	put(opening, sizeof opening - 1);
	return 0;
}

static void event_start(const char *ph, pid_t pid, pid_t tid)
{
	line.n = 0;
	dcg_buf_puts(&line, events++ ? ",\n{\"ph\":\"" : "\n{\"ph\":\"");
	dcg_buf_puts(&line, ph);
	dcg_buf_puts(&line, "\",\"pid\":");
	dcg_buf_u64(&line, (uint64_t)pid);
	dcg_buf_puts(&line, ",\"tid\":");
	dcg_buf_u64(&line, (uint64_t)tid);
}

static void event_end(void)
{
	dcg_buf_puts(&line, "}");
	put_buf(&line);
}

static void meta(pid_t pid, pid_t tid, const char *what, const char *text, pid_t paren)
{
	event_start("M", pid, tid);
	dcg_buf_printf(&line, ",\"name\":\"%s\",\"args\":{\"name\":\"", what);
	dcg_esc_json(&line, text);
	if (paren)
		dcg_buf_printf(&line, "(%d)", (int)paren);
	dcg_buf_puts(&line, "\"}");
	event_end();
}

static void chrome_thread(const struct dcg_sink_thread *th)
{
	const char *comm = th->execname ? th->execname : "";

	if (!dcg_tmap_get(&named, th->pid, 0, 0) && dcg_tmap_get(&named, th->pid, 0, 1))
		meta(th->pid, th->pid, "process_name", comm, 0);
	if (!dcg_tmap_get(&named, th->pid, th->tid ? th->tid : -1, 0) &&
	    dcg_tmap_get(&named, th->pid, th->tid ? th->tid : -1, 1))
		meta(th->pid, th->tid, "thread_name", comm, th->tid);
}

static const char *call_ph(const struct dcg_sink_rec *r)
{
	return r->kind == DCG_REC_CALL ? "B" : "E";
}

static void chrome_record(const struct dcg_sink_rec *r)
{
	/* a return whose call was never given (the caller the root returned
	 * to) has no "B" to end */
	if (r->kind == DCG_REC_RETURN && !r->matched)
		return;
	const struct tail *t = tail_of(r);
	if (t) {
		/* the usual way: the thread's head, the time, the tail, made
		 * in place in the buffer when it has room */
		int call = r->kind == DCG_REC_CALL;
		char ts[32], *d = put_ts(ts + sizeof ts, r->mono_ns);
		head_of(r->thread);
		int first = events++ == 0;
		const char *hd = call ? head.b : head.e, *tl = call ? t->b : t->e;
		size_t hl = call ? head.b_len : head.e_len, tsl = (size_t)(ts + sizeof ts - d);
		size_t tll = call ? t->b_len : t->e_len;
		size_t need = 2 + hl + tsl + tll;
		if (ob.on && need > sizeof ob.b - ob.n)
			ob_flush();
		if (ob.on && need <= sizeof ob.b - ob.n) {
			char *o = ob.b + ob.n;
			if (first)
				*o++ = '\n';
			else
				*o++ = ',', *o++ = '\n';
			memcpy(o, hd, hl);
			memcpy(o += hl, d, tsl);
			memcpy(o += tsl, tl, tll);
			ob.n = (size_t)(o + tll - ob.b);
		} else {
			line.n = 0;
			dcg_buf_put(&line, first ? "\n" : ",\n", first ? 1 : 2);
			dcg_buf_put(&line, hd, hl);
			dcg_buf_put(&line, d, tsl);
			dcg_buf_put(&line, tl, tll);
			put_buf(&line);
		}
	} else {
		event_start(call_ph(r), r->thread->pid, r->thread->tid);
		dcg_buf_puts(&line, ",\"ts\":");
		dcg_buf_us(&line, r->mono_ns);
		dcg_buf_puts(&line, ",\"name\":\"");
		dcg_esc_json(&line, dcg_display_name(&name, r));
		dcg_buf_puts(&line, "\"");
		if (r->kind == DCG_REC_CALL) { /* the category: the module */
			dcg_buf_puts(&line, ",\"cat\":\"");
			dcg_esc_json(&line, r->module ? r->module : "?");
			dcg_buf_puts(&line, "\"");
		}
		event_end();
	}
	if (!r->unwound)
		return;
	/* a frame left by longjmp or an exception: marked by an instant
	 * event on the thread's track there (speedscope ignores it) */
	event_start("i", r->thread->pid, r->thread->tid);
	dcg_buf_puts(&line, ",\"ts\":");
	dcg_buf_us(&line, r->mono_ns);
	dcg_buf_puts(&line, ",\"s\":\"t\",\"name\":\"unwound ");
	dcg_esc_json(&line, dcg_display_name(&name, r));
	dcg_buf_puts(&line, "\"");
	event_end();
}

static void chrome_end(void)
{
	static const char fin[] = "\n],\"displayTimeUnit\":\"ns\"}\n";

	put(fin, sizeof fin - 1);
	ob_flush();
	ob.on = 0;
	dcg_buf_free(&line);
	dcg_buf_free(&name);
	dcg_tmap_free(&named, NULL);
	for (size_t i = 0; i < TAILS; i++)
		tail_free(&tails[i]);
	head.set = 0;
}

const struct dcg_sink dcg_sink_chrome = {
    .name = "chrome",
    .begin = chrome_begin,
    .thread = chrome_thread,
    .record = chrome_record,
    .end = chrome_end,
    .ext = "json",
    .closes_open = 1,
};
