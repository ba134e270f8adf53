/* Stop signals while a handler runs. Outside handlers SIGINT, SIGTERM,
 * SIGHUP and SIGQUIT are blocked and read from the run loop's signalfd.
 * While a handler runs they are unblocked, so that one that runs long (a
 * loop under a big MAXACTION, embedded C) cannot keep the run from ending:
 *
 *   - the signal is noted; when the handler returns, the run ends as it
 *     does on that signal (end probes run). A short handler just finishes.
 *   - still running 100 ms later: the floor of its action count is raised
 *     (again every 20 ms), so generated code stops at its next statement
 *     ("MAXACTION exceeded", reported as the interruption instead).
 *   - still running 600 ms after the signal (code that counts no actions,
 *     a blocking call): the handler is abandoned by a siglongjmp back to
 *     _stp_run_probe. The script's state may then be half updated, so no
 *     more script code runs; the targets are still put back as they were.
 *     Never while its output is being written: a reader that is slow is
 *     waited for, as by any program. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "stp_internal.h"

#include <setjmp.h>
#include <signal.h>
#include <string.h>
#include <sys/time.h>

#define FIRST_POKE_MS 100
#define POKE_MS 20
#define ABANDON_POKES 25

sigjmp_buf _stp_interrupt_jmp;
volatile sig_atomic_t _stp_output_writing;

static const int stop_sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
static struct _stp_context *volatile current; /* the handler's, while it runs */
static volatile sig_atomic_t stop_sig;	      /* the first stop signal of the run */
static volatile sig_atomic_t armed, pokes;    /* of the current handler */
static sigset_t stop_set;

static void set_timer(int first_ms, int every_ms)
{
	struct itimerval it;

	memset(&it, 0, sizeof it);
	it.it_value.tv_usec = first_ms * 1000;
	it.it_interval.tv_usec = every_ms * 1000;
	setitimer(ITIMER_REAL, &it, NULL);
}

static void on_stop_signal(int sig)
{
	if (!stop_sig)
		stop_sig = sig;
	if (current && !armed) {
		armed = sig;
		set_timer(FIRST_POKE_MS, POKE_MS);
	}
}

static void on_alarm(int sig)
{
	struct _stp_context *c = current;

	(void)sig;
	if (!c || !armed)
		return;
	c->actionfloor = INT64_MAX;
	if (++pokes >= ABANDON_POKES && !_stp_output_writing) {
		current = NULL;
		set_timer(0, 0);
		siglongjmp(_stp_interrupt_jmp, 1);
	}
}

void _stp_interrupt_init(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof sa);
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESTART;
	sigemptyset(&stop_set);
	stop_sig = 0;
	for (size_t i = 0; i < sizeof stop_sigs / sizeof stop_sigs[0]; i++) {
		sigaddset(&stop_set, stop_sigs[i]);
		sigaddset(&sa.sa_mask, stop_sigs[i]);
	}
	sigaddset(&sa.sa_mask, SIGALRM);
	sa.sa_handler = on_stop_signal;
	for (size_t i = 0; i < sizeof stop_sigs / sizeof stop_sigs[0]; i++)
		sigaction(stop_sigs[i], &sa, NULL);
	sa.sa_handler = on_alarm;
	sigaction(SIGALRM, &sa, NULL);
}

void _stp_interrupt_begin(struct _stp_context *c)
{
	armed = pokes = 0;
	current = c;
	sigprocmask(SIG_UNBLOCK, &stop_set, NULL);
}

int _stp_interrupt_end(void)
{
	current = NULL; /* first: a late alarm does nothing */
	sigprocmask(SIG_BLOCK, &stop_set, NULL);
	if (armed)
		set_timer(0, 0);
	return pokes ? armed : 0;
}

int _stp_interrupt_signal(void)
{
	return stop_sig;
}
