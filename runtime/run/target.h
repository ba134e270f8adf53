/* The run's target process: the -c command (started held, released after
 * the begin probes, as SystemTap does) or the -x pid (watched through a
 * pidfd). Today the run only ends when the target exits; the ptrace
 * engine will attach here. */
#ifndef STP_TARGET_H
#define STP_TARGET_H

#include "stap_runtime.h"
#include <signal.h>

/* Fork the -c command held before exec, or open a pidfd on -x. The child
 * gets the caller's signal state (sigstate.h). Returns -1 after printing
 * an error. */
int _stp_target_start(const struct _stp_run_options *o);
/* Let the -c command exec; -1 if it could not be started. */
int _stp_target_release(void);
/* The pidfd to poll for the -x process's exit, or -1. */
int _stp_target_pidfd(void);
/* After SIGCHLD: reap; returns 1 if the -c command has exited. */
int _stp_target_reap(int verbose);
/* End of run: kill a -c command still running, reap it, close fds. */
void _stp_target_finish(int verbose);
/* At verbose >= 1: how the -c command ended (waitpid's status), on
 * stderr, as SystemTap says it. */
void _stp_target_report_exit(int status, int verbose);

#endif
