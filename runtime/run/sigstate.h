/* The signal state a program was started with: which signals its caller
 * ignored and which it blocked, saved before the program changes any
 * (stap installs handlers; staprun ignores SIGPIPE and blocks SIGINT...
 * for its signalfd). What stap starts (staprun) and what staprun starts
 * (the -c command) get that state back, as they would have without stap:
 * nohup's ignored SIGHUP, a background job's ignored SIGINT and SIGQUIT
 * and a blocked mask all reach the command, while handlers are reset to
 * the default, as exec does. Used by both stap and staprun. */
#ifndef STP_SIGSTATE_H
#define STP_SIGSTATE_H

#include <signal.h>

/* Save the current state as the caller's (only the first call counts). */
void _stp_signals_save(void);
/* Did the caller ignore sig? 0 when nothing was saved. */
int _stp_signal_caller_ignored(int sig);
/* The caller's mask and ignored set (both empty when nothing was saved). */
void _stp_signals_caller(sigset_t *mask, sigset_t *ignored);
/* Set every signal to SIG_IGN (those in ignored) or SIG_DFL, and the mask.
 * Async-signal-safe: for a fork child about to exec. */
void _stp_signals_apply(const sigset_t *mask, const sigset_t *ignored);
/* Both: the caller's state, in a fork child about to exec. */
void _stp_signals_restore_caller(void);

#endif
