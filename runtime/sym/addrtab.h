/* A module's symbol table sorted by address, so that the symbol of an
 * address is found by binary search rather than by libdwfl's linear walk
 * (dwfl_module_addrinfo). Answers are exactly dwfl_module_addrinfo's: the
 * table answers itself except at a global sizeless label's address with
 * no sized global symbol over it (then it asks libdwfl). Names point into the
 * module's string tables: the table lives no longer than its module. */
#ifndef STP_ADDRTAB_H
#define STP_ADDRTAB_H

#include <elfutils/libdwfl.h>
#include <gelf.h>
#include <stddef.h>

struct _stp_addrtab;

/* NULL when the module has no symbols or out of memory (lookups then go
 * to libdwfl). */
struct _stp_addrtab *_stp_addrtab_build(Dwfl_Module *mod);
void _stp_addrtab_free(struct _stp_addrtab *t);

/* As dwfl_module_addrinfo (mod, addr, off, sym, NULL, NULL, NULL); T may
 * be NULL. */
const char *_stp_addrtab_addrinfo(struct _stp_addrtab *t, Dwfl_Module *mod, GElf_Addr addr,
				  GElf_Off *off, GElf_Sym *sym);

/* How many lookups went to libdwfl (for the tests). */
extern unsigned long _stp_addrtab_dwfl_asked;

/* The first (in symbol-table order) defined STT_FUNC symbol named NAME:
 * 1 and its address and symbol, else 0 (or when T is NULL). */
int _stp_addrtab_find_func(struct _stp_addrtab *t, Dwfl_Module *mod, const char *name,
			   GElf_Addr *addr, GElf_Sym *sym);

#endif
