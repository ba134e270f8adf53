/* The call graph's names come from the runtime's one symbol cache
 * (sym/cache.c: one table per process for the context tapset and the call
 * graph, invalidated by the probe hooks). The call graph asks for the
 * same process and often the same address many times in a row (every
 * call of a loop): the last answers are kept while the cache's
 * generation stays the same. */
#include "dcg_internal.h"
#include "sym/symbols.h"

static struct {
	pid_t pid;
	uint64_t gen;
	struct _stp_symtab *st;
	uint64_t addr;
	const struct _stp_syminfo *si;
} last;

struct _stp_symtab *dcg_symtab_of(pid_t pid)
{
	uint64_t gen = _stp_sym_generation();

	if (last.st && last.pid == pid && last.gen == gen)
		return last.st;
	last.st = _stp_sym_of(pid);
	last.pid = pid;
	last.gen = gen;
	last.si = NULL;
	return last.st;
}

const struct _stp_syminfo *dcg_sym(pid_t pid, uint64_t addr)
{
	if (last.si && last.addr == addr && last.pid == pid && last.gen == _stp_sym_generation())
		return last.si;
	struct _stp_symtab *st = dcg_symtab_of(pid);
	if (!st)
		return NULL;
	last.si = _stp_sym_lookup(st, addr);
	last.addr = addr;
	return last.si;
}
