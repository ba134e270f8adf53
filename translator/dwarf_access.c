/* Target variables: member/index chains, $return, @var and @cast. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "dwarf_vars.h"
#include "dwarf_vars_int.h"

#include <dwarf.h>
#include <gelf.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void dwv__add_op(struct dwv_access *a, enum dwv_op_kind k, int64_t n)
{
	if (k == DWV_OP_ADD && a->nops && a->ops[a->nops - 1].kind == DWV_OP_ADD) {
		a->ops[a->nops - 1].n += n;
		return;
	}
	if (k == DWV_OP_ADD && n == 0)
		return;
	a->ops = realloc(a->ops, (size_t)(a->nops + 1) * sizeof *a->ops);
	if (!a->ops)
		abort();
	a->ops[a->nops].kind = k;
	a->ops[a->nops].n = n;
	a->nops++;
}

/* Is the current location in memory (so that offsets can be added)? */
int dwv__in_memory(const struct dwv_access *a)
{
	return a->nops > 0 || a->loc.kind == DWV_LOC_MEM || a->loc.kind == DWV_LOC_ADDR ||
	    a->loc.kind == DWV_LOC_SCRIPT_ADDR || a->loc.kind == DWV_LOC_TLS;
}

int dwv__member_offset(Dwarf_Die *member, int64_t *off, int *bit_size, int *bit_offset,
		       int type_size)
{
	Dwarf_Attribute a;
	Dwarf_Word w;

	*off = 0;
	*bit_size = *bit_offset = 0;
	if (dwarf_attr(member, DW_AT_data_member_location, &a)) {
		if (dwarf_formudata(&a, &w) == 0) {
			*off = (int64_t)w;
		} else {
			Dwarf_Op *e;
			size_t n;

			if (dwarf_getlocation(&a, &e, &n) != 0 || n != 1 ||
			    e[0].atom != DW_OP_plus_uconst)
				return -1;
			*off = (int64_t)e[0].number;
		}
	}
	if (dwarf_formudata(dwarf_attr(member, DW_AT_bit_size, &a), &w) == 0) {
		*bit_size = (int)w;
		if (dwarf_formudata(dwarf_attr(member, DW_AT_data_bit_offset, &a), &w) == 0) {
			*off = (int64_t)(w / 8);
			*bit_offset = (int)(w % 8);
		} else if (dwarf_formudata(dwarf_attr(member, DW_AT_bit_offset, &a), &w) == 0) {
			/* DWARF 2-3, big-endian numbering within the storage unit */
			*bit_offset = type_size * 8 - (int)w - *bit_size;
		}
	}
	return 0;
}

/* Find member NAME in a struct/union (looking into anonymous members). */
static int find_member(Dwarf_Die *agg, const char *name, Dwarf_Die *out, int64_t *off,
		       int *bit_size, int *bit_offset)
{
	Dwarf_Die c;

	if (dwarf_child(agg, &c) != 0)
		return 0;
	do {
		const char *nm;
		Dwarf_Die t;
		struct dwv_type rt;

		if (dwarf_tag(&c) != DW_TAG_member && dwarf_tag(&c) != DW_TAG_inheritance)
			continue;
		nm = dwv__die_name(&c);
		if (dwv__die_type(&c, &t) < 0 || dwv_resolve_type(&t, &rt) < 0)
			continue;
		if (nm && !strcmp(nm, name)) {
			*out = c;
			return dwv__member_offset(&c, off, bit_size, bit_offset, rt.size) == 0;
		}
		if ((!nm || dwarf_tag(&c) == DW_TAG_inheritance) &&
		    (rt.kind == DWV_T_STRUCT || rt.kind == DWV_T_UNION)) {
			int64_t base, inner;
			int bs, bo;

			if (dwv__member_offset(&c, &base, &bs, &bo, rt.size) == 0 &&
			    find_member(&rt.die, name, out, &inner, bit_size, bit_offset)) {
				*off = base + inner;
				return 1;
			}
		}
	} while (dwarf_siblingof(&c, &c) == 0);
	return 0;
}

static void member_names(Dwarf_Die *agg, char *buf, size_t len)
{
	Dwarf_Die c;
	size_t o = 0;

	buf[0] = '\0';
	if (dwarf_child(agg, &c) != 0)
		return;
	do {
		const char *nm = dwv__die_name(&c);

		if (dwarf_tag(&c) == DW_TAG_member && nm && o + 2 < len)
			o += (size_t)snprintf(buf + o, len - o, "%s%s", o ? ", " : "", nm);
	} while (dwarf_siblingof(&c, &c) == 0);
}

static int step_member(struct dwv_access *a, Dwarf_Die *cur_type, const char *member, char *err,
		       size_t errlen)
{
	struct dwv_type t;
	Dwarf_Die mdie;
	int64_t off;
	int bs, bo;

	dwv_resolve_type(cur_type, &t);
	if (t.kind == DWV_T_POINTER) {
		/* SystemTap's -> and . both look through one pointer. */
		Dwarf_Die target;

		if (dwv__die_type(&t.die, &target) < 0) {
			char *tn = dwv_type_name(&t.die);

			dwq_seterr(err, errlen, "invalid access '->%s' vs '%s'", member, tn);
			free(tn);
			return -1;
		}
		dwv__add_op(a, DWV_OP_LOAD_PTR, 0);
		*cur_type = target;
		dwv_resolve_type(cur_type, &t);
	}
	if (t.kind == DWV_T_ARRAY) {
		dwq_seterr(err, errlen, "invalid access '->%s' for array type", member);
		return -1;
	}
	if (t.kind != DWV_T_STRUCT && t.kind != DWV_T_UNION) {
		/* named as resolved: a typedef of int is "int" */
		char *tn = dwv_type_name(t.has_die ? &t.die : cur_type);

		dwq_seterr(err, errlen, "invalid access '->%s' vs. %s", member, tn);
		free(tn);
		return -1;
	}
	if (!find_member(&t.die, member, &mdie, &off, &bs, &bo)) {
		char alts[400];
		const char *sn = dwv__die_name(&t.die);

		member_names(&t.die, alts, sizeof alts);
		dwq_seterr(err, errlen, "unable to find member '%s' for %s %s (alternatives: %s)",
			   member, t.kind == DWV_T_UNION ? "union" : "struct", sn ? sn : "{...}",
			   alts);
		return -1;
	}
	if (!dwv__in_memory(a)) {
		dwq_seterr(err, errlen, "cannot access member '%s' of a value held in a register",
			   member);
		return -1;
	}
	dwv__add_op(a, DWV_OP_ADD, off);
	a->bit_size = bs;
	a->bit_offset = bo;
	if (dwv__die_type(&mdie, cur_type) < 0)
		return -1;
	return 0;
}

/* [N] (or [EXPR], the Ith step) on CUR_TYPE. SystemTap names the index
 * "[N]" or "[indexI]"; an aggregate or an element of unknown size is
 * reported at the variable (-2), anything else at the '[' (-1). */
static int step_index(struct dwv_access *a, Dwarf_Die *cur_type, const struct dwv_step *s, int i,
		      char *err, size_t errlen)
{
	struct dwv_type t, et;
	Dwarf_Die elem;
	char idx[32];

	if (s->index_dynamic)
		snprintf(idx, sizeof idx, "[index%d]", i);
	else
		snprintf(idx, sizeof idx, "[%lld]", (long long)s->index);
	dwv_resolve_type(cur_type, &t);
	if ((t.kind != DWV_T_ARRAY && t.kind != DWV_T_POINTER) ||
	    dwv__die_type(&t.die, &elem) < 0) {
		char *tn = dwv_type_name(t.has_die ? &t.die : cur_type);
		int agg = t.kind == DWV_T_STRUCT || t.kind == DWV_T_UNION;

		if (agg)
			dwq_seterr(err, errlen, "invalid access '%s' for %s", idx, tn);
		else if (t.kind == DWV_T_POINTER)
			dwq_seterr(err, errlen, "invalid access '%s' vs '%s'", idx, tn);
		else
			dwq_seterr(err, errlen, "invalid access '%s' vs. %s", idx, tn);
		free(tn);
		return agg ? -2 : -1;
	}
	dwv_resolve_type(&elem, &et);
	if (!et.size) {
		dwq_seterr(err, errlen, "confused about array element size");
		return -2;
	}
	if (t.kind == DWV_T_POINTER)
		dwv__add_op(a, DWV_OP_LOAD_PTR, 0);
	else if (!dwv__in_memory(a)) {
		dwq_seterr(err, errlen, "cannot index an array held in a register");
		return -1;
	}
	if (s->index_dynamic)
		dwv__add_op(a, DWV_OP_INDEX, et.size);
	else
		dwv__add_op(a, DWV_OP_ADD, s->index * et.size);
	a->bit_size = a->bit_offset = 0;
	*cur_type = elem;
	return 0;
}

/* The steps from a value at LOC of type TYPE. */
static int access_from(const struct dwv_loc *loc, Dwarf_Die *type, const struct dwv_step *steps,
		       int nsteps, struct dwv_access *out, char *err, size_t errlen)
{
	Dwarf_Die cur = *type;

	out->loc = *loc;
	for (int i = 0; i < nsteps; i++) {
		int rc = 0;

		switch (steps[i].kind) {
		case DWV_STEP_MEMBER:
			rc = step_member(out, &cur, steps[i].member, err, errlen);
			break;
		case DWV_STEP_INDEX:
			rc = step_index(out, &cur, &steps[i], i, err, errlen);
			break;
		case DWV_STEP_ADDROF:
			if (!dwv__in_memory(out)) {
				dwq_seterr(err, errlen, "cannot take address of register value");
				rc = -1;
			} else if (out->bit_size) {
				dwq_seterr(err, errlen, "cannot take address of a bit-field");
				rc = -1;
			}
			out->addr_of = 1;
			break;
		}
		if (rc < 0) {
			dwv_access_free(out);
			return rc;
		}
	}
	dwv_resolve_type(&cur, &out->type);
	out->type_name = dwv_type_name(&cur);
	if (out->addr_of) {
		char *p;

		if (asprintf(&p, "%s*", out->type_name) < 0)
			abort();
		free(out->type_name);
		out->type_name = p;
		memset(&out->type, 0, sizeof out->type);
		out->type.kind = DWV_T_POINTER;
		out->type.size = 8;
	}
	return 0;
}

int dwv_access(struct dwq_mod *m, const struct dwv_var *var, const struct dwv_step *steps,
	       int nsteps, struct dwv_access *out, char *err, size_t errlen)
{
	Dwarf_Die type;

	(void)m;
	memset(out, 0, sizeof *out);
	if (!var->located) {
		dwq_seterr(err, errlen, "not accessible at this address");
		return -1;
	}
	if (!var->has_type) {
		dwq_seterr(err, errlen, "variable '%s' has no type", var->name);
		return -1;
	}
	type = var->type_die;
	return access_from(&var->loc, &type, steps, nsteps, out, err, errlen);
}

int dwv_cast_access(struct dwq_mod *m, Dwarf_Die *type, const struct dwv_step *steps, int nsteps,
		    struct dwv_access *out, char *err, size_t errlen)
{
	struct dwv_loc loc = {DWV_LOC_SCRIPT_ADDR, -1, 0, 0, 0};

	(void)m;
	memset(out, 0, sizeof *out);
	/* ADDR points to a TYPE, as in SystemTap: a first [N] indexes it */
	if (nsteps > 0 && steps[0].kind == DWV_STEP_INDEX) {
		struct dwv_type t;
		dwv_resolve_type(type, &t);
		if (!t.size) {
			dwq_seterr(err, errlen, "confused about array element size");
			return -2;
		}
		out->loc = loc;
		if (steps[0].index_dynamic)
			dwv__add_op(out, DWV_OP_INDEX, t.size);
		else
			dwv__add_op(out, DWV_OP_ADD, steps[0].index * t.size);
		steps++;
		nsteps--;
	}
	return access_from(&loc, type, steps, nsteps, out, err, errlen);
}

/* ---- $return, @var, @cast types ---- */

int dwv_return_var(struct dwq_mod *m, Dwarf_Off func_die, struct dwv_var *out, char *err,
		   size_t errlen)
{
	Dwarf_Die fn;
	const Dwarf_Op *ops;
	int n;

	memset(out, 0, sizeof *out);
	if (!dwq_dwarf(m) || !dwarf_offdie(dwq_dwarf(m), func_die, &fn)) {
		dwq_seterr(err, errlen, "no debuginfo for $return in %s", dwq_path(m));
		return -1;
	}
	if (dwv__die_type(&fn, &out->type_die) < 0) {
		dwq_seterr(err, errlen, "function '%s' does not return a value",
			   dwv__die_name(&fn) ? dwv__die_name(&fn) : "?");
		return -1;
	}
	n = dwfl_module_return_value_location(dwq_dwfl_module(m), &fn, &ops);
	if (n == 1 && ops[0].atom >= DW_OP_reg0 && ops[0].atom <= DW_OP_reg31) {
		out->loc.kind = DWV_LOC_REG;
		out->loc.reg = (int)(ops[0].atom - DW_OP_reg0);
	} else if (n == 1 && ops[0].atom >= DW_OP_breg0 && ops[0].atom <= DW_OP_breg31) {
		out->loc.kind = DWV_LOC_MEM; /* returned in memory: the address is in a register */
		out->loc.reg = (int)(ops[0].atom - DW_OP_breg0);
		out->loc.offset = (int64_t)ops[0].number;
	} else {
		dwq_seterr(
		    err, errlen,
		    "cannot locate $return of this type (floating point or split into registers)");
		return -1;
	}
	out->name = strdup("return");
	out->has_type = 1;
	out->type_name = dwv_type_name(&out->type_die);
	out->located = 1;
	out->die = fn;
	return 0;
}

static int cu_file_matches(Dwarf_Die *cu, const char *pattern)
{
	Dwarf_Attribute a;
	const char *name = dwarf_formstring(dwarf_attr(cu, DW_AT_name, &a));
	size_t pl, nl;

	if (!pattern)
		return 1;
	if (!name)
		return 0;
	if (!strcmp(name, pattern))
		return 1;
	pl = strlen(pattern);
	nl = strlen(name);
	return nl > pl && name[nl - pl - 1] == '/' && !strcmp(name + nl - pl, pattern);
}

int dwv_global_var(struct dwq_mod *m, const char *name, const char *file, struct dwv_var *out,
		   char *err, size_t errlen)
{
	Dwarf *dw = dwq_dwarf(m);
	Dwarf_Off off = 0, next;
	size_t hsize;

	memset(out, 0, sizeof *out);
	while (dw && dwarf_nextcu(dw, off, &next, &hsize, NULL, NULL, NULL) == 0) {
		Dwarf_Die cu, c;

		if (dwarf_offdie(dw, off + hsize, &cu) && cu_file_matches(&cu, file) &&
		    dwarf_child(&cu, &c) == 0) {
			do {
				const char *nm;

				if (dwarf_tag(&c) != DW_TAG_variable ||
				    !dwarf_hasattr(&c, DW_AT_location))
					continue;
				nm = dwv__die_name(&c);
				if (!nm || strcmp(nm, name))
					continue;
				if (dwv__locate(m, &cu, 0, &c, &out->loc) < 0 ||
				    (out->loc.kind != DWV_LOC_ADDR &&
				     out->loc.kind != DWV_LOC_TLS &&
				     out->loc.kind != DWV_LOC_CONST))
					continue;
				out->name = strdup(nm);
				out->die = c;
				out->has_type = dwv__die_type(&c, &out->type_die) == 0;
				out->type_name =
				    out->has_type ? dwv_type_name(&out->type_die) : strdup("void");
				out->located = 1;
				return 0;
			} while (dwarf_siblingof(&c, &c) == 0);
		}
		off = next;
	}
	dwq_seterr(err, errlen, "unable to find global '%s' in %s%s%s", name, dwq_path(m),
		   file ? ", in " : "", file ? file : "");
	return -1;
}

char **dwv_global_misses(struct dwq_mod *m, const char *name, const char *file, int *n)
{
	Dwarf *dw = dwq_dwarf(m);
	Dwarf_Off off = 0, next;
	size_t hsize;
	char **v = NULL;

	*n = 0;
	while (dw && dwarf_nextcu(dw, off, &next, &hsize, NULL, NULL, NULL) == 0) {
		Dwarf_Die cu;
		char alts[400];

		if (dwarf_offdie(dw, off + hsize, &cu) && cu_file_matches(&cu, file)) {
			const char *cn = dwv__die_name(&cu);
			int k = dwv__alternatives(&cu, name, alts, sizeof alts);
			char *msg = NULL;

			if (asprintf(
				&msg,
				"unable to find global '%s', [man error::dwarf] dieoffset %#" PRIx64
				" in %s, in %s %s (%s%s%s",
				name, (uint64_t)dwarf_dieoffset(&cu), dwq_path(m), cn ? cn : "",
				cn ? cn : "", k ? "alternatives: " : "<no alternatives>", alts,
				k ? "))" : ")") < 0)
				abort();
			v = realloc(v, (size_t)(*n + 1) * sizeof *v);
			if (!v)
				abort();
			/* newest first, as SystemTap prints its chain of tries */
			memmove(v + 1, v, (size_t)*n * sizeof *v);
			v[0] = msg;
			(*n)++;
		}
		off = next;
	}
	return v;
}

/* "struct point" -> (DW_TAG_structure_type, "point"); "point_t" -> any
 * named type. */
static int type_matches(Dwarf_Die *d, const char *want_name, int want_tag)
{
	int tag = dwarf_tag(d);
	const char *nm;

	if (want_tag) {
		if (tag != want_tag &&
		    !(want_tag == DW_TAG_structure_type && tag == DW_TAG_class_type))
			return 0;
	} else if (tag != DW_TAG_typedef && tag != DW_TAG_base_type &&
		   tag != DW_TAG_structure_type && tag != DW_TAG_class_type &&
		   tag != DW_TAG_union_type && tag != DW_TAG_enumeration_type) {
		return 0;
	}
	if (dwarf_hasattr(d, DW_AT_declaration))
		return 0;
	nm = dwv__die_name(d);
	return nm && !strcmp(nm, want_name);
}

static int search_types(Dwarf_Die *parent, const char *name, int tag, Dwarf_Die *out, int depth)
{
	Dwarf_Die c;

	if (depth > 3 || dwarf_child(parent, &c) != 0)
		return 0;
	do {
		int t = dwarf_tag(&c);

		if (type_matches(&c, name, tag)) {
			*out = c;
			return 1;
		}
		if ((t == DW_TAG_namespace || t == DW_TAG_subprogram) &&
		    search_types(&c, name, tag, out, depth + 1))
			return 1;
	} while (dwarf_siblingof(&c, &c) == 0);
	return 0;
}

/* The first definition of NAME (TAG, or any type kind: 0) in DW's CUs. */
static int types_in_cus(Dwarf *dw, const char *name, int tag, Dwarf_Die *out)
{
	Dwarf_Off off = 0, next;
	size_t hsize;

	while (dwarf_nextcu(dw, off, &next, &hsize, NULL, NULL, NULL) == 0) {
		Dwarf_Die cu;

		if (dwarf_offdie(dw, off + hsize, &cu) && search_types(&cu, name, tag, out, 0))
			return 1;
		off = next;
	}
	return 0;
}

int dwv_find_type(struct dwq_mod *m, const char *type_name, Dwarf_Die *out, char *err,
		  size_t errlen)
{
	static const struct {
		const char *kw;
		int tag;
	} kws[] = {{"struct ", DW_TAG_structure_type},
		   {"class ", DW_TAG_structure_type},
		   {"union ", DW_TAG_union_type},
		   {"enum ", DW_TAG_enumeration_type}};
	Dwarf *dw = dwq_dwarf(m);
	const char *name = type_name;
	int tag = 0;

	for (size_t i = 0; i < sizeof kws / sizeof kws[0]; i++)
		if (!strncmp(type_name, kws[i].kw, strlen(kws[i].kw))) {
			tag = kws[i].tag;
			name = type_name + strlen(kws[i].kw);
		}
	if (dw && types_in_cus(dw, name, tag, out))
		return 0;
	dwq_seterr(err, errlen, "type definition '%s' not found in '%s'", type_name, dwq_path(m));
	return -1;
}

/* A struct, class or union only declared here (DW_AT_declaration, as
 * "struct opaque;" in a CU that never sees its body): its definition of
 * the same name in another CU of the module, as SystemTap resolves it.
 * The last answers are kept: one type is asked for at every access. */
int dwv__type_definition(Dwarf_Die *decl, Dwarf_Die *out)
{
	static struct {
		Dwarf *dw;
		int tag;
		char *name;
		Dwarf_Off off; /* 0: none found */
	} memo[32];
	static unsigned next_slot;
	Dwarf *dw = dwarf_cu_getdwarf(decl->cu);
	const char *name = dwv__die_name(decl);
	int tag = dwarf_tag(decl);
	unsigned i;

	if (tag == DW_TAG_class_type)
		tag = DW_TAG_structure_type;
	if (!dw || !name)
		return -1;
	for (i = 0; i < sizeof memo / sizeof memo[0]; i++)
		if (memo[i].dw == dw && memo[i].tag == tag && !strcmp(memo[i].name, name))
			return memo[i].off && dwarf_offdie(dw, memo[i].off, out) ? 0 : -1;
	i = next_slot++ % (sizeof memo / sizeof memo[0]);
	free(memo[i].name);
	memo[i].dw = dw;
	memo[i].tag = tag;
	memo[i].name = strdup(name);
	memo[i].off = 0;
	if (!memo[i].name)
		abort();
	if (!types_in_cus(dw, name, tag, out))
		return -1;
	memo[i].off = dwarf_dieoffset(out);
	return 0;
}

void dwv_access_free(struct dwv_access *a)
{
	free(a->ops);
	free(a->type_name);
	memset(a, 0, sizeof *a);
}
