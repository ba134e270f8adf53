/* Symbol resolution: every E_SYMBOL gets its vardecl (a local of the probe
 * or function, a formal, or a global of the user file or of the tapset),
 * every E_CALL its functiondecl. Tapset globals and functions join the
 * program only when used; resolving their bodies may pull in more, so this
 * runs to a fixed point (the driver repeats it while anything is added). */
#include <string.h>

#include <stdlib.h>

#include "elaborate.h"
#include "probes_process.h"

struct rctx {
	struct elab *c;
	struct vec *locals;
	struct functiondecl *fn;
	const struct source_file *file;
	int condition; /* probe condition: globals only */
};

static int visible(const struct source_file *owner, int is_private, const struct source_file *from)
{
	return !is_private || owner == from;
}

static void use_global(struct elab *c, struct vardecl *v)
{
	if (v->used)
		return;
	v->used = 1;
	vec_push(&c->s->globals, v);
	int fi = elab_file_index(c, v->file);
	if (fi > 0)
		elab_pull_file(c, fi);
}

static struct vardecl *find_global(struct elab *c, const char *name, const struct source_file *from)
{
	struct stapfile *f;
	vec_foreach (struct stapfile *, f, &c->files) {
		struct vardecl *v;
		vec_foreach (struct vardecl *, v, &f->globals) {
			if (!v->file)
				v->file = f->src;
			if (!strcmp(v->name, name) && visible(v->file, v->is_private, from))
				return v;
		}
	}
	return NULL;
}

/* ARITY: 0 scalar use, >0 array use with that many indexes, -1 either. */
static struct vardecl *find_var(struct rctx *rc, const char *name, int arity,
				const struct token *tok)
{
	struct vardecl *v;
	/* As in SystemTap, a local used as an array is an arity error later,
	 * but a parameter used as an array means some global. */
	vec_foreach (struct vardecl *, v, rc->locals)
		if (!strcmp(v->name, name))
			return v;
	if (arity <= 0) {
		if (rc->fn)
			vec_foreach (struct vardecl *, v, &rc->fn->formals)
				if (!strcmp(v->name, name))
					return v;
	}
	/* Visibility of privates is decided by where the name is written:
	 * a merged alias body mixes the alias file's code with the user's. */
	const struct source_file *from = tok && tok->loc.file ? tok->loc.file : rc->file;
	v = find_global(rc->c, name, from);
	if (v) {
		use_global(rc->c, v);
		return v;
	}
	if (rc->condition) {
		elab_error(rc->c, tok,
			   "probe condition must not reference "
			   "undeclared global");
		return NULL;
	}
	if (arity < 0) {
		elab_error(rc->c, tok, "unresolved array in delete statement");
		return NULL;
	}
	if (arity > 0) {
		elab_error(rc->c, tok,
			   "unresolved arity-%d global array %s, missing global "
			   "declaration?",
			   arity, name);
		return NULL;
	}
	v = xcalloc(1, sizeof *v);
	v->name = name;
	v->tok = tok;
	v->file = rc->file;
	v->id = rc->locals->n;
	vec_push(rc->locals, v);
	return v;
}

static int run_order(const struct functiondecl *f)
{
	if (f->priority)
		return f->priority;
	return f->file && f->file->is_tapset ? 1 : 0;
}

/* The visible functions NAME taking NARGS arguments, in the order they
 * run: by priority, then overload number (functions of another arity are
 * unrelated). Returns how many; *LAST is the last visible NAME of any
 * arity, which an arity mismatch names as SystemTap does. */
static int find_functions(struct elab *c, const char *name, int nargs,
			  const struct source_file *from, struct vec *out,
			  struct functiondecl **last)
{
	struct stapfile *f;
	*last = NULL;
	vec_foreach (struct stapfile *, f, &c->files) {
		struct functiondecl *fd;
		vec_foreach (struct functiondecl *, fd, &f->functions) {
			if (strcmp(fd->name, name) || !visible(fd->file, fd->is_private, from))
				continue;
			if (!*last || fd->overload > (*last)->overload)
				*last = fd;
			if (fd->formals.n != nargs)
				continue;
			int i = out->n;
			vec_push(out, fd);
			for (; i > 0; i--) {
				struct functiondecl *p = out->v[i - 1];
				if (run_order(p) < run_order(fd) ||
				    (run_order(p) == run_order(fd) && p->overload < fd->overload))
					break;
				out->v[i] = p;
			}
			out->v[i] = fd;
		}
	}
	return out->n;
}

static const char *function_suggestions(struct elab *c, const char *name)
{
	struct vec names = {0};
	struct stapfile *f;
	vec_foreach (struct stapfile *, f, &c->files) {
		struct functiondecl *fd;
		vec_foreach (struct functiondecl *, fd, &f->functions)
			if (!fd->is_private)
				vec_push(&names, (void *)fd->name);
	}
	const char *r = elab_suggest(name, &names);
	free(names.v);
	return r;
}

static void resolve_call(struct rctx *rc, struct expr *e)
{
	struct elab *c = rc->c;
	const struct source_file *from = e->tok && e->tok->loc.file ? e->tok->loc.file : rc->file;
	if (!strcmp(e->str, "@perf")) {
		/* Parsed as a call (parser_value.c); perf counters are the
		 * kernel's. */
		elab_error(c, e->tok,
			   "@perf needs the kernel's perf counters: this "
			   "implementation traces user space only");
		return;
	}
	if (!strcmp(e->str, "@probewrite")) {
		/* SystemTap 4.8 has no use for it outside its own rewriting:
		 * the error, then its exception's text ends pass 2 */
		elab_error(c, e->tok, "unexpected @probewrite");
		c->probewrite = 1;
		return;
	}
	if (!strcmp(e->str, "@uderef") || !strcmp(e->str, "@uregister") ||
	    !strcmp(e->str, "@kderef") || !strcmp(e->str, "@kregister")) {
		/* @uderef, @uregister, @kderef, @kregister (parser_value.c):
		 * SystemTap 4.8 has them for its BPF runtime only */
		elab_error(c, e->tok, "invalid operator");
		return;
	}
	struct functiondecl *last, *fd;
	e->referents.n = 0;
	if (!find_functions(c, e->str, e->args.n, from, &e->referents, &last)) {
		if (!last && !strncmp(e->str, "json_", 5))
			/* SystemTap's JSON tapset (linux/json.stp) */
			elab_error(
			    c, e->tok,
			    "unresolved function %s: SystemTap's JSON tapset serves its data "
			    "through a procfs probe (/proc/systemtap/MODULE/json), which needs "
			    "the kernel: this implementation traces user space only",
			    e->str);
		else if (!last)
			elab_error(c, e->tok, "unresolved function %s%s", e->str,
				   function_suggestions(c, e->str));
		else
			elab_error2(c, e->tok, last->tok,
				    "arity mismatch found (function '%s' takes %d args)",
				    last->name, last->formals.n);
		return;
	}
	e->func = e->referents.v[0];
	vec_foreach (struct functiondecl *, fd, &e->referents) {
		if (fd->used)
			continue;
		fd->used = 1;
		vec_push(&c->s->functions, fd);
		int fi = elab_file_index(c, fd->file);
		if (fi > 0)
			elab_pull_file(c, fi);
	}
}

static int is_target_expr(const struct expr *e)
{
	return e &&
	    (e->kind == E_TARGET || e->kind == E_CAST || e->kind == E_ATVAR || e->kind == E_ENTRY);
}

static void resolve_expr(struct rctx *rc, struct expr *e);

static void resolve_args(struct rctx *rc, struct vec *args)
{
	struct expr *a;
	vec_foreach (struct expr *, a, args)
		resolve_expr(rc, a);
}

/* An array base: a symbol with ARITY indexes, or a histogram. */
static void resolve_base(struct rctx *rc, struct expr *b, int arity)
{
	if (b && b->kind == E_SYMBOL)
		b->var = find_var(rc, b->str, arity, b->tok);
	else
		resolve_expr(rc, b);
}

static void resolve_expr(struct rctx *rc, struct expr *e)
{
	if (!e)
		return;
	switch (e->kind) {
	case E_SYMBOL:
		e->var = find_var(rc, e->str, 0, e->tok);
		return;
	case E_INDEX:
	case E_IN:
		resolve_base(rc, e->base, e->args.n);
		resolve_args(rc, &e->args);
		return;
	case E_CALL:
		resolve_call(rc, e);
		resolve_args(rc, &e->args);
		return;
	case E_DEFINED:
		/* Target variables never resolve here (no target yet). */
		if (is_target_expr(e->left) || !e->left) {
			e->kind = E_NUMBER;
			e->num = 0;
			e->left = NULL;
			vec_push(&rc->c->defined_nodes, e);
		} else {
			resolve_expr(rc, e->left);
		}
		return;
	case E_TARGET:
	case E_CAST:
	case E_ATVAR:
	case E_ENTRY:
		/* Reported by type checking, after elision (as SystemTap). */
		return;
	default:
		break;
	}
	resolve_expr(rc, e->left);
	resolve_expr(rc, e->cond);
	resolve_expr(rc, e->right);
	resolve_expr(rc, e->base);
	resolve_args(rc, &e->args);
}

static void resolve_stmt(struct rctx *rc, struct stmt *s)
{
	if (!s)
		return;
	struct stmt *sub;
	struct expr *x;
	switch (s->kind) {
	case S_BLOCK:
		vec_foreach (struct stmt *, sub, &s->stmts)
			resolve_stmt(rc, sub);
		break;
	case S_TRY:
		resolve_stmt(rc, s->body);
		if (s->catch_var)
			resolve_expr(rc, s->catch_var);
		resolve_stmt(rc, s->catch_body);
		break;
	case S_EXPR:
	case S_RETURN:
		resolve_expr(rc, s->value);
		break;
	case S_DELETE: {
		/* as SystemTap's delete visitor: the leftmost operand of an
		 * expression is what is deleted; a literal or a call cannot be
		 * (reported at the whole operand: SystemTap's "operator '+'"
		 * for delete 1+x) */
		struct expr *v = s->value;
		while (v &&
		       (v->kind == E_BINARY || v->kind == E_CONCAT || v->kind == E_LOGICAL ||
			v->kind == E_COMPARE) &&
		       v->left)
			v = v->left;
		if (v && (v->kind == E_NUMBER || v->kind == E_STRING || v->kind == E_CALL))
			elab_error(rc->c, s->value->tok, "invalid operand of delete expression");
		else if (v && v->kind == E_SYMBOL)
			v->var = find_var(rc, v->str, -1, v->tok);
		else
			resolve_expr(rc, s->value);
		break;
	}
	case S_IF:
		resolve_expr(rc, s->cond);
		resolve_stmt(rc, s->then);
		resolve_stmt(rc, s->els);
		break;
	case S_FOR:
		resolve_expr(rc, s->init);
		resolve_expr(rc, s->cond);
		resolve_expr(rc, s->incr);
		resolve_stmt(rc, s->body);
		break;
	case S_FOREACH:
		resolve_base(rc, s->array, s->indexes.n);
		vec_foreach (struct expr *, x, &s->indexes)
			resolve_expr(rc, x);
		resolve_expr(rc, s->value_var);
		vec_foreach (struct expr *, x, &s->array_slice)
			resolve_expr(rc, x);
		resolve_expr(rc, s->limit);
		resolve_stmt(rc, s->body);
		break;
	default:
		break;
	}
}

void elab_resolve(struct elab *c)
{
	for (;;) {
		if (c->bodies_resolved < c->bodies.n) {
			struct probe *p = c->bodies.v[c->bodies_resolved++];
			struct rctx rc = {c, &p->locals, NULL, p->file, 0};
			if (!rc.file && p->tok)
				rc.file = p->tok->loc.file;
			resolve_stmt(&rc, p->body);
			continue;
		}
		if (c->functions_resolved < c->s->functions.n) {
			struct functiondecl *fd = c->s->functions.v[c->functions_resolved++];
			struct rctx rc = {c, &fd->locals, fd, fd->file, 0};
			proc_lower_casts(c, fd->body);
			resolve_stmt(&rc, fd->body);
			continue;
		}
		break;
	}
	/* Probe conditions: resolved once each, in their probe's scope. */
	struct derived_probe *dp;
	vec_foreach (struct derived_probe *, dp, &c->s->probes) {
		if (!dp->point->condition || dp->point->condition->lowered_id)
			continue;
		dp->point->condition->lowered_id = 1;
		struct vec none = {0};
		struct rctx rc = {c, &none, NULL, dp->probe->file, 1};
		resolve_expr(&rc, dp->point->condition);
	}
}
