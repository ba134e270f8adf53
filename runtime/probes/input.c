/* procfs("__stdin").write probes (SystemTap's input.char and input.line):
 * the run loop polls stdin while the session runs; each byte read runs
 * every such probe, in table order, with the byte as $value. stdin is
 * read as it is found (no O_NONBLOCK: that flag would be shared with
 * every process holding the same open file); one read() after POLLIN
 * does not block. At end of file (or an error) the probes stop firing and
 * the session goes on. */
#include "lang/stp_internal.h"
#include "process.h"

#include <errno.h>
#include <unistd.h>

static char value[2];
static int at_end;

const char *_stp_input_value(void)
{
	return value;
}

int _stp_input_fd(const struct _stp_module *m)
{
	if (at_end)
		return -1;
	for (int i = 0; i < m->nprobes; i++)
		if (m->probes[i].kind == STP_PROBE_STDIN)
			return STDIN_FILENO;
	return -1;
}

void _stp_input_run(const struct _stp_module *m)
{
	char buf[4096];
	ssize_t n = read(STDIN_FILENO, buf, sizeof buf);

	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return;
	if (n <= 0) {
		at_end = 1;
		return;
	}
	for (ssize_t k = 0; k < n; k++) {
		value[0] = buf[k];
		for (int i = 0; i < m->nprobes; i++) {
			if (_stp_session_state != STP_SESSION_RUNNING || _stp_exit_requested)
				goto out;
			if (m->probes[i].kind == STP_PROBE_STDIN)
				_stp_run_probe(&m->probes[i], NULL);
		}
	}
out:
	value[0] = '\0';
}
