/* The runtime's debug domains (debug.h). */
#include "debug.h"

#include <stdarg.h>
#include <stdio.h>

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
	fprintf(stderr, "staprun[%s]: %s\n", domain_names[d], buf);
}
