/* The call graph's names come from the runtime's one symbol cache
 * (sym/cache.c: one table per process for the context tapset and the call
 * graph, invalidated by the probe hooks). */
#include "dcg_internal.h"
#include "sym/symbols.h"

struct _stp_symtab *dcg_symtab_of(pid_t pid)
{
	return _stp_sym_of(pid);
}

const struct _stp_syminfo *dcg_sym(pid_t pid, uint64_t addr)
{
	struct _stp_symtab *st = dcg_symtab_of(pid);
	return st ? _stp_sym_lookup(st, addr) : NULL;
}
