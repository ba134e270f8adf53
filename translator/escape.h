/* The one place text from outside the translator (the script, the command
 * line, the environment, probed binaries and their debug info) is made
 * safe for where it goes. Every piece of such text reaches the generated
 * C, a printf-style format or the terminal through exactly one of these,
 * chosen by the context:
 *
 *   emit_cstr       inside a C string literal: the exact bytes survive
 *                   (the runtime's copy of a probe point is the true name)
 *   emit_comment    inside a C comment: no "*" "/" pair, no newline, no
 *                   backslash-newline or trigraph splice can end it
 *   emit_ident      a C identifier: generated from the name, injectively,
 *                   out of [A-Za-z0-9_] only
 *   esc_format_text literal text in a _stp_format format ('%' doubled)
 *   esc_visible     a name shown to the user (listings, -p2, messages):
 *                   control bytes as C escapes (see doc/names.md)
 *
 * Results are malloc'd (the translator is short-lived: emit_* results are
 * not freed by their callers). Only libc is used, so the DWARF modules and
 * their unit tests can link this file alone. */
#ifndef STAP_ESCAPE_H
#define STAP_ESCAPE_H

/* "..." with every byte that is not plain printable ASCII, and '"', '\\'
 * and '?' (no trigraphs), escaped. */
const char *emit_cstr(const char *s);

/* Text to put inside a C comment: printable ASCII without
 * newlines; '\\' doubled, "*" + "/" and "/" + "*" split by a backslash,
 * "??" written "?\?", other bytes as \xNN. */
const char *emit_comment(const char *s);

/* PREFIX "_" NAME when NAME is made of [A-Za-z0-9_] only (the common
 * case, readable), else PREFIX "x_" and NAME with '_' as "__" and every
 * other byte outside [A-Za-z0-9] as "_" and two hex digits. Distinct
 * names give distinct identifiers for one PREFIX; prefixes must not be
 * one another followed by 'x'. */
const char *emit_ident(const char *prefix, const char *name);

/* S with every '%' doubled, for literal text in a format string. */
char *esc_format_text(const char *s);

/* S as shown to the user: bytes 1-31 and 127 as \a \b \t \n \v \f \r or
 * \xNN (two lowercase hex digits), '\\' as "\\\\" (so the form is
 * unambiguous); every other byte as it is. */
char *esc_visible(const char *s);

#endif
