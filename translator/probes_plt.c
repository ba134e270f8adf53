/* process(...).plt["(PATTERN)"] [.return], also after .library("LIB"):
 * one probe per PLT stub of a function whose name matches, and its
 * $$name (the stub's symbol). */
#include <stdio.h>
#include <string.h>

#include "probes_process.h"
#include "proc_image.h"

/* .plt("PATTERN") at pp->components.v[pi]: one probe per PLT stub. */
enum pp_result proc_resolve_plt(const struct pp_at *at, struct derived_probe *dp,
				struct pp_error *err)
{
	struct elab *c = at->c;
	struct probe_point *pp = at->pp;
	const char *exe = at->exe, *lib = at->lib;
	int pi = at->i;
	struct probe_component *cp = pp->components.v[pi];
	const char *file = lib ? lib : exe, *img = proc_image(c->s, file);
	char msg[DWQ_ERRLEN], pre[2 * 4096 + 64];

	int is_return = 0;
	if (pp->components.n > pi + 1) {
		struct probe_component *cn = pp->components.v[pi + 1];
		if (strcmp(cn->functor, "return") || cn->arg || pp->components.n > pi + 2)
			return pp_fail(err, cn->tok, "invalid suffix for probe");
		/* the stub is entered by a call: its return is the function's */
		is_return = 1;
	}
	const char *pat = "*";
	if (cp->arg && cp->arg->kind != E_STRING)
		return pp_fail(err, cp->tok, "expected a string");
	if (cp->arg)
		pat = cp->arg->str;
	struct dwq_mod *m = proc_open_mod(img, msg, sizeof msg);
	if (!m)
		return pp_fail(err, cp->tok, "%s", msg);
	struct dwq_plts ps;
	if (dwq_plt_entries(m, pat, &ps, msg, sizeof msg) < 0)
		return pp_fail(err, cp->tok, "%s", msg);
	if (ps.n == 0) {
		dwq_plts_free(&ps);
		return proc_no_match(m, pp, lib, pat, 1, err);
	}
	proc_pp_prefix(exe, lib, pre, sizeof pre);
	uint64_t base = proc_module_base(img);
	struct derived_probe *d = dp;
	for (size_t i = 0; i < ps.n; i++) {
		if (i) {
			d->more = xcalloc(1, sizeof *d);
			d = d->more;
		}
		d->kind = is_return ? PK_PROCESS_PLT_RETURN : PK_PROCESS_PLT;
		/* SystemTap's pp() is the stub's address; pn() names it */
		d->pp = xasprintf("process(\"%s\").statement(0x%llx)%s", file,
				  (unsigned long long)ps.v[i].addr, is_return ? ".return" : "");
		d->point_pn =
		    xasprintf("%s.plt(\"%s\")%s", pre, ps.v[i].name, is_return ? ".return" : "");
		d->plt_name = xstrdup(ps.v[i].name);
		d->module = proc_image(c->s, exe);
		d->library = lib ? proc_image(c->s, lib) : NULL;
		d->addr = ps.v[i].addr;
		d->module_base = base;
	}
	dwq_plts_free(&ps);
	return PP_OK;
}

/* .plt probes have no debug info: $$name, and $$parms / $$vars empty. */
static int lower_plt_expr(struct expr *e, void *arg)
{
	struct point_lower *L = arg;
	const struct token *tok = e->tok;

	if (e->kind != E_TARGET || !e->str)
		return 0;
	if (e->comps.n || e->addressof || e->pretty)
		return 0;
	if (!strcmp(e->str, "$$name")) {
		/* read at run time (emit.c's x_plt_name): the handlers of a
		 * process.plt wildcard stay identical, one C function */
		*e = *lower_call(tok, "__plt_name", 0, NULL);
		return 1;
	}
	if (!strcmp(e->str, "$$parms") || !strcmp(e->str, "$$vars")) {
		memset(e, 0, sizeof *e);
		e->kind = E_STRING;
		e->tok = tok;
		e->str = "";
		return 1;
	}
	if (lower_badvar_zero(L->c, e))
		return 1;
	elab_error(L->c, tok, "unable to find plt variable '%s' (alternatives: $$name)", e->str);
	return 1;
}

void proc_lower_plt(struct elab *c, struct derived_probe *dp)
{
	lower_point_vars(c, dp, lower_plt_expr);
}
