/* process(...) probe points (probes_process.c) and the lowering of their
 * target variables (probes_process_vars.c). */
#ifndef STAP_PROBES_PROCESS_H
#define STAP_PROBES_PROCESS_H

#include "dwarf_query.h"
#include "elaborate.h"

/* What a function probe's target variables are resolved against
 * (derived_probe.proc). */
struct proc_point {
	struct dwq_mod *mod;
	Dwarf_Off func_die; /* 0: no DWARF */
	uint64_t pc;	    /* the probed vaddr */
	uint64_t entry_pc;  /* .return: where @entry values are taken (after
			       the prologue, where parameters are located) */
	int is_return;
	const char *func; /* the function's name */
};

/* Rewrite the target variables ($x, $return, $$parms, ...) of derived
 * probes [from, s->probes.n) into calls of the tapset's __tvar_*
 * functions; before symbol resolution. Gives each process probe with
 * target variables its own copy of the body. */
void proc_lower_targets(struct elab *c, int from);

/* The same for .mark probes ($argN, $$name, $$provider), before
 * proc_lower_targets (probes_process.c). */
void proc_lower_marks(struct elab *c, int from);

/* Every module (struct dwq_mod *) opened while resolving process probes:
 * what the compiled object depends on besides the script (cache.c). */
const struct vec *proc_opened_modules(void);

#endif
