/* Generic AST walking and deep copies for pass 2. */
#include <string.h>

#include "elaborate.h"

void walk_expr(struct expr *e, expr_visit_fn ef, void *arg)
{
	if (!e)
		return;
	if (ef && ef(e, arg))
		return;
	struct expr *x;
	walk_expr(e->base, ef, arg);
	walk_expr(e->left, ef, arg);
	walk_expr(e->cond, ef, arg);
	walk_expr(e->right, ef, arg);
	vec_foreach (struct expr *, x, &e->args)
		walk_expr(x, ef, arg);
	struct tcomp *tc;
	vec_foreach (struct tcomp *, tc, &e->comps)
		if (tc->kind == TC_INDEX_EXPR)
			walk_expr(tc->index, ef, arg);
}

void walk_stmt(struct stmt *st, stmt_visit_fn sf, expr_visit_fn ef, void *arg)
{
	if (!st)
		return;
	if (sf && sf(st, arg))
		return;
	struct stmt *sub;
	struct expr *x;
	switch (st->kind) {
	case S_BLOCK:
		vec_foreach (struct stmt *, sub, &st->stmts)
			walk_stmt(sub, sf, ef, arg);
		break;
	case S_TRY:
		walk_stmt(st->body, sf, ef, arg);
		walk_expr(st->catch_var, ef, arg);
		walk_stmt(st->catch_body, sf, ef, arg);
		break;
	case S_EXPR:
	case S_RETURN:
	case S_DELETE:
		walk_expr(st->value, ef, arg);
		break;
	case S_IF:
		walk_expr(st->cond, ef, arg);
		walk_stmt(st->then, sf, ef, arg);
		walk_stmt(st->els, sf, ef, arg);
		break;
	case S_FOR:
		walk_expr(st->init, ef, arg);
		walk_expr(st->cond, ef, arg);
		walk_expr(st->incr, ef, arg);
		walk_stmt(st->body, sf, ef, arg);
		break;
	case S_FOREACH:
		vec_foreach (struct expr *, x, &st->indexes)
			walk_expr(x, ef, arg);
		walk_expr(st->value_var, ef, arg);
		walk_expr(st->array, ef, arg);
		vec_foreach (struct expr *, x, &st->array_slice)
			walk_expr(x, ef, arg);
		walk_expr(st->limit, ef, arg);
		walk_stmt(st->body, sf, ef, arg);
		break;
	default:
		break;
	}
}

static void copy_vec_expr(struct vec *dst, const struct vec *src)
{
	memset(dst, 0, sizeof *dst);
	for (int i = 0; i < src->n; i++)
		vec_push(dst, elab_copy_expr(src->v[i]));
}

struct expr *elab_copy_expr(const struct expr *e)
{
	if (!e)
		return NULL;
	struct expr *n = xmalloc(sizeof *n);
	*n = *e;
	n->base = elab_copy_expr(e->base);
	n->left = elab_copy_expr(e->left);
	n->right = elab_copy_expr(e->right);
	n->cond = elab_copy_expr(e->cond);
	copy_vec_expr(&n->args, &e->args);
	memset(&n->referents, 0, sizeof n->referents);
	for (int i = 0; i < e->referents.n; i++)
		vec_push(&n->referents, e->referents.v[i]);
	memset(&n->comps, 0, sizeof n->comps);
	for (int i = 0; i < e->comps.n; i++) {
		struct tcomp *tc = xmalloc(sizeof *tc);
		*tc = *(struct tcomp *)e->comps.v[i];
		tc->index = elab_copy_expr(tc->index);
		vec_push(&n->comps, tc);
	}
	return n;
}

struct stmt *elab_copy_stmt(const struct stmt *s)
{
	if (!s)
		return NULL;
	struct stmt *n = xmalloc(sizeof *n);
	*n = *s;
	memset(&n->stmts, 0, sizeof n->stmts);
	for (int i = 0; i < s->stmts.n; i++)
		vec_push(&n->stmts, elab_copy_stmt(s->stmts.v[i]));
	n->body = elab_copy_stmt(s->body);
	n->catch_body = elab_copy_stmt(s->catch_body);
	n->catch_var = elab_copy_expr(s->catch_var);
	n->value = elab_copy_expr(s->value);
	n->cond = elab_copy_expr(s->cond);
	n->then = elab_copy_stmt(s->then);
	n->els = elab_copy_stmt(s->els);
	n->init = elab_copy_expr(s->init);
	n->incr = elab_copy_expr(s->incr);
	copy_vec_expr(&n->indexes, &s->indexes);
	n->value_var = elab_copy_expr(s->value_var);
	n->array = elab_copy_expr(s->array);
	copy_vec_expr(&n->array_slice, &s->array_slice);
	n->limit = elab_copy_expr(s->limit);
	return n;
}

struct probe *elab_copy_probe(const struct probe *p, struct stmt *body)
{
	struct probe *n = xcalloc(1, sizeof *n);

	*n = *p;
	memset(&n->locals, 0, sizeof n->locals);
	n->in_bodies = n->nderived = 0;
	n->body = body;
	return n;
}
