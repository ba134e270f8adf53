/* process("PATH") as SystemTap users write it (proc_paths.c): a shared
 * library as the path (its probes apply to every traced process that maps
 * it), and wildcards in the path (expanded as glob(3) does, each match
 * resolved as if written). */
#ifndef STAP_PROC_PATHS_H
#define STAP_PROC_PATHS_H

#include "session.h"

/* The probes of dp's chain placed at an address of the process's file
 * become probes of that file as a library of any traced process. */
void proc_as_library(struct derived_probe *dp);
/* Does PATH hold glob(3) characters? */
int proc_path_has_glob(const char *path);
/* The regular files PATTERN matches, each once, absolute and with links
 * resolved, sorted (char *, malloc'd), pushed to OUT; glob(3)'s code
 * when it fails (GLOB_NOMATCH: nothing at all matched), else 0. */
int proc_glob(const char *pattern, struct vec *out);
/* Is PATH a file the target maps: the -x process PID (its maps), or
 * the -c program PROG (it and the libraries it needs)? *maps 1: yes (or
 * nothing to compare with). Else the file it maps with PATH's build ID
 * (another copy of it: malloc'd, absolute), or NULL: none. */
char *proc_target_file(const char *path, const char *prog, long pid, int *maps);

#endif
