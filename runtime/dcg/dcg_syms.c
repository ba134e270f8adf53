/* The call graph's names come from the runtime's one symbol cache
 * (sym/cache.c: one table per process for the context tapset and the call
 * graph, invalidated by the probe hooks). The call graph asks for the
 * same few addresses millions of times (every call of a loop, each PLT
 * stub, several questions per record): the answers are kept in a small
 * direct-mapped table while the cache's generation stays the same (it
 * changes whenever an entry it gave out may have gone). */
#include "dcg_internal.h"
#include "sym/symbols.h"

#define MEMO_BITS 12

static struct {
	pid_t pid;
	uint64_t gen;
	struct _stp_symtab *st;
} last;

static struct memo {
	pid_t pid;
	uint64_t gen, addr;
	const struct _stp_syminfo *si; /* NULL: empty */
} memo[1u << MEMO_BITS];

struct _stp_symtab *dcg_symtab_of(pid_t pid)
{
	uint64_t gen = _stp_sym_generation();

	if (last.st && last.pid == pid && last.gen == gen)
		return last.st;
	last.st = _stp_sym_of(pid);
	last.pid = pid;
	last.gen = gen;
	return last.st;
}

static __attribute__((noinline)) const struct _stp_syminfo *ask(struct memo *m, pid_t pid,
								uint64_t addr)
{
	struct _stp_symtab *st = dcg_symtab_of(pid);
	const struct _stp_syminfo *si = st ? _stp_sym_lookup(st, addr) : NULL;

	/* the generation after the lookup: its report may have changed it */
	if (si)
		*m = (struct memo){pid, _stp_sym_gen, addr, si};
	return si;
}

/* (the hit is kept a leaf: the call graph asks millions of times) */
const struct _stp_syminfo *dcg_sym(pid_t pid, uint64_t addr)
{
	struct memo *m =
	    &memo[((addr ^ (uint64_t)pid) * 0x9E3779B97F4A7C15ull) >> (64 - MEMO_BITS)];

	if (m->si && m->addr == addr && m->pid == pid && m->gen == _stp_sym_gen)
		return m->si;
	return ask(m, pid, addr);
}
