/* Probe points: each point of each probe is matched against probe aliases
 * (with wildcards) and then against the table of built-in kinds, giving
 * one derived probe per concrete point. Alias bodies are merged into a
 * copy of the user's body: before it for "=", after it for "+=". */
#include <fnmatch.h>
#include <stdarg.h>
#include <string.h>

#include "ast.h"
#include <stdlib.h>

#include "probe_kinds.h"

enum pp_result pp_fail(struct pp_error *err, const struct token *tok, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	err->tok = tok;
	err->key = fmt;
	err->msg = xvasprintf(fmt, ap);
	va_end(ap);
	return PP_ERROR;
}

static void put_component(struct strbuf *b, const struct probe_component *pc)
{
	sb_puts(b, pc->functor);
	if (!pc->arg)
		return;
	sb_putc(b, '(');
	if (pc->arg->kind == E_NUMBER)
		sb_printf(b, "%lld", (long long)pc->arg->num);
	else
		print_expr(b, pc->arg);
	sb_putc(b, ')');
}

char *pp_text(const struct probe_point *pp)
{
	struct strbuf b = {0};
	for (int i = 0; i < pp->components.n; i++) {
		if (i)
			sb_putc(&b, '.');
		put_component(&b, pp->components.v[i]);
	}
	return sb_take(&b);
}

/* Resolved globals in a condition print as __global_NAME in -p2 text. */
static int mangle_cb(struct expr *e, void *arg)
{
	struct vec *undo = arg;
	if (e->kind == E_SYMBOL && e->var && e->var->is_global) {
		vec_push(undo, e);
		vec_push(undo, (void *)e->str);
		e->str = xasprintf("__global_%s", e->str);
	}
	return 0;
}

void elab_print_condition(struct strbuf *b, struct expr *cond)
{
	struct vec undo = {0};
	walk_expr(cond, mangle_cb, &undo);
	sb_puts(b, " if (");
	print_expr(b, cond);
	sb_putc(b, ')');
	for (int i = 0; i < undo.n; i += 2)
		((struct expr *)undo.v[i])->str = undo.v[i + 1];
	free(undo.v);
}

/* TEXT with POINT's ? ! and condition: "begin!", "end if (...)". A
 * condition prints as resolved (globals as __global_NAME) where MANGLE. */
static void put_suffixes(struct strbuf *b, const char *text, const struct probe_point *point,
			 int mangle)
{
	sb_puts(b, text);
	if (point->sufficient)
		sb_putc(b, '!');
	else if (point->optional)
		sb_putc(b, '?');
	if (point->condition && mangle) {
		elab_print_condition(b, point->condition);
	} else if (point->condition) {
		sb_puts(b, " if (");
		print_expr(b, point->condition);
		sb_putc(b, ')');
	}
}

static char *with_suffixes(const char *text, const struct probe_point *point)
{
	struct strbuf b = {0};
	if (point)
		put_suffixes(&b, text, point, 1);
	else
		sb_puts(&b, text);
	return sb_take(&b);
}

/* pp() and the -p2 head line: the resolved point with the ? ! and the
 * condition (the alias's and the user's) of the point it came from. */
char *dp_full_pp(const struct derived_probe *dp)
{
	return with_suffixes(dp->pp ? dp->pp : "", dp->point);
}

/* pn(): an alias's name as is; a point's own pn text with the suffixes
 * pp() has. NULL: the same as pp(). */
char *dp_full_pn(const struct derived_probe *dp)
{
	if (dp->pn)
		return xstrdup(dp->pn);
	return dp->point_pn ? with_suffixes(dp->point_pn, dp->point) : NULL;
}

/* The -p2 "<- ..." text of a probe at an address: pp() unless the
 * resolver named it otherwise. */
char *dp_full_from(const struct derived_probe *dp)
{
	return dp->point_from ? with_suffixes(dp->point_from, dp->point) : dp_full_pp(dp);
}

/* SystemTap resolves a condition in place only on a point that is not an
 * alias's name: the others' (and alias definitions') print as written. */
enum cond_text { COND_AS_WRITTEN, COND_UNLESS_ALIAS };

static char *points_text(const struct vec *points, const char *sep, enum cond_text how)
{
	struct strbuf b = {0};
	for (int i = 0; i < points->n; i++) {
		const struct probe_point *pp = points->v[i];
		char *t = pp_text(pp);
		if (i)
			sb_puts(&b, sep);
		put_suffixes(&b, t, pp, how == COND_UNLESS_ALIAS && !pp->named_alias);
		free(t);
	}
	return sb_take(&b);
}

/* ---- suggestions ---- */

struct cand {
	const char *name;
	int dist;
};

static int cand_name_cmp(const void *x, const void *y)
{
	return strcmp(((const struct cand *)x)->name, ((const struct cand *)y)->name);
}

/* by score, then by name: SystemTap keeps the candidates in a sorted set
 * and lists those of equal score in that order */
static int cand_cmp(const void *x, const void *y)
{
	const struct cand *a = x, *b = y;
	if (a->dist != b->dist)
		return a->dist - b->dist;
	return strcmp(a->name, b->name);
}

/* " (LABEL: a, b, c, d, e)": the five candidates nearest to NAME (by
 * edit distance, of their basenames when by_base), "" without any; with
 * one candidate, LABEL1 (SystemTap's "similar library:"). */
static const char *suggest(const char *name, struct vec *cands, const char *label,
			   const char *label1, int by_base)
{
	struct cand *cs = xcalloc(cands->n + 1, sizeof *cs);
	int n = 0;
	for (int i = 0; i < cands->n; i++)
		if (*(const char *)cands->v[i])
			cs[n++].name = cands->v[i];
	qsort(cs, n, sizeof *cs, cand_name_cmp);
	int u = 0;
	for (int i = 0; i < n; i++)
		if (!u || strcmp(cs[u - 1].name, cs[i].name))
			cs[u++] = cs[i];
	n = u;
	if (!n) {
		free(cs);
		return "";
	}
	for (int i = 0; i < n; i++) {
		const char *nm = cs[i].name;
		const char *base = by_base && strrchr(nm, '/') ? strrchr(nm, '/') + 1 : nm;
		cs[i].dist = stap_edit_distance(name, base);
	}
	qsort(cs, n, sizeof *cs, cand_cmp);
	struct strbuf b = {0};
	sb_printf(&b, " (%s: ", n == 1 ? label1 : label);
	for (int i = 0; i < n && i < 5; i++) {
		if (i)
			sb_puts(&b, ", ");
		sb_puts(&b, cs[i].name);
	}
	sb_putc(&b, ')');
	free(cs);
	return sb_take(&b);
}

const char *elab_suggest(const char *name, struct vec *cands)
{
	return suggest(name, cands, "similar", "similar", 0);
}

const char *elab_suggest_what(const char *name, struct vec *cands, const char *what)
{
	static const char *const plural[][2] = {
	    {"functions", "function"}, {"marks", "mark"}, {"libraries", "library"}};
	const char *one = what;
	for (size_t i = 0; i < sizeof plural / sizeof plural[0]; i++)
		if (!strcmp(what, plural[i][0]))
			one = plural[i][1];
	char *label = xasprintf("similar %s", what), *label1 = xasprintf("similar %s", one);
	const char *r = suggest(name, cands, label, label1, !strcmp(what, "libraries"));
	free(label);
	free(label1);
	return r;
}

/* ---- alias matching ---- */

static int arg_equal(const struct expr *a, const struct expr *b)
{
	if (!a || !b)
		return a == b;
	if (a->kind != b->kind)
		return 0;
	if (a->kind == E_NUMBER)
		return a->num == b->num;
	return a->str && b->str && !strcmp(a->str, b->str);
}

/* Does the user's point (may hold wildcards) name alias name AN? */
static int alias_matches(const struct probe_point *pp, const struct probe_point *an)
{
	if (pp->components.n != an->components.n)
		return 0;
	for (int i = 0; i < pp->components.n; i++) {
		const struct probe_component *u = pp->components.v[i];
		const struct probe_component *a = an->components.v[i];
		if (fnmatch(u->functor, a->functor, 0))
			return 0;
		if (!arg_equal(u->arg, a->arg))
			return 0;
	}
	return 1;
}

static int alias_visible(struct elab *c, const struct probe_alias *al, const struct probe *from)
{
	(void)c;
	return !al->is_private || al->file == from->file;
}

static void push_stmts(struct vec *dst, const struct stmt *body)
{
	if (!body)
		return;
	struct stmt *copy = elab_copy_stmt(body);
	if (copy->kind == S_BLOCK) {
		for (int i = 0; i < copy->stmts.n; i++)
			vec_push(dst, copy->stmts.v[i]);
	} else {
		vec_push(dst, copy);
	}
}

static struct probe *merge_alias(const struct probe *user, const struct probe_alias *al)
{
	struct probe *p = elab_copy_probe(user, NULL);
	struct stmt *blk = stmt_new(S_BLOCK, user->body ? user->body->tok : al->tok);
	if (al->epilogue) {
		push_stmts(&blk->stmts, user->body);
		push_stmts(&blk->stmts, al->body);
	} else {
		push_stmts(&blk->stmts, al->body);
		push_stmts(&blk->stmts, user->body);
	}
	p->body = blk;
	return p;
}

static char *alias_text(const struct probe_alias *al)
{
	struct strbuf b = {0};
	char *names = points_text(&al->alias_names, ",", COND_AS_WRITTEN);
	char *pts = points_text(&al->points, ", ", COND_AS_WRITTEN);
	sb_printf(&b, "%s %s %s", names, al->epilogue ? "+=" : "=", pts);
	return sb_take(&b);
}

static struct expr *and_conditions(struct expr *a, struct expr *b)
{
	if (!a)
		return b;
	if (!b)
		return a;
	struct expr *e = expr_new(E_LOGICAL, a->tok);
	e->op = "&&";
	e->left = a;
	e->right = b;
	return e;
}

/* Aliases that name other aliases twice double at each level: a bound on
 * the bodies merged keeps pass 2 short (SystemTap has none). */
#define MAX_ALIAS_EXPANSIONS 10000

struct derive_state {
	struct elab *c;
	int depth;
	struct vec active; /* alias points being expanded, outermost first */
};

/* How a derived probe came about: the aliases expanded, innermost first,
 * ending at the user's probe. Rendered as "alias <- ... <- user points". */
struct chain {
	const struct probe_alias *al; /* NULL: the user's probe */
	const struct probe *user;
	const struct chain *next;
	const struct probe_point *via; /* the point that named al */
};

static char *chain_text(const struct chain *ch)
{
	if (!ch->al)
		return points_text(&ch->user->points, ",", COND_UNLESS_ALIAS);
	char *rest = chain_text(ch->next);
	char *r = xasprintf("%s <- %s", alias_text(ch->al), rest);
	free(rest);
	return r;
}

/* pn() as SystemTap gives it: the name of the alias the user's point
 * named, wildcards expanded ("myal.*" -> "myal.a"); no alias: pp(). */
static const char *chain_pn(const struct chain *ch)
{
	if (!ch->al)
		return NULL;
	while (ch->next->al)
		ch = ch->next;
	const struct probe_point *an;
	vec_foreach (const struct probe_point *, an, &ch->al->alias_names)
		if (alias_matches(ch->via, an))
			return pp_text(an);
	return NULL;
}

static struct vec chain_dps, chain_recs;    /* derived_probe * / chain * */
static struct vec report_keys, report_fmts; /* see report() */

void elab_alias_reset(void)
{
	chain_dps.n = chain_recs.n = 0;
	report_keys.n = report_fmts.n = 0;
}

/* -t's "derivation": " from: P" for each point the probe came from, as
 * SystemTap's derived_locations() gives it: a resolved function first,
 * then each alias by the name that matched, then the user's (first)
 * point, all without ? ! or condition. */
char *dp_derivation(const struct derived_probe *dp)
{
	struct strbuf b = {0};
	const struct chain *ch = NULL;
	for (int i = 0; i < chain_dps.n && !ch; i++)
		if (chain_dps.v[i] == dp)
			ch = chain_recs.v[i];
	if ((pk_of(dp)->flags & PKF_AT_ADDRESS) || !ch)
		sb_printf(&b, " from: %s", dp->pp ? dp->pp : "");
	for (; ch; ch = ch->next) {
		char *t = NULL;
		if (ch->al) {
			const struct probe_point *an;
			vec_foreach (const struct probe_point *, an, &ch->al->alias_names)
				if (!t && alias_matches(ch->via, an))
					t = pp_text(an);
		} else if (ch->user->points.n) {
			t = pp_text(ch->user->points.v[0]);
		}
		if (t)
			sb_printf(&b, " from: %s", t);
		free(t);
	}
	return sb_take(&b);
}

/* -t's location: the 'probe' keyword, the point that named an alias, or
 * (SystemTap's quirk) the first point of a probe with several. */
const struct token *dp_timing_tok(const struct derived_probe *dp)
{
	for (int i = 0; i < chain_dps.n; i++) {
		const struct chain *ch = chain_recs.v[i];
		if (chain_dps.v[i] != dp || ch->al || ch->user->points.n < 2)
			continue;
		const struct probe_point *first = ch->user->points.v[0];
		if (first->components.n)
			return ((const struct probe_component *)first->components.v[0])->tok;
	}
	return dp->tok ? dp->tok : dp->probe ? dp->probe->tok : NULL;
}

/* --dump-probe-aliases: "NAME = POINTS" ("+=" for an epilogue alias). */
char *alias_dump_text(const struct probe_alias *al, const struct probe_point *name)
{
	char *n = pp_text(name), *pts = points_text(&al->points, ", ", COND_AS_WRITTEN);
	char *r = xasprintf("%s %s %s", n, al->epilogue ? "+=" : "=", pts);
	free(n);
	free(pts);
	return r;
}

void elab_render_chains(void)
{
	for (int i = 0; i < chain_dps.n; i++) {
		struct derived_probe *dp = chain_dps.v[i];
		dp->alias_pp = chain_text(chain_recs.v[i]);
	}
}

static int derive_point(struct derive_state *st, struct probe *body, struct probe_point *pp,
			const struct chain *chain, struct expr *cond, struct pp_error *err);

/* "while resolving probe point" at PP, then why: one message for
 * SystemTap, suppressed (unless -v) when a cause from the same place in
 * the translator (the same format: err->key) was reported before. diag.c
 * suppresses by format, so each pair printed gets formats of its own
 * ("%.0s", "%.00s", ... print nothing) and a repeat reuses the old ones. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
#pragma GCC diagnostic ignored "-Wformat-security"
static char *unique_format(const char *text)
{
	static int n;
	struct strbuf b = {0};
	for (const char *p = text; *p; p++) {
		if (*p == '%')
			sb_putc(&b, '%');
		sb_putc(&b, *p);
	}
	sb_puts(&b, "%.");
	for (int i = 0; i <= n; i++)
		sb_putc(&b, '0');
	sb_putc(&b, 's');
	n++;
	return sb_take(&b);
}

static void report(struct elab *c, struct probe_point *pp, const struct pp_error *err)
{
	struct vec *keys = &report_keys, *fmts = &report_fmts;
	struct probe_component *c0 = pp->components.v[0];
	const char *key = err->key ? err->key : err->msg;
	for (int i = 0; i < keys->n; i++)
		if (!strcmp(keys->v[i], key) && !msg_verbose) {
			elab_count_error(c);
			diag_semantic_error(err->tok, fmts->v[i], "");
			return;
		}
	char *cause = unique_format(err->msg);
	vec_push(keys, xstrdup(key));
	vec_push(fmts, cause);
	char *head = unique_format("while resolving probe point");
	elab_count_error(c);
	diag_semantic_error(c0->tok, head, "");
	elab_count_error(c);
	diag_semantic_error(err->tok, cause, "");
	free(head);
}
#pragma GCC diagnostic pop

/* An alias point met again while it is being expanded. */
static int recursion(struct elab *c, struct probe_point *ap, struct pp_error *err)
{
	struct probe_component *c0 = ap->components.v[0];
	pp_fail(err, NULL, "recursive loop in alias expansion of %s at %s", pp_text(ap),
		diag_loc_string(&c0->tok->loc));
	report(c, ap, err);
	pp_fail(err, NULL, "no match");
	return -1;
}

static int derive_aliases(struct derive_state *st, struct probe *body, struct probe_point *pp,
			  const struct chain *chain, struct expr *cond, struct pp_error *err,
			  int *matched)
{
	struct elab *c = st->c;
	int n = 0;
	for (int fi = 0; fi < c->files.n; fi++) {
		struct stapfile *f = c->files.v[fi];
		struct probe_alias *al;
		vec_foreach (struct probe_alias *, al, &f->aliases) {
			if (!alias_visible(c, al, body))
				continue;
			struct probe_point *an;
			int hit = 0;
			vec_foreach (struct probe_point *, an, &al->alias_names)
				hit |= alias_matches(pp, an);
			if (!hit)
				continue;
			*matched = 1;
			pp->named_alias = 1;
			if (fi > 0)
				elab_pull_file(c, fi);
			if (++c->alias_expansions > MAX_ALIAS_EXPANSIONS)
				return pp_fail(err, pp->tok,
					       "too many probe alias expansions (more than %d)",
					       MAX_ALIAS_EXPANSIONS),
				       -1;
			struct probe *np = merge_alias(body, al);
			struct chain *nchain = xcalloc(1, sizeof *nchain);
			nchain->al = al;
			nchain->user = chain->user;
			nchain->next = chain;
			nchain->via = pp;
			struct probe_point *ap;
			vec_foreach (struct probe_point *, ap, &al->points) {
				for (int i = 0; i < st->active.n; i++)
					if (st->active.v[i] == ap)
						return recursion(c, ap, err);
				vec_push(&st->active, ap);
				int k = derive_point(st, np, ap, nchain,
						     and_conditions(pp->condition, cond), err);
				st->active.n--;
				if (k < 0 &&
				    (!ap->optional || c->alias_expansions > MAX_ALIAS_EXPANSIONS)) {
					/* Each level says where it failed. */
					report(c, ap, err);
					pp_fail(err, NULL, "no match");
					return -1;
				}
				if (k > 0)
					n += k;
				if (k > 0 && ap->sufficient)
					break;
			}
		}
	}
	return n;
}

static int top_level_mismatch(struct elab *c, struct probe_point *pp, struct pp_error *err)
{
	/* what works here: no kernel probe is suggested */
	struct vec names = {0};
	pk_point_names(&names, 0, PKF_INTERNAL);
	vec_push(&names, (void *)"process");
	struct stapfile *f;
	vec_foreach (struct stapfile *, f, &c->files) {
		struct probe_alias *al;
		vec_foreach (struct probe_alias *, al, &f->aliases) {
			struct probe_point *an;
			vec_foreach (struct probe_point *, an, &al->alias_names) {
				struct probe_component *pc = an->components.v[0];
				if (!strpbrk(pc->functor, "*?["))
					vec_push(&names, (void *)pc->functor);
			}
		}
	}
	struct probe_component *c0 = pp->components.v[0];
	pp_fail(err, c0->tok, "probe point mismatch%s", elab_suggest(c0->functor, &names));
	free(names.v);
	return -1;
}

/* A conditional probe starts with "if (!(COND)) next", in its own copy. */
struct probe *elab_guard_body(struct probe *p, struct expr *cond)
{
	struct probe *np = xcalloc(1, sizeof *np);
	*np = *p;
	memset(&np->locals, 0, sizeof np->locals);
	struct stmt *blk = stmt_new(S_BLOCK, p->body ? p->body->tok : p->tok);
	struct stmt *guard = stmt_new(S_IF, cond->tok);
	struct expr *paren = elab_copy_expr(cond);
	struct expr *neg = expr_new(E_UNARY, cond->tok);
	neg->op = "!";
	neg->left = paren;
	guard->cond = neg;
	guard->then = stmt_new(S_NEXT, cond->tok);
	vec_push(&blk->stmts, guard);
	push_stmts(&blk->stmts, p->body);
	np->body = blk;
	return np;
}

/* Returns the number of probes derived, or -1 with *err set. */
static int derive_point(struct derive_state *st, struct probe *body, struct probe_point *pp,
			const struct chain *chain, struct expr *cond, struct pp_error *err)
{
	struct elab *c = st->c;
	if (st->depth > 50)
		return pp_fail(err, pp->tok, "probe alias recursion too deep"), -1;
	if (c->alias_expansions > MAX_ALIAS_EXPANSIONS)
		return pp_fail(err, pp->tok, "too many probe alias expansions (more than %d)",
			       MAX_ALIAS_EXPANSIONS),
		       -1;
	st->depth++;
	int matched = 0;
	int n = derive_aliases(st, body, pp, chain, cond, err, &matched);
	st->depth--;
	if (n < 0)
		return -1;
	if (matched)
		return n;

	struct probe_component *c0 = pp->components.v[0];
	pp_resolve_fn resolve = pk_top_resolver(c0->functor);
	if (!resolve)
		return top_level_mismatch(c, pp, err);
	struct derived_probe *dp = xcalloc(1, sizeof *dp);
	struct pp_at at = {c, pp, 0, NULL, NULL};
	c->probe_kw = body->tok;
	enum pp_result r = resolve(&at, dp, err);
	if (r == PP_NOMATCH)
		return top_level_mismatch(c, pp, err);
	if (r == PP_ERROR)
		return -1;
	struct probe_point *cp = xmalloc(sizeof *cp);
	*cp = *pp;
	/* innermost first, as SystemTap prints it */
	cp->condition = and_conditions(pp->condition, cond);
	if (cp->condition)
		body = elab_guard_body(body, cp->condition);
	int optional = pp->optional;
	for (const struct chain *ch = chain; ch; ch = ch->next)
		optional |= ch->via && ch->via->optional;
	/* A resolver may give several probes for one point (dp->more: one
	 * per function matched); each keeps the pp() text it set. */
	int count = 0;
	for (; dp; dp = dp->more, count++) {
		dp->probe = body;
		dp->point = cp;
		dp->optional = optional;
		if (!dp->pp)
			dp->pp = pp_text(pp);
		dp->alias_pp = chain_text(chain);
		dp->pn = chain_pn(chain);
		if (chain->al) {
			struct probe_component *v0 = chain->via->components.v[0];
			dp->tok = v0->tok;
		} else {
			dp->tok = chain->user->tok;
		}
		vec_push(&chain_dps, dp);
		vec_push(&chain_recs, (void *)chain);
		dp->id = c->s->probes.n;
		vec_push(&c->s->probes, dp);
	}
	return count;
}

static void derive_probe(struct elab *c, struct probe *p)
{
	struct chain *chain = xcalloc(1, sizeof *chain);
	chain->user = p;
	struct derive_state st = {c, 0, {0}};
	struct probe_point *pp;
	vec_foreach (struct probe_point *, pp, &p->points) {
		struct pp_error err = {0};
		int n = derive_point(&st, p, pp, chain, NULL, &err);
		if (n < 0 && (!pp->optional || c->alias_expansions > MAX_ALIAS_EXPANSIONS))
			report(c, pp, &err);
		if (c->alias_expansions > MAX_ALIAS_EXPANSIONS)
			break;
		if (n > 0 && pp->sufficient)
			break;
	}
}

void elab_derive_probes(struct elab *c)
{

	while (c->probes_derived < c->user_probes.n)
		derive_probe(c, c->user_probes.v[c->probes_derived++]);
}
