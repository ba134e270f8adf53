/* Target variables: types, locations and the variables in scope. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "dwarf_vars.h"
#include "dwarf_vars_int.h"
#include "util.h"

#include <dwarf.h>
#include <gelf.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *dwv__die_name(Dwarf_Die *die)
{
	Dwarf_Attribute a;

	return dwarf_formstring(dwarf_attr_integrate(die, DW_AT_name, &a));
}

int dwv__die_type(Dwarf_Die *die, Dwarf_Die *type)
{
	Dwarf_Attribute a;

	return dwarf_formref_die(dwarf_attr_integrate(die, DW_AT_type, &a), type) ? 0 : -1;
}

/* ---- types ---- */

int dwv_resolve_type(Dwarf_Die *type, struct dwv_type *out)
{
	Dwarf_Die d = *type;
	Dwarf_Attribute a;
	Dwarf_Word w;

	memset(out, 0, sizeof *out);
	for (int guard = 0; guard < 64; guard++) {
		int tag = dwarf_tag(&d);

		if (tag == DW_TAG_typedef || tag == DW_TAG_const_type ||
		    tag == DW_TAG_volatile_type || tag == DW_TAG_restrict_type ||
		    tag == DW_TAG_atomic_type) {
			if (dwv__die_type(&d, &d) < 0) {
				out->kind = DWV_T_VOID;
				return 0;
			}
			continue;
		}
		out->die = d;
		out->has_die = 1;
		out->count = -1;
		if (dwarf_formudata(dwarf_attr_integrate(&d, DW_AT_byte_size, &a), &w) == 0)
			out->size = (int)w;
		switch (tag) {
		case DW_TAG_base_type: {
			Dwarf_Word enc = 0;

			dwarf_formudata(dwarf_attr(&d, DW_AT_encoding, &a), &enc);
			switch (enc) {
			case DW_ATE_signed:
				out->kind = DWV_T_INT;
				out->is_signed = 1;
				break;
			case DW_ATE_signed_char:
				out->kind = out->size == 1 ? DWV_T_CHAR : DWV_T_INT;
				out->is_signed = 1;
				break;
			case DW_ATE_unsigned_char:
				out->kind = out->size == 1 ? DWV_T_CHAR : DWV_T_INT;
				break;
			case DW_ATE_unsigned:
				out->kind = DWV_T_INT;
				break;
			case DW_ATE_boolean:
				out->kind = DWV_T_BOOL;
				break;
			case DW_ATE_float:
				out->kind = DWV_T_FLOAT;
				break;
			default:
				out->kind = DWV_T_OTHER;
			}
			return 0;
		}
		case DW_TAG_enumeration_type:
			out->kind = DWV_T_ENUM;
			out->is_signed = 1;
			if (!out->size)
				out->size = 4;
			return 0;
		case DW_TAG_pointer_type:
		case DW_TAG_reference_type:
		case DW_TAG_rvalue_reference_type:
			out->kind = DWV_T_POINTER;
			out->size = 8;
			return 0;
		case DW_TAG_array_type: {
			Dwarf_Die sub;

			out->kind = DWV_T_ARRAY;
			if (dwarf_child(&d, &sub) == 0 && dwarf_tag(&sub) == DW_TAG_subrange_type) {
				if (dwarf_formudata(dwarf_attr(&sub, DW_AT_count, &a), &w) == 0)
					out->count = (int64_t)w;
				else if (dwarf_formudata(dwarf_attr(&sub, DW_AT_upper_bound, &a),
							 &w) == 0)
					out->count = (int64_t)w + 1;
			}
			return 0;
		}
		case DW_TAG_structure_type:
		case DW_TAG_class_type:
		case DW_TAG_union_type:
			if (dwarf_hasattr(&d, DW_AT_declaration) &&
			    dwv__type_definition(&d, &d) == 0)
				continue; /* defined in another CU */
			out->kind = tag == DW_TAG_union_type ? DWV_T_UNION : DWV_T_STRUCT;
			return 0;
		case DW_TAG_subroutine_type:
			out->kind = DWV_T_FUNC;
			return 0;
		default:
			out->kind = DWV_T_OTHER;
			return 0;
		}
	}
	return -1;
}

static void type_name_rec(Dwarf_Die *t, char *buf, size_t len, int depth)
{
	Dwarf_Die inner;
	const char *nm = dwv__die_name(t);
	int has_inner = dwv__die_type(t, &inner) == 0;
	char sub[2048];

	if (depth > 16) {
		snprintf(buf, len, "?");
		return;
	}
	switch (dwarf_tag(t)) {
	case DW_TAG_pointer_type:
	case DW_TAG_reference_type:
	case DW_TAG_rvalue_reference_type:
		if (has_inner)
			type_name_rec(&inner, sub, sizeof sub, depth + 1);
		else
			snprintf(sub, sizeof sub, "void");
		snprintf(buf, len, "%s%s", sub, dwarf_tag(t) == DW_TAG_pointer_type ? "*" : "&");
		return;
	case DW_TAG_const_type:
	case DW_TAG_volatile_type:
		if (has_inner)
			type_name_rec(&inner, sub, sizeof sub, depth + 1);
		else
			snprintf(sub, sizeof sub, "void");
		snprintf(buf, len, "%s %s", sub,
			 dwarf_tag(t) == DW_TAG_const_type ? "const" : "volatile");
		return;
	case DW_TAG_restrict_type:
	case DW_TAG_atomic_type:
		if (has_inner)
			type_name_rec(&inner, buf, len, depth + 1);
		else
			snprintf(buf, len, "void");
		return;
	case DW_TAG_structure_type:
	case DW_TAG_class_type:
		snprintf(buf, len, "struct %s", nm ? nm : "{...}");
		return;
	case DW_TAG_union_type:
		snprintf(buf, len, "union %s", nm ? nm : "{...}");
		return;
	case DW_TAG_enumeration_type:
		snprintf(buf, len, "enum %s", nm ? nm : "{...}");
		return;
	case DW_TAG_array_type:
		/* as SystemTap names arrays: no bounds, one [] for all of them */
		if (has_inner)
			type_name_rec(&inner, sub, sizeof sub, depth + 1);
		else
			snprintf(sub, sizeof sub, "void");
		snprintf(buf, len, "%s[]", sub);
		return;
	case DW_TAG_subroutine_type:
		snprintf(buf, len, "void (*)()");
		return;
	default:
		snprintf(buf, len, "%s", nm ? nm : "?");
	}
}

char *dwv_type_name(Dwarf_Die *type)
{
	char buf[4096];

	type_name_rec(type, buf, sizeof buf, 0);
	return strdup(buf);
}

/* ---- locations ---- */

static Dwarf_Addr vaddr_to_dwfl(struct dwq_mod *m, uint64_t v)
{
	GElf_Addr bias = 0;

	dwfl_module_getelf(dwq_dwfl_module(m), &bias);
	return v + bias;
}

/* The CFA at PC as reg + offset, from the module's CFI. */
static int cfa_rule(struct dwq_mod *m, uint64_t pc, int *reg, int64_t *off)
{
	Dwfl_Module *mod = dwq_dwfl_module(m);
	Dwarf_Addr dwfl_pc = vaddr_to_dwfl(m, pc);
	Dwarf_CFI *cfis[2];
	Dwarf_Addr biases[2];
	int ok = -1;

	cfis[0] = dwfl_module_eh_cfi(mod, &biases[0]);
	cfis[1] = dwfl_module_dwarf_cfi(mod, &biases[1]);
	for (int i = 0; i < 2 && ok < 0; i++) {
		Dwarf_Frame *frame = NULL;
		Dwarf_Op *ops;
		size_t nops;

		if (!cfis[i] || dwarf_cfi_addrframe(cfis[i], dwfl_pc - biases[i], &frame) != 0)
			continue;
		if (dwarf_frame_cfa(frame, &ops, &nops) == 0 && nops == 1) {
			/* libdw gives the reg+offset rule as bregx */
			if (ops[0].atom == DW_OP_bregx) {
				*reg = (int)ops[0].number;
				*off = (int64_t)ops[0].number2;
				ok = 0;
			} else if (ops[0].atom >= DW_OP_breg0 && ops[0].atom <= DW_OP_breg31) {
				*reg = ops[0].atom - DW_OP_breg0;
				*off = (int64_t)ops[0].number;
				ok = 0;
			}
		}
		free(frame);
	}
	return ok;
}

/* The frame base of the function containing PC (DW_AT_frame_base of the
 * out-of-line subprogram), as reg + offset: the address fbreg is relative
 * to. */
static int frame_base(struct dwq_mod *m, Dwarf_Die *fn, uint64_t pc, int *reg, int64_t *off)
{
	Dwarf_Attribute a;
	Dwarf_Op *expr;
	size_t len;

	if (!dwarf_attr_integrate(fn, DW_AT_frame_base, &a))
		return -1;
	if (dwarf_getlocation_addr(&a, dwq_vaddr_to_dwarf(m, pc), &expr, &len, 1) != 1 || len != 1)
		return -1;
	if (expr[0].atom == DW_OP_call_frame_cfa)
		return cfa_rule(m, pc, reg, off);
	/* clang: the frame base is a register's value (rbp, or rsp) */
	if ((expr[0].atom >= DW_OP_reg0 && expr[0].atom <= DW_OP_reg31) ||
	    expr[0].atom == DW_OP_regx) {
		*reg = expr[0].atom == DW_OP_regx ? (int)expr[0].number
						  : (int)(expr[0].atom - DW_OP_reg0);
		*off = 0;
		return 0;
	}
	if (expr[0].atom >= DW_OP_breg0 && expr[0].atom <= DW_OP_breg31) {
		*reg = expr[0].atom - DW_OP_breg0;
		*off = (int64_t)expr[0].number;
		return 0;
	}
	if (expr[0].atom == DW_OP_bregx) {
		*reg = (int)expr[0].number;
		*off = (int64_t)expr[0].number2;
		return 0;
	}
	return -1;
}

/* Translate a location expression. -1: not something we describe (pieces,
 * entry values, arithmetic); the caller reports it as inaccessible. */
static int translate_expr(struct dwq_mod *m, Dwarf_Die *fn, uint64_t pc, Dwarf_Op *e, size_t n,
			  struct dwv_loc *out)
{
	int stack_value = n >= 2 && e[n - 1].atom == DW_OP_stack_value;
	unsigned op;

	if (stack_value)
		n--;
	/* __thread: the offset in the module's TLS block, then the thread's
	 * block of that module */
	if (n == 2 && !stack_value &&
	    (e[1].atom == DW_OP_form_tls_address || e[1].atom == DW_OP_GNU_push_tls_address) &&
	    ((e[0].atom >= DW_OP_const1u && e[0].atom <= DW_OP_consts) ||
	     e[0].atom == DW_OP_constu)) {
		memset(out, 0, sizeof *out);
		out->kind = DWV_LOC_TLS;
		out->offset = (int64_t)e[0].number;
		return 0;
	}
	if (n != 1)
		return -1;
	op = e[0].atom;
	memset(out, 0, sizeof *out);
	if (op >= DW_OP_reg0 && op <= DW_OP_reg31 && !stack_value) {
		out->kind = DWV_LOC_REG;
		out->reg = (int)(op - DW_OP_reg0);
		return 0;
	}
	if (op == DW_OP_regx && !stack_value) {
		out->kind = DWV_LOC_REG;
		out->reg = (int)e[0].number;
		return 0;
	}
	if ((op >= DW_OP_breg0 && op <= DW_OP_breg31) || op == DW_OP_bregx) {
		out->kind = stack_value ? DWV_LOC_VALUE : DWV_LOC_MEM;
		out->reg = op == DW_OP_bregx ? (int)e[0].number : (int)(op - DW_OP_breg0);
		out->offset = (int64_t)(op == DW_OP_bregx ? e[0].number2 : e[0].number);
		return 0;
	}
	if (op == DW_OP_fbreg) {
		int reg;
		int64_t off;

		if (stack_value || frame_base(m, fn, pc, &reg, &off) < 0)
			return -1;
		out->kind = DWV_LOC_MEM;
		out->reg = reg;
		out->offset = off + (int64_t)e[0].number;
		return 0;
	}
	if (op == DW_OP_call_frame_cfa) {
		int reg;
		int64_t off;

		if (cfa_rule(m, pc, &reg, &off) < 0)
			return -1;
		out->kind = stack_value ? DWV_LOC_VALUE : DWV_LOC_MEM;
		out->reg = reg;
		out->offset = off;
		return 0;
	}
	if (op == DW_OP_addr) {
		out->kind = stack_value ? DWV_LOC_CONST : DWV_LOC_ADDR;
		out->offset = (int64_t)dwq_dwarf_to_vaddr(m, e[0].number);
		return 0;
	}
	if (stack_value &&
	    ((op >= DW_OP_lit0 && op <= DW_OP_lit31) ||
	     (op >= DW_OP_const1u && op <= DW_OP_consts) || op == DW_OP_constu)) {
		out->kind = DWV_LOC_CONST;
		out->offset = op >= DW_OP_lit0 && op <= DW_OP_lit31 ? (int64_t)(op - DW_OP_lit0)
								    : (int64_t)e[0].number;
		return 0;
	}
	return -1; /* pieces, entry values, implicit values, arithmetic */
}

/* DW_OP_entry_value(DW_OP_regN) DW_OP_stack_value: what the register held
 * when the function was entered; the call's frame is found by its CFA. */
static int entry_value_reg(struct dwq_mod *m, uint64_t pc, Dwarf_Attribute *loc, Dwarf_Op *op,
			   struct dwv_loc *out)
{
	Dwarf_Attribute block;
	Dwarf_Op *inner;
	size_t n;

	memset(out, 0, sizeof *out);
	if (dwarf_getlocation_attr(loc, op, &block) != 0 ||
	    dwarf_getlocation(&block, &inner, &n) != 0 || n != 1 || inner[0].atom < DW_OP_reg0 ||
	    inner[0].atom > DW_OP_reg15 || cfa_rule(m, pc, &out->cfa_reg, &out->cfa_off) < 0)
		return -1;
	out->kind = DWV_LOC_ENTRY;
	out->reg = (int)(inner[0].atom - DW_OP_reg0);
	return 0;
}

int dwv__locate(struct dwq_mod *m, Dwarf_Die *fn, uint64_t pc, Dwarf_Die *var, struct dwv_loc *out)
{
	Dwarf_Attribute a;
	Dwarf_Op *expr;
	size_t len;
	Dwarf_Sword sv;

	if (dwarf_attr_integrate(var, DW_AT_location, &a)) {
		if (dwarf_getlocation_addr(&a, dwq_vaddr_to_dwarf(m, pc), &expr, &len, 1) != 1 ||
		    len == 0)
			return -1;
		if (len == 2 && expr[1].atom == DW_OP_stack_value &&
		    (expr[0].atom == DW_OP_entry_value || expr[0].atom == DW_OP_GNU_entry_value))
			return entry_value_reg(m, pc, &a, &expr[0], out);
		return translate_expr(m, fn, pc, expr, len, out);
	}
	if (dwarf_attr_integrate(var, DW_AT_const_value, &a) && dwarf_formsdata(&a, &sv) == 0) {
		memset(out, 0, sizeof *out);
		out->kind = DWV_LOC_CONST;
		out->offset = sv;
		return 0;
	}
	return -1;
}

/* ---- scopes ---- */

struct scope_ctx {
	Dwarf_Die *scopes;
	int nscopes;
	int fn_index;	 /* innermost subprogram or inlined_subroutine */
	int frame_index; /* innermost out-of-line subprogram (frame base) */
	Dwarf_Die cu;
};

/* The CU whose ranges hold PC, for files without .debug_aranges (clang
 * emits none by default), where dwarf_addrdie finds nothing. */
static int cu_by_ranges(Dwarf *dw, Dwarf_Addr pc, Dwarf_Die *out)
{
	Dwarf_Off off = 0, next;
	size_t hsize;

	while (dwarf_nextcu(dw, off, &next, &hsize, NULL, NULL, NULL) == 0) {
		if (dwarf_offdie(dw, off + hsize, out) && dwarf_haspc(out, pc) > 0)
			return 0;
		off = next;
	}
	return -1;
}

/* The innermost DIE under PARENT whose code holds PC, following the
 * concrete tree (functions, inlined instances, blocks; namespaces). */
static int innermost_at(Dwarf_Die *parent, Dwarf_Addr pc, Dwarf_Die *out, int depth)
{
	Dwarf_Die c;

	if (depth > 64 || dwarf_child(parent, &c) != 0)
		return 0;
	do {
		int tag = dwarf_tag(&c);

		if (tag == DW_TAG_namespace && innermost_at(&c, pc, out, depth + 1))
			return 1;
		if ((tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine ||
		     tag == DW_TAG_lexical_block) &&
		    dwarf_haspc(&c, pc) > 0) {
			if (!innermost_at(&c, pc, out, depth + 1))
				*out = c;
			return 1;
		}
	} while (dwarf_siblingof(&c, &c) == 0);
	return 0;
}

/* The innermost function (inlined or not) and out-of-line function. */
static void index_scopes(struct scope_ctx *sc)
{
	sc->fn_index = sc->frame_index = -1;
	for (int i = 0; i < sc->nscopes; i++) {
		int tag = dwarf_tag(&sc->scopes[i]);

		if (sc->fn_index < 0 &&
		    (tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine))
			sc->fn_index = i;
		if (sc->frame_index < 0 && tag == DW_TAG_subprogram)
			sc->frame_index = i;
	}
}

/* dwarf_getscopes follows an inlined instance to its abstract origin's
 * scopes: at a pc where an inline starts (libc's _int_malloc at its first
 * byte), the caller is lost. Take the DIEs that physically hold the pc
 * instead; at the function's own entry its variables are the ones meant
 * (a function probe's, in SystemTap), so the inlines starting there are
 * dropped. */
static void physical_scopes(struct scope_ctx *sc, Dwarf_Addr dpc)
{
	Dwarf_Die in, *alt;
	Dwarf_Addr entry;
	int n;

	if (!innermost_at(&sc->cu, dpc, &in, 0) || (n = dwarf_getscopes_die(&in, &alt)) <= 0)
		return;
	free(sc->scopes);
	sc->scopes = alt;
	sc->nscopes = n;
	index_scopes(sc);
	if (sc->frame_index > 0 && dwarf_entrypc(&alt[sc->frame_index], &entry) == 0 &&
	    entry == dpc) {
		sc->nscopes = n - sc->frame_index;
		memmove(alt, alt + sc->frame_index, (size_t)sc->nscopes * sizeof *alt);
		index_scopes(sc);
	}
}

static int get_scopes(struct dwq_mod *m, uint64_t pc, struct scope_ctx *sc, char *err,
		      size_t errlen)
{
	Dwarf *dw = dwq_dwarf(m);
	Dwarf_Addr dpc = dwq_vaddr_to_dwarf(m, pc);

	memset(sc, 0, sizeof *sc);
	sc->fn_index = sc->frame_index = -1;
	if (!dw) {
		dwq_seterr(err, errlen, "no debuginfo for %s", dwq_path(m));
		return -1;
	}
	if (!dwarf_addrdie(dw, dpc, &sc->cu) && cu_by_ranges(dw, dpc, &sc->cu) < 0) {
		dwq_seterr(err, errlen, "no debuginfo at pc %#" PRIx64 " in %s", pc, dwq_path(m));
		return -1;
	}
	sc->nscopes = dwarf_getscopes(&sc->cu, dpc, &sc->scopes);
	if (sc->nscopes <= 0) {
		dwq_seterr(err, errlen, "no scope at pc %#" PRIx64 " in %s", pc, dwq_path(m));
		return -1;
	}
	index_scopes(sc);
	if (sc->frame_index < 0)
		physical_scopes(sc, dpc);
	if (sc->fn_index < 0 || sc->frame_index < 0) {
		free(sc->scopes);
		dwq_seterr(err, errlen, "pc %#" PRIx64 " is in no function of %s", pc, dwq_path(m));
		return -1;
	}
	return 0;
}

static void push_var(struct dwv_vars *o, size_t *cap, struct dwq_mod *m, struct scope_ctx *sc,
		     uint64_t pc, Dwarf_Die *die, int is_param)
{
	const char *nm = dwv__die_name(die);
	struct dwv_var *v;

	if (!nm)
		return;
	if (o->n == *cap) {
		*cap = *cap ? *cap * 2 : 8;
		o->v = realloc(o->v, *cap * sizeof *o->v);
		if (!o->v)
			abort();
	}
	v = &o->v[o->n++];
	memset(v, 0, sizeof *v);
	v->name = strdup(nm);
	v->is_param = is_param;
	v->die = *die;
	v->has_type = dwv__die_type(die, &v->type_die) == 0;
	v->type_name = v->has_type ? dwv_type_name(&v->type_die) : strdup("void");
	v->located = dwv__locate(m, &sc->scopes[sc->frame_index], pc, die, &v->loc) == 0;
}

/* The parameters and variables of SCOPE (as WHICH asks), in DIE order. */
static void scope_children(struct dwv_vars *o, size_t *cap, struct dwq_mod *m, struct scope_ctx *sc,
			   uint64_t pc, Dwarf_Die *scope, enum dwv_which which)
{
	Dwarf_Die c;

	if (dwarf_child(scope, &c) != 0)
		return;
	do {
		int tag = dwarf_tag(&c);

		if ((tag == DW_TAG_formal_parameter && (which & DWV_PARMS)) ||
		    (tag == DW_TAG_variable && (which & DWV_LOCALS)))
			push_var(o, cap, m, sc, pc, &c, tag == DW_TAG_formal_parameter);
	} while (dwarf_siblingof(&c, &c) == 0);
}

int dwv_scope_vars(struct dwq_mod *m, uint64_t pc, enum dwv_which which, struct dwv_vars *out,
		   char *err, size_t errlen)
{
	struct scope_ctx sc;
	size_t cap = 0;

	memset(out, 0, sizeof *out);
	if (get_scopes(m, pc, &sc, err, errlen) < 0)
		return -1;
	/* innermost scope first, as SystemTap 4.8 lists them */
	for (int i = 0; i <= sc.fn_index; i++)
		scope_children(out, &cap, m, &sc, pc, &sc.scopes[i], which);
	free(sc.scopes);
	return 0;
}

void dwv_vars_drop_dups(struct dwv_vars *vs)
{
	char *dup = xcalloc(vs->n + 1, 1);
	size_t n = 0;

	for (size_t i = 0; i < vs->n; i++)
		for (size_t j = i + 1; j < vs->n; j++)
			if (!strcmp(vs->v[i].name, vs->v[j].name))
				dup[i] = dup[j] = 1;
	for (size_t i = 0; i < vs->n; i++) {
		if (dup[i])
			dwv_var_free(&vs->v[i]);
		else
			vs->v[n++] = vs->v[i];
	}
	vs->n = n;
	free(dup);
}

Dwarf_Off dwv_func_at(struct dwq_mod *m, uint64_t pc, const char **name)
{
	struct scope_ctx sc;
	Dwarf_Off off;

	if (!m || !dwq_has_dwarf(m) || get_scopes(m, pc, &sc, NULL, 0) < 0)
		return 0;
	off = dwarf_dieoffset(&sc.scopes[sc.frame_index]);
	if (name)
		*name = dwv__die_name(&sc.scopes[sc.frame_index]);
	free(sc.scopes);
	return off;
}

void dwv_var_free(struct dwv_var *v)
{
	free(v->name);
	free(v->type_name);
	memset(v, 0, sizeof *v);
}

void dwv_vars_free(struct dwv_vars *v)
{
	for (size_t i = 0; i < v->n; i++)
		dwv_var_free(&v->v[i]);
	free(v->v);
	v->v = NULL;
	v->n = 0;
}

static int find_in(Dwarf_Die *scope, const char *name, int params_too, Dwarf_Die *out)
{
	Dwarf_Die c;

	if (dwarf_child(scope, &c) != 0)
		return 0;
	do {
		int tag = dwarf_tag(&c);
		const char *nm;

		if (tag != DW_TAG_variable && !(params_too && tag == DW_TAG_formal_parameter))
			continue;
		nm = dwv__die_name(&c);
		if (nm && !strcmp(nm, name)) {
			*out = c;
			return 1;
		}
	} while (dwarf_siblingof(&c, &c) == 0);
	return 0;
}

struct alt {
	const char *name;
	int score;
};

static int alt_cmp(const void *x, const void *y)
{
	const struct alt *a = x, *b = y;

	return a->score != b->score ? a->score - b->score : strcmp(a->name, b->name);
}

int dwv__alternatives(Dwarf_Die *scope, const char *name, char *out, size_t len)
{
	struct alt alts[64];
	int n = 0, shown = 0;
	size_t o = 0;
	Dwarf_Die c;

	out[0] = '\0';
	if (dwarf_child(scope, &c) == 0)
		do {
			int tag = dwarf_tag(&c);
			const char *nm = dwv__die_name(&c);
			int dup = 0;

			if ((tag != DW_TAG_variable && tag != DW_TAG_formal_parameter) || !nm)
				continue;
			for (int i = 0; i < n && !dup; i++)
				dup = !strcmp(alts[i].name, nm);
			if (!dup && n < (int)(sizeof alts / sizeof alts[0]))
				alts[n++] = (struct alt){nm, stap_edit_distance(name, nm)};
		} while (dwarf_siblingof(&c, &c) == 0);
	qsort(alts, (size_t)n, sizeof alts[0], alt_cmp);
	for (int i = 0; i < n && i < 5 && o + 2 < len; i++, shown++)
		o += (size_t)snprintf(out + o, len - o, "%s$%s", i ? ", " : "", alts[i].name);
	return shown;
}

int dwv_has_location(struct dwq_mod *m, Dwarf_Die *var, uint64_t pc)
{
	Dwarf_Attribute a;
	Dwarf_Op *expr;
	size_t len;

	if (dwarf_attr_integrate(var, DW_AT_const_value, &a))
		return 1;
	return dwarf_attr_integrate(var, DW_AT_location, &a) &&
	    dwarf_getlocation_addr(&a, dwq_vaddr_to_dwarf(m, pc), &expr, &len, 1) == 1;
}

/* Is VAR's location at PC an entry value (the register as it was when the
 * function was entered)? Optimised code has these once the register is
 * reused; SystemTap 4.8 fails on them ("unhandled DW_OP operation"). */
static int entry_value_at(struct dwq_mod *m, Dwarf_Die *var, uint64_t pc)
{
	Dwarf_Attribute a;
	Dwarf_Op *expr;
	size_t len;

	if (!dwarf_attr_integrate(var, DW_AT_location, &a) ||
	    dwarf_getlocation_addr(&a, dwq_vaddr_to_dwarf(m, pc), &expr, &len, 1) != 1)
		return 0;
	for (size_t i = 0; i < len; i++)
		if (expr[i].atom == DW_OP_entry_value || expr[i].atom == DW_OP_GNU_entry_value)
			return 1;
	return 0;
}

int dwv_find_var(struct dwq_mod *m, uint64_t pc, const char *name, struct dwv_var *out, char *err,
		 size_t errlen)
{
	struct scope_ctx sc;
	Dwarf_Die die;
	int found = 0;

	memset(out, 0, sizeof *out);
	if (get_scopes(m, pc, &sc, err, errlen) < 0)
		return -1;
	for (int i = 0; i <= sc.fn_index && !found; i++)
		found = find_in(&sc.scopes[i], name, 1, &die);
	if (!found)
		found = find_in(&sc.cu, name, 0, &die);
	if (!found) {
		const char *fname = dwv__die_name(&sc.scopes[0]);
		const char *file = dwv__die_name(&sc.cu);
		char alts[400];
		int o = dwv__alternatives(&sc.scopes[0], name, alts, sizeof alts);

		/* SystemTap's shape, including its doubled ')' after a list */
		dwq_seterr(err, errlen,
			   "unable to find local '%s', [man error::dwarf] dieoffset %#" PRIx64
			   " in %s, near pc %#" PRIx64 " in %s %s (%s%s%s",
			   name, (uint64_t)dwarf_dieoffset(&sc.scopes[0]), dwq_path(m), pc,
			   fname ? fname : "<unknown>", file ? file : "",
			   o ? "alternatives: " : "<no alternatives>", alts, o ? "))" : ")");
		free(sc.scopes);
		return -1;
	}
	{
		struct dwv_vars one = {0};
		size_t cap = 0;

		push_var(&one, &cap, m, &sc, pc, &die, dwarf_tag(&die) == DW_TAG_formal_parameter);
		free(sc.scopes);
		if (one.n != 1) {
			dwv_vars_free(&one);
			dwq_seterr(err, errlen, "unable to find local '%s'", name);
			return -1;
		}
		*out = one.v[0];
		free(one.v);
	}
	if (!out->located) {
		dwq_seterr(err, errlen,
			   "not accessible at this address (pc: %#" PRIx64 ")%s [man error::dwarf]",
			   pc,
			   entry_value_at(m, &out->die, pc)
			       ? ": only its value at the function's entry is known there "
				 "(DW_OP_entry_value), which is not read"
			       : "");
		dwv_var_free(out);
		return -1;
	}
	return 0;
}
