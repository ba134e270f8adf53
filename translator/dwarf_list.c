/* stap -l / -L lines for user-space probe points. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "dwarf_list.h"

#include "dwarf_vars.h"
#include "sdt.h"

#include <dwarf.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void add_line(struct dwl_lines *l, size_t *cap, char *s)
{
	if (l->n == *cap) {
		*cap = *cap ? *cap * 2 : 32;
		l->v = realloc(l->v, *cap * sizeof *l->v);
		if (!l->v)
			abort();
	}
	l->v[l->n++] = s;
}

static int cmp_line(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void sort_unique(struct dwl_lines *l)
{
	size_t w = 0;

	if (!l->n)
		return;
	qsort(l->v, l->n, sizeof *l->v, cmp_line);
	for (size_t r = 0; r < l->n; r++) {
		if (w && !strcmp(l->v[w - 1], l->v[r])) {
			free(l->v[r]);
			continue;
		}
		l->v[w++] = l->v[r];
	}
	l->n = w;
}

void dwl_lines_free(struct dwl_lines *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
	l->v = NULL;
	l->n = 0;
}

/* process("P")[.library("L")] */
static void put_prefix(FILE *f, const char *process, const char *library)
{
	fprintf(f, "process(\"%s\")", process);
	if (library)
		fprintf(f, ".library(\"%s\")", library);
}

static void put_vars(FILE *f, struct dwq_mod *m, uint64_t pc)
{
	struct dwv_vars vars;

	if (dwv_scope_vars(m, pc, DWV_ALL, &vars, NULL, 0) < 0)
		return;
	dwv_vars_drop_dups(&vars); /* as SystemTap's -L: a shadowed name is not listed */
	for (size_t i = 0; i < vars.n; i++)
		if (dwv_has_location(m, &vars.v[i].die, pc))
			fprintf(f, " $%s:%s", vars.v[i].name, vars.v[i].type_name);
	dwv_vars_free(&vars);
}

static void put_return_die(FILE *f, struct dwq_mod *m, Dwarf_Off off)
{
	Dwarf_Die die, type;
	Dwarf_Attribute a;

	if (!off || !dwarf_offdie(dwq_dwarf(m), off, &die))
		return;
	if (dwarf_formref_die(dwarf_attr_integrate(&die, DW_AT_type, &a), &type)) {
		char *tn = dwv_type_name(&type);

		fprintf(f, " $return:%s", tn);
		free(tn);
	}
}

static void put_return(FILE *f, struct dwq_mod *m, const struct dwq_func *fn)
{
	if (fn->has_dwarf)
		put_return_die(f, m, fn->die);
}

char *dwl_point_vars(struct dwq_mod *m, Dwarf_Off func_die, uint64_t pc, int is_return)
{
	char *s = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&s, &len);

	if (!f)
		abort();
	if (m && func_die) {
		if (is_return)
			put_return_die(f, m, func_die);
		put_vars(f, m, pc);
	}
	fclose(f);
	return s;
}

char *dwl_function_pp(const char *process, const char *library, const struct dwq_func *fn,
		      const char *suffix)
{
	char *s = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&s, &len);

	if (!f)
		abort();
	put_prefix(f, process, library);
	if (fn->decl_file)
		fprintf(f, ".function(\"%s@%s:%d\")%s", fn->name, fn->decl_file, fn->decl_line,
			suffix ? suffix : "");
	else
		fprintf(f, ".function(\"%s\")%s", fn->name, suffix ? suffix : "");
	fclose(f);
	return s;
}

int dwl_functions(struct dwq_mod *m, const char *process, const char *library, const char *spec,
		  enum dwq_kind kind, int exported_only, const char *suffix, int with_vars,
		  struct dwl_lines *out, char *err, size_t errlen)
{
	struct dwq_funcs fs;
	size_t cap = 0;

	memset(out, 0, sizeof *out);
	if (dwq_functions(m, spec, kind, dwq_prologue_default, exported_only, &fs, err, errlen) < 0)
		return -1;
	for (size_t i = 0; i < fs.n; i++) {
		const struct dwq_func *fn = &fs.v[i];
		char *pp = dwl_function_pp(process, library, fn, suffix);
		char *s = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&s, &len);

		if (!f)
			abort();
		fputs(pp, f);
		free(pp);
		if (with_vars && fn->has_dwarf) {
			int is_return = suffix && !strcmp(suffix, ".return");

			if (is_return)
				put_return(f, m, fn);
			put_vars(f, m, fn->probe);
		}
		fclose(f);
		add_line(out, &cap, s);
	}
	dwq_funcs_free(&fs);
	sort_unique(out);
	return 0;
}

int dwl_statements(struct dwq_mod *m, const char *process, const char *library, const char *spec,
		   int with_vars, struct dwl_lines *out, char *err, size_t errlen)
{
	struct dwq_stmts st;
	size_t cap = 0;

	memset(out, 0, sizeof *out);
	if (dwq_statements(m, spec, &st, err, errlen) < 0)
		return -1;
	for (size_t i = 0; i < st.n; i++) {
		char *s = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&s, &len);

		if (!f)
			abort();
		put_prefix(f, process, library);
		fprintf(f, ".statement(\"%s@%s:%d\")", st.v[i].func, st.v[i].file, st.v[i].line);
		if (with_vars)
			put_vars(f, m, st.v[i].addr);
		fclose(f);
		add_line(out, &cap, s);
	}
	dwq_stmts_free(&st);
	sort_unique(out);
	return 0;
}

int dwl_marks(const char *path, const char *process, const char *library, const char *provider,
	      const char *name, int with_vars, struct dwl_lines *out, char *err, size_t errlen)
{
	struct sdt_probes ps;
	size_t cap = 0;

	memset(out, 0, sizeof *out);
	if (sdt_read(path, &ps, err, errlen) < 0)
		return -1;
	for (size_t i = 0; i < ps.n; i++) {
		const struct sdt_probe *p = &ps.v[i];
		char *s = NULL;
		size_t len = 0;
		FILE *f;

		if ((provider && !sdt_name_matches(provider, p->provider)) ||
		    !sdt_name_matches(name, p->name))
			continue;
		f = open_memstream(&s, &len);
		if (!f)
			abort();
		put_prefix(f, process, library);
		if (provider)
			fprintf(f, ".provider(\"%s\")", p->provider);
		fprintf(f, ".mark(\"%s\")", p->name);
		for (int k = 0; with_vars && k < p->nargs; k++)
			fprintf(f, " $arg%d:long", k + 1);
		fclose(f);
		add_line(out, &cap, s);
	}
	sdt_free(&ps);
	sort_unique(out);
	return 0;
}

int dwl_plts(struct dwq_mod *m, const char *process, const char *library, const char *pattern,
	     struct dwl_lines *out, char *err, size_t errlen)
{
	struct dwq_plts ps;
	size_t cap = 0;

	memset(out, 0, sizeof *out);
	if (dwq_plt_entries(m, pattern, &ps, err, errlen) < 0)
		return -1;
	for (size_t i = 0; i < ps.n; i++) {
		char *s = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&s, &len);

		if (!f)
			abort();
		put_prefix(f, process, library);
		fprintf(f, ".plt(\"%s\")", ps.v[i].name);
		fclose(f);
		add_line(out, &cap, s);
	}
	dwq_plts_free(&ps);
	sort_unique(out);
	return 0;
}
