/* Debug output of the runtime by domain (doc/debug-domains.md): each part
 * tests its domain's level before it formats anything, so debugging costs
 * one load and one compare when it is off. Messages go to stderr as
 * "DOMAIN: ..." (the ptrace domain's "ptrace: ..." as before domains). */
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

#define _stp_dbg_on(dom, lvl) (_stp_dbg_level[dom] >= (lvl))

#define _stp_dbg(dom, lvl, ...)                           \
	do {                                              \
		if (_stp_dbg_on(dom, lvl))                \
			_stp_dbg_msg((dom), __VA_ARGS__); \
	} while (0)

/* Raise domains' levels from a list "DOMAIN[:LEVEL],..." (LEVEL 0-9,
 * default 1; "all" names every domain); 0, or -1 (nothing changed) when
 * a name or level is not one. */
int _stp_dbg_enable(const char *list);

/* The levels of a run (staprun): from the -v count (3 and more: every
 * domain at count - 2, so stap -vvvv is level 1), STAP_PTRACE_DEBUG
 * (ptrace and bkpt at level 1, or the number it holds) and STAP_DEBUG (a
 * list as _stp_dbg_enable's); the highest wins. 0, or -1 after an error
 * message for a STAP_DEBUG that is not a list of domains. */
int _stp_dbg_setup(int verbose);

#endif
