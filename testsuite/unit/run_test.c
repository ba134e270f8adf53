/* The run loop through _stp_run with hand-written "compiled scripts":
 * probe order, exit()/abort(), errors and error probes, timers, -T, -c,
 * -x, signals, -o and large output. stdout goes to an -o file and stderr
 * is captured, so each run's output can be compared exactly. */
#include "unit.h"

#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static char out_path[] = "/tmp/unit-run-out-XXXXXX";
static char err_path[] = "/tmp/unit-run-err-XXXXXX";
static char out[1 << 16], err[1 << 16];
static int64_t counter, target_seen;

static void read_file(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY);
	ssize_t n = fd < 0 ? 0 : read(fd, buf, size - 1);

	buf[n > 0 ? n : 0] = '\0';
	if (fd >= 0)
		close(fd);
}

/* Run m; leaves its stdout in out[], its stderr in err[]. */
static int run(const struct _stp_module *m, struct _stp_run_options o)
{
	int saved = dup(2), efd = open(err_path, O_WRONLY | O_TRUNC);
	int rc;

	counter = 0;
	if (!o.output_file)
		o.output_file = out_path;
	dup2(efd, 2);
	close(efd);
	rc = _stp_run(m, &o);
	dup2(saved, 2);
	close(saved);
	read_file(o.output_file, out, sizeof out);
	read_file(err_path, err, sizeof err);
	return rc;
}

#define MODULE(name, ...)                                               \
	static const struct _stp_probe name##_probes[] = {__VA_ARGS__}; \
	static const struct _stp_module name = {                        \
	    STP_ABI_VERSION,                                            \
	    #name,                                                      \
	    name##_probes,                                              \
	    (int)(sizeof name##_probes / sizeof name##_probes[0]),      \
	    NULL,                                                       \
	    NULL,                                                       \
	    512,                                                        \
	    1000,                                                       \
	    2048,                                                       \
	    10,                                                         \
	    0,                                                          \
	    100,                                                        \
	    0}
#define PROBE(kind, fn, seq)                          \
	{                                             \
		kind, fn, #fn, "x.stp:1:1", seq, 0, 0 \
	}
#define TIMER(fn, ns)                                           \
	{                                                       \
		STP_PROBE_TIMER, fn, #fn, "x.stp:1:1", 0, ns, 0 \
	}

static void say(struct _stp_context *c, const char *s)
{
	_stp_print(c, s);
}
static void b_a(struct _stp_context *c)
{
	say(c, "a ");
}
static void b_b(struct _stp_context *c)
{
	say(c, "b ");
}
static void b_first(struct _stp_context *c)
{
	say(c, "first ");
}
static void b_exit(struct _stp_context *c)
{
	say(c, "exit ");
	_stp_exit(c);
	say(c, "after-exit ");
}
static void e_end(struct _stp_context *c)
{
	say(c, "end\n");
}
static void e_end2(struct _stp_context *c)
{
	say(c, "end2\n");
}
static void e_error(struct _stp_context *c)
{
	say(c, "error-probe\n");
}
static void b_div0(struct _stp_context *c)
{
	say(c, "div ");
	c->last_stmt = "operator '/' at <input>:1:49";
	_stp_div64(c, 1, 0);
}
static void b_quit(struct _stp_context *c)
{
	_stp_exit(c);
}
static void b_abort(struct _stp_context *c)
{
	say(c, "abort ");
	_stp_abort(c);
}
static void t_count(struct _stp_context *c)
{
	char buf[32];
	snprintf(buf, sizeof buf, "t%lld ", (long long)++counter);
	say(c, buf);
	if (counter == 3)
		_stp_exit(c);
}
static void t_err(struct _stp_context *c)
{
	counter++;
	_stp_error(c, "failure %lld", (long long)counter);
}
static void t_sigint(struct _stp_context *c)
{
	say(c, "tick ");
	kill(getpid(), SIGINT);
}
static void t_sigterm(struct _stp_context *c)
{
	say(c, "tick ");
	kill(getpid(), SIGTERM);
}
static void b_target(struct _stp_context *c)
{
	(void)c;
	target_seen = _stp_target_pid();
}
static void b_big(struct _stp_context *c)
{
	static char line[1000];
	memset(line, 'x', sizeof line - 2);
	line[sizeof line - 2] = '\n';
	for (int i = 0; i < 5000; i++)
		say(c, line);
}
static void b_warn(struct _stp_context *c)
{
	_stp_warn(c, "careful");
}

MODULE(m_order, PROBE(STP_PROBE_END, e_end, 0), PROBE(STP_PROBE_BEGIN, b_a, 0),
       PROBE(STP_PROBE_BEGIN, b_b, 0), PROBE(STP_PROBE_BEGIN, b_first, -5),
       PROBE(STP_PROBE_ERROR, e_error, 0), PROBE(STP_PROBE_BEGIN, b_quit, 100));
MODULE(m_exit, PROBE(STP_PROBE_BEGIN, b_exit, 0), PROBE(STP_PROBE_BEGIN, b_a, 1),
       PROBE(STP_PROBE_END, e_end, 0), TIMER(t_count, 1000000));
MODULE(m_err, PROBE(STP_PROBE_BEGIN, b_div0, 0), PROBE(STP_PROBE_BEGIN, b_a, 1),
       PROBE(STP_PROBE_END, e_end, 0), PROBE(STP_PROBE_ERROR, e_error, 0));
MODULE(m_enderr, PROBE(STP_PROBE_BEGIN, b_quit, 0), PROBE(STP_PROBE_END, b_div0, 0),
       PROBE(STP_PROBE_END, e_end2, 1), PROBE(STP_PROBE_ERROR, e_error, 0));
MODULE(m_abort, PROBE(STP_PROBE_BEGIN, b_abort, 0), PROBE(STP_PROBE_BEGIN, b_a, 1),
       PROBE(STP_PROBE_END, e_end, 0));
MODULE(m_timer, TIMER(t_count, 2000000), PROBE(STP_PROBE_END, e_end, 0));
MODULE(m_random,
       {STP_PROBE_TIMER, t_count, "timer.ms(2).randomize(1)", "x.stp:1:1", 0, 2000000, 1000000},
       PROBE(STP_PROBE_END, e_end, 0));
MODULE(m_idle, PROBE(STP_PROBE_END, e_end, 0));
MODULE(m_sigint, TIMER(t_sigint, 1000000), PROBE(STP_PROBE_END, e_end, 0));
MODULE(m_target, PROBE(STP_PROBE_BEGIN, b_target, 0), PROBE(STP_PROBE_END, e_end, 0));
MODULE(m_quit, PROBE(STP_PROBE_BEGIN, b_quit, 0), PROBE(STP_PROBE_END, e_end, 0));
MODULE(m_sigterm, TIMER(t_sigterm, 1000000), PROBE(STP_PROBE_END, e_end, 0));
MODULE(m_big, PROBE(STP_PROBE_BEGIN, b_big, 0), PROBE(STP_PROBE_BEGIN, b_quit, 1));
MODULE(m_warn, PROBE(STP_PROBE_BEGIN, b_warn, 0), PROBE(STP_PROBE_BEGIN, b_quit, 1));
static const struct _stp_probe m_maxerr_probes[] = {TIMER(t_err, 1000000),
						    PROBE(STP_PROBE_END, e_end, 0)};
static const struct _stp_module m_maxerr = {
    STP_ABI_VERSION, "maxerr", m_maxerr_probes, 2, NULL, NULL, 512, 1000, 2048, 10, 2, 100, 0};

static double now_s(void)
{
	return (double)_stp_gettime_ns(CLOCK_MONOTONIC) / 1e9;
}

int main(void)
{
	struct _stp_run_options none = {0};
	int rc;

	close(mkstemp(out_path));
	close(mkstemp(err_path));

	rc = run(&m_order, none);
	unit_check_str("begin by sequence, then table order", out, "first a b end\n");
	unit_check_long("clean run exits 0", rc, 0);
	unit_check_str("clean run is quiet", err, "");

	rc = run(&m_exit, none);
	unit_check_str("exit() finishes the handler, skips later begin and timers", out,
		       "exit after-exit end\n");

	rc = run(&m_err, none);
	unit_check_str("error skips begin and end, runs error probes", out, "div error-probe\n");
	unit_check_str("error message and summary", err,
		       "ERROR: division by 0 near operator '/' at <input>:1:49\n"
		       "WARNING: Number of errors: 1, skipped probes: 0\n");
	unit_check_long("error exits 1", rc, 1);

	rc = run(&m_enderr, none);
	unit_check_str("error in an end probe runs error probes", out, "div error-probe\n");
	unit_check_long("error in an end probe exits 1", rc, 1);

	rc = run(&m_abort, none);
	unit_check_str("abort() skips later begin probes", out, "abort end\n");
	unit_check_str("abort() is no error", err, "");
	unit_check_long("abort() exits 0", rc, 0);

	rc = run(&m_timer, none);
	unit_check_str("timer fires until exit()", out, "t1 t2 t3 end\n");

	rc = run(&m_random, none);
	unit_check_str("randomized timer fires until exit()", out, "t1 t2 t3 end\n");

	rc = run(&m_maxerr, none);
	unit_check_long("MAXERRORS=2 stops at the third error", counter, 3);
	unit_check_str("MAXERRORS messages", err,
		       "ERROR: failure 1\nERROR: failure 2\nERROR: failure 3\n"
		       "WARNING: Number of errors: 3, skipped probes: 0\n");
	unit_check_str("MAXERRORS: no end probes after the limit", out, "");

	{
		struct _stp_run_options o = {.timeout_s = 1};
		double t0 = now_s();
		rc = run(&m_idle, o);
		double dt = now_s() - t0;
		unit_check_str("-T runs end probes", out, "end\n");
		unit_result("-T 1 takes about a second", dt > 0.9 && dt < 3, NULL);
	}

	rc = run(&m_sigint, none);
	unit_check_str("SIGINT ends the run like exit()", out, "tick end\n");
	unit_check_long("SIGINT run exits 0", rc, 0);

	{
		struct _stp_run_options o = {.target_cmd = "sleep 0.2; exit 3"};
		double t0 = now_s();
		target_seen = 0;
		rc = run(&m_target, o);
		double dt = now_s() - t0;
		unit_check_str("-c: end probes run when the command exits", out, "end\n");
		unit_result("-c: target() is set in begin probes", target_seen > 0, NULL);
		unit_result("-c: the run lasts as long as the command", dt > 0.15 && dt < 5, NULL);
		unit_check_long("-c: the command's status is not ours", rc, 0);
	}
	{
		pid_t pid = fork();
		if (pid == 0) {
			usleep(200000);
			_exit(0);
		}
		struct _stp_run_options o = {.target_pid = pid};
		target_seen = 0;
		rc = run(&m_target, o);
		unit_check_str("-x: end probes run when the process exits", out, "end\n");
		unit_check_long("-x: target() is the pid", target_seen, pid);
		waitpid(pid, NULL, 0);
	}
	{
		struct _stp_run_options o = {.target_pid = 999999999};
		rc = run(&m_target, o);
		unit_check_long("-x of no process fails", rc, 1);
	}

	{
		char flag[] = "/tmp/unit-run-flag-XXXXXX", cmd[64];
		close(mkstemp(flag));
		unlink(flag);
		snprintf(cmd, sizeof cmd, "touch %s", flag);
		struct _stp_run_options o = {.target_cmd = cmd};
		rc = run(&m_quit, o);
		unit_result("-c: the command never starts when begin exits",
			    access(flag, F_OK) != 0, NULL);
		unlink(flag);
	}
	{
		struct _stp_run_options o = {.target_cmd = "sleep 30"};
		double t0 = now_s();
		rc = run(&m_sigterm, o);
		double dt = now_s() - t0;
		unit_check_str("SIGTERM ends a -c run", out, "tick end\n");
		unit_result("-c: a running command is killed at the end", dt < 5, NULL);
		unit_result("-c: the command is reaped", waitpid(-1, NULL, WNOHANG) < 0, NULL);
	}

	rc = run(&m_big, none);
	{
		struct stat sb;
		stat(out_path, &sb);
		unit_check_long("5 MB of output, nothing lost", sb.st_size, 5000L * 999);
	}

	run(&m_warn, none);
	unit_check_str("warn() message", err, "WARNING: careful\n");

	{
		struct _stp_run_options o = {.output_file = "/nonexistent/dir/out"};
		rc = run(&m_order, o);
		unit_check_long("-o to a bad path fails", rc, 1);
		unit_result("-o to a bad path says why",
			    strstr(err, "ERROR: Couldn't open file '/nonexistent/dir/out'") != NULL,
			    err);
	}

	unlink(out_path);
	unlink(err_path);
	_stp_regex_cleanup();
	return unit_done();
}
