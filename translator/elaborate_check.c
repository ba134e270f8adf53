/* Checks after type inference: arrays modified inside a foreach over them,
 * stats values used as plain values, stats locals, histogram kinds, and
 * the regular expressions of =~ and !~. */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
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
	} else if (e->kind == E_CALL) {
		struct functiondecl *fd;
		vec_foreach (struct functiondecl *, fd, &e->referents)
			collect_writes_fn(fd, w);
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

/* Whether the call (any overload it may run) writes V. */
static int call_writes(struct expr *call, struct vardecl *v)
{
	struct writes w = {0};
	writes_expr(call, &w);
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
	} else if (e->kind == E_CALL && call_writes(e, fc->arr)) {
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
	/* 'foreach (k in a @sum -)' orders by an aggregate: a must be stats. */
	if (s->sort_aggr && s->array->var->type != T_STATS && s->array->var->type != T_UNKNOWN)
		elab_error(c, s->array->tok, "invalid type %s", exp_type_name(s->array->var->type));
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

/* @variance(x, N), as SystemTap 4.8 checks it once types are known and
 * the code is elided: N in 0..62, and one N other than 0 per statistic
 * (0, or no N, takes the one given before, if any); functions (by name)
 * before probes, and only the first error is reported (its check throws). */
struct variance_check {
	struct elab *c;
	struct vec vars, shifts;
	int failed;
};

static int variance_expr(struct expr *e, void *arg)
{
	struct variance_check *vc = arg;
	if (vc->failed || e->kind != E_STAT || !e->op || strcmp(e->op, "@variance"))
		return 0;
	struct expr *x = e->left && e->left->kind == E_INDEX ? e->left->base : e->left;
	struct expr *n = e->args.n ? e->args.v[0] : NULL;
	if (!x || x->kind != E_SYMBOL || !x->var || (n && n->kind != E_NUMBER))
		return 0;
	if (n && (n->num < 0 || n->num > 62)) {
		elab_error(vc->c, e->tok, "bit shift (%lld) out of range <0..62>",
			   (long long)n->num);
		vc->failed = 1;
		return 0;
	}
	intptr_t shift = n ? (intptr_t)n->num : 0;
	int i = 0;
	while (i < vc->vars.n && vc->vars.v[i] != x->var)
		i++;
	intptr_t prev = i < vc->vars.n ? (intptr_t)vc->shifts.v[i] : 0;
	if (prev && prev != shift) {
		elab_error(vc->c, e->tok, "conflicting bit shifts declared (previously %d)",
			   (int)prev);
		vc->failed = 1;
	} else if (!prev && shift) {
		vec_push(&vc->vars, x->var);
		vec_push(&vc->shifts, (void *)shift);
	}
	return 0;
}

static int by_name(const void *a, const void *b)
{
	return strcmp((*(struct functiondecl *const *)a)->name,
		      (*(struct functiondecl *const *)b)->name);
}

void elab_check_variance(struct elab *c)
{
	struct variance_check vc = {.c = c};
	struct functiondecl **fs = xcalloc(c->s->functions.n + 1, sizeof *fs);
	for (int i = 0; i < c->s->functions.n; i++)
		fs[i] = c->s->functions.v[i];
	qsort(fs, c->s->functions.n, sizeof *fs, by_name);
	for (int i = 0; i < c->s->functions.n; i++)
		walk_stmt(fs[i]->body, NULL, variance_expr, &vc);
	struct probe *p;
	vec_foreach (struct probe *, p, &c->bodies)
		walk_stmt(p->body, NULL, variance_expr, &vc);
	free(fs);
	free(vc.vars.v);
	free(vc.shifts.v);
}

/* SystemTap 4.8 rejects "global x%" used as a scalar after its first
 * round of type inference (a throw: the first such global only). */
int elab_check_wrap(struct elab *c)
{
	struct vardecl *g;
	vec_foreach (struct vardecl *, g, &c->s->globals)
		if (g->wrap && g->arity == 0) {
			elab_error(c, g->tok, "wrapping not supported for scalars");
			return 1;
		}
	return 0;
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
		if (e->left && e->left->kind != E_SYMBOL && e->left->kind != E_INDEX &&
		    e->left->kind != E_TARGET && e->left->kind != E_CAST &&
		    e->left->kind != E_ATVAR && e->left->kind != E_ENTRY)
			elab_error2(c, e->tok, e->left->tok, "Expecting lvalue for assignment");
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

/* ---- regular expressions ---- */

/* SystemTap compiles each =~ pattern at pass 2 and reports the errors of
 * its own regex parser there, "at position N" as that parser counts.
 * This is a recogniser of the same syntax (POSIX extended, as the runtime
 * matches it), giving the same messages at the same positions. */
struct re_check {
	const char *s;
	int len, pos; /* pos: the error's position */
	char msg[160];
};

#define RE_MAX_REPEAT 12000 /* a bound SystemTap 4.8 is found to accept */

static int re_fail(struct re_check *r, int pos, const char *fmt, ...) STAP_PRINTF(3, 4);

static int re_fail(struct re_check *r, int pos, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(r->msg, sizeof r->msg, fmt, ap);
	va_end(ap);
	r->pos = pos;
	return -1;
}

static int re_named_class(struct re_check *r, int i, int *next)
{
	static const char *const names[] = {"alpha", "digit", "alnum",	"upper", "lower", "space",
					    "blank", "punct", "xdigit", "cntrl", "print", "graph"};
	const char *end = strstr(r->s + i + 2, ":]");
	if (!end || end - r->s + 2 >= r->len)
		return re_fail(r, r->len, "unclosed character class '%.*s'", r->len - 1 - i,
			       r->s + i);
	int n = (int)(end - (r->s + i + 2));
	for (size_t k = 0; k < sizeof names / sizeof *names; k++)
		if ((int)strlen(names[k]) == n && !strncmp(names[k], r->s + i + 2, (size_t)n)) {
			*next = (int)(end - r->s) + 2;
			return 0;
		}
	snprintf(r->msg, sizeof r->msg, "unknown character class '%.*s'", n, r->s + i + 2);
	r->pos = -1; /* said without a position */
	return -1;
}

/* [...] from the '[' at i; returns the index after the ']'. */
static int re_class(struct re_check *r, int i)
{
	int j = i + 1;
	if (j < r->len && r->s[j] == '^')
		j++;
	if (j < r->len && r->s[j] == ']')
		j++;
	while (j < r->len && r->s[j] != ']') {
		if (r->s[j] == '[' && j + 1 < r->len && r->s[j + 1] == ':') {
			if (re_named_class(r, j, &j) < 0)
				return -1;
			continue;
		}
		if (j + 2 < r->len && r->s[j + 1] == '-' && r->s[j + 2] != ']') {
			if ((unsigned char)r->s[j] > (unsigned char)r->s[j + 2])
				return re_fail(r, j + 3, "Inverted character range %c-%c", r->s[j],
					       r->s[j + 2]);
			j += 3;
			continue;
		}
		j++;
	}
	if (j >= r->len)
		return re_fail(r, r->len - 1, "unclosed character class");
	return j + 1;
}

static int re_number(struct re_check *r, int *i, long *v)
{
	*v = 0;
	while (*i < r->len && isdigit((unsigned char)r->s[*i])) {
		if (*v <= RE_MAX_REPEAT)
			*v = *v * 10 + (r->s[*i] - '0');
		(*i)++;
	}
	return 0;
}

static int re_too_large(struct re_check *r, int start, int i)
{
	return re_fail(r, i < r->len ? i + 1 : r->len, "%.*s is too large", i - start,
		       r->s + start);
}

/* {m}, {m,}, {m,n} from the '{' at i; returns the index after the '}'. */
static int re_braces(struct re_check *r, int i)
{
	long lo, hi;
	int start = ++i;
	if (i >= r->len || !isdigit((unsigned char)r->s[i]))
		return re_fail(r, i < r->len ? i + 1 : r->len, "expected number");
	re_number(r, &i, &lo);
	if (lo > RE_MAX_REPEAT)
		return re_too_large(r, start, i);
	if (i >= r->len)
		return re_fail(r, r->len, "unexpected end of regex");
	if (r->s[i] == '}')
		return i + 1;
	if (r->s[i] != ',')
		return re_fail(r, i, "expected ',' or '}'");
	start = ++i;
	if (i < r->len && r->s[i] == '}')
		return i + 1;
	if (i >= r->len || !isdigit((unsigned char)r->s[i]))
		return re_fail(r, i < r->len ? i + 1 : r->len, "expected '}' or number");
	re_number(r, &i, &hi);
	if (hi > RE_MAX_REPEAT)
		return re_too_large(r, start, i);
	if (i >= r->len)
		return re_fail(r, r->len - 1, "expected }, found end of regex");
	if (r->s[i] != '}')
		return re_fail(r, i, "expected }, found %c", r->s[i]);
	return i + 1;
}

static int re_alt(struct re_check *r, int i, int depth);

/* One atom and its closures; returns the index after them. */
static int re_factor(struct re_check *r, int i, int depth)
{
	char ch = r->s[i];
	int anchor = ch == '^' || ch == '$';
	switch (ch) {
	case '*':
	case '+':
	case '?':
	case '{':
		return re_fail(r, i, "unexpected '%c'", ch);
	case '(':
		if (i + 1 < r->len && r->s[i + 1] == '?') { /* only (?: is known */
			if (i + 2 >= r->len)
				return re_fail(r, r->len - 1, "unexpected '(?");
			if (r->s[i + 2] != ':')
				return re_fail(r, i + 2, "unexpected '(?%c'", r->s[i + 2]);
			i += 2;
		}
		i = re_alt(r, i + 1, depth + 1);
		if (i < 0)
			return -1;
		if (i >= r->len)
			return re_fail(r, r->len > 0 ? r->len - 1 : 0,
				       "expected ), found end of regex");
		i++;
		break;
	case '[':
		i = re_class(r, i);
		if (i < 0)
			return -1;
		break;
	case '\\':
		i += 2;
		if (i > r->len)
			return i; /* the runtime reports it */
		break;
	default:
		i++;
	}
	while (i < r->len && strchr("*+?{", r->s[i])) {
		if (anchor)
			return re_fail(r, i, "postfix closure '%c' applied to anchoring operator",
				       r->s[i]);
		if (r->s[i] == '{') {
			i = re_braces(r, i);
			if (i < 0)
				return -1;
		} else {
			i++;
		}
	}
	return i;
}

/* Alternatives up to the end or, inside parentheses, the ')'. */
static int re_alt(struct re_check *r, int i, int depth)
{
	while (i < r->len) {
		if (r->s[i] == '|') {
			i++;
			continue;
		}
		if (r->s[i] == ')') {
			if (depth > 0)
				return i;
			i++; /* a stray ')' is an ordinary character */
			continue;
		}
		i = re_factor(r, i, depth);
		if (i < 0)
			return -1;
	}
	return i;
}

static int regex_expr(struct expr *e, void *arg)
{
	struct elab *c = arg;
	if (e->kind != E_REGEX || !e->right || e->right->kind != E_STRING || !e->right->str)
		return 0;
	struct re_check r = {e->right->str, (int)strlen(e->right->str), 0, ""};
	if (re_alt(&r, 0, 0) >= 0)
		return 0;
	/* SystemTap counts every later regex error as a similar message. */
	elab_count_error(c);
	if (r.pos < 0)
		diag_semantic_error_site("regex class", e->right->tok,
					 "regex compilation error: %s", r.msg);
	else
		diag_semantic_error_site("regex", e->right->tok,
					 "regex compilation error (at position %d): %s", r.pos,
					 r.msg);
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
	walk_stmt(body, NULL, regex_expr, c);
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
