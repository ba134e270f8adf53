/* AST constructors and small token helpers. */
#include <stdio.h>

#include "ast.h"

struct expr *expr_new(enum expr_kind k, const struct token *tok)
{
	struct expr *e = xcalloc(1, sizeof(*e));
	e->kind = k;
	e->tok = tok;
	e->type = T_UNKNOWN;
	return e;
}

struct stmt *stmt_new(enum stmt_kind k, const struct token *tok)
{
	struct stmt *s = xcalloc(1, sizeof(*s));
	s->kind = k;
	s->tok = tok;
	return s;
}

/* As SystemTap prints a token in messages. Each call returns a new
 * string (messages are few; the translator is short-lived). */
const char *token_describe(const struct token *t)
{
	if (!t)
		return "";
	switch (t->type) {
	case TOK_IDENT:
		return xasprintf("identifier '%s'", t->content);
	case TOK_KEYWORD:
		return "keyword";
	case TOK_NUMBER:
		return xasprintf("number '%s'", t->content);
	case TOK_STRING:
		return xasprintf("string '%s'", t->content);
	case TOK_OPERATOR:
		return xasprintf("operator '%s'", t->content);
	case TOK_EMBEDDED:
		return "embedded-code";
	case TOK_EOF:
		return "end of file";
	case TOK_JUNK:
		return t->junk == JUNK_CHAR ? xasprintf("junk '%s'", t->content) : "junk ''";
	}
	return "";
}

const char *exp_type_name(enum exp_type t)
{
	switch (t) {
	case T_LONG:
		return "long";
	case T_STRING:
		return "string";
	case T_STATS:
		return "stats";
	case T_UNKNOWN:
		break;
	}
	return "unknown";
}
