/* The preprocessor, between the lexer and the parser: script arguments
 * ($1 @1 $# @#), @define macros and their @NAME uses, and the conditionals
 * %( COND %? A %: B %). Layers, lowest first, as SystemTap orders them:
 * arguments are substituted wherever a token may begin, macros are
 * expanded before conditionals are evaluated (so an @define inside a false
 * branch still defines), conditionals last. */
#ifndef STAP_PREPROC_H
#define STAP_PREPROC_H

#include "ast.h"
#include "session.h"

struct pp;
struct macro_table;

/* Forget the public (.stpm) macros: each pass 1 starts afresh (the fuzz
 * harness runs many in one process). */
void pp_reset(void);

struct pp *pp_new(struct session *s, const struct source_file *src);

/* Run a .stpm file through: its @define's (in branches taken) become
 * visible to every file, but only if the whole file is read without
 * error; anything other than @define's is an error. Errors unwind
 * through pass1_throw. */
void pp_collect_macros(struct pp *pp);

/* The next token for the parser; TOK_EOF at the end. Errors are raised
 * through pass1_throw (never returns). */
const struct token *pp_next(struct pp *pp);

/* Raised by the preprocessor and the parser: report a parse error at TOK
 * ("saw:" if SAW else "at:") and unwind to the parser's recovery point. */
STAP_NORETURN void pass1_throw(const struct token *tok, int saw, const char *fmt, ...)
    STAP_PRINTF(3, 4);

#endif
