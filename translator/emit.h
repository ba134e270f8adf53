/* Pass 3 (translate the elaborated program into one C file), pass 4
 * (compile it into a shared object) and the compiled-object cache.
 *
 * How the driver (main.c) uses this module, after pass 2 succeeded:
 *
 *	if (s->last_pass >= 3 && cache_lookup(s)) {
 *		// hit: s->object_file, s->c_file and s->module_name are set,
 *		// s->cache_hit = 1; with -v, "Pass 3: using cached <c file>"
 *		// and "Pass 4: using cached <object>" were printed. If
 *		// s->last_pass == 3 the cached C was printed to stdout; if it
 *		// is 4 the object path was printed. Go on with pass 5.
 *	} else {
 *		pass3_translate(s);        // sets s->c_file (in s->tmpdir)
 *		if (s->last_pass >= 4)
 *			pass4_compile(s);  // compiles into s->tmpdir, then calls
 *					   // cache_store(), which copies C and
 *					   // object into the cache and points
 *					   // s->object_file at the copy
 *	}
 *
 * Calling cache_store() again after pass4_compile() is harmless (main.c
 * does); it returns at once when the object is already the cached one.
 *
 * pass3_translate() computes the hash itself when cache_lookup() was not
 * called (s->module_name unset). With -p4 and no cache the object is
 * copied to ./<module_name>.so, as SystemTap keeps the .ko, and that path
 * is printed. -k keeps s->tmpdir (main.c's business) and changes nothing
 * here.
 *
 * cache_lookup() with s->last_pass == 3 only hits when the C file is cached
 * too (it always is). s->cache_dir == NULL turns caching off; main.c sets
 * it to cache_default_dir() unless told otherwise.
 *
 * The cache lives in $XDG_CACHE_HOME/stap (else $HOME/.cache/stap), a
 * directory of mode 0700 created on first use. Entries are
 * stap_<hash>.c and stap_<hash>.so; an entry (or the directory) owned by
 * another user or writable by group/others is ignored. */
#ifndef STAP_EMIT_H
#define STAP_EMIT_H

#include "escape.h"
#include "session.h"

/* ---- cache (cache.c) ---- */

/* "$XDG_CACHE_HOME/stap" or "$HOME/.cache/stap"; NULL when neither is set. */
const char *cache_default_dir(void);
/* The hash of everything that changes the compiled object, as 40 hex
 * digits; also sets s->module_name ("stap_<first 32 digits>"). */
const char *cache_hash(struct session *s);
/* 1 on a usable hit (see above), 0 otherwise. */
int cache_lookup(struct session *s);
/* Store s->c_file and s->object_file; best effort, never fails the run. */
void cache_store(struct session *s);
/* --clean-cache: remove every cache entry (0). */
int cache_clean(const struct session *s);

/* ---- pass 3 internals (emit*.c), not for other modules ---- */

/* emit_share.c: generated handlers by their code, to share identical ones */
struct emit_share {
	struct shared_handler *v;
	size_t n, cap;
};
int emit_share_find(struct emit_share *sh, const char *key); /* its idx, or -1 */
void emit_share_add(struct emit_share *sh, const char *key, int idx);
void emit_share_free(struct emit_share *sh);

struct emitter {
	struct session *s;
	struct strbuf *o; /* code being written */
	int indent;
	int next_id;	     /* unique numbers for temps and labels */
	struct strbuf *tmps; /* string temporaries of the current frame */
	int in_function;     /* 0 in a probe handler */
	const struct functiondecl *func;
	/* Where control goes: on an error, on `return`, on `next`, and for
	 * break/continue (NULL outside loops). */
	const char *err_label, *ret_label, *next_label;
	const char *brk_label, *cont_label;
	int errors;	     /* translation errors reported */
	struct vec variance; /* struct emit_variance *: @variance(x, N) */
	struct emit_share share;
	int *handler_of; /* derived probe i runs p_<handler_of[i]> */
};

struct emit_variance {
	const struct vardecl *var;
	int shift;
};

void emit_line(struct emitter *E, const char *fmt, ...) STAP_PRINTF(2, 3);
void emit_raw(struct emitter *E, const char *fmt, ...) STAP_PRINTF(2, 3);
/* A fresh number for temps and labels. */
int emit_id(struct emitter *E);
/* A new string temporary in the current frame: "l->t_N". */
const char *emit_strtmp(struct emitter *E);
/* A new label name "PREFIX_N" (static storage). */
const char *emit_label(struct emitter *E, const char *prefix);
/* C literal of "token-description at FILE:LINE:COL". */
const char *emit_tokloc(const struct token *t);
/* "c->last_error = MSG; c->last_stmt = LOC; goto ERR;" as one C statement. */
void emit_fail(struct emitter *E, const char *msg_literal, const struct token *t);
/* Report a translation error (an unsupported construct). */
void emit_error(struct emitter *E, const struct token *t, const char *fmt, ...) STAP_PRINTF(3, 4);
/* The same, after which no further translation error is reported (as
 * SystemTap's translator, which gives up at such an error). */
void emit_fatal(struct emitter *E, const struct token *t, const char *msg);

/* Expressions (emit_expr.c): write a C expression of type int64_t (long),
 * const char * (string) or const struct _stp_stat * (stats). */
void emit_expr(struct emitter *E, const struct expr *e);
/* The C lvalue of a scalar variable: "g_x" or "l->l_x". */
const char *emit_var(const struct vardecl *v);
/* The C name of a script function: "f_NAME" (or "f_NAME__N" for overloads). */
const char *emit_fname(const struct functiondecl *f);
/* Its frames array (static, indexed by call depth). */
const char *emit_frames(const struct functiondecl *f);
/* Render E into a new string instead of E->o. */
char *emit_to_string(struct emitter *E, const struct expr *e);
int emit_has_side_effects(const struct expr *e);
/* Evaluate array indexes into a fresh struct _stp_val array; writes the
 * declarations+assignments as statements (inside a ({ }) block) and
 * returns the array's C name. */
const char *emit_keys(struct emitter *E, const struct vec *indexes);
/* Index lists with '*' (NULL entries): slices. emit_slice_keys writes the
 * key array like emit_keys (wildcards as 0) and sets bit i of *MASK for
 * each given key. */
int emit_has_wildcard(const struct vec *indexes);
const char *emit_slice_keys(struct emitter *E, const struct vec *indexes, unsigned *mask);
/* The map pointer of an array base expression ("g_x"). */
const char *emit_map(struct emitter *E, const struct expr *base);
/* The stats pointer of a stats operand (scalar global or array element). */
void emit_stat_ref(struct emitter *E, const struct expr *e);

/* Statements (emit_stmt.c). */
void emit_stmt(struct emitter *E, const struct stmt *st);
/* The action count check after a statement at T. */
void emit_action(struct emitter *E, const struct token *t);

/* Print family (emit_print.c). */
void emit_print(struct emitter *E, const struct expr *e);

/* Embedded C (emit_embedded.c). */
void emit_embedded_body(struct emitter *E, const struct functiondecl *f);
void emit_embedded_expr(struct emitter *E, const struct expr *e);

/* Type names. */
const char *emit_ctype(enum exp_type t); /* int64_t / const char * / ... */

#endif
