/* Target variables of process function probes: $param and $local (any
 * integer, enum, bool, pointer; registers, memory, location lists),
 * member and index chains ($p->a->b, $arr[2], $arr[$i]), &$x, $x$ and
 * $x$$, @var("name[@file]"), @cast(ADDR, "type"[, "module"])->member,
 * @defined(...) (1 when the DWARF resolves it; if/?: on it are folded
 * before the rest is lowered, so a dead branch is never reported), writes
 * under -g ($x = v, memory locations only), $return in .return probes and
 * $$parms / $$locals / $$vars. Each becomes script code calling the
 * tapset's __tvar_* functions (tapset/tvar_access.stp, context_user.stp),
 * whose embedded C reads registers and memory through the runtime's
 * context API; the locations and access paths come from dwarf_vars
 * (dwv_*). In .return probes, @entry(EXPR) (and $param, $p->x, $$parms,
 * $p$, which mean @entry(...) there, as in SystemTap, with its "confusing
 * usage" warning) is evaluated by a hidden function probe after the
 * prologue and read back with __tvar_entry_get. Errors are
 * SystemTap's ("unable to find member ...", "write to target variable not
 * permitted; need stap -g"); --skip-badvars makes a bad one 0. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "cast_module.h"
#include "dwarf_vars.h"
#include "probes_process.h"

#include <dwarf.h>
#include <elfutils/libdw.h>

struct lower {
	struct elab *c;
	struct proc_point *pt;
	int errors;
	int quiet;	    /* @defined trial: count errors, report none */
	struct vec defined; /* @defined nodes folded to numbers */
	struct entries *en; /* $x$ in a .return probe: values taken at entry */
	int is_mark;	    /* a .mark probe: SystemTap adds a second error */
	char **extra;	    /* more messages of the last failed lookup */
	int nextra;
};

static void clear_extra(struct lower *L)
{
	for (int i = 0; i < L->nextra; i++)
		free(L->extra[i]);
	free(L->extra);
	L->extra = NULL;
	L->nextra = 0;
}

/* @var("NAME[@FILE]"[, MODULE]) in module M: without FILE, in the probe's
 * module, the variables in scope at the probe come first (locals, then the
 * probe's CU), then every CU, as SystemTap 4.8 looks; on failure L->extra
 * gets its further messages (each CU's, then the scope's). */
static int atvar_lookup(struct lower *L, struct dwq_mod *m, const char *name, const char *file,
			struct dwv_var *out, char *msg, size_t len)
{
	struct proc_point *pt = L->pt;
	char local[DWQ_ERRLEN] = "";
	int try_local = m == pt->mod && !file && pt->func_die;

	if (try_local && dwv_find_var(m, pt->pc, name, out, local, sizeof local) == 0)
		return 0;
	if (dwv_global_var(m, name, file, out, msg, len) == 0)
		return 0;
	L->extra = dwv_global_misses(m, name, file, &L->nextra);
	if (try_local && local[0]) {
		L->extra = xrealloc(L->extra, (size_t)(L->nextra + 1) * sizeof *L->extra);
		L->extra[L->nextra++] = xstrdup(local);
	}
	return -1;
}

/* "'struct s' (/a.c:2) is being accessed instead of a member such as '->a'" */
static void whole_struct_msg(const struct dwv_access *a, char *msg, size_t len)
{
	Dwarf_Die die = a->type.die, c;
	const char *file = dwarf_decl_file(&die);
	int line = 0;
	const char *first = NULL;
	dwarf_decl_line(&die, &line);
	if (dwarf_child(&die, &c) == 0)
		do
			if (dwarf_tag(&c) == DW_TAG_member && (first = dwarf_diename(&c)))
				break;
		while (dwarf_siblingof(&c, &c) == 0);
	snprintf(msg, len, "'%s' (%s:%d) is being accessed instead of a member such as '->%s'",
		 a->type_name, file ? file : "?", line, first ? first : "?");
}

struct target_ref {
	struct dwv_var var;
	int have_var;
	struct dwq_mod *mod; /* the variable's module (@var: maybe not the probe's) */
	Dwarf_Die cast_type; /* @cast */
	int is_cast;
	struct dwv_step *steps;
	int nsteps;
	struct expr **idx;
	int nidx;
	const struct token *err_tok; /* where the message points */
};

static void ref_free(struct target_ref *r)
{
	if (r->have_var)
		dwv_var_free(&r->var);
	free(r->steps);
	free(r->idx);
}

static int lower_expr(struct expr *e, void *arg);

/* The module @var("name", "MODULE") looks in: the probe's without MODULE;
 * MODULE must be an absolute path (SystemTap 4.8 finds nothing else:
 * "unresolved @var() expression"). */
static struct dwq_mod *atvar_module(struct proc_point *pt, const struct expr *e, const char *name,
				    char *msg, size_t len)
{
	const char *mod = e->args.n > 1 ? ((struct expr *)e->args.v[1])->str : NULL;
	char real[PATH_MAX], mine[PATH_MAX];

	if (!mod)
		return pt->mod;
	if (mod[0] != '/') {
		snprintf(msg, len, "unresolved @var() expression");
		return NULL;
	}
	if (!realpath(mod, real)) {
		snprintf(msg, len, "unable to find global '%s' in %s", name, mod);
		return NULL;
	}
	if (pt->mod && realpath(dwq_path(pt->mod), mine) && !strcmp(real, mine))
		return pt->mod;
	return proc_open_mod(real, msg, len);
}

/* SystemTap's message for a variable NAME not in scope at the probe. */
static int not_found(struct proc_point *pt, const char *name, char *msg, size_t len)
{
	struct dwv_var v;

	if (dwv_find_var(pt->mod, pt->pc, name, &v, msg, len) == 0) {
		dwv_var_free(&v);
		snprintf(msg, len, "unable to find local '%s'", name);
	}
	return -1;
}

/* Find the base of E (variable, @var or @cast type) and its steps. */
static int ref_resolve(struct lower *L, struct expr *e, struct target_ref *r, char *msg, size_t len)
{
	struct proc_point *pt = L->pt;
	int rc;
	memset(r, 0, sizeof *r);
	r->err_tok = e->tok;
	r->mod = pt->mod;
	clear_extra(L);
	if (!pt->func_die && e->kind == E_TARGET) {
		snprintf(msg, len,
			 "debuginfo scope not found for module '%s', cannot resolve context "
			 "variable [man error::dwarf]",
			 pt->mod ? dwq_path(pt->mod) : "");
		return -1;
	}
	if (e->kind == E_CAST) {
		struct expr *tn = e->args.n ? e->args.v[0] : NULL;
		if (!tn || tn->kind != E_STRING) {
			snprintf(msg, len, "@cast needs a type name");
			return -1;
		}
		if (e->args.n > 1) {
			const char *mod = ((struct expr *)e->args.v[1])->str;
			if (pt->mod && pt->func && !strcmp(mod, pt->func))
				mod = dwq_path(pt->mod);
			if (!cast_module_find(mod, tn->str, pt->mod, &r->cast_type, msg, len))
				return -1;
		} else if (!pt->mod) {
			snprintf(msg, len, "type definition '%s' not found in 'kernel'", tn->str);
			return -1;
		} else if (dwv_find_type(pt->mod, tn->str, &r->cast_type, msg, len) < 0) {
			return -1;
		}
		r->is_cast = 1;
	} else if (e->kind == E_ATVAR) {
		char *name = xstrdup(e->str), *at = strchr(name, '@');
		struct dwq_mod *m;
		if (at)
			*at++ = '\0';
		m = atvar_module(pt, e, name, msg, len);
		rc = m ? atvar_lookup(L, m, name, at, &r->var, msg, len) : -1;
		if (rc == 0 && !pt->mod) {
			/* no process to find its module in */
			dwv_var_free(&r->var);
			snprintf(msg, len,
				 "@var(\"%s\", \"%s\"): a variable of a process, read "
				 "only in a probe of that process",
				 e->str, dwq_path(m));
			rc = -1;
		}
		r->mod = m;
		free(name);
		if (rc < 0)
			return -1;
		r->have_var = 1;
	} else if (!strcmp(e->str, "$return")) {
		if (!pt->is_return) /* SystemTap looks for a local named "return" */
			return not_found(pt, "return", msg, len);
		if (dwv_return_var(pt->mod, pt->func_die, &r->var, msg, len) < 0)
			return -1;
		r->have_var = 1;
	} else {
		if (dwv_find_var(pt->mod, pt->pc, e->str + 1, &r->var, msg, len) < 0)
			return -1;
		r->have_var = 1;
	}
	if (r->have_var && !r->var.has_type) {
		snprintf(msg, len, "variable '%s' has no type", r->var.name);
		return -1;
	}
	r->steps = xcalloc((size_t)e->comps.n + 1, sizeof *r->steps);
	r->idx = xcalloc((size_t)e->comps.n + 1, sizeof *r->idx);
	for (int i = 0; i < e->comps.n; i++) {
		struct tcomp *tc = e->comps.v[i];
		struct dwv_step *st = &r->steps[r->nsteps++];
		if (tc->kind == TC_MEMBER) {
			st->kind = DWV_STEP_MEMBER;
			st->member = tc->member;
		} else if (tc->kind == TC_INDEX_NUM) {
			st->kind = DWV_STEP_INDEX;
			st->index = tc->num;
		} else {
			st->kind = DWV_STEP_INDEX;
			st->index_dynamic = 1;
			walk_expr(tc->index, lower_expr, L);
			r->idx[r->nidx++] = tc->index;
		}
	}
	if (e->addressof)
		r->steps[r->nsteps++].kind = DWV_STEP_ADDROF;
	return 0;
}

/* The module an access's location is in, where the lowering needs it:
 * another module than the probe's (its load bias is looked up at run
 * time), and any module of a thread-local variable. */
static void set_module(struct dwv_access *a, struct lower *L, struct dwq_mod *m)
{
	if (a->loc.kind == DWV_LOC_TLS)
		a->module = dwq_path(m);
	else if (m != L->pt->mod)
		a->module = dwq_path(m);
}

static int ref_access(struct lower *L, struct expr *e, struct target_ref *r, int nsteps,
		      struct dwv_access *a, char *msg, size_t len)
{
	int rc;

	if (r->is_cast)
		return dwv_cast_access(L->pt->mod, &r->cast_type, r->steps, nsteps, a, msg, len);
	rc = dwv_access(r->mod, &r->var, r->steps, nsteps, a, msg, len);
	if (rc == 0)
		set_module(a, L, r->mod);
	return rc;
	(void)e;
}

/* The access of the whole chain; on failure, err_tok is the first
 * component that failed (SystemTap points at that '->' or '['), or the
 * variable where the access says so. */
static int ref_full_access(struct lower *L, struct expr *e, struct target_ref *r,
			   struct dwv_access *a, char *msg, size_t len)
{
	if (ref_access(L, e, r, r->nsteps, a, msg, len) == 0)
		return 0;
	for (int k = 1; k <= e->comps.n; k++) {
		struct dwv_access t;
		char m2[DWQ_ERRLEN];
		int rc = ref_access(L, e, r, k, &t, m2, sizeof m2);
		if (rc < 0) {
			if (rc == -1)
				r->err_tok = ((struct tcomp *)e->comps.v[k - 1])->tok;
			snprintf(msg, len, "%s", m2);
			return -1;
		}
		dwv_access_free(&t);
	}
	return -1;
}

/* @entry(EXPR) and $param in a .return probe: the saved value. */
struct entries {
	struct vec exprs; /* struct expr *: what the hidden probe evaluates */
	struct lower *L;
};

/* X evaluated at entry: a slot of the hidden probe, read back. */
static struct expr *entry_slot(struct entries *en, struct expr *x)
{
	int64_t slot = en->exprs.n;
	vec_push(&en->exprs, x);
	return lower_call(x->tok, "__tvar_entry_get", 1,
			  (struct expr *[]){lower_num(x->tok, slot)});
}

/* sprintf(fmt, values...) of a pretty-printing; takes PR. With EN, the
 * values are taken at the function's entry (.return probes). */
static struct expr *pretty_print_expr(const struct token *tok, struct dwv_pretty *pr,
				      struct entries *en, char *msg, size_t len)
{
	struct expr *out = expr_new(E_PRINT, tok);
	out->str = "sprintf";
	out->print_to_string = 1;
	out->print_has_fmt = 1;
	struct expr *fmt = expr_new(E_STRING, tok);
	fmt->str = xstrdup(pr->fmt);
	vec_push(&out->args, fmt);
	for (int i = 0; i < pr->nargs; i++) {
		struct dwv_parg *pa = &pr->args[i];
		struct expr *x;
		if (pa->kind == DWV_ARG_INT) {
			x = lower_access_expr(tok, &pa->acc, NULL, 0, NULL, 0, msg, len);
			if (x && en)
				x = entry_slot(en, x);
		} else if (pa->kind == DWV_ARG_STRING) {
			struct expr *p =
			    lower_access_expr(tok, &pa->acc, NULL, 0, NULL, 0, msg, len);
			if (p && en)
				p = entry_slot(en, p);
			x = p ? lower_call(tok, "__tvar_quoted", 2,
					   (struct expr *[]){p, lower_num(tok, -1)})
			      : NULL;
		} else {
			struct expr *p =
			    lower_access_expr(tok, &pa->acc, NULL, 0, NULL, 1, msg, len);
			int64_t n = pa->acc.type.count > 0 ? pa->acc.type.count : -1;
			if (p && en)
				p = entry_slot(en, p);
			x = p ? lower_call(tok, "__tvar_quoted", 2,
					   (struct expr *[]){p, lower_num(tok, n)})
			      : NULL;
		}
		if (!x) {
			dwv_pretty_free(pr);
			return NULL;
		}
		vec_push(&out->args, x);
	}
	dwv_pretty_free(pr);
	return out;
}

/* $x$, $x$$ (and @var with $): sprintf(fmt, values...). */
static struct expr *pretty_expr(struct lower *L, struct expr *e, struct target_ref *r, char *msg,
				size_t len)
{
	struct dwv_pretty pr;
	if (r->is_cast || r->nidx) {
		snprintf(msg, len, "this form of pretty-printing is not supported yet");
		return NULL;
	}
	if (dwv_pretty_var(r->mod, &r->var, r->steps, r->nsteps, e->pretty == 2, &pr, msg, len) < 0)
		return NULL;
	for (int i = 0; i < pr.nargs; i++)
		set_module(&pr.args[i].acc, L, r->mod);
	return pretty_print_expr(e->tok, &pr, L->en, msg, len);
}

static struct expr *lower_ref(struct lower *L, struct expr *e, struct expr *write_value,
			      const struct token **err_tok, char *msg, size_t len);

static struct expr *string_expr(const struct token *tok, const char *str)
{
	struct expr *x = expr_new(E_STRING, tok);
	x->str = str;
	return x;
}

/* $$return: "return=0x2a" ($$return$: "return=" and $return$); "" for a
 * function returning nothing. */
static int lower_scope_return(struct lower *L, struct expr *e, char *msg, size_t len)
{
	struct proc_point *pt = L->pt;
	const struct token *tok = e->tok, *et;
	Dwarf_Die fn;
	Dwarf_Attribute a;
	if (!pt->is_return) /* SystemTap looks for a local named "$return" */
		return not_found(pt, "$return", msg, len);
	if (!dwarf_offdie(dwq_dwarf(pt->mod), pt->func_die, &fn) ||
	    !dwarf_attr_integrate(&fn, DW_AT_type, &a)) {
		*e = *string_expr(tok, "");
		return 0;
	}
	struct expr *r = expr_new(E_TARGET, tok);
	r->str = "$return";
	r->pretty = e->pretty;
	struct expr *x = lower_ref(L, r, NULL, &et, msg, len);
	if (!x)
		return -1;
	struct expr *out = expr_new(E_PRINT, tok);
	out->str = "sprintf";
	out->print_to_string = 1;
	out->print_has_fmt = 1;
	vec_push(&out->args, string_expr(tok, e->pretty ? "return=%s" : "return=%#x"));
	vec_push(&out->args, x);
	*e = *out;
	return 0;
}

/* $$parms, $$locals, $$vars (and with $ / $$); with EN (.return probes)
 * the values are those at the function's entry. */
static int lower_scope(struct lower *L, struct expr *e, struct entries *en, char *msg, size_t len)
{
	struct proc_point *pt = L->pt;
	/* A function known only from the symbol table (crt code under a
	 * function("*") wildcard): SystemTap expands these to "". */
	if (!pt->func_die) {
		*e = *string_expr(e->tok, "");
		return 0;
	}
	if (!strcmp(e->str, "$$return"))
		return lower_scope_return(L, e, msg, len);
	if (strcmp(e->str, "$$parms") && strcmp(e->str, "$$locals") && strcmp(e->str, "$$vars")) {
		/* $$other is the local "$other", as SystemTap looks it up */
		struct dwv_var v;
		if (dwv_find_var(pt->mod, pt->pc, e->str + 1, &v, msg, len) == 0) {
			dwv_var_free(&v);
			snprintf(msg, len, "unable to find local '%s'", e->str + 1);
		}
		return -1;
	}
	enum dwv_which which = !strcmp(e->str, "$$parms") ? DWV_PARMS
	    : !strcmp(e->str, "$$locals")		  ? DWV_LOCALS
							  : DWV_ALL;
	struct dwv_pretty pr;
	if (pt->is_return && !en) {
		snprintf(msg, len, "%s in .return probes is not supported here", e->str);
		return -1;
	}
	if (dwv_pretty_scope(pt->mod, en ? pt->entry_pc : pt->pc, which, e->pretty, &pr, msg, len) <
	    0)
		return -1;
	for (int i = 0; i < pr.nargs; i++)
		set_module(&pr.args[i].acc, L, pt->mod);
	struct expr *x = pretty_print_expr(e->tok, &pr, en, msg, len);
	if (!x)
		return -1;
	*e = *x;
	return 0;
}

/* A target reference E (E_TARGET, E_ATVAR, E_CAST) as script code; with
 * WRITE_VALUE, an assignment of it. */
static struct expr *lower_ref(struct lower *L, struct expr *e, struct expr *write_value,
			      const struct token **err_tok, char *msg, size_t len)
{
	struct target_ref r;
	struct dwv_access a;
	struct expr *out = NULL;
	if (e->kind == E_CAST)
		walk_expr(e->left, lower_expr, L);
	int rc = ref_resolve(L, e, &r, msg, len);
	*err_tok = r.err_tok;
	if (rc < 0)
		goto done;
	if (e->pretty) {
		out = pretty_expr(L, e, &r, msg, len);
		goto done;
	}
	if (ref_full_access(L, e, &r, &a, msg, len) < 0) {
		*err_tok = r.err_tok;
		goto done;
	}
	if (!a.addr_of && !write_value &&
	    (a.type.kind == DWV_T_STRUCT || a.type.kind == DWV_T_UNION)) {
		whole_struct_msg(&a, msg, len);
		dwv_access_free(&a);
		goto done;
	}
	if (write_value && !a.nops && !a.addr_of && !a.bit_size && a.loc.kind == DWV_LOC_REG &&
	    lower_scalar_kind(a.type.kind)) {
		out = lower_call(e->tok, "__tvar_set_reg", 2,
				 (struct expr *[]){lower_num(e->tok, a.loc.reg), write_value});
		dwv_access_free(&a);
		goto done;
	}
	if (write_value && !a.nops &&
	    (a.loc.kind == DWV_LOC_VALUE || a.loc.kind == DWV_LOC_CONST ||
	     a.loc.kind == DWV_LOC_ENTRY)) {
		snprintf(msg, len, "cannot write to a target variable whose value is computed");
		dwv_access_free(&a);
		goto done;
	}
	out = lower_access_expr(e->tok, &a, r.idx, r.nidx, e->kind == E_CAST ? e->left : NULL,
				write_value != NULL, msg, len);
	if (out && write_value) {
		if (!lower_scalar_kind(a.type.kind) || a.bit_size) {
			snprintf(msg, len, "cannot write to a target variable of this type");
			out = NULL;
		} else {
			int64_t size = a.type.size > 0 && a.type.size <= 8 ? a.type.size : 8;
			out = lower_call(
			    e->tok, "__tvar_write", 3,
			    (struct expr *[]){out, lower_num(e->tok, size), write_value});
		}
	}
	dwv_access_free(&a);
done:
	ref_free(&r);
	return out;
}

static int is_ref(const struct expr *e)
{
	return e &&
	    ((e->kind == E_TARGET && e->str && strncmp(e->str, "$$", 2)) || e->kind == E_ATVAR ||
	     e->kind == E_CAST);
}

/* Does E lower without error? (@defined) */
static int trial_lower(struct lower *L, struct expr *e)
{
	struct expr *copy = elab_copy_expr(e);
	char msg[DWQ_ERRLEN];
	const struct token *tok;
	if (copy->kind == E_TARGET && copy->str && !strncmp(copy->str, "$$", 2))
		return L->pt->func_die != 0;
	if (!is_ref(copy))
		return 0;
	if (copy->kind == E_TARGET && !strcmp(copy->str, "$return") && !L->pt->is_return)
		return 0;
	int saved = L->quiet;
	L->quiet = 1;
	struct expr *x = lower_ref(L, copy, NULL, &tok, msg, sizeof msg);
	L->quiet = saved;
	return x != NULL;
}

static void replace(struct expr *e, struct expr *with)
{
	*e = *with;
}

static void fail_at(struct lower *L, struct expr *e, const struct token *tok, const char *msg)
{
	if (L->quiet) {
		L->errors++;
		clear_extra(L);
		return;
	}
	if (L->c->s->skip_badvars) {
		const struct token *t = e->tok;
		memset(e, 0, sizeof *e);
		e->kind = E_NUMBER;
		e->tok = t;
		return;
	}
	elab_error(L->c, tok, "%s", msg);
	for (int i = 0; i < L->nextra; i++) {
		elab_error_text(L->c, tok, "%s", L->extra[i]);
		L->c->tvar_errors++;
	}
	clear_extra(L);
	if (L->is_mark && e->kind == E_TARGET) {
		elab_error(L->c, tok, "target-symbol requires debuginfo");
		L->c->tvar_errors++;
	}
	L->errors++;
	L->c->tvar_errors++;
	e->saved_error = xstrdup(msg);
	e->saved_tok = tok;
}

static int lower_expr(struct expr *e, void *arg)
{
	struct lower *L = arg;
	char msg[DWQ_ERRLEN];
	int rc;
	const struct token *tok = e->tok;
	msg[0] = '\0';
	if (e->kind == E_DEFINED) {
		if (is_ref(e->left) || (e->left && e->left->kind == E_TARGET)) {
			int ok = trial_lower(L, e->left);
			memset(e, 0, sizeof *e);
			e->kind = E_NUMBER;
			e->tok = tok;
			e->num = ok;
			vec_push(&L->defined, e);
			return 1;
		}
		return 0;
	}
	if (e->kind == E_ASSIGN && is_ref(e->left)) {
		if (!L->c->s->guru) {
			fail_at(L, e, e->left->tok,
				"write to target variable not permitted; need stap -g");
			return 1;
		}
		if (strcmp(e->op, "=")) {
			fail_at(L, e, e->tok,
				"only '=' assignments to target variables are supported");
			return 1;
		}
		walk_expr(e->right, lower_expr, L);
		const struct token *et;
		struct expr *x = lower_ref(L, e->left, e->right, &et, msg, sizeof msg);
		if (x)
			replace(e, x);
		else
			fail_at(L, e, et, msg);
		return 1;
	}
	if ((e->kind == E_PRE_INC || e->kind == E_POST_INC) && is_ref(e->left)) {
		fail_at(L, e, e->left->tok,
			L->c->s->guru ? "++/-- of target variables is not supported"
				      : "write to target variable not permitted; need stap -g");
		return 1;
	}
	if (e->kind != E_TARGET && e->kind != E_ATVAR && e->kind != E_CAST)
		return 0;
	if (e->kind == E_TARGET && !e->str)
		return 0; /* autocast of a typed value: reported by type checking */
	if (e->kind == E_TARGET && !strncmp(e->str, "$$", 2)) {
		rc = lower_scope(L, e, NULL, msg, sizeof msg);
		if (rc < 0)
			fail_at(L, e, tok, msg);
		return 1;
	}
	const struct token *et;
	struct expr *x = lower_ref(L, e, NULL, &et, msg, sizeof msg);
	if (x)
		replace(e, x);
	else
		fail_at(L, e, et, msg);
	return 1;
}

/* SystemTap's hint that $x in a .return probe is the value at entry;
 * a repeat of the same text is suppressed (elab_warning). */
static void warn_entry(struct lower *L, const struct expr *e)
{
	struct strbuf b = {0};
	print_expr(&b, e);
	char *t = sb_take(&b);
	elab_warning(L->c, e->tok,
		     "confusing usage, value is captured as @entry(%s) in .return probe "
		     "[man stapprobes] RETURN PROBES",
		     t);
	free(t);
}

/* $x$ in a .return probe: formatted from values saved at entry (where
 * the variables are found), as SystemTap's @entry($x->$). */
static int pretty_at_entry(struct entries *en, struct expr *e)
{
	struct lower *L = en->L;
	struct proc_point *pt = L->pt;
	uint64_t pc = pt->pc;
	int is_return = pt->is_return;
	const struct token *et;
	char msg[DWQ_ERRLEN];

	pt->pc = pt->entry_pc;
	pt->is_return = 0;
	L->en = en;
	struct expr *x = lower_ref(L, e, NULL, &et, msg, sizeof msg);
	L->en = NULL;
	pt->pc = pc;
	pt->is_return = is_return;
	if (x)
		replace(e, x);
	else
		fail_at(L, e, et, msg);
	return 1;
}

static int collect_entry(struct expr *e, void *arg)
{
	struct entries *en = arg;
	struct expr *saved;
	if (e->kind == E_TARGET && e->str &&
	    (!strcmp(e->str, "$$parms") || !strcmp(e->str, "$$locals") ||
	     !strcmp(e->str, "$$vars"))) {
		char msg[DWQ_ERRLEN];
		const struct token *tok = e->tok;
		warn_entry(en->L, e);
		if (lower_scope(en->L, e, en, msg, sizeof msg) < 0)
			fail_at(en->L, e, tok, msg);
		return 1;
	}
	if (e->kind == E_ENTRY && e->left)
		saved = elab_copy_expr(e->left);
	else if (e->kind == E_TARGET && e->str && strcmp(e->str, "$return") &&
		 strncmp(e->str, "$$", 2)) {
		warn_entry(en->L, e);
		if (e->pretty)
			return pretty_at_entry(en, e);
		saved = elab_copy_expr(e);
	} else
		return 0;
	*e = *entry_slot(en, saved);
	return 1;
}

/* A hidden probe at pt running p for `of` (@entry saves of a .return,
 * entry values of a statement), added to the session's probes. */
static struct derived_probe *push_hidden_probe(struct elab *c, struct derived_probe *of,
					       struct probe *p, struct proc_point *pt)
{
	struct derived_probe *dp = xcalloc(1, sizeof *dp);

	*dp = *of;
	dp->kind = PK_PROCESS_FUNCTION;
	dp->probe = p;
	dp->addr = pt->pc;
	dp->proc = pt;
	dp->more = NULL;
	dp->entry_of = of;
	dp->id = c->s->probes.n;
	vec_push(&c->s->probes, dp);
	return dp;
}
/* The hidden probe saving the values of a .return probe's @entry. */
static void add_entry_probe(struct elab *c, struct derived_probe *ret, struct entries *en)
{
	if (en->exprs.n > 16) { /* ENTRY_SLOTS in runtime/target/context_target.c */
		struct expr *x = en->exprs.v[16];
		elab_error(c, x->tok, "too many @entry values in one probe (at most 16)");
		return;
	}
	struct proc_point *rp = ret->proc, *pt = xcalloc(1, sizeof *pt);
	*pt = *rp;
	pt->pc = rp->entry_pc;
	pt->is_return = 0;
	struct probe *p = elab_copy_probe(ret->probe, stmt_new(S_BLOCK, ret->probe->tok));
	for (int i = 0; i < en->exprs.n; i++) {
		struct expr *x = en->exprs.v[i];
		struct stmt *st = stmt_new(S_EXPR, x->tok);
		struct expr *call = expr_new(E_CALL, x->tok);
		call->str = "__tvar_entry_save";
		vec_push(&call->args, lower_num(x->tok, i));
		vec_push(&call->args, x);
		st->value = call;
		vec_push(&p->body->stmts, st);
	}
	struct derived_probe *dp = push_hidden_probe(c, ret, p, pt);
	size_t n = strlen(ret->pp), r = strlen(".return");
	if (n > r && !strcmp(ret->pp + n - r, ".return"))
		dp->pp = xstrndup(ret->pp, n - r);
}

/* The registers (bits) a lowered body reads as they were at its
 * function's entry: its __tvar_entry_reg(REG, CFA) calls. */
static int collect_entry_regs(struct expr *e, void *arg)
{
	if (e->kind == E_CALL && e->str && !strcmp(e->str, "__tvar_entry_reg") && e->args.n == 2) {
		const struct expr *r = e->args.v[0];
		if (r->kind == E_NUMBER && r->num >= 0 && r->num < 16)
			*(unsigned *)arg |= 1u << r->num;
	}
	return 0;
}

/* The hidden probe at the entry of the function holding DP's address
 * that saves the registers REGS for DP's entry values (DW_OP_entry_value),
 * each in the slot of its number; slot 0 begins the call's frame. */
static void add_entry_value_probe(struct elab *c, struct derived_probe *dp, unsigned regs)
{
	struct proc_point *rp = dp->proc, *pt;
	Dwarf_Off off = dwv_func_at(rp->mod, rp->pc, NULL);
	Dwarf_Die fn;
	Dwarf_Addr entry;

	if (!off || !dwarf_offdie(dwq_dwarf(rp->mod), off, &fn) ||
	    dwarf_entrypc(&fn, &entry) != 0) {
		elab_error(c, dp->probe->tok,
			   "cannot find the entry of the function for its DW_OP_entry_value");
		return;
	}
	pt = xcalloc(1, sizeof *pt);
	*pt = *rp;
	pt->pc = pt->entry_pc = dwq_dwarf_to_vaddr(rp->mod, entry);
	pt->is_return = 0;
	struct probe *p = elab_copy_probe(dp->probe, stmt_new(S_BLOCK, dp->probe->tok));
	const struct token *tok = dp->probe->tok;
	regs |= 1;
	for (int r = 0; r < 16; r++) {
		if (!(regs & (1u << r)))
			continue;
		struct stmt *st = stmt_new(S_EXPR, tok);
		struct expr *val =
		    lower_call(tok, "__tvar_regval", 1, (struct expr *[]){lower_num(tok, r)});
		st->value = lower_call(tok, "__tvar_entry_save", 2,
				       (struct expr *[]){lower_num(tok, r), val});
		vec_push(&p->body->stmts, st);
	}
	push_hidden_probe(c, dp, p, pt);
}

static int defined_only(struct expr *e, void *arg)
{
	if (e->kind != E_DEFINED)
		return 0;
	return lower_expr(e, arg);
}

/* Fold the if/?: that test the @defined values just computed, before the
 * dead branches' target variables are lowered (and reported). */
static void fold_defined_in(struct elab *c, struct probe *p, struct vec *nodes)
{
	struct elab tmp = *c;
	memset(&tmp.bodies, 0, sizeof tmp.bodies);
	vec_push(&tmp.bodies, p);
	tmp.defined_nodes = *nodes;
	elab_fold_defined(&tmp);
	free(tmp.bodies.v);
}

static int has_target(struct expr *e, void *arg)
{
	if (e->kind == E_TARGET || e->kind == E_ENTRY || e->kind == E_ATVAR || e->kind == E_CAST ||
	    e->kind == E_DEFINED)
		*(int *)arg = 1;
	return 0;
}

void proc_lower_dwarf(struct elab *c, struct derived_probe *dp)
{
	/* Each function has its own locations: its own body. */
	struct probe *p = dp->proc ? lower_own_body(dp, has_target) : NULL;
	if (!p)
		return;
	struct proc_point *pt = dp->proc;
	struct lower L = {c, dp->proc, 0, 0, {0}, NULL, dp->kind == PK_PROCESS_MARK, NULL, 0};
	walk_stmt(p->body, NULL, defined_only, &L);
	if (L.defined.n)
		fold_defined_in(c, p, &L.defined);
	if (pt->is_return && pt->func_die) {
		struct entries en = {{0}, &L};
		walk_stmt(p->body, NULL, collect_entry, &en);
		if (en.exprs.n)
			add_entry_probe(c, dp, &en);
	}
	walk_stmt(p->body, NULL, lower_expr, &L);
	unsigned regs = 0;
	if (!pt->is_return && pt->func_die && !L.errors)
		walk_stmt(p->body, NULL, collect_entry_regs, &regs);
	if (regs)
		add_entry_value_probe(c, dp, regs);
	free(L.defined.v);
	clear_extra(&L);
}

/* @cast(ADDR, "TYPE", "MODULE") and @var("x", "MODULE") in a body that is
 * no process probe's (a function's, a begin or timer probe's): lowered
 * with MODULE alone (as SystemTap 4.8 resolves them there),
 * before the body is resolved. Other target expressions there are left
 * to type checking, which reports them as before. */
static int lower_cast_only(struct expr *e, void *arg)
{
	const struct expr *x = e->kind == E_ASSIGN ? e->left : e;
	if (x && (x->kind == E_CAST || x->kind == E_ATVAR) && x->args.n > 1)
		return lower_expr(e, arg);
	return 0;
}

void proc_lower_casts(struct elab *c, struct stmt *body)
{
	struct proc_point none = {0};
	struct lower L = {c, &none, 0, 0, {0}, NULL, 0, NULL, 0};
	if (body)
		walk_stmt(body, NULL, lower_cast_only, &L);
	free(L.defined.v);
	clear_extra(&L);
}
