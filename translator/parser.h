/* The parser: one source file's tokens (through the preprocessor) into a
 * struct stapfile. parser.c has declarations and statements,
 * parser_expr.c expressions; this header is also their shared state. */
#ifndef STAP_PARSER_H
#define STAP_PARSER_H

#include <setjmp.h>

#include "ast.h"
#include "preproc.h"
#include "session.h"

/* Parse SRC. Errors are printed as they are found; *ERRORS gets their
 * count; *EMPTY (if EMPTY) whether no declaration started at all (SystemTap
 * then says the file "is empty after preprocessing"). The result holds
 * whatever parsed (never NULL). */
struct stapfile *parse_file(struct session *s, const struct source_file *src, int privileged,
			    int *errors, int *empty);

/* A .stpm file: only its public @define's; returns the error count. */
int parse_stpm(struct session *s, const struct source_file *src);

/* ---- internal to parser.c / parser_expr.c ---- */

/* Nesting of expressions and statements the parser accepts (SystemTap
 * itself crashes somewhere past 10000); later passes recurse too. */
#define PARSER_MAX_DEPTH 2000

struct parser {
	struct session *s;
	struct pp *pp;
	const struct source_file *src;
	const struct token *la[3]; /* lookahead */
	int nla;
	int privileged;
	int in_function;
	int depth;
	struct stapfile *file;
	const struct token *last; /* last token consumed */
	int file_nonempty;
};

const struct token *parser_peek(struct parser *p);
const struct token *parser_peek2(struct parser *p);
const struct token *parser_next(struct parser *p);
int parser_is_op(const struct token *t, const char *op);
int parser_is_kw(const struct token *t, const char *kw);
const struct token *parser_expect_op(struct parser *p, const char *op);
void parser_enter(struct parser *p, const struct token *t);
void parser_leave(struct parser *p);

struct expr *parse_expression(struct parser *p);
struct expr *parse_literal(struct parser *p, int allow_minus);
struct expr *parse_hist_op(struct parser *p);
struct expr *parse_symbol_or_index(struct parser *p);

/* A parse error after which parsing resumes at the next token. */
STAP_NORETURN void pass1_throw_noskip(const struct token *tok, const char *fmt, ...)
    STAP_PRINTF(2, 3);

/* Print a parse error without unwinding. */
void pass1_report(const struct token *tok, int saw, const char *fmt, ...) STAP_PRINTF(3, 4);

#endif
