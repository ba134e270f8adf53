/* CPU affinity: a traced thread that stops all the time and the tracer
 * share one CPU (doc/cpu-affinity.md says why: on a virtual machine a
 * stop or a resume that crosses CPUs wakes an idle virtual CPU through
 * the hypervisor, several times the cost of the stop itself).
 *
 * A thread is co-located (pinned to the tracer's CPU, the tracer pinned
 * there too) while a mechanism asks for it (_stp_pt_colocate: the call
 * graph's stepping and breakpoints), or, under the auto policy, while it
 * stops at a high rate (probe hits): AFF_PIN_STOPS stops within
 * AFF_PIN_NS. A periodic check (a timer raising SIGCHLD, so the loop
 * calls _stp_pt_dispatch) gives a thread pinned for its rate its own mask
 * back when its rate falls. The thread's mask (read before) comes back
 * when it is let go, at detach, and for the children it creates (they
 * would inherit the pin); the tracer's when no thread is co-located. A
 * mask the program set itself meanwhile is left as it is. */
#include "ptrace_internal.h"

#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <time.h>

#define AFF_PIN_STOPS 16	      /* ... within */
#define AFF_PIN_NS (10 * 1000000LL)   /* 1600 stops a second */
#define AFF_CHECK_NS (50 * 1000000LL) /* the rate check's period */
#define AFF_KEEP_PER_S 400	      /* pinned for its rate: kept above this */

static int default_policy = -1;
static struct _stp_pt_affinity_stats totals;

static int64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

const char *_stp_pt_affinity_name(int policy)
{
	switch (policy) {
	case _STP_PT_AFF_OFF:
		return "off";
	case _STP_PT_AFF_ALWAYS:
		return "always";
	default:
		return "auto";
	}
}

/* STAP_CPU_AFFINITY: a number or a name; -1 if unset or not one. */
static int env_policy(void)
{
	const char *e = getenv("STAP_CPU_AFFINITY");

	if (!e || !*e)
		return -1;
	for (int p = _STP_PT_AFF_OFF; p <= _STP_PT_AFF_ALWAYS; p++)
		if (!strcmp(e, _stp_pt_affinity_name(p)) || (e[0] == '0' + p && !e[1]))
			return p;
	return -1;
}

void _stp_pt_affinity_default(int policy)
{
	default_policy = policy >= _STP_PT_AFF_OFF && policy <= _STP_PT_AFF_ALWAYS ? policy : -1;
}

int _stp_pt_affinity_policy(void)
{
	int e = env_policy();

	return e >= 0 ? e : default_policy >= 0 ? default_policy : _STP_PT_AFF_AUTO;
}

void _stp_pt_aff_session(struct _stp_pt_session *s)
{
	s->aff_policy = _stp_pt_affinity_policy();
	s->aff_cpu = -1;
}

/* ---- pinning ---- */

/* Armed once, at the first pin for a rate, and left running until the
 * session ends: the timer's SIGCHLD and a child's stop coalesce into one
 * pending signal, and a timer re-set or disarmed while its signal is
 * pending has that signal dropped (Linux 6.13 and later), the child's
 * notification with it: staprun would wait for ever on a stopped thread
 * (seen under translate, whose requests stop the thread at a high rate). */
static void timer_start(struct _stp_pt_session *s)
{
	struct itimerspec its = {{0, AFF_CHECK_NS}, {0, AFF_CHECK_NS}};
	struct sigevent ev = {.sigev_notify = SIGEV_SIGNAL, .sigev_signo = SIGCHLD};

	if (s->aff_timer_made)
		return;
	if (timer_create(CLOCK_MONOTONIC, &ev, &s->aff_timer) < 0)
		return;
	s->aff_timer_made = 1;
	timer_settime(s->aff_timer, 0, &its, NULL);
}

/* The CPU both may run on: the tracer's current one if it can, else the
 * lowest; -1 if none. */
static int pick_cpu(const cpu_set_t *a, const cpu_set_t *b)
{
	int cur = sched_getcpu();

	if (cur >= 0 && CPU_ISSET(cur, a) && CPU_ISSET(cur, b))
		return cur;
	for (int c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, a) && CPU_ISSET(c, b))
			return c;
	return -1;
}

static void self_back(struct _stp_pt_session *s)
{
	if (s->aff_n == 0 && s->aff_cpu >= 0) {
		if (sched_setaffinity(0, sizeof s->aff_self, &s->aff_self) < 0)
			_stp_dbg(STP_DBG_PTRACE, 1, "affinity of the tracer: %s", strerror(errno));
		s->aff_cpu = -1;
	}
}

static int pin(struct _stp_pt_thread *t, int forced)
{
	struct _stp_pt_session *s = t->proc->s;
	cpu_set_t own, one;

	if (t->aff_saved) {
		t->aff_forced |= forced;
		return 0;
	}
	if (sched_getaffinity(t->tid, sizeof own, &own) < 0)
		return -errno;
	if (s->aff_cpu < 0) {
		cpu_set_t self;
		int cpu;
		if (sched_getaffinity(0, sizeof self, &self) < 0)
			return -errno;
		if ((cpu = pick_cpu(&own, &self)) < 0)
			return -EINVAL;
		CPU_ZERO(&one);
		CPU_SET(cpu, &one);
		if (sched_setaffinity(0, sizeof one, &one) < 0)
			return -errno;
		s->aff_self = self;
		s->aff_cpu = cpu;
	} else if (!CPU_ISSET(s->aff_cpu, &own)) {
		return -EINVAL; /* its mask keeps it off the tracer's CPU */
	}
	CPU_ZERO(&one);
	CPU_SET(s->aff_cpu, &one);
	if (!(t->aff_saved = malloc(sizeof own)) ||
	    sched_setaffinity(t->tid, sizeof one, &one) < 0) {
		int e = t->aff_saved ? errno : ENOMEM;
		free(t->aff_saved);
		t->aff_saved = NULL;
		self_back(s);
		return -e;
	}
	*t->aff_saved = own;
	t->aff_forced = forced;
	t->aff_by_rate = !forced;
	s->aff_n++;
	totals.colocated++;
	if (!forced && !s->aff_rate_n++)
		timer_start(s);
	t->aff_check_ns = mono_ns();
	t->aff_check_stops = t->aff_stops;
	_stp_dbg(STP_DBG_PTRACE, 1, "thread %d: on CPU %d with the tracer (%s)", (int)t->tid,
		 s->aff_cpu, forced ? "asked" : "stop rate");
	return 0;
}

void _stp_pt_aff_drop(struct _stp_pt_thread *t)
{
	struct _stp_pt_session *s = t->proc->s;

	if (!t->aff_saved)
		return;
	free(t->aff_saved);
	t->aff_saved = NULL;
	if (t->aff_by_rate)
		s->aff_rate_n--;
	t->aff_forced = t->aff_by_rate = 0;
	s->aff_n--;
	self_back(s);
}

/* Its own mask back, unless the program has set another meanwhile. */
void _stp_pt_aff_unpin(struct _stp_pt_thread *t)
{
	struct _stp_pt_session *s = t->proc->s;
	cpu_set_t now;

	if (!t->aff_saved)
		return;
	if (sched_getaffinity(t->tid, sizeof now, &now) == 0 && CPU_COUNT(&now) == 1 &&
	    CPU_ISSET(s->aff_cpu, &now)) {
		if (sched_setaffinity(t->tid, sizeof *t->aff_saved, t->aff_saved) < 0 &&
		    errno != ESRCH)
			_stp_dbg(STP_DBG_PTRACE, 1, "affinity of %d: %s", (int)t->tid,
				 strerror(errno));
		else
			totals.restored++;
	}
	_stp_dbg(STP_DBG_PTRACE, 1, "thread %d: its own CPUs back", (int)t->tid);
	_stp_pt_aff_drop(t);
	t->aff_win_stops = 0;
}

/* An exec in t's process (t: the record of the thread that goes on,
 * the leader's): the image is another one, it gets its own mask back;
 * the pin of any other thread is gone with it. */
void _stp_pt_aff_exec(struct _stp_pt_thread *t)
{
	unsigned long former = 0;
	struct _stp_pt_thread *o = t;

	if (ptrace(PTRACE_GETEVENTMSG, t->tid, 0, &former) == 0 && former &&
	    (pid_t)former != t->tid)
		o = _stp_pt_find(t->proc->s, (pid_t)former);
	if (o && o != t) {
		/* a non-leader exec'd: its pin is on the leader's tid now */
		_stp_pt_aff_drop(t);
		if (o->aff_saved) {
			pid_t old = o->tid;
			o->tid = t->tid;
			_stp_pt_aff_unpin(o);
			o->tid = old;
		}
		return;
	}
	_stp_pt_aff_unpin(t);
}

int _stp_pt_colocate(struct _stp_pt_thread *t, int on)
{
	struct _stp_pt_session *s = t->proc->s;

	if (s->aff_policy == _STP_PT_AFF_OFF)
		return 0;
	if (on)
		return pin(t, 1);
	if (s->aff_policy != _STP_PT_AFF_ALWAYS)
		_stp_pt_aff_unpin(t);
	return 0;
}

/* A child of t (thread or process) inherited t's pin: its mask is t's own. */
void _stp_pt_aff_child(struct _stp_pt_thread *t, pid_t child)
{
	if (t->aff_saved && sched_setaffinity(child, sizeof *t->aff_saved, t->aff_saved) < 0)
		_stp_dbg(STP_DBG_PTRACE, 1, "affinity of %d: %s", (int)child, strerror(errno));
}

/* A stop of t (a followed process): its rate decides. */
void _stp_pt_aff_stop(struct _stp_pt_thread *t)
{
	struct _stp_pt_session *s = t->proc->s;
	int64_t now;

	t->aff_stops++;
	if (s->aff_policy == _STP_PT_AFF_OFF || t->aff_saved || !t->proc->follow)
		return;
	if (s->aff_policy == _STP_PT_AFF_ALWAYS) {
		if (!t->aff_failed && pin(t, 1) < 0)
			t->aff_failed = 1;
		return;
	}
	if (++t->aff_win_stops < AFF_PIN_STOPS)
		return;
	now = mono_ns();
	if (now - t->aff_win_ns <= AFF_PIN_NS && !t->aff_failed) {
		if (pin(t, 0) < 0)
			t->aff_failed = 1;
		else
			t->aff_pin_stop = t->aff_stops;
	}
	t->aff_win_ns = now;
	t->aff_win_stops = 0;
}

void _stp_pt_stop_uncounted(struct _stp_pt_thread *t)
{
	if (t->aff_win_stops)
		t->aff_win_stops--;
	if (t->aff_by_rate && t->aff_pin_stop == t->aff_stops)
		_stp_pt_aff_unpin(t); /* pinned at this very stop */
	if (t->aff_stops)
		t->aff_stops--;
}

/* The periodic check: threads pinned for a rate they no longer have. */
void _stp_pt_aff_check(struct _stp_pt_session *s)
{
	int64_t now;

	if (!s->aff_rate_n)
		return;
	now = mono_ns();
	for (struct _stp_pt_proc *p = s->procs; p; p = p->next)
		for (struct _stp_pt_thread *t = p->threads; t; t = t->next) {
			int64_t dt = now - t->aff_check_ns;
			if (!t->aff_saved || t->aff_forced || dt < AFF_CHECK_NS)
				continue;
			if ((int64_t)(t->aff_stops - t->aff_check_stops) * 1000000000 <
			    (int64_t)AFF_KEEP_PER_S * dt) {
				_stp_pt_aff_unpin(t);
				continue;
			}
			t->aff_check_ns = now;
			t->aff_check_stops = t->aff_stops;
		}
}

void _stp_pt_aff_session_end(struct _stp_pt_session *s)
{
	if (s->aff_timer_made)
		timer_delete(s->aff_timer);
	s->aff_timer_made = 0;
}

void _stp_pt_get_affinity_stats(struct _stp_pt_affinity_stats *st)
{
	*st = totals;
	st->policy = _stp_pt_affinity_policy();
}
