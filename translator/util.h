/* Small utilities shared by all translator passes: allocation that dies on
 * failure (the translator never runs inside a traced process), growable
 * vectors and string buffers, and the message layer. */
#ifndef STAP_UTIL_H
#define STAP_UTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#define STAP_PRINTF(a, b) __attribute__((format(printf, a, b)))
#define STAP_NORETURN __attribute__((noreturn))

void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t sz);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);
char *xasprintf(const char *fmt, ...) STAP_PRINTF(1, 2);
char *xvasprintf(const char *fmt, va_list ap);

/* A growable array of pointers. Zero-initialised is empty. */
struct vec {
	void **v;
	int n, cap;
};
void vec_push(struct vec *v, void *p);
void *vec_pop(struct vec *v);
#define vec_at(vec, i) ((vec)->v[i])
#define vec_foreach(type, var, vecp)                                                        \
	for (int var##_i = 0; var##_i < (vecp)->n && ((var = (type)(vecp)->v[var##_i]), 1); \
	     var##_i++)

/* A growable NUL-terminated string. Zero-initialised is empty. */
struct strbuf {
	char *s;
	size_t len, cap;
};
void sb_putc(struct strbuf *b, char c);
void sb_puts(struct strbuf *b, const char *s);
void sb_putn(struct strbuf *b, const char *s, size_t n);
void sb_printf(struct strbuf *b, const char *fmt, ...) STAP_PRINTF(2, 3);
void sb_vprintf(struct strbuf *b, const char *fmt, va_list ap);
const char *sb_str(struct strbuf *b); /* never NULL */
char *sb_take(struct strbuf *b);      /* caller owns result; b is reset */

/* SystemTap's Levenshtein score (util.c), by which it orders suggestions. */
int stap_edit_distance(const char *a, const char *b);

/* Read a whole file; NULL with errno set on failure. */
char *read_file(const char *path, size_t *len);

/* Message layer. fatal() prints "ERROR: ..." and exits 1. */
enum debug_domain {
	DBG_LEXER,
	DBG_PARSE,
	DBG_ELABORATE,
	DBG_TRANSLATE,
	DBG_COMPILE,
	DBG_CACHE,
	/* the runtime's domains (runtime/lang/debug.h, doc/debug-domains.md),
	 * passed to staprun in STAP_DEBUG at pass 5 */
	DBG_PTRACE, /* the ptrace engine */
	DBG_BKPT,
	DBG_DCG,
	DBG_SYM,
	DBG_TRANSPORT,
	DBG_NDOMAINS
};
extern int msg_verbose;		  /* number of -v */
extern int msg_suppress_warnings; /* -w */
extern unsigned msg_debug_mask;
extern int msg_debug_level[DBG_NDOMAINS]; /* the runtime's: DOMAIN:LEVEL, 1 without */
void fatal(const char *fmt, ...) STAP_PRINTF(1, 2) STAP_NORETURN;
void warn(const char *fmt, ...) STAP_PRINTF(1, 2);
void debug(enum debug_domain d, const char *fmt, ...) STAP_PRINTF(2, 3);
/* Turn on debug domains from a comma-separated list of DOMAIN[:LEVEL]
 * (LEVEL 1-9, meaningful for the runtime's); 0 on success. */
int debug_enable(const char *list);
const char *debug_domain_name(enum debug_domain d);

#endif
