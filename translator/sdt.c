/* .note.stapsdt reader and SDT argument parser (x86-64 AT&T operands). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "sdt.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <gelf.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NT_STAPSDT 3

static void seterr(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void seterr(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (!err || !errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

/* ---- registers ---- */

struct regname {
	const char *name;
	int reg, bits, high;
};

static const struct regname regnames[] = {
    {"rax", 0, 64, 0}, {"eax", 0, 32, 0},  {"ax", 0, 16, 0},  {"al", 0, 8, 0},	 {"ah", 0, 8, 1},
    {"rdx", 1, 64, 0}, {"edx", 1, 32, 0},  {"dx", 1, 16, 0},  {"dl", 1, 8, 0},	 {"dh", 1, 8, 1},
    {"rcx", 2, 64, 0}, {"ecx", 2, 32, 0},  {"cx", 2, 16, 0},  {"cl", 2, 8, 0},	 {"ch", 2, 8, 1},
    {"rbx", 3, 64, 0}, {"ebx", 3, 32, 0},  {"bx", 3, 16, 0},  {"bl", 3, 8, 0},	 {"bh", 3, 8, 1},
    {"rsi", 4, 64, 0}, {"esi", 4, 32, 0},  {"si", 4, 16, 0},  {"sil", 4, 8, 0},	 {"rdi", 5, 64, 0},
    {"edi", 5, 32, 0}, {"di", 5, 16, 0},   {"dil", 5, 8, 0},  {"rbp", 6, 64, 0}, {"ebp", 6, 32, 0},
    {"bp", 6, 16, 0},  {"bpl", 6, 8, 0},   {"rsp", 7, 64, 0}, {"esp", 7, 32, 0}, {"sp", 7, 16, 0},
    {"spl", 7, 8, 0},  {"rip", 16, 64, 0},
};

static int lookup_reg(const char *s, size_t n, int *reg, int *bits, int *high)
{
	char buf[8];

	if (n == 0 || n >= sizeof buf)
		return -1;
	memcpy(buf, s, n);
	buf[n] = '\0';
	for (size_t i = 0; i < sizeof regnames / sizeof regnames[0]; i++)
		if (!strcmp(buf, regnames[i].name)) {
			*reg = regnames[i].reg;
			*bits = regnames[i].bits;
			*high = regnames[i].high;
			return 0;
		}
	/* r8..r15 with an optional d/w/b/l suffix */
	if (buf[0] == 'r' && isdigit((unsigned char)buf[1])) {
		char *e;
		long r = strtol(buf + 1, &e, 10);

		if (r < 8 || r > 15)
			return -1;
		*reg = (int)r;
		*high = 0;
		if (!*e)
			*bits = 64;
		else if (!strcmp(e, "d"))
			*bits = 32;
		else if (!strcmp(e, "w"))
			*bits = 16;
		else if (!strcmp(e, "b") || !strcmp(e, "l"))
			*bits = 8;
		else
			return -1;
		return 0;
	}
	return -1;
}

const char *sdt_reg_name(int reg, int bits, int high)
{
	static const char *const rn[][4] = {
	    {"r8", "r8d", "r8w", "r8b"},     {"r9", "r9d", "r9w", "r9b"},
	    {"r10", "r10d", "r10w", "r10b"}, {"r11", "r11d", "r11w", "r11b"},
	    {"r12", "r12d", "r12w", "r12b"}, {"r13", "r13d", "r13w", "r13b"},
	    {"r14", "r14d", "r14w", "r14b"}, {"r15", "r15d", "r15w", "r15b"},
	};
	int w = bits == 64 ? 0 : bits == 32 ? 1 : bits == 16 ? 2 : 3;

	if (reg >= 8 && reg <= 15)
		return rn[reg - 8][w];
	for (size_t i = 0; i < sizeof regnames / sizeof regnames[0]; i++)
		if (regnames[i].reg == reg && regnames[i].bits == bits && regnames[i].high == high)
			return regnames[i].name;
	return NULL;
}

/* ---- argument strings ---- */

/* "%reg" at *p: advance past it. */
static int parse_reg(const char **p, int *reg, int *bits, int *high)
{
	const char *s = *p, *e;

	if (*s != '%')
		return -1;
	s++;
	for (e = s; isalnum((unsigned char)*e); e++)
		;
	if (lookup_reg(s, (size_t)(e - s), reg, bits, high) < 0)
		return -1;
	*p = e;
	return 0;
}

static int parse_num(const char **p, int64_t *v)
{
	char *e;

	errno = 0;
	*v = strtoll(*p, &e, 0);
	if (e == *p || errno)
		return -1;
	*p = e;
	return 0;
}

/* A displacement as the assembler may leave it: NUM {('+'|'-') NUM}, as
 * in "-12+4(%rbp)". */
static int parse_disp(const char **p, int64_t *v)
{
	int64_t t;

	if (parse_num(p, v) < 0)
		return -1;
	while ((**p == '+' || **p == '-') && isdigit((unsigned char)(*p)[1])) {
		if (parse_num(p, &t) < 0)
			return -1;
		*v += t;
	}
	return 0;
}

/* operand -> [SIZE '@'] ( '%'REG | '$'NUM | [DISP] '(' BASE [',' INDEX [',' SCALE]] ')'
 *            | SYMBOL ['+'|'-' NUM] '(' '%rip' ')' | NUM ) */
static int parse_operand(const char *op, sdt_symbol_lookup lookup, void *larg, struct sdt_arg *a)
{
	const char *p = op, *at = strchr(op, '@');
	int64_t v;
	int bits, high;

	memset(a, 0, sizeof *a);
	a->index = SDT_REG_NONE;
	a->reg = SDT_REG_NONE;
	a->scale = 1;
	a->size = 8;
	a->is_signed = 1;
	a->text = strdup(op);
	if (at) {
		const char *q = op;
		int64_t sz;

		if (parse_num(&q, &sz) < 0 || q != at)
			return -1;
		a->is_signed = sz < 0;
		a->size = (int)(sz < 0 ? -sz : sz);
		if (a->size != 1 && a->size != 2 && a->size != 4 && a->size != 8)
			return -1;
		p = at + 1;
	}
	if (*p == '%') {
		a->kind = SDT_ARG_REG;
		if (parse_reg(&p, &a->reg, &a->reg_bits, &a->reg_high) < 0 || *p)
			return -1;
		return 0;
	}
	if (*p == '$') {
		p++;
		a->kind = SDT_ARG_CONST;
		return parse_num(&p, &a->offset) < 0 || *p ? -1 : 0;
	}
	if (isalpha((unsigned char)*p) || *p == '_' || *p == '.') {
		/* SYMBOL[+-N](%rip), or SYMBOL[+-N](,%INDEX[,SCALE]) in a
		 * fixed-address program */
		const char *s = p;
		uint64_t addr;

		while (isalnum((unsigned char)*p) || *p == '_' || *p == '.' || *p == '$')
			p++;
		a->symbol = strndup(s, (size_t)(p - s));
		v = 0;
		if ((*p == '+' || *p == '-') && parse_disp(&p, &v) < 0)
			return -1;
		if (!lookup || lookup(larg, a->symbol, &addr) < 0)
			return -1;
		a->offset = (int64_t)(addr + (uint64_t)v);
		if (!strncmp(p, "(,", 2)) {
			p++;
			goto index;
		}
		if (strcmp(p, "(%rip)") != 0)
			return -1;
		a->kind = SDT_ARG_ABS;
		return 0;
	}
	v = 0;
	if (*p != '(' && parse_disp(&p, &v) < 0)
		return -1;
	a->offset = v;
	if (!*p) {
		/* a bare number: an absolute address */
		a->kind = SDT_ARG_ABS;
		return 0;
	}
	if (*p++ != '(')
		return -1;
	if (*p == ',')
		goto index; /* DISP(,%INDEX,SCALE): no base */
	if (parse_reg(&p, &a->reg, &bits, &high) < 0)
		return -1;
	a->reg_bits = bits;
index:
	a->kind = SDT_ARG_MEM;
	if (*p == ',') {
		int64_t sc = 1;

		p++;
		if (parse_reg(&p, &a->index, &bits, &high) < 0)
			return -1;
		if (*p == ',') {
			p++;
			if (parse_num(&p, &sc) < 0 || (sc != 1 && sc != 2 && sc != 4 && sc != 8))
				return -1;
		}
		a->scale = (int)sc;
	}
	if (strcmp(p, ")") != 0)
		return -1;
	return 0;
}

void sdt_args_free(struct sdt_arg *args, int nargs)
{
	for (int i = 0; i < nargs; i++) {
		free(args[i].text);
		free(args[i].symbol);
	}
	free(args);
}

int sdt_parse_args(const char *text, sdt_symbol_lookup lookup, void *lookup_arg,
		   struct sdt_arg **args, int *nargs, char *err, size_t errlen)
{
	char *copy = strdup(text ? text : ""), *save = NULL, *op;
	struct sdt_arg *v = NULL;
	int n = 0;

	*args = NULL;
	*nargs = 0;
	for (op = strtok_r(copy, " \t", &save); op; op = strtok_r(NULL, " \t", &save)) {
		v = realloc(v, (size_t)(n + 1) * sizeof *v);
		if (!v)
			abort();
		if (parse_operand(op, lookup, lookup_arg, &v[n]) < 0) {
			seterr(err, errlen, "cannot parse SDT argument %d '%s'", n + 1, op);
			sdt_args_free(v, n + 1);
			free(copy);
			return -1;
		}
		n++;
	}
	free(copy);
	*args = v;
	*nargs = n;
	return 0;
}

/* ---- notes ---- */

struct elfsyms {
	Elf *elf;
};

static int elf_lookup(void *arg, const char *name, uint64_t *vaddr)
{
	Elf *elf = ((struct elfsyms *)arg)->elf;
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) ||
		    (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM) || !sh.sh_entsize ||
		    !(d = elf_getdata(scn, NULL)))
			continue;
		for (size_t i = 1; i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym s;
			const char *nm;

			if (!gelf_getsym(d, (int)i, &s))
				break;
			if (s.st_shndx == SHN_UNDEF)
				continue;
			nm = elf_strptr(elf, sh.sh_link, s.st_name);
			if (nm && !strcmp(nm, name)) {
				*vaddr = s.st_value;
				return 0;
			}
		}
	}
	return -1;
}

static int section_addr(Elf *elf, const char *want, uint64_t *addr)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;

	if (elf_getshdrstrndx(elf, &shstrndx) != 0)
		return -1;
	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr sh;
		const char *nm;

		if (gelf_getshdr(scn, &sh) && (nm = elf_strptr(elf, shstrndx, sh.sh_name)) &&
		    !strcmp(nm, want)) {
			*addr = sh.sh_addr;
			return 0;
		}
	}
	return -1;
}

static uint64_t get_addr(const unsigned char *p, int is64)
{
	if (is64) {
		uint64_t v;

		memcpy(&v, p, 8);
		return v;
	} else {
		uint32_t v;

		memcpy(&v, p, 4);
		return v;
	}
}

static void add_probe(struct sdt_probes *out, size_t *cap, Elf *elf, const unsigned char *desc,
		      size_t len, int is64, int have_base, uint64_t base_addr)
{
	size_t w = is64 ? 8 : 4;
	const char *prov, *name, *args, *end = (const char *)desc + len;
	struct sdt_probe *p;
	uint64_t pc, base, sem;
	struct elfsyms es = {elf};

	if (len < 3 * w + 3)
		return;
	pc = get_addr(desc, is64);
	base = get_addr(desc + w, is64);
	sem = get_addr(desc + 2 * w, is64);
	prov = (const char *)desc + 3 * w;
	name = memchr(prov, '\0', (size_t)(end - prov));
	if (!name || ++name >= end)
		return;
	args = memchr(name, '\0', (size_t)(end - name));
	if (!args || ++args > end)
		return;
	if (args == end || !memchr(args, '\0', (size_t)(end - args)))
		args = "";
	if (have_base && base) {
		pc += base_addr - base;
		if (sem)
			sem += base_addr - base;
	}
	if (out->n == *cap) {
		*cap = *cap ? *cap * 2 : 16;
		out->v = realloc(out->v, *cap * sizeof *out->v);
		if (!out->v)
			abort();
	}
	p = &out->v[out->n++];
	memset(p, 0, sizeof *p);
	p->provider = strdup(prov);
	p->name = strdup(name);
	p->pc = pc;
	p->semaphore = sem;
	p->args_text = strdup(args);
	if (sdt_parse_args(args, elf_lookup, &es, &p->args, &p->nargs, NULL, 0) < 0)
		p->nargs = -1;
}

int sdt_read(const char *path, struct sdt_probes *out, char *err, size_t errlen)
{
	int fd;
	Elf *elf;
	Elf_Scn *scn = NULL;
	uint64_t base_addr = 0;
	int have_base, is64;
	size_t cap = 0;

	memset(out, 0, sizeof *out);
	elf_version(EV_CURRENT);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		seterr(err, errlen, "cannot open %s: %s", path, strerror(errno));
		return -1;
	}
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF) {
		seterr(err, errlen, "%s is not an ELF file", path);
		if (elf)
			elf_end(elf);
		close(fd);
		return -1;
	}
	is64 = gelf_getclass(elf) == ELFCLASS64;
	have_base = section_addr(elf, ".stapsdt.base", &base_addr) == 0;
	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr sh;
		Elf_Data *d;
		GElf_Nhdr nh;
		size_t off = 0, noff, doff;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE ||
		    !(d = elf_getdata(scn, NULL)))
			continue;
		while ((off = gelf_getnote(d, off, &nh, &noff, &doff)) > 0) {
			if (nh.n_type != NT_STAPSDT || nh.n_namesz != 8 ||
			    memcmp((char *)d->d_buf + noff, "stapsdt", 8) != 0)
				continue;
			add_probe(out, &cap, elf, (const unsigned char *)d->d_buf + doff,
				  nh.n_descsz, is64, have_base, base_addr);
		}
	}
	elf_end(elf);
	close(fd);
	return 0;
}

void sdt_free(struct sdt_probes *p)
{
	for (size_t i = 0; i < p->n; i++) {
		free(p->v[i].provider);
		free(p->v[i].name);
		free(p->v[i].args_text);
		if (p->v[i].nargs > 0)
			sdt_args_free(p->v[i].args, p->v[i].nargs);
	}
	free(p->v);
	p->v = NULL;
	p->n = 0;
}

int sdt_name_matches(const char *pattern, const char *name)
{
	char buf[512];
	size_t o = 0;

	if (!fnmatch(pattern, name, 0))
		return 1;
	for (const char *p = pattern; *p && o + 3 < sizeof buf; p++) {
		if (*p == '-') {
			buf[o++] = '_';
			buf[o++] = '_';
		} else {
			buf[o++] = *p;
		}
	}
	buf[o] = '\0';
	return !fnmatch(buf, name, 0);
}
