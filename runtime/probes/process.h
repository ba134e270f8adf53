/* The probes part's public side: process probes under the ptrace engine,
 * shared by run.c (the loop), process_probes.c and its kinds (placing
 * probes, engine callbacks; probes_internal.h) and the timer probes
 * (timer.c); what their handlers see is target/backend.h's. */
#ifndef STP_PROCESS_H
#define STP_PROCESS_H

#include "stap_runtime.h"
#include "ptrace/ptrace_engine.h"
#include "target/backend.h"

#include <signal.h>
#include <sys/user.h>

/* Does the module have process probes (then the run goes through the
 * engine instead of target.c)? */
int _stp_proc_wanted(const struct _stp_module *m);
/* -c: launch under the engine, probes placed before the first instruction;
 * -x: attach and place probes; neither: system-wide, every process that
 * runs a probed file (those running now attached here). Threads stay stopped until
 * _stp_proc_release(). -1 after printing an error. */
int _stp_proc_start(const struct _stp_module *m, const struct _stp_run_options *o);
/* After the begin probes: let the target run. -1 on failure. */
int _stp_proc_release(void);
/* After SIGCHLD: handle engine events; 1 when the run should end (the
 * target has exited). */
int _stp_proc_dispatch(void);
/* End of run, outside handlers: detach everything (an -x process keeps
 * running as found), kill and reap a -c command still running. */
void _stp_proc_finish(int verbose);

/* timer.c: the timer probes of m, due from now on (-1: out of memory);
 * run the due ones while the session runs, returning when the next is due
 * (INT64_MAX: none); stop them. */
int _stp_timers_start(const struct _stp_module *m, int64_t now);
int64_t _stp_timers_run(int64_t now);
void _stp_timers_stop(void);

/* input.c: the fd the run loop polls for the input probes of m (-1:
 * none, or stdin is at its end); after poll says it is readable, read
 * what is there and run every input probe once per byte. */
int _stp_input_fd(const struct _stp_module *m);
void _stp_input_run(const struct _stp_module *m);

/* The module being run (process_probes.c). */
const struct _stp_module *_stp_proc_module(void);

/* run.c: run one probe's handler with a target context (NULL: none). */
void _stp_run_probe(const struct _stp_probe *p, struct _stp_tctx *tc);

/* Hear of pid's dlopen/dlclose (the dynamic call graph's code sites, the
 * symbol cache). */
struct _stp_pt_proc;
void _stp_proc_watch_libraries(struct _stp_pt_proc *proc);

/* A file's identity (fileid.c): of the file at a path (/proc/PID/exe and
 * /proc/PID/map_files/ name the image a process runs), or of the file a
 * process maps under a name (its path in /proc/PID/maps, " (deleted)" or
 * not). ok 0: unknown. */
struct _stp_fileid {
	unsigned long long dev, ino;
	int ok;
};
void _stp_fileid_of(const char *path, struct _stp_fileid *id);
void _stp_fileid_mapped(pid_t pid, const char *name, struct _stp_fileid *id);
/* Both known and the same file. */
int _stp_fileid_same(const struct _stp_fileid *a, const struct _stp_fileid *b);

#endif
