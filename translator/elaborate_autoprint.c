/* Globals that are written but never read are printed when the script
 * ends, as SystemTap does: one synthesized "end" probe per such global,
 * built as ordinary AST so that pass 3 needs nothing special.
 *   scalar long     printf("x=%d\n", x)
 *   scalar string   printf("s=\"%#s\"\n", s)
 *   stats           if (@count(s) == 0) printf("s @count=0x0\n")
 *                   else printf("s @count=%#d @min=%#d ... @avg=%#d\n", ...)
 *   array           foreach (__val = [__idx0, ...] in a-)
 *                       printf("a[%#d,\"%#s\"]=%d\n", __idx0, ..., __val)
 *   stats array     foreach ([__idx0, ...] in a-) printf(... @count(a[..]) ...)
 */
#include <stdlib.h>
#include <string.h>

#include "elaborate.h"

struct ap {
	const struct token *tok;
	struct probe *probe;
};

static struct expr *mk(struct ap *a, enum expr_kind k, enum exp_type t)
{
	struct expr *e = expr_new(k, a->tok);
	e->type = t;
	return e;
}

static struct expr *mk_sym(struct ap *a, struct vardecl *v)
{
	struct expr *e = mk(a, E_SYMBOL, v->type);
	e->str = v->name;
	e->var = v;
	return e;
}

static struct expr *mk_str(struct ap *a, const char *s)
{
	struct expr *e = mk(a, E_STRING, T_STRING);
	e->str = s;
	return e;
}

static struct vardecl *mk_local(struct ap *a, const char *name, enum exp_type t)
{
	struct vardecl *v = xcalloc(1, sizeof *v);
	v->name = name;
	v->tok = a->tok;
	v->type = t;
	v->file = a->tok ? a->tok->loc.file : NULL;
	v->id = a->probe->locals.n;
	v->read = v->written = 1;
	vec_push(&a->probe->locals, v);
	return v;
}

static struct expr *mk_printf(struct ap *a, const char *fmt)
{
	struct expr *e = mk(a, E_PRINT, T_LONG);
	e->str = "printf";
	e->print_has_fmt = 1;
	vec_push(&e->args, mk_str(a, fmt));
	return e;
}

static struct stmt *mk_exprstmt(struct ap *a, struct expr *e)
{
	struct stmt *s = stmt_new(S_EXPR, a->tok);
	s->value = e;
	return s;
}

/* The value of global V (indexed by KEYS when an array). */
static struct expr *mk_value(struct ap *a, struct vardecl *v, struct vec *keys)
{
	if (!keys || !keys->n)
		return mk_sym(a, v);
	struct expr *e = mk(a, E_INDEX, v->type);
	e->base = mk_sym(a, v);
	for (int i = 0; i < keys->n; i++)
		vec_push(&e->args, mk_sym(a, keys->v[i]));
	return e;
}

static const char *const stat_ops[] = {"@count", "@min", "@max", "@sum", "@avg"};

static struct expr *mk_stat(struct ap *a, const char *op, struct vardecl *v, struct vec *keys)
{
	struct expr *e = mk(a, E_STAT, T_LONG);
	e->op = op;
	e->left = mk_value(a, v, keys);
	return e;
}

/* " @count=%#d @min=%#d @max=%#d @sum=%#d @avg=%#d" */
static void stats_fmt(struct strbuf *b)
{
	for (size_t i = 0; i < sizeof stat_ops / sizeof stat_ops[0]; i++)
		sb_printf(b, " %s=%%#d", stat_ops[i]);
}

static void stats_args(struct ap *a, struct expr *pr, struct vardecl *v, struct vec *keys)
{
	for (size_t i = 0; i < sizeof stat_ops / sizeof stat_ops[0]; i++)
		vec_push(&pr->args, mk_stat(a, stat_ops[i], v, keys));
}

static struct stmt *print_scalar(struct ap *a, struct vardecl *v)
{
	struct strbuf b = {0};
	if (v->type == T_STATS) {
		struct expr *cnt = mk_stat(a, "@count", v, NULL);
		struct expr *cmp = mk(a, E_COMPARE, T_LONG);
		cmp->op = "==";
		cmp->left = cnt;
		cmp->right = mk(a, E_NUMBER, T_LONG);
		struct stmt *s = stmt_new(S_IF, a->tok);
		s->cond = cmp;
		sb_printf(&b, "%s @count=0x0\n", v->name);
		s->then = mk_exprstmt(a, mk_printf(a, sb_take(&b)));
		sb_puts(&b, v->name);
		stats_fmt(&b);
		sb_putc(&b, '\n');
		struct expr *pr = mk_printf(a, sb_take(&b));
		stats_args(a, pr, v, NULL);
		s->els = mk_exprstmt(a, pr);
		return s;
	}
	if (v->type == T_STRING)
		sb_printf(&b, "%s=\"%%#s\"\n", v->name);
	else
		sb_printf(&b, "%s=%%d\n", v->name);
	struct expr *pr = mk_printf(a, sb_take(&b));
	vec_push(&pr->args, mk_sym(a, v));
	return mk_exprstmt(a, pr);
}

static struct stmt *print_array(struct ap *a, struct vardecl *v)
{
	struct stmt *fe = stmt_new(S_FOREACH, a->tok);
	struct vec keys = {0};
	struct strbuf b = {0};
	sb_printf(&b, "%s[", v->name);
	for (int i = 0; i < v->arity; i++) {
		struct vardecl *k = mk_local(a, xasprintf("__idx%d", i), v->index_types[i]);
		vec_push(&keys, k);
		vec_push(&fe->indexes, mk_sym(a, k));
		if (i)
			sb_putc(&b, ',');
		sb_puts(&b, k->type == T_STRING ? "\"%#s\"" : "%#d");
	}
	sb_putc(&b, ']');
	fe->array = mk_sym(a, v);
	fe->sort_direction = -1;
	fe->sort_column = 0;
	struct expr *pr;
	if (v->type == T_STATS) {
		stats_fmt(&b);
		sb_putc(&b, '\n');
		pr = mk_printf(a, sb_take(&b));
		for (int i = 0; i < keys.n; i++)
			vec_push(&pr->args, mk_sym(a, keys.v[i]));
		stats_args(a, pr, v, &keys);
	} else {
		struct vardecl *val = mk_local(a, "__val", v->type);
		fe->value_var = mk_sym(a, val);
		sb_puts(&b, v->type == T_STRING ? "=\"%#s\"\n" : "=%d\n");
		pr = mk_printf(a, sb_take(&b));
		for (int i = 0; i < keys.n; i++)
			vec_push(&pr->args, mk_sym(a, keys.v[i]));
		vec_push(&pr->args, mk_sym(a, val));
	}
	fe->body = mk_exprstmt(a, pr);
	free(keys.v);
	return fe;
}

static void autoprint_global(struct elab *c, struct vardecl *v)
{
	struct probe *p = xcalloc(1, sizeof *p);
	p->tok = v->tok;
	p->file = v->file;
	p->id = -1; /* synthesized: -p2 -v prints its block as is */
	struct ap a = {v->tok, p};
	struct stmt *blk = stmt_new(S_BLOCK, v->tok);
	vec_push(&blk->stmts, v->arity > 0 ? print_array(&a, v) : print_scalar(&a, v));
	p->body = blk;

	struct probe_component *pc = xcalloc(1, sizeof *pc);
	pc->functor = "end";
	pc->tok = v->tok;
	struct probe_point *pp = xcalloc(1, sizeof *pp);
	vec_push(&pp->components, pc);
	pp->tok = v->tok;
	vec_push(&p->points, pp);

	struct derived_probe *dp = xcalloc(1, sizeof *dp);
	dp->kind = PK_END;
	dp->probe = p;
	dp->point = pp;
	dp->pp = "end";
	dp->alias_pp = "end";
	dp->tok = v->tok;
	dp->id = c->s->probes.n;
	vec_push(&c->s->probes, dp);
	vec_push(&c->bodies, p);
}

void elab_autoprint(struct elab *c)
{
	static int autoprint_mode;
	if (c->s->no_global_var_display) /* --no-global-var-display */
		return;
	elab_count_uses_mode(c, &autoprint_mode);
	int n = c->s->globals.n;
	for (int i = 0; i < n; i++) {
		struct vardecl *v = c->s->globals.v[i];
		if (!v->written || v->read)
			continue;
		if (v->file && v->file->is_tapset)
			continue; /* tapset globals are never auto-printed */
		if (v->type == T_UNKNOWN)
			continue;
		autoprint_global(c, v);
	}
}
