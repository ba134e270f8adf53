/* .statement("FUNC@FILE:LINE"): line-table rows inside matching functions. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "dwarf_query.h"

#include <dwarf.h>
#include <fnmatch.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int file_matches(const char *pattern, const char *file)
{
	if (!pattern)
		return 1;
	if (!file)
		return 0;
	if (!fnmatch(pattern, file, 0))
		return 1;
	for (const char *p = strchr(file, '/'); p; p = strchr(p + 1, '/'))
		if (!fnmatch(pattern, p + 1, 0))
			return 1;
	return 0;
}

static int in_ranges(Dwarf_Die *die, Dwarf_Addr a)
{
	Dwarf_Addr base, lo, hi;
	ptrdiff_t off = 0;

	while ((off = dwarf_ranges(die, off, &base, &lo, &hi)) > 0)
		if (a >= lo && a < hi)
			return 1;
	return 0;
}

static void push(struct dwq_stmts *o, size_t *cap, uint64_t addr, const char *func,
		 const char *file, int line)
{
	for (size_t i = 0; i < o->n; i++)
		if (o->v[i].addr == addr && !strcmp(o->v[i].func, func))
			return;
	if (o->n == *cap) {
		*cap = *cap ? *cap * 2 : 8;
		o->v = realloc(o->v, *cap * sizeof *o->v);
		if (!o->v)
			abort();
	}
	o->v[o->n].addr = addr;
	o->v[o->n].func = strdup(func);
	o->v[o->n].file = strdup(file ? file : "");
	o->v[o->n].line = line;
	o->n++;
}

/* Rows of LINE that start a run of that line (the row before, in address
 * order, is another line or outside the function). */
static void lines_in_func(struct dwq_mod *m, Dwarf_Die *fn, const char *fname,
			  const struct dwq_spec *s, struct dwq_stmts *o, size_t *cap)
{
	Dwarf_Die cu;
	Dwarf_Lines *lines;
	size_t nlines;
	int prev_line = -1;
	Dwarf_Addr prev_addr = 0;

	if (!dwarf_diecu(fn, &cu, NULL, NULL) || dwarf_getsrclines(&cu, &lines, &nlines) != 0)
		return;
	for (size_t i = 0; i < nlines; i++) {
		Dwarf_Line *l = dwarf_onesrcline(lines, i);
		Dwarf_Addr a;
		int line = 0;
		bool stmt = false, end = false;
		const char *file;

		if (!l || dwarf_lineaddr(l, &a) || dwarf_lineno(l, &line))
			continue;
		dwarf_linebeginstatement(l, &stmt);
		dwarf_lineendsequence(l, &end);
		if (end || !in_ranges(fn, a)) {
			prev_line = -1;
			continue;
		}
		file = dwarf_linesrc(l, NULL, NULL);
		if (stmt && (s->line_any || (line >= s->line0 && line <= s->line1)) &&
		    line != prev_line && a != prev_addr && file_matches(s->file, file))
			push(o, cap, dwq_dwarf_to_vaddr(m, a), fname, file, line);
		prev_line = line;
		prev_addr = a;
	}
}

static int cmp_stmt(const void *a, const void *b)
{
	const struct dwq_stmt *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return strcmp(x->func, y->func);
}

int dwq_statements(struct dwq_mod *m, const char *spec, struct dwq_stmts *out, char *err,
		   size_t errlen)
{
	struct dwq_spec s;
	struct dwq_funcs fs;
	size_t cap = 0;

	memset(out, 0, sizeof *out);
	if (dwq_parse_spec(spec, &s, err, errlen) < 0)
		return -1;
	if (!s.file || (!s.line0 && !s.line_any)) {
		dwq_seterr(err, errlen, "statement probe needs FUNC@FILE:LINE, not '%s'", spec);
		dwq_spec_free(&s);
		return -1;
	}
	if (!dwq_has_dwarf(m)) {
		dwq_seterr(err, errlen, "no debuginfo for %s: cannot resolve '%s'", dwq_path(m),
			   spec);
		dwq_spec_free(&s);
		return -1;
	}
	if (dwq_functions(m, s.func, DWQ_FUNCTION, DWQ_PROLOGUE_NEVER, 0, &fs, err, errlen) < 0) {
		dwq_spec_free(&s);
		return -1;
	}
	for (size_t i = 0; i < fs.n; i++) {
		Dwarf_Die die;

		if (fs.v[i].has_dwarf && dwarf_offdie(dwq_dwarf(m), fs.v[i].die, &die))
			lines_in_func(m, &die, fs.v[i].name, &s, out, &cap);
	}
	dwq_funcs_free(&fs);
	dwq_spec_free(&s);
	if (out->n)
		qsort(out->v, out->n, sizeof *out->v, cmp_stmt);
	return 0;
}

void dwq_stmts_free(struct dwq_stmts *s)
{
	for (size_t i = 0; i < s->n; i++) {
		free(s->v[i].func);
		free(s->v[i].file);
	}
	free(s->v);
	s->v = NULL;
	s->n = 0;
}
