/* The context API's backend (target/): what c->target points at while a
 * handler with a target thread runs, and how that thread's registers and
 * memory are reached. The context functions (context_target.c,
 * context_user.c) go through the ops table only, so the same compiled
 * handler runs wherever an engine puts it:
 *   ptrace  a thread stopped under the ptrace engine (backend_ptrace.c,
 *           the only file of target/ that knows the engine);
 *   record  registers captured in a record, no thread stopped
 *           (backend_record.c): memory is "not available at this event".
 * Builders fill pid, tid and the rest of the probe's facts themselves. */
#ifndef STP_TARGET_BACKEND_H
#define STP_TARGET_BACKEND_H

#include "stap_runtime.h"

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/user.h>

struct _stp_tctx;
struct _stp_pt_thread;

/* Each returns 0, or -errno: -EFAULT for an address that cannot be read
 * or written, -ENODATA for what the backend does not have at this event
 * (the context error then says "not available at this event"). */
struct _stp_target_ops {
	const char *name;
	int (*get_regs)(struct _stp_tctx *tc, struct user_regs_struct *r);
	int (*set_regs)(struct _stp_tctx *tc, const struct user_regs_struct *r);
	int (*read)(struct _stp_tctx *tc, uint64_t addr, void *buf, size_t len);
	int (*write)(struct _stp_tctx *tc, uint64_t addr, const void *buf, size_t len);
};

/* What c->target points at while a process probe's handler runs. */
struct _stp_tctx {
	const struct _stp_target_ops *ops; /* NULL: no thread (process.end, thread.end) */
	void *thread;			   /* the backend's (ptrace: the engine's thread) */
	pid_t pid, tid;
	uint64_t uaddr; /* the probe point's address */
	uint64_t bias;	/* load bias of the probe's module */
	int is_return;
	const char *comm; /* the process's name, kept for process.end */
	int have_regs;	  /* regs holds the thread's registers */
	struct user_regs_struct regs;
};

/* The thread T stopped under the ptrace engine (NULL: no thread); pid and
 * tid are T's. */
void _stp_tctx_ptrace(struct _stp_tctx *tc, struct _stp_pt_thread *t);
/* The engine's thread behind TC, NULL for another backend or none (for
 * the parts that drive the engine: the call graph's mechanisms). */
struct _stp_pt_thread *_stp_tctx_pt_thread(const struct _stp_tctx *tc);
/* Registers captured in a record of thread TID of PID (copied). */
void _stp_tctx_record(struct _stp_tctx *tc, pid_t pid, pid_t tid,
		      const struct user_regs_struct *regs);

/* The module being run, for @entry frames (the probes' index). */
void _stp_entry_set_module(const struct _stp_module *m);
/* After a .return probe's handler: forget the frames of tid that have
 * returned (stack pointer below sp) for that probe (context_target.c). */
void _stp_entry_done(pid_t tid, const struct _stp_probe *p, uint64_t sp);
/* The end of the run: the module biases kept (context_modules.c) go. */
void _stp_ctx_modules_free(void);
/* ... and what was read of the modules' files for TLS (context_tls.c). */
void _stp_ctx_tls_free(void);
/* Forget the user backtrace unwound for the previous handler run: every
 * run is a new stop, even at the same pc, sp and bp (context_user.c). */
void _stp_ctx_ubt_forget(void);
/* Number IDX (0-based) after KEY ("Uid:", "PPid:") in /proc/PID/status;
 * -1 when unreadable. */
int64_t _stp_proc_status_field(pid_t pid, const char *key, int idx);

#endif
