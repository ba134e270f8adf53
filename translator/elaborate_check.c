/* Checks after type inference: arrays modified inside a foreach over them,
 * stats values used as plain values, stats locals, histogram kinds. */
#include <string.h>

#include <stdlib.h>

#include "elaborate.h"

/* ---- which globals a function writes, transitively ---- */

struct writes {
	struct vec vars; /* struct vardecl * written */
	struct vec seen; /* functions visited */
};

static struct vardecl *lvalue_var(struct expr *e)
{
	if (!e)
		return NULL;
	if (e->kind == E_SYMBOL)
		return e->var;
	if (e->kind == E_INDEX && e->base && e->base->kind == E_SYMBOL)
		return e->base->var;
	return NULL;
}

static void collect_writes_fn(struct functiondecl *fd, struct writes *w);

static int writes_expr(struct expr *e, void *arg)
{
	struct writes *w = arg;
	if (e->kind == E_ASSIGN || e->kind == E_PRE_INC || e->kind == E_POST_INC) {
		struct vardecl *v = lvalue_var(e->left);
		if (v && v->is_global)
			vec_push(&w->vars, v);
	} else if (e->kind == E_CALL && e->func) {
		collect_writes_fn(e->func, w);
	}
	return 0;
}

static int writes_stmt(struct stmt *s, void *arg)
{
	struct writes *w = arg;
	if (s->kind == S_DELETE) {
		struct vardecl *v = lvalue_var(s->value);
		if (v && v->is_global)
			vec_push(&w->vars, v);
	}
	return 0;
}

static void collect_writes_fn(struct functiondecl *fd, struct writes *w)
{
	for (int i = 0; i < w->seen.n; i++)
		if (w->seen.v[i] == fd)
			return;
	vec_push(&w->seen, fd);
	walk_stmt(fd->body, writes_stmt, writes_expr, w);
}

static int fn_writes(struct functiondecl *fd, struct vardecl *v)
{
	struct writes w = {0};
	collect_writes_fn(fd, &w);
	int r = 0;
	for (int i = 0; i < w.vars.n; i++)
		r |= w.vars.v[i] == v;
	free(w.vars.v);
	free(w.seen.v);
	return r;
}

/* ---- foreach ---- */

struct fe_ctx {
	struct elab *c;
	struct vardecl *arr;
};

static int fe_expr(struct expr *e, void *arg)
{
	struct fe_ctx *fc = arg;
	if (e->kind == E_ASSIGN || e->kind == E_PRE_INC || e->kind == E_POST_INC) {
		struct vardecl *v = lvalue_var(e->left);
		if (v == fc->arr && strcmp(e->op ? e->op : "", "<<<"))
			elab_error(fc->c,
				   e->left->kind == E_INDEX ? e->left->base->tok : e->left->tok,
				   "variable '%s' modified during 'foreach' "
				   "iteration",
				   v->name);
	} else if (e->kind == E_CALL && e->func && fn_writes(e->func, fc->arr)) {
		elab_error(fc->c, e->tok,
			   "function call modifies var '%s' during 'foreach' "
			   "iteration",
			   fc->arr->name);
	}
	return 0;
}

static int fe_stmt(struct stmt *s, void *arg)
{
	struct fe_ctx *fc = arg;
	if (s->kind == S_DELETE) {
		struct vardecl *v = lvalue_var(s->value);
		if (v == fc->arr)
			elab_error(fc->c,
				   s->value->kind == E_INDEX ? s->value->base->tok : s->value->tok,
				   "variable '%s' modified during 'foreach' "
				   "iteration",
				   v->name);
	}
	return 0;
}

static int foreach_stmt(struct stmt *s, void *arg)
{
	struct elab *c = arg;
	if (s->kind != S_FOREACH || !s->array || s->array->kind != E_SYMBOL || !s->array->var)
		return 0;
	struct fe_ctx fc = {c, s->array->var};
	walk_stmt(s->body, fe_stmt, fe_expr, &fc);
	return 0;
}

/* ---- stats ---- */

static void bad_stats(struct elab *c, struct expr *e)
{
	if (e && e->type == T_STATS)
		elab_error(c, e->tok, "invalid type stats");
}

static int hist_same(const struct vardecl *v, const struct expr *h)
{
	if (v->hist_log)
		return !h->hist_linear;
	if (!h->hist_linear || h->args.n != 3)
		return 0;
	int64_t p[3];
	for (int i = 0; i < 3; i++) {
		const struct expr *a = h->args.v[i];
		p[i] = a->kind == E_NUMBER ? a->num : 0;
	}
	return v->hist_lo == p[0] && v->hist_hi == p[1] && v->hist_step == p[2];
}

static void note_hist(struct elab *c, struct expr *h)
{
	struct vardecl *v = lvalue_var(h->left);
	if (!v)
		return;
	if (v->hist_linear || v->hist_log) {
		if (!hist_same(v, h))
			elab_error(c, h->tok, "multiple histogram types declared on '%s%s'",
				   v->is_global ? "__global_" : "", v->name);
		return;
	}
	v->hist_tok = h->tok;
	if (!h->hist_linear) {
		v->hist_log = 1;
		return;
	}
	v->hist_linear = 1;
	int64_t p[3] = {0, 0, 0};
	for (int i = 0; i < 3 && i < h->args.n; i++) {
		const struct expr *a = h->args.v[i];
		p[i] = a->kind == E_NUMBER ? a->num : 0;
	}
	v->hist_lo = p[0];
	v->hist_hi = p[1];
	v->hist_step = p[2];
}

static int stats_expr(struct expr *e, void *arg)
{
	struct elab *c = arg;
	switch (e->kind) {
	case E_HIST:
		note_hist(c, e);
		break;
	case E_ASSIGN:
		if (e->op && strcmp(e->op, "<<<"))
			bad_stats(c, e->right);
		break;
	case E_BINARY:
	case E_LOGICAL:
	case E_COMPARE:
	case E_CONCAT:
		bad_stats(c, e->left);
		bad_stats(c, e->right);
		break;
	default:
		break;
	}
	return 0;
}

static int stats_stmt(struct stmt *s, void *arg)
{
	if (s->kind == S_RETURN)
		bad_stats(arg, s->value);
	return 0;
}

static void check_locals(struct elab *c, struct vec *locals)
{
	struct vardecl *v;
	vec_foreach (struct vardecl *, v, locals)
		if (v->type == T_STATS)
			elab_error(c, v->tok,
				   "stat locals not supported, missing global "
				   "declaration? ");
}

static void check_body(struct elab *c, struct stmt *body)
{
	walk_stmt(body, foreach_stmt, NULL, c);
	walk_stmt(body, stats_stmt, stats_expr, c);
}

void elab_check(struct elab *c)
{
	struct probe *p;
	vec_foreach (struct probe *, p, &c->bodies) {
		check_locals(c, &p->locals);
		check_body(c, p->body);
	}
	struct functiondecl *fd;
	vec_foreach (struct functiondecl *, fd, &c->s->functions) {
		check_locals(c, &fd->locals);
		check_locals(c, &fd->formals);
		check_body(c, fd->body);
	}
}
