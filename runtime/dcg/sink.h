/* The call graph's output formats ("sinks"). The core keeps each traced
 * thread's call and return records in memory and hands them to the sink
 * when they are printed: before any probe handler runs (so the script's
 * output comes after the calls made before it), when tracing is switched
 * off in a thread, when the thread exits, when the records are many, and
 * at the end of the run. Records come in order within a thread; threads
 * come one batch after another, never interleaved inside a batch.
 *
 * A sink writes with dcg_out_write / dcg_out_printf (dcg/sink_out.h): to
 * the file of dynamic_call_graph_output(PATH) or -D STP_DCG_OUTPUT=PATH,
 * to a file of its own name (ext) when none is given, else (the tree)
 * to stap's output, in order with the script's (-o FILE, bulk mode). It
 * keeps its own state between calls (e.g. the frames open per thread for
 * a stack format) and frees it in end().
 *
 * Between the core and the sink a layer (dcg/sink_run.c) gives each
 * return its duration, closes the frames still open when tracing stops
 * in a thread (for sinks that ask), and keeps the flight recorder's rings.
 *
 * Adding a format: one file dcg/sink_NAME.c defining a `const struct
 * dcg_sink`, and one line in the table of dcg/records.c. The format is
 * chosen by dynamic_call_graph_format(NAME) in the script, -D
 * STP_DCG_FORMAT=NAME, or STAP_DCG_FORMAT=NAME in the environment, in
 * that order (default "tree").
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
	size_t name_len; /* strlen(name), or 0: not known */
	int is_main;	 /* module is the main executable */
	/* The instruction and target of the event: a call's call instruction
	 * (0 for the root or a handler run by the kernel) and callee; a
	 * return's ret instruction (or the instruction that left the frame)
	 * and the address it went to. */
	uint64_t from, to;
	/* A signal handler's frame (its call record): the signal number; else 0. */
	int sig;
	/* A return of a frame left without returning (longjmp, an exception
	 * unwinding it): 1; else 0. */
	int unwound;
	/* Set by the layer, the same for every format. A return whose call
	 * was given (its frame was open): matched = 1, dur_ns the time since
	 * that call, self_ns that less the time of the calls shown inside,
	 * call_sig its call's sig (a signal handler's return). */
	int matched, call_sig;
	uint64_t dur_ns, self_ns;
	/* A return made up, at the time tracing stopped in the thread
	 * (switched off, the thread gone, the end of the run, SIGINT), for a
	 * frame still open then (matched too). Only for closes_open sinks. */
	int closed;
};

/* The core's record of a call or return (records.c), as plain() reads
 * it; only kind, depth and ns matter there (as dcg_sink_rec's). */
struct dcg_rec {
	uint8_t kind;	 /* DCG_REC_CALL or DCG_REC_RETURN */
	uint8_t sig;	 /* a signal handler's call: its signal number */
	uint8_t unwound; /* a return: the frame was left without returning */
	uint32_t depth;
	uint64_t ns;   /* since tracing began in the thread */
	uint64_t from; /* call / return instruction (0: the root) */
	uint64_t to;   /* target / return address */
	uint64_t name; /* address whose call-graph name is printed */
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
	/* All below may be 0 (as the tree has them). ext: the sink writes a
	 * file of its own, ustap-dcg.EXT unless an output is given. */
	const char *ext;
	/* Frames open when tracing stops in a thread are given made-up
	 * returns (closed = 1); without, records are given as they came. */
	int closes_open;
	/* The options of NAME:OPTION (dcg_sink_option()), the first being
	 * the default; NULL-terminated. NULL: none. */
	const char *const *options;
	/* Its records keep the raw time (the tree's time column, unchanged);
	 * durations are corrected all the same. */
	int raw_clock;
	/* A shortcut for what most records are: calls and returns with no
	 * signal, given while no durations or flight recorder are asked
	 * for, so that nothing but these fields matters; n records of one
	 * name in a row (name_len: strlen(name)), in order. It must write
	 * what record() would for each; its output may wait in the
	 * output's queue (sink_out.h) until the end of the batch, where the
	 * core flushes it. May be NULL. */
	void (*plain)(const struct dcg_sink_thread *th, const char *name, size_t name_len,
		      const struct dcg_rec *v, size_t n);
};

#endif
