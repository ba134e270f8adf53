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
#include <string.h>

static struct dcg_buf line, name;
static unsigned long long events;
/* the threads and processes named so far */
static struct dcg_tmap named = {.size = 1};

static int chrome_begin(void)
{
	events = 0;
	dcg_out_puts("{\"traceEvents\":[");
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
	dcg_out_buf(&line);
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

static void chrome_record(const struct dcg_sink_rec *r)
{
	/* a return whose call was never given (the caller the root returned
	 * to) has no "B" to end */
	if (r->kind == DCG_REC_RETURN && !r->matched)
		return;
	event_start(r->kind == DCG_REC_CALL ? "B" : "E", r->thread->pid, r->thread->tid);
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
	dcg_out_puts("\n],\"displayTimeUnit\":\"ns\"}\n");
	dcg_buf_free(&line);
	dcg_buf_free(&name);
	dcg_tmap_free(&named, NULL);
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
