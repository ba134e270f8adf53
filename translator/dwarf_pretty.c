/* Target variables: SystemTap's pretty-printing ($x$, $x$$, $$vars...). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "dwarf_vars.h"
#include "dwarf_vars_int.h"
#include "escape.h"

#include <dwarf.h>
#include <gelf.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct pp {
	struct dwq_mod *m;
	struct dwv_pretty *out;
	char *fmt;
	size_t fmtlen;
	FILE *f;
	int cap;
};

/* A variable or member name, literal text of the format. */
static void pp_name(struct pp *p, const char *before, const char *name)
{
	char *t = esc_format_text(name);
	fprintf(p->f, "%s%s=", before, t);
	free(t);
}

static void pp_arg(struct pp *p, enum dwv_arg_kind kind, const struct dwv_access *acc)
{
	struct dwv_parg *a;
	struct dwv_pretty *o = p->out;

	if (o->nargs == p->cap) {
		p->cap = p->cap ? p->cap * 2 : 8;
		o->args = realloc(o->args, (size_t)p->cap * sizeof *o->args);
		if (!o->args)
			abort();
	}
	a = &o->args[o->nargs++];
	a->kind = kind;
	a->acc = *acc;
	a->acc.ops = NULL;
	if (acc->nops) {
		a->acc.ops = malloc((size_t)acc->nops * sizeof *acc->ops);
		if (!a->acc.ops)
			abort();
		memcpy(a->acc.ops, acc->ops, (size_t)acc->nops * sizeof *acc->ops);
	}
	if (acc->type.has_die) {
		Dwarf_Die d = acc->type.die;

		a->acc.type_name = dwv_type_name(&d);
	} else {
		a->acc.type_name = strdup(acc->type_name ? acc->type_name : "?");
	}
}

static int is_char_type(Dwarf_Die *t)
{
	struct dwv_type rt;

	return dwv_resolve_type(t, &rt) == 0 && rt.kind == DWV_T_CHAR;
}

/* A copy of ACC with one more operation. */
static struct dwv_access sub_access(const struct dwv_access *acc, enum dwv_op_kind k, int64_t n)
{
	struct dwv_access sub = *acc;

	sub.ops = NULL;
	sub.nops = 0;
	for (int i = 0; i < acc->nops; i++)
		dwv__add_op(&sub, acc->ops[i].kind, acc->ops[i].n);
	dwv__add_op(&sub, k, n);
	sub.bit_size = sub.bit_offset = 0;
	return sub;
}

static void pp_value(struct pp *p, struct dwv_access *acc, Dwarf_Die *t, int deep, int depth);

/* The members of the struct at ACC, as SystemTap lists them: its own in
 * order (an anonymous struct or union member as "<class>=" / "<union>="),
 * then each base class's, flattened, in order. */
static void pp_members(struct pp *p, struct dwv_access *acc, struct dwv_type *rt, int deep,
		       int depth, int *first)
{
	Dwarf_Die c, bases[16];
	int nbases = 0;

	if (dwarf_child(&rt->die, &c) != 0)
		return;
	do {
		const char *nm = dwv__die_name(&c);
		int tag = dwarf_tag(&c);
		Dwarf_Die mt;
		struct dwv_type mrt;
		int64_t off;
		int bs, bo;
		struct dwv_access sub;

		if (tag == DW_TAG_inheritance) {
			if (nbases < (int)(sizeof bases / sizeof *bases))
				bases[nbases++] = c;
			continue;
		}
		if (tag != DW_TAG_member || dwv__die_type(&c, &mt) < 0 ||
		    dwv_resolve_type(&mt, &mrt) < 0 ||
		    dwv__member_offset(&c, &off, &bs, &bo, mrt.size) < 0)
			continue;
		if (!nm && mrt.kind != DWV_T_STRUCT && mrt.kind != DWV_T_UNION)
			continue;
		if (nm)
			pp_name(p, *first ? "." : ", .", nm);
		else
			fprintf(p->f, "%s%s=", *first ? "" : ", ",
				mrt.kind == DWV_T_UNION ? "<union>" : "<class>");
		*first = 0;
		sub = sub_access(acc, DWV_OP_ADD, off);
		sub.bit_size = bs;
		sub.bit_offset = bo;
		pp_value(p, &sub, &mt, deep, depth + 1);
		free(sub.ops);
	} while (dwarf_siblingof(&c, &c) == 0);
	for (int i = 0; i < nbases; i++) {
		Dwarf_Die bt;
		struct dwv_type brt;
		int64_t off;
		int bs, bo;
		struct dwv_access sub;

		/* a virtual base's offset is computed at run time: left out */
		if (dwv__die_type(&bases[i], &bt) < 0 || dwv_resolve_type(&bt, &brt) < 0 ||
		    brt.kind != DWV_T_STRUCT ||
		    dwv__member_offset(&bases[i], &off, &bs, &bo, brt.size) < 0)
			continue;
		sub = sub_access(acc, DWV_OP_ADD, off);
		pp_members(p, &sub, &brt, deep, depth, first);
		free(sub.ops);
	}
}

static void pp_struct(struct pp *p, struct dwv_access *acc, struct dwv_type *rt, int deep,
		      int depth)
{
	int first = 1;

	fputc('{', p->f);
	pp_members(p, acc, rt, deep, depth, &first);
	fputc('}', p->f);
}

/* Print one value of type T at ACC, as SystemTap's $x$ / $x$$ do: at the
 * top a pointer to a struct is followed and the struct shown; inside,
 * scalars are decimal, pointers hex (never followed), char pointers and
 * char arrays quoted strings, and nested structs, unions and arrays
 * "{...}" / "[...]" unless DEEP ($$) expands them. */
static void pp_value(struct pp *p, struct dwv_access *acc, Dwarf_Die *t, int deep, int depth)
{
	struct dwv_type rt;
	Dwarf_Die inner;
	int has_inner;

	dwv_resolve_type(t, &rt);
	acc->type = rt;
	has_inner = rt.has_die && dwv__die_type(&rt.die, &inner) == 0;
	switch (rt.kind) {
	case DWV_T_CHAR:
		fputs("'%#c'", p->f);
		pp_arg(p, DWV_ARG_INT, acc);
		return;
	case DWV_T_INT:
	case DWV_T_ENUM:
	case DWV_T_BOOL:
		fputs(rt.is_signed ? "%d" : "%u", p->f);
		pp_arg(p, DWV_ARG_INT, acc);
		return;
	case DWV_T_POINTER:
		if (has_inner && is_char_type(&inner)) {
			fputs("%s", p->f);
			pp_arg(p, DWV_ARG_STRING, acc);
			return;
		}
		if (depth == 0 && has_inner) {
			struct dwv_type it;

			dwv_resolve_type(&inner, &it);
			if (it.kind == DWV_T_STRUCT || it.kind == DWV_T_UNION) {
				struct dwv_access sub = sub_access(acc, DWV_OP_LOAD_PTR, 0);

				sub.type = it;
				pp_struct(p, &sub, &it, deep, depth);
				free(sub.ops);
				return;
			}
		}
		fputs("%p", p->f);
		pp_arg(p, DWV_ARG_INT, acc);
		return;
	case DWV_T_ARRAY:
		if (has_inner && is_char_type(&inner) && dwv__in_memory(acc)) {
			fputs("%s", p->f);
			pp_arg(p, DWV_ARG_CHARS, acc);
			return;
		}
		if (has_inner && rt.count > 0 && rt.count <= 64 && dwv__in_memory(acc) &&
		    (depth == 0 || (deep && depth < 8))) {
			struct dwv_type et;

			dwv_resolve_type(&inner, &et);
			fputc('[', p->f);
			for (int64_t i = 0; i < rt.count; i++) {
				struct dwv_access sub = sub_access(acc, DWV_OP_ADD, i * et.size);

				if (i)
					fputs(", ", p->f);
				pp_value(p, &sub, &inner, deep, depth + 1);
				free(sub.ops);
			}
			fputc(']', p->f);
			return;
		}
		fputs("[...]", p->f);
		return;
	case DWV_T_STRUCT:
	case DWV_T_UNION:
		if (!dwv__in_memory(acc) || !(depth == 0 || (deep && depth < 8))) {
			fputs("{...}", p->f);
			return;
		}
		pp_struct(p, acc, &rt, deep, depth);
		return;
	default:
		fputc('?', p->f);
		return;
	}
}

static void pp_begin(struct pp *p, struct dwq_mod *m, struct dwv_pretty *out)
{
	memset(p, 0, sizeof *p);
	memset(out, 0, sizeof *out);
	p->m = m;
	p->out = out;
	p->f = open_memstream(&p->fmt, &p->fmtlen);
	if (!p->f)
		abort();
}

static void pp_end(struct pp *p)
{
	fclose(p->f);
	p->out->fmt = p->fmt;
}

int dwv_pretty_var(struct dwq_mod *m, const struct dwv_var *var, const struct dwv_step *steps,
		   int nsteps, int deep, struct dwv_pretty *out, char *err, size_t errlen)
{
	struct dwv_access acc;
	struct pp p;
	Dwarf_Die t;

	if (dwv_access(m, var, steps, nsteps, &acc, err, errlen) < 0)
		return -1;
	pp_begin(&p, m, out);
	t = acc.type.die;
	if (acc.addr_of || !acc.type.has_die) {
		fputs("%p", p.f);
		pp_arg(&p, DWV_ARG_INT, &acc);
	} else {
		pp_value(&p, &acc, &t, deep, 0);
	}
	pp_end(&p);
	dwv_access_free(&acc);
	return 0;
}

int dwv_pretty_scope(struct dwq_mod *m, uint64_t pc, enum dwv_which which, int suffix,
		     struct dwv_pretty *out, char *err, size_t errlen)
{
	struct dwv_vars vars;
	struct pp p;

	if (dwv_scope_vars(m, pc, which, &vars, err, errlen) < 0)
		return -1;
	pp_begin(&p, m, out);
	for (size_t i = 0; i < vars.n; i++) {
		struct dwv_var *v = &vars.v[i];
		struct dwv_access acc;

		pp_name(&p, i ? " " : "", v->name);
		if (!v->located || dwv_access(m, v, NULL, 0, &acc, NULL, 0) < 0) {
			fputc('?', p.f);
			continue;
		}
		if (suffix == 0 || !acc.type.has_die) {
			if (acc.type.kind == DWV_T_STRUCT || acc.type.kind == DWV_T_UNION ||
			    acc.type.kind == DWV_T_ARRAY || acc.type.kind == DWV_T_FLOAT) {
				fputc('?',
				      p.f); /* not a scalar: SystemTap prints these only with $ */
			} else {
				fputs("%#x", p.f);
				pp_arg(&p, DWV_ARG_INT, &acc);
			}
		} else {
			Dwarf_Die t = acc.type.die;

			pp_value(&p, &acc, &t, suffix == 2, 0);
		}
		dwv_access_free(&acc);
	}
	pp_end(&p);
	dwv_vars_free(&vars);
	return 0;
}

void dwv_pretty_free(struct dwv_pretty *p)
{
	for (int i = 0; i < p->nargs; i++) {
		free(p->args[i].acc.ops);
		free(p->args[i].acc.type_name);
	}
	free(p->args);
	free(p->fmt);
	memset(p, 0, sizeof *p);
}
