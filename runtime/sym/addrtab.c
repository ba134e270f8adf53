/* A module's symbols sorted by address (see addrtab.h). Which symbol
 * libdwfl picks (elfutils 0.188, dwfl_module_addrsym.c, read for its
 * rules): among the symbols with a name, a defined section, a type other
 * than SECTION/FILE/TLS and [value, value+size) holding the address, it
 * walks the global part of the table first (the local part only if that
 * found nothing and no global sizeless label sits at the address); a later
 * symbol replaces the kept one if it starts higher or binds more strongly
 * (global > gnu-unique > weak > local), or starts at the same place and
 * is smaller with no weaker binding, or no bigger with a stronger one.
 * The walk order matters, so the candidates are folded in index order.
 * With no sized symbol over the address, a sizeless label of the same
 * section at or below it is taken, unless a symbol ends above the label. */
#include "addrtab.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct ent {
	GElf_Addr value;
	GElf_Addr maxend; /* max of value+size over this and all lower entries */
	const char *name;
	GElf_Sym sym;
	int idx;
	GElf_Word shndx; /* the section, extended indexes resolved */
	Elf *elf;	 /* the symbol's file (main, debug or auxiliary) */
	GElf_Addr bias;
};

struct func;

struct _stp_addrtab {
	struct ent *e; /* all eligible symbols, by value then index */
	size_t n;
	size_t *sizeless; /* positions in e of the sizeless ones, in order */
	size_t nsizeless;
	GElf_Addr *labels; /* sizeless symbols of the global part, sorted */
	size_t nlabels;
	int first_global;   /* >1: the table has a local part walked second */
	struct func *funcs; /* for _stp_addrtab_find_func, made at its first call */
	size_t nfuncs;
	int funcs_done;
};

static int eligible(const char *name, const GElf_Sym *s)
{
	int type = GELF_ST_TYPE(s->st_info);

	return name && name[0] && s->st_shndx != SHN_UNDEF && type != STT_SECTION &&
	    type != STT_FILE && type != STT_TLS;
}

static int by_value(const void *a, const void *b)
{
	const struct ent *x = a, *y = b;

	if (x->value != y->value)
		return x->value < y->value ? -1 : 1;
	return x->idx - y->idx;
}

static int by_addr(const void *a, const void *b)
{
	GElf_Addr x = *(const GElf_Addr *)a, y = *(const GElf_Addr *)b;

	return x < y ? -1 : x > y;
}

static int in_global_part(const struct _stp_addrtab *t, int idx)
{
	return t->first_global <= 1 || idx >= t->first_global;
}

void _stp_addrtab_free(struct _stp_addrtab *t)
{
	if (!t)
		return;
	free(t->e);
	free(t->sizeless);
	free(t->labels);
	free(t->funcs);
	free(t);
}

struct _stp_addrtab *_stp_addrtab_build(Dwfl_Module *mod)
{
	int n = dwfl_module_getsymtab(mod);
	int fg = dwfl_module_getsymtab_first_global(mod);
	struct _stp_addrtab *t;

	if (n <= 1 || fg < 0 || !(t = calloc(1, sizeof *t)))
		return NULL;
	t->first_global = fg;
	t->e = malloc((size_t)n * sizeof *t->e);
	t->labels = malloc((size_t)n * sizeof *t->labels);
	t->sizeless = malloc((size_t)n * sizeof *t->sizeless);
	if (!t->e || !t->labels || !t->sizeless) {
		_stp_addrtab_free(t);
		return NULL;
	}
	for (int i = 1; i < n; i++) {
		GElf_Sym s;
		GElf_Addr a, bias = 0;
		GElf_Word shndx = 0;
		Elf *elf = NULL;
		const char *nm = dwfl_module_getsym_info(mod, i, &s, &a, &shndx, &elf, &bias);

		if (!eligible(nm, &s))
			continue;
		t->e[t->n++] = (struct ent){a, 0, nm, s, i, shndx, elf, bias};
		if (!s.st_size && in_global_part(t, i))
			t->labels[t->nlabels++] = a;
	}
	qsort(t->e, t->n, sizeof *t->e, by_value);
	qsort(t->labels, t->nlabels, sizeof *t->labels, by_addr);
	for (size_t i = 0; i < t->n; i++) {
		GElf_Addr end = t->e[i].value + t->e[i].sym.st_size;

		if (end < t->e[i].value)
			end = UINT64_MAX;
		t->e[i].maxend = i && t->e[i - 1].maxend > end ? t->e[i - 1].maxend : end;
		if (!t->e[i].sym.st_size)
			t->sizeless[t->nsizeless++] = i;
	}
	return t;
}

static int binding_rank(const GElf_Sym *s)
{
	switch (GELF_ST_BIND(s->st_info)) {
	case STB_GLOBAL:
		return 3;
	case STB_GNU_UNIQUE:
		return 2;
	case STB_WEAK:
		return 1;
	default:
		return 0;
	}
}

/* Does C replace KEPT (both sized and holding the address)? */
static int better(const struct ent *kept, const struct ent *c)
{
	int bk = binding_rank(&kept->sym), bc = binding_rank(&c->sym);

	if (kept->value < c->value || bk < bc)
		return 1;
	return kept->value == c->value &&
	    ((kept->sym.st_size > c->sym.st_size && bk <= bc) ||
	     (kept->sym.st_size >= c->sym.st_size && bk < bc));
}

/* The pick among CAND[0..n) (of one part of the table): libdwfl's walk
 * meets them in index order. */
static const struct ent *fold(const struct ent **cand, size_t n)
{
	const struct ent *kept = NULL;

	for (size_t i = 1; i < n; i++)
		for (size_t j = i; j > 0 && cand[j - 1]->idx > cand[j]->idx; j--) {
			const struct ent *x = cand[j];

			cand[j] = cand[j - 1];
			cand[j - 1] = x;
		}
	for (size_t i = 0; i < n; i++)
		if (!kept || better(kept, cand[i]))
			kept = cand[i];
	return kept;
}

/* The section holding A (libdwfl's same-section test for labels
 * compares the sections of the address and of the label's value). */
static Elf_Scn *section_of(Dwfl_Module *mod, GElf_Addr a)
{
	GElf_Addr bias = 0;

	return dwfl_module_address_section(mod, &a, &bias);
}

/* No sized symbol holds ADDR, and both parts of the table are walked:
 * libdwfl then takes the sizeless label of the same section nearest
 * below ADDR, unless a symbol ends above it (the last in index order of
 * those at the same place). LO: the entries below it are those <= addr. */
static const struct ent *sizeless_pick(const struct _stp_addrtab *t, Dwfl_Module *mod,
				       GElf_Addr addr, size_t lo)
{
	size_t a = 0, b = t->nsizeless, k;
	GElf_Addr vmax;
	const struct ent *pick = NULL;
	Elf_Scn *here;

	if (!lo)
		return NULL;
	while (a < b) {
		size_t mid = a + (b - a) / 2;

		if (t->e[t->sizeless[mid]].value <= addr)
			a = mid + 1;
		else
			b = mid;
	}
	if (!a)
		return NULL;
	vmax = t->e[t->sizeless[a - 1]].value;
	if (vmax < t->e[lo - 1].maxend)
		return NULL; /* a symbol below ADDR ends above the label */
	here = section_of(mod, addr);
	for (k = a; k-- > 0 && t->e[t->sizeless[k]].value == vmax;) {
		const struct ent *c = &t->e[t->sizeless[k]];
		int same = c->shndx >= SHN_LORESERVE ? c->value == addr
						     : section_of(mod, c->value) == here;

		if (same && (!pick || c->idx > pick->idx))
			pick = c;
	}
	return pick;
}

static int has_label_at(const struct _stp_addrtab *t, GElf_Addr addr)
{
	size_t lo = 0, hi = t->nlabels;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->labels[mid] < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < t->nlabels && t->labels[lo] == addr;
}

#define MAX_CAND 256

unsigned long _stp_addrtab_dwfl_asked;

static const char *ask_dwfl(Dwfl_Module *mod, GElf_Addr addr, GElf_Off *off, GElf_Sym *sym)
{
	_stp_addrtab_dwfl_asked++;
	return dwfl_module_addrinfo(mod, addr, off, sym, NULL, NULL, NULL);
}

const char *_stp_addrtab_addrinfo(struct _stp_addrtab *t, Dwfl_Module *mod, GElf_Addr addr,
				  GElf_Off *off, GElf_Sym *sym)
{
	const struct ent *glob[MAX_CAND], *loc[MAX_CAND], *pick = NULL;
	size_t lo = 0, hi, ng = 0, nl = 0;

	if (!t)
		return ask_dwfl(mod, addr, off, sym);
	/* the first entry above addr, then down while one may still hold it */
	hi = t->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->e[mid].value <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t j = lo; j-- > 0 && t->e[j].maxend > addr;) {
		const struct ent *c = &t->e[j];

		if (!c->sym.st_size || addr - c->value >= c->sym.st_size)
			continue;
		if (ng == MAX_CAND || nl == MAX_CAND)
			return ask_dwfl(mod, addr, off, sym);
		if (in_global_part(t, c->idx))
			glob[ng++] = c;
		else
			loc[nl++] = c;
	}
	if (ng) {
		pick = fold(glob, ng);
	} else if (has_label_at(t, addr)) {
		/* a global label at ADDR may stop the walk before the local
		 * part: rare, left to libdwfl */
		return ask_dwfl(mod, addr, off, sym);
	} else {
		pick = nl ? fold(loc, nl) : sizeless_pick(t, mod, addr, lo);
		if (!pick)
			return NULL;
	}
	*off = addr - pick->value;
	*sym = pick->sym;
	return pick->name;
}

struct func {
	const char *name;
	GElf_Addr addr;
	GElf_Sym sym;
	int idx;
};

static int by_name(const void *a, const void *b)
{
	const struct func *x = a, *y = b;
	int c = strcmp(x->name, y->name);

	return c ? c : x->idx - y->idx;
}

/* Every defined STT_FUNC symbol (sized or not), by name then index. */
static void build_funcs(struct _stp_addrtab *t, Dwfl_Module *mod)
{
	int n = dwfl_module_getsymtab(mod);

	t->funcs_done = 1;
	if (n <= 1 || !(t->funcs = malloc((size_t)n * sizeof *t->funcs)))
		return;
	for (int i = 1; i < n; i++) {
		GElf_Sym s;
		GElf_Addr a;
		const char *nm = dwfl_module_getsym_info(mod, i, &s, &a, NULL, NULL, NULL);

		if (nm && s.st_shndx != SHN_UNDEF && GELF_ST_TYPE(s.st_info) == STT_FUNC)
			t->funcs[t->nfuncs++] = (struct func){nm, a, s, i};
	}
	qsort(t->funcs, t->nfuncs, sizeof *t->funcs, by_name);
}

int _stp_addrtab_find_func(struct _stp_addrtab *t, Dwfl_Module *mod, const char *name,
			   GElf_Addr *addr, GElf_Sym *sym)
{
	size_t lo = 0, hi;

	if (!t)
		return 0;
	if (!t->funcs_done)
		build_funcs(t, mod);
	hi = t->nfuncs;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (strcmp(t->funcs[mid].name, name) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == t->nfuncs || strcmp(t->funcs[lo].name, name))
		return 0;
	*addr = t->funcs[lo].addr;
	*sym = t->funcs[lo].sym;
	return 1;
}
