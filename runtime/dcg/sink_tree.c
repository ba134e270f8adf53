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

/* " comm(tid):" of the last thread: the same for long runs of records. */
static struct {
	pid_t tid;
	char comm[64];
	char text[96];
	size_t len;
	unsigned serial; /* changes with the text */
} who;

/* The whole line head of the last record: the next one is often in the
 * same microsecond. */
static struct {
	uint64_t us;
	unsigned serial; /* who's, when made; 0: none */
	size_t len;
	char text[128];
} head;

static const char *who_of(const char *comm, pid_t tid, size_t *len)
{
	if (who.len && who.tid == tid && !strcmp(who.comm, comm)) {
		*len = who.len;
		return who.text;
	}
	char tn[16], *q = dcg_put_u64(tn + sizeof tn, tid < 0 ? -(uint64_t)tid : (uint64_t)tid);
	size_t cl = strlen(comm), tl = (size_t)(tn + sizeof tn - q);

	if (tid < 0)
		*--q = '-', tl++;
	if (cl >= sizeof who.comm || 1 + cl + 1 + tl + 2 > sizeof who.text)
		return NULL;
	memcpy(who.comm, comm, cl + 1);
	who.tid = tid;
	if (!++who.serial)
		who.serial = 1;
	char *o = who.text;
	*o++ = ' ';
	memcpy(o, comm, cl);
	o += cl;
	*o++ = '(';
	memcpy(o, q, tl);
	o += tl;
	*o++ = ')';
	*o++ = ':';
	who.len = (size_t)(o - who.text);
	*len = who.len;
	return who.text;
}

/* The microseconds right-aligned in 6 columns (or wider), as "%6lu",
 * two digits at a time: the tree's line head is most of its work. */
static size_t put_us(char *o, uint64_t us)
{
	static const char two[] = "00010203040506070809101112131415161718192021222324"
				  "25262728293031323334353637383940414243444546474849"
				  "50515253545556575859606162636465666768697071727374"
				  "75767778798081828384858687888990919293949596979899";
	char num[24], *p = num + sizeof num;

	while (us >= 100) {
		p -= 2;
		memcpy(p, two + 2 * (us % 100), 2);
		us /= 100;
	}
	if (us >= 10) {
		p -= 2;
		memcpy(p, two + 2 * us, 2);
	} else {
		*--p = (char)('0' + us);
	}
	size_t nl = (size_t)(num + sizeof num - p), pad = nl < 6 ? 6 - nl : 0;
	memset(o, ' ', 6);
	memcpy(o + pad, p, nl);
	return pad + nl;
}

/* One line: the head, the indentation, the arrow, the name, suffix. */
static void tree_line(const struct dcg_sink_thread *th, int call, uint32_t depth, uint64_t ns,
		      const char *name, size_t nl, const char *suffix, size_t sl)
{
	size_t wl = 0;
	const char *w = who_of(th->execname, th->tid, &wl);

	if (line_fit(sizeof head.text + depth + 2 + nl + sl + 1) < 0)
		return;
	char *o = line;
	uint64_t us = ns / 1000;
	if (w && (head.serial != who.serial || head.us != us)) {
		head.len = put_us(head.text, us);
		memcpy(head.text + head.len, w, wl);
		head.len += wl;
		head.us = us;
		head.serial = who.serial;
	}
	if (w) { /* else no head, as ever (a name of 64 bytes: none is) */
		memcpy(o, head.text, head.len);
		o += head.len;
	}
	memset(o, ' ', depth);
	o += depth;
	memcpy(o, call ? "->" : "<-", 2);
	o += 2;
	memcpy(o, name, nl);
	o += nl;
	memcpy(o, suffix, sl);
	o += sl;
	*o++ = '\n';
	size_t off = (size_t)(o - line);
	if (by_thread)
		dcg_spool_write(th, line, off);
	else
		dcg_out_write(line, off);
}

static void tree_record(const struct dcg_sink_rec *r)
{
	char sig[48] = "";

	if (r->sig)
		snprintf(sig, sizeof sig, " (signal SIG%s)",
			 sigabbrev_np(r->sig) ? sigabbrev_np(r->sig) : "?");
	else if (r->kind == DCG_REC_RETURN && r->matched && dcg_sink_durations())
		snprintf(sig, sizeof sig, " (%" PRIu64 ".%" PRIu64 " us)", r->dur_ns / 1000,
			 r->dur_ns % 1000 / 100);
	tree_line(r->thread, r->kind == DCG_REC_CALL, r->depth, r->ns, r->name,
		  r->name_len ? r->name_len : strlen(r->name), sig, strlen(sig));
}

static void tree_plain(const struct dcg_sink_thread *th, int call, uint32_t depth, uint64_t ns,
		       const char *name, size_t name_len)
{
	tree_line(th, call, depth, ns, name, name_len, "", 0);
}

static void tree_end(void)
{
	if (by_thread)
		dcg_spool_end();
	free(line);
	line = NULL;
	line_cap = 0;
	who.len = 0;
	head.serial = 0;
}

static const char *const tree_options[] = {"", "threads", NULL};

const struct dcg_sink dcg_sink_tree = {
    .name = "tree",
    .begin = tree_begin,
    .record = tree_record,
    .end = tree_end,
    .options = tree_options,
    .raw_clock = 1,
    .plain = tree_plain,
};
