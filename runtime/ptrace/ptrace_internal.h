/* The ptrace engine's internals, shared by runtime/ptrace/ptrace_*.c only. */
#ifndef STP_PTRACE_INTERNAL_H
#define STP_PTRACE_INTERNAL_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "ptrace_engine.h"
#include "arch/x86_64/insn.h"
#include "lang/debug.h"

#include <sched.h>
#include <stdio.h>
#include <sys/types.h>
#include <time.h>

/* A probe; several may share one breakpoint. */
struct _stp_pt_probe {
	struct _stp_pt_bkpt *bp;
	_stp_pt_handler entry, ret;
	void *data;
	uint64_t hits, returns;
	uint64_t seq;	     /* the last hit (run_entries) that took it */
	unsigned frame_refs; /* return frames naming it */
	int dead;	     /* removed, or dropped (dlclose); in mm->dead_probes */
	int orphan;	     /* dropped by the engine: the client still has it */
	struct _stp_pt_probe *next;
};

/* One int3 in one address space. */
struct _stp_pt_bkpt {
	uint64_t addr;
	uint8_t orig;		   /* the byte the int3 replaced */
	struct _stp_x86_insn insn; /* the displaced instruction */
	uint64_t slot;		   /* its out-of-line copy, 0 until needed */
	int live;		   /* the int3 is in memory (else a tombstone:
				    * a hit already taken is still recognised) */
	struct _stp_pt_probe *probes;
	int ret_refs;		   /* frames waiting for a return here */
	struct _stp_pt_bkpt *next; /* hash chain */
};

#define PT_BK_BUCKETS 256
#define PT_SCRATCH_SIZE 4096
#define PT_SLOT_SIZE 32 /* instruction + jmp *0(%rip) back + address */

struct pt_scratch {
	uint64_t addr;
	unsigned used; /* slots handed out */
	struct pt_scratch *next;
};

/* One address space: shared by the threads of a process and by a vfork
 * child until it execs. */
struct pt_mm {
	int refs;
	int memfd; /* /proc/PID/mem */
	pid_t pid; /* a task using it (for messages, reopening) */
	struct _stp_pt_bkpt *bk[PT_BK_BUCKETS];
	size_t nbk;
	struct pt_scratch *scratch;
	/* probes removed or dropped, kept while something still names them:
	 * frames, a hit running, the client (orphans); freed by reap_dead */
	struct _stp_pt_probe *dead_probes;
	int hits_running;
	uint64_t syscall_insn; /* an executable 0f 05, 0 until searched */
	uint64_t (*code)[2];   /* executable mappings as last read, sorted */
	size_t ncode;
	_stp_pt_bkpt_fn bk_watch; /* told of every int3 armed or disarmed */
	void *bk_watch_data;
};

/* A return probe's frame, waiting for its function to return. */
struct pt_frame {
	uint64_t sp; /* RSP after the return (entry RSP + 8) */
	uint64_t ret_addr;
	struct _stp_pt_probe *probe;
	uint64_t data;
};

enum pt_tstate { PT_RUNNING, PT_STOPPED, PT_GONE };

struct _stp_pt_thread {
	pid_t tid;
	struct _stp_pt_proc *proc;
	enum pt_tstate state;
	int status; /* unhandled wait status (has_status) */
	int has_status;
	int interrupt_pending;
	int new_thread; /* its first stop is still to come */
	int group_stop; /* in group-stop: resume with LISTEN */
	int resume_sig; /* signal to deliver when resumed */
	int regs_valid, regs_dirty;
	struct user_regs_struct regs;
	/* out of line: stepping the copy of the instruction at ool_orig */
	int ool_active;
	uint64_t ool_orig, ool_slot;
	int ool_len;
	long last_syscall; /* nr of the last system call entry seen */
	/* a client's system-call stops (_stp_pt_watch_syscalls) */
	const unsigned char *sw_want;
	size_t sw_nwant;
	_stp_pt_syscall_watch_fn sw_fn;
	void *sw_data;
	int sw_entered; /* sw_call is an entry fn saw, its exit to come */
	struct _stp_pt_syscall sw_call;
	/* single-step mode */
	int step_mode;
	_stp_pt_step_fn step_fn;
	void *step_data;
	/* signal handler entries (_stp_pt_signal_step) */
	_stp_pt_sigstep_fn sigstep_fn;
	void *sigstep_data;
	int sigstep_sig; /* resumed stepping into this signal's handler */
	/* return probes */
	struct pt_frame *frames;
	size_t nframes, cap;
	uint64_t *cur_frame_data;
	uint64_t probe_point;
	/* CPU affinity (ptrace_affinity.c) */
	cpu_set_t *aff_saved;  /* co-located: its own mask, else NULL */
	int aff_forced;	       /* asked for (_stp_pt_colocate) */
	int aff_by_rate;       /* pinned for its stop rate */
	int aff_failed;	       /* could not be pinned: not tried again */
	uint64_t aff_stops;    /* stops seen */
	uint64_t aff_pin_stop; /* aff_stops when pinned for its rate */
	unsigned aff_win_stops;
	int64_t aff_win_ns;	  /* the rate window's start */
	int64_t aff_check_ns;	  /* the last rate check */
	uint64_t aff_check_stops; /* aff_stops then */
	/* a mechanism running the thread from translated code */
	const struct _stp_pt_thread_hooks *hooks;
	void *hooks_data;
	void *user;
	struct _stp_pt_thread *next;	     /* in proc */
	struct _stp_pt_thread *hnext;	     /* in session tid hash */
	struct _stp_pt_thread *pending_next; /* in session pending queue */
};

struct _stp_pt_proc {
	pid_t pid;
	struct _stp_pt_session *s;
	struct pt_mm *mm;
	struct _stp_pt_thread *threads;
	int nthreads;
	int hold;	     /* keep stopped threads stopped (until resume) */
	int stopping;	     /* stop-all in progress: only collect events */
	int follow;	     /* a traced process (not one being released) */
	int mm_err;	     /* why mm is NULL after an exec (errno), 0: gone */
	int release_on_exec; /* a vfork child traced only until it execs */
	int report_threads;  /* attached: thread_start for each at resume */
	int attached;	     /* not launched by us: it outlives a killed tracer */
	int leader_status, leader_gone;
	_stp_pt_syscall_fn syscall_fn; /* system call probes, or NULL */
	void *syscall_data;
	_stp_pt_libs_fn libs_fn; /* libraries changed, or NULL */
	void *libs_data;
	uint64_t r_debug, libs_brk; /* the dynamic linker's, 0 until known */
	int libs_deleting;	    /* a dlclose is under way (RT_DELETE seen) */
	void *user;
	struct _stp_pt_proc *next;
};

struct pt_parked {
	pid_t tid;
	int status;
	struct pt_parked *next;
};

#define PT_TID_BUCKETS 1024

struct _stp_pt_session {
	struct _stp_pt_callbacks cb;
	void *user;
	int options;
	int detaching;
	int in_handler;
	struct _stp_pt_proc *procs;
	int nprocs;
	struct _stp_pt_thread *tids[PT_TID_BUCKETS];
	struct _stp_pt_thread *pending, **pending_tail;
	struct pt_parked *parked;
	struct _stp_pt_stats stats;
	uint64_t hit_seq;		      /* run_entries calls */
	sigset_t launch_mask, launch_ignored; /* a launched program's signals */
	/* CPU affinity (ptrace_affinity.c) */
	int aff_policy;
	int aff_cpu;	    /* where co-located threads and the tracer run, -1 */
	int aff_n;	    /* threads co-located */
	int aff_rate_n;	    /* ... of them for their stop rate */
	cpu_set_t aff_self; /* the tracer's own mask */
	timer_t aff_timer;  /* the rate check, while aff_rate_n */
	int aff_timer_made;
};

/* ptrace_engine.c: the tables of threads and processes, the queue of
 * wait statuses not handled yet */
struct _stp_pt_thread *_stp_pt_find(struct _stp_pt_session *s, pid_t tid);
struct _stp_pt_thread *_stp_pt_thread_new(struct _stp_pt_proc *p, pid_t tid);
void _stp_pt_thread_free(struct _stp_pt_thread *t);
struct _stp_pt_proc *_stp_pt_proc_new(struct _stp_pt_session *s, pid_t pid);
void _stp_pt_proc_free(struct _stp_pt_proc *p);
void _stp_pt_queue_status(struct _stp_pt_thread *t, int st);
void _stp_pt_unqueue(struct _stp_pt_session *s, struct _stp_pt_thread *t);
struct _stp_pt_thread *_stp_pt_dequeue(struct _stp_pt_session *s);
void _stp_pt_requeue_exit(struct _stp_pt_thread *t, int st);

/* ptrace_access.c */
int _stp_pt_fetch_regs(struct _stp_pt_thread *t);

/* ptrace_wait.c */
void _stp_pt_resume_thread(struct _stp_pt_thread *t);
void _stp_pt_on_wait(struct _stp_pt_session *s, pid_t pid, int st);
void _stp_pt_process_stop(struct _stp_pt_thread *t, int st);
void _stp_pt_thread_gone(struct _stp_pt_thread *t, int st);
void _stp_pt_ev_child(struct _stp_pt_thread *t, int ev);
void _stp_pt_ev_exec(struct _stp_pt_thread *t);
void _stp_pt_handle_trap(struct _stp_pt_thread *t);
int _stp_pt_is_stop_sig(int sig);
int _stp_pt_pid_shares_mm(pid_t tid, pid_t child);

/* ptrace_stop.c */
int _stp_pt_stop_all(struct _stp_pt_proc *p);
void _stp_pt_stop_all_end(struct _stp_pt_proc *p);
int _stp_pt_any_running(struct _stp_pt_proc *p);

/* ptrace_detach.c */
void _stp_pt_release(struct _stp_pt_proc *p);

/* ptrace_mem.c */
struct pt_mm *_stp_pt_mm_new(pid_t pid);
struct pt_mm *_stp_pt_mm_copy(const struct pt_mm *from, pid_t pid);
void _stp_pt_mm_put(struct pt_mm *mm);
int _stp_pt_mm_read(struct pt_mm *mm, uint64_t addr, void *buf, size_t len);
int _stp_pt_mm_write(struct pt_mm *mm, uint64_t addr, const void *buf, size_t len);
/* Whether addr is in an executable mapping of mm (tid: a task using it).
 * The table is read again when addr is not in it, so code mapped since
 * is found; a return probe is only ever armed where this says so. */
int _stp_pt_mm_is_code(struct pt_mm *mm, pid_t tid, uint64_t addr);
/* mm's table of executable mappings read again (from tid's maps). */
void _stp_pt_mm_code_read(struct pt_mm *mm, pid_t tid);
int _stp_pt_inject_mmap(struct _stp_pt_thread *t, uint64_t hint, uint64_t *addr);
int _stp_pt_inject_munmap(struct _stp_pt_thread *t, uint64_t addr);

/* ptrace_bkpt.c */
struct _stp_pt_bkpt *_stp_pt_bk_find(struct pt_mm *mm, uint64_t addr);
int _stp_pt_bk_hit(struct _stp_pt_thread *t, struct _stp_pt_bkpt *bk);
void _stp_pt_ool_finish(struct _stp_pt_thread *t);
/* pushfq/popfq at t's pc done by the tracer, never stepped (the kernel
 * would take the trap flag for the program's: ptrace_mem.c); 1 if done. */
int _stp_pt_emulate_flags_insn(struct _stp_pt_thread *t);
/* The target memory of t for the instruction emulator (arch/x86_64). */
struct _stp_x86_mem_ops _stp_pt_x86_mem_ops(struct _stp_pt_thread *t);
int _stp_pt_mm_remove_all(struct pt_mm *mm);
/* At an exec, before the mm is dropped: int3s placed in the new image
 * (an attach while the exec was in flight) taken out again. */
void _stp_pt_mm_exec_undo(struct pt_mm *mm);
void _stp_pt_frames_clear(struct _stp_pt_thread *t);
int _stp_pt_frames_copy(struct _stp_pt_thread *to, const struct _stp_pt_thread *from);
int _stp_pt_leave_scratch(struct _stp_pt_thread *t);
void _stp_pt_drop_unmapped(struct _stp_pt_thread *t);
void _stp_pt_fault_in_slot(struct _stp_pt_thread *t, int sig);

/* ptrace_affinity.c */
void _stp_pt_aff_session(struct _stp_pt_session *s);
void _stp_pt_aff_session_end(struct _stp_pt_session *s);
void _stp_pt_aff_stop(struct _stp_pt_thread *t);
void _stp_pt_aff_check(struct _stp_pt_session *s);
void _stp_pt_aff_child(struct _stp_pt_thread *t, pid_t child);
void _stp_pt_aff_unpin(struct _stp_pt_thread *t);
void _stp_pt_aff_drop(struct _stp_pt_thread *t);
void _stp_pt_aff_exec(struct _stp_pt_thread *t);

/* ptrace_step.c */
int _stp_pt_step_trap(struct _stp_pt_thread *t);
int _stp_pt_sigstep_wanted(struct _stp_pt_thread *t, int sig);
int _stp_pt_sigstep_stop(struct _stp_pt_thread *t, int sig);
extern int _stp_pt_sigstep_always; /* tests: skip the SigCgt check */

#endif
