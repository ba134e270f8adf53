/* process(...).statement("FUNC[@FILE[:LINES|+N]]") and
 * .statement(ADDRESS)[.absolute], also after .library("LIB"): one probe
 * per function and line (LINES: "*", "N", "N-M", "N,M-K"; "+N": N lines
 * after the function's declaration; none: the function's entry), or at
 * the address. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "probes_process.h"
#include "proc_image.h"

/* The DIE of the function named fname that holds vaddr pc (0: none). */
static Dwarf_Off function_die_at(struct dwq_mod *m, const char *fname, uint64_t pc)
{
	struct dwq_funcs fs;
	Dwarf_Off die = 0;
	char msg[DWQ_ERRLEN];

	if (!fname ||
	    dwq_functions(m, fname, DWQ_CALL, DWQ_PROLOGUE_NEVER, 0, &fs, msg, sizeof msg) < 0)
		return 0;
	for (size_t i = 0; i < fs.n && !die; i++)
		if (fs.v[i].has_dwarf && fs.v[i].entry <= pc &&
		    (pc < fs.v[i].entry + fs.v[i].size || !fs.v[i].size))
			die = fs.v[i].die;
	dwq_funcs_free(&fs);
	return die;
}

/* A .library point: pp() (D->pp, already set) names the library as a
 * process; pn() and -p2's "<-" keep the written form with the same tail. */
static void lib_pn(const struct probe_point *pp, struct derived_probe *d, const char *exe,
		   const char *lib)
{
	if (!lib)
		return;
	char *pre = proc_pn_prefix(pp, exe, lib);
	const char *tail = d->pp + strlen("process(\"\")") + strlen(lib);
	d->point_pn = xasprintf("%s%s", pre, tail);
	d->point_from = d->point_pn;
	free(pre);
}

/* .nearest: pp() names the line probed; -l (pn) the line asked for when
 * one line was, and the "<-" of -p2 the line probed, both with
 * ".nearest", as SystemTap 4.8 prints them. */
static void nearest_names(const struct probe_point *pp, struct derived_probe *d, const char *exe,
			  const char *lib, const struct dwq_stmt *st)
{
	char *pre = lib ? proc_pn_prefix(pp, exe, lib) : NULL;
	char buf[2 * 4096 + 64];
	const char *p = pre ? pre : proc_pp_prefix(exe, NULL, buf, sizeof buf);

	d->point_pn = xasprintf("%s.statement(\"%s@%s:%d\").nearest", p, st->func, st->file,
				st->req_line ? st->req_line : st->line);
	d->point_from =
	    xasprintf("%s.statement(\"%s@%s:%d\").nearest", p, st->func, st->file, st->line);
	free(pre);
}

/* .statement("FUNC[@FILE[:LINES|+N]]"), .statement(ADDRESS)[.absolute] at
 * pp->components.v[si]. An absolute address is where the code runs (no
 * load bias); a plain one is an ELF vaddr of the module. */
enum pp_result proc_resolve_statement(const struct pp_at *at, struct derived_probe *dp,
				      struct pp_error *err)
{
	struct elab *c = at->c;
	struct probe_point *pp = at->pp;
	const char *exe = at->exe, *lib = at->lib;
	int si = at->i;
	struct probe_component *cs = pp->components.v[si];
	struct probe_component *cn = pp->components.n > si + 1 ? pp->components.v[si + 1] : NULL;
	const char *file = lib ? lib : exe, *img = proc_image(c->s, file);
	char msg[DWQ_ERRLEN], pre[2 * 4096 + 64];
	int nearest = 0;
	int absolute = 0;

	if (cn && !strcmp(cn->functor, "nearest") && !cn->arg && pp->components.n == si + 2 &&
	    cs->arg && cs->arg->kind == E_STRING) {
		nearest = 1;
	} else if (cn) {
		if (pp->components.n > si + 2 || cn->arg || strcmp(cn->functor, "absolute") ||
		    !cs->arg || cs->arg->kind != E_NUMBER)
			return pp_fail(err, cn->tok, "invalid suffix for probe");
		absolute = 1;
	}
	if (!cs->arg || (cs->arg->kind != E_STRING && cs->arg->kind != E_NUMBER))
		return pp_fail(err, cs->tok, "expected a string or a number");
	struct dwq_mod *m = proc_open_mod(img, msg, sizeof msg);
	if (!m)
		return pp_fail(err, proc_msg_tok(c, msg, cs->tok), "%s", msg);
	proc_debuginfo_warning(c, m);
	/* SystemTap's pp() names a library as a process (lib_pn) */
	proc_pp_prefix(lib ? lib : exe, NULL, pre, sizeof pre);
	if (cs->arg->kind == E_NUMBER) {
		uint64_t a = (uint64_t)cs->arg->num;
		const char *fname = NULL;
		/* SystemTap sees the variables in scope at the address */
		Dwarf_Off fdie = dwv_func_at(m, a, &fname);
		struct proc_point *p = proc_point_at(m, fdie, a, fname);
		dp->kind = PK_PROCESS_STATEMENT;
		dp->pp = xasprintf("%s.statement(0x%llx)%s", pre, (unsigned long long)a,
				   absolute ? ".absolute" : "");
		lib_pn(pp, dp, exe, lib);
		dp->module = proc_image(c->s, exe);
		dp->library = lib ? proc_image(c->s, lib) : NULL;
		dp->addr = a;
		/* absolute: no bias (the runtime's bias is base - module_base,
		 * 0 when the base is below module_base) */
		dp->module_base = absolute ? UINT64_MAX : proc_module_base(img);
		if (!absolute)
			dp->proc = p;
		else
			free(p);
		return PP_OK;
	}
	struct dwq_stmts st;
	if (!dwq_has_dwarf(m)) /* after the debuginfo warning, as 4.8 */
		return pp_fail(err, NULL, "no match");
	if (dwq_statements_nearest(m, cs->arg->str, nearest, &st, msg, sizeof msg) < 0)
		return pp_fail(err, proc_msg_tok(c, msg, cs->tok), "%s", msg);
	if (st.n == 0) {
		if (st.hint && !c->s->listing)
			elab_error(c, NULL, "%s", st.hint);
		dwq_stmts_free(&st);
		return pp_fail(err, NULL, "no match");
	}
	uint64_t base = proc_module_base(img);
	struct derived_probe *d = dp;
	for (size_t i = 0; i < st.n; i++) {
		if (i) {
			d->more = xcalloc(1, sizeof *d);
			d = d->more;
		}
		struct proc_point *p = proc_point_at(
		    m, function_die_at(m, st.v[i].func, st.v[i].addr), st.v[i].addr, st.v[i].func);
		d->kind = PK_PROCESS_STATEMENT;
		d->pp = xasprintf("%s.statement(\"%s@%s:%d\")", pre, st.v[i].func, st.v[i].file,
				  st.v[i].line);
		lib_pn(pp, d, exe, lib);
		if (nearest)
			nearest_names(pp, d, exe, lib, &st.v[i]);
		d->module = proc_image(c->s, exe);
		d->library = lib ? proc_image(c->s, lib) : NULL;
		d->addr = st.v[i].addr;
		d->module_base = base;
		d->proc = p;
	}
	dwq_stmts_free(&st);
	return PP_OK;
}
