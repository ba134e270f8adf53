/* Constant folding, part of elision (skipped under -u) as in SystemTap:
 * operators on literals become literals, "x + 0" becomes "x", and if /
 * ?: / while with a literal condition keep only the branch taken.
 * Division by zero is left alone: it is a run-time error. */
#include <string.h>

#include "elaborate.h"

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
	else if (!strcmp(op, ">>>"))
		*out = (int64_t)(ua >> b);
	else
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
	vec_foreach(struct expr *, x, &e->args) fold(x, changed);
	int64_t v;
	switch (e->kind) {
	case E_BINARY:
		if (is_num(e->left) && is_num(e->right) && fold_binary(e, &v)) {
			to_num(e, v);
			*changed = 1;
		} else if (!strcmp(e->op, "+") && is_num(e->left) &&
			   e->left->num == 0) {
			*e = *e->right;
			*changed = 1;
		} else if ((!strcmp(e->op, "+") || !strcmp(e->op, "-")) &&
			   is_num(e->right) && e->right->num == 0) {
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
			to_num(e, compare(e->op, strcmp(e->left->str,
							e->right->str)));
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
			const char *s = xasprintf("%s%s", e->left->str,
						  e->right->str);
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
				memset(&s->stmts, 0, sizeof s->stmts);
				s->kind = S_BLOCK;
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
			memset(&s->stmts, 0, sizeof s->stmts);
			s->kind = S_BLOCK;
		}
		return 0;
	default:
		return 0;
	}
}

int elab_fold(struct stmt *body)
{
	int changed = 0;
	walk_stmt(body, fold_stmt_cb, fold_expr_cb, &changed);
	return changed;
}
