/* Helpers shared by dwarf_vars.c, dwarf_access.c and dwarf_pretty.c
 * (not for other modules). */
#ifndef STAP_DWARF_VARS_INT_H
#define STAP_DWARF_VARS_INT_H

#include "dwarf_vars.h"

const char *dwv__die_name(Dwarf_Die *die);
int dwv__die_type(Dwarf_Die *die, Dwarf_Die *type);
/* The location of VAR at PC; FN is the out-of-line function (frame base). */
int dwv__locate(struct dwq_mod *m, Dwarf_Die *fn, uint64_t pc, Dwarf_Die *var, struct dwv_loc *out);
/* "$a, $b" in OUT: the names of SCOPE's own variables nearest to NAME, as
 * SystemTap 4.8 suggests them: that scope only (not the enclosing ones),
 * by its edit score then by name, at most five. Returns how many. */
int dwv__alternatives(Dwarf_Die *scope, const char *name, char *out, size_t len);
void dwv__add_op(struct dwv_access *a, enum dwv_op_kind k, int64_t n);
int dwv__in_memory(const struct dwv_access *a);
int dwv__member_offset(Dwarf_Die *member, int64_t *off, int *bit_size, int *bit_offset,
		       int type_size);
/* The definition, in any CU, of a struct/class/union only declared here. */
int dwv__type_definition(Dwarf_Die *decl, Dwarf_Die *out);

#endif
