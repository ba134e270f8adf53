/* process(...).function("PATTERN[@FILE[:LINE]]") [.call | .return |
 * .inline | .exported], also after .library("LIB"): one probe per
 * function matched (after its prologue; .return at its entry, firing
 * when it returns), with SystemTap's pp() text and "(similar functions:
 * ...)" when nothing matches. */
#include <stdlib.h>
#include <string.h>

#include "dwarf_list.h"
#include "probes_process.h"
#include "proc_image.h"

/* SystemTap's "no match (similar functions: a, b, ...)" for SPEC, a
 * .function (or, with plt, a .plt) argument matching nothing in M: the
 * candidates of dwq_function_candidates (dwq_plt_candidates); none in a
 * .library(...) that SystemTap looks up among the executable's libraries. */
enum pp_result proc_no_match(struct dwq_mod *m, const struct probe_point *pp, const char *lib,
			     const char *spec, int plt, struct pp_error *err)
{
	struct dwq_spec sp;
	char msg[DWQ_ERRLEN], **v;

	if ((lib && !dwq_library_named_directly(proc_lib_arg(pp))) ||
	    dwq_parse_spec(spec, &sp, msg, sizeof msg) < 0)
		return pp_fail(err, NULL, "no match");
	int n = plt ? dwq_plt_candidates(m, &v) : dwq_function_candidates(m, sp.file, &v);
	struct vec names = {0};
	for (int i = 0; i < n; i++)
		vec_push(&names, v[i]);
	enum pp_result r =
	    pp_fail(err, NULL, "no match%s", elab_suggest_what(sp.func, &names, "functions"));
	free(names.v);
	dwq_free_strv(v, n);
	dwq_spec_free(&sp);
	return r;
}

/* A line in .function("F@FILE:N") selects nothing (dwq_functions):
 * SystemTap 4.8 warns, unless N is the declaration line of F, a name
 * without wildcards. */
static void line_warning(struct elab *c, const char *spec, const struct dwq_funcs *fs)
{
	struct dwq_spec sp;
	char msg[DWQ_ERRLEN];

	if (c->s->listing || dwq_parse_spec(spec, &sp, msg, sizeof msg) < 0)
		return;
	int warn = sp.nranges || sp.line_any || sp.relative;
	if (warn && sp.single_line && !strpbrk(sp.func, "*?[")) {
		warn = 0;
		for (size_t i = 0; i < fs->n; i++)
			warn |= fs->v[i].decl_line != sp.line0;
	}
	if (warn)
		elab_warning(c, c->probe_kw,
			     "For probing a particular line, use a .statement() probe, not "
			     ".function()");
	dwq_spec_free(&sp);
}

/* The .function(...) component is pp->components.v[fi]; lib: the
 * .library(...) module (absolute path) or NULL for the executable. */
enum pp_result proc_resolve_function(const struct pp_at *at, struct derived_probe *dp,
				     struct pp_error *err)
{
	struct elab *c = at->c;
	struct probe_point *pp = at->pp;
	const char *exe = at->exe, *lib = at->lib;
	int fi = at->i;
	struct probe_component *c1 = pp->components.v[fi];
	struct probe_component *c2 = pp->components.n > fi + 1 ? pp->components.v[fi + 1] : NULL;
	const char *file = lib ? lib : exe, *img = proc_image(c->s, file);
	char msg[DWQ_ERRLEN];
	int is_return = 0;
	const char *suffix = "";
	enum dwq_kind kind = DWQ_FUNCTION;

	if (!c1->arg || c1->arg->kind != E_STRING)
		return pp_fail(err, c1->tok, "expected a string");
	/* a kind of its own after .function(...): .callee, .callees */
	const struct probe_kind_def *k =
	    c2 ? pk_find(c2->functor, PKF_PROCESS | PKF_AFTER_FUNCTION) : NULL;
	if (k) {
		struct pp_at sub = *at;
		sub.i = fi + 1;
		return k->resolve(&sub, dp, err);
	}
	int exported = 0;
	if (c2) {
		if (pp->components.n > fi + 2 || c2->arg ||
		    (strcmp(c2->functor, "return") && strcmp(c2->functor, "call") &&
		     strcmp(c2->functor, "inline") && strcmp(c2->functor, "exported"))) {
			struct vec names = {0};
			vec_push(&names, (void *)"call");
			vec_push(&names, (void *)"exported");
			vec_push(&names, (void *)"inline");
			vec_push(&names, (void *)"return");
			return pp_fail(err, c2->tok, "probe point mismatch%s",
				       elab_suggest(c2->functor, &names));
		}
		if (!strcmp(c2->functor, "inline")) {
			suffix = ".inline";
			kind = DWQ_INLINE;
		} else if (!strcmp(c2->functor, "exported")) {
			suffix = ".exported";
			exported = 1;
		} else {
			is_return = !strcmp(c2->functor, "return");
			suffix = is_return ? ".return" : ".call";
			kind = DWQ_CALL;
		}
	}
	struct dwq_mod *m = proc_open_mod(img, msg, sizeof msg);
	if (!m)
		return pp_fail(err, proc_msg_tok(c, msg, c1->tok), "%s", msg);
	proc_debuginfo_warning(c, m);
	struct dwq_funcs fs;
	if (dwq_functions(m, c1->arg->str, kind, dwq_prologue_default, exported, &fs, msg,
			  sizeof msg) < 0)
		return pp_fail(err, proc_msg_tok(c, msg, c1->tok), "%s", msg);
	if (fs.n == 0) {
		dwq_funcs_free(&fs);
		return proc_no_match(m, pp, lib, c1->arg->str, 0, err);
	}
	line_warning(c, c1->arg->str, &fs);
	uint64_t base = proc_module_base(img);
	struct derived_probe *d = dp;
	for (size_t i = 0; i < fs.n; i++) {
		const struct dwq_func *fn = &fs.v[i];
		if (i) {
			d->more = xcalloc(1, sizeof *d);
			d = d->more;
		}
		struct proc_point *p = xcalloc(1, sizeof *p);
		p->mod = m;
		p->func_die = fn->has_dwarf ? fn->die : 0;
		p->pc = is_return ? fn->entry : fn->probe;
		p->is_return = is_return;
		p->entry_pc = fn->probe;
		p->func = xstrdup(fn->name);
		d->kind = is_return ? PK_PROCESS_RETURN : PK_PROCESS_FUNCTION;
		if (lib) {
			/* SystemTap's pp() names the library as a process;
			 * pn() and -p2's "<-" keep the .library form */
			char *l = dwq_library_pn(proc_lib_arg(pp), lib);
			d->pp = dwl_function_pp(lib, NULL, fn, suffix);
			d->point_pn = dwl_function_pp(exe, l, fn, suffix);
			d->point_from = d->point_pn;
			free(l);
		} else {
			d->pp = dwl_function_pp(exe, NULL, fn, suffix);
		}
		d->module = proc_image(c->s, exe);
		d->library = lib ? proc_image(c->s, lib) : NULL;
		d->addr = p->pc;
		d->module_base = base;
		d->proc = p;
	}
	dwq_funcs_free(&fs);
	return PP_OK;
}

/* -L: the variables at the probed address (at the entry, for a .return). */
char *proc_function_vars(const struct derived_probe *dp)
{
	const struct proc_point *pp = dp->proc;
	if (!pp)
		return NULL;
	return dwl_point_vars(pp->mod, pp->func_die, pp->is_return ? pp->entry_pc : pp->pc,
			      pp->is_return);
}
