/* Expressions, with SystemTap's precedence (lowest first):
 *   assignment (right)  ?:  ||  &&  |  ^  &  in  comparison/regex
 *   << >> >>>  .  + -  * / %  unary  ++/--  value
 */
#include <string.h>

#include "lexer.h"
#include "parser.h"

static struct expr *parse_ternary(struct parser *p);
static struct expr *parse_unary(struct parser *p);

static int is_op_in(const struct token *t, const char *const *ops)
{
	if (t->type != TOK_OPERATOR)
		return 0;
	for (int i = 0; ops[i]; i++)
		if (!strcmp(t->content, ops[i]))
			return 1;
	return 0;
}

static struct expr *binary(enum expr_kind k, const struct token *op, struct expr *l, struct expr *r)
{
	struct expr *e = expr_new(k, op);
	e->op = op->content;
	e->left = l;
	e->right = r;
	return e;
}

static const char *const assign_ops[] = {
    "=", "+=", "-=", "*=", "/=", "%=", "<<=", ">>=", "&=", "^=", "|=", ".=", "<<<", NULL,
};

/* expression -> ternary [assign-op expression] */
struct expr *parse_expression(struct parser *p)
{
	parser_enter(p, parser_peek(p));
	struct expr *l = parse_ternary(p);
	const struct token *t = parser_peek(p);
	if (is_op_in(t, assign_ops)) {
		parser_next(p);
		l = binary(E_ASSIGN, t, l, parse_expression(p));
	}
	parser_leave(p);
	return l;
}

/* A left-associative level: sub (op sub)* */
typedef struct expr *(*level_fn)(struct parser *p);

static struct expr *left_assoc(struct parser *p, level_fn sub, const char *const *ops,
			       enum expr_kind k)
{
	struct expr *l = sub(p);
	int n = 0;
	for (;;) {
		const struct token *t = parser_peek(p);
		if (!is_op_in(t, ops)) {
			/* a long chain makes a deep (left-nested) tree */
			p->depth -= n;
			return l;
		}
		parser_next(p);
		parser_enter(p, t);
		n++;
		l = binary(k, t, l, sub(p));
	}
}

/* multiplicative -> unary (('*'|'/'|'%') unary)* */
static struct expr *parse_multiplicative(struct parser *p)
{
	static const char *const ops[] = {"*", "/", "%", NULL};
	return left_assoc(p, parse_unary, ops, E_BINARY);
}

/* additive -> multiplicative (('+'|'-') multiplicative)* */
static struct expr *parse_additive(struct parser *p)
{
	static const char *const ops[] = {"+", "-", NULL};
	return left_assoc(p, parse_multiplicative, ops, E_BINARY);
}

/* concatenation -> additive ('.' additive)* */
static struct expr *parse_concat(struct parser *p)
{
	static const char *const ops[] = {".", NULL};
	return left_assoc(p, parse_additive, ops, E_CONCAT);
}

/* shift -> concatenation (('<<'|'>>'|'>>>') concatenation)* */
static struct expr *parse_shift(struct parser *p)
{
	static const char *const ops[] = {"<<", ">>", ">>>", NULL};
	return left_assoc(p, parse_concat, ops, E_BINARY);
}

/* comparison -> shift ('=~'|'!~') string | shift (cmp-op shift)* */
static struct expr *parse_comparison(struct parser *p)
{
	static const char *const ops[] = {"<", ">", "<=", ">=", "==", "!=", NULL};
	struct expr *l = parse_shift(p);
	const struct token *t = parser_peek(p);
	if (parser_is_op(t, "=~") || parser_is_op(t, "!~")) {
		parser_next(p);
		struct expr *e = expr_new(E_REGEX, t);
		e->op = t->content;
		e->left = l;
		if (parser_peek(p)->type != TOK_STRING)
			pass1_throw(parser_peek(p), 1, "expected literal string");
		e->right = parse_literal(p, 0);
		e->str = e->right->str;
		return e;
	}
	int n = 0;
	for (;;) {
		t = parser_peek(p);
		if (!is_op_in(t, ops)) {
			p->depth -= n;
			return l;
		}
		parser_next(p);
		parser_enter(p, t);
		n++;
		l = binary(E_COMPARE, t, l, parse_shift(p));
	}
}

/* The array operand of 'in': a symbol (or an indexed-less hist op). */
static struct expr *parse_in_base(struct parser *p)
{
	const struct token *t = parser_next(p);
	if (t->type != TOK_IDENT || t->content[0] == '$' || t->content[0] == '@')
		pass1_throw(t, 1, "expected identifier");
	struct expr *e = expr_new(E_SYMBOL, t);
	e->str = t->content;
	return e;
}

/* '[' expr-or-star (',' expr-or-star)* ']' : NULL entries are '*'. */
static void parse_index_list(struct parser *p, struct vec *out, int allow_star)
{
	for (;;) {
		const struct token *t = parser_peek(p);
		if (allow_star && parser_is_op(t, "*")) {
			parser_next(p);
			vec_push(out, NULL);
		} else {
			vec_push(out, parse_expression(p));
		}
		t = parser_next(p);
		if (parser_is_op(t, "]"))
			return;
		if (!parser_is_op(t, ","))
			pass1_throw(t, 1, "expected ',' or ']'");
	}
}

/* array_in -> '[' exprs ']' 'in' symbol | comparison ['in' symbol] */
static struct expr *parse_array_in(struct parser *p)
{
	const struct token *t = parser_peek(p);
	struct expr *e;
	if (parser_is_op(t, "[")) {
		parser_next(p);
		e = expr_new(E_IN, t);
		parse_index_list(p, &e->args, 1);
		const struct token *in = parser_peek(p);
		if (!parser_is_kw(in, "in")) {
			if (e->args.n > 1)
				pass1_throw(in, 1, "unexpected comma-separated expression list");
			pass1_throw(in, 1, "expected 'in'");
		}
		parser_next(p);
		e->base = parse_in_base(p);
		return e;
	}
	struct expr *l = parse_comparison(p);
	t = parser_peek(p);
	if (!parser_is_kw(t, "in"))
		return l;
	parser_next(p);
	e = expr_new(E_IN, t);
	vec_push(&e->args, l);
	e->base = parse_in_base(p);
	return e;
}

/* bit_and -> array_in ('&' array_in)* */
static struct expr *parse_bit_and(struct parser *p)
{
	static const char *const ops[] = {"&", NULL};
	return left_assoc(p, parse_array_in, ops, E_BINARY);
}

/* bit_xor -> bit_and ('^' bit_and)* */
static struct expr *parse_bit_xor(struct parser *p)
{
	static const char *const ops[] = {"^", NULL};
	return left_assoc(p, parse_bit_and, ops, E_BINARY);
}

/* bit_or -> bit_xor ('|' bit_xor)* */
static struct expr *parse_bit_or(struct parser *p)
{
	static const char *const ops[] = {"|", NULL};
	return left_assoc(p, parse_bit_xor, ops, E_BINARY);
}

/* logical_and -> bit_or ('&&' bit_or)* */
static struct expr *parse_logical_and(struct parser *p)
{
	static const char *const ops[] = {"&&", NULL};
	return left_assoc(p, parse_bit_or, ops, E_LOGICAL);
}

/* logical_or -> logical_and ('||' logical_and)* */
static struct expr *parse_logical_or(struct parser *p)
{
	static const char *const ops[] = {"||", NULL};
	return left_assoc(p, parse_logical_and, ops, E_LOGICAL);
}

/* ternary -> logical_or ['?' expression ':' ternary] */
static struct expr *parse_ternary(struct parser *p)
{
	struct expr *c = parse_logical_or(p);
	const struct token *t = parser_peek(p);
	if (!parser_is_op(t, "?"))
		return c;
	parser_next(p);
	struct expr *e = expr_new(E_TERNARY, t);
	e->cond = c;
	e->left = parse_expression(p);
	parser_expect_op(p, ":");
	parser_enter(p, t);
	e->right = parse_ternary(p);
	parser_leave(p);
	return e;
}

struct expr *parse_value(struct parser *p);

/* crement -> ('++'|'--') value | value ['++'|'--'] */
static struct expr *parse_crement(struct parser *p)
{
	const struct token *t = parser_peek(p);
	if (parser_is_op(t, "++") || parser_is_op(t, "--")) {
		parser_next(p);
		struct expr *e = expr_new(E_PRE_INC, t);
		e->op = t->content;
		e->left = parse_value(p);
		return e;
	}
	struct expr *v = parse_value(p);
	t = parser_peek(p);
	if (parser_is_op(t, "++") || parser_is_op(t, "--")) {
		parser_next(p);
		struct expr *e = expr_new(E_POST_INC, t);
		e->op = t->content;
		e->left = v;
		return e;
	}
	return v;
}

/* '&' before a target variable, @cast or @var is part of that value. */
static int is_addressof(struct parser *p)
{
	const struct token *n = parser_peek2(p);
	return (n->type == TOK_IDENT && n->content[0] == '$') || parser_is_op(n, "@cast") ||
	    parser_is_op(n, "@var");
}

/* unary -> ('+'|'-'|'!'|'~'|'&') unary | crement */
static struct expr *parse_unary(struct parser *p)
{
	static const char *const ops[] = {"+", "-", "!", "~", "&", NULL};
	const struct token *t = parser_peek(p);
	if (!is_op_in(t, ops) || (parser_is_op(t, "&") && is_addressof(p)))
		return parse_crement(p);
	parser_next(p);
	parser_enter(p, t);
	struct expr *e = expr_new(E_UNARY, t);
	e->op = t->content;
	e->left = parse_unary(p);
	parser_leave(p);
	if (parser_is_op(t, "&") && e->left->kind == E_TARGET && !e->left->addressof) {
		/* &EXPR->member : the address of an autocast member */
		e->left->addressof = 1;
		return e->left;
	}
	return e;
}
