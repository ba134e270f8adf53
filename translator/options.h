/* The stap command line (as `man stap` documents it) into struct session. */
#ifndef STAP_OPTIONS_H
#define STAP_OPTIONS_H

#include "session.h"

enum options_result {
	OPTIONS_RUN,   /* go on with the passes */
	OPTIONS_EXIT0, /* --help or --version printed */
	OPTIONS_EXIT1, /* a usage error was printed */
};

enum options_result options_parse(struct session *s, int argc, char **argv);

/* getopt codes of the long options without a short form */
enum {
	OPT_SKIP_BADVARS = 256,
	OPT_VP,
	OPT_DEBUG,
	OPT_DISABLE_CACHE,
	OPT_POISON_CACHE,
	OPT_CLEAN_CACHE,
	OPT_RUNTIME,
	OPT_DYNINST,
	OPT_SUPPRESS_HANDLER_ERRORS,
	OPT_SUPPRESS_TIME_LIMITS,
	OPT_NO_GLOBAL_VAR_DISPLAY,
	OPT_PROLOGUE,
	OPT_COMPATIBLE,
	OPT_COLOR,
	OPT_REMOTE,
	OPT_DOWNLOAD_DEBUGINFO,
	OPT_RLIMIT_AS,
	OPT_RLIMIT_CPU,
	OPT_RLIMIT_NPROC,
	OPT_RLIMIT_STACK,
	OPT_RLIMIT_FSIZE,
	OPT_SYMBOLS, /* --ldd: symbols are read from every mapped module */
	OPT_DUMP_FUNCTIONS,
	OPT_DUMP_PROBE_TYPES,
	OPT_DUMP_PROBE_ALIASES,
	OPT_UNSUPPORTED, /* refused, with the reason in refusals[] */
	OPT_UNSUPPORTED_ARG,
};

/* The options of options_compat.c (those of SystemTap that concern only
 * its kernel runtime or had no meaning here before): 0 taken, 1 refused
 * or invalid (a message printed), -1 not an option. */
int options_compat(struct session *s, int c, const char *arg, const char *optname);

/* -c, -x and similar that pass 5 hands to staprun. */
extern int options_disable_cache;

#endif
