/* Helpers of the stap driver (main.c, session.c, pass5.c). */
#ifndef STAP_DRIVER_H
#define STAP_DRIVER_H

#include "session.h"

/* Fill in where the tapset, runtime and staprun are, and the cache dir. */
void driver_locate(struct session *s);
/* Create s->tmpdir (mkdtemp under $TMPDIR or /tmp). */
int driver_make_tmpdir(struct session *s);
/* Remove s->tmpdir, or with -k say it is kept. */
void driver_remove_tmpdir(struct session *s);
/* --dump-functions, --dump-probe-types, --dump-probe-aliases (dump.c). */
int driver_dump(struct session *s);
/* Remove s->tmpdir unless -k, silently, with async-signal-safe calls only
 * (for a signal handler; s->tmpdir stays set). */
void driver_remove_tmpdir_now(struct session *s);
/* The pid of a running compiler (pass 4) or staprun (pass 5), 0 when
 * none; signals go to it. */
extern volatile int driver_child_pid;

#endif
