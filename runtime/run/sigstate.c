/* The signal state of the caller (sigstate.h). Shared by stap and
 * staprun, so it depends on nothing else of either. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "sigstate.h"

#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

/* The kernel's own calls: glibc refuses its internal signals (32, 33).
 * Those a caller ignored are kept where glibc has not taken them over
 * before main (it does in staprun: they are glibc's, not the program's). */
struct ksigaction {
	void (*handler)(int);
	unsigned long flags;
	void (*restorer)(void);
	unsigned long mask;
};

static int ksigaction(int sig, const struct ksigaction *sa, struct ksigaction *old)
{
	return (int)syscall(SYS_rt_sigaction, sig, sa, old, sizeof(unsigned long));
}

static int saved;
static sigset_t caller_mask, caller_ignored;

void _stp_signals_save(void)
{
	struct ksigaction sa;

	if (saved)
		return;
	sigemptyset(&caller_ignored);
	sigprocmask(SIG_SETMASK, NULL, &caller_mask);
	for (int sig = 1; sig < NSIG; sig++)
		if (ksigaction(sig, NULL, &sa) == 0 && sa.handler == SIG_IGN)
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
	struct ksigaction sa;

	memset(&sa, 0, sizeof sa);
	for (int sig = 1; sig < NSIG; sig++) {
		if (sig == SIGKILL || sig == SIGSTOP)
			continue;
		sa.handler = sigismember(ignored, sig) == 1 ? SIG_IGN : SIG_DFL;
		ksigaction(sig, &sa, NULL);
	}
	syscall(SYS_rt_sigprocmask, SIG_SETMASK, mask, NULL, sizeof(unsigned long));
}

void _stp_signals_restore_caller(void)
{
	sigset_t mask, ignored;

	_stp_signals_caller(&mask, &ignored);
	_stp_signals_apply(&mask, &ignored);
}
