/* A module's sections by address (see sectab.h). */
#include "sectab.h"

#include <stdlib.h>
#include <string.h>

struct sec {
	GElf_Addr start, end;
	Elf_Scn *scn;
	size_t order; /* in the section headers */
	int plt;
};

struct _stp_sectab {
	struct sec *s;
	size_t n;
};

static int by_start(const void *a, const void *b)
{
	const struct sec *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	/* libdwfl 0.188 has sections of equal start (.tbss and .init_array)
	 * the later header first: the search below then lands where its does */
	return x->order > y->order ? -1 : x->order < y->order;
}

static int plt_name(const char *n)
{
	return !strncmp(n, ".plt", 4) || !strcmp(n, ".iplt");
}

void _stp_sectab_free(struct _stp_sectab *t)
{
	if (t)
		free(t->s);
	free(t);
}

struct _stp_sectab *_stp_sectab_build(Dwfl_Module *mod)
{
	GElf_Addr bias = 0;
	Elf *elf = dwfl_module_getelf(mod, &bias);
	size_t strndx, nscn;
	struct _stp_sectab *t;
	Elf_Scn *scn = NULL;

	if (!elf || elf_getshdrstrndx(elf, &strndx) < 0 || elf_getshdrnum(elf, &nscn) < 0 ||
	    !(t = calloc(1, sizeof *t)))
		return NULL;
	t->s = calloc(nscn ? nscn : 1, sizeof *t->s);
	if (!t->s) {
		_stp_sectab_free(t);
		return NULL;
	}
	while ((scn = elf_nextscn(elf, scn)) != NULL && t->n < nscn) {
		GElf_Shdr sh;
		const char *name;

		if (!gelf_getshdr(scn, &sh)) {
			t->n = 0; /* libdwfl gives up on the whole module */
			break;
		}
		if (!(sh.sh_flags & SHF_ALLOC))
			continue;
		if (!(name = elf_strptr(elf, strndx, sh.sh_name))) {
			t->n = 0;
			break;
		}
		t->s[t->n] = (struct sec){sh.sh_addr + bias, sh.sh_addr + bias + sh.sh_size, scn,
					  t->n, plt_name(name)};
		t->n++;
	}
	qsort(t->s, t->n, sizeof *t->s, by_start);
	return t;
}

/* libdwfl's search, step for step: which of overlapping sections (.tbss
 * over the next ones) answers depends on where the halving lands. */
static const struct sec *find(const struct _stp_sectab *t, GElf_Addr addr)
{
	size_t l = 0, u = t ? t->n : 0;

	while (l < u) {
		size_t i = (l + u) / 2;

		if (addr < t->s[i].start) {
			u = i;
		} else if (addr > t->s[i].end) {
			l = i + 1;
		} else {
			if (addr == t->s[i].end && i + 1 < t->n && addr == t->s[i + 1].start)
				i++;
			return &t->s[i];
		}
	}
	return NULL;
}

Elf_Scn *_stp_sectab_section(const struct _stp_sectab *t, GElf_Addr addr)
{
	const struct sec *s = find(t, addr);

	return s ? s->scn : NULL;
}

int _stp_sectab_in_plt(const struct _stp_sectab *t, GElf_Addr addr)
{
	const struct sec *s = find(t, addr);

	return s && s->plt;
}
