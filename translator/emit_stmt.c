/* Pass 3: statements. Control flow is gotos to labels of the enclosing
 * construct: errors go to the innermost catch (or the handler's `out`),
 * break/continue to the loop's labels. A foreach holds a runtime iterator,
 * so it gets its own labels for every way out, which end the iterator and
 * then go on to the outer target.
 *
 * MAXACTION: every statement costs one action and each loop iteration one
 * more; the count is checked after each statement, as SystemTap does, so
 * the error names the statement that ran out. */
#include "emit.h"

#include <string.h>

void emit_action(struct emitter *E, const struct token *t)
{
	emit_line(E,
		  "if (__builtin_expect(--c->actionremaining <= c->actionfloor, 0)) { "
		  "c->last_error = \"MAXACTION exceeded\"; c->last_stmt = %s; goto %s; }",
		  emit_tokloc(t), E->err_label);
}

static void check_error(struct emitter *E)
{
	emit_line(E, "if (__builtin_expect(c->last_error != 0, 0)) goto %s;", E->err_label);
}

/* Emit LABEL: with the attribute that keeps gcc quiet when it is unused. */
static void label(struct emitter *E, const char *name)
{
	emit_line(E, "%s: __attribute__((unused));", name);
}

static int body_is_empty(const struct stmt *st)
{
	if (!st || st->kind == S_NULL)
		return 1;
	if (st->kind != S_BLOCK)
		return 0;
	struct stmt *c;
	vec_foreach (struct stmt *, c, &st->stmts)
		if (!body_is_empty(c))
			return 0;
	return 1;
}

/* One loop iteration's action; checked here only if the body cannot. */
static void iteration(struct emitter *E, const struct stmt *st, const struct stmt *body)
{
	if (body_is_empty(body))
		emit_action(E, st->tok);
	else
		emit_line(E, "c->actionremaining--;");
}

static void expr_stmt(struct emitter *E, const struct stmt *st)
{
	emit_line(E, "(void)(%s);", emit_to_string(E, st->value));
	if (emit_has_side_effects(st->value))
		check_error(E);
	emit_action(E, st->tok);
}

static void block(struct emitter *E, const struct stmt *st)
{
	struct stmt *c;
	emit_line(E, "{");
	E->indent++;
	vec_foreach (struct stmt *, c, &st->stmts)
		emit_stmt(E, c);
	E->indent--;
	emit_line(E, "}");
}

static void if_stmt(struct emitter *E, const struct stmt *st)
{
	emit_line(E, "if (%s) {", emit_to_string(E, st->cond));
	E->indent++;
	emit_stmt(E, st->then);
	E->indent--;
	if (st->els) {
		emit_line(E, "} else {");
		E->indent++;
		emit_stmt(E, st->els);
		E->indent--;
	}
	emit_line(E, "}");
	emit_action(E, st->tok);
}

/* A loop's body, where break and continue go to brk and cont; then the
 * cont label. */
static void loop_body(struct emitter *E, const struct stmt *body, const char *brk, const char *cont)
{
	const char *ob = E->brk_label, *oc = E->cont_label;

	E->brk_label = brk;
	E->cont_label = cont;
	emit_stmt(E, body);
	E->brk_label = ob;
	E->cont_label = oc;
	label(E, cont);
}

static void for_stmt(struct emitter *E, const struct stmt *st)
{
	const char *brk = emit_label(E, "brk"), *cont = emit_label(E, "cont");
	emit_action(E, st->tok);
	if (st->init)
		emit_line(E, "(void)(%s);", emit_to_string(E, st->init));
	emit_line(E, "for (;;) {");
	E->indent++;
	iteration(E, st, st->body);
	if (st->cond)
		emit_line(E, "if (!(%s)) goto %s;", emit_to_string(E, st->cond), brk);
	loop_body(E, st->body, brk, cont);
	if (st->incr)
		emit_line(E, "(void)(%s);", emit_to_string(E, st->incr));
	E->indent--;
	emit_line(E, "}");
	label(E, brk);
}

static void assign_from_iter(struct emitter *E, const struct expr *var, const char *getter)
{
	const char *lv = emit_var(var->var);
	if (var->var->type == T_STRING)
		emit_line(E, "_stp_strlcpy(%s, %s, MAXSTRINGLEN);", lv, getter);
	else
		emit_line(E, "%s = %s;", lv, getter);
}

/* The bucket count of a histogram, as the runtime lays it out: log
 * histograms have 128; linear ones one per interval from start to stop
 * inclusive, plus underflow and overflow. */
static int64_t hist_buckets(const struct expr *h)
{
	if (!h->hist_linear)
		return 128;
	int64_t p[3] = {0, 0, 1};
	for (int i = 0; i < 3 && i < h->args.n; i++) {
		const struct expr *x = vec_at(&h->args, i);
		if (x && x->kind == E_NUMBER)
			p[i] = x->num;
	}
	if (p[2] <= 0 || p[1] <= p[0])
		return 0;
	return (p[1] - p[0]) / p[2] + 3;
}

/* foreach (b in @hist_log(x)): every bucket index, empty ones too. */
static void foreach_hist(struct emitter *E, const struct stmt *st)
{
	const struct expr *k = st->indexes.n ? vec_at(&st->indexes, 0) : NULL;
	if (!k || !k->var || st->indexes.n != 1) {
		emit_error(E, st->tok, "foreach over a histogram takes one index");
		return;
	}
	const char *brk = emit_label(E, "brk"), *cont = emit_label(E, "cont");
	const char *kv = emit_var(k->var);
	emit_action(E, st->tok);
	emit_line(E, "for (%s = 0; %s < %lld; %s++) {", kv, kv, (long long)hist_buckets(st->array),
		  kv);
	E->indent++;
	iteration(E, st, st->body);
	loop_body(E, st->body, brk, cont);
	E->indent--;
	emit_line(E, "}");
	label(E, brk);
	emit_line(E, ";");
}

/* The aggregate that orders a stats array's values ('in a @sum-');
 * SystemTap's default is @count. */
static const char *sort_stat_op(const char *aggr)
{
	static const char *const map[][2] = {
	    {"@sum", "STP_SUM"}, {"@min", "STP_MIN"}, {"@max", "STP_MAX"}, {"@avg", "STP_AVG"}};
	for (size_t i = 0; aggr && i < sizeof map / sizeof *map; i++)
		if (!strcmp(aggr, map[i][0]))
			return map[i][1];
	return "STP_COUNT";
}

static void foreach_stmt(struct emitter *E, const struct stmt *st)
{
	const struct expr *arr = st->array;
	if (arr && arr->kind == E_HIST) {
		foreach_hist(E, st);
		return;
	}
	if (!arr || arr->kind != E_SYMBOL || !arr->var || arr->var->arity <= 0) {
		emit_error(E, st->tok, "foreach needs an array");
		return;
	}
	int id = emit_id(E);
	const char *it = xasprintf("l->it_%d", id);
	sb_printf(E->tmps, "\tstruct _stp_map_iter *it_%d;\n", id);
	const char *brk = emit_label(E, "brk"), *cont = emit_label(E, "cont");
	const char *err = emit_label(E, "fe_err"), *ret = emit_label(E, "fe_ret");
	const char *nxt = emit_label(E, "fe_next"), *done = emit_label(E, "fe_done");

	emit_action(E, st->tok);
	emit_line(E, "{");
	E->indent++;
	const char *limit = st->limit ? emit_to_string(E, st->limit) : "0";
	const char *slice = "0";
	unsigned mask = 0;
	if (st->array_slice.n) {
		struct strbuf b = {0}, *save = E->o;
		E->o = &b;
		slice = emit_slice_keys(E, &st->array_slice, &mask);
		E->o = save;
		emit_line(E, "%s", sb_str(&b));
	}
	int column = st->sort_direction == 0 ? -1 : st->sort_column;
	int dir = st->sort_direction < 0 ? -1 : 1;
	emit_line(E, "%s = _stp_map_iter_start(%s, %d, %d, %s, %s, %s, %uu);", it,
		  emit_var(arr->var), column, dir, sort_stat_op(st->sort_aggr), limit, slice, mask);
	emit_line(E, "while (_stp_map_iter_next(%s)) {", it);
	E->indent++;
	iteration(E, st, st->body);
	struct expr *k;
	vec_foreach (struct expr *, k, &st->indexes) {
		if (!k || !k->var)
			continue;
		const char *g = k->var->type == T_STRING
		    ? xasprintf("_stp_map_iter_key_str(%s, %d)", it, k_i)
		    : xasprintf("_stp_map_iter_key_long(%s, %d)", it, k_i);
		assign_from_iter(E, k, g);
	}
	if (st->value_var && st->value_var->var) {
		const struct expr *v = st->value_var;
		if (v->var->type == T_STRING)
			assign_from_iter(E, v, xasprintf("_stp_map_iter_val_str(%s)", it));
		else if (v->var->type == T_STATS)
			emit_line(E, "%s = _stp_map_iter_val_stat(%s);", emit_var(v->var), it);
		else
			assign_from_iter(E, v, xasprintf("_stp_map_iter_val_long(%s)", it));
	}
	struct emitter save = *E;
	E->err_label = err;
	E->ret_label = ret;
	E->next_label = nxt;
	E->brk_label = brk;
	E->cont_label = cont;
	emit_stmt(E, st->body);
	E->err_label = save.err_label;
	E->ret_label = save.ret_label;
	E->next_label = save.next_label;
	E->brk_label = save.brk_label;
	E->cont_label = save.cont_label;
	label(E, cont);
	E->indent--;
	emit_line(E, "}");
	label(E, brk);
	emit_line(E, "_stp_map_iter_end(%s);", it);
	emit_line(E, "goto %s;", done);
	/* Leaving the loop early: end the iterator, then go where asked. */
	label(E, err);
	emit_line(E, "_stp_map_iter_end(%s);", it);
	emit_line(E, "goto %s;", E->err_label);
	label(E, ret);
	emit_line(E, "_stp_map_iter_end(%s);", it);
	emit_line(E, "goto %s;", E->ret_label);
	label(E, nxt);
	emit_line(E, "_stp_map_iter_end(%s);", it);
	emit_line(E, "goto %s;", E->next_label);
	E->indent--;
	emit_line(E, "}");
	label(E, done);
	emit_line(E, ";");
}

static void delete_stmt(struct emitter *E, const struct stmt *st)
{
	const struct expr *v = st->value;
	if (v->kind == E_SYMBOL && v->var) {
		const char *n = emit_var(v->var);
		if (v->var->arity > 0)
			emit_line(E, "_stp_map_clear(%s);", n);
		else if (v->var->type == T_STATS)
			emit_line(E, "_stp_stat_clear(%s);", n);
		else if (v->var->type == T_STRING)
			emit_line(E, "%s[0] = 0;", n);
		else
			emit_line(E, "%s = 0;", n);
	} else if (v->kind == E_INDEX && emit_has_wildcard(&v->args)) {
		/* delete a[k, *]: every entry matching the given keys. The
		 * iterator's snapshot stays valid while entries go. */
		const char *m = emit_map(E, v->base);
		const struct vardecl *var = v->base->var;
		int id = emit_id(E);
		unsigned mask;
		struct strbuf b = {0}, *save = E->o;
		E->o = &b;
		const char *sk = emit_slice_keys(E, &v->args, &mask);
		E->o = save;
		emit_line(E, "{ %s", sb_str(&b));
		emit_line(E,
			  "struct _stp_map_iter *it%d = _stp_map_iter_start(%s, -1, 1, STP_COUNT, "
			  "0, %s, %uu);",
			  id, m, sk, mask);
		emit_line(E, "while (_stp_map_iter_next(it%d)) {", id);
		emit_line(E, "\tstruct _stp_val dk%d[%d];", id, v->args.n);
		for (int i = 0; i < v->args.n; i++) {
			if (var && var->index_types[i] == T_STRING)
				emit_line(E,
					  "\tdk%d[%d].n = 0; dk%d[%d].s = "
					  "_stp_map_iter_key_str(it%d, %d);",
					  id, i, id, i, id, i);
			else
				emit_line(E,
					  "\tdk%d[%d].n = _stp_map_iter_key_long(it%d, %d); "
					  "dk%d[%d].s = 0;",
					  id, i, id, i, id, i);
		}
		emit_line(E, "\t_stp_map_delete(%s, dk%d);", m, id);
		emit_line(E, "}");
		emit_line(E, "_stp_map_iter_end(it%d); }", id);
	} else if (v->kind == E_INDEX) {
		const char *m = emit_map(E, v->base);
		struct strbuf b = {0}, *save = E->o;
		E->o = &b;
		const char *k = emit_keys(E, &v->args);
		E->o = save;
		emit_line(E, "{ %s_stp_map_delete(%s, %s); }", sb_str(&b), m, k);
	} else {
		emit_error(E, st->tok, "cannot delete this");
	}
	emit_action(E, st->tok);
}

static void try_stmt(struct emitter *E, const struct stmt *st)
{
	const char *catch = emit_label(E, "catch"), *end = emit_label(E, "try_end");
	const char *outer = E->err_label;
	emit_action(E, st->tok);
	emit_line(E, "{");
	E->indent++;
	E->err_label = catch;
	emit_stmt(E, st->body);
	E->err_label = outer;
	emit_line(E, "goto %s;", end);
	label(E, catch);
	/* MAXACTION and abort() are not catchable. */
	emit_line(E, "if (c->actionremaining <= c->actionfloor || c->aborted) goto %s;", outer);
	if (st->catch_var && st->catch_var->var)
		emit_line(E, "_stp_strlcpy(%s, c->last_error, MAXSTRINGLEN);",
			  emit_var(st->catch_var->var));
	emit_line(E, "c->last_error = 0;");
	if (st->catch_body)
		emit_stmt(E, st->catch_body);
	E->indent--;
	emit_line(E, "}");
	label(E, end);
	emit_line(E, ";");
}

static void return_stmt(struct emitter *E, const struct stmt *st)
{
	if (!E->in_function) {
		emit_error(E, st->tok, "return outside a function");
		return;
	}
	if (st->value) {
		char *v = emit_to_string(E, st->value);
		if (E->func->type == T_STRING)
			emit_line(E, "_stp_strlcpy(l->__retvalue, %s, MAXSTRINGLEN);", v);
		else
			emit_line(E, "l->__retvalue = %s;", v);
		if (emit_has_side_effects(st->value))
			check_error(E);
	}
	emit_action(E, st->tok);
	emit_line(E, "goto %s;", E->ret_label);
}

void emit_stmt(struct emitter *E, const struct stmt *st)
{
	if (!st)
		return;
	switch (st->kind) {
	case S_BLOCK:
		block(E, st);
		break;
	case S_TRY:
		try_stmt(E, st);
		break;
	case S_EMBEDDED:
		emit_line(E, "{");
		emit_line(E, "%s", st->code ? st->code : "");
		emit_line(E, ";}");
		check_error(E);
		break;
	case S_NULL:
		break;
	case S_EXPR:
		expr_stmt(E, st);
		break;
	case S_IF:
		if_stmt(E, st);
		break;
	case S_FOR:
		for_stmt(E, st);
		break;
	case S_FOREACH:
		foreach_stmt(E, st);
		break;
	case S_RETURN:
		return_stmt(E, st);
		break;
	case S_DELETE:
		delete_stmt(E, st);
		break;
	case S_NEXT:
		emit_action(E, st->tok);
		emit_line(E, "goto %s;", E->next_label);
		break;
	case S_BREAK:
	case S_CONTINUE:
		emit_action(E, st->tok);
		if (!E->brk_label)
			emit_fatal(E, st->tok,
				   st->kind == S_BREAK ? "cannot 'break' outside loop"
						       : "cannot 'continue' outside loop");
		else
			emit_line(E, "goto %s;",
				  st->kind == S_BREAK ? E->brk_label : E->cont_label);
		break;
	}
}
