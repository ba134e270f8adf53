/* What the call graph's formats share (sink_out.c): where they write
 * (a file of their own, or stap's output), names escaped for each
 * format, and a small table of per-thread state.
 *
 * Only the sinks, their layer (sink_run.c) and records.c (dcg_out_flush)
 * include this. */
#ifndef STP_DCG_SINK_OUT_H
#define STP_DCG_SINK_OUT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "sink.h"

/* ---- the output ---- */

struct dcg_buf;

/* Open path for writing, truncated ("-": stap's output). 0, or -errno
 * (nothing changes). The previous file, if any, is closed. */
int dcg_out_open(const char *path);
/* Is a file of the format's own open (not stap's output)? */
int dcg_out_is_file(void);
/* The name it was opened with ("" for stap's output). */
const char *dcg_out_path(void);
/* Write to the output: the file, else stap's output (in order with the
 * script's). Errors (disk full) are reported once, at close. */
void dcg_out_write(const void *p, size_t n);
void dcg_out_puts(const char *s);
void dcg_out_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Lines written in place: dcg_out_room(n) gives room for n bytes at the
 * end of the output's queue (NULL: out of memory), dcg_out_wrote(end)
 * keeps what was written there up to end. The queue goes out when it is
 * large, before any other write, at dcg_out_flush and at close: one write
 * per batch of lines instead of one per line. Whoever queues to stap's
 * output flushes before a probe handler may print (records.c, at the end
 * of each batch). */
struct dcg_outq {
	char *p;
	size_t n, cap;
};
extern struct dcg_outq dcg_outq __attribute__((visibility("hidden")));
char *dcg_out_room_slow(size_t n);
static inline char *dcg_out_room(size_t n)
{
	return dcg_outq.cap - dcg_outq.n >= n ? dcg_outq.p + dcg_outq.n : dcg_out_room_slow(n);
}
static inline void dcg_out_wrote(const char *end)
{
	dcg_outq.n = (size_t)(end - dcg_outq.p);
}
void dcg_out_flush(void);
/* Write b's text (none if it was cut by a failed allocation), then empty b. */
void dcg_out_buf(struct dcg_buf *b);
/* Flush and close the file (a no-op on stap's output). 0, or -1 after a
 * message if the file could not be written whole. */
int dcg_out_close(void);

/* ---- a growable byte buffer ---- */

struct dcg_buf {
	char *p;
	size_t n, cap;
	int oom; /* an allocation failed: the text is cut */
};
void dcg_buf_put(struct dcg_buf *b, const void *p, size_t n);
void dcg_buf_puts(struct dcg_buf *b, const char *s);
void dcg_buf_printf(struct dcg_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* An unsigned number in decimal. */
/* The decimal digits of v, written backwards to end: their start. */
char *dcg_put_u64(char *end, uint64_t v);
void dcg_buf_u64(struct dcg_buf *b, uint64_t v);
/* The text, NUL-terminated ("" if empty). */
const char *dcg_buf_str(struct dcg_buf *b);
void dcg_buf_free(struct dcg_buf *b);

/* Room in the array *pp (a pointer to it: T **) for element n: it grows
 * (doubling from 16) when n reaches *cap elements of size bytes. 0, or -1
 * when out of memory (the array stays as it was). */
int dcg_grow(void *pp, size_t n, size_t *cap, size_t size);

/* ---- names, escaped for each format ---- */

/* The name a format shows for a frame: r->name, and for a signal
 * handler's frame (its call, or its matched return) " (signal SIGALRM)"
 * after it, as the tree shows it on the call.
 * Into b (cleared first); returns its text. */
const char *dcg_display_name(struct dcg_buf *b, const struct dcg_sink_rec *r);

/* Inside a JSON string (no quotes added): '"' and '\\' escaped, control
 * bytes as \n \t ... or \u00XX, bytes that are no valid UTF-8 as \u00XX
 * (so that the file is valid JSON whatever the name). */
void dcg_esc_json(struct dcg_buf *b, const char *s);
/* Inside a DOT double-quoted string: '"' and '\\' escaped; control bytes
 * and bytes that are no valid UTF-8 as the visible text \xNN. */
void dcg_esc_dot(struct dcg_buf *b, const char *s);
/* One frame of a folded stack: ';' (the separator), '\\', control bytes
 * and bytes that are no valid UTF-8 as \xNN ('\\' as \x5c), so that a
 * frame never splits and a line never breaks. */
void dcg_esc_folded(struct dcg_buf *b, const char *s);

/* ---- names kept once each ---- */

/* Strings by number: each distinct string is copied once, its number
 * and address stay the same until the table is freed. */
struct dcg_strtab {
	char **s;    /* by number */
	uint32_t *h; /* hash slots: number + 1, 0 for none */
	size_t n, caps, caph;
};
/* The number of s (added if new); (uint32_t)-1 when out of memory. */
uint32_t dcg_strtab_id(struct dcg_strtab *t, const char *s);
const char *dcg_strtab_str(const struct dcg_strtab *t, uint32_t id);
void dcg_strtab_free(struct dcg_strtab *t);

/* A line of text (report, graph): '\\' doubled, control bytes and bytes
 * of no valid UTF-8 as \xNN, so that a name never breaks a line. */
void dcg_esc_text(struct dcg_buf *b, const char *s);

/* ---- per-thread state of a sink ---- */

/* A table of (pid, tid) -> a zeroed block of `size` bytes, owned by the
 * table. */
struct dcg_tmap {
	size_t size;
	struct dcg_tmap_ent {
		pid_t pid, tid;
		void *v;
	} * e;
	size_t n, cap;
};
/* The block of (pid, tid), created zeroed if new (NULL: out of memory). */
void *dcg_tmap_get(struct dcg_tmap *m, pid_t pid, pid_t tid, int create);
/* Forget one (free_fn, if any, frees what the block points to). */
void dcg_tmap_del(struct dcg_tmap *m, pid_t pid, pid_t tid, void (*free_fn)(void *));
void dcg_tmap_free(struct dcg_tmap *m, void (*free_fn)(void *));

/* Microseconds with three decimals ("12.345"), from nanoseconds. */
void dcg_buf_us(struct dcg_buf *b, uint64_t ns);

#endif
