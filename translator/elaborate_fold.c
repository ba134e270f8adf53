/* Constant folding after type checking (also under -u), as SystemTap
 * does: operators on literals become literals, "x + 0" becomes "x", if /
 * ?: / while with a literal condition keep only the branch taken, and
 * statements after a jump go. Division by zero is left alone: it is a
 * run-time error. */
#include <string.h>

#include "diag.h"
#include "elaborate.h"

/* Errors folding found (elab_fold_errors takes them), and the nodes they
 * were found at (folding runs until nothing changes: one message each). */
static int fold_errors;
static struct vec fold_error_nodes;

int elab_fold_errors(void)
{
	int n = fold_errors;
	fold_errors = 0;
	return n;
}

static int is_num(const struct expr *e)
{
	return e && e->kind == E_NUMBER;
}

static int is_str(const struct expr *e)
{
	return e && e->kind == E_STRING;
}

static void to_num(struct expr *e, int64_t v)
{
	e->kind = E_NUMBER;
	e->num = v;
	e->left = e->right = e->cond = NULL;
	e->op = NULL;
}

static int fold_binary(struct expr *e, int64_t *out)
{
	int64_t a = e->left->num, b = e->right->num;
	uint64_t ua = (uint64_t)a;
	const char *op = e->op;
	if (!strcmp(op, "+"))
		*out = (int64_t)(ua + (uint64_t)b);
	else if (!strcmp(op, "-"))
		*out = (int64_t)(ua - (uint64_t)b);
	else if (!strcmp(op, "*"))
		*out = (int64_t)(ua * (uint64_t)b);
	else if (!strcmp(op, "/") || !strcmp(op, "%")) {
		if (b == 0 || (a == INT64_MIN && b == -1))
			return 0;
		*out = op[0] == '/' ? a / b : a % b;
	} else if (!strcmp(op, "&"))
		*out = a & b;
	else if (!strcmp(op, "|"))
		*out = a | b;
	else if (!strcmp(op, "^"))
		*out = a ^ b;
	else if (b < 0 || b > 63)
		return 0;
	else if (!strcmp(op, "<<"))
		*out = (int64_t)(ua << b);
	else if (!strcmp(op, ">>"))
		*out = a >> b;
	else if (!strcmp(op, ">>>")) {
		/* SystemTap 4.8's folding does not know >>> (its code does):
		 * two literals are an error there, with no location */
		for (int i = 0; i < fold_error_nodes.n; i++)
			if (fold_error_nodes.v[i] == e)
				return 0;
		vec_push(&fold_error_nodes, e);
		diag_semantic_error(NULL, "unsupported binary operator %s", op);
		fold_errors++;
		return 0;
	} else
		return 0;
	return 1;
}

static int compare(const char *op, int c)
{
	if (!strcmp(op, "<"))
		return c < 0;
	if (!strcmp(op, ">"))
		return c > 0;
	if (!strcmp(op, "<="))
		return c <= 0;
	if (!strcmp(op, ">="))
		return c >= 0;
	if (!strcmp(op, "=="))
		return c == 0;
	return c != 0;
}

static int fold_expr_cb(struct expr *e, void *arg);

static void fold(struct expr *e, int *changed)
{
	walk_expr(e, fold_expr_cb, changed);
}

/* Post-order: fold the operands first, then this node. */
static int fold_expr_cb(struct expr *e, void *arg)
{
	int *changed = arg;
	fold(e->left, changed);
	fold(e->right, changed);
	fold(e->cond, changed);
	struct expr *x;
	vec_foreach (struct expr *, x, &e->args)
		fold(x, changed);
	int64_t v;
	switch (e->kind) {
	case E_BINARY:
		if (is_num(e->left) && is_num(e->right) && fold_binary(e, &v)) {
			to_num(e, v);
			*changed = 1;
		} else if (!strcmp(e->op, "+") && is_num(e->left) && e->left->num == 0) {
			*e = *e->right;
			*changed = 1;
		} else if ((!strcmp(e->op, "+") || !strcmp(e->op, "-")) && is_num(e->right) &&
			   e->right->num == 0) {
			*e = *e->left;
			*changed = 1;
		}
		break;
	case E_UNARY:
		if (!is_num(e->left))
			break;
		v = e->left->num;
		if (!strcmp(e->op, "-"))
			v = (int64_t)(0 - (uint64_t)v);
		else if (!strcmp(e->op, "!"))
			v = !v;
		else if (!strcmp(e->op, "~"))
			v = ~v;
		to_num(e, v);
		*changed = 1;
		break;
	case E_COMPARE:
		if (is_num(e->left) && is_num(e->right)) {
			int64_t a = e->left->num, b = e->right->num;
			to_num(e, compare(e->op, (a > b) - (a < b)));
			*changed = 1;
		} else if (is_str(e->left) && is_str(e->right)) {
			to_num(e, compare(e->op, strcmp(e->left->str, e->right->str)));
			*changed = 1;
		}
		break;
	case E_LOGICAL:
		if (is_num(e->left) && is_num(e->right)) {
			int a = e->left->num != 0, b = e->right->num != 0;
			to_num(e, e->op[0] == '&' ? (a && b) : (a || b));
			*changed = 1;
		}
		break;
	case E_CONCAT:
		if (is_str(e->left) && is_str(e->right)) {
			const char *s = xasprintf("%s%s", e->left->str, e->right->str);
			e->kind = E_STRING;
			e->str = s;
			e->left = e->right = NULL;
			*changed = 1;
		}
		break;
	case E_TERNARY:
		/* Mixed literal types are left for type checking to report. */
		if (is_num(e->cond) &&
		    !((is_num(e->left) && is_str(e->right)) ||
		      (is_str(e->left) && is_num(e->right)))) {
			*e = e->cond->num ? *e->left : *e->right;
			*changed = 1;
		}
		break;
	default:
		break;
	}
	return 1; /* children done above */
}

/* Under -u a statement folded away stays as ";" (SystemTap prints it). */
static int keep_null;

static void drop(struct stmt *s)
{
	memset(&s->stmts, 0, sizeof s->stmts);
	s->kind = keep_null ? S_NULL : S_BLOCK;
}

static int fold_stmt_cb(struct stmt *s, void *arg)
{
	int *changed = arg;
	switch (s->kind) {
	case S_IF:
		fold(s->cond, changed);
		if (!is_num(s->cond))
			return 0;
		{
			struct stmt *keep = s->cond->num ? s->then : s->els;
			*changed = 1;
			if (keep) {
				*s = *keep;
				walk_stmt(s, fold_stmt_cb, fold_expr_cb, changed);
			} else {
				drop(s);
			}
		}
		return 1;
	case S_FOR:
		fold(s->cond, changed);
		if (!is_num(s->cond) || s->cond->num)
			return 0;
		*changed = 1;
		if (s->init) {
			s->kind = S_EXPR;
			s->value = s->init;
		} else {
			drop(s);
		}
		return 0;
	default:
		return 0;
	}
}

/* Statements after next/return/break/continue in a block never run. */
static int is_jump(const struct stmt *s)
{
	return s->kind == S_NEXT || s->kind == S_RETURN || s->kind == S_BREAK ||
	    s->kind == S_CONTINUE;
}

static int dead_code_cb(struct stmt *s, void *arg)
{
	int *changed = arg;
	if (s->kind != S_BLOCK)
		return 0;
	for (int i = 0; i < s->stmts.n; i++)
		if (is_jump(s->stmts.v[i]) && i + 1 < s->stmts.n) {
			s->stmts.n = i + 1;
			*changed = 1;
		}
	return 0;
}

int elab_fold(struct stmt *body, int unoptimized)
{
	int changed = 0;
	keep_null = unoptimized;
	walk_stmt(body, fold_stmt_cb, fold_expr_cb, &changed);
	walk_stmt(body, dead_code_cb, NULL, &changed);
	return changed;
}

void elab_fold_unoptimized(struct elab *c)
{
	struct probe *p;
	vec_foreach (struct probe *, p, &c->bodies)
		elab_fold(p->body, 1);
	struct functiondecl *fd;
	vec_foreach (struct functiondecl *, fd, &c->s->functions)
		elab_fold(fd->body, 1);
}

struct defined_walk {
	struct vec *nodes;
	int found;
};

static int find_defined(struct expr *e, void *arg)
{
	struct defined_walk *dw = arg;
	for (int i = 0; i < dw->nodes->n; i++)
		if (dw->nodes->v[i] == e)
			dw->found = 1;
	return dw->found;
}

static int defined_if_cb(struct stmt *s, void *arg)
{
	struct defined_walk *dw = arg;
	if (s->kind != S_IF)
		return 0;
	dw->found = 0;
	walk_expr(s->cond, find_defined, dw);
	if (!dw->found)
		return 0;
	int changed = 0;
	keep_null = 0;
	fold_stmt_cb(s, &changed);
	return 0;
}

static struct defined_walk cur_dw_store, *cur_dw = &cur_dw_store;

static int defined_ternary_cb(struct expr *e, void *arg)
{
	(void)arg;
	if (e->kind != E_TERNARY)
		return 0;
	cur_dw->found = 0;
	walk_expr(e->cond, find_defined, cur_dw);
	if (!cur_dw->found)
		return 0;
	int changed = 0;
	fold(e->cond, &changed);
	if (is_num(e->cond)) {
		*e = e->cond->num ? *e->left : *e->right;
		walk_expr(e, defined_ternary_cb, NULL);
		return 1;
	}
	return 0;
}

void elab_fold_defined(struct elab *c)
{
	if (!c->defined_nodes.n)
		return;
	cur_dw->nodes = &c->defined_nodes;
	struct probe *p;
	vec_foreach (struct probe *, p, &c->bodies)
		walk_stmt(p->body, defined_if_cb, defined_ternary_cb, cur_dw);
	struct functiondecl *fd;
	vec_foreach (struct functiondecl *, fd, &c->s->functions)
		walk_stmt(fd->body, defined_if_cb, defined_ternary_cb, cur_dw);
}
