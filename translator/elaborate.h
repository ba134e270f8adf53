/* Pass 2, semantic analysis: the internal interface between its parts
 * (driver, probe-point resolution and aliases, symbol resolution, type
 * inference, checks, elision, the -p2 printer). The probe kinds' table is
 * probe_kinds.h.
 *
 * Conventions pass 3 (the emitter) can rely on after pass2_elaborate()
 * returns 0:
 *
 *  - s->probes: struct derived_probe *, one per concrete probe point, in
 *    SystemTap's output order. Several derived probes may share one struct
 *    probe (a user probe with several built-in points: "probe begin, end");
 *    each alias expansion gets its own struct probe whose body is a fresh
 *    S_BLOCK: for "=" aliases { alias-body; user-body }, for "+="
 *    { user-body; alias-body } (bodies deep-copied, so every symbol of a
 *    merged body points at that probe's own locals). probe->locals holds
 *    every local (struct vardecl *) the body uses; each E_SYMBOL's .var
 *    points at its vardecl (local, formal or global). Alias bodies share
 *    the user body's locals (one namespace per derived probe).
 *  - A probe condition "if (COND)" needs nothing from pass 3: that derived
 *    probe has its own body copy starting with "if (!(COND)) next" (also
 *    under -u). dp->point->condition keeps COND for the -p2 text only. As
 *    SystemTap does, one empty synthesized "begin" probe is then appended.
 *  - dp->tok: the token messages about this probe refer to (the 'probe'
 *    keyword, or the point that named the innermost alias expanded).
 *  - dp->kind, dp->pp (pp() text without condition), dp->sequence
 *    (begin/end/error argument, else 0), dp->interval_ns and
 *    dp->randomize_ns (timers; jiffies count as 4 ms, hz as 1e9/N ns).
 *  - A probe body is an S_BLOCK, possibly empty (-u, or the synthesized
 *    begin above). Synthesized probes have probe->id == -1.
 *  - s->globals: used globals in order of first use (as SystemTap lists
 *    them), with type, arity (at most STAP_MAX_ARITY), index_types,
 *    maxsize, wrap, init, and hist_* for stats used with @hist_linear /
 *    @hist_log. vardecl.id: index in s->globals for globals; index in the
 *    locals vector of its probe/function for locals; for formals, its
 *    position in functiondecl.formals.
 *  - s->functions: used functions in order of first use; each call's
 *    E_CALL.func is set. functiondecl.id is its index in s->functions.
 *    functiondecl.locals holds locals except formals.
 *  - s->embeds: top-level %{ %} of the user file (under -g) and of every
 *    tapset file something was pulled in from, in file order.
 *  - Every expression's .type is set (T_LONG/T_STRING/T_STATS); E_STAT,
 *    E_HIST operands are stats (an E_HIST itself is T_LONG); print family
 *    args keep their own types.
 *    Exception: a function that returns no value (and an embedded-C one
 *    declared without :long/:string) keeps T_UNKNOWN, as do calls to it;
 *    such calls only appear as expression statements (their value unused).
 *  - Constants are folded (if (0) ..., 1 + 2, "a" . "b") and statements
 *    after a jump dropped; unless -u, single-statement nested blocks have
 *    also been replaced by their statement. Under -u a statement folded
 *    away is left as S_NULL.
 *  - Global initializers (vardecl.init) are typed E_NUMBER / E_STRING.
 *  - Globals that are written but never read are printed at the end, as
 *    SystemTap does: pass 2 appends one synthesized derived probe of kind
 *    PK_END per such global (plain AST: foreach/printf/if), whose
 *    probe->tok is the global's token. Nothing special is needed in pass 3.
 *  - @defined(X) of a target variable has been rewritten to E_NUMBER 0;
 *    E_TARGET / E_CAST / E_ATVAR / E_ENTRY never reach pass 3 (they are
 *    errors in begin/end/timer probes).
 *
 * Messages: pass 2 prints its own "semantic error:"/"WARNING:" lines
 * through diag.h. On failure it prints nothing else: the driver prints
 * "Pass 2: analysis failed.  [man error::pass2]" and then
 * diag_print_suppressed(). With s->last_pass == 2 it prints the -p2 text
 * to stdout on success; with -v the "Pass 2: analyzed script" line is the
 * driver's job too (from the lengths of s->probes, functions, embeds,
 * globals). Like SystemTap, the driver should also print
 * diag_print_suppressed() at the end of a successful run. */
#ifndef STAP_ELABORATE_H
#define STAP_ELABORATE_H

#include "diag.h"
#include "session.h"

/* ---- shared state of one pass-2 run ---- */

struct elab {
	struct session *s;
	struct vec files;	/* struct stapfile *: user file first */
	char *pulled;		/* per file: its contents are in the program */
	struct vec user_probes; /* struct probe * whose points to derive */
	int probes_derived;	/* user_probes[0..n) already derived */
	struct vec bodies;	/* distinct struct probe * of s->probes */
	int bodies_resolved, functions_resolved;
	int errors;		  /* semantic errors reported by pass 2 */
	int tvar_errors;	  /* of which failed target expressions */
	int alias_expansions;	  /* alias bodies merged (bounded) */
	int assert_types;	  /* types.c: final pass, report unresolved */
	int changed;		  /* types.c: something inferred this round */
	int context_calls;	  /* types.c: a call may type its function */
	struct vec defined_nodes; /* @defined(...) rewritten to E_NUMBER 0 */
	/* the 'probe' keyword of the probe whose point is being resolved
	 * (SystemTap reports a malformed specification there) */
	const struct token *probe_kw;
	int probewrite; /* an @probewrite was met: pass 2 stops after resolving */
};

/* Report a semantic error (counted). Macros, so that diag.c sees each
 * call site's own format: like SystemTap, a second error from the same
 * site is "similar" and suppressed unless -v. */
void elab_count_error(struct elab *c);
#define elab_error(c, tok, ...) (elab_count_error(c), diag_semantic_error(tok, __VA_ARGS__))
#define elab_error2(c, tok, tok2, ...) \
	(elab_count_error(c), diag_semantic_error2(tok, tok2, __VA_ARGS__))
/* An error whose text is the key for suppression (probe-point errors). */
void elab_error_text(struct elab *c, const struct token *tok, const char *fmt, ...)
    STAP_PRINTF(3, 4);
/* A warning: suppressed when its text was seen before (unless -v). */
void elab_warning(struct elab *c, const struct token *tok, const char *fmt, ...) STAP_PRINTF(3, 4);

/* Set nderived and first_pp of every body in c->bodies. */
void elab_count_derived(struct elab *c);
/* Index of file F in c->files, or -1. */
int elab_file_index(struct elab *c, const struct source_file *f);
/* Pull in library file number I (its embeds, probes). */
void elab_pull_file(struct elab *c, int i);

/* "(similar: a, b, c)" suggestions for NAME among CANDS (char *), or "". */
const char *elab_suggest(const char *name, struct vec *cands);
/* "(similar WHAT: a, b, c)", SystemTap's form for names from a probed
 * binary ("functions", "marks"; "libraries" compares their basenames). */
const char *elab_suggest_what(const char *name, struct vec *cands, const char *what);

/* ---- probe points (elaborate_alias.c, probe_kinds.h, probes_*.c) ---- */

/* Why a point did not resolve: a message and where it points (tok may be
 * NULL: message only). */
struct pp_error {
	const struct token *tok;
	char *msg;
	const char *key; /* the format: where it was raised */
};

enum pp_result { PP_OK, PP_NOMATCH, PP_ERROR };

/* Helpers for resolvers. */
enum pp_result pp_fail(struct pp_error *err, const struct token *tok, const char *fmt, ...)
    STAP_PRINTF(3, 4);
/* The pp() text of a point: "timer.ms(100)", "begin(-10)". */
char *pp_text(const struct probe_point *pp);

/* A copy of p whose body starts with "if (!(COND)) next" (a copy of
 * COND), as a probe point's condition does. */
struct probe *elab_guard_body(struct probe *p, struct expr *cond);

/* Expand aliases and resolve every point of every user probe into
 * s->probes (elaborate_alias.c). */
void elab_derive_probes(struct elab *c);

/* Render every derived probe's alias_pp again, once symbols are resolved
 * (conditions print resolved globals as __global_NAME). */
void elab_render_chains(void);
/* Forget the previous run's derivations (several runs per process: fuzz). */
void elab_alias_reset(void);
/* " if (COND)" with globals as __global_NAME, for -p2 text. */
void elab_print_condition(struct strbuf *b, struct expr *cond);
/* pp(): the point with its ? or ! and " if (COND)", as -p2 heads it. */
char *dp_full_pp(const struct derived_probe *dp);
/* pn(), where it differs from pp() (an alias, a .plt point); else NULL */
char *dp_full_pn(const struct derived_probe *dp);
char *dp_full_from(const struct derived_probe *dp);
/* -t's derivation text (" from: begin"), as SystemTap prints it. */
char *dp_derivation(const struct derived_probe *dp);
/* -t's location of the probe ("file:line:col" of this token). */
const struct token *dp_timing_tok(const struct derived_probe *dp);
/* --dump-probe-aliases' line for one name of an alias. */
char *alias_dump_text(const struct probe_alias *al, const struct probe_point *name);

/* Errors constant folding reported since the last call (elaborate_fold.c). */
int elab_fold_errors(void);

/* Deep copies (elaborate_walk.c). */
struct stmt *elab_copy_stmt(const struct stmt *s);
/* A copy of probe p with no locals (they are found again) and `body`. */
struct probe *elab_copy_probe(const struct probe *p, struct stmt *body);
struct expr *elab_copy_expr(const struct expr *e);

/* ---- symbols and functions (elaborate_resolve.c) ---- */
void elab_resolve(struct elab *c);

/* ---- types (types.c) ---- */
void elab_infer_types(struct elab *c);

/* printf/sprintf: check the argument count against the literal format
 * (first arg of E) and give each argument's expected type in TYPES
 * (enum exp_type cast to a pointer) (elaborate_format.c). */
void types_check_format(struct elab *c, struct expr *e, struct vec *types);

/* ---- other checks (elaborate_check.c) ---- */
void elab_check(struct elab *c);
/* @variance's bit shifts (after elision) and "global x%" as a scalar
 * (before unresolved types are reported: 1 if it reported one). */
void elab_check_variance(struct elab *c);
int elab_check_wrap(struct elab *c);

/* ---- elision and warnings (elaborate_elide.c) ---- */
/* Before type checking (AFTER_TYPES 0) with SystemTap's warnings; after
 * it (1) again once constants are folded, silently but for probes. */
void elab_elide(struct elab *c, int after_types);
/* Recount vardecl.read / .written over the whole program. */
void elab_count_uses(struct elab *c);
/* The same, counting as auto-printing does (AUTOPRINT non-NULL): "+="
 * and "++" are not reads, "delete" is. */
void elab_count_uses_mode(struct elab *c, void *autoprint);
void elab_warn_unused(struct elab *c);

/* Constant folding and dead code in place; non-zero if anything changed
 * (elaborate_fold.c). UNOPTIMIZED (-u): a statement folded away becomes
 * S_NULL. elab_fold_unoptimized() does every body and function. */
int elab_fold(struct stmt *body, int unoptimized);
/* Whether function FD may pass a call on to the next overload (`next`,
 * or STAP_NEXT in embedded C). */
int elab_may_next(const struct functiondecl *fd);
void elab_fold_unoptimized(struct elab *c);
/* Before anything else: if-statements deciding on @defined(...) keep only
 * the branch taken, so the other may use what does not resolve. */
void elab_fold_defined(struct elab *c);
/* $dynamic_call_graph lowered to __dcg_set/__dcg_get (elaborate_dcg.c). */
void elab_lower_dcg(struct elab *c, int from);
/* What the call graph's handlers need of the thread (elaborate_dcg_needs.c):
 * s->dcg_capture, s->dcg_stop, the -v line. */
void elab_dcg_needs(struct elab *c);

/* ---- auto-printing of write-only globals (elaborate_autoprint.c) ---- */
void elab_autoprint(struct elab *c);

/* ---- -p2 output (pass2_print.c) ---- */
void pass2_print(struct session *s, struct strbuf *out);

/* ---- AST walking (elaborate_walk.c) ---- */
/* Visit every expression under a statement / expression, pre-order. The
 * callback returns non-zero to skip the children. */
typedef int (*expr_visit_fn)(struct expr *e, void *arg);
typedef int (*stmt_visit_fn)(struct stmt *st, void *arg);
void walk_stmt(struct stmt *st, stmt_visit_fn sf, expr_visit_fn ef, void *arg);
void walk_expr(struct expr *e, expr_visit_fn ef, void *arg);

#endif
