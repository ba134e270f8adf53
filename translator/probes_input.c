/* procfs("__stdin").write: SystemTap's input probes (input.char and
 * input.line, tapset/input.stp, are aliases of it). Here it fires once per
 * byte read from staprun's stdin, with that byte in $value; every other
 * procfs point needs the kernel (probes_kernel.c). */
#include <string.h>

#include "probe_kinds.h"
#include "probes_process.h"

enum pp_result probes_resolve_stdin(const struct pp_at *at, struct derived_probe *dp,
				    struct pp_error *err)
{
	struct probe_point *pp = at->pp;
	struct probe_component *c0 = pp->components.v[0];
	struct probe_component *c1 = pp->components.n > 1 ? pp->components.v[1] : NULL;

	if (!c0->arg || c0->arg->kind != E_STRING || strcmp(c0->arg->str, "__stdin") || !c1 ||
	    strcmp(c1->functor, "write"))
		return probes_kernel_resolver("procfs")(at, dp, err);
	if (c1->arg || pp->components.n > 2) {
		struct probe_component *bad = c1->arg ? c1 : pp->components.v[2];
		return pp_fail(err, bad->tok, "invalid suffix for probe");
	}
	dp->kind = PK_STDIN;
	dp->pp = xstrdup("procfs(\"__stdin\").write");
	return PP_OK;
}

/* $value on the left of an assignment or ++/--: SystemTap's message */
static int check_readonly(struct expr *e, void *arg)
{
	struct elab *c = arg;
	struct expr *l =
	    e->kind == E_ASSIGN || e->kind == E_PRE_INC || e->kind == E_POST_INC ? e->left : NULL;

	if (l && l->kind == E_TARGET && l->str && !strcmp(l->str, "$value"))
		elab_error(c, l->tok,
			   "procfs $value variable is read-only in a procfs write probe");
	return 0;
}

static int lower_stdin_expr(struct expr *e, void *arg)
{
	struct point_lower *L = arg;
	const struct token *tok = e->tok;

	if (e->kind != E_TARGET || !e->str)
		return 0;
	if (!strcmp(e->str, "$value") && !e->comps.n && !e->addressof && !e->pretty) {
		memset(e, 0, sizeof *e);
		e->kind = E_CALL;
		e->tok = tok;
		e->str = "__input_value";
		return 1;
	}
	if (lower_badvar_zero(L->c, e))
		return 1;
	elab_error(L->c, tok, "invalid target symbol for procfs probe, $value expected");
	return 1;
}

void probes_lower_stdin(struct elab *c, struct derived_probe *dp)
{
	if (dp->probe && dp->probe->body)
		walk_stmt(dp->probe->body, NULL, check_readonly, c);
	lower_point_vars(c, dp, lower_stdin_expr);
}
