/* The tree grouped by thread ("tree:threads", sink_tree.c): each thread's
 * lines kept together and written at the end of the run, thread after
 * thread in the order they first traced, for programs whose threads
 * interleave. The memory stays bounded: a thread keeps at most SPOOL_BUF
 * bytes, then they go as a chunk to one temporary file (unlinked at
 * once), read back at the end. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "sink_out.h"
#include "sink_spool.h"
#include "lang/stp_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SPOOL_BUF 16384

struct spool_thread {
	pid_t pid, tid;
	struct dcg_buf pending;
	size_t first_chunk, last_chunk; /* (size_t)-1: none */
	unsigned order;
};

struct chunk {
	long off;
	size_t len;
	size_t next; /* the thread's next chunk, (size_t)-1: none */
};

static struct dcg_tmap threads = {.size = sizeof(struct spool_thread)};
static unsigned nthreads;
static struct spool_thread *last_t; /* the thread of the last line */
static struct chunk *chunks;
static size_t nchunks, capchunks;
static FILE *file;
static long file_len;
static int failed; /* the temporary file could not be written: said once */

static void thread_free(void *v)
{
	dcg_buf_free(&((struct spool_thread *)v)->pending);
}

/* t's pending lines as a chunk of the temporary file. */
static void spill(struct spool_thread *t)
{
	if (!t->pending.n || failed)
		return;
	if (!file && !(file = tmpfile())) {
		_stp_msg_error("dynamic call graph: no temporary file for the threads' trees: %s",
			       strerror(errno));
		failed = 1;
		return;
	}
	if (dcg_grow(&chunks, nchunks, &capchunks, sizeof *chunks) < 0)
		return;
	if (fseek(file, file_len, SEEK_SET) != 0 ||
	    fwrite(t->pending.p, 1, t->pending.n, file) != t->pending.n) {
		_stp_msg_error("dynamic call graph: cannot write the threads' trees: %s",
			       strerror(errno));
		failed = 1;
		return;
	}
	chunks[nchunks] = (struct chunk){file_len, t->pending.n, (size_t)-1};
	if (t->last_chunk == (size_t)-1)
		t->first_chunk = nchunks;
	else
		chunks[t->last_chunk].next = nchunks;
	t->last_chunk = nchunks++;
	file_len += (long)t->pending.n;
	t->pending.n = 0;
}

void dcg_spool_write(const struct dcg_sink_thread *th, const char *p, size_t n)
{
	struct spool_thread *t = last_t && last_t->tid == th->tid && last_t->pid == th->pid
	    ? last_t
	    : dcg_tmap_get(&threads, th->pid, th->tid, 0);

	if (!t) {
		if (!(t = dcg_tmap_get(&threads, th->pid, th->tid, 1)))
			return;
		t->pid = th->pid;
		t->tid = th->tid;
		t->first_chunk = t->last_chunk = (size_t)-1;
		t->order = nthreads++;
	}
	last_t = t;
	if (t->pending.n + n > SPOOL_BUF)
		spill(t);
	dcg_buf_put(&t->pending, p, n);
}

static int by_order(const void *a, const void *b)
{
	const struct spool_thread *x = ((const struct dcg_tmap_ent *)a)->v,
				  *y = ((const struct dcg_tmap_ent *)b)->v;
	return x->order < y->order ? -1 : x->order > y->order;
}

void dcg_spool_end(void)
{
	char buf[8192];

	qsort(threads.e, threads.n, sizeof *threads.e, by_order);
	for (size_t i = 0; i < threads.n; i++) {
		struct spool_thread *t = threads.e[i].v;
		for (size_t c = t->first_chunk; c != (size_t)-1 && file; c = chunks[c].next) {
			size_t left = chunks[c].len;
			if (fseek(file, chunks[c].off, SEEK_SET) != 0)
				break;
			while (left) {
				size_t k =
				    fread(buf, 1, left < sizeof buf ? left : sizeof buf, file);
				if (!k)
					break;
				dcg_out_write(buf, k);
				left -= k;
			}
		}
		if (t->pending.n)
			dcg_out_write(t->pending.p, t->pending.n);
	}
	dcg_tmap_free(&threads, thread_free);
	last_t = NULL;
	nthreads = 0;
	free(chunks);
	chunks = NULL;
	nchunks = capchunks = 0;
	if (file)
		fclose(file);
	file = NULL;
	file_len = 0;
	failed = 0;
}
