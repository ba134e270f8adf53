/* The signal state of the caller (sigstate.h). Shared by stap and
 * staprun, so it depends on nothing else of either. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "sigstate.h"

#include <signal.h>
#include <string.h>

static int saved;
static sigset_t caller_mask, caller_ignored;

void _stp_signals_save(void)
{
	struct sigaction sa;

	if (saved)
		return;
	sigemptyset(&caller_ignored);
	sigprocmask(SIG_SETMASK, NULL, &caller_mask);
	for (int sig = 1; sig < NSIG; sig++)
		if (sigaction(sig, NULL, &sa) == 0 && sa.sa_handler == SIG_IGN &&
		    !(sa.sa_flags & SA_SIGINFO))
			sigaddset(&caller_ignored, sig);
	saved = 1;
}

int _stp_signal_caller_ignored(int sig)
{
	return saved && sigismember(&caller_ignored, sig) == 1;
}

void _stp_signals_caller(sigset_t *mask, sigset_t *ignored)
{
	if (saved) {
		*mask = caller_mask;
		*ignored = caller_ignored;
	} else {
		sigemptyset(mask);
		sigemptyset(ignored);
	}
}

/* Only async-signal-safe calls: it runs in a fork child. */
void _stp_signals_apply(const sigset_t *mask, const sigset_t *ignored)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof sa);
	sigemptyset(&sa.sa_mask);
	for (int sig = 1; sig < NSIG; sig++) {
		if (sig == SIGKILL || sig == SIGSTOP)
			continue;
		sa.sa_handler = sigismember(ignored, sig) == 1 ? SIG_IGN : SIG_DFL;
		sigaction(sig, &sa, NULL); /* fails harmlessly for glibc's own */
	}
	sigprocmask(SIG_SETMASK, mask, NULL);
}

void _stp_signals_restore_caller(void)
{
	sigset_t mask, ignored;

	_stp_signals_caller(&mask, &ignored);
	_stp_signals_apply(&mask, &ignored);
}
