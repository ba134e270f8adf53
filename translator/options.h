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

/* -c, -x and similar that pass 5 hands to staprun. */
extern int options_disable_cache;

#endif
