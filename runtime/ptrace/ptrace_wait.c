/* The wait-status dispatch: resuming threads, then what each stop or exit
 * reported by waitpid means (a new thread or process, an exec, a
 * breakpoint or step trap, a system call, a signal to pass on). */
#include "ptrace_internal.h"

#include <errno.h>
#include <linux/kcmp.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* ---- resuming ---- */

static const char *resume_name(enum __ptrace_request req)
{
	switch (req) {
	case PTRACE_LISTEN:
		return "listen";
	case PTRACE_SINGLESTEP:
		return "single-step";
	case PTRACE_SINGLEBLOCK:
		return "single-block";
	case PTRACE_SYSCALL:
		return "to the next system call";
	default:
		return "continue";
	}
}

void _stp_pt_resume_thread(struct _stp_pt_thread *t)
{
	enum __ptrace_request req = PTRACE_CONT;
	int sig = t->resume_sig;

	if (t->state != PT_STOPPED || t->has_status || t->proc->hold || t->proc->stopping)
		return;
	t->sigstep_sig = 0;
	/* a step over pushfq/popfq is emulated and reported as a step */
	while (t->step_mode && !t->ool_active && !t->group_stop && !sig &&
	       !t->proc->s->in_handler && _stp_pt_fetch_regs(t) == 0 &&
	       _stp_pt_emulate_flags_insn(t))
		_stp_pt_step_trap(t);
	if (t->group_stop) {
		req = PTRACE_LISTEN;
		sig = 0;
	} else if (t->ool_active || t->step_mode == _STP_PT_STEP_INSN) {
		req = PTRACE_SINGLESTEP;
	} else if (t->step_mode == _STP_PT_STEP_BLOCK) {
		req = PTRACE_SINGLEBLOCK;
	} else if (sig && _stp_pt_sigstep_wanted(t, sig)) {
		req = PTRACE_SINGLESTEP; /* stops at the handler's entry */
		t->sigstep_sig = sig;
	} else if (t->proc->syscall_fn || t->sw_fn) {
		req = PTRACE_SYSCALL;
	}
	if (req != PTRACE_SYSCALL)
		t->sw_entered = 0; /* no exit stop comes for that entry */
	if (t->hooks && t->hooks->resume && req != PTRACE_SINGLESTEP && req != PTRACE_SINGLEBLOCK)
		t->hooks->resume(t, sig, t->hooks_data);
	if (t->regs_dirty) {
		if (ptrace(PTRACE_SETREGS, t->tid, 0, &t->regs) < 0)
			_stp_dbg(STP_DBG_PTRACE, 1, "SETREGS %d: %s", (int)t->tid, strerror(errno));
		t->regs_dirty = 0;
	}
	t->resume_sig = 0;
	t->regs_valid = 0;
	t->state = PT_RUNNING;
	_stp_dbg(STP_DBG_PTRACE, 2, "thread %d: resumed (%s, signal %d)", (int)t->tid,
		 resume_name(req), sig);
	if (ptrace(req, t->tid, 0, (long)sig) < 0 && errno != ESRCH)
		_stp_dbg(STP_DBG_PTRACE, 1, "resume %d: %s", (int)t->tid, strerror(errno));
	/* ESRCH: killed meanwhile; its exit will be reported */
}

static int cmp_tid(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;

	return x < y ? -1 : x > y;
}

/* The threads an attach found were there before us: they get their
 * thread_start now, as new ones do (SystemTap too reports threads that
 * exist when it starts), in tid order. */
static void report_existing_threads(struct _stp_pt_proc *p)
{
	struct _stp_pt_session *s = p->s;
	pid_t *tids;
	int n = 0;

	p->report_threads = 0;
	if (!s->cb.thread_start || !p->follow || s->detaching || !p->nthreads)
		return;
	if (!(tids = malloc((size_t)p->nthreads * sizeof *tids)))
		return;
	for (struct _stp_pt_thread *t = p->threads; t && n < p->nthreads; t = t->next)
		if (t->tid != p->pid && t->state != PT_GONE && !t->new_thread)
			tids[n++] = t->tid;
	qsort(tids, (size_t)n, sizeof *tids, cmp_tid);
	for (int i = 0; i < n; i++) {
		struct _stp_pt_thread *t = _stp_pt_find(s, tids[i]);
		/* a callback may detach (then the thread is gone from us) */
		if (t && t->proc == p && !s->detaching)
			s->cb.thread_start(t, s->user);
	}
	free(tids);
}

int _stp_pt_resume(struct _stp_pt_proc *p)
{
	if (p->report_threads)
		report_existing_threads(p);
	p->hold = 0;
	for (struct _stp_pt_thread *t = p->threads; t; t = t->next)
		_stp_pt_resume_thread(t);
	return 0;
}

/* ---- events ---- */

static pid_t read_tgid(pid_t tid)
{
	char path[64], line[128];
	pid_t tgid = -1;
	FILE *f;

	snprintf(path, sizeof path, "/proc/%d/status", (int)tid);
	if (!(f = fopen(path, "re")))
		return -1;
	while (fgets(line, sizeof line, f))
		if (sscanf(line, "Tgid: %d", &tgid) == 1)
			break;
	fclose(f);
	return tgid;
}

static void unpark(struct _stp_pt_session *s, struct _stp_pt_thread *t)
{
	for (struct pt_parked **pp = &s->parked; *pp; pp = &(*pp)->next) {
		if ((*pp)->tid == t->tid) {
			struct pt_parked *k = *pp;
			*pp = k->next;
			t->state = PT_STOPPED;
			_stp_pt_queue_status(t, k->status);
			free(k);
			return;
		}
	}
}

static void park(struct _stp_pt_session *s, pid_t tid, int st)
{
	struct pt_parked *k = malloc(sizeof *k);

	if (!k)
		return;
	k->tid = tid;
	k->status = st;
	k->next = s->parked;
	s->parked = k;
}

/* Does process `child` use the same memory as thread tid (clone with
 * CLONE_VM but not CLONE_THREAD)? Without kcmp, assume a copy. */
int _stp_pt_pid_shares_mm(pid_t tid, pid_t child)
{
#ifdef SYS_kcmp
	return syscall(SYS_kcmp, (long)tid, (long)child, (long)KCMP_VM, 0L, 0L) == 0;
#else
	(void)tid;
	(void)child;
	return 0;
#endif
}

/* PTRACE_EVENT_FORK/VFORK/CLONE in thread t: the child is already traced
 * (the options are inherited) and will report its first stop. */
void _stp_pt_ev_child(struct _stp_pt_thread *t, int ev)
{
	struct _stp_pt_session *s = t->proc->s;
	struct _stp_pt_proc *parent = t->proc, *cp;
	struct _stp_pt_thread *nt;
	unsigned long msg = 0;
	int shared;

	if (ptrace(PTRACE_GETEVENTMSG, t->tid, 0, &msg) < 0 || msg == 0)
		return;
	_stp_pt_aff_child(t, (pid_t)msg); /* not the pin it inherited */
	if (ev == PTRACE_EVENT_CLONE && read_tgid((pid_t)msg) != parent->pid &&
	    read_tgid((pid_t)msg) != -1)
		ev = PTRACE_EVENT_FORK; /* clone() of a process, not a thread */
	if (ev == PTRACE_EVENT_CLONE) {
		nt = _stp_pt_thread_new(parent, (pid_t)msg);
		if (!nt)
			return;
		nt->new_thread = 1;
		unpark(s, nt);
		_stp_dbg(STP_DBG_PTRACE, 1, "thread %d: new thread %d", (int)t->tid, (int)nt->tid);
		return;
	}
	cp = _stp_pt_proc_new(s, (pid_t)msg);
	if (!cp)
		return;
	cp->follow = (s->options & _STP_PT_FOLLOW_FORK) && parent->follow && !s->detaching;
	cp->attached = parent->attached;
	if (cp->follow) {
		cp->syscall_fn = parent->syscall_fn;
		cp->syscall_data = parent->syscall_data;
		cp->libs_fn = parent->libs_fn;
		cp->libs_data = parent->libs_data;
		cp->r_debug = parent->r_debug;
		cp->libs_brk = parent->libs_brk;
	}
	shared = ev == PTRACE_EVENT_VFORK || _stp_pt_pid_shares_mm(t->tid, cp->pid);
	if (shared && parent->mm) {
		/* shares the parent's memory (and its breakpoints) until it
		 * execs or ends: traced until then, never cleaned, even when
		 * not followed (that would take the parent's int3s away) */
		cp->mm = parent->mm;
		parent->mm->refs++;
		cp->release_on_exec = !cp->follow;
	} else if (parent->mm) {
		cp->mm = _stp_pt_mm_copy(parent->mm, cp->pid);
	}
	nt = _stp_pt_thread_new(cp, cp->pid);
	if (!nt)
		return;
	nt->new_thread = 1;
	/* a vfork child returns through its parent's frames; a clone child
	 * runs on a stack of its own */
	if (cp->mm && (cp->follow || cp->release_on_exec) && (!shared || ev == PTRACE_EVENT_VFORK))
		_stp_pt_frames_copy(nt, t);
	_stp_dbg(STP_DBG_PTRACE, 1, "%d: new process %d (%s, %s)", (int)t->tid, (int)cp->pid,
		 ev == PTRACE_EVENT_VFORK ? "vfork"
		     : shared		  ? "clone sharing memory"
					  : "fork",
		 cp->follow ? "followed" : "released");
	unpark(s, nt);
	if (cp->follow && s->cb.fork)
		s->cb.fork(t, cp, s->user);
}

void _stp_pt_ev_exec(struct _stp_pt_thread *t)
{
	struct _stp_pt_proc *p = t->proc;
	struct _stp_pt_session *s = p->s;
	struct _stp_pt_thread *o, *next;

	/* the other threads are gone; if a non-leader exec'd, it now has the
	 * leader's tid, and the leader's record is reused */
	_stp_pt_aff_exec(t);
	for (o = p->threads; o; o = next) {
		next = o->next;
		if (o != t)
			_stp_pt_thread_free(o);
	}
	_stp_pt_frames_clear(t);
	t->ool_active = 0;
	t->step_mode = _STP_PT_STEP_NONE;
	t->sigstep_fn = NULL;
	t->sigstep_sig = 0;
	_stp_pt_watch_syscalls(t, NULL, 0, NULL, NULL);
	_stp_pt_mm_exec_undo(p->mm);
	_stp_pt_mm_put(p->mm);
	p->mm = NULL;
	p->libs_fn = NULL;
	p->r_debug = p->libs_brk = 0;
	if (p->release_on_exec) {
		if (ptrace(PTRACE_DETACH, t->tid, 0, 0) < 0)
			_stp_dbg(STP_DBG_PTRACE, 1, "DETACH %d: %s", (int)t->tid, strerror(errno));
		_stp_pt_proc_free(p);
		return;
	}
	p->mm = _stp_pt_mm_new(p->pid);
	p->mm_err = p->mm ? 0 : errno;
	_stp_dbg(STP_DBG_PTRACE, 1, "%d: exec", (int)p->pid);
	if (p->follow && !s->detaching && s->cb.exec)
		s->cb.exec(t, s->user);
}

int _stp_pt_is_stop_sig(int sig)
{
	return sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU;
}

void _stp_pt_handle_trap(struct _stp_pt_thread *t)
{
	siginfo_t si;
	struct _stp_pt_bkpt *bk;

	if (ptrace(PTRACE_GETSIGINFO, t->tid, 0, &si) < 0 || _stp_pt_fetch_regs(t) < 0)
		return;
	if (si.si_code == SI_KERNEL && t->proc->mm &&
	    (bk = _stp_pt_bk_find(t->proc->mm, t->regs.rip - 1))) {
		if (!t->proc->follow && bk->live) {
			/* a vfork child we do not follow: no handlers */
			struct _stp_pt_probe *keep = bk->probes;
			int refs = bk->ret_refs;
			bk->probes = NULL;
			bk->ret_refs = 0;
			_stp_pt_bk_hit(t, bk);
			bk->probes = keep;
			bk->ret_refs = refs;
		} else {
			_stp_pt_bk_hit(t, bk);
		}
		return;
	}
	if (t->ool_active) {
		_stp_pt_ool_finish(t);
		if (t->step_mode)
			_stp_pt_step_trap(t);
		return;
	}
	if (t->step_mode && si.si_code > 0 && si.si_code != SI_KERNEL) {
		_stp_pt_step_trap(t);
		return;
	}
	t->resume_sig = SIGTRAP; /* not ours */
}

void _stp_pt_thread_gone(struct _stp_pt_thread *t, int st)
{
	struct _stp_pt_proc *p = t->proc;
	struct _stp_pt_session *s = p->s;

	if (t->tid == p->pid) {
		p->leader_status = st;
		p->leader_gone = 1;
	}
	if (s->cb.thread_exit && p->follow)
		s->cb.thread_exit(t, st, s->user);
	_stp_pt_thread_free(t);
	if (p->nthreads == 0) {
		_stp_dbg(STP_DBG_PTRACE, 1, "%d: ended (status %#x)", (int)p->pid,
			 p->leader_gone ? p->leader_status : st);
		if (s->cb.proc_exit && p->follow)
			s->cb.proc_exit(p, p->leader_gone ? p->leader_status : st, s->user);
		_stp_pt_proc_free(p);
	}
}

static uint64_t watch_only_stops;

/* The watch of t at a system call's entry or exit (si). */
static void watch_stop(struct _stp_pt_thread *t, const struct __ptrace_syscall_info *si)
{
	struct _stp_pt_syscall *c = &t->sw_call;

	if (si->op == PTRACE_SYSCALL_INFO_ENTRY) {
		uint64_t nr = si->entry.nr;
		t->sw_entered = nr < t->sw_nwant && t->sw_want[nr];
		if (!t->sw_entered)
			return;
		*c = (struct _stp_pt_syscall){.nr = (long)nr};
		memcpy(c->args, si->entry.args, sizeof c->args);
	} else {
		if (!t->sw_entered)
			return;
		t->sw_entered = 0;
		c->exit = 1;
		c->ret = si->exit.rval;
	}
	t->sw_fn(t, c, t->sw_data);
}

/* A system call entry or exit (PTRACE_O_TRACESYSGOOD marks them): the
 * probes' fn and the thread's watch, the watch nearest the call. */
static void syscall_stop(struct _stp_pt_thread *t)
{
	struct _stp_pt_proc *p = t->proc;
	struct __ptrace_syscall_info si;

	if ((!p->syscall_fn && !t->sw_fn) || p->s->detaching ||
	    ptrace(PTRACE_GET_SYSCALL_INFO, t->tid, sizeof si, &si) <= 0)
		return;
	if (si.op != PTRACE_SYSCALL_INFO_ENTRY && si.op != PTRACE_SYSCALL_INFO_EXIT)
		return;
	int entry = si.op == PTRACE_SYSCALL_INFO_ENTRY;
	t->probe_point = si.instruction_pointer;
	p->s->in_handler = 1;
	if (!p->syscall_fn)
		watch_only_stops++;
	if (t->sw_fn && !entry)
		watch_stop(t, &si);
	if (p->syscall_fn)
		p->syscall_fn(t, !entry, entry ? (long)si.entry.nr : (long)t->last_syscall,
			      p->syscall_data);
	if (t->sw_fn && entry)
		watch_stop(t, &si);
	p->s->in_handler = 0;
	if (entry)
		t->last_syscall = (long)si.entry.nr;
}

int _stp_pt_syscalls(struct _stp_pt_proc *p, _stp_pt_syscall_fn fn, void *data)
{
	p->syscall_fn = fn;
	p->syscall_data = data;
	return 0;
}

int _stp_pt_watch_syscalls(struct _stp_pt_thread *t, const unsigned char *want, size_t nwant,
			   _stp_pt_syscall_watch_fn fn, void *data)
{
	t->sw_want = fn ? want : NULL;
	t->sw_nwant = fn && want ? nwant : 0;
	t->sw_fn = fn;
	t->sw_data = fn ? data : NULL;
	t->sw_entered = 0;
	return 0;
}

uint64_t _stp_pt_watch_syscall_stops(void)
{
	return watch_only_stops;
}

/* A stop of t, not collected by a stop-all. */
void _stp_pt_process_stop(struct _stp_pt_thread *t, int st)
{
	struct _stp_pt_proc *p = t->proc;
	struct _stp_pt_session *s = p->s;
	int ev = (unsigned)st >> 16, sig = WSTOPSIG(st), released;
	int sigstep = t->sigstep_sig; /* the stop after stepping into a handler */

	t->sigstep_sig = 0;
	s->stats.stops++;
	t->state = PT_STOPPED;
	t->regs_valid = 0;
	if (!s->detaching)
		_stp_pt_aff_stop(t);
	if (t->hooks && t->hooks->stop && !s->detaching && t->hooks->stop(t, st, t->hooks_data)) {
		_stp_pt_resume_thread(t);
		return;
	}
	if (t->new_thread && ev == PTRACE_EVENT_STOP) {
		t->new_thread = 0;
		if (!p->follow && !p->release_on_exec) {
			/* a fork child we do not follow: clean its copy, let go */
			_stp_pt_release(p);
			return;
		}
		if (s->cb.thread_start && p->follow && !s->detaching && t->tid != p->pid)
			s->cb.thread_start(t, s->user);
		_stp_pt_resume_thread(t);
		return;
	}
	switch (ev) {
	case PTRACE_EVENT_FORK:
	case PTRACE_EVENT_VFORK:
	case PTRACE_EVENT_CLONE:
		_stp_pt_ev_child(t, ev);
		break;
	case PTRACE_EVENT_EXEC:
		released = p->release_on_exec;
		_stp_pt_ev_exec(t);
		if (released)
			return; /* p and t are gone */
		break;
	case PTRACE_EVENT_STOP:
		t->group_stop = _stp_pt_is_stop_sig(sig);
		break;
	case 0:
		t->group_stop = 0;
		if (sig == (SIGTRAP | 0x80)) {
			syscall_stop(t);
		} else if (sig == SIGTRAP) {
			if (!sigstep || !_stp_pt_sigstep_stop(t, sigstep))
				_stp_pt_handle_trap(t);
		} else {
			if (t->ool_active)
				_stp_pt_ool_finish(t);
			_stp_pt_fault_in_slot(t, sig);
			t->resume_sig = sig;
			if (_stp_dbg_on(STP_DBG_PTRACE, 1) && _stp_pt_fetch_regs(t) == 0)
				_stp_dbg(STP_DBG_PTRACE, 1, "thread %d: signal %d at %#llx",
					 (int)t->tid, sig, t->regs.rip);
		}
		break;
	default:
		break;
	}
	_stp_pt_resume_thread(t);
}

static void handle_status(struct _stp_pt_thread *t, int st)
{
	if (WIFSTOPPED(st))
		_stp_pt_process_stop(t, st);
	else
		_stp_pt_thread_gone(t, st);
}

/* A wait status from waitpid. While a stop-all is in progress, or for a
 * thread that is not ours yet, it is only recorded. */
void _stp_pt_on_wait(struct _stp_pt_session *s, pid_t pid, int st)
{
	struct _stp_pt_thread *t = _stp_pt_find(s, pid);

	_stp_dbg(STP_DBG_PTRACE, 2, "thread %d: wait status %#x%s", (int)pid, st,
		 !t ? " (not traced yet)" : "");

	if (!t) {
		if (WIFSTOPPED(st)) {
			park(s, pid, st); /* a new child before its parent's event */
		} else {
			for (struct pt_parked **pp = &s->parked; *pp; pp = &(*pp)->next)
				if ((*pp)->tid == pid) {
					struct pt_parked *k = *pp;
					*pp = k->next;
					free(k);
					break;
				}
			if (s->cb.other_exit)
				s->cb.other_exit(pid, st, s->user);
		}
		return;
	}
	t->state = PT_STOPPED;
	if (WIFSTOPPED(st) && t->interrupt_pending) {
		t->interrupt_pending = 0;
		if (t->proc->stopping && (st >> 16) == PTRACE_EVENT_STOP &&
		    WSTOPSIG(st) == SIGTRAP && !t->new_thread)
			return; /* the stop we asked for */
	}
	if (t->proc->stopping || t->has_status) {
		_stp_pt_queue_status(t, st);
		return;
	}
	handle_status(t, st);
}

int _stp_pt_dispatch(struct _stp_pt_session *s)
{
	int n = 0, st;
	pid_t pid;
	struct _stp_pt_thread *t;

	for (;;) {
		if ((t = _stp_pt_dequeue(s))) {
			if (t->has_status) {
				t->has_status = 0;
				handle_status(t, t->status);
				n++;
			}
			continue;
		}
		if (n >= 4096) {
			/* A thread stepping (single-step/block mode) stops again
			 * as soon as it is resumed: return so the caller can see
			 * its other signals (SIGINT), and leave SIGCHLD pending
			 * for the events still waiting. */
			kill(getpid(), SIGCHLD);
			break;
		}
		pid = waitpid(-1, &st, __WALL | WNOHANG);
		if (pid <= 0)
			break;
		_stp_pt_on_wait(s, pid, st);
		n++;
	}
	_stp_pt_aff_check(s);
	return n;
}

int _stp_pt_wait(struct _stp_pt_session *s, int timeout_ms)
{
	int n = _stp_pt_dispatch(s), st;
	struct timespec ms = {0, 1000000};
	pid_t pid;

	if (n > 0 || timeout_ms == 0)
		return n;
	if (timeout_ms > 0) {
		/* a crude wait; a real loop polls a SIGCHLD signalfd instead */
		while (timeout_ms-- > 0) {
			if ((n = _stp_pt_dispatch(s)) > 0)
				return n;
			if (nanosleep(&ms, NULL) < 0 && errno == EINTR)
				return -EINTR;
		}
		return 0;
	}
	pid = waitpid(-1, &st, __WALL);
	if (pid < 0)
		return -errno;
	_stp_pt_on_wait(s, pid, st);
	return 1 + _stp_pt_dispatch(s);
}

int _stp_pt_active(const struct _stp_pt_session *s)
{
	return s->nprocs;
}
