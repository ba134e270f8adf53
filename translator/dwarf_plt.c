/* .plt("NAME"): find each PLT stub's GOT slot (the rip-relative indirect
 * jmp in the stub) and name it by the relocation that fills that slot. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "dwarf_query.h"

#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <gelf.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct slot {
	uint64_t got;
	const char *name;
};

struct slots {
	struct slot *v;
	size_t n, cap;
};

static void add_slot(struct slots *s, uint64_t got, const char *name)
{
	if (s->n == s->cap) {
		s->cap = s->cap ? s->cap * 2 : 64;
		s->v = realloc(s->v, s->cap * sizeof *s->v);
		if (!s->v)
			abort();
	}
	s->v[s->n].got = got;
	s->v[s->n].name = name;
	s->n++;
}

/* Every symbol-named JUMP_SLOT relocation (.rela.plt). The stubs of
 * .plt.got jump through GLOB_DAT slots; SystemTap 4.8 does not count them
 * as PLT entries (no .plt("__cxa_finalize")), nor does this. */
static void read_relocs(Elf *elf, struct slots *s)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr sh, symsh;
		Elf_Scn *symscn;
		Elf_Data *d, *symd;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_RELA || !sh.sh_entsize)
			continue;
		symscn = elf_getscn(elf, sh.sh_link);
		if (!symscn || !gelf_getshdr(symscn, &symsh) || symsh.sh_type != SHT_DYNSYM)
			continue;
		d = elf_getdata(scn, NULL);
		symd = elf_getdata(symscn, NULL);
		if (!d || !symd)
			continue;
		for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Rela r;
			GElf_Sym sym;
			unsigned type;
			const char *nm;

			if (!gelf_getrela(d, (int)i, &r))
				break;
			type = (unsigned)GELF_R_TYPE(r.r_info);
			if (type != R_X86_64_JUMP_SLOT)
				continue;
			if (!gelf_getsym(symd, (int)GELF_R_SYM(r.r_info), &sym))
				continue;
			nm = elf_strptr(elf, symsh.sh_link, sym.st_name);
			if (nm && *nm)
				add_slot(s, r.r_offset, nm);
		}
	}
}

static const char *slot_name(const struct slots *s, uint64_t got)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->v[i].got == got)
			return s->v[i].name;
	return NULL;
}

static void push_plt(struct dwq_plts *o, size_t *cap, const char *name, uint64_t addr)
{
	for (size_t i = 0; i < o->n; i++)
		if (o->v[i].addr == addr)
			return;
	if (o->n == *cap) {
		*cap = *cap ? *cap * 2 : 16;
		o->v = realloc(o->v, *cap * sizeof *o->v);
		if (!o->v)
			abort();
	}
	o->v[o->n].name = strndup(name, strcspn(name, "@"));
	o->v[o->n].addr = addr;
	o->n++;
}

/* Scan the stubs of one section: each stub of STRIDE bytes holds a
 * "jmp *disp32(%rip)" (ff 25), possibly after endbr64 or a bnd prefix. */
static void scan_stubs(Elf_Scn *scn, const GElf_Shdr *sh, uint64_t first, uint64_t stride,
		       const struct slots *s, const char *pattern, struct dwq_plts *o, size_t *cap)
{
	Elf_Data *d = elf_getdata(scn, NULL);
	const unsigned char *b;

	if (!d || !d->d_buf || d->d_size < sh->sh_size)
		return;
	b = d->d_buf;
	for (uint64_t off = first; off + stride <= sh->sh_size; off += stride) {
		for (uint64_t k = off; k + 6 <= off + stride; k++) {
			int32_t disp;
			uint64_t got;
			const char *nm;

			if (b[k] != 0xff || b[k + 1] != 0x25)
				continue;
			memcpy(&disp, b + k + 2, 4);
			got = sh->sh_addr + k + 6 + (uint64_t)(int64_t)disp;
			nm = slot_name(s, got);
			if (nm && !fnmatch(pattern, nm, 0))
				push_plt(o, cap, nm, sh->sh_addr + off);
			break;
		}
	}
}

static int cmp_plt(const void *a, const void *b)
{
	const struct dwq_plt *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

int dwq_plt_entries(struct dwq_mod *m, const char *pattern, struct dwq_plts *out, char *err,
		    size_t errlen)
{
	struct slots s = {0};
	size_t cap = 0, shstrndx;
	Elf_Scn *scn = NULL;
	int fd, have_sec = 0;
	Elf *elf;

	memset(out, 0, sizeof *out);
	elf_version(EV_CURRENT);
	fd = open(dwq_path(m), O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		dwq_seterr(err, errlen, "cannot open %s: %s", dwq_path(m), strerror(errno));
		return -1;
	}
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf || elf_getshdrstrndx(elf, &shstrndx) != 0) {
		dwq_seterr(err, errlen, "cannot read ELF file %s: %s", dwq_path(m), elf_errmsg(-1));
		if (elf)
			elf_end(elf);
		close(fd);
		return -1;
	}
	read_relocs(elf, &s);
	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr sh;
		const char *nm;

		if (gelf_getshdr(scn, &sh) && (nm = elf_strptr(elf, shstrndx, sh.sh_name)) &&
		    !strcmp(nm, ".plt.sec"))
			have_sec = 1;
	}
	/* With .plt.sec (IBT), calls go through .plt.sec; .plt then holds
	 * only the lazy-binding trampolines. */
	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr sh;
		const char *nm;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS ||
		    !(nm = elf_strptr(elf, shstrndx, sh.sh_name)))
			continue;
		if (!strcmp(nm, ".plt") && !have_sec)
			scan_stubs(scn, &sh, 16, 16, &s, pattern, out, &cap);
		else if (!strcmp(nm, ".plt.sec"))
			scan_stubs(scn, &sh, 0, 16, &s, pattern, out, &cap);
	}
	free(s.v);
	elf_end(elf);
	close(fd);
	if (out->n)
		qsort(out->v, out->n, sizeof *out->v, cmp_plt);
	return 0;
}

void dwq_plts_free(struct dwq_plts *p)
{
	for (size_t i = 0; i < p->n; i++)
		free(p->v[i].name);
	free(p->v);
	p->v = NULL;
	p->n = 0;
}

int dwq_plt_candidates(struct dwq_mod *m, char ***out)
{
	struct slots s = {0};
	GElf_Addr bias;
	Elf *elf = dwfl_module_getelf(dwq_dwfl_module(m), &bias);
	char **v;

	if (elf)
		read_relocs(elf, &s);
	v = calloc(s.n + 1, sizeof *v);
	if (!v)
		abort();
	for (size_t i = 0; i < s.n; i++)
		if (!(v[i] = strdup(s.v[i].name)))
			abort();
	*out = v;
	free(s.v);
	return (int)s.n;
}
