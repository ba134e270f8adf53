/* Where @cast(ADDR, "TYPE", "MODULE") finds TYPE (cast_module.c). */
#ifndef STAP_CAST_MODULE_H
#define STAP_CAST_MODULE_H

#include <stddef.h>

#include <elfutils/libdw.h>

#include "dwarf_query.h"

/* The first module of the ':'-separated list SPEC that defines TYPE, with
 * its DIE in OUT; probe_mod (may be NULL) is the probed module, used
 * when the list names its file. NULL with MSG set
 * ("type definition 'T' not found in 'SPEC'") when none does. */
struct dwq_mod *cast_module_find(const char *spec, const char *type, struct dwq_mod *probe_mod,
				 Dwarf_Die *out, char *msg, size_t len);

/* The files the header modules compiled so far were built from (paths,
 * as strings), for the compiled-script cache key. */
const struct vec *cast_module_files(void);

#endif
