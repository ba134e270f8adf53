/* The in-process engine (doc/in-process-engine.md): a traced thread runs
 * from a cache of translated blocks inside its own process and writes a
 * record at each call, return and jump into another function, without
 * stopping. Built on the ptrace engine (runtime/ptrace_engine.h), which it
 * hooks into per thread; it knows nothing of the call graph's core, whose
 * needs come through struct _stp_xl_ops.
 *
 * All calls come from the tracer's one thread, with the thread concerned
 * stopped (in a handler or callback of the ptrace engine). Functions
 * return 0 or a negative errno and never exit. */
#ifndef STP_XLATE_H
#define STP_XLATE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "ptrace/ptrace_engine.h"
#include "xlate/layout.h"

struct _stp_xl_engine;

/* What the engine needs from its client (the call graph's core). */
struct _stp_xl_ops {
	/* The function containing addr: its start (for a NAME.cold part,
	 * NAME's), and in [*lo, *hi) the range of addresses with the same
	 * answer (the symbol's extent); 0 when unknown. Jumps between
	 * functions get a record. Asked once per range. */
	uint64_t (*func_of)(void *core, struct _stp_pt_thread *t, uint64_t addr, uint64_t *lo,
			    uint64_t *hi);
	/* Records drained from t's ring, in order (tsc already converted to
	 * CLOCK_MONOTONIC nanoseconds in rec->tsc). */
	void (*records)(void *core, struct _stp_pt_thread *t, const struct xl_rec *r, size_t n);
	/* t left the cache for good at native pc: why (an instruction that
	 * cannot be translated, a limit); the client traces it otherwise. */
	void (*fallback)(void *core, struct _stp_pt_thread *t, uint64_t pc, const char *why);
	/* Overwrite mode: n records of t were overwritten before they were
	 * read; the next records follow that gap. NULL: not told. */
	void (*lost)(void *core, struct _stp_pt_thread *t, uint64_t n);
	/* t's own mmap, mprotect, munmap or mremap changed the code mapped
	 * in [lo, hi) (its ring read up to that call): names and decodings
	 * of it go. NULL: not told. */
	void (*code_changed)(void *core, struct _stp_pt_thread *t, uint64_t lo, uint64_t hi);
};

struct _stp_xl_config {
	size_t ring_bytes;  /* per thread (default 1 MiB) */
	size_t cache_bytes; /* code per thread, all chunks (default 11 MiB) */
	int max_threads;    /* translated at once (default 64) */
	int protect;	    /* attached processes (-x): a SIGTRAP handler of ours keeps
			     * them alive if staprun dies (runtime/xlate/safety.c) */
	int capture;	    /* XL_CAP_*: XL_REC_ARGS records before those records */
	/* The rings in overwrite mode (without capture only): a full ring
	 * starts again in the thread, the oldest records overwritten; only
	 * _stp_xl_drain, a switch-off, a fallback and the thread's end read
	 * it: its last ring_bytes / 32 records, the others counted as lost. */
	int overwrite;
	/* Records keep the TSC (no clock conversion: no 2 ms of rate
	 * measurement at start), for a client that ignores their times. */
	int raw_tsc;
	/* A full ring (not in overwrite mode): the thread waits for the
	 * client's reads while it runs (_stp_xl_drain from its event loop;
	 * a read wakes it) as long as one came in the last ring_wait_us;
	 * else it rings its doorbell, where its ring is read. 0: the doorbell
	 * at once (a client that reads only at stops). */
	unsigned ring_wait_us;
	/* XL_STOP_*: these events stop the thread just after their record
	 * is written, in the state before their instruction (the native
	 * state a breakpoint there gives); ops->records gets the records up
	 * to this one, the last with _stp_xl_at_event() 1, then the thread
	 * goes on in the cache. */
	int stop;
};
#define XL_CAP_ARGS 1  /* before calls, jumps and signal entries: arguments */
#define XL_CAP_RET 2   /* before returns: rax */
#define XL_STOP_CALL 1 /* calls and jumps into another function */
#define XL_STOP_RET 2  /* returns */

/* Can the engine run here? 1 yes, 0 no (why says why), for auto. */
int _stp_xl_usable(char *why, size_t len);

struct _stp_xl_engine *_stp_xl_new(struct _stp_pt_session *s, const struct _stp_xl_ops *ops,
				   void *core, const struct _stp_xl_config *cfg);
/* Every thread off first (their processes are left as found). */
void _stp_xl_free(struct _stp_xl_engine *x);
/* The end of a run: each process with translated threads is stopped and
 * held for the detach (ptrace), its threads made native where they are,
 * our mappings unmapped and the program's SIGTRAP action put back, so
 * that a process that lives on (-x) is left as it was found. */
void _stp_xl_leave_all(struct _stp_xl_engine *x);

/* Switch t on: from its next resume it runs translated code, from the
 * instruction it is at. The first thread of a process maps the agent and
 * the shared memory into it. -EBUSY: a limit. */
int _stp_xl_thread_on(struct _stp_xl_engine *x, struct _stp_pt_thread *t);
/* Switch t off: its records are drained; it resumes natively. */
int _stp_xl_thread_off(struct _stp_xl_engine *x, struct _stp_pt_thread *t);
int _stp_xl_thread_is_on(struct _stp_xl_engine *x, struct _stp_pt_thread *t);
/* A new thread or a fork child's thread, at its first stop: if it was
 * created from translated code, its pc is made native. */
void _stp_xl_thread_start(struct _stp_xl_engine *x, struct _stp_pt_thread *t);
/* Install the safety net of attached processes (cfg.protect does it at
 * the first switch-on) in t's process: an int3 of ours met after staprun
 * died gets its byte back instead of killing the program. Idempotent. */
int _stp_xl_protect(struct _stp_xl_engine *x, struct _stp_pt_thread *t);
/* Leave t's process as it was found (before a detach): the program's
 * SIGTRAP action back, our mappings gone. -EBUSY while a thread of it is
 * on. */
int _stp_xl_release(struct _stp_xl_engine *x, struct _stp_pt_thread *t);
/* t is gone (exit, exec): its state goes; its memory is reused. */
void _stp_xl_thread_gone(struct _stp_xl_engine *x, struct _stp_pt_thread *t);
/* p exec'd or ended: everything of it goes (nothing is left in it). */
void _stp_xl_proc_gone(struct _stp_xl_engine *x, struct _stp_pt_proc *p);
/* The memory of t's process (t stopped) changed: libraries were loaded
 * or unloaded (the core's r_debug watch), or code unmapped. Blocks made
 * from code that is not mapped as it was go, in every thread. */
void _stp_xl_mem_changed(struct _stp_xl_engine *x, struct _stp_pt_thread *t);
/* Drain t's ring now (records go to ops->records). */
void _stp_xl_drain(struct _stp_xl_engine *x, struct _stp_pt_thread *t);
/* Inside ops->records: is t held at the event of the last record given
 * now (cfg.stop), its registers and memory those before the event's
 * instruction? (The records before it are read as ever.) */
int _stp_xl_at_event(struct _stp_xl_engine *x, struct _stp_pt_thread *t);

/* Counters, for -v. */
struct _stp_xl_stats {
	uint64_t threads;     /* switched on, in all */
	uint64_t blocks;      /* translated */
	uint64_t code_bytes;  /* of translated code */
	uint64_t doorbells;   /* stops asked for by the agent */
	uint64_t event_stops; /* cfg.stop: stops at events for handlers */
	uint64_t agent;	      /* entries into the agent */
	uint64_t dir_hits;    /* lookup misses the agent answered itself */
	uint64_t records;     /* drained */
	uint64_t overwritten; /* overwrite mode: records lost, never read */
	uint64_t flushes;     /* caches flushed (full) */
	uint64_t signals;     /* delivered to translated threads */
	uint64_t fallbacks;
	uint64_t drain_ns;    /* staprun's time draining rings (consumer) */
	uint64_t doorbell_ns; /* staprun's time answering doorbells */
	/* full rings (not in overwrite mode): times the agent found one,
	 * waits on the futex, the thread's time waiting for room (futex and
	 * doorbell), doorbells rung for room, staprun's wake-ups of waiters */
	uint64_t ring_full, ring_waits, ring_wait_ns, ring_stops, ring_wakes;
};
void _stp_xl_get_stats(const struct _stp_xl_engine *x, struct _stp_xl_stats *st);

#endif
