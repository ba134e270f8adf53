/* The ptrace engine's core: sessions, processes and threads, launching and
 * attaching, the wait-status dispatch, stopping every thread of a process,
 * and detaching. Breakpoints are in ptrace_bkpt.c, memory in ptrace_mem.c,
 * stepping in ptrace_step.c; doc/ptrace-quirks.md explains the why of the
 * stranger parts.
 *
 * Every tracee is PTRACE_SEIZEd (never PTRACE_TRACEME/ATTACH), so
 * PTRACE_INTERRUPT and PTRACE_LISTEN are available and group-stops show as
 * PTRACE_EVENT_STOP. A thread is RUNNING (resumed by us, no stop seen since)
 * or STOPPED; a STOPPED thread may carry a wait status not yet handled
 * (has_status, in the session's pending queue): stopping a whole process
 * collects other threads' events that way, to be handled afterwards. */
#include "ptrace_internal.h"
#include "run/sigstate.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/kcmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define PT_OPTIONS                                                                             \
	(PTRACE_O_TRACECLONE | PTRACE_O_TRACEFORK | PTRACE_O_TRACEVFORK | PTRACE_O_TRACEEXEC | \
	 PTRACE_O_TRACESYSGOOD)

int _stp_pt_debug_on;

void _stp_pt_set_debug(int on)
{
	_stp_pt_debug_on = on;
}

void _stp_pt_msg(const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof buf - 1, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if (n > (int)sizeof buf - 2)
		n = (int)sizeof buf - 2;
	buf[n++] = '\n';
	fprintf(stderr, "ptrace: %.*s", n, buf);
}

/* ---- threads and processes ---- */

static unsigned tid_hash(pid_t tid)
{
	return (unsigned)tid % PT_TID_BUCKETS;
}

struct _stp_pt_thread *_stp_pt_find(struct _stp_pt_session *s, pid_t tid)
{
	for (struct _stp_pt_thread *t = s->tids[tid_hash(tid)]; t; t = t->hnext)
		if (t->tid == tid)
			return t;
	return NULL;
}

static struct _stp_pt_thread *thread_new(struct _stp_pt_proc *p, pid_t tid)
{
	struct _stp_pt_thread *t = calloc(1, sizeof *t);
	unsigned h = tid_hash(tid);

	if (!t)
		return NULL;
	t->tid = tid;
	t->proc = p;
	t->state = PT_RUNNING;
	t->next = p->threads;
	p->threads = t;
	p->nthreads++;
	t->hnext = p->s->tids[h];
	p->s->tids[h] = t;
	return t;
}

static void unqueue(struct _stp_pt_session *s, struct _stp_pt_thread *t)
{
	struct _stp_pt_thread **pp = &s->pending;

	while (*pp && *pp != t)
		pp = &(*pp)->pending_next;
	if (*pp) {
		*pp = t->pending_next;
		if (s->pending_tail == &t->pending_next)
			s->pending_tail = pp;
	}
	t->pending_next = NULL;
	t->has_status = 0;
}

static void thread_free(struct _stp_pt_thread *t)
{
	struct _stp_pt_proc *p = t->proc;
	struct _stp_pt_session *s = p->s;

	if (t->has_status)
		unqueue(s, t);
	for (struct _stp_pt_thread **pp = &s->tids[tid_hash(t->tid)]; *pp; pp = &(*pp)->hnext)
		if (*pp == t) {
			*pp = t->hnext;
			break;
		}
	for (struct _stp_pt_thread **pp = &p->threads; *pp; pp = &(*pp)->next)
		if (*pp == t) {
			*pp = t->next;
			break;
		}
	p->nthreads--;
	_stp_pt_frames_clear(t);
	free(t);
}

static struct _stp_pt_proc *proc_new(struct _stp_pt_session *s, pid_t pid)
{
	struct _stp_pt_proc *p = calloc(1, sizeof *p);

	if (!p)
		return NULL;
	p->pid = pid;
	p->s = s;
	p->follow = 1;
	p->next = s->procs;
	s->procs = p;
	s->nprocs++;
	return p;
}

static void proc_free(struct _stp_pt_proc *p)
{
	struct _stp_pt_session *s = p->s;

	while (p->threads)
		thread_free(p->threads);
	if (p->mm && p->mm->refs > 1 && p->mm->pid == p->pid)
		/* memory shared with a vfork/clone child: read it through a
		 * process that still lives (this pid may be reused) */
		for (struct _stp_pt_proc *q = s->procs; q; q = q->next)
			if (q != p && q->mm == p->mm) {
				p->mm->pid = q->pid;
				break;
			}
	_stp_pt_mm_put(p->mm);
	for (struct _stp_pt_proc **pp = &s->procs; *pp; pp = &(*pp)->next)
		if (*pp == p) {
			*pp = p->next;
			break;
		}
	s->nprocs--;
	free(p);
}

static void queue_status(struct _stp_pt_thread *t, int st)
{
	struct _stp_pt_session *s = t->proc->s;

	if (t->has_status) {
		pt_debug("thread %d: status %#x lost to %#x", (int)t->tid, t->status, st);
		t->status = st;
		return;
	}
	t->status = st;
	t->has_status = 1;
	t->pending_next = NULL;
	*s->pending_tail = t;
	s->pending_tail = &t->pending_next;
}

/* t died while we were making it run something: the loop handles it. */
void _stp_pt_requeue_exit(struct _stp_pt_thread *t, int st)
{
	t->state = PT_STOPPED;
	queue_status(t, st);
}

static struct _stp_pt_thread *dequeue(struct _stp_pt_session *s)
{
	struct _stp_pt_thread *t = s->pending;

	if (!t)
		return NULL;
	s->pending = t->pending_next;
	if (!s->pending)
		s->pending_tail = &s->pending;
	t->pending_next = NULL;
	return t;
}

/* ---- registers, memory ---- */

int _stp_pt_fetch_regs(struct _stp_pt_thread *t)
{
	if (t->regs_valid)
		return 0;
	if (t->state != PT_STOPPED)
		return -ESRCH;
	if (ptrace(PTRACE_GETREGS, t->tid, 0, &t->regs) < 0)
		return -errno;
	t->regs_valid = 1;
	return 0;
}

int _stp_pt_get_regs(struct _stp_pt_thread *t, struct user_regs_struct *r)
{
	int rc = _stp_pt_fetch_regs(t);

	if (rc == 0)
		*r = t->regs;
	return rc;
}

int _stp_pt_set_regs(struct _stp_pt_thread *t, const struct user_regs_struct *r)
{
	int rc = _stp_pt_fetch_regs(t);

	if (rc < 0)
		return rc;
	t->regs = *r;
	t->regs_dirty = 1;
	return 0;
}

int _stp_pt_read(struct _stp_pt_thread *t, uint64_t addr, void *buf, size_t len)
{
	return t->proc->mm ? _stp_pt_mm_read(t->proc->mm, addr, buf, len) : -ESRCH;
}

int _stp_pt_proc_read(struct _stp_pt_proc *p, uint64_t addr, void *buf, size_t len)
{
	return p->mm ? _stp_pt_mm_read(p->mm, addr, buf, len) : -ESRCH;
}

/* Call fn for every armed breakpoint in [addr, addr+len). */
static void each_bk_in(struct pt_mm *mm, uint64_t addr, size_t len,
		       void (*fn)(struct _stp_pt_bkpt *, uint8_t *, uint64_t), uint8_t *buf)
{
	if (len <= 64) {
		for (size_t i = 0; i < len; i++) {
			struct _stp_pt_bkpt *bk = _stp_pt_bk_find(mm, addr + i);
			if (bk && bk->live)
				fn(bk, buf, addr);
		}
		return;
	}
	for (int b = 0; b < PT_BK_BUCKETS; b++)
		for (struct _stp_pt_bkpt *bk = mm->bk[b]; bk; bk = bk->next)
			if (bk->live && bk->addr >= addr && bk->addr - addr < len)
				fn(bk, buf, addr);
}

static void show_orig(struct _stp_pt_bkpt *bk, uint8_t *buf, uint64_t addr)
{
	buf[bk->addr - addr] = bk->orig;
}

int _stp_pt_read_code(struct _stp_pt_thread *t, uint64_t addr, void *buf, size_t len)
{
	int rc = _stp_pt_read(t, addr, buf, len);

	if (rc == 0)
		each_bk_in(t->proc->mm, addr, len, show_orig, buf);
	return rc;
}

static void keep_int3(struct _stp_pt_bkpt *bk, uint8_t *buf, uint64_t addr)
{
	bk->orig = buf[bk->addr - addr];
	buf[bk->addr - addr] = 0xcc;
}

int _stp_pt_write(struct _stp_pt_thread *t, uint64_t addr, const void *buf, size_t len)
{
	return _stp_pt_proc_write(t->proc, addr, buf, len);
}

int _stp_pt_proc_write(struct _stp_pt_proc *p, uint64_t addr, const void *buf, size_t len)
{
	struct pt_mm *mm = p->mm;
	uint8_t small[64], *copy = small;
	int rc;

	if (!mm)
		return -ESRCH;
	if (len > sizeof small && !(copy = malloc(len)))
		return -ENOMEM;
	memcpy(copy, buf, len);
	each_bk_in(mm, addr, len, keep_int3, copy);
	rc = _stp_pt_mm_write(mm, addr, copy, len);
	if (copy != small)
		free(copy);
	return rc;
}

/* ---- resuming ---- */

void _stp_pt_resume_thread(struct _stp_pt_thread *t)
{
	enum __ptrace_request req = PTRACE_CONT;
	int sig = t->resume_sig;

	if (t->state != PT_STOPPED || t->has_status || t->proc->hold || t->proc->stopping)
		return;
	t->sigstep_sig = 0;
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
	} else if (t->proc->syscall_fn) {
		req = PTRACE_SYSCALL;
	}
	if (t->hooks && t->hooks->resume && req != PTRACE_SINGLESTEP && req != PTRACE_SINGLEBLOCK)
		t->hooks->resume(t, sig, t->hooks_data);
	if (t->regs_dirty) {
		if (ptrace(PTRACE_SETREGS, t->tid, 0, &t->regs) < 0)
			pt_debug("SETREGS %d: %s", (int)t->tid, strerror(errno));
		t->regs_dirty = 0;
	}
	t->resume_sig = 0;
	t->regs_valid = 0;
	t->state = PT_RUNNING;
	if (ptrace(req, t->tid, 0, (long)sig) < 0 && errno != ESRCH)
		pt_debug("resume %d: %s", (int)t->tid, strerror(errno));
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
			queue_status(t, k->status);
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
static int shares_mm(pid_t tid, pid_t child)
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
static void ev_child(struct _stp_pt_thread *t, int ev)
{
	struct _stp_pt_session *s = t->proc->s;
	struct _stp_pt_proc *parent = t->proc, *cp;
	struct _stp_pt_thread *nt;
	unsigned long msg = 0;
	int shared;

	if (ptrace(PTRACE_GETEVENTMSG, t->tid, 0, &msg) < 0 || msg == 0)
		return;
	if (ev == PTRACE_EVENT_CLONE && read_tgid((pid_t)msg) != parent->pid &&
	    read_tgid((pid_t)msg) != -1)
		ev = PTRACE_EVENT_FORK; /* clone() of a process, not a thread */
	if (ev == PTRACE_EVENT_CLONE) {
		nt = thread_new(parent, (pid_t)msg);
		if (!nt)
			return;
		nt->new_thread = 1;
		unpark(s, nt);
		pt_debug("thread %d: new thread %d", (int)t->tid, (int)nt->tid);
		return;
	}
	cp = proc_new(s, (pid_t)msg);
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
	shared = ev == PTRACE_EVENT_VFORK || shares_mm(t->tid, cp->pid);
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
	nt = thread_new(cp, cp->pid);
	if (!nt)
		return;
	nt->new_thread = 1;
	/* a vfork child returns through its parent's frames; a clone child
	 * runs on a stack of its own */
	if (cp->mm && (cp->follow || cp->release_on_exec) && (!shared || ev == PTRACE_EVENT_VFORK))
		_stp_pt_frames_copy(nt, t);
	pt_debug("%d: new process %d (%s, %s)", (int)t->tid, (int)cp->pid,
		 ev == PTRACE_EVENT_VFORK ? "vfork"
		     : shared		  ? "clone sharing memory"
					  : "fork",
		 cp->follow ? "followed" : "released");
	unpark(s, nt);
	if (cp->follow && s->cb.fork)
		s->cb.fork(t, cp, s->user);
}

/* Give a process back: every int3 out of its memory (unless another
 * traced process shares it), then PTRACE_DETACH each (stopped) thread. */
static void release(struct _stp_pt_proc *p)
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
				pt_debug("munmap %#llx in %d failed", (unsigned long long)sc->addr,
					 (int)p->pid);
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
		if (t->regs_dirty && ptrace(PTRACE_SETREGS, t->tid, 0, &t->regs) < 0)
			pt_debug("SETREGS %d: %s", (int)t->tid, strerror(errno));
		if (ptrace(PTRACE_DETACH, t->tid, 0, (long)t->resume_sig) < 0)
			pt_debug("DETACH %d: %s", (int)t->tid, strerror(errno));
		else
			pt_debug("detached %d%s", (int)t->tid, t->group_stop ? " (stopped)" : "");
	}
	proc_free(p);
}

static void ev_exec(struct _stp_pt_thread *t)
{
	struct _stp_pt_proc *p = t->proc;
	struct _stp_pt_session *s = p->s;
	struct _stp_pt_thread *o, *next;

	/* the other threads are gone; if a non-leader exec'd, it now has the
	 * leader's tid, and the leader's record is reused */
	for (o = p->threads; o; o = next) {
		next = o->next;
		if (o != t)
			thread_free(o);
	}
	_stp_pt_frames_clear(t);
	t->ool_active = 0;
	t->step_mode = _STP_PT_STEP_NONE;
	t->sigstep_fn = NULL;
	t->sigstep_sig = 0;
	_stp_pt_mm_put(p->mm);
	p->mm = NULL;
	p->libs_fn = NULL;
	p->r_debug = p->libs_brk = 0;
	if (p->release_on_exec) {
		if (ptrace(PTRACE_DETACH, t->tid, 0, 0) < 0)
			pt_debug("DETACH %d: %s", (int)t->tid, strerror(errno));
		proc_free(p);
		return;
	}
	p->mm = _stp_pt_mm_new(p->pid);
	p->mm_err = p->mm ? 0 : errno;
	pt_debug("%d: exec", (int)p->pid);
	if (p->follow && !s->detaching && s->cb.exec)
		s->cb.exec(t, s->user);
}

static int is_stop_sig(int sig)
{
	return sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU;
}

static void handle_trap(struct _stp_pt_thread *t)
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

static void thread_gone(struct _stp_pt_thread *t, int st)
{
	struct _stp_pt_proc *p = t->proc;
	struct _stp_pt_session *s = p->s;

	if (t->tid == p->pid) {
		p->leader_status = st;
		p->leader_gone = 1;
	}
	if (s->cb.thread_exit && p->follow)
		s->cb.thread_exit(t, st, s->user);
	thread_free(t);
	if (p->nthreads == 0) {
		pt_debug("%d: ended (status %#x)", (int)p->pid,
			 p->leader_gone ? p->leader_status : st);
		if (s->cb.proc_exit && p->follow)
			s->cb.proc_exit(p, p->leader_gone ? p->leader_status : st, s->user);
		proc_free(p);
	}
}

/* A system call entry or exit (PTRACE_O_TRACESYSGOOD marks them). */
static void syscall_stop(struct _stp_pt_thread *t)
{
	struct _stp_pt_proc *p = t->proc;
	struct __ptrace_syscall_info si;

	if (!p->syscall_fn || p->s->detaching ||
	    ptrace(PTRACE_GET_SYSCALL_INFO, t->tid, sizeof si, &si) <= 0)
		return;
	if (si.op != PTRACE_SYSCALL_INFO_ENTRY && si.op != PTRACE_SYSCALL_INFO_EXIT)
		return;
	t->probe_point = si.instruction_pointer;
	p->s->in_handler = 1;
	p->syscall_fn(t, si.op == PTRACE_SYSCALL_INFO_EXIT,
		      si.op == PTRACE_SYSCALL_INFO_ENTRY ? (long)si.entry.nr
							 : (long)t->last_syscall,
		      p->syscall_data);
	p->s->in_handler = 0;
	if (si.op == PTRACE_SYSCALL_INFO_ENTRY)
		t->last_syscall = (long)si.entry.nr;
}

int _stp_pt_syscalls(struct _stp_pt_proc *p, _stp_pt_syscall_fn fn, void *data)
{
	p->syscall_fn = fn;
	p->syscall_data = data;
	return 0;
}

/* A stop of t, not collected by a stop-all. */
static void process_stop(struct _stp_pt_thread *t, int st)
{
	struct _stp_pt_proc *p = t->proc;
	struct _stp_pt_session *s = p->s;
	int ev = (unsigned)st >> 16, sig = WSTOPSIG(st), released;
	int sigstep = t->sigstep_sig; /* the stop after stepping into a handler */

	t->sigstep_sig = 0;
	s->stats.stops++;
	t->state = PT_STOPPED;
	t->regs_valid = 0;
	if (t->hooks && t->hooks->stop && !s->detaching && t->hooks->stop(t, st, t->hooks_data)) {
		_stp_pt_resume_thread(t);
		return;
	}
	if (t->new_thread && ev == PTRACE_EVENT_STOP) {
		t->new_thread = 0;
		if (!p->follow && !p->release_on_exec) {
			/* a fork child we do not follow: clean its copy, let go */
			release(p);
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
		ev_child(t, ev);
		break;
	case PTRACE_EVENT_EXEC:
		released = p->release_on_exec;
		ev_exec(t);
		if (released)
			return; /* p and t are gone */
		break;
	case PTRACE_EVENT_STOP:
		t->group_stop = is_stop_sig(sig);
		break;
	case 0:
		t->group_stop = 0;
		if (sig == (SIGTRAP | 0x80)) {
			syscall_stop(t);
		} else if (sig == SIGTRAP) {
			if (!sigstep || !_stp_pt_sigstep_stop(t, sigstep))
				handle_trap(t);
		} else {
			if (t->ool_active)
				_stp_pt_ool_finish(t);
			_stp_pt_fault_in_slot(t, sig);
			t->resume_sig = sig;
			if (_stp_pt_debug_on && _stp_pt_fetch_regs(t) == 0)
				pt_debug("thread %d: signal %d at %#llx", (int)t->tid, sig,
					 t->regs.rip);
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
		process_stop(t, st);
	else
		thread_gone(t, st);
}

/* A wait status from waitpid. While a stop-all is in progress, or for a
 * thread that is not ours yet, it is only recorded. */
static void on_wait(struct _stp_pt_session *s, pid_t pid, int st)
{
	struct _stp_pt_thread *t = _stp_pt_find(s, pid);

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
		queue_status(t, st);
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
		if ((t = dequeue(s))) {
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
		on_wait(s, pid, st);
		n++;
	}
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
	on_wait(s, pid, st);
	return 1 + _stp_pt_dispatch(s);
}

int _stp_pt_active(const struct _stp_pt_session *s)
{
	return s->nprocs;
}

/* ---- stopping every thread of a process ---- */

static int any_running(struct _stp_pt_proc *p)
{
	for (struct _stp_pt_thread *t = p->threads; t; t = t->next)
		if (t->state == PT_RUNNING)
			return 1;
	return 0;
}

/* A thread that is a zombie never stops: the leader after pthread_exit()
 * is not reported until the other threads are gone. */
static int is_zombie(struct _stp_pt_thread *t)
{
	char path[64], buf[256], *p;
	FILE *f;

	snprintf(path, sizeof path, "/proc/%d/task/%d/stat", (int)t->proc->pid, (int)t->tid);
	if (!(f = fopen(path, "re")))
		return 1;
	p = fgets(buf, sizeof buf, f) ? strrchr(buf, ')') : NULL;
	fclose(f);
	return p && (p[2] == 'Z' || p[2] == 'X');
}

/* A SIGTRAP queued for t but not delivered yet: an int3 hit caught by
 * our interrupt first (the interrupt stop comes before the pending signal
 * is dequeued). Detached like that, the thread would die of it. */
static int sigtrap_pending(struct _stp_pt_thread *t)
{
	char path[64], line[128];
	unsigned long long pnd = 0;
	FILE *f;

	snprintf(path, sizeof path, "/proc/%d/task/%d/status", (int)t->proc->pid, (int)t->tid);
	if (!(f = fopen(path, "re")))
		return 0;
	while (fgets(line, sizeof line, f))
		if (sscanf(line, "SigPnd: %llx", &pnd) == 1)
			break;
	fclose(f);
	return (pnd >> (SIGTRAP - 1)) & 1;
}

/* Interrupt every running thread of p and wait until all are stopped;
 * their events are queued, not handled. Ends with _stp_pt_stop_all_end. */
int _stp_pt_stop_all(struct _stp_pt_proc *p)
{
	struct _stp_pt_session *s = p->s;
	int st;
	pid_t pid;

	p->stopping++;
	for (struct _stp_pt_thread *t = p->threads; t; t = t->next) {
		if (t->state != PT_RUNNING || t->interrupt_pending || t->new_thread)
			continue;
		if (ptrace(PTRACE_INTERRUPT, t->tid, 0, 0) == 0)
			t->interrupt_pending = 1;
	}
	for (int idle = 0; any_running(p);) {
		pid = waitpid(-1, &st, __WALL | WNOHANG);
		if (pid < 0 && errno != EINTR)
			return -errno;
		if (pid > 0) {
			on_wait(s, pid, st);
			idle = 0;
			continue;
		}
		/* nothing yet: every 64 ms, look for zombies (they will not stop;
		 * their exit comes later and is handled then) */
		if (++idle % 64 == 0)
			for (struct _stp_pt_thread *t = p->threads; t; t = t->next)
				if (t->state == PT_RUNNING && is_zombie(t))
					t->state = PT_GONE;
		usleep(1000);
	}
	/* let pending int3 traps be reported (as a stop, before any
	 * instruction runs), so they are handled and not left behind */
	int again = 0;
	for (struct _stp_pt_thread *t = p->threads; t; t = t->next) {
		if (t->state == PT_STOPPED && !t->has_status && sigtrap_pending(t) &&
		    ptrace(PTRACE_CONT, t->tid, 0, 0) == 0) {
			t->state = PT_RUNNING;
			t->regs_valid = 0;
			t->interrupt_pending = 1; /* no new interrupt: it would
						   * come first again */
			again = 1;
		}
	}
	if (again) {
		p->stopping--;
		return _stp_pt_stop_all(p);
	}
	return 0;
}

void _stp_pt_stop_all_end(struct _stp_pt_proc *p)
{
	if (--p->stopping > 0)
		return;
	for (struct _stp_pt_thread *t = p->threads; t; t = t->next)
		_stp_pt_resume_thread(t);
}

/* ---- launching and attaching ---- */

struct _stp_pt_session *_stp_pt_session_new(const struct _stp_pt_callbacks *cb, void *user,
					    int options)
{
	struct _stp_pt_session *s = calloc(1, sizeof *s);

	if (!s)
		return NULL;
	if (cb)
		s->cb = *cb;
	s->user = user;
	s->options = options;
	s->pending_tail = &s->pending;
	sigemptyset(&s->launch_mask);
	sigemptyset(&s->launch_ignored);
	if (getenv("STAP_PTRACE_DEBUG"))
		_stp_pt_debug_on = 1;
	return s;
}

void _stp_pt_launch_signals(struct _stp_pt_session *s, const sigset_t *mask,
			    const sigset_t *ignored)
{
	s->launch_mask = *mask;
	s->launch_ignored = *ignored;
}

static struct _stp_pt_stats freed_stats;

void _stp_pt_session_free(struct _stp_pt_session *s)
{
	if (!s)
		return;
	_stp_pt_detach_all(s);
	freed_stats.stops += s->stats.stops;
	freed_stats.hits += s->stats.hits;
	freed_stats.returns += s->stats.returns;
	freed_stats.emulated += s->stats.emulated;
	freed_stats.stepped += s->stats.stepped;
	freed_stats.errors += s->stats.errors;
	while (s->parked) {
		struct pt_parked *k = s->parked->next;
		free(s->parked);
		s->parked = k;
	}
	free(s);
}

int _stp_pt_launch(struct _stp_pt_session *s, char *const argv[], struct _stp_pt_proc **out)
{
	struct _stp_pt_proc *p;
	struct _stp_pt_thread *t;
	int st;
	pid_t pid;

	int errpipe[2], err = 0;

	/* the child reports a failed exec through a close-on-exec pipe */
	if (pipe2(errpipe, O_CLOEXEC) < 0)
		return -errno;
	pid = fork();
	if (pid < 0) {
		err = errno;
		close(errpipe[0]);
		close(errpipe[1]);
		return -err;
	}
	if (pid == 0) {
		/* the program's signal state, not the tracer's (which may block
		 * SIGCHLD for a signalfd, or ignore SIGPIPE) */
		_stp_signals_apply(&s->launch_mask, &s->launch_ignored);
		/* wait for the tracer to seize us, then become the program */
		close(errpipe[0]);
		raise(SIGSTOP);
		if (s->options & _STP_PT_SHELL)
			execl("/bin/sh", "sh", "-c", argv[0], (char *)NULL);
		else
			execvp(argv[0], argv);
		err = errno;
		if (write(errpipe[1], &err, sizeof err) < 0)
			_exit(126);
		_exit(127);
	}
	close(errpipe[1]);
	if (waitpid(pid, &st, WUNTRACED) < 0 || !WIFSTOPPED(st)) {
		err = ECHILD;
		goto kill_child;
	}
	if (ptrace(PTRACE_SEIZE, pid, 0, PT_OPTIONS | PTRACE_O_EXITKILL) < 0) {
		err = errno;
		goto kill_child;
	}
	p = proc_new(s, pid);
	errno = ENOMEM;
	if (!p || !(t = thread_new(p, pid)) || !(p->mm = _stp_pt_mm_new(pid))) {
		err = errno; /* EMFILE from /proc/PID/mem, say */
		if (p)
			proc_free(p);
		goto kill_child;
	}
	p->hold = 1;
	kill(pid, SIGCONT);
	/* until the exec: the seize's stop, SIGCONT, then the program */
	for (;;) {
		if (waitpid(pid, &st, __WALL) < 0) {
			if (errno == EINTR)
				continue;
			err = errno;
			close(errpipe[0]);
			return -err;
		}
		if (!WIFSTOPPED(st)) {
			if (read(errpipe[0], &err, sizeof err) != sizeof err || err <= 0)
				err = ENOEXEC;
			close(errpipe[0]);
			thread_gone(t, st);
			return -err;
		}
		if ((st >> 16) == PTRACE_EVENT_EXEC) {
			t->state = PT_STOPPED;
			process_stop(t, st);
			break;
		}
		s->stats.stops++;
		ptrace(PTRACE_CONT, pid, 0,
		       (long)((st >> 16) == 0 && WSTOPSIG(st) != SIGSTOP ? WSTOPSIG(st) : 0));
	}
	close(errpipe[0]);
	pt_debug("launched %s as %d", argv[0], (int)pid);
	if (out)
		*out = p;
	return 0;
kill_child:
	close(errpipe[0]);
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	return -err;
}

static int proc_is_zombie(pid_t pid)
{
	char path[64], buf[256], *p;
	FILE *f;

	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	if (!(f = fopen(path, "re")))
		return 0;
	p = fgets(buf, sizeof buf, f) ? strrchr(buf, ')') : NULL;
	fclose(f);
	return p && p[2] == 'Z';
}

static pid_t read_ppid(pid_t pid)
{
	char path[64], buf[512], *p;
	int ppid = -1;
	FILE *f;

	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	if (!(f = fopen(path, "re")))
		return -1;
	p = fgets(buf, sizeof buf, f) ? strrchr(buf, ')') : NULL;
	fclose(f);
	if (!p || sscanf(p + 1, " %*c %d", &ppid) != 1)
		return -1;
	return (pid_t)ppid;
}

/* Children that p made by clone(CLONE_VM) before we came share its memory,
 * and so its breakpoints to come: trace them too (without handlers, as an
 * unfollowed vfork child) until they exec or end, or an int3 would kill
 * them. They run on meanwhile. */
static void adopt_sharers(struct _stp_pt_proc *p)
{
	struct _stp_pt_session *s = p->s;
	DIR *d = opendir("/proc");
	struct dirent *de;

	while (d && (de = readdir(d))) {
		pid_t c = (pid_t)atoi(de->d_name);
		struct _stp_pt_proc *cp;
		char path[64];
		DIR *td;

		if (c <= 0 || c == p->pid || _stp_pt_find(s, c) || read_ppid(c) != p->pid ||
		    !shares_mm(p->pid, c))
			continue;
		if (!(cp = proc_new(s, c)))
			break;
		cp->follow = 0;
		cp->release_on_exec = 1;
		cp->mm = p->mm;
		p->mm->refs++;
		snprintf(path, sizeof path, "/proc/%d/task", (int)c);
		if ((td = opendir(path))) {
			struct dirent *te;
			while ((te = readdir(td))) {
				pid_t tid = (pid_t)atoi(te->d_name);
				if (tid > 0 && !_stp_pt_find(s, tid) &&
				    ptrace(PTRACE_SEIZE, tid, 0, PT_OPTIONS) == 0 &&
				    !thread_new(cp, tid))
					break;
			}
			closedir(td);
		}
		pt_debug("%d: process %d shares its memory: traced", (int)p->pid, (int)c);
		if (!cp->nthreads)
			proc_free(cp);
	}
	if (d)
		closedir(d);
}

int _stp_pt_attach(struct _stp_pt_session *s, pid_t pid, struct _stp_pt_proc **out)
{
	struct _stp_pt_proc *p;
	char path[64];
	int added, rc;

	if (pid <= 0 || _stp_pt_find(s, pid))
		return -EINVAL;
	p = proc_new(s, pid);
	if (!p)
		return -ENOMEM;
	p->hold = 1;
	snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
	/* threads may be created while we go: scan until nothing is new */
	do {
		DIR *d = opendir(path);
		struct dirent *de;

		added = 0;
		if (!d) {
			rc = errno == ENOENT ? -ESRCH : -errno;
			goto fail;
		}
		while ((de = readdir(d))) {
			pid_t tid = (pid_t)atoi(de->d_name);
			struct _stp_pt_thread *t;

			if (tid <= 0 || _stp_pt_find(s, tid))
				continue;
			if (ptrace(PTRACE_SEIZE, tid, 0, PT_OPTIONS) < 0) {
				if (tid == pid && !proc_is_zombie(pid)) {
					rc = -errno;
					closedir(d);
					goto fail;
				}
				/* gone, ours by TRACECLONE already, or a leader
				 * that called pthread_exit (a zombie: cannot be
				 * traced, and runs nothing) */
				continue;
			}
			if (!(t = thread_new(p, tid))) {
				closedir(d);
				rc = -ENOMEM;
				goto fail;
			}
			if (ptrace(PTRACE_INTERRUPT, tid, 0, 0) == 0)
				t->interrupt_pending = 1;
			added++;
		}
		closedir(d);
	} while (added);
	/* the memory through the leader, else a live thread (a leader that
	 * called pthread_exit has none; threads may end meanwhile) */
	errno = EACCES;
	if (!proc_is_zombie(pid))
		p->mm = _stp_pt_mm_new(pid);
	for (struct _stp_pt_thread *t = p->threads; t && !p->mm; t = t->next)
		p->mm = _stp_pt_mm_new(t->tid);
	if (!p->mm) {
		rc = p->threads ? -errno : -ESRCH;
		goto fail;
	}
	if ((rc = _stp_pt_stop_all(p)) < 0)
		goto fail;
	_stp_pt_stop_all_end(p); /* held: stays stopped */
	p->report_threads = 1;
	p->attached = 1;
	adopt_sharers(p);
	pt_debug("attached to %d (%d threads)", (int)pid, p->nthreads);
	if (out)
		*out = p;
	return 0;
fail:
	_stp_pt_detach(p);
	return rc;
}

/* ---- detaching ---- */

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
		unqueue(s, t);
		if (!WIFSTOPPED(st)) {
			int last = p->nthreads == 1;
			thread_gone(t, st);
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
			ev_child(t, ev);
			more = 1;
		} else if (ev == PTRACE_EVENT_EXEC) {
			int released = p->release_on_exec;
			ev_exec(t);
			return released ? -ESRCH : 1;
		} else if (ev == PTRACE_EVENT_STOP) {
			t->group_stop = is_stop_sig(sig);
		} else if (ev == 0 && sig == (SIGTRAP | 0x80)) {
			/* a system call stop: nothing to deliver */
		} else if (ev == 0 && sig == SIGTRAP) {
			/* detaching: hits are rewound, no handler-entry call */
			if (!sigstep || !_stp_pt_sigstep_stop(t, sigstep))
				handle_trap(t);
		} else if (ev == 0) {
			if (t->ool_active)
				_stp_pt_ool_finish(t);
			_stp_pt_fault_in_slot(t, sig);
			t->resume_sig = sig;
		}
	}
	return more;
}

int _stp_pt_detach(struct _stp_pt_proc *p)
{
	struct _stp_pt_session *s = p->s;
	int rc;

	if (s->in_handler)
		return -EBUSY;
	s->detaching++;
	p->hold = 1;
	for (int round = 0; round < 100; round++) {
		if ((rc = _stp_pt_stop_all(p)) < 0)
			break;
		p->stopping--;
		rc = drain_for_detach(p);
		if (rc == -ESRCH) {
			s->detaching--;
			return 0; /* gone meanwhile */
		}
		if (rc == 0 && !any_running(p))
			break;
	}
	release(p);
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

/* ---- accessors ---- */

pid_t _stp_pt_tid(const struct _stp_pt_thread *t)
{
	return t->tid;
}

pid_t _stp_pt_pid(const struct _stp_pt_thread *t)
{
	return t->proc->pid;
}

struct _stp_pt_proc *_stp_pt_thread_proc(struct _stp_pt_thread *t)
{
	return t->proc;
}

pid_t _stp_pt_proc_pid(const struct _stp_pt_proc *p)
{
	return p->pid;
}

int _stp_pt_proc_shares_mm(const struct _stp_pt_proc *a, const struct _stp_pt_proc *b)
{
	return a && b && a->mm && a->mm == b->mm;
}

uint64_t _stp_pt_probe_point(const struct _stp_pt_thread *t)
{
	return t->probe_point;
}

int _stp_pt_interrupt(struct _stp_pt_thread *t)
{
	if (t->state != PT_RUNNING)
		return 0;
	if (ptrace(PTRACE_INTERRUPT, t->tid, 0, 0) < 0)
		return errno == ESRCH ? 0 : -errno;
	return 1;
}

void _stp_pt_thread_hooks(struct _stp_pt_thread *t, const struct _stp_pt_thread_hooks *h,
			  void *data)
{
	t->hooks = h;
	t->hooks_data = data;
}

void **_stp_pt_thread_user(struct _stp_pt_thread *t)
{
	return &t->user;
}

void **_stp_pt_proc_user(struct _stp_pt_proc *p)
{
	return &p->user;
}

void *_stp_pt_session_user(struct _stp_pt_session *s)
{
	return s->user;
}

void _stp_pt_get_stats(const struct _stp_pt_session *s, struct _stp_pt_stats *st)
{
	*st = s->stats;
}

void _stp_pt_total_stats(struct _stp_pt_stats *st)
{
	*st = freed_stats;
}
