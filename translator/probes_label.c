/* process(...)[.library("LIB")].function("F").label("L"): one probe per
 * DW_TAG_label named by the pattern L inside a function matching F, at
 * the label's address, with the function's target variables in scope
 * there. pp() is SystemTap's: the function named at the label's line,
 * process("P").function("F@FILE:LABEL_LINE"). A function without DWARF
 * gets a probe at its entry, as in SystemTap 4.8. */
#include <dwarf.h>
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

#include "dwarf_list.h"
#include "probes_process.h"
#include "proc_image.h"

struct label_walk {
	const struct pp_at *at;
	struct dwq_mod *m;
	const char *pattern;
	uint64_t base;
	struct derived_probe *first, *last;
};

static void add_label(struct label_walk *w, const struct dwq_func *fn, Dwarf_Die *lab,
		      const char *name, uint64_t pc)
{
	const struct pp_at *at = w->at;
	int line = 0;
	dwarf_decl_line(lab, &line);
	struct dwq_func at_label = *fn;
	at_label.decl_line = line;
	struct derived_probe *d = proc_chain_next(w->first, &w->last);
	struct proc_point *p = proc_point_at(w->m, fn->die, pc, fn->name);
	char *l = at->lib ? dwq_library_pn(proc_lib_arg(at->pp), at->lib) : NULL;
	char *from = dwl_function_pp(at->exe, l, &at_label, "");
	d->kind = PK_PROCESS_LABEL;
	d->pp = dwl_function_pp(at->lib ? at->lib : at->exe, NULL, &at_label, "");
	d->point_pn = xasprintf("%s.label(\"%s\")", from, name);
	d->point_from = d->point_pn;
	free(from);
	free(l);
	d->module = proc_image(at->c->s, at->exe);
	d->library = at->lib ? proc_image(at->c->s, at->lib) : NULL;
	d->addr = pc;
	d->module_base = w->base;
	d->proc = p;
}

/* A function known from the symbol table only: SystemTap 4.8 probes its
 * entry for any .label("L"), named function("NAME") there and
 * function("NAME").label("L") in -l and -p2's "<-". */
static void add_symbol_only(struct label_walk *w, const struct dwq_func *fn)
{
	const struct pp_at *at = w->at;
	struct derived_probe *d = proc_chain_next(w->first, &w->last);
	char *l = at->lib ? dwq_library_pn(proc_lib_arg(at->pp), at->lib) : NULL;
	char *from = dwl_function_pp(at->exe, l, fn, "");

	d->kind = PK_PROCESS_LABEL;
	d->pp = dwl_function_pp(at->lib ? at->lib : at->exe, NULL, fn, "");
	d->point_pn = xasprintf("%s.label(\"%s\")", from, w->pattern);
	d->point_from = d->point_pn;
	free(from);
	free(l);
	d->module = proc_image(at->c->s, at->exe);
	d->library = at->lib ? proc_image(at->c->s, at->lib) : NULL;
	d->addr = fn->entry;
	d->module_base = w->base;
	d->proc = proc_point_at(w->m, 0, fn->entry, fn->name);
}

/* The labels under parent, not those of nested functions. */
static void labels_in(struct label_walk *w, const struct dwq_func *fn, Dwarf_Die *parent)
{
	Dwarf_Die child;
	if (dwarf_child(parent, &child) != 0)
		return;
	do {
		int tag = dwarf_tag(&child);
		Dwarf_Addr pc;
		const char *name;
		if (tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine)
			continue;
		if (tag != DW_TAG_label) {
			labels_in(w, fn, &child);
			continue;
		}
		name = dwarf_diename(&child);
		if (name && !fnmatch(w->pattern, name, 0) && dwarf_lowpc(&child, &pc) == 0)
			add_label(w, fn, &child, name, dwq_dwarf_to_vaddr(w->m, pc));
	} while (dwarf_siblingof(&child, &child) == 0);
}

enum pp_result proc_resolve_label(const struct pp_at *at, struct derived_probe *dp,
				  struct pp_error *err)
{
	const struct probe_point *pp = at->pp;
	struct probe_component *cf = pp->components.v[at->i - 1];
	struct probe_component *cl = pp->components.v[at->i];
	const char *img = proc_image(at->c->s, at->lib ? at->lib : at->exe);
	struct label_walk w = {at, NULL, NULL, 0, dp, NULL};
	char msg[DWQ_ERRLEN];
	struct dwq_funcs fs;

	if (!cl->arg || cl->arg->kind != E_STRING)
		return pp_fail(err, cl->tok, "invalid suffix for probe");
	if (pp->components.n > at->i + 1)
		return pp_fail(err, ((struct probe_component *)pp->components.v[at->i + 1])->tok,
			       "invalid suffix for probe");
	w.pattern = cl->arg->str;
	w.m = proc_open_mod(img, msg, sizeof msg);
	if (!w.m)
		return pp_fail(err, cf->tok, "%s", msg);
	proc_debuginfo_warning(at->c, w.m);
	if (dwq_functions(w.m, cf->arg->str, DWQ_CALL, DWQ_PROLOGUE_NEVER, 0, &fs, msg,
			  sizeof msg) < 0)
		return pp_fail(err, proc_msg_tok(at->c, msg, cf->tok), "%s", msg);
	w.base = proc_module_base(img);
	for (size_t i = 0; i < fs.n; i++) {
		Dwarf_Die die;
		if (fs.v[i].has_dwarf && dwarf_offdie(dwq_dwarf(w.m), fs.v[i].die, &die))
			labels_in(&w, &fs.v[i], &die);
		else if (!fs.v[i].has_dwarf)
			add_symbol_only(&w, &fs.v[i]);
	}
	dwq_funcs_free(&fs);
	if (!w.last)
		return proc_no_match(w.m, pp, at->lib, cf->arg->str, 0, err); /* as SystemTap */
	return PP_OK;
}
