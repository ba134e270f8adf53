/* Output transport: a handler's print output collects in one buffer and
 * is written as a unit when the handler ends (or when it grows past a
 * bound, so huge output needs no huge memory); nothing is dropped.
 *
 * Output that cannot be written ends the run as an error (a full disk,
 * -o /dev/full): the run's status is 1. A reader gone away (EPIPE) ends it
 * quietly and staprun then dies of SIGPIPE, as a program writing to a
 * closed pipe does, unless its caller ignores SIGPIPE: then it is an
 * error like the others. */
#include "stp_internal.h"
#include "sigstate.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Past this, a handler's output is written early. */
#define STP_OUTBUF_HIGH (1u << 20)

struct _stp_strbuf _stp_outbuf;
static int out_fd = STDOUT_FILENO;
static int out_failed; /* the errno of the write that failed */

/* write(2) until all is out, across EINTR, partial writes and a
 * non-blocking descriptor inherited from the caller (EAGAIN: wait). */
int _stp_write_all(int fd, const char *buf, size_t len)
{
	while (len) {
		ssize_t n = write(fd, buf, len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK) {
				struct pollfd p = {.fd = fd, .events = POLLOUT};
				poll(&p, 1, -1);
				continue;
			}
			return -1;
		}
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

int _stp_transport_open(const char *output_file)
{
	out_failed = 0;
	out_fd = STDOUT_FILENO;
	if (output_file) {
		int fd = open(output_file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
		if (fd < 0) {
			_stp_msg_error("Couldn't open file '%s': %s", output_file, strerror(errno));
			return -1;
		}
		out_fd = fd;
	}
	return 0;
}

static void output_lost(int err)
{
	/* end the run rather than trace on with nowhere to print */
	out_failed = err ? err : EIO;
	if (!_stp_transport_reader_gone()) {
		_stp_msg_error("couldn't write output: %s", strerror(out_failed));
		_stp_error_count++;
	}
	_stp_exit(NULL);
}

int _stp_transport_reader_gone(void)
{
	return out_failed == EPIPE && !_stp_signal_caller_ignored(SIGPIPE);
}

static void flush_out(void)
{
	int rc = 0;

	if (_stp_outbuf.len && !out_failed) {
		_stp_output_writing = 1;
		rc = _stp_write_all(out_fd, _stp_outbuf.buf, _stp_outbuf.len);
		_stp_output_writing = 0;
	}
	if (rc < 0)
		output_lost(errno);
	_stp_outbuf.len = 0;
	if (_stp_outbuf.buf)
		_stp_outbuf.buf[0] = '\0';
	if (_stp_outbuf.oom) {
		_stp_outbuf.oom = 0;
		_stp_msg_error("out of memory: print output lost");
	}
}

void _stp_transport_close(void)
{
	flush_out();
	free(_stp_outbuf.buf);
	memset(&_stp_outbuf, 0, sizeof _stp_outbuf);
	/* a file system may say so only at close (NFS, quotas) */
	if (out_fd != STDOUT_FILENO && close(out_fd) != 0 && !out_failed)
		output_lost(errno);
	out_fd = STDOUT_FILENO;
}

void _stp_print_n(struct _stp_context *c, const char *s, size_t n)
{
	(void)c;
	_stp_strbuf_put(&_stp_outbuf, s, n);
	if (_stp_outbuf.len >= STP_OUTBUF_HIGH)
		flush_out();
}

void _stp_print(struct _stp_context *c, const char *s)
{
	_stp_print_n(c, s, strlen(s));
}

void _stp_print_flush(struct _stp_context *c)
{
	(void)c;
	flush_out();
}
