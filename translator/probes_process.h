/* process(...) probe points: the family's front (probes_process.c), the
 * resolvers and hooks of its kinds (probes_function.c, probes_statement.c,
 * probes_mark.c, probes_plt.c, probes_thread.c, probes_syscall.c), the
 * lowering of their variables (probes_lower.c, probes_process_vars.c). */
#ifndef STAP_PROBES_PROCESS_H
#define STAP_PROBES_PROCESS_H

#include "dwarf_query.h"
#include "dwarf_vars.h"
#include "probe_kinds.h"

/* What a function probe's target variables are resolved against
 * (derived_probe.proc). */
struct proc_point {
	struct dwq_mod *mod;
	Dwarf_Off func_die; /* 0: no DWARF */
	uint64_t pc;	    /* the probed vaddr */
	uint64_t entry_pc;  /* .return: where @entry values are taken (after
			       the prologue, where parameters are located) */
	int is_return;
	const char *func; /* the function's name */
};

/* ---- shared by the resolvers (probes_process.c) ---- */

/* Where a resolver reports MSG, an error of the debug-info queries about
 * the component at TOK: SystemTap reports a malformed specification at
 * the probe's keyword. */
const struct token *proc_msg_tok(const struct elab *c, const char *msg, const struct token *tok);

/* The module at PATH, opened once for the whole run (target variables
 * need it); NULL with ERR set. */
struct dwq_mod *proc_open_mod(const char *path, char *err, size_t errlen);
/* SystemTap's warning for a function or statement probe on a module
 * without DWARF: "cannot find module PATH debuginfo: No DWARF information
 * found [man warning::debuginfo]" (none under -l/-L). */
void proc_debuginfo_warning(struct elab *c, const struct dwq_mod *m);
/* The page-aligned lowest PT_LOAD vaddr of an ELF file (0 if unknown). */
uint64_t proc_module_base(const char *path);
/* A point at PC, entered there, in function FUNC (FUNC_DIE, 0: none). */
struct proc_point *proc_point_at(struct dwq_mod *m, Dwarf_Off func_die, uint64_t pc,
				 const char *func);
/* The next derived probe of a chain that starts at FIRST (itself when
 * *LAST is NULL); *LAST becomes it. */
struct derived_probe *proc_chain_next(struct derived_probe *first, struct derived_probe **last);
/* The .library("...") argument as written (the point has one: v[1]). */
const char *proc_lib_arg(const struct probe_point *pp);
/* process("EXE")[.library("LIB")] as SystemTap's pn() has it. */
char *proc_pn_prefix(const struct probe_point *pp, const char *exe, const char *lib);
/* process("EXE")[.library("LIB")] in BUF, as pp() writes it. */
const char *proc_pp_prefix(const char *exe, const char *lib, char *buf, size_t len);
/* Every module (struct dwq_mod *) opened while resolving process probes:
 * what the compiled object depends on besides the script (cache.c). */
const struct vec *proc_opened_modules(void);
/* Finish a probe of the process itself (.begin, .end, .thread.*,
 * .syscall*): its kind, pp() (TAIL after process("EXE")), its program. */
enum pp_result proc_event(const struct pp_at *at, struct derived_probe *dp, enum probe_kind kind,
			  const char *tail);

/* ---- the kinds' resolvers and hooks (their lines in probe_kinds.c) ---- */

enum pp_result proc_resolve_function(const struct pp_at *at, struct derived_probe *dp,
				     struct pp_error *err);
/* "no match (similar functions: ...)" for SPEC in m (lib: m is a
 * library) */
enum pp_result proc_no_match(struct dwq_mod *m, const struct probe_point *pp, const char *lib,
			     const char *spec, int plt, struct pp_error *err);
enum pp_result proc_resolve_callee(const struct pp_at *at, struct derived_probe *dp,
				   struct pp_error *err);
void proc_lower_callee(struct elab *c, struct derived_probe *dp);
/* probes_label.c: .function(...).label("L") */
enum pp_result proc_resolve_label(const struct pp_at *at, struct derived_probe *dp,
				  struct pp_error *err);
char *proc_function_vars(const struct derived_probe *dp);
enum pp_result proc_resolve_statement(const struct pp_at *at, struct derived_probe *dp,
				      struct pp_error *err);
enum pp_result proc_resolve_mark(const struct pp_at *at, struct derived_probe *dp,
				 struct pp_error *err);
void proc_lower_mark(struct elab *c, struct derived_probe *dp);
char *proc_mark_vars(const struct derived_probe *dp);
enum pp_result proc_resolve_plt(const struct pp_at *at, struct derived_probe *dp,
				struct pp_error *err);
void proc_lower_plt(struct elab *c, struct derived_probe *dp);
enum pp_result proc_check_thread(const struct probe_point *pp, int i, struct pp_error *err);
enum pp_result proc_resolve_thread(const struct pp_at *at, struct derived_probe *dp,
				   struct pp_error *err);
enum pp_result proc_check_syscall(const struct probe_point *pp, int i, struct pp_error *err);
enum pp_result proc_resolve_syscall(const struct pp_at *at, struct derived_probe *dp,
				    struct pp_error *err);
void proc_lower_syscall(struct elab *c, struct derived_probe *dp);
/* The target variables ($x, $return, $$parms, ...) of a probe with
 * debug info (dp->proc) become calls of the tapset's __tvar_* functions,
 * in its own copy of the body (probes_process_vars.c). */
void proc_lower_dwarf(struct elab *c, struct derived_probe *dp);
/* @cast with a module argument in BODY, a function's or a probe's of
 * another kind, before it is resolved. */
void proc_lower_casts(struct elab *c, struct stmt *body);

/* ---- script code the lowerings build (probes_lower.c) ---- */

struct expr *lower_num(const struct token *tok, int64_t n);
struct expr *lower_call(const struct token *tok, const char *name, int n, struct expr **args);
/* E becomes a call of NAME with the N numbers ARGS. */
void lower_to_call(struct expr *e, const char *name, int n, const int64_t *args);
struct expr *lower_binary(const struct token *tok, const char *op, struct expr *l, struct expr *r);
/* --skip-badvars: a variable that cannot be found reads as 0 (E becomes
 * that 0); 0 without it. */
int lower_badvar_zero(struct elab *c, struct expr *e);
/* dp's own copy of its body (its probe is then a copy too), if HAS finds
 * something to lower in it; NULL: nothing to lower, nothing copied. */
struct probe *lower_own_body(struct derived_probe *dp, expr_visit_fn has);
/* Walk dp's body with FN, which gets a struct point_lower *, in its own
 * copy of the body (each point has its own operands), if the body has
 * target variables. */
struct point_lower {
	struct elab *c;
	const struct derived_probe *dp;
};
void lower_point_vars(struct elab *c, struct derived_probe *dp, expr_visit_fn fn);
/* Integers, enums, bools and pointers: what a target variable reads as. */
int lower_scalar_kind(enum dwv_tkind k);
/* The value (or, with addr_of, the address) a DWARF access gives, as
 * script code (see probes_lower.c). */
struct expr *lower_access_expr(const struct token *tok, const struct dwv_access *a,
			       struct expr **idx, int nidx, struct expr *script_addr, int want_addr,
			       char *msg, size_t len);

#endif
