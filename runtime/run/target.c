/* The target process of a run (-c CMD or -x PID). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "lang/stp_internal.h"
#include "target.h"
#include "sigstate.h"
#include "shellcmd.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static pid_t child;	    /* the -c command while not reaped */
static int release_fd = -1; /* write end holding the child before exec */
static int pidfd = -1;	    /* -x */

static void child_exec(const char *cmd, char **words, int hold_fd)
{
	char go;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	_stp_signals_restore_caller();
	if (read(hold_fd, &go, 1) != 1)
		_exit(127); /* the run ended before the command was to start */
	close(hold_fd);
	if (words)
		execvp(words[0], words);
	execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
	_exit(127);
}

static int start_command(const char *cmd)
{
	/* the words run directly where sh -c would do just that */
	char **words = _stp_cmd_words(cmd);
	int p[2];

	if (pipe2(p, O_CLOEXEC) < 0) {
		_stp_msg_error("pipe: %s", strerror(errno));
		_stp_cmd_words_free(words);
		return -1;
	}
	child = fork();
	if (child < 0) {
		_stp_msg_error("couldn't start '%s': %s", cmd, strerror(errno));
		close(p[0]);
		close(p[1]);
		_stp_cmd_words_free(words);
		child = 0;
		return -1;
	}
	if (child == 0) {
		close(p[1]);
		child_exec(cmd, words, p[0]);
	}
	_stp_cmd_words_free(words);
	close(p[0]);
	release_fd = p[1];
	_stp_target = child;
	return 0;
}

static int watch_pid(long pid)
{
	if (pid <= 0 || pid > INT32_MAX) {
		_stp_msg_error("invalid target process ID %ld", pid);
		return -1;
	}
	pidfd = (int)syscall(SYS_pidfd_open, (pid_t)pid, 0);
	if (pidfd < 0) {
		_stp_msg_error("cannot watch target process %ld: %s", pid, strerror(errno));
		return -1;
	}
	_stp_target = (pid_t)pid;
	return 0;
}

int _stp_target_start(const struct _stp_run_options *o)
{
	_stp_target = 0;
	if (o->target_cmd && o->target_pid) {
		_stp_msg_error("You can't specify the '-c' and '-x' options together.");
		return -1;
	}
	if (o->target_cmd)
		return start_command(o->target_cmd);
	if (o->target_pid)
		return watch_pid(o->target_pid);
	return 0;
}

int _stp_target_release(void)
{
	int rc = 0;

	if (release_fd < 0)
		return 0;
	if (_stp_session_state == STP_SESSION_RUNNING && write(release_fd, "g", 1) != 1)
		rc = -1;
	close(release_fd);
	release_fd = -1;
	return rc;
}

int _stp_target_pidfd(void)
{
	return pidfd;
}

void _stp_target_report_exit(int status, int verbose)
{
	if (!verbose)
		return;
	if (WIFSIGNALED(status))
		fprintf(stderr, "Child process exited with signal %d (%s)\n", WTERMSIG(status),
			strsignal(WTERMSIG(status)));
	else
		fprintf(stderr, "Child process exited with status %d\n", WEXITSTATUS(status));
}

int _stp_target_reap(int verbose)
{
	int status;

	if (child <= 0)
		return 0;
	if (waitpid(child, &status, WNOHANG) != child)
		return 0;
	child = 0;
	_stp_target_report_exit(status, verbose);
	return 1;
}

void _stp_target_finish(int verbose)
{
	int status;

	if (release_fd >= 0) {
		close(release_fd); /* a held child sees EOF and exits */
		release_fd = -1;
	}
	if (child > 0) {
		kill(child, SIGKILL);
		while (waitpid(child, &status, 0) < 0 && errno == EINTR)
			;
		(void)verbose;
		child = 0;
	}
	if (pidfd >= 0) {
		close(pidfd);
		pidfd = -1;
	}
	_stp_target = 0;
}
