/* The GNU build ID of an ELF file: staprun matches dlopen()ed copies of a
 * probed library by it, and the translator finds a path's copies by it. */
#ifndef STP_RUN_BUILDID_H
#define STP_RUN_BUILDID_H

#include <stddef.h>

/* The build ID of the ELF file at PATH into ID (at most MAX bytes); its
 * length, 0 if it has none, it is longer than MAX or PATH is no ELF file. */
size_t _stp_build_id(const char *path, unsigned char *id, size_t max);

#endif
