/* Inside the dynamic call graph. The core (no ptrace):
 *   dcg.c       threads, the table of mechanisms, switching on and off,
 *               limits, the end of the run and its -v report
 *   events.c    the event API: the shadow stack, from events to records
 *   decode.c    reading and decoding code (through a thread's reader),
 *               and what the code is: PLT stubs, function entries, signal
 *               restorers
 *   records.c   records, printed through the output format (sink.h)
 *   sink_*.c    the output formats
 *   dcg_syms.c  the symbol tables per process
 * The ptrace side (may include ptrace/ptrace_engine.h):
 *   run_ptrace.c   the script's calls, the run's hooks, the script's
 *                  dynamic_call_graph.* probes, the reader over ptrace
 *   mech_*.c       the mechanisms (mech.h). */
#ifndef STP_DCG_INTERNAL_H
#define STP_DCG_INTERNAL_H

#include "mech.h"
#include "sink.h"

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct _stp_x86_insn;
struct _stp_symtab;
struct _stp_syminfo;

/* Not exported from staprun (which links the runtime -rdynamic). */
#pragma GCC visibility push(hidden)

enum { DCG_CALL = 1, DCG_RET = 2 };

/* One event, formatted only when printed: struct dcg_rec (sink.h, whose
 * plain() reads them where they are), kind DCG_CALL or DCG_RET. */

struct frame {
	uint64_t sp;   /* rsp after the call: the return-address slot */
	uint64_t func; /* the callee (start of its symbol when known) */
	uint64_t ns;
	uint64_t site; /* a PLT stub's frame: the call (or jump) to it, the
			* `from` of the callee's event once the stub is left */
	uint8_t known; /* sp known (0: root entered other than by a call) */
	uint8_t stub;  /* in a PLT stub: the call is not shown yet */
	uint8_t tail;
	uint8_t hide; /* not shown (excluded, too deep, under a leaf) */
	uint8_t mute; /* its callees are not shown */
	uint8_t sig;  /* a signal handler entered by the kernel: the signal */
};

struct dthread {
	pid_t tid, pid;
	int on;
	const struct dcg_mech *mech; /* tracing it (while on) */
	struct _stp_pt_thread *t;    /* the engine's thread, while on */
	/* a late mechanism's records read with the thread held at the
	 * last one's event (translate's event stops): that event's handlers
	 * and the root's call, fired at the first read, get the thread */
	int held;
	struct dcg_reader rd; /* its code */
	char comm[32];
	int64_t t0;
	uint64_t now;	  /* the time of the event being handled, since t0 */
	uint64_t prev_pc; /* for the step mechanisms */
	struct frame *f;
	size_t nf, capf;
	struct dcg_rec *r;
	size_t nr, capr;
	/* lazy binding under a PLT call not shown yet: the call's record
	 * goes at index `hold` once the resolved function is known, and the
	 * records from there on wait for it (NO_HOLD: none) */
	size_t hold;
	/* the root's call event, for the script's probes: fired at the first
	 * trap, not from inside the handler that switched tracing on */
	int root_pending;
	uint64_t gaps; /* times events were lost */
	/* the shortcut's last callee, no PLT stub, named in the symbol
	 * cache of generation q_gen (q_to 0: none) */
	uint64_t q_to, q_gen;
	const struct dcg_event *ev; /* the event being handled (dcg_event) */
	int unwinding;		    /* a return being fired was left by longjmp */
};
#define NO_HOLD ((size_t)-1)

/* Decodings per (pid, address). */
struct dec {
	pid_t pid;
	uint64_t addr;
	uint8_t valid, len, kind, syscall, ripjmp;
	uint8_t endbr;	/* endbr64 / endbr32 */
	uint8_t mov_rt; /* mov $15,%rax: rt_sigreturn's number */
	uint64_t target;
};

extern struct dthread **dcg_threads;
extern size_t dcg_nthreads;
/* Limits (dynamic_call_graph_max_depth/_leaf/_exclude). */
extern int64_t dcg_max_depth;
extern char **dcg_leafpat, **dcg_exclpat;
extern size_t dcg_nleaf, dcg_nexcl;
/* For the report at -v. */
extern uint64_t dcg_n_stops, dcg_n_calls, dcg_n_rets;
extern uint64_t dcg_n_other; /* stops of untraced threads at the sites */

/* ---- dcg.c: what the script's handlers need (_stp_dcg_needs) ---- */
/* _STP_DCG_CAPTURE's bits (elaborate_dcg_needs.c): the registers the
 * handlers read (as XL_CAP_ARGS and XL_CAP_RET), and the events whose
 * handlers need the thread stopped there. */
#define DCG_CAP_ARGS 1	    /* the calls' arguments */
#define DCG_CAP_RET 2	    /* the returns' rax */
#define DCG_CAP_STOP_CALL 4 /* .call handlers need the thread */
#define DCG_CAP_STOP_RET 8  /* .return handlers need the thread */
int dcg_capture(void);
/* What needs the thread stopped at the events (NULL: nothing). */
const char *dcg_stop_why(void);

/* ---- dcg.c: threads ---- */
int64_t dcg_now_ns(void);
struct dthread *dcg_find_thread(pid_t tid, int create);
/* The mechanism of this run (chosen at the first switch-on; mech: the
 * -D value, STAP_DCG_MECHANISM wins). */
const struct dcg_mech *dcg_mech_pick(const char *mech);
/* Switch tracing on in d (d->t stopped at pc with sp; d->t, d->pid,
 * d->rd, d->comm set): 0, or -errno (then off). */
int dcg_thread_on(struct dthread *d, uint64_t pc, uint64_t sp);
void dcg_thread_off(struct dthread *d, enum dcg_off how);
/* Memory of pid changed (t: a stopped thread of it, DCG_MEM_LIBS only). */
void dcg_mem_changed(pid_t pid, struct _stp_pt_thread *t, enum dcg_mem what);
/* The code at [lo, hi) of pid was unmapped, replaced or protected anew by
 * the program's own system calls (a mechanism saw them): what was decoded
 * and named there goes, the records of pid's threads printed first. */
void dcg_code_changed(pid_t pid, uint64_t lo, uint64_t hi);
/* A thread of a traced process was created, or is gone (every
 * mechanism's thread_start / thread_exit). */
void dcg_new_thread(struct _stp_pt_thread *t);
void dcg_thread_exit(pid_t tid);

/* ---- decode.c: code ---- */
/* The instruction at addr from its original bytes (under breakpoints
 * too), read through a small window of the target's code. 0 or -errno. */
int _stp_dcg_read_insn(const struct dcg_reader *rd, uint64_t addr, struct _stp_x86_insn *in);
const struct dec *dcg_decode_at(const struct dcg_reader *rd, uint64_t addr);
/* What was read and decoded of pid's code is stale (exec, dlclose). */
void dcg_decodings_drop(pid_t pid);
/* Only those that may hold bytes of [lo, hi). */
void dcg_decodings_drop_range(pid_t pid, uint64_t lo, uint64_t hi);
void dcg_decode_free(void);
int dcg_is_endbr(const struct dcg_reader *rd, uint64_t addr);
/* A PLT stub: (endbr64;) jmp *GOT(%rip) in a PLT section. */
int dcg_is_stub(const struct dcg_reader *rd, uint64_t addr);
/* In a PLT section (a stub, or lazy binding's code there)? */
int dcg_in_plt(pid_t pid, uint64_t addr);
/* A function's entry (its symbol's start, not a .cold part's). */
int dcg_func_start(pid_t pid, uint64_t addr);
/* Are a and b in the same function (X.cold counts as X)? */
int dcg_same_func(pid_t pid, uint64_t a, uint64_t b);
/* The function containing pc: its start if known, else pc. */
uint64_t dcg_func_of(pid_t pid, uint64_t pc);
/* Is a jump from `from` to `to` a call (a tail call), by callgrind's
 * rules: to a function's entry (its own too, not its .cold part), to a
 * PLT stub, or into another module? A jump elsewhere in the same module
 * (a jump table, a .cold part, code with no symbol) is none. */
int dcg_enters_func(const struct dcg_reader *rd, uint64_t from, uint64_t to);
/* The bounds of the function containing addr, when its symbol has a
 * size: 0, else -1. */
int dcg_func_range(pid_t pid, uint64_t addr, uint64_t *lo, uint64_t *hi);
/* Signal frames: the restorer's code at a (mov $15,%rax; syscall); a
 * handler's entry (the restorer's address at rsp). */
int dcg_restorer_at(const struct dcg_reader *rd, uint64_t a);
int dcg_sig_entry(const struct dcg_reader *rd, uint64_t rsp);

/* ---- dcg_syms.c: symbols ---- */
struct _stp_symtab *dcg_symtab_of(pid_t pid);
const struct _stp_syminfo *dcg_sym(pid_t pid, uint64_t addr);

/* ---- events.c: the shadow stack ---- */
/* The instruction x at pc has run, leaving the thread at now with rsp:
 * the event it is, if any. Returns 1 if x branched. */
int dcg_ran(struct dthread *d, uint64_t pc, const struct dec *x, uint64_t now, uint64_t rsp,
	    int64_t ns);
/* A shortcut of dcg_event for the commonest events of a batch (a call
 * that leaves no frame, a return of the innermost frame to its caller),
 * where no limit, probe or lazy binding is in play: dcg_event_quick(d,
 * kind, from, to, sp, ns) is 1 if it handled the event exactly as
 * dcg_event would have, 0 if dcg_event must (inline: events_quick.h).
 * quick_ok: whether the shortcut may be used at all, called once per
 * batch (it notes the symbol cache's generation for the batch). */
int dcg_event_quick_ok(void);
extern uint64_t dcg_quick_gen;
/* rsp is the slot of the innermost handler's frame: back in the handler
 * from a callee, or the handler's tail call (not a new signal). */
int dcg_in_handler_frame(struct dthread *d, uint64_t rsp);
/* Events were lost in d and its stack is found again: g[0..n), the
 * frames under the root, outermost first, each by its return-address
 * slot and function (sig: a signal handler's, the signal; tail: entered
 * by a tail call of the frame before, at the same slot). The shadow
 * stack is put right at ns: frames gone are closed, frames missing
 * entered, as returns and calls. */
struct dcg_frame_at {
	uint64_t sp, func;
	int sig, tail;
};
void dcg_place_stack(struct dthread *d, const struct dcg_frame_at *g, size_t n, int64_t ns);

/* ---- records.c ---- */
/* A call or return: a record for the tree, or the script's probes when
 * it has any. Returns 1 when a record was added (d->r[d->nr - 1]). */
int dcg_emit(struct dthread *d, int kind, uint32_t depth, uint64_t from, uint64_t to,
	     uint64_t name);
/* dcg_emit's record alone, for a caller that knows the script has no
 * dynamic_call_graph probes (the counts of the -v report not included). */
int dcg_emit_rec(struct dthread *d, int kind, uint32_t depth, uint64_t from, uint64_t to,
		 uint64_t name);
/* Room for d's next record (d->r[d->nr]): the records flushed when
 * they are many, the array grown when full. 0, or -1 (out of memory). */
int dcg_rec_room(struct dthread *d);
/* The held call record of a lazily bound PLT call, in its place. */
void dcg_emit_held(struct dthread *d, uint32_t depth, uint64_t from, uint64_t to, uint64_t ns);
void dcg_flush_thread(struct dthread *d);
/* Tracing ended in d at ns (CLOCK_MONOTONIC): its records printed, then
 * the frames still open closed there, for the formats that close them. */
void dcg_records_stop(struct dthread *d, int64_t ns);
/* The end of the run: the format's end. */
void dcg_records_finish(void);

/* ---- calib_ptrace.c, calib_translate.c ---- */
/* The tracer's cost of one event under mechanism mech, in ns, measured
 * now (0 where it is not measured), and how it was measured. */
int64_t dcg_calibrate(const char *mech, char *how, size_t len);
int64_t dcg_calibrate_translate(char *how, size_t len);
/* The mechanism of this run (NULL before the first switch-on). */
const char *dcg_mech_name(void);

/* ---- run_ptrace.c: the script's dynamic_call_graph.* probes ---- */
int dcg_probes_wanted(void);
void dcg_probes_reset(void);
void dcg_fire_event(struct dthread *d, int kind, uint32_t depth, uint64_t from, uint64_t to,
		    uint64_t name);

#pragma GCC visibility pop

#include "events_quick.h"

#endif
