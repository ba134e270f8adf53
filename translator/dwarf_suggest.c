/* The names SystemTap 4.8 offers after "no match" for a .function probe
 * point (dwq_function_candidates in dwarf_query.h). They are not the
 * functions .function("*") matches: the symbol table gives every FUNC
 * entry, imports and startup code included, and the debug info only
 * the inline functions (an out-of-line function with debug info is there
 * by its symbol, under its mangled name in C++). */
#include "dwarf_query.h"

#include <dwarf.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>

struct names {
	char **v;
	int n, cap;
};

static void add_name(struct names *s, const char *name)
{
	if (!name || !*name)
		return;
	if (s->n == s->cap) {
		s->cap = s->cap ? s->cap * 2 : 64;
		s->v = realloc(s->v, (size_t)s->cap * sizeof *s->v);
		if (!s->v)
			abort();
	}
	s->v[s->n] = strdup(name);
	if (!s->v[s->n])
		abort();
	s->n++;
}

/* dwarf_getfuncs callback: the defining subprograms of a CU (in C++ also
 * those inside namespaces and classes); SystemTap records the inline
 * ones (any DW_AT_inline but "not inlined"), by their integrated name
 * (a constructor's abstract instance is named by its declaration). */
static int add_inline(Dwarf_Die *die, void *arg)
{
	if (dwarf_func_inline(die) != 0)
		add_name(arg, dwarf_diename(die));
	return DWARF_CB_OK;
}

static int cu_has_file(Dwarf_Die *cu, const char *pattern)
{
	Dwarf_Files *files;
	size_t n;

	if (dwarf_getsrcfiles(cu, &files, &n) != 0)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (dwq_file_matches(pattern, dwarf_filesrc(files, i, NULL, NULL)))
			return 1;
	return 0;
}

int dwq_function_candidates(struct dwq_mod *m, const char *file, char ***out)
{
	struct names s = {0};
	Dwfl_Module *mod = dwq_dwfl_module(m);
	Dwarf *dw = dwq_dwarf(m);
	int nsym = dwfl_module_getsymtab(mod);

	for (int i = 0; i < nsym; i++) {
		GElf_Sym sym;
		const char *name = dwfl_module_getsym(mod, i, &sym, NULL);

		if (name && GELF_ST_TYPE(sym.st_info) == STT_FUNC)
			add_name(&s, name);
	}
	if (dw) {
		Dwarf_Off off = 0, next;
		size_t hsize;

		while (dwarf_nextcu(dw, off, &next, &hsize, NULL, NULL, NULL) == 0) {
			Dwarf_Die cu;

			if (dwarf_offdie(dw, off + hsize, &cu) && (!file || cu_has_file(&cu, file)))
				dwarf_getfuncs(&cu, add_inline, &s, 0);
			off = next;
		}
	}
	*out = s.v;
	return s.n;
}
