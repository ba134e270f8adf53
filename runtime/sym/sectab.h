/* A module's allocated sections sorted by address, read once from its
 * main ELF file's section headers, so that "which section holds this
 * address" (and "is it a PLT") needs neither libdwfl's
 * dwfl_module_address_section nor the DWARF that it loads first.
 * Answers are exactly that function's (elfutils 0.188 derelocate.c, read
 * for its rules): a section's end address counts as inside it unless the
 * next section starts there, and an address in no section has none. */
#ifndef STP_SECTAB_H
#define STP_SECTAB_H

#include <elfutils/libdwfl.h>
#include <gelf.h>

struct _stp_sectab;

/* NULL when the module has no ELF or its section headers cannot be
 * read (then no address is in a section), or out of memory. */
struct _stp_sectab *_stp_sectab_build(Dwfl_Module *mod);
void _stp_sectab_free(struct _stp_sectab *t);

/* The section holding ADDR (as dwfl_module_address_section's), or NULL;
 * T may be NULL. */
Elf_Scn *_stp_sectab_section(const struct _stp_sectab *t, GElf_Addr addr);

/* Is ADDR in a PLT section (.plt, .plt.sec, .plt.got, .iplt)? */
int _stp_sectab_in_plt(const struct _stp_sectab *t, GElf_Addr addr);

#endif
