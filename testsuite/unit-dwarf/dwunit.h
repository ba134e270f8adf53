/* A tiny harness for the DWARF/ELF unit tests: each check prints
 * "PASS: name" or "FAIL: name: detail"; systemtap.dwarf/unit-dwarf.exp
 * turns those lines into DejaGnu results. Expected values come from
 * independent tools (nm, objdump, readelf, ldd) run through dw_cmd. */
#ifndef DWUNIT_H
#define DWUNIT_H

#define _GNU_SOURCE
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int dw_failures;

static __attribute__((unused, format(printf, 3, 4))) void dw_check(const char *name, int ok,
								  const char *fmt, ...)
{
	if (ok) {
		printf("PASS: %s\n", name);
		return;
	}
	printf("FAIL: %s", name);
	if (fmt) {
		va_list ap;

		printf(": ");
		va_start(ap, fmt);
		vprintf(fmt, ap);
		va_end(ap);
	}
	printf("\n");
	dw_failures++;
}

static __attribute__((unused)) void dw_check_str(const char *name, const char *got,
						 const char *want)
{
	int ok = got && want && !strcmp(got, want);

	dw_check(name, ok, "got \"%s\", want \"%s\"", got ? got : "(null)", want ? want : "(null)");
}

static __attribute__((unused)) void dw_check_u64(const char *name, uint64_t got, uint64_t want)
{
	dw_check(name, got == want, "got %#" PRIx64 ", want %#" PRIx64, got, want);
}

/* The whole stdout of a shell command (malloc'd; "" on failure). */
static __attribute__((unused, format(printf, 1, 2))) char *dw_cmd(const char *fmt, ...)
{
	char cmd[4096];
	va_list ap;
	FILE *f;
	char *out = NULL;
	size_t len = 0;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof cmd, fmt, ap);
	va_end(ap);
	f = popen(cmd, "r");
	if (!f)
		return strdup("");
	{
		FILE *m = open_memstream(&out, &len);
		char buf[4096];
		size_t n;

		while ((n = fread(buf, 1, sizeof buf, f)) > 0)
			fwrite(buf, 1, n, m);
		fclose(m);
	}
	pclose(f);
	return out;
}

/* A hex number printed by a command, or 0. */
static __attribute__((unused, format(printf, 1, 2))) uint64_t dw_cmd_hex(const char *fmt, ...)
{
	char cmd[4096];
	va_list ap;
	char *out;
	uint64_t v;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof cmd, fmt, ap);
	va_end(ap);
	out = dw_cmd("%s", cmd);
	v = strtoull(out, NULL, 16);
	free(out);
	return v;
}

/* The line number of the source line holding the marker "@L NAME". */
static __attribute__((unused)) int dw_marker_line(const char *src, const char *name)
{
	char want[256], line[1024];
	FILE *f = fopen(src, "r");
	int n = 0;

	if (!f)
		return -1;
	snprintf(want, sizeof want, "@L %s ", name);
	while (fgets(line, sizeof line, f)) {
		n++;
		if (strstr(line, want)) {
			fclose(f);
			return n;
		}
	}
	fclose(f);
	return -1;
}

#endif
