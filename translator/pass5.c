/* Pass 5: run the compiled object with staprun, as SystemTap does: the
 * options that concern the run (-o, -T, -c, -x, -v) are passed on,
 * SIGINT/SIGTERM/SIGHUP sent to stap are forwarded, staprun gets SIGTERM
 * if stap dies, and stap's result is staprun's exit status. */
#include "session.h"
#include "driver.h"
#include "run/sigstate.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

volatile int driver_child_pid;

/* A signal that came from the terminal reached staprun too (same process
 * group); only one sent to stap alone (kill PID) needs forwarding. */
static void forward_signal(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	if (driver_child_pid > 0 && si->si_code != SI_KERNEL)
		kill(driver_child_pid, sig);
}

/* Off: back to the default. */
static void set_forwarding(int on)
{
	static const int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sigemptyset(&sa.sa_mask);
	if (on) {
		sa.sa_sigaction = forward_signal;
		sa.sa_flags = SA_SIGINFO | SA_RESTART;
	} else {
		sa.sa_handler = SIG_DFL;
	}
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaction(sigs[i], &sa, NULL);
}

/* --debug's runtime domains reach staprun in STAP_DEBUG, after those the
 * caller set there (staprun keeps a domain's highest level). */
static void runtime_debug_env(void)
{
	struct strbuf b = {0};
	const char *old = getenv("STAP_DEBUG");

	if (old && *old)
		sb_puts(&b, old);
	for (int d = DBG_PTRACE; d < DBG_NDOMAINS; d++)
		if (msg_debug_mask & (1u << d))
			sb_printf(&b, "%s%s:%d", b.len ? "," : "", debug_domain_name(d),
				  msg_debug_level[d]);
	if (b.len)
		setenv("STAP_DEBUG", sb_str(&b), 1);
	free(sb_take(&b));
}

static char **staprun_argv(struct session *s)
{
	struct vec a = {0};
	vec_push(&a, (void *)s->staprun_path);
	/* as SystemTap: staprun is quiet at -v, verbose from -vv on (pass 5's
	 * level: -v, or the fifth digit of --vp); from -vvvv on, the
	 * runtime's debug messages too (runtime/lang/debug.h) */
	for (int i = 1; i < s->verbose_pass5 && i < 5; i++)
		vec_push(&a, "-v");
	if (s->output_file) {
		vec_push(&a, "-o");
		vec_push(&a, (void *)s->output_file);
	}
	if (s->switch_spec) {
		vec_push(&a, "-S");
		vec_push(&a, (void *)s->switch_spec);
	}
	if (s->bufsize_mb > 0) {
		vec_push(&a, "-s");
		vec_push(&a, xasprintf("%d", s->bufsize_mb));
	}
	if (s->timeout_s > 0) {
		vec_push(&a, "-T");
		vec_push(&a, xasprintf("%d", s->timeout_s));
	}
	if (s->target_cmd) {
		vec_push(&a, "-c");
		vec_push(&a, (void *)s->target_cmd);
	}
	if (s->target_pid > 0) {
		vec_push(&a, "-x");
		vec_push(&a, xasprintf("%ld", s->target_pid));
	}
	/* -G values are compiled into the object (pass 3), not passed here. */
	vec_push(&a, (void *)s->object_file);
	vec_push(&a, NULL);
	return (char **)a.v;
}

int pass5_run(struct session *s)
{
	if (!s->object_file) {
		fputs("ERROR: no compiled object to run\n", stderr);
		return 1;
	}
	char **argv = staprun_argv(s);
	if (s->verbose >= 2) {
		fputs("Running", stderr);
		for (char **p = argv; *p; p++)
			fprintf(stderr, " %s", *p);
		fputc('\n', stderr);
	}
	fflush(stdout);
	fflush(stderr);

	set_forwarding(1);
	pid_t self = getpid();
	pid_t pid = fork();
	if (pid < 0) {
		fprintf(stderr, "ERROR: cannot start %s: %s\n", s->staprun_path, strerror(errno));
		set_forwarding(0);
		return 1;
	}
	if (pid == 0) {
		_stp_signals_restore_caller(); /* staprun and the -c command get it */
		/* stap gone (even by SIGKILL): staprun ends as on SIGTERM, the
		 * targets left as they were found */
		prctl(PR_SET_PDEATHSIG, SIGTERM);
		if (getppid() != self)
			_exit(1);
		if (s->verbose >= 1) /* the dynamic call graph's report (runtime/dcg/dcg.c) */
			setenv("STAP_DCG_REPORT", "1", 1);
		if (msg_debug_mask & (1u << DBG_PTRACE)) /* --debug=ptrace */
			setenv("STAP_PTRACE_DEBUG", "1", 1);
		runtime_debug_env();
		execv(argv[0], argv);
		fprintf(stderr, "ERROR: cannot run %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	driver_child_pid = pid;

	int status, rc;
	while ((rc = waitpid(pid, &status, 0)) < 0 && errno == EINTR)
		;
	driver_child_pid = 0;
	/* the handler stays: with no child it does nothing, so a signal
	 * coming late (a second Ctrl-C) does not end stap with status 130 */
	if (rc < 0) {
		fprintf(stderr, "ERROR: waiting for %s: %s\n", s->staprun_path, strerror(errno));
		return 1;
	}
	if (WIFSIGNALED(status) && WTERMSIG(status) == SIGPIPE) {
		/* its reader (ours too) went away: end the same way, quietly */
		driver_remove_tmpdir(s);
		signal(SIGPIPE, SIG_DFL);
		raise(SIGPIPE);
	}
	if (WIFEXITED(status))
		rc = WEXITSTATUS(status);
	else
		rc = 128 + WTERMSIG(status);
	if (rc != 0)
		fprintf(stderr, "WARNING: %s exited with status: %d\n", s->staprun_path, rc);
	/* killed, it could not detach: its breakpoints stay in the -x
	 * process (a -c command dies with it) */
	if (WIFSIGNALED(status) && s->target_pid > 0)
		fprintf(stderr,
			"WARNING: %s was killed by signal %d (%s) while tracing process %ld, "
			"which may be left with its breakpoints\n",
			s->staprun_path, WTERMSIG(status), strsignal(WTERMSIG(status)),
			s->target_pid);
	free(argv);
	return rc;
}
