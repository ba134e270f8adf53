/* The call graph's symbol tables, one per process (a block of its own:
 * to be replaced by the runtime's one symbol cache). Closed at exec and
 * exit, reset when the libraries change, freed at the end of the run. */
#include "dcg_internal.h"
#include "sym/symbols.h"

#include <stdlib.h>

/* Symbol tables per process. */
struct stab {
	pid_t pid;
	struct _stp_symtab *st;
};
static struct stab *stabs;
static size_t nstabs;

struct _stp_symtab *dcg_symtab_of(pid_t pid)
{
	for (size_t i = 0; i < nstabs; i++)
		if (stabs[i].pid == pid)
			return stabs[i].st;
	struct stab *v = realloc(stabs, (nstabs + 1) * sizeof *v);
	if (!v)
		return NULL;
	stabs = v;
	stabs[nstabs].pid = pid;
	stabs[nstabs].st = _stp_sym_open(pid);
	return stabs[nstabs++].st;
}

const struct _stp_syminfo *dcg_sym(pid_t pid, uint64_t addr)
{
	struct _stp_symtab *st = dcg_symtab_of(pid);
	return st ? _stp_sym_lookup(st, addr) : NULL;
}

/* pid's memory is gone (exec, exit). */
void dcg_syms_forget(pid_t pid)
{
	for (size_t i = 0; i < nstabs; i++)
		if (stabs[i].pid == pid) {
			if (stabs[i].st)
				_stp_sym_close(stabs[i].st);
			stabs[i] = stabs[--nstabs];
			break;
		}
}

/* pid's libraries changed (dlopen, dlclose). */
void dcg_syms_reset(pid_t pid)
{
	for (size_t i = 0; i < nstabs; i++)
		if (stabs[i].pid == pid && stabs[i].st)
			_stp_sym_reset(stabs[i].st);
}

void dcg_syms_free(void)
{
	for (size_t i = 0; i < nstabs; i++)
		if (stabs[i].st)
			_stp_sym_close(stabs[i].st);
	free(stabs);
	stabs = NULL;
	nstabs = 0;
}
