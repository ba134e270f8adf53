/* The runtime's API for generated code: the one header a compiled script
 * includes. Everything here is prefixed _stp_ / STP_ so it never collides
 * with script names (generated names use other prefixes).
 *
 * Execution model: staprun (or stap at pass 5) dlopens the compiled object,
 * finds `_stp_module_info`, runs begin probes, then an event loop (timers,
 * signals, later the traced processes), then end probes, then exits. Handlers
 * run one at a time in the tracer process; they never nest.
 *
 * Errors: a failing operation sets c->last_error (and c->last_stmt where the
 * generated code has not) and returns a harmless value; generated code checks
 * c->last_error after each statement and jumps to its error label. The
 * runtime prints "ERROR: <last_error> near <last_stmt>" after the handler;
 * past MAXERRORS errors (default 0) the session stops: remaining begin and
 * end probes are skipped, error probes run, and staprun exits 1 after
 * "WARNING: Number of errors: N, skipped probes: M". */
#ifndef STAP_RUNTIME_H
#define STAP_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

#define STP_ABI_VERSION 5

/* ---- values ---- */

enum _stp_type { STP_LONG = 1, STP_STRING = 2, STP_STATS = 3 };

/* One key of a map, or one argument of a format: n for longs, s for strings. */
struct _stp_val {
	int64_t n;
	const char *s;
};

/* ---- the context: one per handler run ---- */

struct _stp_probe;

struct _stp_context {
	const char *last_error; /* NULL while all is well */
	const char *last_stmt;	/* "identifier 'x' at file:1:2" */
	/* counts down from MAXACTION; generated code stops at or below
	 * actionfloor. A stop signal ends a handler that runs long by raising
	 * the floor (runtime/lang/interrupt.c): a store to the count itself
	 * would be lost when the signal lands between the code's load and
	 * store of it. Both volatile: read at every check. */
	volatile int64_t actionremaining;
	volatile int64_t actionfloor; /* 0; INT64_MAX once interrupted */
	int nesting; /* function call depth, for MAXNESTING; 0 in the handler body */
	const struct _stp_probe *probe;
	int aborted;	     /* abort() or fatal: stop everything now */
	char error_buf[256]; /* unused but for a fallback: _stp_error keeps
			      * up to MAXSTRINGLEN-1 bytes elsewhere */
	/* later issues: the target thread, registers, ... */
	void *target;
};

/* Record an error; fmt is printf-style. Returns 0 so it can end an expression. */
int64_t _stp_error(struct _stp_context *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* ---- limits, set from the module info before begin probes run ---- */

extern int64_t _stp_maxstringlen; /* size of every string buffer, incl. NUL */
extern int64_t _stp_maxaction, _stp_maxmapentries, _stp_maxnesting;
extern int64_t _stp_maxerrors, _stp_maxskipped;
extern int64_t _stp_hist_width, _stp_hist_elision;

/* ---- strings ---- */

/* Copy with truncation to size-1 bytes; returns strlen(src). */
size_t _stp_strlcpy(char *dst, const char *src, size_t size);
size_t _stp_strlcat(char *dst, const char *src, size_t size);

/* ---- arithmetic with SystemTap's run-time errors ---- */

int64_t _stp_div64(struct _stp_context *c, int64_t a, int64_t b);
int64_t _stp_mod64(struct _stp_context *c, int64_t a, int64_t b);
/* Shifts with the count masked to 0..63 as SystemTap does; >>> is logical. */
int64_t _stp_shl64(int64_t a, int64_t b);
int64_t _stp_shr64(int64_t a, int64_t b);
int64_t _stp_lshr64(int64_t a, int64_t b);

/* ---- regular expressions (=~ !~ and matched()) ---- */

/* Returns 1 on match; on match, records subexpressions for matched(N). */
int64_t _stp_regex_match(struct _stp_context *c, const char *str, const char *re);
/* matched(N): the Nth subexpression of the last successful match. */
void _stp_regex_matched(struct _stp_context *c, int64_t n, char *dst);
/* ngroups(): number of subexpressions of the last successful match, incl. 0. */
int64_t _stp_regex_ngroups(struct _stp_context *c);

/* ---- output ---- */

/* Output of one handler is buffered and written as a unit at flush. */
void _stp_print(struct _stp_context *c, const char *s);
void _stp_print_n(struct _stp_context *c, const char *s, size_t n);
void _stp_print_flush(struct _stp_context *c);

/* Format with SystemTap's conversions (%d %i %u %x %X %o %s %c %p %b %m %M
 * %%, flags - + space # 0, width, precision, '*' width/precision taken from
 * args) and 64-bit semantics. Arguments are taken in order from args; the
 * translator has already checked their count and types. If dst is NULL the
 * text goes to the output buffer; otherwise into dst (MAXSTRINGLEN bytes,
 * truncated). */
void _stp_format(struct _stp_context *c, char *dst, const char *fmt, const struct _stp_val *args,
		 int nargs);

/* ---- statistics ---- */

enum _stp_hist_kind { STP_HIST_NONE, STP_HIST_LINEAR, STP_HIST_LOG };
struct _stp_hist_spec {
	enum _stp_hist_kind kind;
	int64_t start, stop, interval; /* linear only */
};
enum _stp_stat_op { STP_COUNT, STP_SUM, STP_MIN, STP_MAX, STP_AVG, STP_VARIANCE };

struct _stp_stat; /* opaque */
struct _stp_map;
struct _stp_stat *_stp_stat_new(const struct _stp_hist_spec *hist);
/* @variance(x, N): SystemTap keeps the running mean scaled by 2^N (N in
 * 0..62, default 0) and the results depend on it; set it right after
 * _stp_stat_new / _stp_map_new (for every stat of the map). */
void _stp_stat_set_variance_shift(struct _stp_stat *st, int shift);
void _stp_map_set_variance_shift(struct _stp_map *m, int shift);
void _stp_stat_free(struct _stp_stat *st);
void _stp_stat_clear(struct _stp_stat *st);
void _stp_stat_add(struct _stp_stat *st, int64_t v);
/* @count etc.; an empty aggregate for @min/@max/@avg/@variance is a run-time
 * error as in SystemTap. st may be NULL (absent map entry: empty). */
int64_t _stp_stat_get(struct _stp_context *c, const struct _stp_stat *st, enum _stp_stat_op op);
/* print(@hist_linear(...)) / print(@hist_log(...)) in SystemTap's layout. */
void _stp_stat_print_hist(struct _stp_context *c, const struct _stp_stat *st);
/* sprint(@hist_*(...)): the same table into dst (MAXSTRINGLEN, truncated). */
void _stp_stat_sprint_hist(struct _stp_context *c, const struct _stp_stat *st, char *dst);
/* @hist_*(x)[bucket]: the count in that bucket. */
int64_t _stp_stat_hist_bucket(struct _stp_context *c, const struct _stp_stat *st, int64_t bucket);
/* foreach (b in @hist_*(x)): buckets are 0 .. nbuckets-1 (linear: 0 is
 * the underflow bucket, nbuckets-1 the overflow; log: 128 buckets, value 0
 * in bucket 64). 0 for NULL or a stat without a histogram. */
int64_t _stp_stat_hist_nbuckets(const struct _stp_stat *st);

/* ---- maps (associative arrays) ---- */

struct _stp_map; /* opaque; insertion-ordered hash of up to 32 keys */
struct _stp_map *_stp_map_new(int nkeys, const enum _stp_type *keytypes, enum _stp_type vtype,
			      int64_t maxentries, int wrap, const struct _stp_hist_spec *hist);
void _stp_map_free(struct _stp_map *m);
void _stp_map_clear(struct _stp_map *m);
int64_t _stp_map_size(const struct _stp_map *m);
int _stp_map_exists(const struct _stp_map *m, const struct _stp_val *keys);
void _stp_map_delete(struct _stp_map *m, const struct _stp_val *keys);
/* Reads of absent keys give 0 / "" / an empty stat (NULL). */
int64_t _stp_map_get_long(const struct _stp_map *m, const struct _stp_val *keys);
void _stp_map_get_str(const struct _stp_map *m, const struct _stp_val *keys, char *dst);
const struct _stp_stat *_stp_map_get_stat(const struct _stp_map *m, const struct _stp_val *keys);
/* Writes fail with "Array overflow, check MAXMAPENTRIES" (set in c) when full
 * and not wrapping; they return 0 or -1. */
int _stp_map_set_long(struct _stp_context *c, struct _stp_map *m, const struct _stp_val *keys,
		      int64_t v);
int _stp_map_set_str(struct _stp_context *c, struct _stp_map *m, const struct _stp_val *keys,
		     const char *v);
int _stp_map_add_stat(struct _stp_context *c, struct _stp_map *m, const struct _stp_val *keys,
		      int64_t v);

/* foreach: a snapshot of the entries, sorted as asked.
 * sort_column: -1 unsorted (insertion order), 0 the value, 1..N key N.
 * direction: 1 ascending, -1 descending. stat_op: which aggregate orders a
 * stats value (SystemTap's default is @count). limit: <= 0 means none.
 * slice: NULL, or nkeys values where slice_mask bit i set means "key i must
 * equal slice[i]" (foreach ([a,b] in arr[*, 5])). */
struct _stp_map_iter;
/* Use: it = start(...); while (_stp_map_iter_next(it)) { ... } end(it);
 * Key accessors take a 0-based key index. Entries deleted during the loop
 * stay readable through the iterator until end. */
struct _stp_map_iter *_stp_map_iter_start(struct _stp_map *m, int sort_column, int direction,
					  enum _stp_stat_op stat_op, int64_t limit,
					  const struct _stp_val *slice, unsigned slice_mask);
int _stp_map_iter_next(struct _stp_map_iter *it); /* 1 while there is an entry */
int64_t _stp_map_iter_key_long(const struct _stp_map_iter *it, int i);
const char *_stp_map_iter_key_str(const struct _stp_map_iter *it, int i);
int64_t _stp_map_iter_val_long(const struct _stp_map_iter *it);
const char *_stp_map_iter_val_str(const struct _stp_map_iter *it);
const struct _stp_stat *_stp_map_iter_val_stat(const struct _stp_map_iter *it);
void _stp_map_iter_end(struct _stp_map_iter *it);

/* ---- control (tapset: exit, error, warn, abort) ---- */

void _stp_exit(struct _stp_context *c); /* end after this handler; end probes run */
/* abort(): skip the rest of this handler (c->aborted) and stop the session
 * like exit(), with no error; as in SystemTap 4.8, end probes still run. */
void _stp_abort(struct _stp_context *c);
void _stp_warn(struct _stp_context *c, const char *msg); /* "WARNING: msg" on stderr */

/* ---- target memory (no target yet: the tracer's own memory, checked) ---- */
/* Copy len bytes at addr; on a fault sets "read fault [man error::fault] at
 * 0x..." in c and returns -1. */
int _stp_read_memory(struct _stp_context *c, uint64_t addr, void *buf, size_t len);
/* $value of procfs("__stdin").write: the byte just read from stdin, as a
 * string ("" outside such a probe). */
const char *_stp_input_value(void);

/* target(): the -c child's or -x pid, 0 without one. */
int64_t _stp_target_pid(void);

/* ---- the target thread of a process probe (runtime/context_target.c) ----
 * In begin/end/timer probes there is none: the _ctx_ calls then describe
 * the tracer itself (pid, tid) or fail (registers). */
/* A register by DWARF number (x86-64: 0 rax 1 rdx 2 rcx 3 rbx 4 rsi 5 rdi
 * 6 rbp 7 rsp 8-15 r8-r15 16 rip); 0, or -1 with an error set in c. */
int _stp_ctx_reg(struct _stp_context *c, int dwarf_regno, uint64_t *out);
/* Set a general register (not rsp or rip) of the stopped target thread,
 * written back when it resumes (-g target-variable assignment); 0, or -1
 * with an error set in c. */
int _stp_ctx_set_reg(struct _stp_context *c, int dwarf_regno, uint64_t value);
int64_t _stp_ctx_pid(struct _stp_context *c);
int64_t _stp_ctx_tid(struct _stp_context *c);
/* The probed address (uaddr()), 0 without a target thread. */
uint64_t _stp_ctx_uaddr(struct _stp_context *c);
/* The load bias of the probe's module in the target, 0 if none. */
uint64_t _stp_ctx_bias(struct _stp_context *c);
/* The load bias of the module mapped from PATH in the target process
 * (@var of another module); 0, or -1 with an error set in c when the
 * process does not map it (yet). */
int _stp_ctx_module_bias(struct _stp_context *c, const char *path, uint64_t *bias);
/* The address of a thread-local variable: OFFSET in the TLS block of the
 * module mapped from PATH, for the target thread; 0, or -1 with an error
 * set in c. */
int _stp_ctx_tls_addr(struct _stp_context *c, const char *path, uint64_t offset, uint64_t *addr);
int _stp_ctx_is_return(struct _stp_context *c);
/* Has the context a target thread (process probe)? */
int _stp_ctx_has_target(struct _stp_context *c);
/* Read an integer of size 1/2/4/8 at addr in the target, sign-extended if
 * is_signed; on a fault sets the error and returns 0. */
int64_t _stp_ctx_read_int(struct _stp_context *c, uint64_t addr, int size, int is_signed);
/* The target's memory, as _stp_read_memory (which calls it when the
 * context has a target thread). */
int _stp_ctx_read_target(struct _stp_context *c, uint64_t addr, void *buf, size_t len);
/* As _stp_ctx_read_target, but a fault only returns -1 (no error set). */
int _stp_ctx_read_target_quiet(struct _stp_context *c, uint64_t addr, void *buf, size_t len);
/* Write the low SIZE (1/2/4/8) bytes of value at addr in the target
 * (target-variable assignment under -g); 0, or -1 with a fault error set. */
int _stp_ctx_write_int(struct _stp_context *c, uint64_t addr, int size, int64_t value);
/* execname() of the target (its comm), or of the tracer without one. */
void _stp_ctx_execname(struct _stp_context *c, char *dst, size_t len);
/* ppid(), uid() (real) of the target, or of the tracer without one. */
int64_t _stp_ctx_ppid(struct _stp_context *c);
int64_t _stp_ctx_uid(struct _stp_context *c);
/* usymname (what 0), usymdata (1), umodname (2) of an address of the
 * target, in SystemTap's formats ("0x..." when unknown). */
void _stp_ctx_usym(struct _stp_context *c, int what, uint64_t addr, char *dst, size_t len);
/* @entry values. A hidden function probe (its sequence: the index of the
 * .return probe it serves) saves them per thread and frame; the .return
 * probe's handler gets the frame's values back (0 when the call began
 * before tracing did). */
void _stp_ctx_entry_save(struct _stp_context *c, int64_t slot, int64_t value);
int64_t _stp_ctx_entry_get(struct _stp_context *c, int64_t slot);
/* The same for a probe inside the function (DW_OP_entry_value): the
 * values saved at the entry of the call whose CFA is cfa; 0, or -1 with
 * an error set when that call was not seen entering. */
int _stp_ctx_entry_frame(struct _stp_context *c, int64_t slot, uint64_t cfa, int64_t *value);

/* ---- time ---- */
int64_t _stp_gettime_ns(int clock_id); /* CLOCK_REALTIME, CLOCK_MONOTONIC ... */

/* ---- the module: what a compiled script exports ---- */

enum _stp_probe_kind {
	STP_PROBE_BEGIN,
	STP_PROBE_END,
	STP_PROBE_ERROR,
	STP_PROBE_NEVER,
	STP_PROBE_TIMER,
	/* process probes (runtime/process_probes.c): run under the ptrace
	 * engine, with the stopped target thread in the context */
	STP_PROBE_PROCESS_FUNCTION,	  /* at module + addr */
	STP_PROBE_PROCESS_RETURN,	  /* when the function at module + addr returns */
	STP_PROBE_PROCESS_BEGIN,	  /* a process of module starts (exec, or attach) */
	STP_PROBE_PROCESS_END,		  /* a process of module ends */
	STP_PROBE_PROCESS_THREAD_BEGIN,	  /* a new thread of a process of module */
	STP_PROBE_PROCESS_THREAD_END,	  /* a thread (not the main one) ends */
	STP_PROBE_PROCESS_SYSCALL,	  /* a system call entry */
	STP_PROBE_PROCESS_SYSCALL_RETURN, /* a system call exit */
	/* the dynamic call graph's events (runtime/dcg.c), in the traced thread */
	STP_PROBE_DCG_CALL,
	STP_PROBE_DCG_RETURN,
	/* procfs("__stdin").write (input.char, input.line): a byte of
	 * staprun's stdin (runtime/probes/input.c) */
	STP_PROBE_STDIN,
};

struct _stp_probe {
	enum _stp_probe_kind kind;
	void (*handler)(struct _stp_context *c);
	const char *pp;	      /* probe point text, for pp() */
	const char *location; /* "file:line:col" of the probe */
	int64_t sequence;     /* begin(N): lower first; same N in script order */
	int64_t interval_ns;  /* timers */
	int64_t randomize_ns; /* timers: +- uniform jitter, 0 none */
	/* process probes: the executable (absolute path; NULL or "" for any
	 * traced process), an ELF vaddr in it, and the page-aligned lowest
	 * PT_LOAD vaddr (a PIE's load bias is its mapped start minus this) */
	const char *module;
	uint64_t addr;
	uint64_t module_base;
	/* .library("LIB") probes: the library (absolute path; NULL: addr is
	 * in module); addr is then placed at the library's load bias */
	const char *library;
	/* .mark probes: the SDT semaphore's vaddr in the probe's file (0:
	 * none), a 16-bit counter raised while the probe is placed */
	uint64_t semaphore;
	/* pn(): the script-level point (an alias's name); NULL: pp */
	const char *pn;
	/* written with ? (itself or an alias that led to it): a run where it
	 * cannot be placed does not fail for it */
	int optional;
	/* process(PID) in a run without -c/-x: only that process (0: any
	 * that runs module) */
	long pid;
};

struct _stp_module {
	int abi_version;	 /* STP_ABI_VERSION */
	const char *script_name; /* for messages */
	const struct _stp_probe *probes;
	int nprobes;
	/* Allocate/free globals (maps, stats); init runs before begin probes. */
	int (*init_globals)(struct _stp_context *c);
	void (*free_globals)(void);
	/* Limits as compiled (-D overrides applied). */
	int64_t maxstringlen, maxaction, maxmapentries, maxnesting;
	int64_t maxerrors, maxskipped, maxtrycatch;
	/* Histogram printing as compiled: -DHIST_WIDTH (the '@' columns,
	 * default 50) and -DHIST_ELISION (empty rows kept around data before
	 * the rest are elided as "~"; negative: never elide; default 2). */
	int64_t hist_width, hist_elision;
	/* -DMAXATTACH (default 64): a run without -c/-x warns when it traces
	 * more processes than this */
	int64_t maxattach;
};

/* The symbol staprun looks up in the compiled object. */
#define STP_MODULE_SYMBOL "_stp_module_info"
/* And, optionally (an int: -D STP_CPU_AFFINITY, -1 if not given), the CPU
 * affinity policy of the ptrace engine (doc/cpu-affinity.md). */
#define STP_CPU_AFFINITY_SYMBOL "_stp_module_cpu_affinity"

/* Run a loaded module until it ends; returns staprun's exit status.
 * opts: output file (-o), timeout (-T), target command/pid (-c/-x). */
struct _stp_run_options {
	const char *output_file;
	int timeout_s;
	const char *target_cmd;
	long target_pid;
	int verbose;
};
int _stp_run(const struct _stp_module *m, const struct _stp_run_options *o);
/* staprun -S SIZE[,N] (megabytes, files kept) and -s MB (the output held
 * before it is written); 0: the defaults. Called before _stp_run. */
void _stp_transport_setup(int64_t size_mb, int64_t nfiles, int64_t bufsize_mb);

/* ---- tapset helpers (runtime/tapset_helpers.c, used by the tapset) ---- */

/* text_str, text_strn, string_quoted: copy in to dst (dstsize bytes),
 * escaped so that every character is printable ASCII (\n, \", \ooo octal,
 * \uXXXX for UTF-8, ...). outlen caps the result's length (<= 0:
 * dstsize-1); quoted puts double quotes around it, and "..." after the
 * closing quote when the input did not fit. */
void _stp_text_str(char *dst, size_t dstsize, const char *in, int64_t outlen, int quoted);

/* ---- the rest of the user context tapset (runtime/context_user.c) ---- */
/* Styles of backtrace lines, as SystemTap's: HEX "0x%016llx " (ubacktrace),
 * FULL " 0x... : name+0xOFF/0xSIZE [/path]\n" (print_ubacktrace), BRIEF
 * "name+0xOFF\n", SIMPLE "name+0xOFF [basename]\n" (sprint_ubacktrace). */
/* FULLER: FULL with " at FILE:LINE" after the size (print_ubacktrace_fileline). */
enum { STP_USYM_HEX, STP_USYM_FULL, STP_USYM_BRIEF, STP_USYM_SIMPLE, STP_USYM_FULLER };
/* Return address N of the target thread's stack (0: the pc), 0 past it. */
int64_t _stp_ctx_ustack(struct _stp_context *c, int64_t n);
void _stp_ctx_ubacktrace_print(struct _stp_context *c, int style);
/* As print, into dst (len bytes) without the last separator. */
void _stp_ctx_ubacktrace_sprint(struct _stp_context *c, int style, char *dst, size_t len);
/* usymfileline (what 0), usymfile (1), usymline (2); "0x%016llx" unknown. */
void _stp_ctx_usymfileline(struct _stp_context *c, int what, uint64_t addr, char *dst, size_t len);
/* $dynamic_call_graph (runtime/dcg.c): switch call-graph tracing of the
 * probe's thread on (non-zero; mech: the STP_DCG_MECHANISM text, "" for
 * the default) or off; read its state. */
void _stp_dcg_set(struct _stp_context *c, int64_t on, const char *mech);
/* Before each switch-on: what pass 2 found the script's dynamic_call_graph
 * handlers use (capture: 1 arguments, 2 return values) and what of them
 * needs the thread stopped at the events (NULL: nothing). */
void _stp_dcg_needs(struct _stp_context *c, int64_t capture, const char *stop);
int64_t _stp_dcg_get(struct _stp_context *c);
void _stp_dcg_limit(int what, int64_t n, const char *pattern);
/* The call graph's output (runtime/dcg/sink_run.c), from a begin probe:
 * the format ("NAME" or "NAME:OPTION"), the output file ("-": stap's
 * output); what 0: durations on the tree's returns (v: on), 1: the flight
 * recorder's records per thread (0: off), 2: raw times (v: on; else
 * corrected for the tracer's overhead). Errors are set in c. */
void _stp_dcg_format(struct _stp_context *c, const char *fmt);
void _stp_dcg_output(struct _stp_context *c, const char *path);
void _stp_dcg_sink_opt(struct _stp_context *c, int what, int64_t v);
/* At each switch-on: the -D values (STP_DCG_FORMAT, _OUTPUT, _DURATIONS,
 * _RING, _RAW_TIMES) for what the script did not choose; the first time
 * only. */
void _stp_dcg_sink_defaults(struct _stp_context *c, const char *fmt, const char *out,
			    int64_t durations, int64_t ring, int64_t raw);
/* The flight recorder's ring of c's thread (all: every thread's) written
 * in the format; the number of records written. */
int64_t _stp_dcg_snapshot(struct _stp_context *c, int all);
/* In dynamic_call_graph.call/.return handlers: the event's fields
 * (0 from, 1 to, 2 depth, 3 tail, 4 ns, 5 duration_ns) and names
 * (0 caller, 1 callee / func). */
int64_t _stp_dcg_event(struct _stp_context *c, int field);
void _stp_dcg_event_name(struct _stp_context *c, int which, char *dst, size_t len);
int64_t _stp_ctx_gid(struct _stp_context *c);
int64_t _stp_ctx_euid(struct _stp_context *c);
int64_t _stp_ctx_cpu(struct _stp_context *c);
/* register("rax"...) by SystemTap's x86-64 names; arg N by the calling
 * convention (rdi rsi rdx rcx r8 r9, then the stack). */
int64_t _stp_ctx_register(struct _stp_context *c, const char *name, int sign_extend);
int64_t _stp_ctx_arg(struct _stp_context *c, int64_t n, int sign_extend, int truncate);
/* user_string_n into dst (MAXSTRINGLEN): mode 0 sets the error, 1 warns
 * and gives msg, 2 gives msg quietly; 0 or -1 on a fault. */
int _stp_ctx_user_string_n(struct _stp_context *c, uint64_t addr, int64_t n, char *dst, int mode,
			   const char *msg);
/* An integer of 1/2/4/8 bytes of the target; read fault error, 0. */
int64_t _stp_ctx_user_int(struct _stp_context *c, uint64_t addr, int size, int is_signed);
/* cmdline_args(n, m, delim) and env_var(name) of the target (of the
 * tracer without one), into dst (MAXSTRINGLEN). */
void _stp_ctx_cmdline_args(struct _stp_context *c, int64_t n, int64_t m, const char *delim,
			   char *dst);
void _stp_ctx_env_var(struct _stp_context *c, const char *name, char *dst);

/* ---- compatibility tapsets (runtime/tapset_compat.c) ---- */
/* errno_str(): the symbolic name of err (or -err) into dst; 0 when the
 * number has none. */
int _stp_errno_name(int64_t err, char *dst, size_t len);
/* The floating-point tapset: IEEE doubles carried in the bits of a long,
 * NaNs as SystemTap's softfloat makes them. */
enum { STP_FP_ADD, STP_FP_SUB, STP_FP_MUL, STP_FP_DIV, STP_FP_REM, STP_FP_SQRT };
enum { STP_FP_EQ, STP_FP_LE, STP_FP_LT };
int64_t _stp_fp_arith(int op, int64_t a, int64_t b);
int64_t _stp_fp_compare(int op, int64_t a, int64_t b);
int64_t _stp_fp_from_long(int64_t v);
int64_t _stp_fp32_to_fp64(int64_t v);
/* mode: 0 nearest-even, 1 toward zero, 2 down, 3 up, 4 nearest-away, 6 odd */
int64_t _stp_fp_to_long(int64_t fp, int64_t mode);
/* 0, or -1 when s is not a decimal number */
int _stp_fp_from_string(const char *s, int64_t *out);
void _stp_fp_to_string(int64_t fp, int64_t precision, char *dst, size_t len);
/* The local time zone when the run started: seconds west of UTC, name. */
int64_t _stp_tz_gmtoff(void);
void _stp_tz_name(char *dst, size_t len);
/* proc_mem_*(): pages of process pid (<= 0: the probe's process, or the
 * tracer without one); 0 when unknown. */
enum { STP_PROC_MEM_SIZE, STP_PROC_MEM_RSS, STP_PROC_MEM_SHR, STP_PROC_MEM_TXT, STP_PROC_MEM_DATA };
int64_t _stp_proc_mem(struct _stp_context *c, int64_t pid, int what);
int64_t _stp_page_size(void);
/* system(): cmd runs under /bin/sh once the current handler is done. */
/* switch_file(): output after this handler goes to the next -o file
 * (runtime/transport.c). */
void _stp_switch_file(struct _stp_context *c);
void _stp_system(struct _stp_context *c, const char *cmd);
/* user_string_utf16/32 (width 2 or 4) into dst (MAXSTRINGLEN), as UTF-8;
 * a fault or a bad character sets the error. */
void _stp_ctx_user_string_utf(struct _stp_context *c, uint64_t addr, int width, char *dst);
/* print_regs(): the target thread's registers; nothing without one. */
void _stp_ctx_print_regs(struct _stp_context *c);
/* pexecname(): the name of the parent of the probe's process. */
void _stp_ctx_pexecname(struct _stp_context *c, char *dst, size_t len);
/* --suppress-handler-errors: count c's error without printing it (it
 * does not count towards MAXERRORS). */
void _stp_error_suppress(struct _stp_context *c);
/* stap -t: the probe hit report of n probes (text: pp, location,
 * derivation); frees the stats. */
void _stp_timing_report(int n, struct _stp_stat **stats, const char *const (*text)[3]);

#endif
