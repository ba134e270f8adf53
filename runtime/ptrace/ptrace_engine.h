/* The ptrace engine: runs probes in user-space processes from the tracer.
 *
 * A session traces processes that it launched (_stp_pt_launch) or attached
 * to (_stp_pt_attach), with every thread of every traced process, and the
 * children they fork, vfork or clone. Clients put probes (int3 breakpoints)
 * at addresses; when a thread hits one, the engine calls the probe's
 * handler with that thread stopped; the handler reads and writes registers
 * and memory through the functions below. The probed instruction is then
 * emulated in the tracer (common function-entry instructions, branches) or
 * executed out of line in a scratch page of the target, so the breakpoint
 * stays in place under running threads and a hit usually costs one ptrace
 * stop.
 *
 * Everything is per session; a thread's context (struct _stp_pt_thread) is
 * the first argument of the calls that act on one thread. Functions return
 * 0 or a negative errno value and never exit the process. All calls must
 * come from one thread of the tracer (ptrace requests are only accepted
 * from the thread that attached). What the engine does is printed on
 * stderr through the runtime's debug domains ptrace and bkpt
 * (lang/debug.h, doc/debug-domains.md): STAP_PTRACE_DEBUG=1 in the
 * environment or _stp_pt_set_debug turn both on at level 1, as do
 * staprun -vvv (stap -vvvv or --vp 00004) and STAP_DEBUG=ptrace,bkpt.
 *
 * The event loop. The engine reaps events with waitpid(-1, __WALL), so it
 * owns every child of the tracer process (a child it does not know is
 * reported through the `other_exit` callback). A client loop either
 *   - calls _stp_pt_wait(s, -1) (blocks in waitpid until one event; a signal
 *     handler installed without SA_RESTART interrupts it with -EINTR), or
 *   - watches SIGCHLD (a signalfd, as runtime/run.c does) and calls
 *     _stp_pt_dispatch(s) after each SIGCHLD; dispatch never blocks.
 * Handlers run inside those calls. _stp_pt_active() says whether anything
 * is still traced. _stp_pt_detach_all() ends tracing at any moment outside
 * a handler (on SIGINT, on error, at the end), leaving every process as it
 * was: breakpoints removed, registers of threads caught in the middle of a
 * displaced instruction restored, threads detached and running (or still
 * stopped if the process was stopped by a signal, as before).
 */
#ifndef STP_PTRACE_ENGINE_H
#define STP_PTRACE_ENGINE_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/user.h>

struct _stp_pt_session;
struct _stp_pt_proc;   /* one traced process (thread group) */
struct _stp_pt_thread; /* one traced thread */
struct _stp_pt_probe;  /* one probe at one address of one process */

/* What a probe handler returns: 0, or a negative errno (counted in the
 * session's error count; the thread resumes all the same). */
typedef int (*_stp_pt_handler)(struct _stp_pt_thread *t, struct _stp_pt_probe *p, void *data);

/* Per-stop callback of single-step / single-block mode (_stp_pt_step_mode). */
typedef void (*_stp_pt_step_fn)(struct _stp_pt_thread *t, void *data);

struct _stp_pt_callbacks {
	/* A process image was loaded by exec (also the first exec of a launched
	 * command; with _STP_PT_SHELL that is the shell, which then usually
	 * forks the command: follow forks to see it). Every probe of the
	 * process is gone; the thread is stopped before the new program's first
	 * instruction, so the client places probes (again) here. */
	void (*exec)(struct _stp_pt_thread *t, void *user);
	/* A new traced process (a followed fork/vfork child), stopped before it
	 * runs; it already has copies of its parent's probes. A vfork child,
	 * or a clone(CLONE_VM) one without CLONE_THREAD, shares its parent's
	 * memory and so the very same probes, until it execs. */
	void (*fork)(struct _stp_pt_thread *parent, struct _stp_pt_proc *child, void *user);
	/* A new thread, stopped before it runs; also, at the first
	 * _stp_pt_resume() after _stp_pt_attach(), each thread but the main
	 * one that was there already (in tid order), still stopped. */
	void (*thread_start)(struct _stp_pt_thread *t, void *user);
	/* A thread is gone (status as waitpid gives it). */
	void (*thread_exit)(struct _stp_pt_thread *t, int status, void *user);
	/* A traced process has ended; status as waitpid gives it. */
	void (*proc_exit)(struct _stp_pt_proc *p, int status, void *user);
	/* A child of the tracer that is not traced has ended (already reaped). */
	void (*other_exit)(pid_t pid, int status, void *user);
};

/* Options of a session. */
enum {
	_STP_PT_FOLLOW_FORK = 1, /* trace fork/vfork children (else clean and
				  * release them: their copy of memory gets
				  * every breakpoint removed; one sharing the
				  * memory is traced, without handlers, until
				  * it execs or ends) */
	_STP_PT_SHELL = 2,	 /* _stp_pt_launch runs argv[0] via /bin/sh -c */
};

struct _stp_pt_session *_stp_pt_session_new(const struct _stp_pt_callbacks *cb, void *user,
					    int options);
/* Detaches everything still traced, then frees. */
void _stp_pt_session_free(struct _stp_pt_session *s);

/* Start a command, traced, stopped before the first instruction of the
 * program (the exec callback has run). Its threads stay stopped until
 * _stp_pt_resume(). The target dies with the tracer (PTRACE_O_EXITKILL).
 * It starts with the signal state of _stp_pt_launch_signals (by default
 * no signal blocked, none ignored), whatever the tracer's settings.
 * argv is NULL-terminated; with _STP_PT_SHELL argv[0] is a shell command.
 * A program that cannot be run gives the exec errno (-ENOENT, ...). */
int _stp_pt_launch(struct _stp_pt_session *s, char *const argv[], struct _stp_pt_proc **out);
/* The signal mask of the programs _stp_pt_launch starts, and the signals
 * they ignore (every other is at its default): the caller's, usually. */
void _stp_pt_launch_signals(struct _stp_pt_session *s, const sigset_t *mask,
			    const sigset_t *ignored);
/* Attach to a running process and all its threads (also those created
 * while attaching); all stopped on return, until _stp_pt_resume(). */
int _stp_pt_attach(struct _stp_pt_session *s, pid_t pid, struct _stp_pt_proc **out);
/* Let the threads of a process run (after launch or attach). */
int _stp_pt_resume(struct _stp_pt_proc *p);

/* Handle every event waiting now (never blocks). Returns the number of
 * events handled or a negative errno. */
int _stp_pt_dispatch(struct _stp_pt_session *s);
/* Handle events, waiting up to timeout_ms (-1: until at least one; 0: do
 * not wait). Returns the number handled (0 on timeout), -EINTR when a
 * signal interrupted the wait, -ECHILD when nothing is traced. */
int _stp_pt_wait(struct _stp_pt_session *s, int timeout_ms);
/* Number of traced processes. */
int _stp_pt_active(const struct _stp_pt_session *s);

/* Stop tracing: remove every breakpoint and detach every thread of one
 * process, or of all. Call outside handlers (from the loop). */
int _stp_pt_detach(struct _stp_pt_proc *p);
int _stp_pt_detach_all(struct _stp_pt_session *s);
/* The first half of a detach, for a client that must clean the process
 * first: every thread stopped and held until the detach (its queued
 * events handled the detach way: no handlers, a breakpoint hit rewound,
 * other signals kept, an int3 not ours kept as SIGTRAP). 0, -EBUSY in a
 * handler, -ESRCH when p went meanwhile (p is then freed). */
int _stp_pt_hold_for_detach(struct _stp_pt_proc *p);
/* The signal t gets when it resumes (or is detached), 0 for none; set
 * it (a client dropping a SIGTRAP of its own int3). */
int _stp_pt_resume_signal(const struct _stp_pt_thread *t);
void _stp_pt_set_resume_signal(struct _stp_pt_thread *t, int sig);

/* Probes. `entry` runs when a thread reaches addr (NULL: none). `ret`, if
 * not NULL, makes addr a function entry with a return probe: when the
 * function returns to its caller, `ret` runs at the return address
 * (matched by stack pointer; frames left by longjmp or exceptions are
 * dropped). Several probes may share an address; their handlers run in
 * the order they were placed, and a probe placed at addr by a handler of
 * a hit there runs in that hit too (after the others), unless a handler
 * moved the thread. Placing a probe does not need the process stopped. */
int _stp_pt_probe_add(struct _stp_pt_proc *p, uint64_t addr, _stp_pt_handler entry,
		      _stp_pt_handler ret, void *data, struct _stp_pt_probe **out);
/* Remove one probe; its int3 goes when no other probe or pending return
 * needs it. Safe while threads run (a thread that already trapped on it is
 * rewound to run the original instruction), and from handlers. -ENOENT
 * for a probe of another address space, or one the engine dropped (its
 * code unmapped: see _stp_pt_watch_libraries). After 0, or -ENOENT for a
 * dropped probe, pr is not valid any more (its record is freed once no
 * return frame names it). */
int _stp_pt_probe_remove(struct _stp_pt_proc *p, struct _stp_pt_probe *pr);
uint64_t _stp_pt_probe_addr(const struct _stp_pt_probe *pr);
/* Number of times the probe's entry (resp. return) fired. */
uint64_t _stp_pt_probe_hits(const struct _stp_pt_probe *pr);
uint64_t _stp_pt_probe_returns(const struct _stp_pt_probe *pr);

/* A word per return-probe frame (for @entry values): in the entry handler
 * of a probe with `ret` it points at the word of the frame being entered
 * (0 at first); in the return handler, at the same word. NULL elsewhere. */
uint64_t *_stp_pt_frame_data(struct _stp_pt_thread *t);

/* Thread context, valid while the thread is stopped (in handlers). */
pid_t _stp_pt_tid(const struct _stp_pt_thread *t);
pid_t _stp_pt_pid(const struct _stp_pt_thread *t);
struct _stp_pt_proc *_stp_pt_thread_proc(struct _stp_pt_thread *t);
pid_t _stp_pt_proc_pid(const struct _stp_pt_proc *p);
/* One of p's threads (the most recent), NULL when it has none. */
struct _stp_pt_thread *_stp_pt_proc_thread(struct _stp_pt_proc *p);
/* Do two traced processes share one address space (vfork, CLONE_VM)? */
int _stp_pt_proc_shares_mm(const struct _stp_pt_proc *a, const struct _stp_pt_proc *b);
/* The address of the probe point being handled (the breakpoint address,
 * or the return address in a return probe). */
uint64_t _stp_pt_probe_point(const struct _stp_pt_thread *t);
int _stp_pt_get_regs(struct _stp_pt_thread *t, struct user_regs_struct *r);
int _stp_pt_set_regs(struct _stp_pt_thread *t, const struct user_regs_struct *r);
/* Target memory. Return 0, or -EFAULT when any byte is not accessible.
 * Reads see the program's bytes (0xcc where a breakpoint is), except
 * _stp_pt_read_code, which shows the original bytes under breakpoints.
 * Writes go through page protections (code too) and keep breakpoints. */
int _stp_pt_read(struct _stp_pt_thread *t, uint64_t addr, void *buf, size_t len);
int _stp_pt_read_code(struct _stp_pt_thread *t, uint64_t addr, void *buf, size_t len);
int _stp_pt_write(struct _stp_pt_thread *t, uint64_t addr, const void *buf, size_t len);
/* The same for a process when no thread is at hand (e.g. after attach;
 * SDT semaphores). */
int _stp_pt_proc_read(struct _stp_pt_proc *p, uint64_t addr, void *buf, size_t len);
int _stp_pt_proc_write(struct _stp_pt_proc *p, uint64_t addr, const void *buf, size_t len);

/* Client data of a thread, a process and the session. */
void **_stp_pt_thread_user(struct _stp_pt_thread *t);
void **_stp_pt_proc_user(struct _stp_pt_proc *p);
void *_stp_pt_session_user(struct _stp_pt_session *s);

/* System call probes: fn(t, is_exit, nr, data) runs at every system call
 * entry and exit of every thread of p, present and future (and of followed
 * children), with the thread stopped: arguments in the registers (rdi,
 * rsi, rdx, r10, r8, r9), the return value in rax at exit. An exit may come
 * without its entry (a call already running when this was switched on) and
 * an entry without its exit (exit, exec). fn NULL: off. Two stops per
 * system call of p while on; single-step mode takes precedence. */
typedef void (*_stp_pt_syscall_fn)(struct _stp_pt_thread *t, int is_exit, long nr, void *data);
int _stp_pt_syscalls(struct _stp_pt_proc *p, _stp_pt_syscall_fn fn, void *data);

/* System-call stops of one thread for a client of its own, apart from the
 * probes above (both see their stops when both want them). While fn is
 * set on t, t stops at the entry and exit of each of its system calls
 * (two stops each, whatever the call), and fn(t, c, data) runs with t
 * stopped at both for a call whose number nr is below nwant with
 * want[nr] not 0 (the table stays the caller's, unchanged while set):
 * at the entry, before the probes' fn, then at its exit, after the
 * entry's call and before the probes' fn (c->exit 1, c->ret set). An exit
 * whose entry fn did not see is not reported; nor is a call run while t
 * steps (single-step mode, an instruction out of line). Dropped at exec;
 * a new thread or fork child starts without it. fn NULL: off. */
struct _stp_pt_syscall {
	long nr;
	uint64_t args[6]; /* the entry's (rdi, rsi, rdx, r10, r8, r9) */
	int exit;	  /* 0: the entry, 1: the exit */
	int64_t ret;	  /* at the exit: the result (a negative errno on failure) */
	uint64_t note;	  /* the client's, kept from the entry to its exit */
};
typedef void (*_stp_pt_syscall_watch_fn)(struct _stp_pt_thread *t, struct _stp_pt_syscall *c,
					 void *data);
int _stp_pt_watch_syscalls(struct _stp_pt_thread *t, const unsigned char *want, size_t nwant,
			   _stp_pt_syscall_watch_fn fn, void *data);
/* System-call stops that only a watch wanted (no probes of the process
 * wanted them), in every session so far. */
uint64_t _stp_pt_watch_syscall_stops(void);

/* Shared libraries (the dynamic linker's r_debug interface). After this,
 * fn(t, data) runs, with thread t stopped, whenever the set of loaded
 * libraries has changed (dlopen and dlclose too), and once when the
 * initial libraries are loaded if called at the exec stop (before that, no
 * library is mapped). Returns -ENOENT for a static executable. Dropped at
 * exec like probes; followed fork children keep it. After a dlclose,
 * before fn runs, every probe on code no longer mapped is gone (as if
 * removed: removing it again gives -ENOENT), a fork child's copies too. */
typedef void (*_stp_pt_libs_fn)(struct _stp_pt_thread *t, void *data);
int _stp_pt_watch_libraries(struct _stp_pt_proc *p, _stp_pt_libs_fn fn, void *data);
/* The code at [lo, hi) of t's address space is gone: its program unmapped
 * it or mapped other memory over it itself (munmap, mmap MAP_FIXED,
 * mremap), not through the dynamic linker. Every breakpoint there is
 * dropped as after a dlclose (above), with nothing written at its
 * address: that memory is not the code the int3 was put in. moved_to not
 * 0: mremap moved those pages there, our int3s in them: the original
 * bytes are put back at their new places. */
void _stp_pt_code_gone(struct _stp_pt_thread *t, uint64_t lo, uint64_t hi, uint64_t moved_to);
/* fn(name, load bias, data) for each object the dynamic linker has loaded,
 * in its order (the main program first, with name ""). Returns the count,
 * or -ENOENT before the dynamic linker has run / for a static program. */
int _stp_pt_each_library(struct _stp_pt_proc *p,
			 void (*fn)(const char *name, uint64_t bias, void *data), void *data);

/* Single-step (each instruction) or single-block (each taken branch where
 * the processor honours BTF) one thread: from its next resume on, every
 * trap calls fn(t, data) with the thread stopped. _STP_PT_STEP_NONE stops.
 * Breakpoints keep working in that thread (the step callback also runs for
 * the instruction displaced by a breakpoint). */
enum { _STP_PT_STEP_NONE, _STP_PT_STEP_INSN, _STP_PT_STEP_BLOCK };
int _stp_pt_step_mode(struct _stp_pt_thread *t, int mode, _stp_pt_step_fn fn, void *data);
/* Signal handler entries of one thread. While fn is set on t, each time
 * the engine resumes t delivering a signal that has a handler, it resumes
 * with PTRACE_SINGLESTEP instead: the kernel builds the signal frame and t
 * stops again before the handler's first instruction. There fn(t, sig,
 * data) runs with t stopped (rip = the handler, [rsp] = the restorer's
 * return address), then t resumes as its mode says. That trap never
 * reaches the program, and a probe on the handler's first instruction
 * fires once, after fn. A signal without a handler (default or ignored,
 * per /proc SigCgt) is delivered as usual, with no call; one whose handler
 * went away meanwhile costs one swallowed step and no call. Step mode
 * (_stp_pt_step_mode) takes precedence: then nothing special happens and
 * its callback sees the handler entry instead. Not called while
 * detaching. Dropped at exec, like step mode; a new thread or fork child
 * starts without it. fn NULL: off. Returns 0. */
typedef void (*_stp_pt_sigstep_fn)(struct _stp_pt_thread *t, int sig, void *data);
int _stp_pt_signal_step(struct _stp_pt_thread *t, _stp_pt_sigstep_fn fn, void *data);

/* Self-test: does PTRACE_SINGLEBLOCK stop only at taken branches here?
 * 1 yes, 0 no (it steps every instruction: common in virtual machines),
 * negative errno if it could not be found out. Forks a short-lived child. */
int _stp_pt_blockstep_honoured(void);

/* Self-test: does an execution breakpoint in a debug register (DR0/DR7
 * through PTRACE_POKEUSER) fire? 1 yes, 0 no (refused, or accepted and
 * silently ignored: our virtual machines), negative errno if unknown. */
int _stp_pt_hwbp_honoured(void);

/* For a mechanism that runs a thread from code of its own inside the
 * target (runtime/xlate/: translated code). While hooks are set on t:
 *   stop(t, status) runs at every stop of t before the engine looks at it
 *     (handlers, breakpoints, signals). It makes t's registers native
 *     (_stp_pt_set_regs) so that everything else sees the program's own
 *     state (a breakpoint hit in its code looks like one in the
 *     program's: rip = address + 1); it returns 1 when the stop was the
 *     mechanism's own (the engine then just resumes t), else 0.
 *   resume(t, sig) runs when the engine resumes t normally (continue,
 *     system-call tracing, or PTRACE_LISTEN of a group-stop), not when it
 *     steps t (out of line, step mode, into a signal handler); sig is
 *     the signal delivered. It may change t's registers (back into its
 *     code). So the instruction under a breakpoint runs as for any
 *     thread (emulated or out of line) before the mechanism takes over.
 * h NULL: off. */
struct _stp_pt_thread_hooks {
	int (*stop)(struct _stp_pt_thread *t, int status, void *data);
	void (*resume)(struct _stp_pt_thread *t, int sig, void *data);
};
void _stp_pt_thread_hooks(struct _stp_pt_thread *t, const struct _stp_pt_thread_hooks *h,
			  void *data);
/* Make stopped thread t run system call nr(a[0..5]) and give its result
 * in *ret (a negative errno as the kernel returns it); t's registers are
 * restored. 0, or a negative errno when the call could not be made
 * (-ESRCH: t died). */
int _stp_pt_inject_syscall(struct _stp_pt_thread *t, long nr, const uint64_t a[6], int64_t *ret);
/* Single-step stopped thread t by one instruction (a signal arriving
 * meanwhile is kept for delivery when t resumes; pushfq and popfq are
 * emulated, see ptrace_mem.c). 0 or -errno. */
int _stp_pt_step_insn(struct _stp_pt_thread *t);
/* Stop running thread t (PTRACE_INTERRUPT); its stop goes through the
 * loop like any other (hooks too), and it resumes. 1 if it was running,
 * 0 if it is stopped already, -errno. */
int _stp_pt_interrupt(struct _stp_pt_thread *t);
/* Stop running thread t now and wait for it (its own wait statuses only):
 * its stop hook runs (registers native), nothing else of the loop does.
 * 1: stopped for the caller until _stp_pt_stop_thread_end(t), which
 * resumes it; 0: it was stopped already (nothing to end); -EAGAIN: it
 * stopped for something else or exited (that is left to the loop, it
 * stays stopped till then), or is a zombie (it runs on); -errno. Never
 * blocks: it polls for the stop. Callable from handlers. */
int _stp_pt_stop_thread(struct _stp_pt_thread *t);
void _stp_pt_stop_thread_end(struct _stp_pt_thread *t);
/* Is one of the engine's int3s in memory at addr in p's address space? */
int _stp_pt_bkpt_at(struct _stp_pt_proc *p, uint64_t addr);
/* The out-of-line copy of the instruction under the breakpoint at addr
 * (it jumps back to the original code after it), 0 if none. */
uint64_t _stp_pt_bkpt_slot(struct _stp_pt_proc *p, uint64_t addr);
/* fn(addr, armed, orig, data) runs whenever an int3 of the engine is
 * written (armed 1) or removed (armed 0) in p's address space (shared
 * with vfork and CLONE_VM children; not inherited by fork children), orig
 * the byte under it; and at once for each int3 there now. fn NULL: off. */
typedef void (*_stp_pt_bkpt_fn)(uint64_t addr, int armed, uint8_t orig, void *data);
void _stp_pt_watch_breakpoints(struct _stp_pt_proc *p, _stp_pt_bkpt_fn fn, void *data);

/* Counters of a session, for the end-of-run report. */
struct _stp_pt_stats {
	uint64_t stops;	   /* ptrace stops handled */
	uint64_t hits;	   /* entry probe hits */
	uint64_t returns;  /* return probe hits */
	uint64_t emulated; /* displaced instructions emulated */
	uint64_t stepped;  /* displaced instructions run out of line */
	uint64_t errors;   /* handler errors and engine failures */
};
void _stp_pt_get_stats(const struct _stp_pt_session *s, struct _stp_pt_stats *st);
/* The same summed over every session freed so far (for a report made
 * after the client has freed its session). */
void _stp_pt_total_stats(struct _stp_pt_stats *st);

/* CPU affinity (doc/cpu-affinity.md). A thread that stops all the time
 * and the tracer run faster on one CPU; the policy says when the engine
 * puts them there:
 *   off: never;
 *   auto (the default): while a client asks (_stp_pt_colocate), and while
 *     a thread stops at a high rate (probe hits), checked periodically by
 *     a timer that raises SIGCHLD in the tracer (the loop then calls
 *     _stp_pt_dispatch, which finds nothing to reap);
 *   always: every thread of a followed process from its first stop on.
 * A thread's own mask comes back when it is let go and at detach; its
 * children get its own mask, not the pin; the tracer's own comes back
 * when no thread is co-located. A mask the program set meanwhile stays. */
enum { _STP_PT_AFF_OFF, _STP_PT_AFF_AUTO, _STP_PT_AFF_ALWAYS };
/* The policy of sessions made from now on: the STAP_CPU_AFFINITY
 * environment variable (a name or a number) if set, else this (-1: the
 * default, auto). */
void _stp_pt_affinity_default(int policy);
int _stp_pt_affinity_policy(void);
const char *_stp_pt_affinity_name(int policy);
/* Stopped thread t shares the tracer's CPU from now on (on 1), or gets its
 * own mask back (0; not under `always`). 0, or -errno when its mask or
 * the tracer's allows no common CPU (nothing changed then). */
int _stp_pt_colocate(struct _stp_pt_thread *t, int on);
/* In a handler: this stop of t does not count toward its stop rate (a
 * thread meeting breakpoints placed for another: made faster by sharing
 * the tracer's CPU, it would lose its own). */
void _stp_pt_stop_uncounted(struct _stp_pt_thread *t);
struct _stp_pt_affinity_stats {
	int policy;
	uint64_t colocated; /* times a thread was put on the tracer's CPU */
	uint64_t restored;  /* times its own mask was put back */
};
/* Summed over every session so far. */
void _stp_pt_get_affinity_stats(struct _stp_pt_affinity_stats *st);

/* Debug messages on stderr ("ptrace: ...", "bkpt: ..."), off by default:
 * on raises both domains to level 1 at least, off sets them to 0. */
void _stp_pt_set_debug(int on);

/* The executable mappings of the task tid, as [lo, hi) pairs in address
 * order (/proc/PID/maps); their number (0 on failure, *out NULL). */
size_t _stp_pt_exec_ranges(pid_t tid, uint64_t (**out)[2]);
static inline int _stp_pt_in_ranges(const uint64_t (*r)[2], size_t n, uint64_t a)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t m = lo + (hi - lo) / 2;
		if (a < r[m][0])
			hi = m;
		else if (a >= r[m][1])
			lo = m + 1;
		else
			return 1;
	}
	return 0;
}

#endif
