/* The dynamic call graph (issue 4): per-thread branch trapping switched by
 * $dynamic_call_graph, turned into call/return records and printed as a
 * thread_indent-style tree.
 *
 * Mechanisms (STP_DCG_MECHANISM at -D, or STAP_DCG_MECHANISM in the
 * environment, which wins):
 *   auto        the default: blockstep where a self-test finds that the
 *               processor honours BTF, else breakpoint.
 *   breakpoint  int3 sites (mech_breakpoint.c) on the calls, returns and jumps
 *               out of the code the traced thread runs, placed when the
 *               code is first reached: a traced call costs two stops (its
 *               call and its return; a call into a leaf or excluded
 *               function: its call and its return address). Threads that
 *               are not traced pay a stop when they run a site (shared
 *               code), none in other code. Signal handlers are caught by
 *               stepping into them when the engine delivers the signal.
 *               When no thread of the process is traced, no int3 is left;
 *               the sites and the code walked are kept, and armed again
 *               (without reading the code) when tracing is switched on.
 *   blockstep   PTRACE_SINGLEBLOCK. Where the processor ignores BTF it
 *               traps after every instruction: still correct, only slower.
 *   singlestep  PTRACE_SINGLESTEP (a reference for tests).
 *   translate   the in-process engine (mech_translate.c over runtime/xlate/):
 *               the thread runs translated code that records calls and
 *               returns in a ring read by staprun; no stop per call. Not
 *               in auto yet.
 * Each is a table of mech.h behind the core; output formats are sinks
 * (sink.h, STAP_DCG_FORMAT).
 * At each step trap the instruction(s) run since the previous trap are decoded
 * (original bytes under breakpoints, decodings cached per address) and
 * classified: call, return, jump that is a call (a tail call, by
 * callgrind's rules: to a function's first instruction, its own too but
 * not its .cold part's; to a PLT stub; into another module, with or
 * without a symbol there), jump that leaves frames (longjmp, an
 * exception's landing pad: a return), the rest (jump tables, .cold
 * parts, code with no symbol in the same module). A shadow stack of frames
 * (stack pointer at the call, function) pairs returns with calls and
 * closes frames skipped by longjmp or exceptions. A signal handler entered
 * by the kernel (the restorer's address at rsp) opens a frame like a call
 * from the interrupted function, closed by the handler's return. A call to a PLT stub
 * (in .plt, .plt.sec or .plt.got: the same code in .text is a function)
 * becomes a call to the function the stub jumps to. A rep-prefixed string
 * instruction stopping after each iteration under the step mechanisms is
 * no branch. Names are printed whole, however long. Records are small
 * binary structs per thread, formatted (symbolized, cached per address)
 * only when printed: before any probe handler runs, when tracing is
 * switched off, when the thread exits and at the end of the run. */
#ifndef STP_DCG_H
#define STP_DCG_H

#include <stdint.h>
#include <sys/types.h>

struct _stp_context;

/* The script side (declared in stap_runtime.h too). mech: the -D value
 * as a string ("" or "auto": the default). */
void _stp_dcg_set(struct _stp_context *c, int64_t on, const char *mech);
int64_t _stp_dcg_get(struct _stp_context *c);
/* Limits for every traced thread: what 0: calls deeper than n are not
 * shown (n < 0: no limit); 1: calls into functions or modules matching
 * the fnmatch pattern are shown, not what they call; 2: neither. */
void _stp_dcg_limit(int what, int64_t n, const char *pattern);

/* Hooks of the run: print pending records (before a handler runs); a
 * thread is gone; end of run (prints, reports at verbose >= 1). */
void _stp_dcg_flush_all(void);
/* From the event loop: reads running translated threads' rings now and
 * then (poll.c); returns when to be called again (INT64_MAX: not needed). */
int64_t _stp_dcg_poll(int64_t now);
/* The period of those reads in ns (STAP_DCG_POLL_US), 0: none. */
int64_t _stp_dcg_poll_period(void);
void _stp_dcg_thread_gone(pid_t tid);
/* A new thread, stopped before it runs (it may have been created by a
 * thread running elsewhere than in its own code: made native). */
struct _stp_pt_thread;
void _stp_dcg_thread_start(struct _stp_pt_thread *t);
void _stp_dcg_finish(int verbose);
/* A process exec'd or is gone; its shared libraries changed (dlopen,
 * dlclose): cached code and symbols of what was unmapped go. */
void _stp_dcg_exec(pid_t pid);
void _stp_dcg_proc_gone(pid_t pid);
void _stp_dcg_libs_changed(struct _stp_pt_thread *t);

#endif
