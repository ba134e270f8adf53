/* Starting to trace: launching a program, attaching to a process. */
#include "ptrace_internal.h"
#include "run/sigstate.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>

#define PT_OPTIONS                                                                             \
	(PTRACE_O_TRACECLONE | PTRACE_O_TRACEFORK | PTRACE_O_TRACEVFORK | PTRACE_O_TRACEEXEC | \
	 PTRACE_O_TRACESYSGOOD)

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
	p = _stp_pt_proc_new(s, pid);
	errno = ENOMEM;
	if (!p || !(t = _stp_pt_thread_new(p, pid)) || !(p->mm = _stp_pt_mm_new(pid))) {
		err = errno; /* EMFILE from /proc/PID/mem, say */
		if (p)
			_stp_pt_proc_free(p);
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
			_stp_pt_thread_gone(t, st);
			return -err;
		}
		if ((st >> 16) == PTRACE_EVENT_EXEC) {
			t->state = PT_STOPPED;
			_stp_pt_process_stop(t, st);
			break;
		}
		s->stats.stops++;
		ptrace(PTRACE_CONT, pid, 0,
		       (long)((st >> 16) == 0 && WSTOPSIG(st) != SIGSTOP ? WSTOPSIG(st) : 0));
	}
	close(errpipe[0]);
	_stp_dbg(STP_DBG_PTRACE, 1, "launched %s as %d", argv[0], (int)pid);
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
		    !_stp_pt_pid_shares_mm(p->pid, c))
			continue;
		if (!(cp = _stp_pt_proc_new(s, c)))
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
				    !_stp_pt_thread_new(cp, tid))
					break;
			}
			closedir(td);
		}
		_stp_dbg(STP_DBG_PTRACE, 1, "%d: process %d shares its memory: traced", (int)p->pid,
			 (int)c);
		if (!cp->nthreads)
			_stp_pt_proc_free(cp);
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
	p = _stp_pt_proc_new(s, pid);
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
			if (!(t = _stp_pt_thread_new(p, tid))) {
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
	_stp_dbg(STP_DBG_PTRACE, 1, "attached to %d (%d threads)", (int)pid, p->nthreads);
	if (out)
		*out = p;
	return 0;
fail:
	_stp_pt_detach(p);
	return rc;
}
