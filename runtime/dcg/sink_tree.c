/* The call graph's default output: one thread_indent-style line per
 * record,
 *      12 prog(4242):  -> f
 *      15 prog(4242):   -> g [libc.so.6]
 *      19 prog(4242):   <- g [libc.so.6]
 *      31 prog(4242):  -> handler (signal SIGALRM)
 * (microseconds since tracing began in the thread, execname(tid), one
 * space per level, the name whole however long). With
 * dynamic_call_graph_durations(1), a return whose call was shown says how
 * long the call took: "<- g [libc.so.6] (3.2 us)". "tree:threads" keeps
 * each thread's lines together, written at the end (sink_spool.c). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "sink.h"
#include "sink_out.h"
#include "sink_run.h"
#include "sink_spool.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One line, grown as needed. */
static char *line;
static size_t line_cap;

static int line_fit(size_t n)
{
	size_t cap = line_cap ? line_cap : 1024;

	if (n <= line_cap)
		return 0;
	while (cap < n)
		cap *= 2;
	char *v = realloc(line, cap);
	if (!v)
		return -1;
	line = v;
	line_cap = cap;
	return 0;
}

static int by_thread;

static int tree_begin(void)
{
	by_thread = !strcmp(dcg_sink_option(), "threads");
	return 0;
}

/* "%6lu %s(%d):" without snprintf, which costs about half of staprun's
 * work per record under translate; 0 if it does not fit. */
static int fmt_head(char *buf, size_t len, uint64_t us, const char *comm, int tid)
{
	char num[24], tn[16];
	char *p = dcg_put_u64(num + sizeof num, us);
	char *q = dcg_put_u64(tn + sizeof tn, tid < 0 ? -(uint64_t)tid : (uint64_t)tid);
	size_t nl = (size_t)(num + sizeof num - p), cl = strlen(comm);
	size_t tl = (size_t)(tn + sizeof tn - q), pad = nl < 6 ? 6 - nl : 0;

	if (tid < 0)
		*--q = '-', tl++;
	if (pad + nl + 1 + cl + 1 + tl + 2 >= len)
		return 0;
	char *o = buf;
	memset(o, ' ', pad);
	o += pad;
	memcpy(o, p, nl);
	o += nl;
	*o++ = ' ';
	memcpy(o, comm, cl);
	o += cl;
	*o++ = '(';
	memcpy(o, q, tl);
	o += tl;
	*o++ = ')';
	*o++ = ':';
	return (int)(o - buf);
}

static void tree_record(const struct dcg_sink_rec *r)
{
	char head[96], sig[48] = "";
	int h = fmt_head(head, sizeof head, r->ns / 1000, r->thread->execname, (int)r->thread->tid);

	if (r->sig)
		snprintf(sig, sizeof sig, " (signal SIG%s)",
			 sigabbrev_np(r->sig) ? sigabbrev_np(r->sig) : "?");
	else if (r->kind == DCG_REC_RETURN && r->matched && dcg_sink_durations())
		snprintf(sig, sizeof sig, " (%" PRIu64 ".%" PRIu64 " us)", r->dur_ns / 1000,
			 r->dur_ns % 1000 / 100);
	size_t nl = strlen(r->name), sl = strlen(sig), off = (size_t)h + r->depth + 2;
	if (line_fit(off + nl + sl + 1) < 0)
		return;
	memcpy(line, head, (size_t)h);
	memset(line + h, ' ', r->depth);
	memcpy(line + off - 2, r->kind == DCG_REC_CALL ? "->" : "<-", 2);
	memcpy(line + off, r->name, nl);
	off += nl;
	memcpy(line + off, sig, sl);
	off += sl;
	line[off++] = '\n';
	if (by_thread)
		dcg_spool_write(r->thread, line, off);
	else
		dcg_out_write(line, off);
}

static void tree_end(void)
{
	if (by_thread)
		dcg_spool_end();
	free(line);
	line = NULL;
	line_cap = 0;
}

static const char *const tree_options[] = {"", "threads", NULL};

const struct dcg_sink dcg_sink_tree = {
    .name = "tree",
    .begin = tree_begin,
    .record = tree_record,
    .end = tree_end,
    .options = tree_options,
    .raw_clock = 1,
};
