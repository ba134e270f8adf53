/* Target variables of process function probes, first subset: $param and
 * $local of integer, enum, bool and pointer types, $return in .return
 * probes, and $$parms / $$locals / $$vars. Each becomes a call of one of
 * the tapset's __tvar_* functions (tapset/context_user.stp), whose
 * embedded C reads registers and memory through the runtime's context
 * API; the locations come from dwarf_vars (dwv_*). In .return probes,
 * @entry(EXPR) (and $param, which means @entry($param) there, as in
 * SystemTap) is evaluated by a hidden function probe after the prologue
 * and read back with __tvar_entry_get. Anything beyond the subset
 * (members, indexes, $x$ pretty-printing, @cast, @var) stays a target
 * expression and is reported by type checking. */
#include <stdlib.h>
#include <string.h>

#include "dwarf_vars.h"
#include "probes_process.h"

struct lower {
	struct elab *c;
	struct proc_point *pt;
	int errors;
};

static struct expr *number(const struct token *tok, int64_t n)
{
	struct expr *e = expr_new(E_NUMBER, tok);
	e->num = n;
	return e;
}

/* Turn e into a call NAME(args...) in place. */
static void make_call(struct expr *e, const char *name, int n, const int64_t *args)
{
	const struct token *tok = e->tok;
	memset(e, 0, sizeof *e);
	e->kind = E_CALL;
	e->tok = tok;
	e->str = name;
	for (int i = 0; i < n; i++)
		vec_push(&e->args, number(tok, args[i]));
}

static int scalar_kind(enum dwv_tkind k)
{
	return k == DWV_T_INT || k == DWV_T_CHAR || k == DWV_T_BOOL || k == DWV_T_ENUM ||
	       k == DWV_T_POINTER;
}

/* A read of a located scalar as a call in place of e; -1 with msg set if
 * the location or type is outside the subset. */
static int lower_read(struct expr *e, const struct dwv_loc *loc, const struct dwv_type *ty,
		      char *msg, size_t len)
{
	int64_t size = ty->size > 0 && ty->size <= 8 ? ty->size : 8;
	int64_t sign = ty->kind == DWV_T_POINTER ? 0 : ty->is_signed;
	if (!scalar_kind(ty->kind)) {
		snprintf(msg, len, "target variables of this type are not supported yet");
		return -1;
	}
	switch (loc->kind) {
	case DWV_LOC_REG:
		make_call(e, "__tvar_reg", 3, (int64_t[]){loc->reg, size, sign});
		return 0;
	case DWV_LOC_MEM:
		make_call(e, "__tvar_mem", 4, (int64_t[]){loc->reg, loc->offset, size, sign});
		return 0;
	case DWV_LOC_ADDR:
		make_call(e, "__tvar_addr", 3, (int64_t[]){loc->offset, size, sign});
		return 0;
	case DWV_LOC_VALUE:
		make_call(e, "__tvar_value", 4, (int64_t[]){loc->reg, loc->offset, size, sign});
		return 0;
	case DWV_LOC_CONST: {
		const struct token *tok = e->tok;
		memset(e, 0, sizeof *e);
		e->kind = E_NUMBER;
		e->tok = tok;
		e->num = loc->offset;
		return 0;
	}
	default:
		snprintf(msg, len, "target variable location not supported yet");
		return -1;
	}
}

static int lower_var(struct lower *L, struct expr *e, char *msg, size_t len)
{
	struct proc_point *pt = L->pt;
	struct dwv_var v;
	struct dwv_type ty;
	int rc;
	if (!pt->func_die) {
		snprintf(msg, len, "no debug info for '%s'", pt->func);
		return -1;
	}
	if (!strcmp(e->str, "$return")) {
		if (!pt->is_return) {
			snprintf(msg, len, "not accessible at this address (pc: 0x%llx)",
				 (unsigned long long)pt->pc);
			return -1;
		}
		rc = dwv_return_var(pt->mod, pt->func_die, &v, msg, len);
	} else {
		rc = dwv_find_var(pt->mod, pt->pc, e->str + 1, &v, msg, len);
	}
	if (rc < 0)
		return -1;
	rc = -1;
	if (!v.has_type)
		snprintf(msg, len, "variable '%s' has no type", v.name);
	else if (dwv_resolve_type(&v.type_die, &ty) == 0)
		rc = lower_read(e, &v.loc, &ty, msg, len);
	else
		snprintf(msg, len, "cannot resolve the type of '%s'", v.name);
	dwv_var_free(&v);
	return rc;
}

/* $$parms, $$locals, $$vars: sprintf(fmt, reads...). */
static int lower_scope(struct lower *L, struct expr *e, char *msg, size_t len)
{
	struct proc_point *pt = L->pt;
	enum dwv_which which = !strcmp(e->str, "$$parms")	 ? DWV_PARMS
			       : !strcmp(e->str, "$$locals") ? DWV_LOCALS
							     : DWV_ALL;
	struct dwv_pretty pr;
	if (!pt->func_die) {
		snprintf(msg, len, "no debug info for '%s'", pt->func);
		return -1;
	}
	if (pt->is_return || e->pretty) {
		snprintf(msg, len, "this form of %s is not supported yet", e->str);
		return -1;
	}
	if (dwv_pretty_scope(pt->mod, pt->pc, which, 0, &pr, msg, len) < 0)
		return -1;
	const struct token *tok = e->tok;
	struct vec args = {0};
	struct expr *fmt = expr_new(E_STRING, tok);
	fmt->str = xstrdup(pr.fmt);
	vec_push(&args, fmt);
	int rc = 0;
	for (int i = 0; i < pr.nargs && rc == 0; i++) {
		struct dwv_parg *a = &pr.args[i];
		struct expr *x = expr_new(E_NUMBER, tok);
		if (a->kind != DWV_ARG_INT || a->acc.nops || a->acc.addr_of) {
			snprintf(msg, len, "this form of %s is not supported yet", e->str);
			rc = -1;
		} else {
			rc = lower_read(x, &a->acc.loc, &a->acc.type, msg, len);
		}
		vec_push(&args, x);
	}
	dwv_pretty_free(&pr);
	if (rc < 0)
		return -1;
	memset(e, 0, sizeof *e);
	e->kind = E_PRINT;
	e->tok = tok;
	e->str = "sprintf";
	e->print_to_string = 1;
	e->print_has_fmt = 1;
	e->args = args;
	return 0;
}

static int lower_expr(struct expr *e, void *arg)
{
	struct lower *L = arg;
	char msg[DWQ_ERRLEN];
	int rc;
	if (e->kind != E_TARGET || !e->str)
		return 0;
	if (e->comps.n || e->addressof || (e->pretty && strncmp(e->str, "$$", 2)))
		return 0; /* not in the subset: type checking reports it */
	const struct token *tok = e->tok;
	msg[0] = '\0';
	if (!strncmp(e->str, "$$", 2))
		rc = lower_scope(L, e, msg, sizeof msg);
	else
		rc = lower_var(L, e, msg, sizeof msg);
	if (rc == 0)
		return 1;
	if (L->c->s->skip_badvars) {
		memset(e, 0, sizeof *e);
		e->kind = E_NUMBER;
		e->tok = tok;
		return 1;
	}
	elab_error(L->c, tok, "%s", msg);
	L->errors++;
	return 1;
}

/* @entry(EXPR) and $param in a .return probe: the saved value. */
struct entries {
	struct vec exprs; /* struct expr *: what the hidden probe evaluates */
};

static int collect_entry(struct expr *e, void *arg)
{
	struct entries *en = arg;
	struct expr *saved;
	if (e->kind == E_ENTRY && e->left)
		saved = elab_copy_expr(e->left);
	else if (e->kind == E_TARGET && e->str && strcmp(e->str, "$return") &&
		 strncmp(e->str, "$$", 2) && !e->comps.n && !e->addressof && !e->pretty)
		saved = elab_copy_expr(e);
	else
		return 0;
	int64_t slot = en->exprs.n;
	vec_push(&en->exprs, saved);
	make_call(e, "__tvar_entry_get", 1, &slot);
	return 1;
}

/* The hidden probe saving the values of a .return probe's @entry. */
static void add_entry_probe(struct elab *c, struct derived_probe *ret, struct entries *en)
{
	if (en->exprs.n > 16) { /* ENTRY_SLOTS in runtime/context_target.c */
		struct expr *x = en->exprs.v[16];
		elab_error(c, x->tok, "too many @entry values in one probe (at most 16)");
		return;
	}
	struct proc_point *rp = ret->proc, *pt = xcalloc(1, sizeof *pt);
	*pt = *rp;
	pt->pc = rp->entry_pc;
	pt->is_return = 0;
	struct probe *p = xcalloc(1, sizeof *p);
	*p = *ret->probe;
	memset(&p->locals, 0, sizeof p->locals);
	p->body = stmt_new(S_BLOCK, ret->probe->tok);
	for (int i = 0; i < en->exprs.n; i++) {
		struct expr *x = en->exprs.v[i];
		struct stmt *st = stmt_new(S_EXPR, x->tok);
		struct expr *call = expr_new(E_CALL, x->tok);
		call->str = "__tvar_entry_save";
		vec_push(&call->args, number(x->tok, i));
		vec_push(&call->args, x);
		st->value = call;
		vec_push(&p->body->stmts, st);
	}
	struct derived_probe *dp = xcalloc(1, sizeof *dp);
	*dp = *ret;
	dp->kind = PK_PROCESS_FUNCTION;
	size_t n = strlen(ret->pp), r = strlen(".return");
	if (n > r && !strcmp(ret->pp + n - r, ".return"))
		dp->pp = xstrndup(ret->pp, n - r);
	dp->probe = p;
	dp->addr = pt->pc;
	dp->proc = pt;
	dp->more = NULL;
	dp->entry_of = ret;
	dp->id = c->s->probes.n;
	vec_push(&c->s->probes, dp);
}

static int has_target(struct expr *e, void *arg)
{
	if (e->kind == E_TARGET || e->kind == E_ENTRY)
		*(int *)arg = 1;
	return 0;
}

void proc_lower_targets(struct elab *c, int from)
{
	for (int i = from; i < c->s->probes.n; i++) {
		struct derived_probe *dp = c->s->probes.v[i];
		if (!dp->proc || !dp->probe || !dp->probe->body)
			continue;
		int any = 0;
		walk_stmt(dp->probe->body, NULL, has_target, &any);
		if (!any)
			continue;
		/* Each function has its own locations: its own body. */
		struct probe *p = xcalloc(1, sizeof *p);
		*p = *dp->probe;
		memset(&p->locals, 0, sizeof p->locals);
		p->body = elab_copy_stmt(dp->probe->body);
		dp->probe = p;
		struct proc_point *pt = dp->proc;
		if (pt->is_return && pt->func_die) {
			struct entries en = {{0}};
			walk_stmt(p->body, NULL, collect_entry, &en);
			if (en.exprs.n)
				add_entry_probe(c, dp, &en);
		}
		struct lower L = {c, dp->proc, 0};
		walk_stmt(p->body, NULL, lower_expr, &L);
	}
}
