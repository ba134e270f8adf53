/* Diagnostics in SystemTap's shapes: parse errors (pass 1), semantic errors
 * and warnings (pass 2 and later). All of them share the "source:" line
 * and caret printing.
 *
 * Who prints which line:
 *   - Each pass prints its own diagnostics, as they happen, through the
 *     functions below.
 *   - Pass 1 (pass1_parse) prints the "N parse error(s)." count line
 *     (preceded by a blank line) when it fails.
 *   - The DRIVER (main.c) prints "Pass N: ... failed.  [man error::passN]"
 *     and, after it (or after pass 4, or the last pass asked for, when
 *     all succeed), diag_print_suppressed() (the "Number of similar
 *     error messages suppressed: N." / "Rerun with -v to see them." lines).
 *
 * Shapes (as SystemTap 4.8 prints them):
 *
 *   parse error: MSG
 *           saw: TOKEN-DESCRIPTION at FILE:LINE:COL
 *        source: the source line
 *                    ^
 *   (blank line)
 *
 *   semantic error: MSG: TOKEN-DESCRIPTION at FILE:LINE:COL
 *           source: the source line
 *                       ^
 *   (blank line)
 *
 *   WARNING: MSG: TOKEN-DESCRIPTION at FILE:LINE:COL
 *    source: the source line
 *                ^
 *
 * Like SystemTap, a semantic error or warning whose file is the same as the
 * previous semantic error's/warning's prints an empty file name (":1:5").
 * A repeated message is counted as suppressed instead of printed, unless
 * verbose (msg_verbose > 0): parse errors repeat when their text does,
 * semantic errors and warnings when their format string (or SITE) does,
 * SystemTap's approximation of "raised from the same place".
 */
#ifndef STAP_DIAG_H
#define STAP_DIAG_H

#include <stdio.h>

#include "ast.h"
#include "util.h"

/* A parse error at TOK (an EOF token prints "saw: FILE EOF"). */
void diag_parse_error(const struct token *tok, const char *fmt, ...) STAP_PRINTF(2, 3);

/* The same with "         at: " instead of "        saw: " (SystemTap uses
 * it for lexer and preprocessor errors and a few others). */
void diag_parse_error_at(const struct token *tok, const char *fmt, ...) STAP_PRINTF(2, 3);

/* Either of the above (SAW picks the label); CHECK_SEEN: subject to the
 * "similar messages" suppression. */
void diag_parse_error_full(const struct token *tok, int saw, int check_seen, const char *fmt, ...)
    STAP_PRINTF(4, 5);

/* A semantic error at TOK (NULL: message only, e.g. "no probes found"). */
void diag_semantic_error(const struct token *tok, const char *fmt, ...) STAP_PRINTF(2, 3);

/* The same, with suppression keyed on SITE (e.g. the unformatted message
 * pattern) instead of FMT: SystemTap suppresses repeats of the same
 * kind of error ("unresolved function foo", then "... bar") even when the
 * texts differ. */
void diag_semantic_error_site(const char *site, const struct token *tok, const char *fmt, ...)
    STAP_PRINTF(3, 4);
void diag_warning_site(const char *site, const struct token *tok, const char *fmt, ...)
    STAP_PRINTF(3, 4);

/* A semantic error naming two tokens: the second is printed after the
 * first's source line as "TOKEN-DESCRIPTION at FILE:L:C" + source + caret. */
void diag_semantic_error2(const struct token *tok, const struct token *tok2, const char *fmt, ...)
    STAP_PRINTF(3, 4);

/* "WARNING: MSG: TOKEN..." (TOK may be NULL: "WARNING: MSG").
 * Nothing is printed under -w (msg_suppress_warnings). */
void diag_warning(const struct token *tok, const char *fmt, ...) STAP_PRINTF(2, 3);

/* Forget counts and seen messages (pass 1 calls it: a fuzz harness runs
 * many sessions in one process). */
void diag_reset(void);

/* Counts since start. */
int diag_parse_errors(void);
int diag_semantic_errors(void);
int diag_warnings(void);

/* Prints the "Number of similar error/warning messages suppressed" lines
 * if anything was suppressed, then forgets the counts; for the driver. */
void diag_print_suppressed(void);

/* Low-level: print "PREFIX<source line>\n" and the caret line for LOC,
 * the caret line keeping the source line's tabs so it lines up. */
void diag_print_source(FILE *f, const char *prefix, const struct srcloc *loc);

/* "FILE:LINE:COL" of a location (static buffer; next call overwrites). */
const char *diag_loc_string(const struct srcloc *loc);

#endif
