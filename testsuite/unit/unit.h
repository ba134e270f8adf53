/* A tiny harness for the runtime's unit tests: every check prints
 * "PASS: name" or "FAIL: name" (then an indented detail line); testsuite/
 * systemtap.unit/unit.exp turns those lines into DejaGnu results. The
 * exit status is 1 if any check failed. */
#ifndef UNIT_H
#define UNIT_H

#include "lang/stp_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int unit_failures;

static __attribute__((unused)) void unit_result(const char *name, int ok, const char *detail)
{
	if (ok) {
		printf("PASS: %s\n", name);
	} else {
		printf("FAIL: %s\n", name);
		if (detail)
			printf("  %s\n", detail);
		unit_failures++;
	}
}

/* Escape for a one-line report (NULs and newlines visible). */
static const char *unit_show(const char *s, size_t n)
{
	static char buf[2][2048];
	static int which;
	char *out = buf[which ^= 1];
	size_t o = 0;

	for (size_t i = 0; i < n && o + 5 < sizeof buf[0]; i++) {
		unsigned char ch = (unsigned char)s[i];
		if (ch == '\n')
			o += (size_t)sprintf(out + o, "\\n");
		else if (ch < 32 || ch >= 127 || ch == '\\')
			o += (size_t)sprintf(out + o, "\\x%02x", ch);
		else
			out[o++] = (char)ch;
	}
	out[o] = '\0';
	return out;
}

static __attribute__((unused)) void unit_check_mem(const char *name, const char *got, size_t gotlen,
						   const char *want, size_t wantlen)
{
	char detail[4200];
	int ok = gotlen == wantlen && memcmp(got, want, gotlen) == 0;

	if (!ok)
		snprintf(detail, sizeof detail, "got \"%s\", want \"%s\"", unit_show(got, gotlen),
			 unit_show(want, wantlen));
	unit_result(name, ok, ok ? NULL : detail);
}

static __attribute__((unused)) void unit_check_str(const char *name, const char *got,
						   const char *want)
{
	unit_check_mem(name, got ? got : "(null)", strlen(got ? got : "(null)"), want,
		       strlen(want));
}

static __attribute__((unused)) void unit_check_long(const char *name, int64_t got, int64_t want)
{
	char detail[128];

	snprintf(detail, sizeof detail, "got %lld, want %lld", (long long)got, (long long)want);
	unit_result(name, got == want, got == want ? NULL : detail);
}

/* Take what was printed to the output buffer, and empty it unwritten. */
static __attribute__((unused)) size_t unit_take_output(char *dst, size_t size)
{
	size_t n = _stp_outbuf.len < size ? _stp_outbuf.len : size;

	if (n)
		memcpy(dst, _stp_outbuf.buf, n);
	_stp_outbuf.len = 0;
	return n;
}

static __attribute__((unused)) int unit_done(void)
{
	free(_stp_outbuf.buf);
	memset(&_stp_outbuf, 0, sizeof _stp_outbuf);
	return unit_failures ? 1 : 0;
}

#endif
