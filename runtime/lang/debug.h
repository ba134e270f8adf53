/* Debug output of the runtime by domain (doc/debug-domains.md): each part
 * tests its domain's level before it formats anything, so debugging costs
 * one load and one compare when it is off. Messages go to stderr as
 * "staprun[DOMAIN]: ...". */
#ifndef STP_DEBUG_H
#define STP_DEBUG_H

enum _stp_dbg_domain {
	STP_DBG_PTRACE,	   /* stops, resumes, attach and detach */
	STP_DBG_BKPT,	   /* breakpoints placed, removed, hit */
	STP_DBG_DCG,	   /* the call graph: switch on/off, sites, events */
	STP_DBG_SYM,	   /* the symbol cache: loads, invalidations */
	STP_DBG_TRANSPORT, /* output: buffers flushed, files switched */
	STP_DBG_NDOMAINS
};

extern int _stp_dbg_level[STP_DBG_NDOMAINS];

void _stp_dbg_msg(enum _stp_dbg_domain d, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#define _stp_dbg(dom, lvl, ...)                           \
	do {                                              \
		if (_stp_dbg_level[dom] >= (lvl))         \
			_stp_dbg_msg((dom), __VA_ARGS__); \
	} while (0)

#endif
