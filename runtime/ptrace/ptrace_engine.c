/* The ptrace engine's core: the session and its tables of processes and
 * threads. The rest is by job: registers and memory (ptrace_access.c), the
 * wait-status dispatch (ptrace_wait.c), stopping every thread of a process
 * (ptrace_stop.c), launching and attaching (ptrace_launch.c), detaching
 * (ptrace_detach.c), breakpoints (ptrace_bkpt.c), address spaces
 * (ptrace_mem.c), stepping (ptrace_step.c), libraries (ptrace_libs.c);
 * doc/ptrace-quirks.md explains the why of the stranger parts.
 *
 * Every tracee is PTRACE_SEIZEd (never PTRACE_TRACEME/ATTACH), so
 * PTRACE_INTERRUPT and PTRACE_LISTEN are available and group-stops show as
 * PTRACE_EVENT_STOP. A thread is RUNNING (resumed by us, no stop seen since)
 * or STOPPED; a STOPPED thread may carry a wait status not yet handled
 * (has_status, in the session's pending queue): stopping a whole process
 * collects other threads' events that way, to be handled afterwards. */
#include "ptrace_internal.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/ptrace.h>

/* The engine's messages are the ptrace and bkpt debug domains
 * (lang/debug.h); this is the switch it had before them. */
void _stp_pt_set_debug(int on)
{
	static const enum _stp_dbg_domain doms[] = {STP_DBG_PTRACE, STP_DBG_BKPT};

	for (size_t i = 0; i < sizeof doms / sizeof doms[0]; i++)
		if (!on)
			_stp_dbg_level[doms[i]] = 0;
		else if (!_stp_dbg_on(doms[i], 1))
			_stp_dbg_level[doms[i]] = 1;
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

struct _stp_pt_thread *_stp_pt_thread_new(struct _stp_pt_proc *p, pid_t tid)
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

void _stp_pt_unqueue(struct _stp_pt_session *s, struct _stp_pt_thread *t)
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

void _stp_pt_thread_free(struct _stp_pt_thread *t)
{
	struct _stp_pt_proc *p = t->proc;
	struct _stp_pt_session *s = p->s;

	if (t->has_status)
		_stp_pt_unqueue(s, t);
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
	_stp_pt_aff_drop(t);
	_stp_pt_frames_clear(t);
	free(t);
}

struct _stp_pt_proc *_stp_pt_proc_new(struct _stp_pt_session *s, pid_t pid)
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

void _stp_pt_proc_free(struct _stp_pt_proc *p)
{
	struct _stp_pt_session *s = p->s;

	while (p->threads)
		_stp_pt_thread_free(p->threads);
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

void _stp_pt_queue_status(struct _stp_pt_thread *t, int st)
{
	struct _stp_pt_session *s = t->proc->s;

	if (t->has_status) {
		_stp_dbg(STP_DBG_PTRACE, 1, "thread %d: status %#x lost to %#x", (int)t->tid,
			 t->status, st);
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
	_stp_pt_queue_status(t, st);
}

struct _stp_pt_thread *_stp_pt_dequeue(struct _stp_pt_session *s)
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
	_stp_pt_aff_session(s);
	if (getenv("STAP_PTRACE_DEBUG"))
		_stp_pt_set_debug(1);
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
	_stp_pt_aff_session_end(s);
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

struct _stp_pt_thread *_stp_pt_proc_thread(struct _stp_pt_proc *p)
{
	return p->threads;
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
