/* The call graph's output formats ("sinks"). The core keeps each traced
 * thread's call and return records in memory and hands them to the sink
 * when they are printed: before any probe handler runs (so the script's
 * output comes after the calls made before it), when tracing is switched
 * off in a thread, when the thread exits, when the records are many, and
 * at the end of the run. Records come in order within a thread; threads
 * come one batch after another, never interleaved inside a batch.
 *
 * A sink writes with _stp_print_n / _stp_printf (lang/stp_internal.h), so
 * its output goes where the script's goes (-o FILE, bulk mode) in order
 * with it. It keeps its own state between calls (e.g. the frames open per
 * thread for a stack format) and frees it in end().
 *
 * Adding a format: one file dcg/sink_NAME.c defining a `const struct
 * dcg_sink`, and one line in the table of dcg/records.c. The format is
 * chosen by STAP_DCG_FORMAT=NAME in the environment (default "tree").
 *
 * Only the core includes this header, and the sinks: it needs nothing of
 * the ptrace engine (a sink sees no thread, only records). */
#ifndef STP_DCG_SINK_H
#define STP_DCG_SINK_H

#include <stdint.h>
#include <sys/types.h>

enum dcg_rec_kind {
	DCG_REC_CALL = 1,   /* a function was entered (called, tail-called, or a
			     * signal handler run by the kernel; the root) */
	DCG_REC_RETURN = 2, /* it was left (returned, or its frame abandoned by
			     * longjmp or an exception, closed at once) */
};

/* A thread, as the records name it. */
struct dcg_sink_thread {
	pid_t pid, tid;
	const char *execname; /* its name when tracing was switched on in it */
};

/* One record. Pointers are valid during the call only. */
struct dcg_sink_rec {
	enum dcg_rec_kind kind;
	const struct dcg_sink_thread *thread;
	/* Depth in the shown tree: 0 for the root (the function the thread
	 * was in when tracing was switched on, or the caller it returned to);
	 * a return has its call's depth. Frames not shown (excluded, under a
	 * leaf, deeper than the limit) count for nothing. */
	uint32_t depth;
	/* Time of the event in nanoseconds: since tracing was switched on in
	 * the thread (0 for its first record; never decreasing in a thread),
	 * and the same on CLOCK_MONOTONIC (shared by all threads, and with
	 * the script's gettimeofday_ns-style clocks as CLOCK_MONOTONIC). */
	uint64_t ns, mono_ns;
	/* The function entered or left: its address (its symbol's start when
	 * known) and its names. name is what the tree prints: "f", "f+0x10",
	 * "f [libc.so.6]", "libfoo.so+0x1a2b", "0x7f12345000" (never NULL,
	 * whole however long); func is the bare function name (demangled;
	 * NULL when no symbol covers it); module the basename of the module
	 * it is in (NULL: in no module, e.g. JIT code). */
	uint64_t addr;
	const char *name, *func, *module;
	int is_main; /* module is the main executable */
	/* The instruction and target of the event: a call's call instruction
	 * (0 for the root or a handler run by the kernel) and callee; a
	 * return's ret instruction (or the instruction that left the frame)
	 * and the address it went to. */
	uint64_t from, to;
	/* A signal handler's frame (its call record): the signal number; else 0. */
	int sig;
};

/* Any call but record may be NULL. */
struct dcg_sink {
	const char *name; /* as STAP_DCG_FORMAT names it */
	/* Once per run, before its first record (not called in a run that
	 * traced nothing). Nonzero: the sink cannot run; nothing more is
	 * given to it (records are dropped). */
	int (*begin)(void);
	/* The records of thread th follow (each batch; a thread has many). */
	void (*thread)(const struct dcg_sink_thread *th);
	void (*record)(const struct dcg_sink_rec *r);
	/* The run is over: every record was given. Also frees its state. */
	void (*end)(void);
};

#endif
