/* Detaching: a process given back as it was found. */
#include "ptrace_internal.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>

/* Give a process back: every int3 out of its memory (unless another
 * traced process shares it), then PTRACE_DETACH each (stopped) thread. */
void _stp_pt_release(struct _stp_pt_proc *p)
{
	struct pt_mm *mm = p->mm;

	for (struct _stp_pt_thread *t = p->threads; t; t = t->next) {
		if (t->ool_active)
			_stp_pt_ool_finish(t);
		if (_stp_pt_leave_scratch(t) < 0)
			mm = NULL; /* keep the scratch pages: a thread needs them */
	}
	if (mm && mm->refs == 1) {
		_stp_pt_mm_remove_all(mm);
		/* unmap the scratch pages, so the process is as it was (a signal
		 * handler interrupted inside a slot would return to nothing: see
		 * doc/ptrace-quirks.md) */
		while (mm->scratch && p->threads) {
			struct pt_scratch *sc = mm->scratch;
			if (_stp_pt_inject_munmap(p->threads, sc->addr) < 0)
				_stp_dbg(STP_DBG_PTRACE, 1, "munmap %#llx in %d failed",
					 (unsigned long long)sc->addr, (int)p->pid);
			mm->scratch = sc->next;
			free(sc);
		}
	} else if (p->mm && (p->mm->refs == 1 || p->s->detaching)) {
		/* shared with a vfork/clone child or parent still traced: the
		 * int3s go now all the same (this process runs on untraced);
		 * a sharer that hits one meanwhile is rewound (tombstones) and
		 * the scratch pages go with the last sharer */
		_stp_pt_mm_remove_all(p->mm);
	}
	for (struct _stp_pt_thread *t = p->threads; t; t = t->next) {
		_stp_pt_aff_unpin(t);
		if (t->regs_dirty && ptrace(PTRACE_SETREGS, t->tid, 0, &t->regs) < 0)
			_stp_dbg(STP_DBG_PTRACE, 1, "SETREGS %d: %s", (int)t->tid, strerror(errno));
		if (ptrace(PTRACE_DETACH, t->tid, 0, (long)t->resume_sig) < 0)
			_stp_dbg(STP_DBG_PTRACE, 1, "DETACH %d: %s", (int)t->tid, strerror(errno));
		else
			_stp_dbg(STP_DBG_PTRACE, 1, "detached %d%s", (int)t->tid,
				 t->group_stop ? " (stopped)" : "");
	}
	_stp_pt_proc_free(p);
}

/* Handle queued statuses of p's threads the detach way: no handlers; a
 * breakpoint hit is rewound, a signal is kept for delivery at detach. */
static int drain_for_detach(struct _stp_pt_proc *p)
{
	struct _stp_pt_session *s = p->s;
	struct _stp_pt_thread *t, *next;
	int more = 0;

	for (t = p->threads; t; t = next) {
		int st, ev, sig, sigstep;

		next = t->next;
		if (!t->has_status)
			continue;
		st = t->status;
		_stp_pt_unqueue(s, t);
		if (!WIFSTOPPED(st)) {
			int last = p->nthreads == 1;
			_stp_pt_thread_gone(t, st);
			if (last)
				return -ESRCH;
			return 1; /* the list changed: start over */
		}
		ev = (unsigned)st >> 16;
		sig = WSTOPSIG(st);
		sigstep = t->sigstep_sig;
		t->sigstep_sig = 0;
		t->regs_valid = 0;
		if (t->new_thread && ev == PTRACE_EVENT_STOP) {
			t->new_thread = 0;
		} else if (ev == PTRACE_EVENT_FORK || ev == PTRACE_EVENT_VFORK ||
			   ev == PTRACE_EVENT_CLONE) {
			_stp_pt_ev_child(t, ev);
			more = 1;
		} else if (ev == PTRACE_EVENT_EXEC) {
			int released = p->release_on_exec;
			_stp_pt_ev_exec(t);
			return released ? -ESRCH : 1;
		} else if (ev == PTRACE_EVENT_STOP) {
			t->group_stop = _stp_pt_is_stop_sig(sig);
		} else if (ev == 0 && sig == (SIGTRAP | 0x80)) {
			/* a system call stop: nothing to deliver */
		} else if (ev == 0 && sig == SIGTRAP) {
			/* detaching: hits are rewound, no handler-entry call */
			if (!sigstep || !_stp_pt_sigstep_stop(t, sigstep))
				_stp_pt_handle_trap(t);
		} else if (ev == 0) {
			if (t->ool_active)
				_stp_pt_ool_finish(t);
			_stp_pt_fault_in_slot(t, sig);
			t->resume_sig = sig;
		}
	}
	return more;
}

/* Every thread of p stopped and held, its queued events handled the
 * detach way; -ESRCH when p went meanwhile (p is freed). */
static int hold(struct _stp_pt_proc *p)
{
	struct _stp_pt_session *s = p->s;
	int rc;

	s->detaching++;
	p->hold = 1;
	for (int round = 0; round < 100; round++) {
		if ((rc = _stp_pt_stop_all(p)) < 0)
			break;
		p->stopping--;
		rc = drain_for_detach(p);
		if (rc == -ESRCH) {
			s->detaching--;
			return -ESRCH;
		}
		if (rc == 0 && !_stp_pt_any_running(p))
			break;
	}
	s->detaching--;
	return 0;
}

int _stp_pt_hold_for_detach(struct _stp_pt_proc *p)
{
	return p->s->in_handler ? -EBUSY : hold(p);
}

int _stp_pt_detach(struct _stp_pt_proc *p)
{
	struct _stp_pt_session *s = p->s;

	if (s->in_handler)
		return -EBUSY;
	if (hold(p) == -ESRCH)
		return 0; /* gone meanwhile */
	s->detaching++;
	_stp_pt_release(p);
	s->detaching--;
	return 0;
}

int _stp_pt_detach_all(struct _stp_pt_session *s)
{
	/* children found while detaching join the list, and are detached in
	 * turn (their memory cleaned) */
	for (int guard = 0; s->procs && guard < 10000; guard++)
		_stp_pt_detach(s->procs);
	return 0;
}
