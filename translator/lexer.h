/* The lexer: turns one source file's text into tokens, one at a time.
 * Lexical errors come back as TOK_JUNK tokens (content = the message) so
 * the parser reports them in order, where it meets them, as SystemTap does. */
#ifndef STAP_LEXER_H
#define STAP_LEXER_H

#include "ast.h"

struct lexer;

/* Lex SRC from its start. LINE/COL offsets let a script argument ($1) be
 * lexed as if it stood where the $1 was: every token gets location LOC
 * when LOC is non-NULL. */
struct lexer *lexer_new(const struct source_file *src, const struct srcloc *fixed_loc);

/* The next token; TOK_EOF (repeatedly) at the end. */
struct token *lexer_next(struct lexer *lx);

/* Is NAME one of the language's keywords? */
int lexer_is_keyword(const char *name);

/* Convert a TOK_NUMBER's text as SystemTap does (decimal, 0x hex, 0 octal,
 * up to 2^64-1, wrapping into int64). 0 on success, -1 if invalid. */
int lexer_number_value(const char *text, int64_t *out);

/* Escape a string for printing between double quotes: `"` -> `\"`, and,
 * if ESCAPE_BACKSLASH, `\` -> `\\` (how printf formats are printed). */
void lexer_quote_raw(struct strbuf *out, const char *raw, int escape_backslash);

#endif
