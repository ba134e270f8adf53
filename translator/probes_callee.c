/* process(...)[.library("LIB")].function("F").callee("G")[.call] and
 * .callees[(N)] (.callee("*"), and the callees of those down to depth N):
 * SystemTap's callee probes. One probe per call, in F's debug info, of a
 * function whose name matches G (a name pattern: SystemTap takes no
 * @FILE here), at that function's .function address, run only when
 * called from there: pass 2 starts the body with
 *     if (!(_caller_match(1, LEVEL, "MODULE", SECTION, RETURN_PC))) next
 * for each level (tapset/ucontext_unwind.stp). The calls are the
 * DW_TAG_GNU_call_site entries GCC writes with optimisation for DWARF 4,
 * the ones SystemTap 4.8 reads (it does not read DWARF 5's
 * DW_TAG_call_site; neither does this); calls through pointers or into
 * other objects are not there. */
#include <dwarf.h>
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

#include "dwarf_list.h"
#include "probes_process.h"
#include "proc_image.h"

/* The search for the calls of one point. */
struct callee_walk {
	const struct pp_at *at;
	struct dwq_mod *m;
	struct dwq_funcs all; /* every out-of-line function: the candidates */
	const char *pattern;  /* G; NULL: any (.callees) */
	const char *suffix;   /* "" or ".call" */
	int depth;
	uint64_t base;
	struct derived_probe *first, *last;
};

/* The function in w->all whose DIE (or the declaration it specifies) is
 * OFF; NULL: none (a function of another object). */
static const struct dwq_func *function_of(struct callee_walk *w, Dwarf_Off off)
{
	for (size_t i = 0; i < w->all.n; i++) {
		const struct dwq_func *fn = &w->all.v[i];
		Dwarf_Die die, spec;
		Dwarf_Attribute a;
		if (!fn->has_dwarf || fn->inlined)
			continue;
		if (fn->die == off)
			return fn;
		if (dwarf_offdie(dwq_dwarf(w->m), fn->die, &die) &&
		    dwarf_formref_die(dwarf_attr(&die, DW_AT_specification, &a), &spec) &&
		    dwarf_dieoffset(&spec) == off)
			return fn;
	}
	return NULL;
}

/* "name@file:line" of fn, as .function's pp() names it. */
static char *spec_of(const struct dwq_func *fn)
{
	if (fn->decl_file)
		return xasprintf("%s@%s:%d", fn->name, fn->decl_file, fn->decl_line);
	return xstrdup(fn->name);
}

static void add_probe(struct callee_walk *w, const struct dwq_func *caller,
		      const struct dwq_func *callee, const uint64_t *path, int level)
{
	const struct pp_at *at = w->at;
	struct derived_probe *d = proc_chain_next(w->first, &w->last);
	struct proc_point *p = proc_point_at(w->m, callee->die, callee->probe, callee->name);
	char *l = at->lib ? dwq_library_pn(proc_lib_arg(at->pp), at->lib) : NULL;
	char *from = dwl_function_pp(at->exe, l, caller, ""), *cs = spec_of(callee);
	d->kind = PK_PROCESS_CALLEE;
	d->pp = dwl_function_pp(at->lib ? at->lib : at->exe, NULL, callee, w->suffix);
	d->point_pn = xasprintf("%s.callee(\"%s\")%s", from, cs, w->suffix);
	d->point_from = d->point_pn;
	free(from);
	free(cs);
	free(l);
	d->module = proc_image(at->c->s, at->exe);
	d->library = at->lib ? proc_image(at->c->s, at->lib) : NULL;
	d->addr = callee->probe;
	d->module_base = w->base;
	d->proc = p;
	d->ncallers = level;
	d->callers = xcalloc((size_t)level, sizeof *d->callers);
	for (int i = 0; i < level; i++) /* path[0] is the outermost call */
		d->callers[i] = path[level - 1 - i];
}

static void calls_in(struct callee_walk *w, const struct dwq_func *fn, Dwarf_Die *parent,
		     uint64_t *path, int level);

/* The callees of fn at LEVEL (1: the calls F makes), path[0..level-1)
 * the calls leading to fn. */
static void callees_of(struct callee_walk *w, const struct dwq_func *fn, uint64_t *path, int level)
{
	Dwarf_Die die;
	if (level <= w->depth && dwarf_offdie(dwq_dwarf(w->m), fn->die, &die))
		calls_in(w, fn, &die, path, level);
}

static void calls_in(struct callee_walk *w, const struct dwq_func *fn, Dwarf_Die *parent,
		     uint64_t *path, int level)
{
	Dwarf_Die child, origin;
	Dwarf_Attribute a;
	Dwarf_Addr ret;
	if (dwarf_child(parent, &child) != 0)
		return;
	do {
		int tag = dwarf_tag(&child);
		if (tag == DW_TAG_subprogram)
			continue; /* a nested function: its calls are its own */
		if (tag != DW_TAG_GNU_call_site) {
			calls_in(w, fn, &child, path, level);
			continue;
		}
		if (!dwarf_formref_die(dwarf_attr(&child, DW_AT_abstract_origin, &a), &origin) ||
		    dwarf_lowpc(&child, &ret) != 0)
			continue;
		const struct dwq_func *callee = function_of(w, dwarf_dieoffset(&origin));
		if (!callee || (w->pattern && fnmatch(w->pattern, callee->name, 0)))
			continue;
		path[level - 1] = dwq_dwarf_to_vaddr(w->m, ret);
		add_probe(w, fn, callee, path, level);
		callees_of(w, callee, path, level + 1);
	} while (dwarf_siblingof(&child, &child) == 0);
}

/* The .callee(...) / .callees[(N)] component and what may follow it. */
static enum pp_result check_point(struct callee_walk *w, struct pp_error *err)
{
	const struct probe_point *pp = w->at->pp;
	int i = w->at->i;
	struct probe_component *cc = pp->components.v[i];
	struct probe_component *cn = pp->components.n > i + 1 ? pp->components.v[i + 1] : NULL;
	int many = !strcmp(cc->functor, "callees");

	w->depth = 1;
	if (!many && (!cc->arg || cc->arg->kind != E_STRING))
		return pp_fail(err, cc->tok, "invalid suffix for probe");
	if (many && cc->arg && cc->arg->kind != E_NUMBER)
		return pp_fail(err, cc->tok, "invalid suffix for probe");
	if (many && cc->arg && cc->arg->num < 1)
		return pp_fail(err, cc->tok, ".callees(N) only acceptable for N >= 1");
	if (many && cc->arg)
		w->depth = cc->arg->num > 64 ? 64 : (int)cc->arg->num;
	w->pattern = many ? NULL : cc->arg->str;
	if (!cn)
		return PP_OK;
	if (!many && !cn->arg && !strcmp(cn->functor, "return"))
		return pp_fail(err, cn->tok,
			       "process(...).function(...).callee(...).return probe points "
			       "are not supported yet");
	if (many || cn->arg || strcmp(cn->functor, "call"))
		return pp_fail(err, cn->tok, "invalid suffix for probe");
	if (pp->components.n > i + 2)
		return pp_fail(err, ((struct probe_component *)pp->components.v[i + 2])->tok,
			       "invalid suffix for probe");
	w->suffix = ".call";
	return PP_OK;
}

enum pp_result proc_resolve_callee(const struct pp_at *at, struct derived_probe *dp,
				   struct pp_error *err)
{
	struct probe_component *cf = at->pp->components.v[at->i - 1];
	const char *img = proc_image(at->c->s, at->lib ? at->lib : at->exe);
	struct callee_walk w = {at, NULL, {0}, NULL, "", 1, 0, dp, NULL};
	char msg[DWQ_ERRLEN];
	struct dwq_funcs callers;

	if (check_point(&w, err) != PP_OK)
		return PP_ERROR;
	w.m = proc_open_mod(img, msg, sizeof msg);
	if (!w.m)
		return pp_fail(err, cf->tok, "%s", msg);
	if (dwq_functions(w.m, cf->arg->str, DWQ_CALL, dwq_prologue_default, 0, &callers, msg,
			  sizeof msg) < 0)
		return pp_fail(err, cf->tok, "%s", msg);
	if (dwq_has_dwarf(w.m) &&
	    dwq_functions(w.m, "*", DWQ_CALL, dwq_prologue_default, 0, &w.all, msg, sizeof msg) <
		0) {
		dwq_funcs_free(&callers);
		return pp_fail(err, cf->tok, "%s", msg);
	}
	w.base = proc_module_base(img);
	uint64_t *path = xcalloc((size_t)w.depth, sizeof *path);
	for (size_t i = 0; i < callers.n; i++)
		if (callers.v[i].has_dwarf)
			callees_of(&w, &callers.v[i], path, 1);
	free(path);
	dwq_funcs_free(&callers);
	dwq_funcs_free(&w.all);
	if (!w.last)
		return proc_no_match(w.m, at->pp, at->lib, cf->arg->str, 0, err); /* as SystemTap */
	return PP_OK;
}

/* "if (!(_caller_match(1, LEVEL, MODULE, SECTION, RETURN_PC))) next",
 * the outermost caller first, as SystemTap has it. */
void proc_lower_callee(struct elab *c, struct derived_probe *dp)
{
	const struct token *tok = dp->tok;
	(void)c;
	for (int level = 1; level <= dp->ncallers && dp->probe; level++) {
		struct expr *args[5] = {lower_num(tok, 1), lower_num(tok, level),
					expr_new(E_STRING, tok), expr_new(E_STRING, tok),
					lower_num(tok, (int64_t)dp->callers[level - 1])};
		args[2]->str = dp->library ? dp->library : dp->module;
		args[3]->str = dp->module_base ? ".absolute" : ".dynamic";
		args[4]->num_hex = 1;
		dp->probe = elab_guard_body(dp->probe, lower_call(tok, "_caller_match", 5, args));
	}
}
