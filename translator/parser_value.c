/* Primary expressions: literals, symbols, indexing, calls, the print
 * family, the @ operators (statistics, histograms, @cast, @var, @entry,
 * @defined) and target variables ($x->y[1], $$vars, &$x, $x$). */
#include <stdlib.h>
#include <string.h>

#include "lexer.h"
#include "parser.h"

struct expr *parse_value(struct parser *p);

/* literal -> ['-'] number | string+ (adjacent strings are glued) */
struct expr *parse_literal(struct parser *p, int allow_minus)
{
	const struct token *t = parser_next(p);
	int neg = 0;
	if (allow_minus && parser_is_op(t, "-")) {
		neg = 1;
		t = parser_next(p);
		if (t->type != TOK_NUMBER)
			pass1_throw(t, 1, "expected literal string or number");
	}
	if (t->type == TOK_NUMBER) {
		struct expr *e = expr_new(E_NUMBER, t);
		if (lexer_number_value(t->content, &e->num))
			pass1_throw(t, 1, "number invalid or out of range");
		if (neg)
			e->num = (int64_t)(0 - (uint64_t)e->num);
		return e;
	}
	if (t->type != TOK_STRING)
		pass1_throw(t, 1, "expected literal string or number");
	if (parser_peek(p)->type == TOK_STRING) {
		struct strbuf val = {0}, raw = {0};
		struct token *glued = xmalloc(sizeof(*glued));
		*glued = *t;
		sb_puts(&val, t->content);
		sb_puts(&raw, t->raw ? t->raw : t->content);
		while (parser_peek(p)->type == TOK_STRING) {
			const struct token *n = parser_next(p);
			sb_puts(&val, n->content);
			sb_puts(&raw, n->raw ? n->raw : n->content);
		}
		glued->content = sb_take(&val);
		glued->raw = sb_take(&raw);
		t = glued;
	}
	struct expr *e = expr_new(E_STRING, t);
	e->str = t->content;
	return e;
}

/* Strip a trailing '$' or '$$' (pretty printing) off NAME. */
static const char *strip_pretty(const char *name, int min_len, int *pretty)
{
	size_t n = strlen(name);
	*pretty = 0;
	while (n > (size_t)min_len && name[n - 1] == '$' && *pretty < 2) {
		n--;
		(*pretty)++;
	}
	return *pretty ? xstrndup(name, n) : name;
}

/* components -> ('->' ident['$'|'$$'] | '[' expr ']')* */
static void parse_components(struct parser *p, struct expr *e)
{
	for (;;) {
		const struct token *t = parser_peek(p);
		struct tcomp *c;
		if (e->pretty)
			return;
		if (t->type == TOK_IDENT &&
		    (!strcmp(t->content, "$") || !strcmp(t->content, "$$"))) {
			/* @var("x")$ : pretty printing of the whole value */
			parser_next(p);
			e->pretty = (int)strlen(t->content);
			return;
		}
		if (parser_is_op(t, "->")) {
			parser_next(p);
			const struct token *m = parser_next(p);
			if (m->type != TOK_IDENT && m->type != TOK_KEYWORD)
				pass1_throw(m, 1, "expected identifier or keyword");
			c = xcalloc(1, sizeof(*c));
			c->kind = TC_MEMBER;
			c->tok = t; /* errors point at the '->', as SystemTap's */
			c->member = strip_pretty(m->content, 0, &e->pretty);
			if (!*c->member) {
				free(c);
				continue;
			}
		} else if (parser_is_op(t, "[")) {
			parser_next(p);
			c = xcalloc(1, sizeof(*c));
			c->tok = t;
			c->index = parse_expression(p);
			if (c->index->kind == E_NUMBER) {
				c->kind = TC_INDEX_NUM;
				c->num = c->index->num;
			} else {
				c->kind = TC_INDEX_EXPR;
			}
			parser_expect_op(p, "]");
		} else {
			return;
		}
		vec_push(&e->comps, c);
	}
}

/* target -> '$'name['$'|'$$'] components | '$$vars' ... */
static struct expr *parse_target(struct parser *p, int addressof)
{
	const struct token *t = parser_next(p);
	struct expr *e = expr_new(E_TARGET, t);
	int min = strncmp(t->content, "$$", 2) ? 1 : 2;
	e->str = strip_pretty(t->content, min, &e->pretty);
	e->addressof = addressof;
	parse_components(p, e);
	return e;
}

/* A print argument: an expression, or a bare histogram operator. */
static struct expr *parse_print_arg(struct parser *p)
{
	const struct token *t = parser_peek(p);
	if (parser_is_op(t, "@hist_linear") || parser_is_op(t, "@hist_log")) {
		struct expr *h = parse_hist_op(p);
		const struct token *b = parser_peek(p);
		if (!parser_is_op(b, "[")) {
			if (!parser_is_op(b, ")"))
				pass1_throw(b, 1, "expected ')'");
			return h;
		}
		parser_next(p);
		struct expr *e = expr_new(E_INDEX, b);
		e->base = h;
		vec_push(&e->args, parse_expression(p));
		parser_expect_op(p, "]");
		return e;
	}
	return parse_expression(p);
}

/* call-args -> '(' [expression (',' expression)*] ')' into OUT;
 * print arguments (PRINT) may be histograms, and need one unless
 * EMPTY_OK. */
static void parse_args(struct parser *p, struct vec *out, int print, int empty_ok)
{
	parser_expect_op(p, "(");
	if (parser_is_op(parser_peek(p), ")") && (!print || empty_ok)) {
		parser_next(p);
		return;
	}
	for (;;) {
		vec_push(out, print ? parse_print_arg(p) : parse_expression(p));
		const struct token *t = parser_next(p);
		if (parser_is_op(t, ")"))
			return;
		if (!parser_is_op(t, ","))
			pass1_throw(t, 1,
				    print ? "expected one of ', )'" : "expected one of ') ,'");
	}
}

enum format_check { FMT_OK, FMT_BAD_CONVERSION, FMT_TRAILING };

/* Check a printf format's conversions as SystemTap 4.8 does at parse
 * time: %[flag][width][.prec][l]conv, one flag at most; at the end of the
 * string an unfinished conversion is an error only if it gave a flag, a
 * width or a precision (SystemTap's quirk). */
static enum format_check format_check(const char *f)
{
	for (; *f; f++) {
		if (*f != '%')
			continue;
		f++;
		if (*f == '%')
			continue;
		if (!*f)
			return FMT_BAD_CONVERSION;
		int given = 0;
		if (strchr("-+ #0", *f)) {
			f++;
			given = 1;
		}
		if (*f == '*') {
			f++;
			given = 1;
		} else {
			while (*f >= '0' && *f <= '9') {
				f++;
				given = 1;
			}
		}
		if (*f == '.') {
			f++;
			if (*f == '*') {
				f++;
				given = 1;
			} else {
				while (*f >= '0' && *f <= '9') {
					f++;
					given = 1;
				}
			}
		}
		if (*f == 'l')
			f++;
		if (!*f)
			return given ? FMT_TRAILING : FMT_OK;
		if (!strchr("diouxXscpbmM", *f))
			return FMT_BAD_CONVERSION;
	}
	return FMT_OK;
}

static const struct {
	const char *name;
	int newline, delim, to_string, fmt;
} print_family[] = {
    {"print", 0, 0, 0, 0},	{"println", 1, 0, 0, 0},  {"printf", 0, 0, 0, 1},
    {"printd", 0, 1, 0, 0},	{"printdln", 1, 1, 0, 0}, {"sprint", 0, 0, 1, 0},
    {"sprintln", 1, 0, 1, 0},	{"sprintf", 0, 0, 1, 1},  {"sprintd", 0, 1, 1, 0},
    {"print_char", 0, 0, 0, 0}, {NULL, 0, 0, 0, 0},
};

/* print-call -> NAME '(' [format|delimiter ','] args ')' */
static struct expr *parse_print(struct parser *p, const struct token *name, int i)
{
	struct expr *e = expr_new(E_PRINT, name);
	e->str = name->content;
	e->print_newline = print_family[i].newline;
	e->print_delim = print_family[i].delim;
	e->print_to_string = print_family[i].to_string;
	e->print_has_fmt = print_family[i].fmt;
	e->print_char = !strcmp(name->content, "print_char");
	if (e->print_has_fmt || e->print_delim) {
		parser_expect_op(p, "(");
		const struct token *f = parser_peek(p);
		if (f->type != TOK_STRING)
			pass1_throw(f, 1, "expected literal string");
		struct expr *fe = parse_literal(p, 0);
		vec_push(&e->args, fe);
		enum format_check fc = e->print_has_fmt ? format_check(fe->str) : FMT_OK;
		if (fc == FMT_BAD_CONVERSION)
			pass1_throw(parser_peek(p), 1, "invalid or missing conversion specifier");
		if (fc == FMT_TRAILING)
			pass1_throw(parser_peek(p), 1,
				    "trailing incomplete print format conversion");
		/* SystemTap 4.8's parser wants two values at least after a
		 * delimiter (printd): before them a ')' only separates, as a
		 * ',' does, and the next token must start a value */
		const struct token *t = parser_next(p);
		if (parser_is_op(t, ")") && !e->print_delim)
			return e;
		if (!parser_is_op(t, ",") && !parser_is_op(t, ")"))
			pass1_throw(t, 1, "expected ',' or ')'");
		for (int nvalues = 1;; nvalues++) {
			vec_push(&e->args, parse_print_arg(p));
			t = parser_next(p);
			if (parser_is_op(t, ")") && (!e->print_delim || nvalues >= 2))
				return e;
			if (!parser_is_op(t, ",") && !parser_is_op(t, ")"))
				pass1_throw(t, 1, "expected one of ', )'");
		}
	}
	parse_args(p, &e->args, 1, e->print_newline);
	return e;
}

/* symbol -> IDENT ['[' index-list ']'] */
struct expr *parse_symbol_or_index(struct parser *p)
{
	const struct token *t = parser_next(p);
	struct expr *sym = expr_new(E_SYMBOL, t);
	sym->str = t->content;
	const struct token *b = parser_peek(p);
	if (!parser_is_op(b, "["))
		return sym;
	parser_next(p);
	struct expr *e = expr_new(E_INDEX, b);
	e->base = sym;
	for (;;) {
		if (parser_is_op(parser_peek(p), "*")) {
			parser_next(p);
			vec_push(&e->args, NULL);
		} else {
			vec_push(&e->args, parse_expression(p));
		}
		const struct token *n = parser_next(p);
		if (parser_is_op(n, "]"))
			return e;
		if (!parser_is_op(n, ","))
			pass1_throw(n, 1, "expected one of '] ,'");
	}
}

/* hist -> '@hist_linear' '(' expr ',' expr ',' expr ',' expr ')'
 *       | '@hist_log' '(' expr ')' */
struct expr *parse_hist_op(struct parser *p)
{
	const struct token *t = parser_next(p);
	struct expr *e = expr_new(E_HIST, t);
	e->hist_linear = !strcmp(t->content, "@hist_linear");
	parser_expect_op(p, "(");
	e->left = parse_expression(p);
	for (int i = 0; e->hist_linear && i < 3; i++) {
		parser_expect_op(p, ",");
		vec_push(&e->args, parse_literal(p, 1));
	}
	parser_expect_op(p, ")");
	return e;
}

/* stat -> '@count'|'@sum'|... '(' expr [',' number] ')' */
static struct expr *parse_stat_op(struct parser *p)
{
	const struct token *t = parser_next(p);
	struct expr *e = expr_new(E_STAT, t);
	e->op = t->content;
	parser_expect_op(p, "(");
	e->left = parse_expression(p);
	for (;;) {
		const struct token *c = parser_peek(p);
		if (parser_is_op(c, ")"))
			break;
		if (parser_is_op(c, ",")) {
			if (strcmp(t->content, "@variance") || e->args.n)
				pass1_throw(c, 0, "not more than 1 parameter allowed");
			parser_next(p);
			/* @variance(x, N), N a number, '-' allowed (pass 2 checks
			 * its range) */
			int neg = parser_is_op(parser_peek(p), "-");
			if (neg)
				parser_next(p);
			if (parser_peek(p)->type != TOK_NUMBER)
				pass1_throw(parser_peek(p), 1, "expected number");
			struct expr *n = parse_literal(p, 0);
			if (neg)
				n->num = (int64_t)(0 - (uint64_t)n->num);
			vec_push(&e->args, n);
			continue;
		}
		if (c->type == TOK_EOF)
			pass1_throw(p->last, 1, "unexpected end-of-file");
		parser_next(p); /* SystemTap scans on to the ')' */
	}
	parser_next(p);
	return e;
}

/* @cast(expr, "type" [, "module"]) / @var("name" [, "module"]) comps */
static struct expr *parse_cast_var(struct parser *p, int is_cast)
{
	const struct token *t = parser_next(p);
	struct expr *e = expr_new(is_cast ? E_CAST : E_ATVAR, t);
	parser_expect_op(p, "(");
	if (is_cast) {
		e->left = parse_expression(p);
		parser_expect_op(p, ",");
	}
	for (;;) {
		const struct token *s = parser_peek(p);
		if (s->type != TOK_STRING)
			pass1_throw(s, 1, "expected string");
		vec_push(&e->args, parse_literal(p, 0));
		const struct token *n = parser_next(p);
		if (parser_is_op(n, ")"))
			break;
		if (!parser_is_op(n, ",") || e->args.n >= 2)
			pass1_throw(n, 1, "expected ')'");
	}
	if (!is_cast)
		e->str = ((struct expr *)vec_at(&e->args, 0))->str;
	parse_components(p, e);
	return e;
}

/* bpf_operator -> ('@uderef' | '@kderef') '(' NUMBER ',' expr ')'
 *               | ('@uregister' | '@kregister') '(' NUMBER ')'
 * SystemTap 4.8's operators for its BPF runtime: parsed as 4.8 parses
 * them (the k ones need -g; NUMBER kept as its unsigned 32 bits), kept as
 * a call that pass 2 rejects as 4.8 does ("invalid operator"). */
static struct expr *parse_bpf_operator(struct parser *p)
{
	const struct token *t = parser_next(p);
	struct expr *e = expr_new(E_CALL, t), *n;
	const struct token *s;

	if (t->content[1] == 'k' && !p->privileged)
		pass1_throw_noskip(t, "using %s operator not permitted; need stap -g", t->content);
	e->str = t->content;
	parser_expect_op(p, "(");
	int neg = parser_is_op(parser_peek(p), "-");
	if (neg)
		parser_next(p);
	s = parser_peek(p);
	if (s->type != TOK_NUMBER)
		pass1_throw(s, 1, "expected number");
	n = parse_literal(p, 0);
	n->num = (int64_t)(uint32_t)(neg ? 0 - (uint64_t)n->num : (uint64_t)n->num);
	vec_push(&e->args, n);
	if (!strcmp(t->content + 2, "deref")) {
		parser_expect_op(p, ",");
		vec_push(&e->args, parse_expression(p));
	}
	parser_expect_op(p, ")");
	return e;
}

/* @const("NAME") -> embedded C, in guru mode. */
static struct expr *parse_guru_operator(struct parser *p)
{
	const struct token *t = parser_next(p);
	if (!p->privileged)
		pass1_throw_noskip(t, "using %s operator not permitted; need stap -g", t->content);
	parser_expect_op(p, "(");
	const struct token *s = parser_peek(p);
	if (s->type != TOK_STRING)
		pass1_throw(s, 1, "expected literal string");
	struct expr *name = parse_literal(p, 0);
	struct expr *e = expr_new(E_EMBEDDED, t);
	e->str = xasprintf("/* pure */ /* unprivileged */ /* stable */ %s", name->str);
	parser_expect_op(p, ")");
	return e;
}

static struct expr *parse_at_operator(struct parser *p)
{
	const struct token *t = parser_peek(p);
	const char *n = t->content;
	static const char *const stats[] = {"@count", "@sum",	   "@min", "@max",
					    "@avg",   "@variance", NULL};
	for (int i = 0; stats[i]; i++)
		if (!strcmp(n, stats[i]))
			return parse_stat_op(p);
	if (!strcmp(n, "@hist_linear") || !strcmp(n, "@hist_log")) {
		struct expr *h = parse_hist_op(p);
		const struct token *b = parser_peek(p);
		if (parser_is_op(b, "[")) {
			parser_next(p);
			struct expr *e = expr_new(E_INDEX, b);
			e->base = h;
			vec_push(&e->args, parse_expression(p));
			parser_expect_op(p, "]");
			return e;
		}
		pass1_throw(t, 0, "base histogram operator where expression expected");
	}
	if (!strcmp(n, "@cast"))
		return parse_cast_var(p, 1);
	if (!strcmp(n, "@var"))
		return parse_cast_var(p, 0);
	if (!strcmp(n, "@const"))
		return parse_guru_operator(p);
	if (!strcmp(n, "@uderef") || !strcmp(n, "@kderef") || !strcmp(n, "@uregister") ||
	    !strcmp(n, "@kregister"))
		return parse_bpf_operator(p);
	if (!strcmp(n, "@probewrite")) {
		/* @probewrite(var): kept as a call for pass 2 to judge */
		parser_next(p);
		struct expr *e = expr_new(E_CALL, t);
		e->str = t->content;
		parser_expect_op(p, "(");
		const struct token *v = parser_peek(p);
		if (v->type != TOK_IDENT || v->content[0] == '$' || v->content[0] == '@')
			pass1_throw(v, 1, "expected identifier");
		parser_next(p);
		struct expr *sym = expr_new(E_SYMBOL, v);
		sym->str = v->content;
		vec_push(&e->args, sym);
		parser_expect_op(p, ")");
		return e;
	}
	if (!strcmp(n, "@perf")) {
		/* @perf("NAME"): the value of the perf counter a
		 * perf...counter("NAME") probe defines. Kept as a call, like
		 * @probewrite, for pass 2 to judge (it needs the kernel). */
		parser_next(p);
		struct expr *e = expr_new(E_CALL, t);
		e->str = t->content;
		parser_expect_op(p, "(");
		const struct token *s = parser_peek(p);
		if (s->type != TOK_STRING)
			pass1_throw(s, 1, "expected literal string");
		vec_push(&e->args, parse_literal(p, 0));
		parser_expect_op(p, ")");
		return e;
	}
	if (!strcmp(n, "@entry") || !strcmp(n, "@defined")) {
		parser_next(p);
		struct expr *e = expr_new(n[1] == 'e' ? E_ENTRY : E_DEFINED, t);
		parser_expect_op(p, "(");
		e->left = parse_expression(p);
		parser_expect_op(p, ")");
		return e;
	}
	pass1_throw(t, 1, "unknown operator %s", n);
}

static struct expr *parse_value_base(struct parser *p);

/* value -> value_base [('->' ident | '[' expr ']') components] :
 * EXPR->member and EXPR[i] on a value are SystemTap's "autocast" */
struct expr *parse_value(struct parser *p)
{
	struct expr *v = parse_value_base(p);
	const struct token *t = parser_peek(p);
	if (!(parser_is_op(t, "->") || parser_is_op(t, "[")) || v->kind == E_TARGET ||
	    v->kind == E_CAST || v->kind == E_ATVAR)
		return v;
	struct expr *e = expr_new(E_TARGET, t);
	e->left = v;
	parse_components(p, e);
	return e;
}

/* value_base -> '(' expression ')' | literal | embedded | '&'? target
 *        | '@'op ... | IDENT '(' args ')' | IDENT ['[' indexes ']'] */
static struct expr *parse_value_base(struct parser *p)
{
	const struct token *t = parser_peek(p);
	if (t->type == TOK_EOF)
		pass1_throw(t, 1, "expected value");
	if (parser_is_op(t, "(")) {
		parser_next(p);
		struct expr *e = parse_expression(p);
		parser_expect_op(p, ")");
		return e;
	}
	if (t->type == TOK_EMBEDDED) {
		if (!p->privileged)
			pass1_throw(
			    t, 1, "embedded expression code in unprivileged script; need stap -g");
		parser_next(p);
		struct expr *e = expr_new(E_EMBEDDED, t);
		e->str = t->content;
		return e;
	}
	if (parser_is_op(t, "&") && parser_peek2(p)->type == TOK_IDENT &&
	    parser_peek2(p)->content[0] == '$') {
		parser_next(p);
		return parse_target(p, 1);
	}
	if (parser_is_op(t, "&") &&
	    (parser_is_op(parser_peek2(p), "@cast") || parser_is_op(parser_peek2(p), "@var"))) {
		parser_next(p);
		struct expr *e = parse_cast_var(p, parser_peek(p)->content[1] == 'c');
		e->addressof = 1;
		return e;
	}
	if (t->type == TOK_OPERATOR && t->content[0] == '@')
		return parse_at_operator(p);
	if (t->type == TOK_IDENT && t->content[0] == '$')
		return parse_target(p, 0);
	if (t->type == TOK_IDENT) {
		if (parser_is_op(parser_peek2(p), "(")) {
			parser_next(p);
			for (int i = 0; print_family[i].name; i++)
				if (!strcmp(t->content, print_family[i].name))
					return parse_print(p, t, i);
			struct expr *e = expr_new(E_CALL, t);
			e->str = t->content;
			parse_args(p, &e->args, 0, 1);
			return e;
		}
		return parse_symbol_or_index(p);
	}
	return parse_literal(p, 0);
}
