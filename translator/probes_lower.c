/* Script code the lowerings of probe variables build (probes_mark.c,
 * probes_plt.c, probes_syscall.c, probes_process_vars.c): numbers, calls
 * of the tapset's __tvar_* functions (tapset/tvar_access.stp), and the
 * read of a DWARF access (a location, then member and index steps). */
#include <stdio.h>
#include <string.h>

#include "dwarf_vars.h"
#include "probes_process.h"

struct expr *lower_num(const struct token *tok, int64_t n)
{
	struct expr *e = expr_new(E_NUMBER, tok);
	e->num = n;
	return e;
}

int lower_scalar_kind(enum dwv_tkind k)
{
	return k == DWV_T_INT || k == DWV_T_CHAR || k == DWV_T_BOOL || k == DWV_T_ENUM ||
	    k == DWV_T_POINTER;
}

struct expr *lower_call(const struct token *tok, const char *name, int n, struct expr **args)
{
	struct expr *e = expr_new(E_CALL, tok);
	e->str = name;
	for (int i = 0; i < n; i++)
		vec_push(&e->args, args[i]);
	return e;
}

struct expr *lower_binary(const struct token *tok, const char *op, struct expr *l, struct expr *r)
{
	struct expr *e = expr_new(E_BINARY, tok);
	e->op = op;
	e->left = l;
	e->right = r;
	return e;
}

static struct expr *plus(const struct token *tok, struct expr *l, int64_t n)
{
	return n ? lower_binary(tok, "+", l, lower_num(tok, n)) : l;
}

/* The value (or, with addr_of, the address) an access gives, as script
 * code. IDX: the run-time indexes, in order; SCRIPT_ADDR: @cast's
 * address. WANT_ADDR: the address of the final location (for writes).
 * NULL with msg set when it cannot be expressed. */
struct expr *lower_access_expr(const struct token *tok, const struct dwv_access *a,
			       struct expr **idx, int nidx, struct expr *script_addr, int want_addr,
			       char *msg, size_t len)
{
	struct expr *x;
	int in_mem, k = 0;
	switch (a->loc.kind) {
	case DWV_LOC_REG:
		x = lower_call(tok, "__tvar_regval", 1,
			       (struct expr *[]){lower_num(tok, a->loc.reg)});
		in_mem = 0;
		break;
	case DWV_LOC_MEM:
		x = lower_call(tok, "__tvar_regval", 1,
			       (struct expr *[]){lower_num(tok, a->loc.reg)});
		x = plus(tok, x, a->loc.offset);
		in_mem = 1;
		break;
	case DWV_LOC_ADDR:
		if (a->module) {
			struct expr *path = expr_new(E_STRING, tok);
			path->str = a->module;
			x = lower_call(tok, "__tvar_mod_bias", 1, &path);
		} else {
			x = lower_call(tok, "__tvar_bias", 0, NULL);
		}
		x = plus(tok, x, a->loc.offset);
		in_mem = 1;
		break;
	case DWV_LOC_SCRIPT_ADDR:
		x = plus(tok, script_addr, a->loc.offset);
		in_mem = 1;
		break;
	case DWV_LOC_TLS: {
		struct expr *args[2] = {expr_new(E_STRING, tok), lower_num(tok, a->loc.offset)};
		if (!a->module) {
			snprintf(msg, len, "internal error: thread-local variable of no module");
			return NULL;
		}
		args[0]->str = a->module;
		x = lower_call(tok, "__tvar_tls", 2, args);
		in_mem = 1;
		break;
	}
	case DWV_LOC_VALUE:
		x = lower_call(tok, "__tvar_regval", 1,
			       (struct expr *[]){lower_num(tok, a->loc.reg)});
		x = plus(tok, x, a->loc.offset);
		in_mem = 0;
		break;
	case DWV_LOC_CONST:
		x = lower_num(tok, a->loc.offset);
		in_mem = 0;
		break;
	case DWV_LOC_ENTRY: {
		/* the frame by its CFA; probes_process_vars.c adds the probe at
		 * the function's entry that saves the register */
		struct expr *cfa = lower_call(tok, "__tvar_regval", 1,
					      (struct expr *[]){lower_num(tok, a->loc.cfa_reg)});
		x = lower_call(
		    tok, "__tvar_entry_reg", 2,
		    (struct expr *[]){lower_num(tok, a->loc.reg), plus(tok, cfa, a->loc.cfa_off)});
		in_mem = 0;
		break;
	}
	default:
		snprintf(msg, len, "target variable location not supported yet");
		return NULL;
	}
	for (int i = 0; i < a->nops; i++) {
		const struct dwv_op *op = &a->ops[i];
		if (op->kind == DWV_OP_LOAD_PTR) {
			if (in_mem)
				x = lower_call(
				    tok, "__tvar_read", 3,
				    (struct expr *[]){x, lower_num(tok, 8), lower_num(tok, 0)});
			in_mem = 1;
			continue;
		}
		if (!in_mem) {
			snprintf(msg, len, "cannot access a part of a value held in a register");
			return NULL;
		}
		if (op->kind == DWV_OP_ADD) {
			x = plus(tok, x, op->n);
		} else {
			if (k >= nidx) {
				snprintf(msg, len, "internal error: index missing");
				return NULL;
			}
			x = lower_binary(tok, "+", x,
					 lower_binary(tok, "*", lower_num(tok, op->n), idx[k++]));
		}
	}
	if (a->addr_of || want_addr) {
		if (!in_mem) {
			snprintf(msg, len, "cannot take address of register value");
			return NULL;
		}
		return x;
	}
	const struct dwv_type *ty = &a->type;
	if (ty->kind == DWV_T_ARRAY)
		return x; /* an array is its address, as in C */
	if (!lower_scalar_kind(ty->kind)) {
		snprintf(msg, len, "target variables of this type are not supported yet");
		return NULL;
	}
	int64_t size = ty->size > 0 && ty->size <= 8 ? ty->size : 8;
	int64_t sign = ty->kind == DWV_T_POINTER ? 0 : ty->is_signed;
	if (a->bit_size) {
		struct expr *raw = in_mem
		    ? lower_call(tok, "__tvar_read", 3,
				 (struct expr *[]){x, lower_num(tok, size), lower_num(tok, 0)})
		    : x;
		return lower_call(tok, "__tvar_bits", 4,
				  (struct expr *[]){raw, lower_num(tok, a->bit_offset),
						    lower_num(tok, a->bit_size),
						    lower_num(tok, sign)});
	}
	if (in_mem)
		return lower_call(tok, "__tvar_read", 3,
				  (struct expr *[]){x, lower_num(tok, size), lower_num(tok, sign)});
	return lower_call(tok, "__tvar_fit", 3,
			  (struct expr *[]){x, lower_num(tok, size), lower_num(tok, sign)});
}

void lower_to_call(struct expr *e, const char *name, int n, const int64_t *args)
{
	const struct token *tok = e->tok;
	memset(e, 0, sizeof *e);
	e->kind = E_CALL;
	e->tok = tok;
	e->str = name;
	for (int i = 0; i < n; i++)
		vec_push(&e->args, lower_num(tok, args[i]));
}

int lower_badvar_zero(struct elab *c, struct expr *e)
{
	const struct token *tok = e->tok;

	if (!c->s->skip_badvars)
		return 0;
	memset(e, 0, sizeof *e);
	e->kind = E_NUMBER;
	e->tok = tok;
	return 1;
}

static int has_target_expr(struct expr *e, void *arg)
{
	if (e->kind == E_TARGET)
		*(int *)arg = 1;
	return 0;
}

struct probe *lower_own_body(struct derived_probe *dp, expr_visit_fn has)
{
	int any = 0;
	if (!dp->probe || !dp->probe->body)
		return NULL;
	walk_stmt(dp->probe->body, NULL, has, &any);
	if (!any)
		return NULL;
	dp->probe = elab_copy_probe(dp->probe, elab_copy_stmt(dp->probe->body));
	return dp->probe;
}

void lower_point_vars(struct elab *c, struct derived_probe *dp, expr_visit_fn fn)
{
	struct probe *p = lower_own_body(dp, has_target_expr);
	struct point_lower L = {c, dp};
	if (p)
		walk_stmt(p->body, NULL, fn, &L);
}
