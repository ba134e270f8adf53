/* Inside probes/: the process probes' core (process_probes.c: the session
 * under the ptrace engine, what each traced process runs) and the table of
 * the kinds' hooks it calls on the engine's events. Each kind is one file:
 *   function.c   function, statement, mark and plt entries and .return:
 *                breakpoints at the module's address + load bias
 *   mark.c       SDT semaphores, raised while a .mark probe is placed
 *   library.c    .library probes, placed when the library is mapped
 *   begin_end.c  process.begin and process.end
 *   thread.c     process.thread.begin and .end
 *   syscall.c    process.syscall and .syscall.return
 * (timer.c, the timer probes, is the run loop's: see process.h.) */
#ifndef STP_PROBES_INTERNAL_H
#define STP_PROBES_INTERNAL_H

#include "process.h"

#include <limits.h>

struct libplace;

/* Per traced process: what it runs and where it is loaded, and what the
 * kinds keep for it. */
struct pstate {
	char exe[PATH_MAX];
	struct _stp_fileid exeid; /* the image it runs */
	uint64_t base;		  /* start of the executable's mapping at file offset 0 */
	char comm[17];		  /* its name (execname() after it is gone) */
	/* the /bin/sh of a shell -c command (or a fork of it), not yet
	 * exec'd a command: bare process probes leave it out */
	int launcher;
	int syscalls;	       /* syscall.c: system call stops are on */
	struct libplace *libs; /* library.c: its .library probes placed */
	size_t nlibs, libcap;
	unsigned char *begun; /* begin_end.c: per probe, its process.begin fired */
	struct pstate *next;  /* all live pstates, freed at the end */
};

/* The hooks of one kind (NULL: nothing to do), in the order of the
 * table (process_probes.c) for each event. */
#define STP_KIND_BIT(k) (1u << (k))

struct _stp_proc_kind {
	const char *name;
	/* the probe kinds it runs (STP_KIND_BIT of each): a module with any
	 * of them runs under the engine; 0 for features of other kinds'
	 * probes (a semaphore, a library) */
	unsigned kinds;
	/* the run starts / is over, every process detached: free what the
	 * kind keeps */
	void (*start)(const struct _stp_module *m);
	void (*finish)(void);
	/* the run ends, the processes still traced: put back what the kind
	 * changed in them */
	void (*stop)(void);
	/* a process's memory is gone (exec, exit): forget what was in it */
	void (*image_gone)(struct _stp_pt_proc *proc, struct pstate *ps);
	/* a process runs a new image (exec, or attached): place its probes;
	 * maps_rc < 0: its memory map was unreadable (-errno) */
	void (*place)(struct _stp_pt_proc *proc, struct pstate *ps, int maps_rc, int attaching);
	/* after place, at an exec */
	void (*exec)(struct _stp_pt_thread *t, struct pstate *ps);
	/* a fork: the child's pstate is a copy of the parent's (either may
	 * be NULL: out of memory) */
	void (*fork)(struct _stp_pt_proc *parent, struct _stp_pt_proc *child, struct pstate *pp,
		     struct pstate *cp);
	/* after the begin probes: the target is let run */
	void (*release)(pid_t root_pid, struct pstate *ps);
	void (*thread_start)(struct _stp_pt_thread *t, struct pstate *ps);
	void (*thread_exit)(struct _stp_pt_thread *t, struct pstate *ps);
	/* before image_gone */
	void (*proc_exit)(struct _stp_pt_proc *proc, struct pstate *ps);
	/* a pstate is freed */
	void (*free_state)(struct pstate *ps);
};

extern const struct _stp_proc_kind _stp_proc_function_kind, _stp_proc_mark_kind,
    _stp_proc_library_kind, _stp_proc_begin_end_kind, _stp_proc_thread_kind, _stp_proc_syscall_kind;

/* ---- the core, for the kinds (process_probes.c) ---- */

/* proc's pstate (made at first use; NULL: out of memory). */
struct pstate *_stp_proc_pstate(struct _stp_pt_proc *proc);
/* Is probe p for the process of ps? */
int _stp_proc_matches(const struct _stp_probe *p, const struct pstate *ps);
/* The load bias of p's module in the process of ps. */
uint64_t _stp_proc_bias(const struct _stp_probe *p, const struct pstate *ps);
/* Do handlers run now (the session runs, no exit asked)? */
int _stp_proc_can_run(void);
/* Run p's handler in thread t (NULL: the process pid, no thread at hand). */
void _stp_proc_fire(const struct _stp_probe *p, struct _stp_pt_thread *t, pid_t pid, uint64_t uaddr,
		    uint64_t bias, const char *comm);
/* Fire every probe of KIND for the process of ps. */
void _stp_proc_fire_kind(enum _stp_probe_kind kind, struct _stp_pt_thread *t, pid_t pid,
			 const struct pstate *ps);
/* Does a probe of kind A or B name the program of ps? */
int _stp_proc_wants_kind(const struct pstate *ps, enum _stp_probe_kind a, enum _stp_probe_kind b);

/* ---- between the kinds ---- */

/* function.c: place p at its address + bias in proc (*out: the engine's
 * probe, may be NULL); warns and returns -errno when it cannot. */
int _stp_proc_add_probe(struct _stp_pt_proc *proc, const struct _stp_probe *p, uint64_t bias,
			struct _stp_pt_probe **out);
/* function.c: after probes were placed: a run none of whose probes could
 * be placed ends with an error. */
void _stp_proc_check_placement(void);
/* function.c: did that end the run (before it started: it does not)? */
int _stp_proc_placement_failed(void);
/* mark.c: raise p's semaphore in proc (placed at bias) / forget the one at
 * addr (its library was unmapped). */
void _stp_sem_raise(struct _stp_pt_proc *proc, const struct _stp_probe *p, uint64_t bias);
void _stp_sem_forget(struct _stp_pt_proc *proc, uint64_t addr);

#endif
