/* The run: begin probes, then an event loop (timers of probes/timer.c,
 * signals, the -T deadline, the target's exit), then end or error probes, SystemTap's
 * end-of-run warnings and the exit status.
 *
 * As in SystemTap, a probe runs only in its session state: begin in
 * STARTING, timers in RUNNING, end in STOPPING, error in ERROR. exit()
 * moves to STOPPING (so later begin probes are skipped too), and a
 * run-time error beyond MAXERRORS moves to ERROR, which skips the
 * remaining begin/end probes and runs the error probes instead.
 *
 * The loop waits in ppoll() on a signalfd and, with -x, a pidfd; the
 * ptrace engine will add waitpid events (SIGCHLD arrives on the same
 * signalfd) without changing its shape. A system-wide run (no -c, no -x)
 * also waits on its watcher of new processes (syswide.h), and input
 * probes on stdin (probes/input.c). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "lang/stp_internal.h"
#include "target.h"
#include "probes/process.h"
#include "dcg/dcg.h"
#include "ptrace/ptrace_engine.h"
#include "sigstate.h"
#include "syswide.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <time.h>
#include <unistd.h>

struct run {
	const struct _stp_module *m;
	const struct _stp_run_options *o;
	int sigfd;
	int engine;	  /* process probes: the target runs under ptrace */
	int64_t deadline; /* -T, monotonic ns; 0 = none */
};

/* ---- handlers ---- */

static int abandoned; /* a handler was abandoned: the script's state is unsure */

static const char *signame(int sig)
{
	return sig == SIGINT ? "SIGINT"
	    : sig == SIGTERM ? "SIGTERM"
	    : sig == SIGHUP  ? "SIGHUP"
			     : "SIGQUIT";
}

/* Run p's handler, stopped by a stop signal if it runs long (interrupt.c).
 * Returns 0, or the signal that cut it short (c->last_error is then the
 * generated code's "MAXACTION exceeded"), or -1: abandoned. */
static int run_interruptible(const struct _stp_probe *p, struct _stp_context *c)
{
	if (sigsetjmp(_stp_interrupt_jmp, 1) == 0) {
		_stp_interrupt_begin(c);
		p->handler(c);
		return _stp_interrupt_end();
	}
	_stp_interrupt_end();
	return -1;
}

void _stp_run_probe(const struct _stp_probe *p, struct _stp_tctx *tc)
{
	struct _stp_context c;
	int cut;

	if (abandoned)
		return;
	_stp_dcg_flush_all(); /* the call-graph lines before what the handler prints */
	memset(&c, 0, sizeof c);
	/* As SystemTap: begin/end/error probes get MAXACTION_INTERRUPTIBLE
	 * (ten times MAXACTION); generated code may set its own budget. */
	c.actionremaining = _stp_maxaction;
	if ((p->kind == STP_PROBE_BEGIN || p->kind == STP_PROBE_END ||
	     p->kind == STP_PROBE_ERROR) &&
	    c.actionremaining < INT64_MAX / 10)
		c.actionremaining *= 10;
	c.probe = p;
	c.target = tc;
	_stp_ctx_ubt_forget();
	_stp_regex_reset();
	cut = run_interruptible(p, &c);
	/* the run ends, as on that signal in the loop */
	if (_stp_interrupt_signal() &&
	    (_stp_session_state == STP_SESSION_STARTING ||
	     _stp_session_state == STP_SESSION_RUNNING))
		_stp_exit(NULL);
	if (cut < 0) {
		abandoned = 1;
		_stp_print_flush(&c);
		_stp_msg_error("probe %s did not stop on %s: abandoned, no more probes run",
			       p->pp ? p->pp : "?", signame(_stp_interrupt_signal()));
		_stp_error_count++;
		return;
	}
	_stp_print_flush(&c);
	if (cut) {
		_stp_msg_warn("probe %s interrupted by %s%s%s", p->pp ? p->pp : "?", signame(cut),
			      c.last_stmt ? " near " : "", c.last_stmt ? c.last_stmt : "");
	} else if (c.last_error) {
		if (c.last_stmt)
			_stp_msg_error("%s near %s", c.last_error, c.last_stmt);
		else
			_stp_msg_error("%s", c.last_error);
		_stp_error_count++;
		if (_stp_error_count > _stp_maxerrors) {
			_stp_session_state = STP_SESSION_ERROR;
			_stp_exit_requested = 1;
		}
	}
	if (_stp_skipped_count > _stp_maxskipped && _stp_session_state == STP_SESSION_RUNNING) {
		_stp_session_state = STP_SESSION_ERROR;
		_stp_exit_requested = 1;
		_stp_error_count++;
		_stp_msg_error("Skipped too many probes, check MAXSKIPPED or try again "
			       "with stap -t for more details.");
	}
}

static void run_handler(const struct _stp_probe *p)
{
	_stp_run_probe(p, NULL);
}

static int by_sequence(const void *a, const void *b)
{
	const struct _stp_probe *const *x = a, *const *y = b;

	if ((*x)->sequence != (*y)->sequence)
		return (*x)->sequence < (*y)->sequence ? -1 : 1;
	return *x < *y ? -1 : *x > *y; /* stable: table order */
}

/* Run every probe of a kind, by sequence number, while the session stays
 * in the state that kind needs. */
static void run_kind(struct run *r, enum _stp_probe_kind kind, enum _stp_session_state state)
{
	const struct _stp_module *m = r->m;
	const struct _stp_probe **v = malloc(((size_t)m->nprobes + 1) * sizeof *v);
	int n = 0;

	if (!v)
		return;
	for (int i = 0; i < m->nprobes; i++)
		if (m->probes[i].kind == kind)
			v[n++] = &m->probes[i];
	qsort(v, (size_t)n, sizeof *v, by_sequence);
	for (int i = 0; i < n; i++)
		if (_stp_session_state == state)
			run_handler(v[i]);
	free(v);
}

/* Signals still pending when the run is over (a second Ctrl-C while end
 * probes ran) have nothing left to stop: taken here, they do not kill
 * staprun when the old mask comes back, so a clean run stays clean. */
static void drain_signals(int sigfd)
{
	struct signalfd_siginfo si;

	while (read(sigfd, &si, sizeof si) == (ssize_t)sizeof si)
		;
}

/* ---- the loop ---- */

/* Drains the signalfd; returns 1 when the run should end. */
static int handle_signals(struct run *r)
{
	struct signalfd_siginfo si;
	int stop = 0, n = 0;

	/* bounded, and not past a stop: a thread stopping all the time (the
	 * dynamic call graph's stepping) keeps SIGCHLD pending for ever */
	while (!stop && n++ < 64 && read(r->sigfd, &si, sizeof si) == (ssize_t)sizeof si) {
		if (si.ssi_signo == SIGCHLD)
			stop |= r->engine ? _stp_proc_dispatch() : _stp_target_reap(r->o->verbose);
		else
			stop = 1;
	}
	return stop;
}

static void event_loop(struct run *r)
{
	while (_stp_session_state == STP_SESSION_RUNNING && !_stp_exit_requested) {
		struct pollfd fds[4];
		int nfds = 0, pidfd = _stp_target_pidfd(), swfd = _stp_sw_fd();
		int infd = _stp_input_fd(r->m), pidfd_i = -1, infd_i = -1;
		int64_t now = _stp_gettime_ns(CLOCK_MONOTONIC), wake = INT64_MAX;
		struct timespec ts, *tsp = NULL;

		if (r->deadline && now >= r->deadline)
			break;
		wake = _stp_timers_run(now);
		if (_stp_session_state != STP_SESSION_RUNNING || _stp_exit_requested)
			break;
		int64_t dcg_due = _stp_dcg_poll(_stp_gettime_ns(CLOCK_MONOTONIC));
		if (dcg_due < wake)
			wake = dcg_due;
		if (_stp_sw_due() < wake)
			wake = _stp_sw_due();
		if (r->deadline && r->deadline < wake)
			wake = r->deadline;
		if (wake != INT64_MAX) {
			int64_t d = wake - _stp_gettime_ns(CLOCK_MONOTONIC);
			if (d < 0)
				d = 0;
			ts.tv_sec = d / 1000000000;
			ts.tv_nsec = d % 1000000000;
			tsp = &ts;
		}
		fds[nfds++] = (struct pollfd){.fd = r->sigfd, .events = POLLIN};
		if (pidfd >= 0) {
			pidfd_i = nfds;
			fds[nfds++] = (struct pollfd){.fd = pidfd, .events = POLLIN};
		}
		if (swfd >= 0)
			fds[nfds++] = (struct pollfd){.fd = swfd, .events = POLLIN};
		if (infd >= 0) {
			infd_i = nfds;
			fds[nfds++] = (struct pollfd){.fd = infd, .events = POLLIN};
		}
		if (ppoll(fds, (nfds_t)nfds, tsp, NULL) < 0) {
			if (errno == EINTR)
				continue;
			_stp_msg_error("ppoll: %s", strerror(errno));
			break;
		}
		if ((fds[0].revents & POLLIN) && handle_signals(r))
			break;
		if (pidfd_i >= 0 && (fds[pidfd_i].revents & (POLLIN | POLLHUP)))
			break; /* the -x process exited */
		/* POLLHUP with no data left: read() sees the end */
		if (infd_i >= 0 && fds[infd_i].revents)
			_stp_input_run(r->m);
		if (_stp_sw_active())
			_stp_sw_poll(_stp_gettime_ns(CLOCK_MONOTONIC));
	}
}

/* The run reads them from a signalfd, even those its caller ignores (as
 * SystemTap's staprun handles them): ignored, they would not reach it. */
static int block_signals(sigset_t *old)
{
	static const int stop[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
	sigset_t set;

	for (size_t i = 0; i < sizeof stop / sizeof stop[0]; i++)
		signal(stop[i], SIG_DFL);
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGQUIT);
	sigaddset(&set, SIGCHLD);
	if (sigprocmask(SIG_BLOCK, &set, old) < 0)
		return -1;
	return signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
}

static void apply_limits(const struct _stp_module *m)
{
	if (m->maxstringlen > 1)
		_stp_maxstringlen = m->maxstringlen;
	if (m->maxaction > 0)
		_stp_maxaction = m->maxaction;
	if (m->maxmapentries > 0)
		_stp_maxmapentries = m->maxmapentries;
	if (m->maxnesting > 0)
		_stp_maxnesting = m->maxnesting;
	if (m->maxerrors >= 0)
		_stp_maxerrors = m->maxerrors;
	if (m->maxskipped >= 0)
		_stp_maxskipped = m->maxskipped;
	/* Checked, so an object built before these fields gets the defaults
	 * rather than whatever follows its module info. */
	if (m->hist_width > 0 && m->hist_width <= 100000)
		_stp_hist_width = m->hist_width;
	if (m->hist_elision >= -100000 && m->hist_elision <= 100000)
		_stp_hist_elision = m->hist_elision;
}

static void reset_session(void)
{
	abandoned = 0;
	_stp_session_state = STP_SESSION_STARTING;
	_stp_error_count = 0;
	_stp_skipped_count = 0;
	_stp_exit_requested = 0;
}

/* Globals, begin, the loop, end/error: everything between a ready
 * transport and the final report. */
static void run_session(struct run *r)
{
	struct _stp_context c;

	memset(&c, 0, sizeof c);
	if (r->m->init_globals && (r->m->init_globals(&c) != 0 || c.last_error)) {
		_stp_msg_error("%s", c.last_error ? c.last_error : "couldn't initialize globals");
		_stp_error_count++;
		return;
	}
	run_kind(r, STP_PROBE_BEGIN, STP_SESSION_STARTING);
	if (_stp_session_state == STP_SESSION_STARTING)
		_stp_session_state = STP_SESSION_RUNNING;
	if ((r->engine ? _stp_proc_release() : _stp_target_release()) < 0 &&
	    _stp_session_state == STP_SESSION_RUNNING)
		_stp_session_state = STP_SESSION_ERROR;
	if (_stp_timers_start(r->m, _stp_gettime_ns(CLOCK_MONOTONIC)) == 0)
		event_loop(r);
	if (_stp_session_state == STP_SESSION_RUNNING)
		_stp_session_state = STP_SESSION_STOPPING;
	run_kind(r, STP_PROBE_END, STP_SESSION_STOPPING);
	run_kind(r, STP_PROBE_ERROR, STP_SESSION_ERROR);
	_stp_session_state = STP_SESSION_STOPPED;
	if (r->m->free_globals && !abandoned) /* maps may be half updated */
		r->m->free_globals();
}

/* The ptrace engine's counters, one line, at staprun -v (stap -vv): stap
 * -v prints only the lines SystemTap prints (and the call graph's). */
static void report_engine(const struct _stp_run_options *o)
{
	struct _stp_pt_stats st;

	if (o->verbose < 1)
		return;
	_stp_pt_total_stats(&st);
	fprintf(stderr,
		"ptrace: %llu stops, %llu probe hits, %llu returns, %llu emulated, "
		"%llu stepped out of line, %llu errors\n",
		(unsigned long long)st.stops, (unsigned long long)st.hits,
		(unsigned long long)st.returns, (unsigned long long)st.emulated,
		(unsigned long long)st.stepped, (unsigned long long)st.errors);
	struct _stp_pt_affinity_stats as;
	_stp_pt_get_affinity_stats(&as);
	fprintf(stderr,
		"ptrace: cpu affinity %s (-D STP_CPU_AFFINITY=%d): threads put on staprun's CPU "
		"%llu, given their own CPUs back %llu\n",
		_stp_pt_affinity_name(as.policy), as.policy, (unsigned long long)as.colocated,
		(unsigned long long)as.restored);
}

int _stp_run(const struct _stp_module *m, const struct _stp_run_options *o)
{
	struct _stp_run_options none = {0};
	struct run r = {.m = m, .o = o ? o : &none, .sigfd = -1};
	sigset_t oldmask;
	int setup_failed = 0;

	if (!m || m->abi_version != STP_ABI_VERSION) {
		_stp_msg_error("module ABI version mismatch (%d vs %d)", m ? m->abi_version : -1,
			       STP_ABI_VERSION);
		return 1;
	}
	o = r.o;
	_stp_signals_save(); /* staprun did it first, before changing any */
	reset_session();
	apply_limits(m);
	if (_stp_transport_open(o->output_file) < 0)
		return 1;
	r.sigfd = block_signals(&oldmask);
	if (r.sigfd < 0) {
		_stp_msg_error("signalfd: %s", strerror(errno));
		_stp_transport_close();
		return 1;
	}
	_stp_interrupt_init();
	r.engine = _stp_proc_wanted(m);
	/* stap -vvvv (pass 5 at level 4) runs staprun -vvv */
	if (r.engine && o->verbose >= 3)
		_stp_pt_set_debug(1);
	if ((r.engine ? _stp_proc_start(m, o) : _stp_target_start(o)) < 0) {
		setup_failed = 1; /* said why; no probe ran, so no summary */
	} else {
		if (o->timeout_s > 0)
			r.deadline =
			    _stp_gettime_ns(CLOCK_MONOTONIC) + (int64_t)o->timeout_s * 1000000000;
		run_session(&r);
	}
	if (r.engine)
		_stp_proc_finish(o->verbose);
	else
		_stp_target_finish(o->verbose);
	if (r.engine && !setup_failed)
		report_engine(o);
	_stp_transport_close();
	_stp_regex_cleanup();
	_stp_timers_stop();
	drain_signals(r.sigfd);
	close(r.sigfd);
	sigprocmask(SIG_SETMASK, &oldmask, NULL);
	if (setup_failed)
		return 1;
	if (_stp_error_count || _stp_skipped_count)
		_stp_msg_warn("Number of errors: %d, skipped probes: %d", _stp_error_count,
			      _stp_skipped_count);
	return _stp_error_count ? 1 : 0;
}
