/* Output transport: a handler's print output collects in one buffer and
 * is written as a unit when the handler ends (or when it grows past a
 * bound, so huge output needs no huge memory); nothing is dropped.
 *
 * Output that cannot be written ends the run as an error (a full disk,
 * -o /dev/full): the run's status is 1. A reader gone away (EPIPE) ends it
 * quietly and staprun then dies of SIGPIPE, as a program writing to a
 * closed pipe does, unless its caller ignores SIGPIPE: then it is an
 * error like the others. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "stp_internal.h"
#include "debug.h"
#include "run/sigstate.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Past this, a handler's output is written early (staprun -s MB). */
static size_t outbuf_high = 1u << 20;

struct _stp_strbuf _stp_outbuf;
static int out_fd = STDOUT_FILENO;
static int out_failed; /* the errno of the write that failed */

/* -o FILE with -S SIZE[,N] and switch_file(), as SystemTap's staprun: with
 * a size the files are FILE.0, FILE.1, ...; without, FILE then FILE.1
 * after a switch_file(). A file is left when it would hold more than SIZE
 * bytes, before the write that would make it bigger (as `man stap` says;
 * one handler's output is never split); with N, FILE.(n-N) goes when
 * FILE.n starts. A switch asked for takes effect at the next write. */
static struct {
	char *name;	    /* FILE after strftime(3), NULL: stdout */
	int64_t size_max;   /* bytes, 0: none */
	int64_t nmax;	    /* files kept, 0: all */
	int64_t fnum;	    /* number of the file being written */
	int64_t written;    /* bytes in it */
	int switch_after;   /* switch_file() in the running handler */
	int switch_pending; /* switch before the next write */
} outf;

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

void _stp_transport_setup(int64_t size_mb, int64_t nfiles, int64_t bufsize_mb)
{
	outf.size_max = size_mb > 0 ? size_mb << 20 : 0;
	outf.nmax = nfiles > 0 ? nfiles : 0;
	if (bufsize_mb > 0)
		outbuf_high = (size_t)bufsize_mb << 20;
}

static char *numbered_name(int64_t n)
{
	char *p = NULL;

	if (asprintf(&p, "%s.%lld", outf.name, (long long)n) < 0)
		return NULL;
	return p;
}

/* Open output file number n: FILE, or FILE.n once numbered. */
static int open_numbered(int64_t n, int numbered)
{
	char *path = numbered ? numbered_name(n) : strdup(outf.name);
	int fd = path ? open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666) : -1;

	if (fd < 0)
		_stp_msg_error("Couldn't open file '%s': %s", path ? path : outf.name,
			       strerror(path ? errno : ENOMEM));
	else
		_stp_dbg(STP_DBG_TRANSPORT, 1, "output to %s", path);
	free(path);
	if (fd < 0)
		return -1;
	out_fd = fd;
	outf.fnum = n;
	outf.written = 0;
	return 0;
}

static void switch_output(void)
{
	int64_t next = outf.fnum + 1;

	outf.switch_pending = 0;
	close(out_fd);
	out_fd = -1;
	if (outf.nmax && next >= outf.nmax) {
		char *old = numbered_name(next - outf.nmax);
		if (old && unlink(old) == 0)
			_stp_dbg(STP_DBG_TRANSPORT, 1, "removed %s (-S keeps %lld files)", old,
				 (long long)outf.nmax);
		free(old);
	}
	if (open_numbered(next, 1) < 0) {
		out_failed = EIO;
		_stp_error_count++;
		_stp_exit(NULL);
	}
}

/* FILE may hold strftime(3) conversions, of the local time at start. */
static char *expand_name(const char *file)
{
	char buf[4096];
	time_t now = time(NULL);
	struct tm tm;

	if (!strchr(file, '%'))
		return strdup(file);
	if (!localtime_r(&now, &tm) || strftime(buf, sizeof buf, file, &tm) == 0)
		return NULL;
	return strdup(buf);
}

int _stp_transport_open(const char *output_file)
{
	out_failed = 0;
	out_fd = STDOUT_FILENO;
	free(outf.name);
	outf.name = NULL;
	outf.switch_after = outf.switch_pending = 0;
	if (!output_file) {
		if (outf.size_max || outf.nmax) {
			_stp_msg_error("You have to specify output FILE with '-S' option.");
			return -1;
		}
		_stp_dbg(STP_DBG_TRANSPORT, 1, "output to stdout");
		return 0;
	}
	outf.name = expand_name(output_file);
	if (!outf.name) {
		_stp_msg_error("Filename format is invalid or too long.");
		return -1;
	}
	return open_numbered(0, outf.size_max > 0);
}

void _stp_switch_file(struct _stp_context *c)
{
	(void)c;
	if (outf.name)
		outf.switch_after = 1;
}

static void output_lost(int err)
{
	/* end the run rather than trace on with nowhere to print */
	out_failed = err ? err : EIO;
	_stp_dbg(STP_DBG_TRANSPORT, 1, "output lost: %s", strerror(out_failed));
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

/* One unit of output: the file switches before it (-S, switch_file()),
 * never in its middle. */
static void write_unit(const char *p, size_t n)
{
	int rc = 0;

	if (!n || out_failed)
		return;
	if (outf.name &&
	    (outf.switch_pending ||
	     (outf.size_max && outf.written && outf.written + (int64_t)n > outf.size_max)))
		switch_output();
	if (out_failed)
		return;
	_stp_dbg(STP_DBG_TRANSPORT, 2, "writing %zu bytes", n);
	outf.written += (int64_t)n;
	_stp_output_writing = 1;
	rc = _stp_write_all(out_fd, p, n);
	_stp_output_writing = 0;
	if (rc < 0)
		output_lost(errno);
}

static void flush_out(void)
{
	write_unit(_stp_outbuf.buf, _stp_outbuf.len);
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
	_stp_dbg(STP_DBG_TRANSPORT, 1, "output closed");
	out_fd = STDOUT_FILENO;
	free(outf.name);
	outf.name = NULL;
}

void _stp_print_n(struct _stp_context *c, const char *s, size_t n)
{
	(void)c;
	_stp_strbuf_put(&_stp_outbuf, s, n);
	if (_stp_outbuf.len >= outbuf_high)
		flush_out();
}

void _stp_print_unit(const char *s, size_t n)
{
	if (_stp_outbuf.len) /* behind what a handler printed so far */
		_stp_print_n(NULL, s, n);
	else
		write_unit(s, n);
}

void _stp_print(struct _stp_context *c, const char *s)
{
	_stp_print_n(c, s, strlen(s));
}

/* The end of a handler: its output, then the commands its system()
 * calls asked for, so that they start after it as SystemTap's do. */
void _stp_print_flush(struct _stp_context *c)
{
	(void)c;
	flush_out();
	if (outf.switch_after) {
		outf.switch_after = 0;
		outf.switch_pending = 1;
	}
	_stp_system_run_pending();
}
