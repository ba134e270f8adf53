/* The call graph's mechanisms: how the branches of a traced thread are
 * seen. Each is one `const struct dcg_mech` in a file of its own
 * (dcg/mech_NAME.c) and one line in the table of dcg.c; the core never
 * asks which one runs. A mechanism feeds what the thread did to the core
 * as events (dcg_event), from which the core builds the shadow stack, the
 * records and the tree; the core reads code only through the reader of
 * the thread (struct dcg_reader), which the ptrace side provides.
 *
 * Mechanism files may include the ptrace engine (ptrace/ptrace_engine.h);
 * the core's files (dcg.c, decode.c, events.c, records.c, sink_*.c,
 * dcg_syms.c) may not: this header only names the engine's types. */
#ifndef STP_DCG_MECH_H
#define STP_DCG_MECH_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct _stp_pt_thread; /* the engine's thread: opaque to the core */
struct dthread;	       /* the core's traced thread (dcg_internal.h) */

#pragma GCC visibility push(hidden)

/* ---- reading the target's code ---- */

struct dcg_reader {
	/* len bytes at addr of the thread's address space, as the program
	 * sees them but with the original bytes under breakpoints (code and
	 * stack alike): 0, or -errno when any byte cannot be read. */
	int (*read)(void *ctx, uint64_t addr, void *buf, size_t len);
	void *ctx;
	pid_t pid; /* its process: decodings are cached per process */
};

/* ---- events ---- */

enum dcg_ev_kind {
	DCG_EV_CALL,	  /* a call ran: from the call instruction to the callee;
			   * sp: the return-address slot (rsp after the call) */
	DCG_EV_RETURN,	  /* a ret ran: from the ret to the return address; sp:
			   * rsp after it. from 0: only the return address was
			   * reached (the ret was not seen): frames whose slot is
			   * below sp are closed, nothing else */
	DCG_EV_JUMP,	  /* a taken jump (direct, conditional or indirect) that
			   * may leave the function: from, to, sp (rsp); indirect
			   * set for a jump through a register or memory (longjmp,
			   * an exception's landing pad: frames may be left) */
	DCG_EV_SIGNAL,	  /* the kernel entered a signal handler: from the
			   * interrupted pc (0: unknown), to the handler, sp its
			   * rsp (the restorer's return-address slot), sig */
	DCG_EV_SIGRETURN, /* rt_sigreturn resumed the interrupted code: from the
			   * system call, to where it resumed, sp its rsp */
	DCG_EV_EXIT,	  /* the thread is gone */
	DCG_EV_ON,	  /* tracing switched on: to the pc, sp the rsp */
	DCG_EV_OFF,	  /* tracing switched off */
	DCG_EV_GAP,	  /* events were lost (from: where, if known): the shadow
			   * stack goes on, put right by the stack pointer at the
			   * next call or return */
};

struct dcg_event {
	enum dcg_ev_kind kind;
	uint64_t from, to, sp;
	int64_t ns; /* CLOCK_MONOTONIC (dcg_now_ns) when it happened */
	int sig;    /* DCG_EV_SIGNAL: the signal (0: unknown) */
	int indirect;
	/* Fed after the fact (translate: from a record, the thread is not
	 * stopped at it); else the thread is stopped at the event, and the
	 * script's arg1..arg6 and retval are its registers. */
	int late;
	/* late: the registers the record captured (NULL: none): regs[0..5]
	 * rdi rsi rdx rcx r8 r9 at a call, jump or signal entry, regs[6] rax
	 * at a return */
	const uint64_t *regs;
};

/* What the thread did (events of a thread come in order). The records
 * and the script's dynamic_call_graph.* probes follow from it. */
void dcg_event(struct dthread *d, const struct dcg_event *e);
/* The thread stopped for the mechanism at time ns (call before the
 * events of the stop): at the first stop after tracing was switched on,
 * the root's call event for the script's probes. 1 if a probe switched
 * tracing off: nothing more. */
int dcg_stopped(struct dthread *d, int64_t ns);

/* ---- the mechanism interface ---- */

/* How tracing ends in a thread (thread_off). */
enum dcg_off {
	DCG_OFF_SCRIPT, /* the script set $dynamic_call_graph = 0 (thread stopped) */
	DCG_OFF_GONE,	/* the thread exited (the engine forgets it after this) */
	DCG_OFF_EXEC,	/* its process exec'd: its memory is another image */
	DCG_OFF_END,	/* the end of the run: the engine detaches next, and must
			 * still find a thread in the mode it is in (a step trap
			 * already queued is then swallowed, not delivered) */
};

/* What happened to a process's memory (mem_changed). */
enum dcg_mem {
	DCG_MEM_EXEC, /* exec: everything learnt about its code is wrong */
	DCG_MEM_EXIT, /* it is gone */
	DCG_MEM_LIBS, /* libraries loaded or unloaded (dlopen, dlclose: the
		       * dynamic linker's r_debug watch; also where code
		       * unmapped by the loader is noticed) */
};

struct dcg_mech {
	const char *name; /* as STP_DCG_MECHANISM names it */
	/* 0: not tried by auto; else auto takes the usable mechanism with
	 * the lowest rank */
	int auto_rank;
	/* 1: events are fed after the fact (from records), the thread not
	 * stopped at them: handlers that need it stopped cannot run */
	int late;
	/* Can it run here? 1, or 0 with why (for auto and -v). NULL: always. */
	int (*usable)(char *why, size_t len);
	/* Trace d (d->t stopped in a handler at pc; d->t, d->pid, d->rd set):
	 * 0, or -errno (tracing stays off). */
	int (*thread_on)(struct dthread *d, uint64_t pc);
	/* Tracing has ended in d (d->on is 0 already; d->t still set). last:
	 * no other thread of its process is traced. */
	void (*thread_off)(struct dthread *d, enum dcg_off how, int last);
	/* Events not fed yet (a mechanism that queues them): feed them now,
	 * before output is printed. NULL: none ever wait. */
	void (*drain)(struct dthread *d);
	/* Before a probe handler runs (the output in order): drain, unless
	 * the events may wait (the flight recorder prints nothing until a
	 * snapshot). NULL: drain. */
	void (*flush)(struct dthread *d);
	/* A new thread of a traced process, stopped before it runs (it may
	 * have been created by a traced thread: its registers are made the
	 * program's own). NULL: nothing to do. */
	void (*thread_start)(struct _stp_pt_thread *t);
	/* A thread of a traced process is gone (after thread_off(DCG_OFF_GONE)
	 * if it was traced): what is kept for it goes. NULL: nothing kept. */
	void (*thread_exit)(pid_t tid);
	/* The memory of process pid changed (t: a thread of it, stopped,
	 * with DCG_MEM_LIBS; else NULL). */
	void (*mem_changed)(pid_t pid, struct _stp_pt_thread *t, enum dcg_mem what);
	/* The kernel has just entered a signal handler in d's thread (the
	 * engine stepped into it: pc = the handler, [rsp] = the restorer),
	 * for mechanisms that asked for it (dcg_pt_signal_entries). */
	void (*signal)(struct dthread *d, int sig);
	/* For -v: what it did, as " (...)" after "mechanism NAME". */
	void (*report)(char *how, size_t len);
	/* The end of the run (every thread is off): free everything. */
	void (*finish)(void);
};

/* The mechanism every thread can fall back to. */
extern const struct dcg_mech dcg_mech_breakpoint;
/* The mechanism that traces d's thread from now on (a mechanism that
 * gives up on a thread hands it over): its thread_on is called. */
int dcg_mech_switch(struct dthread *d, const struct dcg_mech *to, uint64_t pc);
/* By name, NULL if none. */
const struct dcg_mech *dcg_mech_named(const char *name);

/* ---- the ptrace side of these interfaces (run_ptrace.c) ---- */

/* The reader of t's address space. */
void dcg_pt_reader(struct dcg_reader *rd, struct _stp_pt_thread *t);
/* Signal handler entries of d's thread go to its mechanism's signal
 * (on 1), or not any more (0). */
void dcg_pt_signal_entries(struct dthread *d, int on);

#pragma GCC visibility pop

#endif
