/* Pass 3: expressions. Each expression becomes one C expression, using GNU
 * statement expressions ({ ... }) where operands must be evaluated in
 * SystemTap's left-to-right order or an error must leave the statement.
 *
 * Longs are int64_t with wrap-around done in unsigned arithmetic (the C
 * has no signed overflow); strings are `const char *` pointing at a
 * literal, a variable or a frame temporary of MAXSTRINGLEN bytes. */
#include "emit.h"
#include "elaborate.h"

#include <string.h>

static int is(const char *a, const char *b)
{
	return a && strcmp(a, b) == 0;
}

char *emit_to_string(struct emitter *E, const struct expr *e)
{
	struct strbuf b = {0}, *save = E->o;
	E->o = &b;
	emit_expr(E, e);
	E->o = save;
	return sb_take(&b);
}
#define X(e) emit_to_string(E, (e))

int emit_has_side_effects(const struct expr *e)
{
	if (!e)
		return 0;
	switch (e->kind) {
	case E_CALL:
	case E_ASSIGN:
	case E_PRE_INC:
	case E_POST_INC:
	case E_PRINT:
	case E_EMBEDDED:
	case E_REGEX:
		return 1;
	default:
		break;
	}
	struct expr *x;
	vec_foreach (struct expr *, x, &e->args)
		if (emit_has_side_effects(x))
			return 1;
	return emit_has_side_effects(e->left) || emit_has_side_effects(e->right) ||
	    emit_has_side_effects(e->cond) || emit_has_side_effects(e->base);
}

/* A string value that stays valid while other operands are evaluated. */
static int stable_string(const struct expr *e)
{
	switch (e->kind) {
	case E_STRING:
	case E_CONCAT:
	case E_CALL:
	case E_INDEX:
	case E_PRINT:
		return 1;
	default:
		return 0;
	}
}

/* ---- operators on longs ---- */

/* The C text of A OP B for operand texts without side effects. */
static char *long_op(struct emitter *E, const char *op, const char *a, const char *b,
		     const struct token *tok)
{
	if (is(op, "+") || is(op, "-") || is(op, "*"))
		return xasprintf("((int64_t)((uint64_t)(%s) %s (uint64_t)(%s)))", a, op, b);
	if (is(op, "&") || is(op, "|") || is(op, "^"))
		return xasprintf("((%s) %s (%s))", a, op, b);
	if (is(op, "<<"))
		return xasprintf("_stp_shl64(%s, %s)", a, b);
	if (is(op, ">>"))
		return xasprintf("_stp_shr64(%s, %s)", a, b);
	if (is(op, ">>>"))
		return xasprintf("_stp_lshr64(%s, %s)", a, b);
	if (is(op, "/") || is(op, "%")) {
		struct strbuf b2 = {0}, *save = E->o;
		E->o = &b2;
		emit_raw(E, "({ if (%s == 0) ", b);
		emit_fail(E, "\"division by 0\"", tok);
		if (is(op, "/"))
			emit_raw(E, " (%s == -1) ? (int64_t)(0 - (uint64_t)(%s)) : (%s) / (%s); })",
				 b, a, a, b);
		else
			emit_raw(E, " (%s == -1) ? (int64_t)0 : (%s) %% (%s); })", b, a, b);
		E->o = save;
		return sb_take(&b2);
	}
	emit_error(E, tok, "unsupported operator '%s'", op);
	return xstrdup("0");
}

static void binary_long(struct emitter *E, const struct expr *e)
{
	int id = emit_id(E);
	char *a = X(e->left), *b = X(e->right);
	char *an = xasprintf("a%d", id), *bn = xasprintf("b%d", id);
	emit_raw(E, "({ int64_t %s = %s; int64_t %s = %s; %s; })", an, a, bn, b,
		 long_op(E, e->op, an, bn, e->tok));
}

static void compare(struct emitter *E, const struct expr *e)
{
	int id = emit_id(E);
	if (e->left->type == T_STRING || e->right->type == T_STRING) {
		char *a = X(e->left);
		if (!stable_string(e->left) && emit_has_side_effects(e->right)) {
			const char *t = emit_strtmp(E);
			a = xasprintf("(_stp_strlcpy(%s, %s, MAXSTRINGLEN), %s)", t, a, t);
		}
		char *b = X(e->right);
		emit_raw(E,
			 "({ const char *a%d = %s; const char *b%d = %s; "
			 "(int64_t)(__builtin_strcmp(a%d, b%d) %s 0); })",
			 id, a, id, b, id, id, e->op);
		return;
	}
	emit_raw(E, "({ int64_t a%d = %s; int64_t b%d = %s; (int64_t)(a%d %s b%d); })", id,
		 X(e->left), id, X(e->right), id, e->op, id);
}

static void concat(struct emitter *E, const struct expr *e)
{
	const char *t = emit_strtmp(E);
	char *a = X(e->left), *b = X(e->right);
	emit_raw(E,
		 "({ _stp_strlcpy(%s, %s, MAXSTRINGLEN); _stp_strlcat(%s, %s, MAXSTRINGLEN); "
		 "(const char *)%s; })",
		 t, a, t, b, t);
}

static void unary(struct emitter *E, const struct expr *e)
{
	char *a = X(e->left);
	if (is(e->op, "-"))
		emit_raw(E, "((int64_t)(0 - (uint64_t)(%s)))", a);
	else if (is(e->op, "!"))
		emit_raw(E, "((int64_t)!(%s))", a);
	else if (is(e->op, "~"))
		emit_raw(E, "(~(int64_t)(%s))", a);
	else
		emit_raw(E, "(%s)", a);
}

/* ---- arrays ---- */

const char *emit_map(struct emitter *E, const struct expr *base)
{
	if (base && base->kind == E_SYMBOL && base->var && base->var->arity > 0)
		return emit_var(base->var);
	emit_error(E, base ? base->tok : NULL, "not an array");
	return "((struct _stp_map *)0)";
}

const char *emit_keys(struct emitter *E, const struct vec *indexes)
{
	int id = emit_id(E);
	struct expr *x;
	emit_raw(E, "struct _stp_val k%d[%d]; ", id, indexes->n ? indexes->n : 1);
	vec_foreach (struct expr *, x, indexes) {
		if (!x) {
			emit_error(E, NULL, "'*' is not allowed here");
			continue;
		}
		char *v = X(x);
		if (x->type == T_STRING) {
			if (!stable_string(x)) {
				const char *t = emit_strtmp(E);
				emit_raw(E, "_stp_strlcpy(%s, %s, MAXSTRINGLEN); ", t, v);
				v = xstrdup(t);
			}
			emit_raw(E, "k%d[%d].n = 0; k%d[%d].s = %s; ", id, x_i, id, x_i, v);
		} else {
			emit_raw(E, "k%d[%d].n = %s; k%d[%d].s = 0; ", id, x_i, v, id, x_i);
		}
	}
	return xasprintf("k%d", id);
}

/* "c->last_stmt = LOC; " before a runtime call that may fail. */
static void at(struct emitter *E, const struct token *t)
{
	emit_raw(E, "c->last_stmt = %s; ", emit_tokloc(t));
}

static void check(struct emitter *E)
{
	emit_raw(E, "if (__builtin_expect(c->last_error != 0, 0)) goto %s; ", E->err_label);
}

static void index_read(struct emitter *E, const struct expr *e)
{
	if (e->base && e->base->kind == E_HIST) {
		int id = emit_id(E);
		const struct expr *idx = e->args.n ? vec_at(&e->args, 0) : NULL;
		emit_raw(E, "({ const struct _stp_stat *s%d = ", id);
		emit_stat_ref(E, e->base->left);
		emit_raw(E, "; int64_t b%d = %s; ", id, idx ? X(idx) : "0");
		at(E, e->tok);
		emit_raw(E, "int64_t v%d = _stp_stat_hist_bucket(c, s%d, b%d); ", id, id, id);
		check(E);
		emit_raw(E, "v%d; })", id);
		return;
	}
	const char *m = emit_map(E, e->base);
	emit_raw(E, "({ ");
	const char *k = emit_keys(E, &e->args);
	if (e->type == T_STRING) {
		const char *t = emit_strtmp(E);
		emit_raw(E, "_stp_map_get_str(%s, %s, %s); (const char *)%s; })", m, k, t, t);
	} else if (e->type == T_STATS) {
		emit_raw(E, "_stp_map_get_stat(%s, %s); })", m, k);
	} else {
		emit_raw(E, "_stp_map_get_long(%s, %s); })", m, k);
	}
}

void emit_stat_ref(struct emitter *E, const struct expr *e)
{
	if (e->kind == E_SYMBOL && e->var && e->var->arity == 0) {
		emit_raw(E, "((const struct _stp_stat *)%s)", emit_var(e->var));
		return;
	}
	if (e->kind == E_INDEX) {
		const char *m = emit_map(E, e->base);
		emit_raw(E, "({ ");
		const char *k = emit_keys(E, &e->args);
		emit_raw(E, "_stp_map_get_stat(%s, %s); })", m, k);
		return;
	}
	emit_error(E, e->tok, "expected a statistics value");
	emit_raw(E, "((const struct _stp_stat *)0)");
}

static const char *stat_op(const char *op)
{
	if (!op)
		return "STP_COUNT";
	if (strstr(op, "count"))
		return "STP_COUNT";
	if (strstr(op, "sum"))
		return "STP_SUM";
	if (strstr(op, "min"))
		return "STP_MIN";
	if (strstr(op, "max"))
		return "STP_MAX";
	if (strstr(op, "avg"))
		return "STP_AVG";
	return "STP_VARIANCE";
}

/* @variance(x, N): the stat must be created with that shift. */
static void note_variance(struct emitter *E, const struct expr *e)
{
	const struct expr *n = e->args.n ? vec_at(&e->args, 0) : NULL;
	const struct expr *x = e->left;
	if (!n || n->kind != E_NUMBER || !x)
		return;
	if (x->kind == E_INDEX)
		x = x->base;
	if (x && x->kind == E_SYMBOL && x->var) {
		struct emit_variance *v = xmalloc(sizeof *v);
		v->var = x->var;
		v->shift = (int)n->num;
		vec_push(&E->variance, v);
	}
}

static void stat_expr(struct emitter *E, const struct expr *e)
{
	int id = emit_id(E);
	note_variance(E, e);
	emit_raw(E, "({ const struct _stp_stat *s%d = ", id);
	emit_stat_ref(E, e->left);
	emit_raw(E, "; ");
	at(E, e->tok);
	emit_raw(E, "int64_t v%d = _stp_stat_get(c, s%d, %s); ", id, id, stat_op(e->op));
	check(E);
	emit_raw(E, "v%d; })", id);
}

int emit_has_wildcard(const struct vec *indexes)
{
	struct expr *x;
	vec_foreach (struct expr *, x, indexes)
		if (!x)
			return 1;
	return 0;
}

const char *emit_slice_keys(struct emitter *E, const struct vec *indexes, unsigned *mask)
{
	int id = emit_id(E);
	struct expr *x;
	*mask = 0;
	emit_raw(E, "struct _stp_val sk%d[%d]; ", id, indexes->n ? indexes->n : 1);
	vec_foreach (struct expr *, x, indexes) {
		if (!x) {
			emit_raw(E, "sk%d[%d].n = 0; sk%d[%d].s = 0; ", id, x_i, id, x_i);
			continue;
		}
		*mask |= 1u << x_i;
		char *v = X(x);
		if (x->type == T_STRING) {
			const char *t = emit_strtmp(E);
			emit_raw(E, "_stp_strlcpy(%s, %s, MAXSTRINGLEN); ", t, v);
			emit_raw(E, "sk%d[%d].n = 0; sk%d[%d].s = %s; ", id, x_i, id, x_i, t);
		} else {
			emit_raw(E, "sk%d[%d].n = %s; sk%d[%d].s = 0; ", id, x_i, v, id, x_i);
		}
	}
	return xasprintf("sk%d", id);
}

static void in_expr(struct emitter *E, const struct expr *e)
{
	const char *m = emit_map(E, e->base);
	if (emit_has_wildcard(&e->args)) {
		/* [k, *] in a: is there any entry matching the given keys? */
		int id = emit_id(E);
		unsigned mask;
		emit_raw(E, "({ ");
		const char *sk = emit_slice_keys(E, &e->args, &mask);
		emit_raw(
		    E,
		    "struct _stp_map_iter *it%d = _stp_map_iter_start(%s, -1, 1, STP_COUNT, 1, "
		    "%s, %uu); int64_t v%d = _stp_map_iter_next(it%d); _stp_map_iter_end(it%d); "
		    "v%d; })",
		    id, m, sk, mask, id, id, id, id);
		return;
	}
	emit_raw(E, "({ ");
	const char *k = emit_keys(E, &e->args);
	emit_raw(E, "(int64_t)_stp_map_exists(%s, %s); })", m, k);
}

/* ---- assignment and ++/-- ---- */

static const char *compound_op(const char *op)
{
	static char buf[8];
	size_t n = strlen(op);
	if (n < 2 || op[n - 1] != '=')
		return NULL;
	memcpy(buf, op, n - 1);
	buf[n - 1] = 0;
	return buf;
}

static void assign_scalar(struct emitter *E, const struct expr *e, const char *lv)
{
	int id = emit_id(E);
	const struct expr *l = e->left;
	char *r = X(e->right);
	if (is(e->op, "<<<")) {
		emit_raw(E, "({ int64_t r%d = %s; _stp_stat_add(%s, r%d); r%d; })", id, r, lv, id,
			 id);
	} else if (l->type == T_STRING) {
		if (is(e->op, ".=")) {
			const char *t = emit_strtmp(E);
			emit_raw(E,
				 "({ _stp_strlcpy(%s, %s, MAXSTRINGLEN); _stp_strlcat(%s, %s, "
				 "MAXSTRINGLEN); (const char *)%s; })",
				 t, r, lv, t, lv);
		} else {
			emit_raw(E,
				 "({ const char *r%d = %s; if (r%d != %s) _stp_strlcpy(%s, r%d, "
				 "MAXSTRINGLEN); (const char *)%s; })",
				 id, r, id, lv, lv, id, lv);
		}
	} else if (is(e->op, "=")) {
		emit_raw(E, "({ int64_t r%d = %s; %s = r%d; r%d; })", id, r, lv, id, id);
	} else {
		char *rn = xasprintf("r%d", id), *on = xasprintf("o%d", id);
		emit_raw(E, "({ int64_t %s = %s; int64_t %s = %s; %s = %s; %s; })", rn, r, on, lv,
			 lv, long_op(E, compound_op(e->op), on, rn, e->tok), lv);
	}
}

static void assign_index(struct emitter *E, const struct expr *e)
{
	int id = emit_id(E);
	const struct expr *l = e->left;
	const char *m = emit_map(E, l->base);
	emit_raw(E, "({ ");
	const char *k = emit_keys(E, &l->args);
	char *r = X(e->right);
	if (is(e->op, "<<<")) {
		emit_raw(E, "int64_t r%d = %s; ", id, r);
		at(E, l->base && l->base->tok ? l->base->tok : l->tok);
		emit_raw(E, "_stp_map_add_stat(c, %s, %s, r%d); ", m, k, id);
		check(E);
		emit_raw(E, "r%d; })", id);
	} else if (l->type == T_STRING) {
		emit_raw(E, "const char *r%d = %s; ", id, r);
		if (is(e->op, ".=")) {
			const char *t = emit_strtmp(E);
			emit_raw(E, "{ char *t%d = %s; _stp_map_get_str(%s, %s, t%d); ", id, t, m,
				 k, id);
			emit_raw(E, "_stp_strlcat(t%d, r%d, MAXSTRINGLEN); r%d = t%d; } ", id, id,
				 id, id);
		}
		at(E, l->base && l->base->tok ? l->base->tok : l->tok);
		emit_raw(E, "_stp_map_set_str(c, %s, %s, r%d); ", m, k, id);
		check(E);
		emit_raw(E, "r%d; })", id);
	} else {
		emit_raw(E, "int64_t r%d = %s; ", id, r);
		if (!is(e->op, "=")) {
			char *on = xasprintf("o%d", id), *rn = xasprintf("r%d", id);
			emit_raw(E, "int64_t %s = _stp_map_get_long(%s, %s); ", on, m, k);
			emit_raw(E, "r%d = %s; ", id,
				 long_op(E, compound_op(e->op), on, rn, e->tok));
		}
		at(E, l->base && l->base->tok ? l->base->tok : l->tok);
		emit_raw(E, "_stp_map_set_long(c, %s, %s, r%d); ", m, k, id);
		check(E);
		emit_raw(E, "r%d; })", id);
	}
}

static void assign(struct emitter *E, const struct expr *e)
{
	const struct expr *l = e->left;
	if (l->kind == E_SYMBOL && l->var && l->var->arity <= 0)
		assign_scalar(E, e, emit_var(l->var));
	else if (l->kind == E_INDEX && l->base && l->base->kind == E_SYMBOL)
		assign_index(E, e);
	else {
		emit_error(E, l->tok, "unsupported assignment target");
		emit_raw(E, "0");
	}
}

static void incdec(struct emitter *E, const struct expr *e)
{
	int id = emit_id(E), pre = e->kind == E_PRE_INC;
	const char *d = is(e->op, "--") ? "-" : "+";
	const struct expr *l = e->left;
	if (l->kind == E_SYMBOL && l->var && l->var->arity <= 0) {
		const char *lv = emit_var(l->var);
		emit_raw(E, "({ int64_t o%d = %s; %s = (int64_t)((uint64_t)o%d %s 1); %s; })", id,
			 lv, lv, id, d, pre ? lv : xasprintf("o%d", id));
		return;
	}
	if (l->kind == E_INDEX && l->base && l->base->kind == E_SYMBOL) {
		const char *m = emit_map(E, l->base);
		emit_raw(E, "({ ");
		const char *k = emit_keys(E, &l->args);
		emit_raw(E, "int64_t o%d = _stp_map_get_long(%s, %s); ", id, m, k);
		emit_raw(E, "int64_t n%d = (int64_t)((uint64_t)o%d %s 1); ", id, id, d);
		at(E, l->base && l->base->tok ? l->base->tok : l->tok);
		emit_raw(E, "_stp_map_set_long(c, %s, %s, n%d); ", m, k, id);
		check(E);
		emit_raw(E, "%s%d; })", pre ? "n" : "o", id);
		return;
	}
	emit_error(E, l->tok, "unsupported ++/-- operand");
	emit_raw(E, "0");
}

/* ---- calls ---- */

/* One overload's run: the arguments (evaluated once, in a<id>_<i>)
 * copied into its frame, the call, the error check, the result into
 * rv<id> (strings: the callee writes the string temporary T). */
static void call_one(struct emitter *E, const struct expr *e, const struct functiondecl *f, int id,
		     int k, const char *t)
{
	const char *fn = emit_fname(f);
	int n = e->args.n < f->formals.n ? e->args.n : f->formals.n;
	emit_raw(E, "if (__builtin_expect(c->nesting >= MAXNESTING, 0)) ");
	emit_fail(E, "\"MAXNESTING exceeded\"", f->tok);
	emit_raw(E, " struct %s_locals *f%d_%d = &%s[c->nesting]; ", fn, id, k, emit_frames(f));
	for (int i = 0; i < n; i++) {
		const struct vardecl *p = vec_at(&f->formals, i);
		const char *pn = emit_var(p) + 3; /* skip "l->" */
		if (p->type == T_STRING)
			emit_raw(E, "_stp_strlcpy(f%d_%d->%s, a%d_%d, MAXSTRINGLEN); ", id, k, pn,
				 id, i);
		else
			emit_raw(E, "f%d_%d->%s = a%d_%d; ", id, k, pn, id, i);
	}
	if (t)
		emit_raw(E, "f%d_%d->__retvalue = %s; ", id, k, t);
	at(E, e->tok);
	emit_raw(E, "%s(c, f%d_%d); ", fn, id, k);
	/* abort() ends the handler too, without an error. */
	emit_raw(E, "if (__builtin_expect(c->last_error != 0 || c->aborted, 0)) goto %s; ",
		 E->err_label);
	if (!t)
		emit_raw(E, "rv%d = f%d_%d->__retvalue; ", id, id, k);
}

/* A call. Arguments are evaluated first (a nested call of the same
 * function reuses the frame of this depth), then copied into the callee's
 * frame: frames live in per-function static arrays indexed by call depth,
 * as SystemTap keeps them, so neither recursion nor big MAXSTRINGLEN
 * values use the C stack. Overloads run in turn while each says `next`
 * (x_next); a `next` from the last one is an error. */
static void call(struct emitter *E, const struct expr *e)
{
	const struct functiondecl *f = e->func;
	if (!f) {
		emit_error(E, e->tok, "unresolved function call");
		emit_raw(E, "0");
		return;
	}
	int id = emit_id(E), n = e->args.n < f->formals.n ? e->args.n : f->formals.n;
	int many = e->referents.n > 1;
	emit_raw(E, "({ ");
	for (int i = 0; i < n; i++) {
		const struct expr *a = vec_at(&e->args, i);
		const struct vardecl *p = vec_at(&f->formals, i);
		char *v = X(a);
		if (p->type == T_STRING) {
			int later = many;
			for (int j = i + 1; j < n; j++)
				later |= emit_has_side_effects(vec_at(&e->args, j));
			if (later && !stable_string(a)) {
				const char *t = emit_strtmp(E);
				emit_raw(E, "_stp_strlcpy(%s, %s, MAXSTRINGLEN); ", t, v);
				v = xstrdup(t);
			}
			emit_raw(E, "const char *a%d_%d = %s; ", id, i, v);
		} else {
			emit_raw(E, "int64_t a%d_%d = %s; ", id, i, v);
		}
	}
	const char *t = NULL;
	if (f->type == T_STRING)
		t = emit_strtmp(E);
	else
		emit_raw(E, "int64_t rv%d = 0; ", id);
	const char *done = emit_label(E, "fc_end");
	const struct functiondecl *g;
	vec_foreach (const struct functiondecl *, g, &e->referents) {
		call_one(E, e, g, id, g_i, t);
		if (g_i + 1 < e->referents.n)
			emit_raw(E, "if (!x_next) goto %s; ", done);
	}
	emit_raw(E, "%s: __attribute__((unused)); ", done);
	if (elab_may_next(vec_at(&e->referents, e->referents.n - 1))) {
		emit_raw(E, "if (x_next) ");
		emit_fail(E, "\"all functions exhausted\"", e->tok);
	}
	if (t)
		emit_raw(E, "(const char *)%s; })", t);
	else
		emit_raw(E, "rv%d; })", id);
}

static void regex(struct emitter *E, const struct expr *e)
{
	int id = emit_id(E);
	const char *re = e->str ? e->str : (e->right && e->right->str ? e->right->str : "");
	emit_raw(E, "({ const char *s%d = %s; ", id, X(e->left));
	at(E, e->tok);
	emit_raw(E, "int64_t v%d = _stp_regex_match(c, s%d, %s); ", id, id, emit_cstr(re));
	check(E);
	emit_raw(E, "%sv%d; })", is(e->op, "!~") ? "!" : "", id);
}

static void number(struct emitter *E, int64_t n)
{
	if (n == INT64_MIN)
		emit_raw(E, "((int64_t)(-9223372036854775807LL - 1))");
	else
		emit_raw(E, "((int64_t)%lldLL)", (long long)n);
}

void emit_expr(struct emitter *E, const struct expr *e)
{
	if (!e) {
		emit_raw(E, "0");
		return;
	}
	switch (e->kind) {
	case E_NUMBER:
		number(E, e->num);
		break;
	case E_STRING:
		emit_raw(E, "%s", emit_cstr(e->str ? e->str : ""));
		break;
	case E_SYMBOL:
		if (!e->var) {
			emit_error(E, e->tok, "unresolved symbol");
			emit_raw(E, "0");
		} else if (e->var->type == T_STRING) {
			emit_raw(E, "((const char *)%s)", emit_var(e->var));
		} else {
			emit_raw(E, "%s", emit_var(e->var));
		}
		break;
	case E_DEFINED:
		emit_raw(E, "((int64_t)0)");
		break;
	case E_EMBEDDED:
		emit_embedded_expr(E, e);
		break;
	case E_BINARY:
		binary_long(E, e);
		break;
	case E_LOGICAL:
		emit_raw(E, "((int64_t)((%s) %s (%s)))", X(e->left), is(e->op, "||") ? "||" : "&&",
			 X(e->right));
		break;
	case E_COMPARE:
		compare(E, e);
		break;
	case E_CONCAT:
		concat(E, e);
		break;
	case E_UNARY:
		unary(E, e);
		break;
	case E_PRE_INC:
	case E_POST_INC:
		incdec(E, e);
		break;
	case E_TERNARY:
		emit_raw(E, "((%s) ? (%s) : (%s))", X(e->cond), X(e->left), X(e->right));
		break;
	case E_ASSIGN:
		assign(E, e);
		break;
	case E_IN:
		in_expr(E, e);
		break;
	case E_REGEX:
		regex(E, e);
		break;
	case E_CALL:
		call(E, e);
		break;
	case E_PRINT:
		emit_print(E, e);
		break;
	case E_STAT:
		stat_expr(E, e);
		break;
	case E_INDEX:
		index_read(E, e);
		break;
	case E_HIST:
		emit_error(E, e->tok, "a histogram can only be printed or indexed");
		emit_raw(E, "0");
		break;
	case E_TARGET:
	case E_ENTRY:
	case E_CAST:
	case E_ATVAR:
		emit_error(E, e->tok, "target variables are not available in this probe");
		emit_raw(E, "0");
		break;
	}
}
