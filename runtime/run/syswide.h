/* A run without -c or -x (system-wide): noticing the processes that run
 * a program (syswide.c). The process-events connector (root only) tells
 * of each exec as it happens; without it, /proc is scanned every
 * _STP_SW_SCAN_MS for processes that are new or run another file. The
 * process probes (probes/process_probes.c) decide which to attach. */
#ifndef STP_RUN_SYSWIDE_H
#define STP_RUN_SYSWIDE_H

#include <stdint.h>
#include <sys/types.h>

#define _STP_SW_SCAN_MS 100

/* Called for a process that may have started running a program. */
typedef void (*_stp_sw_fn)(pid_t pid, void *data);

/* Start watching; fn is called for every process running now (from
 * here) and for each one that execs later (from _stp_sw_poll). Returns
 * 1 with the connector, 0 scanning /proc. */
int _stp_sw_start(_stp_sw_fn fn, void *data);
/* The fd the run loop polls (-1: none), the monotonic time of the next
 * scan (INT64_MAX: none), and the work when either is due. */
int _stp_sw_fd(void);
int64_t _stp_sw_due(void);
void _stp_sw_poll(int64_t now);
/* Stop watching (idempotent). */
void _stp_sw_stop(void);
/* Is the watcher on (a system-wide run)? */
int _stp_sw_active(void);

#endif
