/* Context, errors, messages and limits: the session-wide state handlers see
 * through their context, and the stderr message layer. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "stp_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

/* Limits, with SystemTap 4.8's x86-64 defaults until a module sets them. */
int64_t _stp_maxstringlen = 512;
int64_t _stp_maxaction = 1000;
int64_t _stp_maxmapentries = 2048;
int64_t _stp_maxnesting = 10;
int64_t _stp_maxerrors = 0;
int64_t _stp_maxskipped = 100;

enum _stp_session_state _stp_session_state = STP_SESSION_STARTING;
int _stp_error_count;
int _stp_skipped_count;
int _stp_exit_requested;
pid_t _stp_target;

/* Messages are cut at MAXSTRINGLEN-1 bytes, as SystemTap's are; the
 * context's own error_buf (kept for compatibility) is only the fallback
 * when this buffer cannot be had. One buffer is enough: handlers never
 * nest, and a message is printed or caught before the next can be made. */
static char *error_text;
static size_t error_size;

int64_t _stp_error(struct _stp_context *c, const char *fmt, ...)
{
	size_t want = _stp_maxstringlen > 1 ? (size_t)_stp_maxstringlen : 2;
	char *buf = c ? c->error_buf : NULL;
	size_t size = sizeof c->error_buf;
	va_list ap;

	if (!c)
		return 0;
	if (want > error_size) {
		char *p = realloc(error_text, want);
		if (p) {
			error_text = p;
			error_size = want;
		}
	}
	if (error_size >= want) {
		buf = error_text;
		size = want;
	}
	va_start(ap, fmt);
	vsnprintf(buf, size, fmt, ap);
	va_end(ap);
	c->last_error = buf;
	return 0;
}

/* One message, one write: "PREFIX" + text + a newline unless it has one. */
static void msg_write(const char *prefix, const char *fmt, va_list ap)
{
	char buf[4096];
	size_t n = strlen(prefix);
	int k;

	memcpy(buf, prefix, n);
	k = vsnprintf(buf + n, sizeof buf - n - 1, fmt, ap);
	if (k < 0)
		k = 0;
	n += (size_t)k < sizeof buf - n - 1 ? (size_t)k : sizeof buf - n - 2;
	if (n == 0 || buf[n - 1] != '\n')
		buf[n++] = '\n';
	_stp_write_all(STDERR_FILENO, buf, n);
}

void _stp_msg_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	msg_write("ERROR: ", fmt, ap);
	va_end(ap);
}

void _stp_msg_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	msg_write("WARNING: ", fmt, ap);
	va_end(ap);
}

void _stp_warn(struct _stp_context *c, const char *msg)
{
	(void)c;
	_stp_msg_warn("%s", msg ? msg : "");
}

/* exit(): like SystemTap, the state goes to STOPPING at once, so no further
 * begin or timer probe fires; the current handler runs on to its end. */
void _stp_exit(struct _stp_context *c)
{
	(void)c;
	if (_stp_session_state != STP_SESSION_STOPPED)
		_stp_session_state = STP_SESSION_STOPPING;
	_stp_exit_requested = 1;
}

/* abort(): as exit(), but the current handler stops now. SystemTap's
 * abort() leaves no error behind (last_stmt cleared, no last_error). */
void _stp_abort(struct _stp_context *c)
{
	_stp_exit(c);
	if (c) {
		c->aborted = 1;
		c->last_stmt = NULL;
	}
}

int64_t _stp_target_pid(void)
{
	return _stp_target;
}

/* Reads go through process_vm_readv so a bad address is an error, never a
 * crash; without a target the tracer reads its own memory. */
int _stp_read_memory(struct _stp_context *c, uint64_t addr, void *buf, size_t len)
{
	struct iovec local = {buf, len};
	struct iovec remote = {(void *)(uintptr_t)addr, len};
	pid_t pid = getpid();
	ssize_t n;

	if (len == 0)
		return 0;
	if (c && c->target) /* a process probe: the target's memory */
		return _stp_ctx_read_target(c, addr, buf, len);
	do
		n = process_vm_readv(pid, &local, 1, &remote, 1, 0);
	while (n < 0 && errno == EINTR);
	if (n == (ssize_t)len)
		return 0;
	_stp_error(c, "read fault [man error::fault] at 0x%llx",
		   (unsigned long long)(addr + (n > 0 ? (uint64_t)n : 0)));
	return -1;
}
