/* The runtime's debug domains (debug.h). */
#include "debug.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int _stp_dbg_level[STP_DBG_NDOMAINS];

static const char *const domain_names[STP_DBG_NDOMAINS] = {
    [STP_DBG_PTRACE] = "ptrace", [STP_DBG_BKPT] = "bkpt",	    [STP_DBG_DCG] = "dcg",
    [STP_DBG_SYM] = "sym",	 [STP_DBG_TRANSPORT] = "transport",
};

void _stp_dbg_msg(enum _stp_dbg_domain d, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	fprintf(stderr, "%s: %s\n", domain_names[d], buf);
}

static void raise_level(int d, int level)
{
	if (_stp_dbg_level[d] < level)
		_stp_dbg_level[d] = level;
}

/* One "DOMAIN[:LEVEL]" of n bytes at item: its domain (-1: all) and level;
 * 0, or -1 if it is neither. */
static int parse_item(const char *item, size_t n, int *dom, int *level)
{
	const char *colon = memchr(item, ':', n);
	size_t len = colon ? (size_t)(colon - item) : n;

	*level = 1;
	if (colon) {
		if (n - len != 2 || colon[1] < '0' || colon[1] > '9')
			return -1;
		*level = colon[1] - '0';
	}
	*dom = -1;
	if (len == 3 && !memcmp(item, "all", 3))
		return 0;
	for (int d = 0; d < STP_DBG_NDOMAINS; d++)
		if (strlen(domain_names[d]) == len && !memcmp(item, domain_names[d], len)) {
			*dom = d;
			return 0;
		}
	return -1;
}

int _stp_dbg_enable(const char *list)
{
	int want[STP_DBG_NDOMAINS] = {0};

	for (const char *p = list; *p;) {
		size_t n = strcspn(p, ",");
		int dom, level;

		if (n && parse_item(p, n, &dom, &level) < 0)
			return -1;
		for (int d = 0; n && d < STP_DBG_NDOMAINS; d++)
			if ((dom < 0 || d == dom) && want[d] < level)
				want[d] = level;
		p += n + (p[n] == ',');
	}
	for (int d = 0; d < STP_DBG_NDOMAINS; d++)
		raise_level(d, want[d]);
	return 0;
}

int _stp_dbg_setup(int verbose)
{
	const char *v;

	for (int d = 0; verbose >= 3 && d < STP_DBG_NDOMAINS; d++)
		raise_level(d, verbose - 2);
	/* the engine's switch from before domains: any value turns it on */
	if ((v = getenv("STAP_PTRACE_DEBUG"))) {
		int n = atoi(v) > 1 ? atoi(v) : 1;
		raise_level(STP_DBG_PTRACE, n);
		raise_level(STP_DBG_BKPT, n);
	}
	if ((v = getenv("STAP_DEBUG")) && _stp_dbg_enable(v) < 0) {
		fprintf(stderr,
			"ERROR: Invalid STAP_DEBUG '%s': it takes DOMAIN[:LEVEL],... with "
			"domains ptrace, bkpt, dcg, sym, transport, all and levels 0-9\n",
			v);
		return -1;
	}
	return 0;
}
