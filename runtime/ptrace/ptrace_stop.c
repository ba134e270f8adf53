/* Stopping every thread of a process (attaching and detaching do). */
#include "ptrace_internal.h"

#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>

int _stp_pt_any_running(struct _stp_pt_proc *p)
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
	for (int idle = 0; _stp_pt_any_running(p);) {
		pid = waitpid(-1, &st, __WALL | WNOHANG);
		if (pid < 0 && errno != EINTR)
			return -errno;
		if (pid > 0) {
			_stp_pt_on_wait(s, pid, st);
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

/* One running thread stopped for the caller, synchronously: only its own
 * wait statuses are taken (those of the others stay for the loop), and a
 * stop that is not our interrupt's is queued for the loop. */
int _stp_pt_stop_thread(struct _stp_pt_thread *t)
{
	struct _stp_pt_proc *p = t->proc;
	int st = 0, rc = 1;
	pid_t pid;

	if (t->state != PT_RUNNING || t->new_thread)
		return t->state == PT_STOPPED && !t->has_status ? 0 : -EAGAIN;
	if (!t->interrupt_pending) {
		if (ptrace(PTRACE_INTERRUPT, t->tid, 0, 0) < 0)
			return -errno;
		t->interrupt_pending = 1;
	}
	p->stopping++; /* its status queued unless it is our stop */
	for (int again = 0, tries = 0; t->state == PT_RUNNING;) {
		pid = waitpid(t->tid, &st, __WALL | WNOHANG);
		if (pid < 0 && errno == EINTR)
			continue;
		if (pid < 0) {
			rc = -errno;
			break;
		}
		if (pid == 0) {
			/* not blocking: a zombie leader would never stop (its
			 * interrupt stays pending, its exit comes later) */
			if (++tries % 128 == 0 && is_zombie(t)) {
				rc = -EAGAIN;
				break;
			}
			if (tries < 128)
				sched_yield(); /* it may need our CPU to stop */
			else
				usleep(100);
			continue;
		}
		_stp_pt_on_wait(p->s, pid, st);
		/* an int3 hit the interrupt overtook: let it be reported first
		 * (queued), as _stp_pt_stop_all does */
		if (t->state == PT_STOPPED && !t->has_status && !again && sigtrap_pending(t) &&
		    ptrace(PTRACE_CONT, t->tid, 0, 0) == 0) {
			t->state = PT_RUNNING;
			t->regs_valid = 0;
			t->interrupt_pending = 1;
			again = 1;
		}
	}
	p->stopping--;
	if (rc < 0 || t->state != PT_STOPPED || t->has_status)
		return rc < 0 ? rc : -EAGAIN;
	/* the stop we asked for: the mechanism's registers made native */
	p->s->stats.stops++;
	t->regs_valid = 0;
	if (t->hooks && t->hooks->stop && !p->s->detaching)
		t->hooks->stop(t, st, t->hooks_data);
	return 1;
}

void _stp_pt_stop_thread_end(struct _stp_pt_thread *t)
{
	_stp_pt_resume_thread(t);
}
