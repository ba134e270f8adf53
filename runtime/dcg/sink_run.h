/* The layer between the call graph's core and its formats (sink_run.c):
 * the format and output chosen (script, -D, environment), durations on
 * returns, frames closed when tracing stops, the flight recorder.
 *
 * records.c gives every record through it; the sinks read their option
 * and switches from it. */
#ifndef STP_DCG_SINK_RUN_H
#define STP_DCG_SINK_RUN_H

#include <stddef.h>
#include <stdint.h>

#include "sink.h"

/* The formats, in records.c: the first is the default. */
extern const struct dcg_sink *const dcg_sink_table[];
extern const unsigned dcg_sink_count;

/* ---- for records.c ---- */

/* The format chosen, begun (once a run): 0, or -1 if it cannot run (the
 * records are dropped). */
int dcg_run_open(void);
/* The records of th follow (after dcg_run_open). */
void dcg_run_thread(const struct dcg_sink_thread *th);
/* One record: its duration is set (r->matched...), then it goes to the
 * format, or to the thread's ring in flight-recorder mode. */
void dcg_run_record(struct dcg_sink_rec *r);
/* The format's plain() when records without a signal may go to it
 * straight (no durations, flight recorder or closing of open frames):
 * else NULL, and every record goes through dcg_run_record. */
typedef void dcg_plain_fn(const struct dcg_sink_thread *th, const char *name, size_t name_len,
			  const struct dcg_rec *v, size_t n);
dcg_plain_fn *dcg_run_plain(void);
/* Tracing stopped in th at ns (since it began in th) / mono_ns: the
 * frames still open are closed there (closes_open formats). */
void dcg_run_stop(const struct dcg_sink_thread *th, uint64_t ns, uint64_t mono_ns);
/* The end of the run: the format's end, its file closed; all forgotten. */
void dcg_run_finish(void);
/* For -v: the overhead subtracted per event and how it was measured
 * ("" when no record needed it). */
void dcg_run_calibration(char *how, size_t len);
/* In records.c: the tracer's cost of one event under the run's
 * mechanism, measured now (calib_ptrace.c, calib_translate.c), and how. */
int64_t dcg_run_calibrate(char *how, size_t len);

/* The flight recorder's N (records kept per thread), 0 when it is off
 * or not chosen yet. */
unsigned dcg_run_ring_size(void);
/* fn runs before each snapshot, for the threads it gives (tid; all:
 * every thread): a mechanism that keeps the events itself hands them
 * over then (mech_translate.c's rings in overwrite mode). NULL: none. */
void dcg_run_on_snapshot(void (*fn)(pid_t pid, pid_t tid, int all));

/* ---- for the sinks ---- */

/* The option given after the format's name (NAME:OPTION), or its first
 * (default) one; "" for a format without options. */
const char *dcg_sink_option(void);
/* dynamic_call_graph_durations(1) / -D STP_DCG_DURATIONS=1: the tree
 * shows each return's duration. */
int dcg_sink_durations(void);

/* ---- the flight recorder (sink_ring.c) ---- */

/* Keep r (copied) in its thread's ring of at most n records. */
void dcg_ring_record(const struct dcg_sink_rec *r, unsigned n);
void dcg_ring_stop(const struct dcg_sink_thread *th, uint64_t ns, uint64_t mono_ns);
/* Give the ring of (pid, tid) (all: every ring) to the format through
 * deliver / stop, then empty it: the frames open at its window's start
 * first (as calls), its records, then a stop at now for the frames
 * still open. Returns the number of records given. */
uint64_t dcg_ring_snapshot(pid_t pid, pid_t tid, int all, uint64_t now_mono,
			   void (*thread)(const struct dcg_sink_thread *th),
			   void (*deliver)(struct dcg_sink_rec *r),
			   void (*stop)(const struct dcg_sink_thread *th, uint64_t ns,
					uint64_t mono_ns));
void dcg_ring_free(void);

#endif
