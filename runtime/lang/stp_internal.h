/* Runtime internals shared between the runtime's own files; generated code
 * never includes this (it sees only stap_runtime.h). */
#ifndef STP_INTERNAL_H
#define STP_INTERNAL_H

#include "stap_runtime.h"
#include <stdarg.h>
#include <sys/types.h>

/* Session states, as SystemTap names them: a probe of a kind runs only in
 * its state (begin: STARTING, timers: RUNNING, end: STOPPING, error: ERROR). */
enum _stp_session_state {
	STP_SESSION_STARTING,
	STP_SESSION_RUNNING,
	STP_SESSION_STOPPING,
	STP_SESSION_ERROR,
	STP_SESSION_STOPPED,
};

extern enum _stp_session_state _stp_session_state;
extern int _stp_error_count;	/* errors reported so far */
extern int _stp_skipped_count;	/* probes skipped so far */
extern int _stp_exit_requested; /* exit()/abort()/signal: leave the loop */
extern pid_t _stp_target;	/* -c child or -x pid, 0 without one */

/* Messages on stderr, formatted the SystemTap way ("ERROR: ...",
 * "WARNING: ..."), each written with one write(2). */
void _stp_msg_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void _stp_msg_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Transport: where print output goes, and its write loop. */
int _stp_transport_open(const char *output_file);
void _stp_transport_close(void);
int _stp_write_all(int fd, const char *buf, size_t len);
/* Did the output end because its reader went away, with the caller's
 * SIGPIPE at its default (so staprun should die of SIGPIPE)? */
int _stp_transport_reader_gone(void);
/* Text of whole lines written as one unit of output (-S switches files
 * between units), straight from the caller's buffer unless a handler's
 * output is pending: then it goes behind that (the call graph's batches). */
void _stp_print_unit(const char *s, size_t n);

/* Stop signals while a handler runs (interrupt.c). init once a run; begin
 * and end around each handler, with sigsetjmp(_stp_interrupt_jmp, 1) just
 * before begin (a handler abandoned comes back there with 1). end returns
 * the signal that cut the handler short, 0 if it ran to its end. */
#include <setjmp.h>
#include <signal.h>
extern sigjmp_buf _stp_interrupt_jmp;
extern volatile sig_atomic_t _stp_output_writing; /* never abandoned then */
void _stp_interrupt_init(void);
void _stp_interrupt_begin(struct _stp_context *c);
int _stp_interrupt_end(void);
/* The first stop signal that came while a handler ran (0: none). */
int _stp_interrupt_signal(void);

/* Regex: clear the last match (a new handler starts) and free the cache. */
void _stp_regex_reset(void);
void _stp_regex_cleanup(void);

/* Formatting into a growable buffer (format.c), used by the transport. */
struct _stp_strbuf {
	char *buf;
	size_t len, cap;
	size_t limit; /* 0 = unbounded; else stop at limit-1 bytes */
	int oom;
};
void _stp_strbuf_put(struct _stp_strbuf *b, const char *s, size_t n);
void _stp_format_buf(struct _stp_context *c, struct _stp_strbuf *b, const char *fmt,
		     const struct _stp_val *args, int nargs);

/* system(): start the commands the handler just run asked for
 * (tapset_compat.c; called when its output is flushed). */
void _stp_system_run_pending(void);

/* The shared output buffer of the current handler. */
extern struct _stp_strbuf _stp_outbuf;

#endif
