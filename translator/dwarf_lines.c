/* .statement("FUNC@FILE:LINE"): line-table rows inside matching functions. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "dwarf_query.h"

#include <dwarf.h>
#include <fnmatch.h>
#include <limits.h>
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

static void push_any(struct dwq_stmts *o, size_t *cap, uint64_t addr, const char *func,
		     const char *file, int line)
{
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
	o->v[o->n].req_line = 0;
	o->n++;
}

static void push(struct dwq_stmts *o, size_t *cap, uint64_t addr, const char *func,
		 const char *file, int line)
{
	for (size_t i = 0; i < o->n; i++)
		if (o->v[i].addr == addr && !strcmp(o->v[i].func, func))
			return;
	push_any(o, cap, addr, func, file, line);
}

/* push, unless an entry from FIRST on has ADDR (SystemTap probes an
 * address once, for the first line that named it). */
static void push_new_addr(struct dwq_stmts *o, size_t *cap, size_t first, uint64_t addr,
			  const char *func, const char *file, int line)
{
	for (size_t i = first; i < o->n; i++)
		if (o->v[i].addr == addr)
			return;
	push(o, cap, addr, func, file, line);
}

/* What a single line that has no rows is near: the closest lines with rows
 * at most NEAR_LINES before and after it, in the first file matched. */
#define NEAR_LINES 5
struct near {
	char *file;
	int want;
	int below, above; /* 0: none */
};

static void note_near(struct near *nr, const char *file, int want, int line)
{
	if (!nr->file) {
		nr->file = strdup(file);
		nr->want = want;
	} else if (strcmp(nr->file, file) || nr->want != want) {
		return;
	}
	if (line < want && want - line <= NEAR_LINES && line > nr->below)
		nr->below = line;
	if (line > want && line - want <= NEAR_LINES && (!nr->above || line < nr->above))
		nr->above = line;
}

struct row {
	int line;
	uint64_t addr; /* module vaddr */
	int in_fn;     /* in fn's ranges */
	const char *file;
};

static int cmp_row(const void *a, const void *b)
{
	const struct row *x = a, *y = b;

	if (x->line != y->line)
		return x->line < y->line ? -1 : 1;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* The rows of fn's CU in the spec's file, sorted by line then address,
 * and the line of the last row at fn's entry (0: none there). */
static struct row *file_rows(struct dwq_mod *m, Dwarf_Die *fn, const struct dwq_spec *s, size_t *n,
			     int *entry_line)
{
	Dwarf_Die cu;
	Dwarf_Lines *lines;
	Dwarf_Addr entry = 0;
	size_t nlines;
	struct row *v;

	*n = 0;
	*entry_line = 0;
	if (!dwarf_diecu(fn, &cu, NULL, NULL) || dwarf_getsrclines(&cu, &lines, &nlines) != 0)
		return NULL;
	dwarf_entrypc(fn, &entry);
	v = calloc(nlines + 1, sizeof *v);
	if (!v)
		abort();
	for (size_t i = 0; i < nlines; i++) {
		Dwarf_Line *l = dwarf_onesrcline(lines, i);
		Dwarf_Addr a;
		int line = 0;
		bool end = false;
		const char *file;

		if (!l || dwarf_lineaddr(l, &a) || dwarf_lineno(l, &line))
			continue;
		dwarf_lineendsequence(l, &end);
		if (end)
			continue;
		file = dwarf_linesrc(l, NULL, NULL);
		if (!file_matches(s->file, file))
			continue;
		v[*n] = (struct row){line, dwq_dwarf_to_vaddr(m, a), in_ranges(fn, a), file};
		if (a == entry && v[*n].in_fn)
			*entry_line = line; /* the last row at the entry, as libdw finds it */
		(*n)++;
	}
	qsort(v, *n, sizeof *v, cmp_row);
	return v;
}

/* The first (lowest-address) row of LINE in fn, or NULL. */
static const struct row *line_in_fn(const struct row *v, size_t n, int line)
{
	for (size_t i = 0; i < n; i++)
		if (v[i].line == line && v[i].in_fn)
			return &v[i];
	return NULL;
}

/* The rows of fn whose line the spec names, as SystemTap 4.8 picks them
 * (is_stmt is not looked at): a line's lowest address in fn; "*" walks
 * the file's lines from the one at fn's entry up to the first that has
 * no row in fn; "+N" is decl_line + N. An address already taken by an
 * earlier line is not probed again. */
static void lines_in_func(struct dwq_mod *m, Dwarf_Die *fn, const char *fname, int decl_line,
			  const struct dwq_spec *s, struct dwq_stmts *o, size_t *cap,
			  struct near *nr)
{
	size_t n, first = o->n;
	int entry_line, want = s->relative ? decl_line + s->line0 : s->line0;
	struct row *v;

	if (s->relative && !decl_line)
		return;
	v = file_rows(m, fn, s, &n, &entry_line);
	if (!v)
		return;
	if (s->line_any) {
		for (size_t i = 0; i < n && entry_line;) {
			const struct row *r = line_in_fn(v, n, entry_line);

			if (!r)
				break;
			push_new_addr(o, cap, first, r->addr, fname, r->file, r->line);
			while (i < n && v[i].line <= entry_line)
				i++;
			entry_line = i < n ? v[i].line : 0;
		}
	} else if (s->relative) {
		const struct row *r = line_in_fn(v, n, want);

		if (r)
			push_new_addr(o, cap, first, r->addr, fname, r->file, r->line);
	} else {
		/* each range's lines in order, the first row of each in fn */
		for (int k = 0; k < s->nranges; k++)
			for (size_t i = 0; i < n; i++)
				if (v[i].in_fn && v[i].line >= s->ranges[k][0] &&
				    v[i].line <= s->ranges[k][1] &&
				    line_in_fn(v, n, v[i].line) == &v[i])
					push_new_addr(o, cap, first, v[i].addr, fname, v[i].file,
						      v[i].line);
	}
	if (o->n == first && (s->relative || s->single_line))
		for (size_t i = 0; i < n; i++)
			if (v[i].in_fn)
				note_near(nr, v[i].file, want, v[i].line);
	free(v);
}

static int cmp_stmt(const void *a, const void *b)
{
	const struct dwq_stmt *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return strcmp(x->func, y->func);
}

static char *near_hint(const struct near *nr)
{
	char *h = NULL;
	int r, want = nr->want;

	if (!nr->file)
		return NULL;
	if (nr->below && nr->above)
		r = asprintf(&h, "no line records for %s:%d [man error::dwarf] (try :%d or :%d)",
			     nr->file, want, nr->below, nr->above);
	else if (nr->below || nr->above)
		r = asprintf(&h, "no line records for %s:%d [man error::dwarf] (try :%d)", nr->file,
			     want, nr->below ? nr->below : nr->above);
	else
		r = asprintf(&h, "no line records for %s:%d [man error::dwarf]", nr->file, want);
	return r < 0 ? NULL : h;
}

/* .nearest, as SystemTap 4.8 resolves it: each line asked for (each line
 * of a range too) that has no row in the matched functions becomes the
 * closest line that has one, at most NEAR_LINES away, the later on a
 * tie; a line is collected once, an address probed once. ROWS: the first
 * row of each line of each function (not merged by address). */
struct nearest {
	struct dwq_stmts rows, *out;
	size_t rcap, *cap;
	int *done; /* lines collected */
	int ndone;
};

static int has_line(const struct nearest *nr, int line)
{
	for (size_t i = 0; i < nr->rows.n; i++)
		if (nr->rows.v[i].line == line)
			return 1;
	return 0;
}

static void collect_line(struct nearest *nr, int line, int req_line)
{
	for (int i = 0; i < nr->ndone; i++)
		if (nr->done[i] == line)
			return;
	nr->done = realloc(nr->done, (size_t)(nr->ndone + 1) * sizeof *nr->done);
	if (!nr->done)
		abort();
	nr->done[nr->ndone++] = line;
	for (size_t i = 0; i < nr->rows.n; i++) {
		const struct dwq_stmt *r = &nr->rows.v[i];
		size_t n = nr->out->n;

		if (r->line != line)
			continue;
		push_new_addr(nr->out, nr->cap, 0, r->addr, r->func, r->file, r->line);
		if (nr->out->n > n && req_line)
			nr->out->v[n].req_line = req_line; /* -l names the line asked for */
	}
}

static void nearest_line(struct nearest *nr, int line, int single, int self_ok)
{
	int lo = 0, hi = 0;

	if (self_ok && has_line(nr, line)) {
		collect_line(nr, line, 0);
		return;
	}
	for (int d = 1; d <= NEAR_LINES; d++) {
		if (!lo && line - d > 0 && has_line(nr, line - d))
			lo = line - d;
		if (!hi && has_line(nr, line + d))
			hi = line + d;
	}
	if (lo && (!hi || line - lo < hi - line))
		collect_line(nr, lo, single ? line : 0);
	else if (hi)
		collect_line(nr, hi, single ? line : 0);
}

/* NR's closest lines below and above its line with a row in a matched
 * function, at most NEAR_LINES away. */
static void near_lines(struct dwq_mod *m, const struct dwq_funcs *fs, const struct dwq_spec *s,
		       struct near *nr)
{
	for (size_t i = 0; i < fs->n; i++) {
		struct row *v;
		size_t n;
		int entry_line;
		Dwarf_Die die;

		if (!fs->v[i].has_dwarf || !file_matches(s->file, fs->v[i].decl_file) ||
		    !dwarf_offdie(dwq_dwarf(m), fs->v[i].die, &die) ||
		    !(v = file_rows(m, &die, s, &n, &entry_line)))
			continue;
		for (size_t k = 0; k < n; k++) {
			int l = v[k].line, d = nr->want - l;

			if (!v[k].in_fn)
				continue;
			if (d > 0 && d <= NEAR_LINES && l > nr->below)
				nr->below = l;
			if (d < 0 && -d <= NEAR_LINES && (!nr->above || l < nr->above))
				nr->above = l;
		}
		free(v);
	}
}

/* The function SystemTap 4.8 takes first for "+N" (the oracle's choice
 * fits source order): the one with DWARF declared first; -1 if none. */
static int first_func(const struct dwq_funcs *fs, const struct dwq_spec *s)
{
	int k = -1;

	for (size_t i = 0; i < fs->n; i++)
		if (fs->v[i].has_dwarf && file_matches(s->file, fs->v[i].decl_file) &&
		    (k < 0 || fs->v[i].decl_line < fs->v[k].decl_line ||
		     (fs->v[i].decl_line == fs->v[k].decl_line && fs->v[i].die < fs->v[k].die)))
			k = (int)i;
	return k;
}

static void resolve_nearest(struct dwq_mod *m, const struct dwq_funcs *fs, const struct dwq_spec *s,
			    struct dwq_stmts *out, size_t *cap)
{
	struct nearest nr = {.out = out, .cap = cap};
	int min = INT_MAX, max = 0;

	if (s->line_any)
		return;
	for (size_t i = 0; i < fs->n; i++) {
		struct row *v;
		size_t n;
		int entry_line;
		Dwarf_Die die;

		if (!fs->v[i].has_dwarf || !dwarf_offdie(dwq_dwarf(m), fs->v[i].die, &die) ||
		    !(v = file_rows(m, &die, s, &n, &entry_line)))
			continue;
		for (size_t k = 0; k < n; k++)
			if (v[k].in_fn && line_in_fn(v, n, v[k].line) == &v[k]) {
				push_any(&nr.rows, &nr.rcap, v[k].addr, fs->v[i].name, v[k].file,
					 v[k].line);
				min = v[k].line < min ? v[k].line : min;
				max = v[k].line > max ? v[k].line : max;
			}
		free(v);
	}
	if (s->relative) {
		/* as 4.8: relative to the first function's declaration */
		int f0 = first_func(fs, s);

		if (f0 >= 0 && fs->v[f0].decl_line)
			/* 4.8 looks around that line only, not at it */
			nearest_line(&nr, fs->v[f0].decl_line + s->line0, 1, 0);
	} else {
		for (int k = 0; k < s->nranges; k++) {
			/* lines further than NEAR_LINES from any row find nothing */
			int lo =
			    s->ranges[k][0] > min - NEAR_LINES ? s->ranges[k][0] : min - NEAR_LINES;
			int hi =
			    s->ranges[k][1] < max + NEAR_LINES ? s->ranges[k][1] : max + NEAR_LINES;

			for (int line = lo; line <= hi; line++)
				nearest_line(&nr, line, s->single_line, 1);
		}
	}
	dwq_stmts_free(&nr.rows);
	free(nr.done);
}

int dwq_statements(struct dwq_mod *m, const char *spec, struct dwq_stmts *out, char *err,
		   size_t errlen)
{
	return dwq_statements_nearest(m, spec, 0, out, err, errlen);
}

int dwq_statements_nearest(struct dwq_mod *m, const char *spec, int nearest, struct dwq_stmts *out,
			   char *err, size_t errlen)
{
	struct dwq_spec s;
	struct dwq_funcs fs;
	struct near nr = {0};
	size_t cap = 0;
	int no_line;

	memset(out, 0, sizeof *out);
	if (dwq_parse_spec(spec, &s, err, errlen) < 0)
		return -1;
	no_line = !s.nranges && !s.line_any && !s.relative;
	if (!dwq_has_dwarf(m)) {
		dwq_seterr(err, errlen, "no match");
		dwq_spec_free(&s);
		return -1;
	}
	if (dwq_functions(m, s.func, no_line ? DWQ_CALL : DWQ_FUNCTION, DWQ_PROLOGUE_NEVER, 0, &fs,
			  err, errlen) < 0) {
		dwq_spec_free(&s);
		return -1;
	}
	for (size_t i = 0; i < fs.n; i++) {
		const struct dwq_func *f = &fs.v[i];
		Dwarf_Die die;

		if (!f->has_dwarf)
			continue;
		if (no_line) {
			/* the entry, named by the declaration line */
			if (!s.file || (f->decl_file && file_matches(s.file, f->decl_file)))
				push(out, &cap, f->entry, f->name, f->decl_file, f->decl_line);
		} else if (dwarf_offdie(dwq_dwarf(m), f->die, &die)) {
			lines_in_func(m, &die, f->name, f->decl_line, &s, out, &cap, &nr);
		}
	}
	/* one line ("N", "+N"): the nearest only when it has no row (4.8) */
	if (nearest && !no_line && !(out->n && (s.relative || s.single_line))) {
		struct dwq_stmts near = {0};
		size_t ncap = 0;

		resolve_nearest(m, &fs, &s, &near, &ncap);
		if (near.n) {
			near.hint = NULL;
			dwq_stmts_free(out);
			*out = near;
			cap = ncap;
		}
	}
	if (!out->n && (s.relative || s.single_line)) {
		/* 4.8 counts "+N" from its first function here, and suggests
		 * the lines of any matched function */
		int k = first_func(&fs, &s);

		if (k >= 0) {
			free(nr.file);
			memset(&nr, 0, sizeof nr);
			nr.want = s.relative ? fs.v[k].decl_line + s.line0 : s.line0;
			nr.file = strdup(fs.v[k].decl_file ? fs.v[k].decl_file : "");
			near_lines(m, &fs, &s, &nr);
		}
	}
	dwq_funcs_free(&fs);
	if (!out->n && (s.relative || s.single_line))
		out->hint = near_hint(&nr);
	free(nr.file);
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
	free(s->hint);
	s->v = NULL;
	s->n = 0;
	s->hint = NULL;
}
