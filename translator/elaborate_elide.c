/* Elision of unused code (skipped under -u), as SystemTap's first
 * optimization pass does it, with its warnings: assignments to locals that
 * are never read, side-effect-free expression statements, then functions,
 * locals and globals no longer referenced, and probes left empty. It runs
 * to a fixed point; like SystemTap, only the first round warns about
 * statements (later rounds elide silently), while elided probes are
 * always reported. */
#include <stdlib.h>
#include <string.h>

#include "elaborate.h"

struct el {
	struct elab *c;
	int round;
	int changed;
	int mult;		 /* derived probes sharing the body walked */
	struct functiondecl *fn; /* the function whose body is walked */
	struct vec impure_fns;	 /* functiondecl *: find_impure's verdict */
	struct vec warned_fns;	 /* functiondecl * reported side-effect free */
};

/* ---- purity ---- */

static int in_vec(struct vec *v, void *p)
{
	for (int i = 0; i < v->n; i++)
		if (v->v[i] == p)
			return 1;
	return 0;
}

static int stmt_pure(struct el *el, struct stmt *s);

/* After find_impure: a function is pure unless it or a function it may
 * call has a side effect (so a recursion with none is pure, as for
 * SystemTap). */
static int fn_pure(struct el *el, struct functiondecl *fd)
{
	return !in_vec(&el->impure_fns, fd);
}

/* Whether call E may (through other calls) run FN. */
static int reach_cb(struct expr *e, void *arg);
struct reach {
	struct functiondecl *target;
	struct vec seen;
	int found;
};

static int reach_cb(struct expr *e, void *arg)
{
	struct reach *r = arg;
	struct functiondecl *fd;
	if (e->kind != E_CALL || r->found)
		return r->found;
	vec_foreach (struct functiondecl *, fd, &e->referents) {
		if (fd == r->target)
			r->found = 1;
		if (r->found || in_vec(&r->seen, fd))
			continue;
		vec_push(&r->seen, fd);
		walk_stmt(fd->body, NULL, reach_cb, r);
	}
	return r->found;
}

static int call_reaches(struct expr *e, struct functiondecl *fn)
{
	struct reach r = {fn, {0}, 0};
	reach_cb(e, &r);
	free(r.seen.v);
	return r.found;
}

static int local_lvalue(const struct expr *e);

static int own_write_cb(struct expr *e, void *arg)
{
	if ((e->kind == E_ASSIGN || e->kind == E_PRE_INC || e->kind == E_POST_INC) &&
	    local_lvalue(e->left))
		*(int *)arg = 1;
	return *(int *)arg;
}

/* As SystemTap sees it, a recursive call writes the caller's own locals
 * (the same declarations): such a call is no side-effect-free statement
 * in the function itself. */
static int writes_own_locals(struct functiondecl *fn)
{
	int found = 0;
	walk_stmt(fn->body, NULL, own_write_cb, &found);
	return found;
}

struct pure_walk {
	struct el *el;
	int in_function; /* writing the function's own locals is fine */
	int pure;
};

static int local_lvalue(const struct expr *e)
{
	if (e && e->kind == E_INDEX)
		e = e->base;
	return e && e->kind == E_SYMBOL && e->var && !e->var->is_global;
}

static int pure_expr_cb(struct expr *e, void *arg)
{
	struct pure_walk *pw = arg;
	switch (e->kind) {
	case E_ASSIGN:
	case E_PRE_INC:
	case E_POST_INC:
		if (!(pw->in_function && local_lvalue(e->left)))
			pw->pure = 0;
		break;
	case E_PRINT:
		if (!e->print_to_string)
			pw->pure = 0;
		break;
	case E_CALL: {
		struct functiondecl *fd;
		if (!e->func)
			pw->pure = 0;
		vec_foreach (struct functiondecl *, fd, &e->referents)
			if (pw->pure && !fn_pure(pw->el, fd))
				pw->pure = 0;
		if (pw->pure && !pw->in_function && pw->el->fn && writes_own_locals(pw->el->fn) &&
		    call_reaches(e, pw->el->fn))
			pw->pure = 0;
		break;
	}
	case E_EMBEDDED:
		if (!e->str || !strstr(e->str, "/* pure */"))
			pw->pure = 0;
		break;
	default:
		break;
	}
	return !pw->pure;
}

static int pure_stmt_cb(struct stmt *s, void *arg)
{
	struct pure_walk *pw = arg;
	if (s->kind == S_EMBEDDED && (!s->code || !strstr(s->code, "/* pure */")))
		pw->pure = 0;
	if (s->kind == S_DELETE && !(pw->in_function && local_lvalue(s->value)))
		pw->pure = 0;
	return !pw->pure;
}

/* A function body: pure if it writes no global and prints nothing. */
static int stmt_pure(struct el *el, struct stmt *s)
{
	struct pure_walk pw = {el, 1, 1};
	walk_stmt(s, pure_stmt_cb, pure_expr_cb, &pw);
	return pw.pure;
}

static int expr_pure(struct el *el, struct expr *e)
{
	struct pure_walk pw = {el, 0, 1};
	walk_expr(e, pure_expr_cb, &pw);
	return pw.pure;
}

/* The impure functions, to a fixed point: each pass judges the bodies
 * with the callees found impure so far. */
static void find_impure(struct el *el)
{
	struct functiondecl *fd;
	el->impure_fns.n = 0;
	for (int more = 1; more;) {
		more = 0;
		vec_foreach (struct functiondecl *, fd, &el->c->s->functions) {
			if (in_vec(&el->impure_fns, fd))
				continue;
			int pure = fd->body && fd->body->kind == S_EMBEDDED
			    ? fd->body->code && strstr(fd->body->code, "/* pure */")
			    : stmt_pure(el, fd->body);
			if (!pure) {
				vec_push(&el->impure_fns, fd);
				more = 1;
			}
		}
	}
}

/* ---- reads and writes ---- */

static void zero_vars(struct vec *vars)
{
	struct vardecl *v;
	vec_foreach (struct vardecl *, v, vars)
		v->read = v->written = 0;
}

static struct vardecl *lvalue_var(struct expr *e)
{
	if (!e)
		return NULL;
	if (e->kind == E_SYMBOL)
		return e->var;
	if ((e->kind == E_INDEX || e->kind == E_IN) && e->base && e->base->kind == E_SYMBOL)
		return e->base->var;
	return NULL;
}

/* The expressions whose value is thrown away: that of the expression
 * statement or for-loop clause being walked. */
static const struct expr *unused_value[2];

/* arg: non-NULL when counting for auto-printing, where "+=" or "++" count
 * as reads only when their value is used (x = a[k]++, not a[k]++;), as in
 * SystemTap, and "delete" counts as a read. */
static int count_expr(struct expr *e, void *arg)
{
	struct vardecl *v;
	int used = !arg || (e != unused_value[0] && e != unused_value[1]);
	switch (e->kind) {
	case E_SYMBOL:
		if (e->var)
			e->var->read++;
		break;
	case E_ASSIGN:
		v = lvalue_var(e->left);
		if (v) {
			v->written++;
			if (strcmp(e->op, "=") && strcmp(e->op, "<<<") && used)
				v->read++;
			/* The lvalue itself is not a read; its indexes are. */
			if (e->left->kind == E_INDEX) {
				struct expr *a;
				vec_foreach (struct expr *, a, &e->left->args)
					walk_expr(a, count_expr, arg);
			}
			walk_expr(e->right, count_expr, arg);
			return 1;
		}
		break;
	case E_PRE_INC:
	case E_POST_INC:
		v = lvalue_var(e->left);
		if (v)
			v->written++;
		if (v && arg && used)
			v->read++;
		if (v && arg) {
			if (e->left->kind == E_INDEX) {
				struct expr *a;
				vec_foreach (struct expr *, a, &e->left->args)
					walk_expr(a, count_expr, arg);
			}
			return 1;
		}
		break;
	case E_INDEX:
	case E_IN:
		if (e->base && e->base->kind == E_SYMBOL && e->base->var)
			e->base->var->read++;
		break;
	default:
		break;
	}
	return 0;
}

static int count_stmt(struct stmt *s, void *arg)
{
	struct expr *x;
	switch (s->kind) {
	case S_EXPR:
		unused_value[0] = s->value;
		unused_value[1] = NULL;
		break;
	case S_FOR:
		unused_value[0] = s->init;
		unused_value[1] = s->incr;
		break;
	case S_DELETE: {
		struct vardecl *v = lvalue_var(s->value);
		if (v) {
			v->written++;
			if (arg)
				v->read++;
			if (s->value->kind == E_INDEX)
				vec_foreach (struct expr *, x, &s->value->args)
					walk_expr(x, count_expr, arg);
			return 1;
		}
		break;
	}
	case S_FOREACH:
		vec_foreach (struct expr *, x, &s->indexes)
			if (x->var)
				x->var->written++;
		if (s->value_var && s->value_var->var)
			s->value_var->var->written++;
		/* A sorted foreach sorts the array in place: SystemTap counts
		 * it as a write (no never-assigned warning for it). */
		if (s->array && s->array->kind == E_SYMBOL && s->array->var) {
			s->array->var->read++;
			if (s->sort_direction)
				s->array->var->written++;
		} else
			walk_expr(s->array, count_expr, arg);
		vec_foreach (struct expr *, x, &s->array_slice)
			walk_expr(x, count_expr, arg);
		walk_expr(s->limit, count_expr, arg);
		walk_stmt(s->body, count_stmt, count_expr, arg);
		return 1;
	case S_TRY:
		if (s->catch_var && s->catch_var->var)
			s->catch_var->var->written++;
		walk_stmt(s->body, count_stmt, count_expr, arg);
		walk_stmt(s->catch_body, count_stmt, count_expr, arg);
		return 1;
	default:
		break;
	}
	return 0;
}

void elab_count_uses_mode(struct elab *c, void *autoprint);

void elab_count_uses(struct elab *c)
{
	elab_count_uses_mode(c, NULL);
}

void elab_count_uses_mode(struct elab *c, void *autoprint)
{
	struct probe *p;
	unused_value[0] = unused_value[1] = NULL;
	vec_foreach (struct probe *, p, &c->bodies)
		zero_vars(&p->locals);
	struct functiondecl *fd;
	vec_foreach (struct functiondecl *, fd, &c->s->functions) {
		zero_vars(&fd->locals);
		zero_vars(&fd->formals);
	}
	zero_vars(&c->s->globals);
	vec_foreach (struct probe *, p, &c->bodies)
		walk_stmt(p->body, count_stmt, count_expr, autoprint);
	struct derived_probe *dp;
	vec_foreach (struct derived_probe *, dp, &c->s->probes)
		walk_expr(dp->point->condition, count_expr, autoprint);
	vec_foreach (struct functiondecl *, fd, &c->s->functions)
		walk_stmt(fd->body, count_stmt, count_expr, autoprint);
}

/* ---- never-assigned warnings (first round only) ---- */

static void warn_never_assigned(struct el *el, struct vec *locals, int mult)
{
	struct vardecl *v;
	vec_foreach (struct vardecl *, v, locals) {
		if (v->written || !v->read)
			continue;
		struct vec others = {0};
		struct vardecl *o;
		vec_foreach (struct vardecl *, o, locals)
			if (o != v)
				vec_push(&others, (void *)o->name);
		vec_foreach (struct vardecl *, o, &el->c->s->globals)
			vec_push(&others, (void *)o->name);
		const char *sim = elab_suggest(v->name, &others);
		free(others.v);
		for (int i = 0; i < mult; i++)
			elab_warning(el->c, v->tok, "never-assigned local variable '%s'%s", v->name,
				     sim);
	}
}

static void warn_globals(struct el *el)
{
	struct vec names = {0};
	struct vardecl *v;
	vec_foreach (struct vardecl *, v, &el->c->s->globals)
		vec_push(&names, (void *)v->name);
	vec_foreach (struct vardecl *, v, &el->c->s->globals) {
		if (v->written || v->init || !v->read)
			continue;
		if (v->file && v->file->is_tapset)
			continue; /* the tapset's business */
		elab_warning(el->c, v->tok, "never-assigned global variable '%s'%s", v->name,
			     elab_suggest(v->name, &names));
	}
	free(names.v);
}

/* ---- assignments to locals never read ---- */

/* Code of a tapset file (an alias body setting variables the user's
 * handler does not read): elided without a warning, as SystemTap does. */
static int in_tapset(struct el *el, const struct token *tok)
{
	(void)el;
	return tok && tok->loc.file && tok->loc.file->is_tapset;
}

static int elide_assign_cb(struct expr *e, void *arg)
{
	struct el *el = arg;
	if (e->kind != E_ASSIGN || (strcmp(e->op, "=") && strcmp(e->op, "<<<")) || !e->left ||
	    e->left->kind != E_SYMBOL)
		return 0;
	struct vardecl *v = e->left->var;
	if (!v || v->is_global || v->read)
		return 0;
	if (el->round == 0 && !in_tapset(el, e->tok))
		for (int i = 0; i < el->mult; i++)
			elab_warning(el->c, e->tok, "Eliding assignment to '%s'", v->name);
	*e = *e->right;
	el->changed = 1;
	return 0;
}

/* ---- side-effect-free statements ---- */

static int reduce_stmt(struct el *el, struct stmt *s);

static int jumps(const struct stmt *s)
{
	return s->kind == S_NEXT || s->kind == S_RETURN || s->kind == S_BREAK ||
	    s->kind == S_CONTINUE;
}

static void reduce_block(struct el *el, struct stmt *b)
{
	int k = 0;
	for (int i = 0; i < b->stmts.n; i++) {
		struct stmt *sub = b->stmts.v[i];
		if (!reduce_stmt(el, sub))
			b->stmts.v[k++] = sub;
		if (jumps(sub))
			break; /* the rest can never run */
	}
	if (k != b->stmts.n)
		el->changed = 1;
	b->stmts.n = k;
}

static int empty_stmt(const struct stmt *s)
{
	return !s || (s->kind == S_BLOCK && s->stmts.n == 0) || s->kind == S_NULL;
}

/* Returns non-zero if S should be removed. */
static int reduce_stmt(struct el *el, struct stmt *s)
{
	if (!s)
		return 0;
	switch (s->kind) {
	case S_BLOCK:
		reduce_block(el, s);
		return s->stmts.n == 0;
	case S_NULL:
		return 1;
	case S_EXPR:
		if (!expr_pure(el, s->value))
			return 0;
		if (el->round == 0 && !in_tapset(el, s->tok))
			for (int i = 0; i < el->mult; i++)
				elab_warning(el->c, s->tok,
					     "Eliding side-effect-free "
					     "expression ");
		return 1;
	case S_IF:
		if (reduce_stmt(el, s->then))
			s->then = stmt_new(S_BLOCK, s->tok);
		if (s->els && reduce_stmt(el, s->els))
			s->els = NULL;
		return empty_stmt(s->then) && !s->els && expr_pure(el, s->cond);
	case S_FOREACH:
		/* An empty loop over an array does nothing. */
		if (reduce_stmt(el, s->body)) {
			s->body = stmt_new(S_BLOCK, s->tok);
			return (!s->limit || expr_pure(el, s->limit)) && expr_pure(el, s->array);
		}
		return 0;
	case S_FOR:
		/* As SystemTap: a loop with an empty body, no initializer
		 * and no increment goes, even one that would never end. */
		if (reduce_stmt(el, s->body))
			s->body = stmt_new(S_BLOCK, s->tok);
		return empty_stmt(s->body) && !s->init && !s->incr &&
		    (!s->cond || expr_pure(el, s->cond));
	case S_TRY:
		/* An unread catch variable is dropped. */
		if (s->catch_var && s->catch_var->var && !s->catch_var->var->read) {
			s->catch_var = NULL;
			el->changed = 1;
		}
		/* Nothing to try: nothing can fail, the catch goes with it
		 * (as in SystemTap 4.8, whatever the catch does). */
		if (reduce_stmt(el, s->body))
			return 1;
		if (reduce_stmt(el, s->catch_body))
			s->catch_body = stmt_new(S_BLOCK, s->tok);
		return 0;
	default:
		return 0;
	}
}

/* ---- dropping what is no longer referenced ---- */

static void drop_unused_locals(struct vec *locals)
{
	int k = 0;
	for (int i = 0; i < locals->n; i++) {
		struct vardecl *v = locals->v[i];
		if (v->read || v->written) {
			v->id = k;
			locals->v[k++] = v;
		}
	}
	locals->n = k;
}

static int mark_calls(struct expr *e, void *arg)
{
	struct vec *reached = arg;
	struct functiondecl *fd;
	if (e->kind != E_CALL)
		return 0;
	vec_foreach (struct functiondecl *, fd, &e->referents)
		if (!in_vec(reached, fd)) {
			vec_push(reached, fd);
			walk_stmt(fd->body, NULL, mark_calls, reached);
		}
	return 0;
}

/* ---- overloads no `next` can reach ---- */

static int next_stmt_cb(struct stmt *s, void *arg)
{
	if (s->kind == S_NEXT)
		*(int *)arg = 1;
	return *(int *)arg;
}

int elab_may_next(const struct functiondecl *fd)
{
	if (fd->body && fd->body->kind == S_EMBEDDED)
		return fd->body->code && strstr(fd->body->code, "STAP_NEXT");
	int found = 0;
	walk_stmt(fd->body, next_stmt_cb, NULL, &found);
	return found;
}

/* As SystemTap's optimizer: the overloads after one that never says
 * `next` never run, and go. */
static int prune_call(struct expr *e, void *arg)
{
	struct el *el = arg;
	if (e->kind != E_CALL)
		return 0;
	for (int i = 0; i + 1 < e->referents.n; i++)
		if (!elab_may_next(e->referents.v[i])) {
			e->referents.n = i + 1;
			el->changed = 1;
		}
	return 0;
}

static void drop_unused_functions(struct el *el)
{
	struct elab *c = el->c;
	struct vec reached = {0};
	struct probe *p;
	vec_foreach (struct probe *, p, &c->bodies)
		walk_stmt(p->body, NULL, mark_calls, &reached);
	struct derived_probe *dp;
	vec_foreach (struct derived_probe *, dp, &c->s->probes)
		walk_expr(dp->point->condition, mark_calls, &reached);
	int k = 0;
	for (int i = 0; i < c->s->functions.n; i++) {
		struct functiondecl *fd = c->s->functions.v[i];
		if (in_vec(&reached, fd))
			c->s->functions.v[k++] = fd;
		else
			fd->used = 0;
	}
	if (k != c->s->functions.n)
		el->changed = 1;
	c->s->functions.n = k;
	free(reached.v);
}

static void drop_unused_globals(struct el *el)
{
	struct vec *g = &el->c->s->globals;
	int k = 0;
	for (int i = 0; i < g->n; i++) {
		struct vardecl *v = g->v[i];
		if (v->read || v->written)
			g->v[k++] = v;
		else
			v->used = 0;
	}
	g->n = k;
}

static void drop_empty_probes(struct el *el)
{
	struct elab *c = el->c;
	struct vec *ps = &c->s->probes;
	int k = 0;
	for (int i = 0; i < ps->n; i++) {
		struct derived_probe *dp = ps->v[i];
		if (!empty_stmt(dp->probe->body)) {
			ps->v[k++] = dp;
			continue;
		}
		struct probe_component *c0 = dp->point->components.v[0];
		const struct token *tok = dp->tok ? dp->tok : dp->probe->tok;
		elab_warning(c, tok, "Probe '%s' has been elided", c0->functor);
		el->changed = 1;
	}
	ps->n = k;
	/* Keep only bodies still in use. */
	elab_count_derived(c);
	k = 0;
	for (int i = 0; i < c->bodies.n; i++)
		if (((struct probe *)c->bodies.v[i])->nderived)
			c->bodies.v[k++] = c->bodies.v[i];
	c->bodies.n = k;
}

/* Like SystemTap's optimizer, a nested block of one statement becomes
 * that statement (the -p2 -v text shows it). */
static struct stmt *flatten(struct stmt *s)
{
	if (!s)
		return s;
	switch (s->kind) {
	case S_BLOCK:
		for (int i = 0; i < s->stmts.n; i++)
			s->stmts.v[i] = flatten(s->stmts.v[i]);
		if (s->stmts.n == 1)
			return s->stmts.v[0];
		return s;
	case S_IF:
		s->then = flatten(s->then);
		s->els = flatten(s->els);
		return s;
	case S_FOR:
	case S_FOREACH:
		s->body = flatten(s->body);
		return s;
	case S_TRY:
		s->body = flatten(s->body);
		s->catch_body = flatten(s->catch_body);
		return s;
	default:
		return s;
	}
}

static void flatten_body(struct stmt *body)
{
	if (!body || body->kind != S_BLOCK)
		return;
	for (int i = 0; i < body->stmts.n; i++)
		body->stmts.v[i] = flatten(body->stmts.v[i]);
}

/* Derived probes sharing P's body (elab_count_derived first). */
static int sharing(struct elab *c, struct probe *p)
{
	(void)c;
	return p->nderived ? p->nderived : 1;
}

void elab_elide(struct elab *c, int after_types)
{
	struct el el = {0};
	el.c = c;
	struct probe *p;
	struct functiondecl *fd;
	/* After type checking only the folded constants are new: statements
	 * go silently (warnings belong to the first round before types). */
	for (el.round = after_types; el.round < 50; el.round++) {
		el.changed = 0;
		elab_count_uses(c);
		elab_count_derived(c);
		find_impure(&el);
		if (el.round == 0) {
			vec_foreach (struct probe *, p, &c->bodies)
				warn_never_assigned(&el, &p->locals, sharing(c, p));
			vec_foreach (struct functiondecl *, fd, &c->s->functions)
				warn_never_assigned(&el, &fd->locals, 1);
			warn_globals(&el);
		}
		if (after_types) {
			vec_foreach (struct probe *, p, &c->bodies)
				el.changed |= elab_fold(p->body, 0);
			vec_foreach (struct functiondecl *, fd, &c->s->functions)
				el.changed |= elab_fold(fd->body, 0);
		}
		if (after_types) {
			vec_foreach (struct probe *, p, &c->bodies)
				walk_stmt(p->body, NULL, prune_call, &el);
			vec_foreach (struct functiondecl *, fd, &c->s->functions)
				walk_stmt(fd->body, NULL, prune_call, &el);
		}
		vec_foreach (struct probe *, p, &c->bodies) {
			el.mult = sharing(c, p);
			walk_stmt(p->body, NULL, elide_assign_cb, &el);
		}
		vec_foreach (struct functiondecl *, fd, &c->s->functions) {
			el.mult = 1;
			walk_stmt(fd->body, NULL, elide_assign_cb, &el);
		}
		vec_foreach (struct probe *, p, &c->bodies) {
			el.mult = sharing(c, p);
			flatten_body(p->body);
			el.fn = NULL;
			if (p->body && p->body->kind == S_BLOCK)
				reduce_block(&el, p->body);
		}
		vec_foreach (struct functiondecl *, fd, &c->s->functions) {
			el.mult = 1;
			flatten_body(fd->body);
			el.fn = fd;
			if (fd->body && fd->body->kind == S_BLOCK)
				reduce_block(&el, fd->body);
			el.fn = NULL;
			if (!after_types && empty_stmt(fd->body) && !in_vec(&el.warned_fns, fd)) {
				vec_push(&el.warned_fns, fd);
				if (!in_tapset(&el, fd->tok))
					elab_warning(c, fd->tok, "side-effect-free function '%s'",
						     fd->name);
			}
		}
		drop_empty_probes(&el);
		drop_unused_functions(&el);
		elab_count_uses(c);
		vec_foreach (struct probe *, p, &c->bodies)
			drop_unused_locals(&p->locals);
		vec_foreach (struct functiondecl *, fd, &c->s->functions)
			drop_unused_locals(&fd->locals);
		drop_unused_globals(&el);
		if (!el.changed)
			break;
	}
	vec_foreach (struct probe *, p, &c->bodies)
		flatten_body(p->body);
	vec_foreach (struct functiondecl *, fd, &c->s->functions)
		flatten_body(fd->body);
	free(el.impure_fns.v);
	free(el.warned_fns.v);
}
