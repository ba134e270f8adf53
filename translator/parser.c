/* The parser: declarations and statements, error recovery, token
 * lookahead. Expressions are in parser_expr.c and parser_value.c. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <limits.h>
#include <string.h>

#include "diag.h"
#include "lexer.h"
#include "parser.h"

/* The active recovery point; pass1_throw unwinds to it. */
static jmp_buf *recovery;
/* Set by pass1_throw_noskip: resume right after the error, no skipping. */
static int no_resync;
/* Errors found while skipping after an error are printed without being
 * counted for "similar message" suppression, as SystemTap does. */
static int in_resync;

void pass1_report(const struct token *tok, int saw, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *msg = xvasprintf(fmt, ap);
	va_end(ap);
	diag_parse_error_full(tok, saw, !in_resync, "%s", msg);
	free(msg);
}

void pass1_throw(const struct token *tok, int saw, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *msg = xvasprintf(fmt, ap);
	va_end(ap);
	pass1_report(tok, saw, "%s", msg);
	free(msg);
	if (!recovery)
		fatal("parse error outside the parser");
	longjmp(*recovery, 1);
}

void pass1_throw_noskip(const struct token *tok, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *msg = xvasprintf(fmt, ap);
	va_end(ap);
	no_resync = 1;
	pass1_throw(tok, 1, "%s", msg);
}

/* ---- tokens ---- */

static void fill(struct parser *p, int n)
{
	while (p->nla < n) {
		/* pp_next may unwind: store only a token it returned. */
		const struct token *t = pp_next(p->pp);
		p->la[p->nla++] = t;
	}
}

const struct token *parser_peek(struct parser *p)
{
	fill(p, 1);
	return p->la[0];
}

const struct token *parser_peek2(struct parser *p)
{
	fill(p, 2);
	return p->la[1];
}

const struct token *parser_next(struct parser *p)
{
	fill(p, 1);
	const struct token *t = p->la[0];
	if (t->type == TOK_EOF)
		pass1_throw(t, 1, "unexpected end-of-file");
	p->last = t;
	p->la[0] = p->la[1];
	p->la[1] = p->la[2];
	p->nla--;
	return t;
}

int parser_is_op(const struct token *t, const char *op)
{
	return t->type == TOK_OPERATOR && !strcmp(t->content, op);
}

int parser_is_kw(const struct token *t, const char *kw)
{
	return t->type == TOK_KEYWORD && !strcmp(t->content, kw);
}

const struct token *parser_expect_op(struct parser *p, const char *op)
{
	const struct token *t = parser_next(p);
	if (!parser_is_op(t, op))
		pass1_throw(t, 1, "expected '%s'", op);
	return t;
}

void parser_enter(struct parser *p, const struct token *t)
{
	if (++p->depth > PARSER_MAX_DEPTH)
		pass1_throw(t, 1, "too many nested expressions or statements (limit %d)",
			    PARSER_MAX_DEPTH);
}

void parser_leave(struct parser *p)
{
	p->depth--;
}

/* ---- statements ---- */

static struct stmt *parse_statement(struct parser *p);

/* block -> '{' statement* '}' */
static struct stmt *parse_block(struct parser *p)
{
	const struct token *open = parser_expect_op(p, "{");
	struct stmt *b = stmt_new(S_BLOCK, open);
	for (;;) {
		const struct token *t = parser_peek(p);
		if (parser_is_op(t, "}")) {
			parser_next(p);
			break;
		}
		if (t->type == TOK_EOF)
			pass1_throw(t, 1, "expected statement");
		vec_push(&b->stmts, parse_statement(p));
	}
	return b;
}

static void swallow_semicolon(struct parser *p)
{
	if (parser_is_op(parser_peek(p), ";"))
		parser_next(p);
}

/* try-stmt -> 'try' block 'catch' ['(' IDENT ')'] block */
static struct stmt *parse_try(struct parser *p, const struct token *t)
{
	struct stmt *s = stmt_new(S_TRY, t);
	s->body = parse_block(p);
	const struct token *c = parser_next(p);
	if (!parser_is_kw(c, "catch"))
		pass1_throw(c, 1, "expected 'catch'");
	if (parser_is_op(parser_peek(p), "(")) {
		parser_next(p);
		const struct token *v = parser_next(p);
		if (v->type != TOK_IDENT || v->content[0] == '$' || v->content[0] == '@')
			pass1_throw(v, 1, "expected identifier");
		s->catch_var = expr_new(E_SYMBOL, v);
		s->catch_var->str = v->content;
		parser_expect_op(p, ")");
	}
	s->catch_body = parse_block(p);
	return s;
}

/* if-stmt -> 'if' '(' expression ')' statement ['else' statement] */
static struct stmt *parse_if(struct parser *p, const struct token *t)
{
	struct stmt *s = stmt_new(S_IF, t);
	parser_expect_op(p, "(");
	s->cond = parse_expression(p);
	parser_expect_op(p, ")");
	s->then = parse_statement(p);
	if (parser_is_kw(parser_peek(p), "else")) {
		parser_next(p);
		s->els = parse_statement(p);
	}
	return s;
}

/* while-stmt -> 'while' '(' expression ')' statement */
static struct stmt *parse_while(struct parser *p, const struct token *t)
{
	struct stmt *s = stmt_new(S_FOR, t);
	s->is_while = 1;
	parser_expect_op(p, "(");
	s->cond = parse_expression(p);
	parser_expect_op(p, ")");
	s->body = parse_statement(p);
	return s;
}

/* for-stmt -> 'for' '(' [expr] ';' [expr] ';' [expr] ')' statement */
static struct stmt *parse_for(struct parser *p, const struct token *t)
{
	struct stmt *s = stmt_new(S_FOR, t);
	parser_expect_op(p, "(");
	if (!parser_is_op(parser_peek(p), ";"))
		s->init = parse_expression(p);
	parser_expect_op(p, ";");
	if (!parser_is_op(parser_peek(p), ";"))
		s->cond = parse_expression(p);
	parser_expect_op(p, ";");
	if (!parser_is_op(parser_peek(p), ")"))
		s->incr = parse_expression(p);
	parser_expect_op(p, ")");
	s->body = parse_statement(p);
	return s;
}

static struct expr *foreach_symbol(struct parser *p)
{
	const struct token *v = parser_next(p);
	if (v->type != TOK_IDENT || v->content[0] == '$' || v->content[0] == '@')
		pass1_throw(v, 1, "expected identifier");
	struct expr *e = expr_new(E_SYMBOL, v);
	e->str = v->content;
	return e;
}

/* An optional '+'/'-' sort marker for COLUMN. */
static void foreach_sort(struct parser *p, struct stmt *s, int column)
{
	const struct token *t = parser_peek(p);
	if (!parser_is_op(t, "+") && !parser_is_op(t, "-"))
		return;
	parser_next(p);
	if (s->sort_direction)
		pass1_throw(t, 1, "multiple sort directives");
	s->sort_direction = t->content[0] == '+' ? 1 : -1;
	s->sort_column = column;
}

/* foreach-stmt -> 'foreach' '(' [IDENT [sort] '='] keys 'in' array [sort]
 *                 ['limit' expr] ')' statement
 * keys -> '[' IDENT [sort] (',' IDENT [sort])* ']' | IDENT [sort]
 * array -> IDENT ['[' index-or-* , ... ']'] | hist-op */
static struct stmt *parse_foreach(struct parser *p, const struct token *t)
{
	struct stmt *s = stmt_new(S_FOREACH, t);
	parser_expect_op(p, "(");
	const struct token *a = parser_peek(p);
	const struct token *b = parser_peek2(p);
	if (a->type == TOK_IDENT &&
	    (parser_is_op(b, "=") || parser_is_op(b, "+") || parser_is_op(b, "-"))) {
		/* value binding, unless this is 'k+ in a' */
		fill(p, 3);
		if (parser_is_op(b, "=") || parser_is_op(p->la[2], "=")) {
			s->value_var = foreach_symbol(p);
			foreach_sort(p, s, 0);
			parser_expect_op(p, "=");
		}
	}
	if (parser_is_op(parser_peek(p), "[")) {
		parser_next(p);
		for (;;) {
			vec_push(&s->indexes, foreach_symbol(p));
			foreach_sort(p, s, s->indexes.n);
			const struct token *n = parser_next(p);
			if (parser_is_op(n, "]"))
				break;
			if (!parser_is_op(n, ","))
				pass1_throw(n, 1, "expected ',' or ']'");
		}
	} else {
		vec_push(&s->indexes, foreach_symbol(p));
		foreach_sort(p, s, 1);
	}
	const struct token *in = parser_next(p);
	if (!parser_is_kw(in, "in"))
		pass1_throw(in, 1, "expected 'in'");
	const struct token *arr = parser_peek(p);
	if (parser_is_op(arr, "@hist_linear") || parser_is_op(arr, "@hist_log")) {
		s->array = parse_hist_op(p);
	} else {
		if (arr->type != TOK_IDENT || arr->content[0] == '$')
			pass1_throw(arr, 1, "expected identifier or statistical operation");
		struct expr *e = parse_symbol_or_index(p);
		if (e->kind == E_INDEX) {
			s->array = e->base;
			s->array_slice = e->args;
		} else {
			s->array = e;
		}
	}
	const struct token *ag = parser_peek(p);
	static const char *const aggrs[] = {"@count", "@sum", "@min", "@max", "@avg", NULL};
	for (int i = 0; aggrs[i]; i++)
		if (parser_is_op(ag, aggrs[i])) {
			parser_next(p);
			s->sort_aggr = ag->content;
			const struct token *d = parser_peek(p);
			if (!parser_is_op(d, "+") && !parser_is_op(d, "-"))
				pass1_throw(d, 1, "expected sort directive");
		}
	foreach_sort(p, s, 0);
	if (parser_is_kw(parser_peek(p), "limit")) {
		parser_next(p);
		s->limit = parse_expression(p);
	}
	parser_expect_op(p, ")");
	s->body = parse_statement(p);
	return s;
}

/* Can T start a return value? ('return' alone ends at these.) */
static int starts_expression(const struct token *t)
{
	if (t->type == TOK_EOF || t->type == TOK_KEYWORD)
		return 0;
	return !(parser_is_op(t, ";") || parser_is_op(t, "}"));
}

/* statement -> ';' | block | try | if | while | for | foreach
 *            | 'return' [expr] | 'delete' expr | 'next' | 'break'
 *            | 'continue' | expression, each simple one with an optional ';' */
static struct stmt *parse_statement(struct parser *p)
{
	const struct token *t = parser_peek(p);
	struct stmt *s;
	parser_enter(p, t);
	if (parser_is_op(t, ";")) {
		parser_next(p);
		s = stmt_new(S_NULL, t);
	} else if (parser_is_op(t, "{")) {
		s = parse_block(p);
	} else if (t->type == TOK_KEYWORD) {
		const char *k = t->content;
		int simple = 1;
		static const char *const stmt_kws[] = {"try",	  "if",	      "while",	"for",
						       "foreach", "return",   "delete", "next",
						       "break",	  "continue", NULL};
		int known = 0;
		for (int i = 0; stmt_kws[i]; i++)
			known |= !strcmp(stmt_kws[i], k);
		if (!known)
			pass1_throw(t, 1, "expected statement");
		if (!strcmp(k, "try") || !strcmp(k, "if") || !strcmp(k, "while") ||
		    !strcmp(k, "for") || !strcmp(k, "foreach"))
			simple = 0;
		if (!strcmp(k, "return") && !p->in_function)
			pass1_throw(t, 1, "found 'return' not in function context");
		parser_next(p);
		if (!strcmp(k, "try"))
			s = parse_try(p, t);
		else if (!strcmp(k, "if"))
			s = parse_if(p, t);
		else if (!strcmp(k, "while"))
			s = parse_while(p, t);
		else if (!strcmp(k, "for"))
			s = parse_for(p, t);
		else if (!strcmp(k, "foreach"))
			s = parse_foreach(p, t);
		else if (!strcmp(k, "return")) {
			s = stmt_new(S_RETURN, t);
			if (starts_expression(parser_peek(p)))
				s->value = parse_expression(p);
		} else if (!strcmp(k, "delete")) {
			s = stmt_new(S_DELETE, t);
			s->value = parse_expression(p);
		} else if (!strcmp(k, "next")) {
			s = stmt_new(S_NEXT, t);
		} else if (!strcmp(k, "break")) {
			s = stmt_new(S_BREAK, t);
		} else if (!strcmp(k, "continue")) {
			s = stmt_new(S_CONTINUE, t);
		} else {
			pass1_throw(t, 1, "expected statement");
		}
		if (simple)
			swallow_semicolon(p);
	} else if (t->type == TOK_EOF || t->type == TOK_JUNK) {
		pass1_throw(t, 1, "expected statement");
	} else {
		s = stmt_new(S_EXPR, t);
		s->value = parse_expression(p);
		swallow_semicolon(p);
	}
	parser_leave(p);
	return s;
}

/* ---- declarations ---- */

/* global-decl -> IDENT ['%'] ['[' NUMBER ']'] ['%'] ['=' literal] */
static void parse_global(struct parser *p, int is_private)
{
	for (;;) {
		const struct token *t = parser_next(p);
		if (t->type != TOK_IDENT || t->content[0] == '$' || t->content[0] == '@')
			pass1_throw(t, 1, "expected identifier");
		struct vardecl *v = xcalloc(1, sizeof(*v));
		v->name = t->content;
		v->tok = t;
		v->arity = -1;
		v->is_global = 1;
		v->is_private = is_private;
		v->file = p->src;
		if (parser_is_op(parser_peek(p), "%")) {
			parser_next(p);
			v->wrap = 1;
		}
		if (parser_is_op(parser_peek(p), "[")) {
			parser_next(p);
			const struct token *n = parser_next(p);
			int64_t size;
			if (n->type != TOK_NUMBER)
				pass1_throw(n, 1, "expected number");
			if (lexer_number_value(n->content, &size) || size <= 0 || size > 0x7fffffff)
				pass1_throw(n, 1, "number invalid or out of range");
			v->maxsize = (int)size;
			parser_expect_op(p, "]");
		}
		if (parser_is_op(parser_peek(p), "=")) {
			const struct token *eq = parser_next(p);
			if (v->maxsize) /* SystemTap's pass 1: global a[N] = ... */
				pass1_throw(eq, 1, "only scalar globals can be initialized");
			v->init = parse_literal(p, 1);
		}
		vec_push(&p->file->globals, v);
		if (!parser_is_op(parser_peek(p), ","))
			break;
		parser_next(p);
	}
	swallow_semicolon(p);
}

static enum exp_type parse_opt_type(struct parser *p)
{
	if (!parser_is_op(parser_peek(p), ":"))
		return T_UNKNOWN;
	parser_next(p);
	const struct token *t = parser_next(p);
	if (parser_is_kw(t, "long"))
		return T_LONG;
	if (parser_is_kw(t, "string"))
		return T_STRING;
	pass1_throw(t, 1, "expected 'string' or 'long'");
}

/* function-decl -> IDENT [':' type] '(' [IDENT [':' type] (',' ...)*] ')'
 *                  (block | embedded) */
static void parse_function(struct parser *p, int is_private)
{
	const struct token *t = parser_next(p);
	if (t->type != TOK_IDENT || t->content[0] == '$' || t->content[0] == '@')
		pass1_throw(t, 1, "expected identifier");
	struct functiondecl *f = xcalloc(1, sizeof(*f));
	f->name = t->content;
	f->tok = t;
	f->is_private = is_private;
	f->file = p->src;
	f->type = parse_opt_type(p);
	parser_expect_op(p, "(");
	if (!parser_is_op(parser_peek(p), ")")) {
		for (;;) {
			const struct token *a = parser_next(p);
			if (a->type != TOK_IDENT || a->content[0] == '$' || a->content[0] == '@')
				pass1_throw(a, 1, "expected identifier");
			struct vardecl *prev;
			vec_foreach (struct vardecl *, prev, &f->formals)
				if (!strcmp(prev->name, a->content))
					pass1_throw(a, 1, "duplicate parameter names");
			struct vardecl *v = xcalloc(1, sizeof(*v));
			v->name = a->content;
			v->tok = a;
			v->file = p->src;
			v->type = parse_opt_type(p);
			vec_push(&f->formals, v);
			const struct token *n = parser_next(p);
			if (parser_is_op(n, ")"))
				break;
			if (!parser_is_op(n, ","))
				pass1_throw(n, 1, "expected ',' or ')'");
		}
	} else {
		parser_next(p);
	}
	if (parser_is_op(parser_peek(p), ":")) {
		/* function f(...) :PRIORITY, the order of overloads */
		parser_next(p);
		struct expr *prio = parse_literal(p, 1);
		if (prio->kind != E_NUMBER)
			pass1_throw(parser_peek(p), 1, "expected literal number");
		if (prio->num <= 0)
			pass1_throw(prio->tok, 1, "specified priority must be > 0");
		f->priority = prio->num > INT_MAX ? INT_MAX : (int)prio->num;
	}
	const struct token *b = parser_peek(p);
	if (b->type == TOK_EMBEDDED) {
		parser_next(p);
		if (!p->privileged)
			pass1_throw_noskip(b, "embedded code in unprivileged script; need stap -g");
		f->body = stmt_new(S_EMBEDDED, b);
		f->body->code = b->content;
	} else {
		p->in_function = 1;
		f->body = parse_block(p);
		p->in_function = 0;
	}
	vec_push(&p->file->functions, f);
}

/* component -> (IDENT | '*' | NUMBER)+ ['(' literal ')'], adjacent
 * pieces glued into one name (wildcards like a*b). */
static struct probe_component *parse_component(struct parser *p)
{
	struct strbuf name = {0};
	const struct token *prev = NULL, *t;
	for (;;) {
		t = parser_peek(p);
		int piece = t->type == TOK_IDENT || t->type == TOK_KEYWORD ||
		    parser_is_op(t, "*") || (prev && t->type == TOK_NUMBER);
		if (!prev && t->type == TOK_EOF)
			pass1_throw(p->last, 1, "unexpected end-of-file");
		if (!prev && !piece)
			pass1_throw(t, 1, "expected identifier or '*' or '{'");
		if (!piece)
			break;
		if (prev &&
		    !(t->loc.line == prev->loc.line &&
		      t->loc.col == prev->loc.col + (int)strlen(prev->content)))
			break;
		sb_puts(&name, t->content);
		prev = parser_next(p);
	}
	struct probe_component *c = xcalloc(1, sizeof(*c));
	c->functor = sb_take(&name);
	c->tok = prev;
	if (parser_is_op(parser_peek(p), "(")) {
		parser_next(p);
		c->arg = parse_literal(p, 1);
		parser_expect_op(p, ")");
	}
	return c;
}

static struct probe_point *point_new(const struct token *tok)
{
	struct probe_point *pp = xcalloc(1, sizeof(*pp));
	pp->tok = tok;
	return pp;
}

/* An optional '?' or '!' on every point of PTS. */
static void parse_point_suffix(struct parser *p, struct vec *pts)
{
	const struct token *t = parser_peek(p);
	if (!parser_is_op(t, "?") && !parser_is_op(t, "!"))
		return;
	parser_next(p);
	struct probe_point *pp;
	vec_foreach (struct probe_point *, pp, pts) {
		pp->optional = 1;
		pp->sufficient |= t->content[0] == '!';
	}
}

/* dotted -> (component | '{' dotted [?|!] (',' dotted [?|!])* '}')
 *           ('.' ...)* : braces expand into several points, as SystemTap
 * expands them at parse time. */
static struct vec parse_dotted(struct parser *p)
{
	struct vec res = {0};
	vec_push(&res, point_new(parser_peek(p)));
	parser_enter(p, parser_peek(p));
	for (;;) {
		const struct token *t = parser_peek(p);
		if (parser_is_op(t, "{")) {
			struct vec alts = {0};
			parser_next(p);
			for (;;) {
				struct vec a = parse_dotted(p);
				parse_point_suffix(p, &a);
				for (int i = 0; i < a.n; i++)
					vec_push(&alts, vec_at(&a, i));
				const struct token *n = parser_next(p);
				if (parser_is_op(n, "}"))
					break;
				if (!parser_is_op(n, ","))
					pass1_throw(n, 1, "expected ',' or '}'");
			}
			struct vec cross = {0};
			struct probe_point *r, *a;
			vec_foreach (struct probe_point *, r, &res)
				vec_foreach (struct probe_point *, a, &alts) {
					struct probe_point *n = point_new(r->tok);
					for (int i = 0; i < r->components.n; i++)
						vec_push(&n->components, vec_at(&r->components, i));
					for (int i = 0; i < a->components.n; i++)
						vec_push(&n->components, vec_at(&a->components, i));
					n->optional = r->optional | a->optional;
					n->sufficient = r->sufficient | a->sufficient;
					vec_push(&cross, n);
				}
			res = cross;
		} else {
			struct probe_component *c = parse_component(p);
			struct probe_point *r;
			vec_foreach (struct probe_point *, r, &res)
				vec_push(&r->components, c);
		}
		if (!parser_is_op(parser_peek(p), "."))
			break;
		parser_next(p);
	}
	parser_leave(p);
	return res;
}

/* probe-point -> dotted ['?'|'!'] ['if' '(' expr ')'] ; appended to OUT */
static void parse_probe_point(struct parser *p, struct vec *out)
{
	struct vec pts = parse_dotted(p);
	parse_point_suffix(p, &pts);
	struct expr *cond = NULL;
	if (parser_is_kw(parser_peek(p), "if")) {
		parser_next(p);
		parser_expect_op(p, "(");
		cond = parse_expression(p);
		parser_expect_op(p, ")");
	}
	struct probe_point *pp;
	vec_foreach (struct probe_point *, pp, &pts) {
		pp->condition = cond;
		vec_push(out, pp);
	}
}

/* probe-decl -> 'probe' point (',' point)* block
 *             | 'probe' point ('=' | '+=') point (',' point)* block */
static void parse_probe(struct parser *p, const struct token *kw, int is_private)
{
	struct vec points = {0};
	int equals_ok = 1;
	for (;;) {
		parse_probe_point(p, &points);
		const struct token *t = parser_peek(p);
		if (equals_ok && (parser_is_op(t, "=") || parser_is_op(t, "+="))) {
			parser_next(p);
			struct probe_alias *a = xcalloc(1, sizeof(*a));
			a->tok = kw;
			a->alias_names = points;
			a->epilogue = t->content[0] == '+';
			a->file = p->src;
			a->is_private = is_private;
			for (;;) {
				parse_probe_point(p, &a->points);
				if (!parser_is_op(parser_peek(p), ","))
					break;
				parser_next(p);
			}
			a->body = parse_block(p);
			if (parser_is_op(parser_peek(p), ",") &&
			    parser_is_op(parser_peek2(p), "{")) {
				parser_next(p);
				a->epilogue_body = parse_block(p);
			}
			vec_push(&p->file->aliases, a);
			return;
		}
		if (parser_is_op(t, ",")) {
			equals_ok = 0;
			parser_next(p);
			continue;
		}
		if (parser_is_op(t, "{"))
			break;
		if (parser_is_op(t, "=") || parser_is_op(t, "+="))
			pass1_throw(t, 1, "expected probe point specifier");
		pass1_throw(t, 1, "expected one of ', { } = +='");
	}
	struct probe *pr = xcalloc(1, sizeof(*pr));
	pr->tok = kw;
	pr->points = points;
	pr->file = p->src;
	pr->is_private = is_private;
	pr->body = parse_block(p);
	vec_push(&p->file->probes, pr);
}

/* declaration -> probe | global | function | private (global|function)
 *              | embedded */
static void parse_declaration(struct parser *p)
{
	const struct token *t = parser_next(p);
	int is_private = 0;
	if (parser_is_kw(t, "private")) {
		is_private = 1;
		const struct token *n = parser_peek(p);
		if (n->type == TOK_IDENT && n->content[0] != '$') {
			parse_global(p, 1); /* private NAME: a private global */
			return;
		}
		t = parser_next(p);
		if (!parser_is_kw(t, "global") && !parser_is_kw(t, "function"))
			pass1_throw(t, 1, "expected 'function' or identifier");
	}
	if (parser_is_kw(t, "probe")) {
		parse_probe(p, t, is_private);
	} else if (parser_is_kw(t, "global")) {
		parse_global(p, is_private);
	} else if (parser_is_kw(t, "function")) {
		parse_function(p, is_private);
	} else if (t->type == TOK_EMBEDDED) {
		if (!p->privileged)
			pass1_throw_noskip(t, "embedded code in unprivileged script; need stap -g");
		struct embedded_block *e = xcalloc(1, sizeof(*e));
		e->tok = t;
		e->code = t->content;
		e->file = p->src;
		vec_push(&p->file->embeds, e);
	} else {
		pass1_throw(t, 1, "expected 'probe', 'global', 'private', 'function', or '%%{'");
	}
}

/* After an error: skip to a token a declaration can start with. */
static int resync(struct parser *p)
{
	jmp_buf jb;
	jmp_buf *saved = recovery;
	int ok = 1;
	recovery = &jb;
	in_resync = 1;
	if (setjmp(jb)) {
		/* an error while skipping: printed; skipping goes on */
		ok = 0;
	}
	for (;;) {
		const struct token *t = parser_peek(p);
		if (t->type == TOK_EOF || t->type == TOK_EMBEDDED || parser_is_kw(t, "probe") ||
		    parser_is_kw(t, "global") || parser_is_kw(t, "function") ||
		    parser_is_kw(t, "private"))
			break;
		parser_next(p);
	}
	in_resync = 0;
	recovery = saved;
	return ok;
}

/* file -> declaration* */
struct stapfile *parse_file(struct session *s, const struct source_file *src, int privileged,
			    int *errors, int *empty)
{
	struct parser *p = xcalloc(1, sizeof(*p));
	int before = diag_parse_errors();
	p->s = s;
	p->src = src;
	p->pp = pp_new(s, src);
	p->privileged = privileged;
	p->file = xcalloc(1, sizeof(*p->file));
	p->file->src = src;
	p->file->privileged = privileged;

	jmp_buf jb;
	jmp_buf *saved = recovery;
	recovery = &jb;
	for (;;) {
		if (setjmp(jb)) {
			/* the failing token was consumed or is still ahead */
			p->depth = 0;
			p->in_function = 0;
			if (!no_resync)
				resync(p);
			no_resync = 0;
			recovery = &jb;
			continue;
		}
		const struct token *t = parser_peek(p);
		if (t->type == TOK_EOF)
			break;
		p->file_nonempty = 1;
		parse_declaration(p);
	}
	recovery = saved;
	*errors = diag_parse_errors() - before;
	if (empty)
		*empty = !p->file_nonempty;
	return p->file;
}

int parse_stpm(struct session *s, const struct source_file *src)
{
	int before = diag_parse_errors();
	struct pp *pp = pp_new(s, src);
	jmp_buf jb;
	jmp_buf *saved = recovery;
	recovery = &jb;
	if (setjmp(jb) == 0)
		pp_collect_macros(pp);
	recovery = saved;
	return diag_parse_errors() - before;
}
