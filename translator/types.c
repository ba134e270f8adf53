/* Type inference, as SystemTap does it: every probe body and function is
 * walked with an expected type for each expression, and types flow into
 * variables, array indexes, function parameters and results until a walk
 * changes nothing. A last walk reports what stayed unresolved. */
#include <string.h>

#include <stdlib.h>

#include "elaborate.h"

struct tctx {
	struct elab *c;
	struct functiondecl *fn;
	struct expr *stmt_value; /* value of an expression statement */
	const char *dp_pp;	 /* pp of the probe walked, for messages */
	int abort;		 /* SystemTap throws on some errors: the rest
				    of the body is not walked this time */
};

/* Each place is reported once, however often the walks revisit it. */
static struct vec reported;

static int first_report(const void *key)
{
	for (int i = 0; i < reported.n; i++)
		if (reported.v[i] == key)
			return 0;
	vec_push(&reported, (void *)key);
	return 1;
}

static const char *tn(enum exp_type t)
{
	return exp_type_name(t);
}

static void set_changed(struct tctx *tc)
{
	tc->c->changed = 1;
}

static void infer(struct tctx *tc, struct expr *e, enum exp_type t);

/* A plain mismatch: "type mismatch: expected long but found string". */
static void mismatch(struct tctx *tc, struct expr *e, enum exp_type want)
{
	if (!first_report(e))
		return;
	elab_error(tc->c, e->tok, "type mismatch: expected %s but found %s", tn(want), tn(e->type));
}

/* E meets a declared type (f:long, x:string). SystemTap words this
 * mismatch the other way round: "expected <E's type> but found <T>". */
static void declared(struct tctx *tc, struct expr *e, enum exp_type t)
{
	infer(tc, e, T_UNKNOWN);
	if (e->type == T_UNKNOWN)
		infer(tc, e, t);
	else if (e->type != t && first_report(e))
		elab_error(tc->c, e->tok, "type mismatch: expected %s but found %s", tn(e->type),
			   tn(t));
}

/* Give E (known or not) type T, as expected by its context. */
static void expect(struct tctx *tc, struct expr *e, enum exp_type t)
{
	if (t == T_UNKNOWN)
		return;
	if (e->type == T_UNKNOWN) {
		e->type = t;
		set_changed(tc);
	} else if (e->type != t) {
		mismatch(tc, e, t);
	}
}

/* Variable V takes type T at TOK. */
static void var_type(struct tctx *tc, struct vardecl *v, enum exp_type t, const struct token *tok)
{
	if (!v || t == T_UNKNOWN)
		return;
	if (v->type == T_UNKNOWN) {
		v->type = t;
		v->type_tok = tok;
		set_changed(tc);
	} else if (v->type != t && first_report(tok)) {
		elab_error(tc->c, tok, "type mismatch (%s)", tn(t));
		elab_error(tc->c, v->type_tok ? v->type_tok : v->tok,
			   "type was first inferred here (%s)", tn(v->type));
	}
}

static void var_arity(struct tctx *tc, struct vardecl *v, int arity, const struct token *tok)
{
	if (!v || arity < 0)
		return;
	if (v->arity < 0) {
		v->arity = arity;
		v->arity_tok = tok;
		set_changed(tc);
	} else if (v->arity != arity) {
		tc->abort = 1;
		if (!first_report(tok))
			return;
		elab_error(tc->c, tok, "inconsistent arity (%d vs %d)", v->arity, arity);
		elab_error(tc->c, v->arity_tok ? v->arity_tok : v->tok,
			   "arity %d first inferred here", v->arity);
		tc->abort = 1;
	}
}

/* Index I of a tuple: an array key or a function argument. */
static void index_type(struct tctx *tc, enum exp_type *slot, const struct token **slot_tok, int i,
		       struct expr *ix)
{
	infer(tc, ix, T_UNKNOWN);
	if (*slot == T_UNKNOWN) {
		if (ix->type != T_UNKNOWN) {
			*slot = ix->type;
			*slot_tok = ix->tok;
			set_changed(tc);
		}
	} else if (ix->type == T_UNKNOWN) {
		infer(tc, ix, *slot);
	} else if (ix->type != *slot && first_report(ix)) {
		elab_error(tc->c, ix->tok, "index %d type mismatch (%s)", i, tn(ix->type));
		elab_error(tc->c, *slot_tok,
			   "type of index %d was first "
			   "inferred here (%s)",
			   i, tn(*slot));
	}
}

static void array_indexes(struct tctx *tc, struct vardecl *v, struct vec *ixs,
			  const struct token *tok)
{
	if (ixs->n > STAP_MAX_ARITY) {
		if (first_report(tok))
			elab_error(tc->c, tok, "too many indexes (%d, at most %d)", ixs->n,
				   STAP_MAX_ARITY);
		return;
	}
	var_arity(tc, v, ixs->n, tok);
	for (int i = 0; i < ixs->n && i < STAP_MAX_ARITY; i++) {
		struct expr *ix = ixs->v[i];
		if (!ix)
			continue;
		if (!v) {
			infer(tc, ix, T_UNKNOWN);
			continue;
		}
		index_type(tc, &v->index_types[i], &v->index_tok[i], i, ix);
	}
}

static void unresolved(struct tctx *tc, struct expr *e)
{
	if (tc->c->assert_types && e->type == T_UNKNOWN && first_report(e))
		elab_error(tc->c, e->tok, "unresolved type ");
}

/* A symbol or array element used as a value of type T. */
static void infer_var(struct tctx *tc, struct expr *e, struct vardecl *v, enum exp_type t)
{
	if (!v)
		return;
	var_type(tc, v, t, e->kind == E_INDEX ? e->base->tok : e->tok);
	if (e->type != v->type) {
		e->type = v->type;
		set_changed(tc);
	}
}

static void infer_hist(struct tctx *tc, struct expr *e)
{
	infer(tc, e->left, T_STATS);
	struct expr *a;
	vec_foreach (struct expr *, a, &e->args)
		infer(tc, a, T_LONG);
	if (e->type == T_UNKNOWN) {
		e->type = T_LONG;
		set_changed(tc);
	}
}

static void infer_assign(struct tctx *tc, struct expr *e, enum exp_type t)
{
	const char *op = e->op;
	if (!strcmp(op, "<<<")) {
		infer(tc, e->left, T_STATS);
		infer(tc, e->right, T_LONG);
		expect(tc, e, T_LONG);
		return;
	}
	if (!strcmp(op, ".=")) {
		infer(tc, e->left, T_STRING);
		infer(tc, e->right, T_STRING);
		expect(tc, e, T_STRING);
		return;
	}
	if (strcmp(op, "=")) {
		infer(tc, e->left, T_LONG);
		infer(tc, e->right, T_LONG);
		expect(tc, e, T_LONG);
		return;
	}
	enum exp_type sub = t;
	struct vardecl *rv = e->right->kind == E_SYMBOL ? e->right->var
	    : e->right->kind == E_INDEX			? e->right->base->var
							: NULL;
	if (rv && rv->type == T_STATS) {
		if (first_report(e->right))
			elab_error(tc->c, e->right->tok, "invalid type stats");
		return;
	}
	infer(tc, e->left, sub);
	infer(tc, e->right, sub);
	if (sub == T_UNKNOWN && e->right->type != T_UNKNOWN && e->right->type != T_STATS)
		infer(tc, e->left, e->right->type);
	else if (sub == T_UNKNOWN && e->left->type != T_UNKNOWN && e->left->type != T_STATS)
		infer(tc, e->right, e->left->type);
	if (e->type == T_UNKNOWN && e->left->type != T_UNKNOWN) {
		e->type = e->left->type;
		set_changed(tc);
	}
}

/* As SystemTap: the left operand is checked against the right one's type
 * as known before this visit, then the right against the left's. */
static void infer_compare(struct tctx *tc, struct expr *e)
{
	enum exp_type rt = e->right->kind == E_NUMBER ? T_LONG
	    : e->right->kind == E_STRING	      ? T_STRING
						      : e->right->type;
	infer(tc, e->left, rt);
	infer(tc, e->right, e->left->type);
	if (e->left->type == T_UNKNOWN && e->right->type != T_UNKNOWN)
		infer(tc, e->left, e->right->type);
	expect(tc, e, T_LONG);
}

static void infer_ternary(struct tctx *tc, struct expr *e, enum exp_type t)
{
	infer(tc, e->cond, T_LONG);
	enum exp_type sub = t != T_UNKNOWN ? t : e->type;
	infer(tc, e->left, sub);
	infer(tc, e->right, sub);
	if (sub == T_UNKNOWN) {
		if (e->left->type != T_UNKNOWN)
			infer(tc, e->right, e->left->type);
		else if (e->right->type != T_UNKNOWN)
			infer(tc, e->left, e->right->type);
	}
	if (e->type == T_UNKNOWN && e->left->type != T_UNKNOWN) {
		e->type = e->left->type;
		set_changed(tc);
	}
}

/* The arguments of a call against the parameters of one overload. */
static void call_args(struct tctx *tc, struct expr *e, struct functiondecl *fd)
{
	for (int i = 0; i < e->args.n && i < fd->formals.n; i++) {
		struct vardecl *f = fd->formals.v[i];
		struct expr *a = e->args.v[i];
		struct vardecl *av = a->kind == E_SYMBOL ? a->var
		    : a->kind == E_INDEX		 ? a->base->var
							 : NULL;
		if (av && av->type == T_STATS) {
			/* Stats are no values: the parameter stays untyped. */
			if (tc->c->assert_types && first_report(a))
				elab_error(tc->c, a->tok, "invalid type stats");
			continue;
		}
		const struct token *slot_tok = f->type_tok ? f->type_tok : a->tok;
		enum exp_type before = f->type;
		if (f->type != T_UNKNOWN && f->type_tok == f->tok) {
			declared(tc, a, f->type); /* x:long / x:string */
			continue;
		}
		index_type(tc, &f->type, &slot_tok, i, a);
		if (before == T_UNKNOWN && f->type != T_UNKNOWN)
			f->type_tok = slot_tok;
	}
}

/* A call takes the type of the first overload that has one; the others
 * must agree (an untyped one takes it, as a return value). */
static void infer_call(struct tctx *tc, struct expr *e, enum exp_type t)
{
	struct functiondecl *fd = e->func, *typed = NULL;
	if (!fd)
		return;
	vec_foreach (struct functiondecl *, fd, &e->referents) {
		call_args(tc, e, fd);
		if (!typed && fd->type != T_UNKNOWN)
			typed = fd;
	}
	fd = e->func;
	/* The context gives a function its type only when nothing else
	 * does (a round where nothing else was inferred). */
	if (!typed && t != T_UNKNOWN && t != T_STATS && tc->c->context_calls) {
		fd->type = t;
		fd->type_tok = e->tok;
		tc->c->context_calls = 0;
		set_changed(tc);
		typed = fd;
	}
	if (typed && e->type != typed->type) {
		e->type = typed->type;
		set_changed(tc);
	}
	vec_foreach (struct functiondecl *, fd, &e->referents) {
		if (fd == typed || e->type == T_UNKNOWN)
			continue;
		if (fd->type == T_UNKNOWN) {
			fd->type = e->type;
			fd->type_tok = e->tok;
			set_changed(tc);
		} else if (fd->type != e->type && first_report(e)) {
			elab_error(tc->c, e->tok, "type mismatch (%s)", tn(e->type));
			elab_error(tc->c, fd->type_tok ? fd->type_tok : fd->tok,
				   "type was first inferred here (%s)", tn(fd->type));
		}
	}
	if (t != T_UNKNOWN && typed && e->type != t && first_report(e)) {
		elab_error(tc->c, e->tok, "type mismatch (%s)", tn(t));
		elab_error(tc->c, typed->type_tok ? typed->type_tok : typed->tok,
			   "type was first inferred here (%s)", tn(typed->type));
	}
}

static void infer_print(struct tctx *tc, struct expr *e)
{
	int first = 0;
	if (e->print_has_fmt && e->args.n > 0) {
		struct expr *f = e->args.v[0];
		infer(tc, f, T_STRING);
		first = 1;
		if (f->kind == E_STRING) {
			struct vec types = {0};
			types_check_format(tc->c, e, &types);
			for (int i = 1; i < e->args.n; i++) {
				struct expr *a = e->args.v[i];
				enum exp_type want = i - 1 < types.n
				    ? (enum exp_type)(intptr_t)types.v[i - 1]
				    : T_UNKNOWN;
				infer(tc, a, want);
			}
			free(types.v);
			first = e->args.n;
		}
	} else if (e->print_delim && e->args.n > 0) {
		infer(tc, e->args.v[0], T_STRING);
		first = 1;
	}
	for (int i = first; i < e->args.n; i++)
		infer(tc, e->args.v[i], T_UNKNOWN);
	enum exp_type rt = e->print_to_string ? T_STRING : T_LONG;
	if (e->type != rt) {
		e->type = rt;
		set_changed(tc);
	}
}

/* One report of a target expression that did not resolve. */
static void target_error(struct tctx *tc, struct expr *e)
{
	if (e->saved_error) {
		elab_error(tc->c, e->saved_tok, "%s", e->saved_error);
		return;
	}
	switch (e->kind) {
	case E_TARGET:
		elab_error(tc->c, e->tok, "unresolved target-symbol expression");
		break;
	case E_CAST: {
		const char *ty = e->args.n > 0 ? ((struct expr *)e->args.v[0])->str : "";
		const char *mod = e->args.n > 1 ? ((struct expr *)e->args.v[1])->str : "";
		elab_error(tc->c, e->tok, "type definition '%s' not found in '%s'", ty ? ty : "",
			   mod ? mod : "");
		break;
	}
	case E_ATVAR:
		elab_error(tc->c, e->tok, "unresolved @var() expression");
		break;
	default:
		break;
	}
}

/* A target expression left unresolved, in a context expecting T. As
 * SystemTap: reported (a failed one was already, when lowered); where
 * the context gives no type, its type is unresolved too (and so is the
 * print it is an argument of: E_PRINT). */
static void target_errors(struct tctx *tc, struct expr *e, enum exp_type t)
{
	if (!tc->c->assert_types)
		return;
	if (e->kind == E_ENTRY) {
		elab_error(tc->c, NULL, "while processing probe %s",
			   tc->dp_pp ? tc->dp_pp : "begin");
		elab_error(tc->c, e->tok,
			   "internal error: @entry is only "
			   "valid in .return probes");
		return; /* a fatal one for SystemTap: nothing more */
	}
	if (!e->saved_error)
		target_error(tc, e);
	/* SystemTap 4.8 reports an unresolved @var once more (its count of
	 * similar messages suppressed shows it) */
	if (e->kind == E_ATVAR)
		target_error(tc, e);
	if (t != T_UNKNOWN) {
		e->type = t;
		return;
	}
	unresolved(tc, e);
}

/* Expressions visited, for the bound on rounds. */
static long visits;

static void infer(struct tctx *tc, struct expr *e, enum exp_type t)
{
	if (!e || tc->abort)
		return;
	visits++;
	struct expr *a;
	switch (e->kind) {
	case E_NUMBER:
		e->type = T_LONG;
		if (t != T_UNKNOWN && t != T_LONG)
			mismatch(tc, e, t);
		return;
	case E_STRING:
		e->type = T_STRING;
		if (t != T_UNKNOWN && t != T_STRING)
			mismatch(tc, e, t);
		return;
	case E_EMBEDDED:
		/* Marked as a string or long one (with the usual comment
		 * markers), else typed by its context, else long once nothing
		 * else is left to infer. */
		if (e->type == T_UNKNOWN && e->str && strstr(e->str, "/* string */"))
			e->type = T_STRING;
		else if (e->type == T_UNKNOWN && e->str && strstr(e->str, "/* long */"))
			e->type = T_LONG;
		if (e->type == T_UNKNOWN && t != T_UNKNOWN) {
			e->type = t;
			set_changed(tc);
		} else if (e->type == T_UNKNOWN && tc->c->context_calls) {
			e->type = T_LONG;
			set_changed(tc);
		}
		if (t != T_UNKNOWN && e->type != T_UNKNOWN && e->type != t)
			mismatch(tc, e, t);
		return;
	case E_SYMBOL:
		if (e->var)
			var_arity(tc, e->var, 0, e->tok);
		infer_var(tc, e, e->var, t);
		unresolved(tc, e);
		return;
	case E_INDEX:
		if (e->base && e->base->kind == E_HIST) {
			infer_hist(tc, e->base);
			vec_foreach (struct expr *, a, &e->args)
				infer(tc, a, T_LONG);
			expect(tc, e, T_LONG);
			return;
		}
		array_indexes(tc, e->base->var, &e->args, e->base->tok);
		infer_var(tc, e, e->base->var, t);
		if (e->base->type != e->type)
			e->base->type = e->type;
		unresolved(tc, e->base); /* SystemTap names the array */
		return;
	case E_IN:
		if (e->base->kind == E_SYMBOL)
			array_indexes(tc, e->base->var, &e->args, e->base->tok);
		else
			infer(tc, e->base, T_UNKNOWN);
		if (e->base->var)
			e->base->type = e->base->var->type;
		if (e->base->kind == E_SYMBOL)
			unresolved(tc, e->base);
		expect(tc, e, T_LONG);
		return;
	case E_BINARY:
	case E_LOGICAL:
		infer(tc, e->left, T_LONG);
		infer(tc, e->right, T_LONG);
		expect(tc, e, T_LONG);
		return;
	case E_COMPARE:
		infer_compare(tc, e);
		return;
	case E_CONCAT:
		infer(tc, e->left, T_STRING);
		infer(tc, e->right, T_STRING);
		expect(tc, e, T_STRING);
		return;
	case E_UNARY:
		if (!strcmp(e->op, "&")) {
			/* & of anything but a target variable, @cast or @var
			 * (those the parser takes whole): SystemTap 4.8's pass 2
			 * has no type for it, which it reports when it checks the
			 * types are all known: then its own type is unresolved
			 * too unless the context gives one */
			if (tc->c->assert_types && first_report(e))
				elab_error(tc->c, e->tok, "unknown type in dereference");
			infer(tc, e->left, T_LONG);
			expect(tc, e, t);
			if (tc->c->assert_types && t == T_UNKNOWN && first_report(&e->op))
				elab_error(tc->c, e->tok, "unresolved type ");
			return;
		}
		/* fall through */
	case E_PRE_INC:
	case E_POST_INC:
		infer(tc, e->left, T_LONG);
		expect(tc, e, T_LONG);
		return;
	case E_TERNARY:
		infer_ternary(tc, e, t);
		return;
	case E_ASSIGN:
		infer_assign(tc, e, t);
		return;
	case E_REGEX:
		infer(tc, e->left, T_STRING);
		if (e->right)
			infer(tc, e->right, T_STRING);
		expect(tc, e, T_LONG);
		return;
	case E_CALL:
		infer_call(tc, e, t);
		/* A call whose value is unused may be void. */
		if (e != tc->stmt_value)
			unresolved(tc, e);
		return;
	case E_PRINT:
		infer_print(tc, e);
		/* SystemTap names the print too when an argument is untyped */
		vec_foreach (struct expr *, a, &e->args)
			if (a->type == T_UNKNOWN) {
				if (tc->c->assert_types && first_report(e))
					elab_error(tc->c, e->tok, "unresolved type ");
				break;
			}
		return;
	case E_STAT:
		vec_foreach (struct expr *, a, &e->args)
			infer(tc, a, T_LONG);
		infer(tc, e->left, T_STATS);
		expect(tc, e, T_LONG);
		return;
	case E_HIST:
		infer_hist(tc, e);
		return;
	case E_DEFINED:
		expect(tc, e, T_LONG);
		return;
	case E_TARGET:
	case E_CAST:
	case E_ATVAR:
	case E_ENTRY:
		target_errors(tc, e, t);
		return;
	}
}

/* What delete takes: a variable, an array element (or a target value,
 * refused later); as SystemTap 4.8, "delete (x+1)" is refused at the
 * operator. */
static int delete_operand(enum expr_kind k)
{
	return k == E_SYMBOL || k == E_INDEX || k == E_TARGET || k == E_ENTRY || k == E_CAST ||
	    k == E_ATVAR;
}

static void infer_stmt(struct tctx *tc, struct stmt *s)
{
	if (!s || tc->abort)
		return;
	struct stmt *sub;
	switch (s->kind) {
	case S_BLOCK:
		vec_foreach (struct stmt *, sub, &s->stmts)
			infer_stmt(tc, sub);
		break;
	case S_TRY:
		infer_stmt(tc, s->body);
		if (s->catch_var)
			infer(tc, s->catch_var, T_STRING);
		infer_stmt(tc, s->catch_body);
		break;
	case S_EXPR:
		tc->stmt_value = s->value;
		infer(tc, s->value, T_UNKNOWN);
		tc->stmt_value = NULL;
		break;
	case S_RETURN: {
		struct functiondecl *fd = tc->fn;
		if (!s->value && fd && fd->type != T_UNKNOWN && first_report(s)) {
			/* "return;" where a value is returned elsewhere */
			elab_error(tc->c, s->tok, "type mismatch (unknown)");
			elab_error(tc->c, fd->type_tok ? fd->type_tok : fd->tok,
				   "type was first inferred here (%s)", tn(fd->type));
		}
		if (!s->value || !fd)
			break;
		if (fd->type != T_UNKNOWN && fd->type_tok == fd->tok) {
			declared(tc, s->value, fd->type); /* f:long */
			break;
		}
		infer(tc, s->value, T_UNKNOWN);
		enum exp_type vt = s->value->type;
		if (fd->type == T_UNKNOWN) {
			if (vt != T_UNKNOWN) {
				fd->type = vt;
				fd->type_tok = s->value->tok;
				set_changed(tc);
			}
		} else if (vt == T_UNKNOWN) {
			infer(tc, s->value, fd->type);
		} else if (vt != fd->type && first_report(s->value)) {
			elab_error(tc->c, s->value->tok, "type mismatch (%s)", tn(vt));
			elab_error(tc->c, fd->type_tok ? fd->type_tok : fd->tok,
				   "type was first inferred here (%s)", tn(fd->type));
		}
		break;
	}
	case S_DELETE:
		if (s->value && s->value->kind == E_SYMBOL) {
			if (s->value->var && s->value->var->type != T_UNKNOWN)
				s->value->type = s->value->var->type;
			unresolved(tc, s->value);
		} else {
			infer(tc, s->value, T_UNKNOWN);
			if (s->value && !delete_operand(s->value->kind) && first_report(s))
				elab_error(tc->c, s->value->tok,
					   "invalid operand of delete expression");
		}
		break;
	case S_IF:
		infer(tc, s->cond, T_LONG);
		infer_stmt(tc, s->then);
		infer_stmt(tc, s->els);
		break;
	case S_FOR:
		infer(tc, s->init, T_UNKNOWN);
		infer(tc, s->cond, T_LONG);
		infer(tc, s->incr, T_UNKNOWN);
		infer_stmt(tc, s->body);
		break;
	case S_FOREACH: {
		struct expr *arr = s->array;
		if (arr->kind == E_HIST) {
			infer_hist(tc, arr);
			struct expr *k;
			vec_foreach (struct expr *, k, &s->indexes)
				infer(tc, k, T_LONG);
			if (s->value_var)
				infer(tc, s->value_var, T_LONG);
		} else {
			struct vardecl *v = arr->var;
			array_indexes(tc, v, &s->indexes, arr->tok);
			if (s->array_slice.n)
				array_indexes(tc, v, &s->array_slice, arr->tok);
			if (v && v->type != T_UNKNOWN)
				arr->type = v->type;
			if (s->value_var && v && v->type == T_STATS) {
				if (first_report(s->value_var))
					elab_error(tc->c, s->value_var->tok, "invalid type stats");
			} else if (s->value_var && v) {
				infer(tc, s->value_var, v->type);
				if (v->type == T_UNKNOWN && s->value_var->type != T_UNKNOWN)
					var_type(tc, v, s->value_var->type, s->value_var->tok);
			}
		}
		infer(tc, s->limit, T_LONG);
		infer_stmt(tc, s->body);
		break;
	}
	default:
		break;
	}
}

static void init_decl_types(struct elab *c)
{
	struct functiondecl *fd;
	vec_foreach (struct functiondecl *, fd, &c->s->functions) {
		if (fd->type != T_UNKNOWN && !fd->type_tok)
			fd->type_tok = fd->tok;
		struct vardecl *f;
		vec_foreach (struct vardecl *, f, &fd->formals) {
			f->arity = 0;
			if (f->type != T_UNKNOWN && !f->type_tok)
				f->type_tok = f->tok;
		}
	}
}

static void walk_all(struct elab *c)
{
	struct tctx tc = {c, NULL, NULL, NULL, 0};
	struct functiondecl *fd;
	vec_foreach (struct functiondecl *, fd, &c->s->functions) {
		tc.fn = fd;
		tc.abort = 0;
		infer_stmt(&tc, fd->body);
	}
	tc.fn = NULL;
	struct probe *p;
	elab_count_derived(c);
	vec_foreach (struct probe *, p, &c->bodies) {
		tc.dp_pp = p->first_pp;
		tc.abort = 0;
		infer_stmt(&tc, p->body);
	}
	struct derived_probe *dp;
	vec_foreach (struct derived_probe *, dp, &c->s->probes)
		if (dp->point->condition) {
			tc.abort = 0;
			infer(&tc, dp->point->condition, T_LONG);
		}
}

static void check_decls(struct elab *c)
{
	struct vardecl *v;
	vec_foreach (struct vardecl *, v, &c->s->globals) {
		if (v->type == T_UNKNOWN)
			elab_error(c, v->tok, "unresolved type ");
		if (v->arity < 0)
			v->arity = 0;
	}
	struct functiondecl *fd;
	vec_foreach (struct functiondecl *, fd, &c->s->functions) {
		if (fd->body && fd->body->kind == S_EMBEDDED)
			continue;
		struct vardecl *f;
		vec_foreach (struct vardecl *, f, &fd->formals)
			if (f->type == T_UNKNOWN)
				elab_error(c, f->tok, "unresolved type ");
	}
}

void elab_infer_types(struct elab *c)
{
	reported.n = 0;
	/* Collect the bodies again: elision may have removed probes. */
	init_decl_types(c);
	/* Until nothing changes, as SystemTap: a round that changes
	 * something types at least one more expression or declaration, so
	 * the expressions of one walk (and as many declarations) bound the
	 * rounds; a long chain typed backwards needs them all. */
	long rounds = 2;
	for (long round = 0; round < rounds; round++) {
		visits = 0;
		c->changed = 0;
		walk_all(c);
		if (round == 0)
			rounds = 2 * visits + 2;
		if (c->changed)
			continue;
		c->context_calls = 1;
		walk_all(c);
		c->context_calls = 0;
		if (!c->changed)
			break;
	}
	if (!c->errors && elab_check_wrap(c))
		return;
	c->assert_types = 1;
	walk_all(c);
	c->assert_types = 0;
	if (!c->errors)
		check_decls(c);
}
