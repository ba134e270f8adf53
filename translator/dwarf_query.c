/* Function and statement resolution against DWARF, with the ELF symbol
 * tables as the fallback for binaries without debug info. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "dwarf_query.h"

#include <dwarf.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <gelf.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct dwq_mod {
	char *path;
	Dwfl *dwfl;
	Dwfl_Module *mod;
	Elf *elf;
	GElf_Addr elf_bias;
	Dwarf *dw;
	Dwarf_Addr dw_bias;
	int is_dyn;
	int has_dwarf;
	char **dynsyms; /* sorted names of defined global FUNC .dynsym entries */
	size_t ndynsyms;
};

void dwq_seterr(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (!err || !errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

static char *dupstr(const char *s)
{
	return s ? strdup(s) : NULL;
}

static char *debuginfo_path;

static const Dwfl_Callbacks offline_callbacks = {
    .find_elf = dwfl_build_id_find_elf,
    .find_debuginfo = dwfl_standard_find_debuginfo,
    .section_address = dwfl_offline_section_address,
    .debuginfo_path = &debuginfo_path,
};

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Names of the functions a dynamic linker could bind to: .exported. */
static void load_dynsyms(struct dwq_mod *m)
{
	Elf_Scn *scn = NULL;
	size_t cap = 0;

	while ((scn = elf_nextscn(m->elf, scn)) != NULL) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNSYM || !sh.sh_entsize)
			continue;
		d = elf_getdata(scn, NULL);
		if (!d)
			continue;
		for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym s;
			const char *nm;

			if (!gelf_getsym(d, (int)i, &s))
				break;
			if (GELF_ST_TYPE(s.st_info) != STT_FUNC &&
			    GELF_ST_TYPE(s.st_info) != STT_GNU_IFUNC)
				continue;
			if (s.st_shndx == SHN_UNDEF || GELF_ST_BIND(s.st_info) == STB_LOCAL)
				continue;
			if (GELF_ST_VISIBILITY(s.st_other) == STV_HIDDEN ||
			    GELF_ST_VISIBILITY(s.st_other) == STV_INTERNAL)
				continue;
			nm = elf_strptr(m->elf, sh.sh_link, s.st_name);
			if (!nm || !*nm)
				continue;
			if (m->ndynsyms == cap) {
				cap = cap ? cap * 2 : 64;
				m->dynsyms = realloc(m->dynsyms, cap * sizeof *m->dynsyms);
				if (!m->dynsyms)
					abort();
			}
			m->dynsyms[m->ndynsyms++] = strndup(nm, strcspn(nm, "@"));
		}
	}
	if (m->ndynsyms)
		qsort(m->dynsyms, m->ndynsyms, sizeof *m->dynsyms, cmp_str);
}

static int is_exported(const struct dwq_mod *m, const char *name)
{
	if (!name || !m->ndynsyms)
		return 0;
	return bsearch(&name, m->dynsyms, m->ndynsyms, sizeof *m->dynsyms, cmp_str) != NULL;
}

struct dwq_mod *dwq_open(const char *path, char *err, size_t errlen)
{
	struct dwq_mod *m;
	char real[PATH_MAX];
	GElf_Ehdr eh;
	int fd;

	if (!realpath(path, real)) {
		/* /proc/PID/exe of a file deleted (or replaced) since: the
		 * link opens, its target does not (proc_image.c) */
		if (strncmp(path, "/proc/", 6) || strlen(path) >= sizeof real ||
		    (fd = open(path, O_RDONLY | O_CLOEXEC)) < 0) {
			dwq_seterr(err, errlen, "cannot find module %s: %s", path, strerror(errno));
			return NULL;
		}
		close(fd);
		strcpy(real, path);
	}
	fd = open(real, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		dwq_seterr(err, errlen, "cannot open %s: %s", real, strerror(errno));
		return NULL;
	}
	close(fd);
	m = calloc(1, sizeof *m);
	if (!m)
		abort();
	m->path = strdup(real);
	/* SystemTap's variable: where separate debug files are looked for
	 * (libdwfl's syntax; unset, its default ":.debug:/usr/lib/debug") */
	debuginfo_path = getenv("SYSTEMTAP_DEBUGINFO_PATH");
	m->dwfl = dwfl_begin(&offline_callbacks);
	if (!m->dwfl)
		goto fail_dwfl;
	dwfl_report_begin(m->dwfl);
	m->mod = dwfl_report_offline(m->dwfl, real, real, -1);
	dwfl_report_end(m->dwfl, NULL, NULL);
	if (!m->mod)
		goto fail_dwfl;
	m->elf = dwfl_module_getelf(m->mod, &m->elf_bias);
	if (!m->elf || !gelf_getehdr(m->elf, &eh))
		goto fail_dwfl;
	m->is_dyn = eh.e_type == ET_DYN;
	m->dw = dwfl_module_getdwarf(m->mod, &m->dw_bias);
	if (m->dw) {
		Dwarf_Off off = 0, next;
		size_t hsize;

		m->has_dwarf = dwarf_nextcu(m->dw, off, &next, &hsize, NULL, NULL, NULL) == 0;
	}
	load_dynsyms(m);
	return m;

fail_dwfl:
	dwq_seterr(err, errlen, "cannot read ELF file %s: %s", real, dwfl_errmsg(-1));
	dwq_close(m);
	return NULL;
}

void dwq_close(struct dwq_mod *m)
{
	if (!m)
		return;
	if (m->dwfl)
		dwfl_end(m->dwfl);
	for (size_t i = 0; i < m->ndynsyms; i++)
		free(m->dynsyms[i]);
	free(m->dynsyms);
	free(m->path);
	free(m);
}

const char *dwq_path(const struct dwq_mod *m)
{
	return m->path;
}
int dwq_is_dyn(const struct dwq_mod *m)
{
	return m->is_dyn;
}
int dwq_has_dwarf(const struct dwq_mod *m)
{
	return m->has_dwarf;
}
Dwarf *dwq_dwarf(const struct dwq_mod *m)
{
	return m->has_dwarf ? m->dw : NULL;
}
Dwfl_Module *dwq_dwfl_module(const struct dwq_mod *m)
{
	return m->mod;
}

uint64_t dwq_dwarf_to_vaddr(const struct dwq_mod *m, Dwarf_Addr a)
{
	return a + m->dw_bias - m->elf_bias;
}

uint64_t dwq_vaddr_to_dwarf(const struct dwq_mod *m, uint64_t v)
{
	return v + m->elf_bias - m->dw_bias;
}

/* ---- specs ---- */

static int parse_int(const char *s, const char **end, int *out)
{
	char *e;
	long v;

	errno = 0;
	v = strtol(s, &e, 10);
	if (e == s || errno || v < 0 || v > INT_MAX)
		return -1;
	*out = (int)v;
	*end = e;
	return 0;
}

static void add_range(struct dwq_spec *out, int lo, int hi)
{
	out->ranges = realloc(out->ranges, (size_t)(out->nranges + 1) * sizeof *out->ranges);
	if (!out->ranges)
		abort();
	out->ranges[out->nranges][0] = lo;
	out->ranges[out->nranges][1] = hi;
	if (!out->nranges++ || lo < out->line0)
		out->line0 = lo;
	if (hi > out->line1)
		out->line1 = hi;
}

/* One item of LINES, [B, E): numbers separated by '-', empty ones
 * skipped as SystemTap 4.8 skips them: "N", "N-" and "-N" are line N,
 * "A-B-C" lines A to C (its first to its last); hi < lo is no line. */
static int parse_item(const char *b, const char *e, struct dwq_spec *out)
{
	int lo = -1, hi = -1;

	while (b < e) {
		const char *end;
		int n;

		if (*b == '-') {
			b++;
			continue;
		}
		if (parse_int(b, &end, &n) < 0 || end > e || (end < e && *end != '-'))
			return -1;
		if (lo < 0)
			lo = n;
		hi = n;
		b = end;
	}
	if (lo < 0)
		return -1; /* "-" alone (SystemTap 4.8 fails on it internally) */
	add_range(out, lo, hi);
	return 0;
}

/* LINES after "FILE:" (or after "FILE+" when it has ',' or '-'): '*', or
 * items "N" / "N-M" separated by commas (man stapprobes: ":x,y-z"), empty
 * items skipped (":,3" is line 3, ":," none). */
static int parse_lines(const char *p, struct dwq_spec *out)
{
	if (!strcmp(p, "*")) {
		out->line_any = 1;
		return 0;
	}
	if (!*p)
		return -1;
	out->single_line = !strpbrk(p, ",-");
	while (*p) {
		const char *e = strchr(p, ',');

		if (!e)
			e = p + strlen(p);
		if (e > p && parse_item(p, e, out) < 0)
			return -1;
		p = *e ? e + 1 : e;
	}
	if (!out->nranges)
		add_range(out, 1, 0); /* ":," : no line (4.8: "no match") */
	return 0;
}

/* spec -> FUNC [ '@' FILE [ ':' LINES | '+' N | '+' LINES ] ]: FILE ends
 * at the first ':' or '+', as SystemTap 4.8 reads it; "+N" is N lines
 * after the function's declaration, "+" with a list or range ("+1,30")
 * is absolute lines, as 4.8 resolves them. */
int dwq_parse_spec(const char *spec, struct dwq_spec *out, char *err, size_t errlen)
{
	const char *at = strchr(spec, '@');
	const char *sep;

	memset(out, 0, sizeof *out);
	if (!*spec)
		goto bad;
	if (!at) {
		out->func = strdup(spec);
		return 0;
	}
	out->func = strndup(spec, (size_t)(at - spec));
	sep = strpbrk(at + 1, ":+");
	if (!sep) {
		out->file = strdup(at + 1);
		return 0;
	}
	out->file = strndup(at + 1, (size_t)(sep - at - 1));
	if (*sep == '+' && sep[1] && strspn(sep + 1, "0123456789") == strlen(sep + 1)) {
		const char *e;

		if (parse_int(sep + 1, &e, &out->line0) < 0)
			goto bad;
		out->relative = 1;
		return 0;
	}
	if (*sep == '+' && !strpbrk(sep + 1, ",-"))
		goto bad;
	if (parse_lines(sep + 1, out) < 0)
		goto bad;
	return 0;
bad:
	dwq_seterr(err, errlen, "malformed specification '%s'", spec);
	dwq_spec_free(out);
	return -1;
}

int dwq_spec_has_line(const struct dwq_spec *s, int line)
{
	if (s->line_any)
		return 1;
	for (int i = 0; i < s->nranges; i++)
		if (line >= s->ranges[i][0] && line <= s->ranges[i][1])
			return 1;
	return 0;
}

void dwq_spec_free(struct dwq_spec *s)
{
	free(s->func);
	free(s->file);
	free(s->ranges);
	memset(s, 0, sizeof *s);
}

/* SystemTap matches a file pattern against the whole path or any
 * trailing component sequence ("a.c" matches "/src/a.c"). */
int dwq_file_matches(const char *pattern, const char *file)
{
	const char *p;

	if (!file)
		return 0;
	if (!fnmatch(pattern, file, 0))
		return 1;
	for (p = strchr(file, '/'); p; p = strchr(p + 1, '/'))
		if (!fnmatch(pattern, p + 1, 0))
			return 1;
	return 0;
}

/* ---- function collection ---- */

struct collect {
	struct dwq_mod *m;
	struct dwq_spec spec;
	enum dwq_kind kind;
	enum dwq_prologue pmode;
	int exported_only;
	struct dwq_funcs *out;
	size_t cap;
	int cu_optimized;
	char scope[1024]; /* "ns::Class::" while inside scopes */
	/* Scopes of declarations seen, for definitions that point back to
	 * them with DW_AT_specification (C++ out-of-line definitions sit at
	 * the CU's top level). */
	struct {
		Dwarf_Off off;
		char *scope;
	} * decls;
	size_t ndecls, capdecls;
};

static void remember_decl(struct collect *c, Dwarf_Die *die)
{
	if (!c->scope[0])
		return;
	if (c->ndecls == c->capdecls) {
		c->capdecls = c->capdecls ? c->capdecls * 2 : 64;
		c->decls = realloc(c->decls, c->capdecls * sizeof *c->decls);
		if (!c->decls)
			abort();
	}
	c->decls[c->ndecls].off = dwarf_dieoffset(die);
	c->decls[c->ndecls].scope = strdup(c->scope);
	c->ndecls++;
}

/* The scope prefix of DIE: its own walk position, or that of the
 * declaration its DW_AT_specification (or abstract origin's) names. */
static const char *scope_of(struct collect *c, Dwarf_Die *die)
{
	Dwarf_Attribute a;
	Dwarf_Die d = *die, spec;

	for (int guard = 0; guard < 4; guard++) {
		if (dwarf_formref_die(dwarf_attr(&d, DW_AT_specification, &a), &spec) ||
		    dwarf_formref_die(dwarf_attr(&d, DW_AT_abstract_origin, &a), &spec)) {
			Dwarf_Off off = dwarf_dieoffset(&spec);

			for (size_t i = 0; i < c->ndecls; i++)
				if (c->decls[i].off == off)
					return c->decls[i].scope;
			d = spec;
			continue;
		}
		break;
	}
	return c->scope;
}

static void func_free(struct dwq_func *f)
{
	free(f->name);
	free(f->qualname);
	free(f->linkage);
	free(f->decl_file);
}

static struct dwq_func *push_func(struct collect *c)
{
	struct dwq_funcs *o = c->out;

	if (o->n == c->cap) {
		c->cap = c->cap ? c->cap * 2 : 16;
		o->v = realloc(o->v, c->cap * sizeof *o->v);
		if (!o->v)
			abort();
	}
	memset(&o->v[o->n], 0, sizeof o->v[0]);
	return &o->v[o->n++];
}

static const char *die_name(Dwarf_Die *die)
{
	Dwarf_Attribute a;

	return dwarf_formstring(dwarf_attr_integrate(die, DW_AT_name, &a));
}

static const char *die_linkage(Dwarf_Die *die)
{
	Dwarf_Attribute a;
	const char *s = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_linkage_name, &a));

	return s ? s : dwarf_formstring(dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &a));
}

/* The entry pc and the size of the range holding it. */
static int die_entry(Dwarf_Die *die, Dwarf_Addr *entry, uint64_t *size)
{
	Dwarf_Addr base, lo, hi;
	ptrdiff_t off = 0;
	int have = dwarf_entrypc(die, entry) == 0;

	*size = 0;
	while ((off = dwarf_ranges(die, off, &base, &lo, &hi)) > 0) {
		if (!have) {
			*entry = lo;
			have = 1;
		}
		if (*entry >= lo && *entry < hi) {
			*size = hi - *entry;
			break;
		}
	}
	return have ? 0 : -1;
}

static int producer_optimized(Dwarf_Die *cu)
{
	Dwarf_Attribute a;
	const char *p = dwarf_formstring(dwarf_attr(cu, DW_AT_producer, &a));
	int opt = 0;

	if (!p)
		return 1; /* unknown: trust the location info */
	for (const char *q = strstr(p, " -O"); q; q = strstr(q + 1, " -O"))
		opt = q[3] != '0';
	return opt;
}

enum dwq_prologue dwq_prologue_default = DWQ_PROLOGUE_AUTO;

static uint64_t probe_after_prologue(struct collect *c, Dwarf_Die *die, Dwarf_Addr entry,
				     uint64_t size)
{
	Dwarf_Addr *bk = NULL;
	Dwarf_Addr best = entry;
	int n;

	if (c->pmode == DWQ_PROLOGUE_NEVER || (c->pmode == DWQ_PROLOGUE_AUTO && c->cu_optimized))
		return entry;
	n = dwarf_entry_breakpoints(die, &bk);
	/* keep it only inside the entry range (bad line tables exist) */
	if (n > 0 && bk[0] >= entry && (!size || bk[0] < entry + size))
		best = bk[0];
	free(bk);
	return best;
}

static int spec_name_matches(struct collect *c, const char *name, const char *qual,
			     const char *linkage)
{
	if (!fnmatch(c->spec.func, name, 0))
		return 1;
	if (qual && strcmp(qual, name) && !fnmatch(c->spec.func, qual, 0))
		return 1;
	return linkage && !fnmatch(c->spec.func, linkage, 0);
}

/* ALIAS: a symbol-table name for this DIE's code (malloc for
 * __libc_malloc), already matched; the DIE's own name is reported, as
 * SystemTap's pp() does. */
static void add_dwarf_func(struct collect *c, Dwarf_Die *die, int inlined, const char *alias)
{
	const char *name = alias ? alias : die_name(die);

	if (alias && die_name(die))
		name = die_name(die);
	const char *linkage, *file;
	char qual[1200];
	Dwarf_Addr entry;
	uint64_t size;
	int line = 0;
	struct dwq_func *f;

	if (!name)
		return;
	linkage = alias ? NULL : die_linkage(die);
	snprintf(qual, sizeof qual, "%s%s", alias ? "" : scope_of(c, die), name);
	if (!alias && !spec_name_matches(c, name, qual, linkage))
		return;
	if (die_entry(die, &entry, &size) < 0)
		return;
	file = dwarf_decl_file(die);
	dwarf_decl_line(die, &line);
	if (c->spec.file && !dwq_file_matches(c->spec.file, file))
		return;
	f = push_func(c);
	f->name = strdup(name);
	f->qualname = strdup(qual);
	f->linkage = dupstr(linkage);
	f->entry = dwq_dwarf_to_vaddr(c->m, entry);
	f->probe = inlined ? f->entry
			   : dwq_dwarf_to_vaddr(c->m, probe_after_prologue(c, die, entry, size));
	f->size = size;
	f->decl_file = dupstr(file);
	f->decl_line = line;
	f->inlined = inlined;
	f->exported = !inlined && (is_exported(c->m, linkage) || is_exported(c->m, name));
	f->has_dwarf = 1;
	f->die = dwarf_dieoffset(die);
	if (c->exported_only && !f->exported) {
		func_free(f);
		c->out->n--;
	}
}

static void walk_die(struct collect *c, Dwarf_Die *parent);

static void walk_scope(struct collect *c, Dwarf_Die *die)
{
	const char *nm = die_name(die);
	size_t len = strlen(c->scope);

	if (nm && len + strlen(nm) + 3 < sizeof c->scope)
		snprintf(c->scope + len, sizeof c->scope - len, "%s::", nm);
	walk_die(c, die);
	c->scope[len] = '\0';
}

static void visit(struct collect *c, Dwarf_Die *die)
{
	int tag = dwarf_tag(die);
	Dwarf_Attribute a;

	switch (tag) {
	case DW_TAG_subprogram:
		/* A definition with code: skip declarations and abstract
		 * (inline-only) instances, which have no pc. */
		if (dwarf_hasattr(die, DW_AT_declaration))
			remember_decl(c, die);
		if (c->kind != DWQ_INLINE && !dwarf_hasattr(die, DW_AT_declaration) &&
		    (dwarf_hasattr(die, DW_AT_low_pc) || dwarf_hasattr(die, DW_AT_ranges) ||
		     dwarf_hasattr(die, DW_AT_entry_pc)))
			add_dwarf_func(c, die, 0, NULL);
		if (dwarf_haschildren(die))
			walk_die(c, die);
		break;
	case DW_TAG_inlined_subroutine:
		if (c->kind != DWQ_CALL && dwarf_attr(die, DW_AT_abstract_origin, &a))
			add_dwarf_func(c, die, 1, NULL);
		if (dwarf_haschildren(die))
			walk_die(c, die);
		break;
	case DW_TAG_lexical_block:
		if (dwarf_haschildren(die))
			walk_die(c, die);
		break;
	case DW_TAG_namespace:
	case DW_TAG_class_type:
	case DW_TAG_structure_type:
	case DW_TAG_union_type:
		if (dwarf_haschildren(die))
			walk_scope(c, die);
		break;
	default:
		break;
	}
}

static void walk_die(struct collect *c, Dwarf_Die *parent)
{
	Dwarf_Die child;

	if (dwarf_child(parent, &child) != 0)
		return;
	do
		visit(c, &child);
	while (dwarf_siblingof(&child, &child) == 0);
}

static void collect_dwarf(struct collect *c)
{
	Dwarf_Off off = 0, next;
	size_t hsize;

	while (dwarf_nextcu(c->m->dw, off, &next, &hsize, NULL, NULL, NULL) == 0) {
		Dwarf_Die cu;

		if (dwarf_offdie(c->m->dw, off + hsize, &cu)) {
			c->cu_optimized = producer_optimized(&cu);
			c->scope[0] = '\0';
			walk_die(c, &cu);
		}
		off = next;
	}
}

/* The name (without @VERSION, malloc'd) of symbol I when it is a defined
 * function; NULL otherwise. */
static char *symtab_func(struct collect *c, int i, GElf_Sym *s, GElf_Addr *addr)
{
	const char *name = dwfl_module_getsym_info(c->m->mod, i, s, addr, NULL, NULL, NULL);

	if (!name || !*name || s->st_shndx == SHN_UNDEF)
		return NULL;
	if (GELF_ST_TYPE(s->st_info) != STT_FUNC && GELF_ST_TYPE(s->st_info) != STT_GNU_IFUNC)
		return NULL;
	return strndup(name, strcspn(name, "@"));
}

/* A function only the symbol table knows; takes NAME. */
static void add_symtab_func(struct collect *c, char *name, GElf_Addr addr, uint64_t size)
{
	int exported = is_exported(c->m, name);
	struct dwq_func *f;

	if (c->exported_only && !exported) {
		free(name);
		return;
	}
	f = push_func(c);
	f->name = name;
	f->qualname = strdup(name);
	f->entry = f->probe = addr - c->m->elf_bias;
	f->size = size;
	f->exported = exported;
}

static void collect_symtab(struct collect *c)
{
	int n = dwfl_module_getsymtab(c->m->mod);

	if (c->kind == DWQ_INLINE || c->spec.file)
		return; /* no DWARF: no inline instances, no source files */
	for (int i = 1; i < n; i++) {
		GElf_Sym s;
		GElf_Addr addr;
		char *bare = symtab_func(c, i, &s, &addr);

		if (bare && !fnmatch(c->spec.func, bare, 0))
			add_symtab_func(c, bare, addr, s.st_size);
		else
			free(bare);
	}
}

static int have_entry(const struct collect *c, uint64_t vaddr, const char *name)
{
	for (size_t i = 0; i < c->out->n; i++)
		if (!c->out->v[i].inlined && c->out->v[i].entry == vaddr &&
		    (!name || !strcmp(c->out->v[i].name, name) ||
		     (c->out->v[i].linkage && !strcmp(c->out->v[i].linkage, name))))
			return 1;
	return 0;
}

/* Is PC (a dwfl address) inside a function DWARF describes? With OUT,
 * only an out-of-line subprogram whose entry is PC counts: it is put in
 * OUT, and whether its CU is optimized in *OPTIMIZED. */
static int dwarf_function_at(struct dwq_mod *m, Dwarf_Addr pc, Dwarf_Die *out, int *optimized)
{
	Dwarf_Addr bias;
	Dwarf_Die *cu = dwfl_module_addrdie(m->mod, pc, &bias);
	Dwarf_Die *scopes = NULL;
	int n, found = 0;

	if (!cu)
		return 0;
	n = dwarf_getscopes(cu, pc - bias, &scopes);
	for (int i = n - 1; i >= 0 && !found; i--) {
		Dwarf_Addr e;
		uint64_t sz;

		if (dwarf_tag(&scopes[i]) != DW_TAG_subprogram)
			continue;
		if (!out)
			found = 1;
		else if (die_entry(&scopes[i], &e, &sz) == 0 && e == pc - bias) {
			*out = scopes[i];
			found = 1;
		}
	}
	free(scopes);
	if (found && out)
		*optimized = producer_optimized(cu);
	return found;
}

/* Names the symbol table has for code that DWARF knows by another name
 * (glibc's malloc is __libc_malloc in DWARF); functions outside every CU
 * (crt code: _start, frame_dummy), as SystemTap lists them too; and, asked
 * for by exact name, any other function symbol. */
static void collect_symtab_aliases(struct collect *c)
{
	int n = dwfl_module_getsymtab(c->m->mod);
	int exact = !strpbrk(c->spec.func, "*?[");

	for (int i = 1; i < n; i++) {
		GElf_Sym s;
		GElf_Addr addr;
		char *bare = symtab_func(c, i, &s, &addr);
		Dwarf_Die die;
		int opt;

		if (!bare || fnmatch(c->spec.func, bare, 0) ||
		    have_entry(c, addr - c->m->elf_bias, bare)) {
			free(bare);
			continue;
		}
		if (dwarf_function_at(c->m, addr, &die, &opt)) {
			c->cu_optimized = opt;
			add_dwarf_func(c, &die, 0, bare);
		} else if (exact || !dwarf_function_at(c->m, addr, NULL, NULL)) {
			add_symtab_func(c, strdup(bare), addr, s.st_size);
		}
		free(bare);
	}
}

static int cmp_func(const void *a, const void *b)
{
	const struct dwq_func *x = a, *y = b;

	if (x->entry != y->entry)
		return x->entry < y->entry ? -1 : 1;
	if (x->inlined != y->inlined)
		return x->inlined - y->inlined;
	return strcmp(x->name, y->name);
}

/* SystemTap's order of the matches: the functions of the debug info
 * first, then those only the symbol tables know (_start, frame_dummy,
 * ...), each by address. */
static int cmp_func_order(const void *a, const void *b)
{
	const struct dwq_func *x = a, *y = b;

	if (x->has_dwarf != y->has_dwarf)
		return y->has_dwarf - x->has_dwarf;
	return cmp_func(a, b);
}

/* The same symbol may be in .symtab and .dynsym, or aliased
 * (__libc_malloc / malloc): keep one per (name, entry). */
static void dedupe(struct dwq_funcs *o)
{
	size_t w = 0;

	for (size_t r = 0; r < o->n; r++) {
		if (w && o->v[w - 1].entry == o->v[r].entry &&
		    o->v[w - 1].inlined == o->v[r].inlined &&
		    !strcmp(o->v[w - 1].name, o->v[r].name)) {
			func_free(&o->v[r]);
			continue;
		}
		o->v[w++] = o->v[r];
	}
	o->n = w;
}

int dwq_functions(struct dwq_mod *m, const char *spec, enum dwq_kind kind, enum dwq_prologue pmode,
		  int exported_only, struct dwq_funcs *out, char *err, size_t errlen)
{
	struct collect c;

	memset(out, 0, sizeof *out);
	memset(&c, 0, sizeof c);
	if (dwq_parse_spec(spec, &c.spec, err, errlen) < 0)
		return -1;
	c.m = m;
	c.kind = kind;
	c.pmode = pmode;
	c.exported_only = exported_only;
	c.out = out;
	if (m->has_dwarf) {
		collect_dwarf(&c);
		if (kind != DWQ_INLINE && !c.spec.file)
			collect_symtab_aliases(&c);
	} else
		collect_symtab(&c);
	dwq_spec_free(&c.spec);
	for (size_t i = 0; i < c.ndecls; i++)
		free(c.decls[i].scope);
	free(c.decls);
	if (out->n) {
		qsort(out->v, out->n, sizeof *out->v, cmp_func);
		dedupe(out);
		qsort(out->v, out->n, sizeof *out->v, cmp_func_order);
	}
	return 0;
}

void dwq_funcs_free(struct dwq_funcs *f)
{
	for (size_t i = 0; i < f->n; i++)
		func_free(&f->v[i]);
	free(f->v);
	f->v = NULL;
	f->n = 0;
}
