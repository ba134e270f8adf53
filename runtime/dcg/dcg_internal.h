/* Inside the dynamic call graph: its core (dcg.c: threads, decodings,
 * symbols, the script side), the tree (dcg_tree.c: records, output, the
 * shadow stack), the traps of each mechanism (dcg_trap.c) and the code
 * sites of the breakpoint mechanism (dcg_sites.c). */
#ifndef STP_DCG_INTERNAL_H
#define STP_DCG_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct _stp_pt_thread;
struct _stp_pt_probe;
struct _stp_x86_insn;

/* The instruction at addr from its original bytes (under breakpoints
 * too), read through a small window of the target's code. 0 or -errno. */
int _stp_dcg_read_insn(struct _stp_pt_thread *t, uint64_t addr, struct _stp_x86_insn *in);
/* The cached code window is stale (exec, dlclose, munmap). */
void _stp_dcg_window_drop(void);

/* Is a jump from `from` to `to` a call (a tail call), by callgrind's
 * rules: to a function's entry (its own too, not its .cold part), to a
 * PLT stub, or into another module? A jump elsewhere in the same module
 * (a jump table, a .cold part, code with no symbol) is none. */
int _stp_dcg_enters_func(struct _stp_pt_thread *t, uint64_t from, uint64_t to);

/* The bounds of the function containing addr, when its symbol has a
 * size: 0, else -1. */
int _stp_dcg_func_range(struct _stp_pt_thread *t, uint64_t addr, uint64_t *lo, uint64_t *hi);

/* What a site traps (a site may be both). */
enum {
	DCG_SITE_BRANCH = 1, /* a call, return or jump leaving the code seen so far */
	DCG_SITE_RETURN = 2, /* the return address of a call not descended into */
};
/* Trap every branch of the code reachable from addr, which the thread is
 * about to run: follow straight-line code, conditional and direct jumps
 * inside the function; stop at calls (what follows a call is reached by
 * its return), returns, indirect jumps and jumps into other functions,
 * each a DCG_SITE_BRANCH. Code seen before is not walked again (in a
 * later period of tracing, its sites are armed again without reading the
 * code). */
int _stp_dcg_sites_from(struct _stp_pt_thread *t, uint64_t addr);
/* Trap a return address (DCG_SITE_RETURN). */
int _stp_dcg_site_return(struct _stp_pt_thread *t, uint64_t addr);
/* The flags of the site at addr in pid (0: none), and its instruction. */
int _stp_dcg_site(pid_t pid, uint64_t addr, const struct _stp_x86_insn **in);
/* Tracing is off in all pid's threads: every site's int3 goes; what was
 * learnt about the code stays for the next time (see dcg_sites.c). */
void _stp_dcg_sites_release(pid_t pid);
/* Forget pid's sites without touching its memory (exec, exit). */
void _stp_dcg_sites_forget(pid_t pid);
/* Remove the sites of pid that are no longer in mapped code (dlclose). */
void _stp_dcg_sites_unmapped(struct _stp_pt_thread *t);
/* Everything, at the end of the run (the engine removes the int3s). */
void _stp_dcg_sites_free(void);
/* Sites placed so far (for -v), and times one was armed again. */
uint64_t _stp_dcg_sites_placed(uint64_t *rearms);

/* The sites' probe handler (dcg.c). */
int _stp_dcg_on_site(struct _stp_pt_thread *t, struct _stp_pt_probe *p, void *data);

/* ---- the core (dcg.c, dcg_tree.c, dcg_trap.c) ---- */

/* Not exported from staprun (which links the runtime -rdynamic). */
#pragma GCC visibility push(hidden)

struct _stp_symtab;
struct _stp_syminfo;
struct user_regs_struct;

enum { DCG_CALL = 1, DCG_RET = 2 };
enum { MECH_BLOCKSTEP, MECH_SINGLESTEP, MECH_BREAKPOINT };

/* One event, formatted only when printed. */
struct rec {
	uint8_t kind;
	uint8_t sig; /* a signal handler's call: its signal number */
	uint32_t depth;
	uint64_t ns;   /* since tracing began in the thread */
	uint64_t from; /* call / return instruction (0: the root) */
	uint64_t to;   /* target / return address */
	uint64_t name; /* address whose call-graph name is printed */
};

struct frame {
	uint64_t sp;   /* rsp after the call: the return-address slot */
	uint64_t func; /* the callee (start of its symbol when known) */
	uint64_t ns;
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
	struct _stp_pt_thread *t;
	char comm[32];
	int64_t t0;
	uint64_t prev_pc;
	struct frame *f;
	size_t nf, capf;
	struct rec *r;
	size_t nr, capr;
	/* lazy binding under a PLT call not shown yet: the call's record
	 * goes at index `hold` once the resolved function is known, and the
	 * records from there on wait for it (NO_HOLD: none) */
	size_t hold;
	/* the root's call event, for the script's probes: fired at the first
	 * trap, not from inside the handler that switched tracing on */
	int root_pending;
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

/* dcg.c: threads, decodings, symbols. */
int64_t dcg_now_ns(void);
struct dthread *dcg_find_thread(pid_t tid, int create);
struct _stp_symtab *dcg_symtab_of(pid_t pid);
const struct dec *dcg_decode_at(struct _stp_pt_thread *t, uint64_t addr);
int dcg_is_endbr(struct _stp_pt_thread *t, uint64_t addr);
/* A PLT stub: (endbr64;) jmp *GOT(%rip) in a PLT section. */
int dcg_is_stub(struct _stp_pt_thread *t, uint64_t addr);
/* In a PLT section (a stub, or lazy binding's code there)? */
int dcg_in_plt(pid_t pid, uint64_t addr);
const struct _stp_syminfo *dcg_sym(pid_t pid, uint64_t addr);
/* A function's entry (its symbol's start, not a .cold part's). */
int dcg_func_start(pid_t pid, uint64_t addr);
/* Are a and b in the same function (X.cold counts as X)? */
int dcg_same_func(pid_t pid, uint64_t a, uint64_t b);
/* The function containing pc: its start if known, else pc. */
uint64_t dcg_func_of(pid_t pid, uint64_t pc);

/* records.c: records, output through the format chosen (sink.h). */
/* A call or return: a record for the tree, or the script's probes when
 * it has any. Returns 1 when a record was added (d->r[d->nr - 1]). */
int dcg_emit(struct dthread *d, int kind, uint32_t depth, uint64_t from, uint64_t to,
	     uint64_t name);
/* The held call record of a lazily bound PLT call, in its place. */
void dcg_emit_held(struct dthread *d, uint32_t depth, uint64_t from, uint64_t to, uint64_t ns);
void dcg_flush_thread(struct dthread *d);
/* The end of the run: the format's end. */
void dcg_records_finish(void);

/* dcg_tree.c: the script's probes, the shadow stack. */
int dcg_probes_wanted(void);
void dcg_fire_event(struct dthread *d, int kind, uint32_t depth, uint64_t from, uint64_t to,
		    uint64_t name);
/* The end of the run: the script's probes are looked up again next time. */
void dcg_tree_reset(void);
struct frame *dcg_push(struct dthread *d, uint64_t sp, uint64_t func, int known);
/* Frames whose return-address slot is at or below `limit` are gone. */
void dcg_pop_dead(struct dthread *d, uint64_t limit, uint64_t from, uint64_t to);
/* A new callee at `to` (a call, or a tail call with the caller's slot). */
void dcg_enter(struct dthread *d, struct _stp_pt_thread *t, uint64_t from, uint64_t to, uint64_t sp,
	       int known, int tail, int sig);
/* The instruction x at pc has run, leaving the thread at now with rsp.
 * Returns 1 if x branched. */
int dcg_transfer(struct dthread *d, struct _stp_pt_thread *t, uint64_t pc, const struct dec *x,
		 uint64_t now, uint64_t rsp);
/* The root's call event for the script's probes, at the first trap after
 * tracing was switched on. Returns 1 if a probe switched tracing off. */
int dcg_root_event(struct dthread *d);
/* Signal frames: the restorer's code at a; a handler's entry (the
 * restorer's address at rsp); rsp is the innermost handler frame's slot. */
int dcg_restorer_at(struct _stp_pt_thread *t, uint64_t a);
int dcg_sig_entry(struct _stp_pt_thread *t, uint64_t rsp);
int dcg_in_handler_frame(struct dthread *d, uint64_t rsp);

/* dcg_trap.c: the traps of each mechanism. */
void dcg_on_step(struct _stp_pt_thread *t, void *data);
void dcg_on_signal(struct _stp_pt_thread *t, int sig, void *data);

#pragma GCC visibility pop

#endif
