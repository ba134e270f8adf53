/* $dynamic_call_graph: a pseudo-variable of the dynamic call graph (issue
 * 4). It is not a target variable: it needs no debug info, is never looked
 * up in DWARF and wins over a program variable of the same name. Pass 2
 * lowers it, before target variables are resolved, in handlers of probes
 * that run in a thread of the target:
 *     $dynamic_call_graph = V   ->  __dcg_set(V)   (_stp_dcg_set(c, v))
 *     $dynamic_call_graph       ->  __dcg_get()    (_stp_dcg_get(c))
 * (tapset/dynamic_call_graph.stp). Elsewhere (begin, end, timer probes)
 * it is a semantic error: there is no traced thread to switch. */
#include "probe_kinds.h"

#include <string.h>

#define DCG_NAME "$dynamic_call_graph"

static int is_dcg(const struct expr *e)
{
	return e && e->kind == E_TARGET && e->str && !strcmp(e->str, DCG_NAME);
}

static int runs_in_target(const struct derived_probe *dp)
{
	return pk_of(dp)->flags & PKF_IN_TARGET;
}

struct dcg_walk {
	struct elab *c;
	struct derived_probe *dp;
	int check_only;
	int found;
	const struct token *tok; /* first use */
};

static void to_number(struct expr *e)
{
	const struct token *tok = e->tok;
	memset(e, 0, sizeof *e);
	e->kind = E_NUMBER;
	e->tok = tok;
}

static int dcg_expr(struct expr *e, void *arg)
{
	struct dcg_walk *w = arg;
	const struct token *tok = e->tok;

	if (e->kind == E_ASSIGN && is_dcg(e->left)) {
		if (!w->found)
			w->tok = tok;
		w->found = 1;
		if (w->check_only)
			return 0;
		if (strcmp(e->op, "=")) {
			elab_error(w->c, tok, "%s only takes a plain assignment ('='), not '%s'",
				   DCG_NAME, e->op);
			to_number(e);
			return 1;
		}
		struct expr *v = e->right;
		memset(e, 0, sizeof *e);
		e->kind = E_CALL;
		e->tok = tok;
		e->str = "__dcg_set";
		vec_push(&e->args, v);
		return 0; /* the value may read it too */
	}
	if ((e->kind == E_PRE_INC || e->kind == E_POST_INC) && is_dcg(e->left)) {
		w->found = 1;
		if (!w->check_only) {
			elab_error(w->c, tok, "%s only takes a plain assignment ('='), not '%s'",
				   DCG_NAME, e->op);
			to_number(e);
		}
		return 1;
	}
	if (!is_dcg(e))
		return 0;
	if (!w->found)
		w->tok = tok;
	w->found = 1;
	if (w->check_only)
		return 1;
	if (e->comps.n || e->addressof || e->pretty) {
		elab_error(w->c, tok, "%s is a flag: it has no members, address or pretty form",
			   DCG_NAME);
		to_number(e);
		return 1;
	}
	memset(e, 0, sizeof *e);
	e->kind = E_CALL;
	e->tok = tok;
	e->str = "__dcg_get";
	return 1;
}

void elab_lower_dcg(struct elab *c, int from)
{
	/* Errors first (a body may be shared by a begin and a process probe). */
	for (int i = from; i < c->s->probes.n; i++) {
		struct derived_probe *dp = c->s->probes.v[i];
		if (!dp->probe || !dp->probe->body || runs_in_target(dp))
			continue;
		struct dcg_walk w = {c, dp, 1, 0, NULL};
		walk_stmt(dp->probe->body, NULL, dcg_expr, &w);
		if (w.found)
			elab_error(c, w.tok ? w.tok : dp->tok,
				   "%s cannot be used in %s: it switches call-graph tracing "
				   "of the thread running the probe, and only probes of a "
				   "traced process run in one of its threads",
				   DCG_NAME, pk_of(dp)->what ? pk_of(dp)->what : "this probe");
	}
	for (int i = from; i < c->s->probes.n; i++) {
		struct derived_probe *dp = c->s->probes.v[i];
		if (!dp->probe || !dp->probe->body)
			continue;
		struct dcg_walk w = {c, dp, 0, 0, NULL};
		if (!runs_in_target(dp)) {
			/* already reported: neutralize */
			w.check_only = 1;
			walk_stmt(dp->probe->body, NULL, dcg_expr, &w);
			if (!w.found)
				continue;
		}
		w.check_only = 0;
		walk_stmt(dp->probe->body, NULL, dcg_expr, &w);
	}
}
