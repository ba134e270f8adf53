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
} who;

/* The whole line head of the last record, who's text after the time:
 * the next one is often in the same microsecond. us: none made (no
 * time is) when who changes. */
#define NO_HEAD UINT64_MAX
static struct {
	uint64_t us;
	size_t len;
	char text[128];
} head = {.us = NO_HEAD};

/* The thread of the batch (tree_thread) while who is its text: its
 * lines skip who_of's comparison. */
static const struct dcg_sink_thread *who_th;

static const char *who_of(const char *comm, pid_t tid, size_t *len)
{
	if (who.len && who.tid == tid && !strcmp(who.comm, comm)) {
		*len = who.len;
		return who.text;
	}
	char tn[16], *q = dcg_put_u64(tn + sizeof tn, tid < 0 ? -(uint64_t)tid : (uint64_t)tid);
	size_t cl = strlen(comm), tl = (size_t)(tn + sizeof tn - q);

	who_th = NULL;
	head.us = NO_HEAD;
	who.len = 0;
	if (tid < 0)
		*--q = '-', tl++;
	if (cl >= sizeof who.comm || 1 + cl + 1 + tl + 2 > sizeof who.text)
		return NULL;
	memcpy(who.comm, comm, cl + 1);
	who.tid = tid;
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

static void make_head(uint64_t us)
{
	head.len = put_us(head.text, us);
	memcpy(head.text + head.len, who.text, who.len);
	head.len += who.len;
	head.us = us;
}

/* The longest head and indentation copied whole, by fixed-size copies
 * (no call of memcpy or memset): most lines are short. */
#define SHORT 32
static const char spaces[SHORT + 1] = "                                ";

/* n bytes from s to o, n small: in words, without a call (a call would
 * cost the line writer its registers). */
static inline __attribute__((always_inline)) void copy_small(char *o, const char *s, size_t n)
{
	for (; n >= 8; n -= 8, o += 8, s += 8)
		memcpy(o, s, 8);
	if (n & 4)
		memcpy(o, s, 4), o += 4, s += 4;
	if (n & 2)
		memcpy(o, s, 2), o += 2, s += 2;
	if (n & 1)
		*o = *s;
}

/* One line at o (room for sizeof head.text + SHORT + depth + 3 + nl + sl
 * bytes): the head (none if w is 0: who has no text), the indentation,
 * the arrow, the name, the suffix. Its end. */
static inline __attribute__((always_inline)) char *put_line(char *o, int w, int call,
							    uint32_t depth, uint64_t ns,
							    const char *name, size_t nl,
							    const char *suffix, size_t sl)
{
	uint64_t us = ns / 1000;

	if (w) { /* else no head, as ever (a name of 64 bytes: none is) */
		if (head.us != us)
			make_head(us);
		if (head.len <= SHORT)
			memcpy(o, head.text, SHORT);
		else
			memcpy(o, head.text, head.len);
		o += head.len;
	}
	if (depth <= SHORT)
		memcpy(o, spaces, SHORT);
	else
		memset(o, ' ', depth);
	o += depth;
	uint16_t arrow = call ? '-' | '>' << 8 : '<' | '-' << 8; /* "->", "<-" */
	memcpy(o, &arrow, 2);
	o += 2;
	if (nl <= 64)
		copy_small(o, name, nl);
	else
		memcpy(o, name, nl);
	o += nl;
	if (sl)
		memcpy(o, suffix, sl);
	o += sl;
	*o++ = '\n';
	return o;
}

/* A line to the output. keep: it may wait in the queue (plain()'s lines:
 * records.c flushes at the end of their batch); else it goes out now,
 * before anything the script prints after. */
static inline __attribute__((always_inline)) void tree_line(const struct dcg_sink_thread *th,
							    int call, uint32_t depth, uint64_t ns,
							    const char *name, size_t nl,
							    const char *suffix, size_t sl, int keep)
{
	size_t wl;
	int w = (th == who_th && th->tid == who.tid) || who_of(th->execname, th->tid, &wl);
	size_t n = sizeof head.text + SHORT + depth + 3 + nl + sl;
	char *o;

	if (by_thread) {
		if (line_fit(n) < 0)
			return;
		o = put_line(line, w, call, depth, ns, name, nl, suffix, sl);
		dcg_spool_write(th, line, (size_t)(o - line));
	} else if ((o = dcg_out_room(n))) {
		dcg_out_wrote(put_line(o, w, call, depth, ns, name, nl, suffix, sl));
		if (!keep)
			dcg_out_flush();
	}
}

static void tree_thread(const struct dcg_sink_thread *th)
{
	size_t wl;

	who_th = who_of(th->execname, th->tid, &wl) ? th : NULL;
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
		  r->name_len ? r->name_len : strlen(r->name), sig, strlen(sig), 0);
}

static __attribute__((noinline)) void tree_plain_slow(const struct dcg_sink_thread *th,
						      const char *name, size_t name_len,
						      const struct dcg_rec *p)
{
	tree_line(th, p->kind == DCG_REC_CALL, p->depth, p->ns, name, name_len, "", 0, 1);
}

/* The arrow, the name and '\n' of the run's lines by the records' kind
 * (DCG_REC_CALL, DCG_REC_RETURN; the other rows unused): copied whole by
 * fixed-size copies of at most PIECE bytes. */
#define PIECE 72
static char piece[4][128];

/* The longest line of a run: head, indentation, piece, each copied whole. */
#define RUN_LINE (SHORT + SHORT + PIECE)

/* 16 bytes in a register: the head's first 32 bytes are two. */
typedef char bytes16 __attribute__((vector_size(16)));

/* The lines of v[0..n) with pieces of pl bytes, at most size, while who
 * is th's text: no call but where the head changes and for the lines
 * tree_plain_slow writes (deeper than SHORT, a long head). */
static inline __attribute__((always_inline)) void run_lines(const struct dcg_sink_thread *th,
							    const char *name, size_t nl,
							    const struct dcg_rec *v, size_t n,
							    size_t size)
{
	const struct dcg_rec *p = v, *end = v + n;
	size_t pl = nl + 3;

	if (head.us == NO_HEAD)
		make_head(v[0].ns / 1000);
	/* the head's microsecond as a range of ns: [hns, hns + 1000) */
	uint64_t hns = head.us * 1000;
	size_t hl = head.len;
	bytes16 h0, h1;
	memcpy(&h0, head.text, 16);
	memcpy(&h1, head.text + 16, 16);
	while (p < end) {
		char *o = dcg_out_room(RUN_LINE);
		if (!o)
			return;
		size_t k = (dcg_outq.cap - dcg_outq.n) / RUN_LINE;
		const struct dcg_rec *stop = (size_t)(end - p) < k ? end : p + k;
		for (; p < stop; p++) {
			if (p->ns - hns >= 1000) {
				make_head(p->ns / 1000);
				hns = head.us * 1000;
				hl = head.len;
				memcpy(&h0, head.text, 16);
				memcpy(&h1, head.text + 16, 16);
			}
			if (p->depth > SHORT || hl > SHORT)
				break;
			memcpy(o, &h0, 16);
			memcpy(o + 16, &h1, 16);
			o += hl;
			memcpy(o, spaces, SHORT);
			o += p->depth;
			memcpy(o, piece[p->kind & 3], size);
			o += pl;
		}
		dcg_out_wrote(o);
		if (p < end && (p->depth > SHORT || hl > SHORT)) {
			tree_plain_slow(th, name, nl, p++);
			/* it may have made another head */
			hns = head.us * 1000;
			hl = head.len;
			memcpy(&h0, head.text, 16);
			memcpy(&h1, head.text + 16, 16);
		}
	}
}

/* Most lines: short, of a thread whose head is made, room in the queue. */
static void tree_plain(const struct dcg_sink_thread *th, const char *name, size_t name_len,
		       const struct dcg_rec *v, size_t n)
{
	if (th != who_th || th->tid != who.tid || by_thread || name_len + 3 > PIECE) {
		for (size_t i = 0; i < n; i++)
			tree_plain_slow(th, name, name_len, &v[i]);
		return;
	}
	for (int kind = DCG_REC_CALL; kind <= DCG_REC_RETURN; kind++) {
		char *o = piece[kind];
		memcpy(o, kind == DCG_REC_CALL ? "->" : "<-", 2);
		memcpy(o + 2, name, name_len);
		o[2 + name_len] = '\n';
	}
	if (name_len + 3 <= 16)
		run_lines(th, name, name_len, v, n, 16);
	else if (name_len + 3 <= 32)
		run_lines(th, name, name_len, v, n, 32);
	else
		run_lines(th, name, name_len, v, n, PIECE);
}

static void tree_end(void)
{
	if (by_thread)
		dcg_spool_end();
	free(line);
	line = NULL;
	line_cap = 0;
	who.len = 0;
	who_th = NULL;
	head.us = NO_HEAD;
}

static const char *const tree_options[] = {"", "threads", NULL};

const struct dcg_sink dcg_sink_tree = {
    .name = "tree",
    .begin = tree_begin,
    .thread = tree_thread,
    .record = tree_record,
    .end = tree_end,
    .options = tree_options,
    .raw_clock = 1,
    .plain = tree_plain,
};
