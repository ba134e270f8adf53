/* A run without -c or -x (system-wide): noticing the processes that run
 * a program (syswide.c). The process-events connector (root only) tells
 * of each exec as it happens; without it, /proc is scanned every
 * _STP_SW_SCAN_MS for processes that are new or run another file. Those
 * that open a probed library later are told by fanotify (root only), or
 * found by the scan mapping it. The
 * process probes (probes/process_probes.c) decide which to attach. */
#ifndef STP_RUN_SYSWIDE_H
#define STP_RUN_SYSWIDE_H

#include <stdint.h>
#include <sys/types.h>

#define _STP_SW_SCAN_MS 100

/* Why a process is told of: new or running another file than before;
 * it opened one of the files watched (to map it, by dlopen: fanotify);
 * not settled before, looked at again by a scan (it may map one now). */
enum _stp_sw_why { _STP_SW_NEW, _STP_SW_OPENED, _STP_SW_AGAIN };

/* Called for a process that may run a probed program or map a watched
 * file. Returns 1 when pid is settled (attached, or refused), 0 when it
 * should be looked at again should it map one of those files later. */
typedef int (*_stp_sw_fn)(pid_t pid, enum _stp_sw_why why, void *data);

#define _STP_SW_CONNECTOR 1 /* execs told by the process-events connector */
#define _STP_SW_FANOTIFY 2  /* opens of the files told by fanotify */

/* Start watching; fn is called for every process running now (from
 * here) and for each one that execs later, or opens one of the files
 * (shared libraries probed as the process; from _stp_sw_poll). Returns
 * the _STP_SW_ ways used (0: scanning /proc only). */
int _stp_sw_start(_stp_sw_fn fn, void *data, const char *const *files, int nfiles);
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
