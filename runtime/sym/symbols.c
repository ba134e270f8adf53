/* Run-time symbolization with libdwfl's linux-proc callbacks. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "symbols.h"

#include "addrtab.h"
#include "sectab.h"

#include <dlfcn.h>
#include <elfutils/libdwfl.h>
#include <gelf.h>
#include <inttypes.h>
#include <limits.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/user.h>
#include <unistd.h>

/* Buckets at first; doubled when the entries outnumber them (the call
 * graph asks for every translated block's start: python3.11's start-up
 * alone makes some 40,000 entries). */
#define SYM_BITS0 12

struct symentry {
	struct symentry *next;
	struct _stp_syminfo info;
	char *name, *file; /* owned copies (the module's: the table's) */
	int line_done;	   /* file/line looked up (lazily: it reads DWARF) */
	/* _stp_sym_cgname's text, made at its first call (the call graph
	 * names every record) */
	char *cgname;
	size_t cglen;
};

struct _stp_symtab {
	pid_t pid;
	Dwfl *dwfl;
	int attached;
	int stale;	    /* re-report modules before the next lookup */
	uint64_t maps_hash; /* of /proc/PID/maps at the last report */
	char *main_path;
	struct symentry **buckets; /* 1 << bits of them */
	unsigned bits;
	size_t n; /* entries */
	/* the modules' paths and names, one copy each for all entries (kept
	 * until the table goes: a handful), the last one asked first */
	struct modname *mods, *lastmod;
};

struct modname {
	struct modname *next;
	char *path, *base;
};

static char *debuginfo_path;
uint64_t _stp_sym_gen; /* of the cached entries: see _stp_sym_generation */

static const Dwfl_Callbacks proc_callbacks = {
    .find_elf = dwfl_linux_proc_find_elf,
    .find_debuginfo = dwfl_standard_find_debuginfo,
    .debuginfo_path = &debuginfo_path,
};

static unsigned bucket_of(const struct _stp_symtab *st, uint64_t addr)
{
	return (unsigned)((addr * 0x9E3779B97F4A7C15ull) >> (64 - st->bits));
}

/* Twice the buckets, the chains' order kept (newest first). */
static void grow(struct _stp_symtab *st)
{
	unsigned nb = 1u << st->bits, bits = st->bits + 1;
	struct symentry **v = calloc((size_t)1 << bits, sizeof *v);
	struct symentry **tail[2];

	if (!v)
		return; /* longer chains, the same answers */
	st->bits = bits;
	for (unsigned b = 0; b < nb; b++) {
		/* an old bucket's entries go to two new ones */
		unsigned lo = 2 * b;
		tail[0] = &v[lo];
		tail[1] = &v[lo + 1];
		for (struct symentry *e = st->buckets[b], *next; e; e = next) {
			unsigned to = bucket_of(st, e->info.addr);
			next = e->next;
			e->next = NULL;
			*tail[to - lo] = e;
			tail[to - lo] = &e->next;
		}
	}
	free(st->buckets);
	st->buckets = v;
}

static void entry_free(struct symentry *e)
{
	free(e->name);
	free(e->file);
	free(e->cgname);
	free(e);
}

/* A module's userdata: its tables, each made at its first use */
struct modinfo {
	struct _stp_addrtab *syms;
	struct _stp_sectab *secs;
	int syms_done, secs_done;
};

static int free_table(Dwfl_Module *mod, void **ud, const char *name, Dwarf_Addr start, void *arg)
{
	struct modinfo *m = *ud;

	(void)mod, (void)name, (void)start, (void)arg;
	if (m) {
		_stp_addrtab_free(m->syms);
		_stp_sectab_free(m->secs);
		free(m);
	}
	*ud = NULL;
	return DWARF_CB_OK;
}

static struct modinfo *info_of(Dwfl_Module *mod)
{
	void **ud = NULL;

	if (!dwfl_module_info(mod, &ud, NULL, NULL, NULL, NULL, NULL, NULL) || !ud)
		return NULL;
	if (!*ud)
		*ud = calloc(1, sizeof(struct modinfo));
	return *ud;
}

/* MOD's sorted symbol table (NULL: none) */
static struct _stp_addrtab *table_of(Dwfl_Module *mod)
{
	struct modinfo *m = info_of(mod);

	if (m && !m->syms_done) {
		m->syms = _stp_addrtab_build(mod);
		m->syms_done = 1;
	}
	return m ? m->syms : NULL;
}

/* MOD's sections by address (NULL: none) */
static struct _stp_sectab *sections_of(Dwfl_Module *mod)
{
	struct modinfo *m = info_of(mod);

	if (m && !m->secs_done) {
		m->secs = _stp_sectab_build(mod);
		m->secs_done = 1;
	}
	return m ? m->secs : NULL;
}

static void drop_dwfl(struct _stp_symtab *st)
{
	if (st->dwfl) {
		dwfl_getmodules(st->dwfl, free_table, NULL, 0);
		dwfl_end(st->dwfl);
	}
	st->dwfl = NULL;
	st->attached = 0;
}

/* FNV-1a of /proc/PID/maps: has anything been mapped or unmapped? */
static uint64_t maps_hash(pid_t pid)
{
	char path[64], buf[4096];
	uint64_t h = 0xcbf29ce484222325ull;
	FILE *f;
	size_t n;

	snprintf(path, sizeof path, "/proc/%d/maps", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	while ((n = fread(buf, 1, sizeof buf, f)) > 0)
		for (size_t i = 0; i < n; i++)
			h = (h ^ (unsigned char)buf[i]) * 0x100000001b3ull;
	fclose(f);
	return h;
}

static int report(struct _stp_symtab *st)
{
	drop_dwfl(st);
	st->maps_hash = maps_hash(st->pid);
	st->stale = 0;
	/* as the translator looks for debug files (dwarf_query.c) */
	debuginfo_path = getenv("SYSTEMTAP_DEBUGINFO_PATH");
	st->dwfl = dwfl_begin(&proc_callbacks);
	if (!st->dwfl)
		return -1;
	dwfl_report_begin(st->dwfl);
	if (dwfl_linux_proc_report(st->dwfl, st->pid) != 0) {
		dwfl_report_end(st->dwfl, NULL, NULL);
		drop_dwfl(st);
		return -1;
	}
	dwfl_report_end(st->dwfl, NULL, NULL);
	return 0;
}

struct _stp_symtab *_stp_sym_open(pid_t pid)
{
	struct _stp_symtab *st = calloc(1, sizeof *st);
	char link[64], exe[PATH_MAX];
	ssize_t n;

	if (!st)
		return NULL;
	st->bits = SYM_BITS0;
	st->buckets = calloc((size_t)1 << st->bits, sizeof *st->buckets);
	if (!st->buckets) {
		free(st);
		return NULL;
	}
	st->pid = pid;
	st->stale = 1;
	snprintf(link, sizeof link, "/proc/%d/exe", (int)pid);
	n = readlink(link, exe, sizeof exe - 1);
	if (n > 0) {
		exe[n] = '\0';
		st->main_path = strdup(exe);
	}
	return st;
}

static void clear_cache(struct _stp_symtab *st, uint64_t start, uint64_t end)
{
	_stp_sym_gen++;
	for (unsigned b = 0; b < 1u << st->bits; b++) {
		struct symentry **pp = &st->buckets[b];

		while (*pp) {
			struct symentry *e = *pp;

			if (e->info.addr >= start && e->info.addr < end) {
				*pp = e->next;
				entry_free(e);
				st->n--;
			} else {
				pp = &e->next;
			}
		}
	}
}

void _stp_sym_close(struct _stp_symtab *st)
{
	if (!st)
		return;
	clear_cache(st, 0, UINT64_MAX);
	drop_dwfl(st);
	for (struct modname *m = st->mods, *next; m; m = next) {
		next = m->next;
		free(m->path);
		free(m->base);
		free(m);
	}
	free(st->main_path);
	free(st->buckets);
	free(st);
}

void _stp_sym_set_main(struct _stp_symtab *st, const char *path)
{
	char real[PATH_MAX];

	free(st->main_path);
	st->main_path = strdup(realpath(path, real) ? real : path);
	clear_cache(st, 0, UINT64_MAX);
}

void _stp_sym_unmapped(struct _stp_symtab *st, uint64_t start, uint64_t end)
{
	clear_cache(st, start, end);
	st->stale = 1;
}

/* ---- demangling: libstdc++'s __cxa_demangle when it can be loaded ---- */

typedef char *(*demangle_fn)(const char *, char *, size_t *, int *);

char *_stp_sym_demangle(const char *name)
{
	static demangle_fn fn;
	static int tried;
	int status = -1;
	char *out;

	if (!name || strncmp(name, "_Z", 2) != 0)
		return NULL;
	if (!tried) {
		void *h;

		tried = 1;
		fn = (demangle_fn)dlsym(RTLD_DEFAULT, "__cxa_demangle");
		if (!fn && (h = dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_LOCAL)))
			fn = (demangle_fn)dlsym(h, "__cxa_demangle");
	}
	if (!fn)
		return NULL;
	out = fn(name, NULL, NULL, &status);
	if (status != 0) {
		free(out);
		return NULL;
	}
	return out;
}

/* ---- lookup ---- */

static const char *base_name(const char *p)
{
	const char *s = strrchr(p, '/');

	return s ? s + 1 : p;
}

/* For "NAME.cold" (gcc's split-off cold part) find NAME in the module. */
static int find_parent(Dwfl_Module *mod, const char *cold, GElf_Addr *addr, GElf_Sym *sym)
{
	size_t len = strlen(cold) - 5;
	struct _stp_addrtab *t = table_of(mod);
	int n;

	if (t) {
		char *parent = strndup(cold, len);
		int found = parent && _stp_addrtab_find_func(t, mod, parent, addr, sym);

		if (parent)
			free(parent);
		return found;
	}
	n = dwfl_module_getsymtab(mod);

	for (int i = 1; i < n; i++) {
		GElf_Sym s;
		GElf_Addr a;
		const char *nm = dwfl_module_getsym_info(mod, i, &s, &a, NULL, NULL, NULL);

		if (nm && strlen(nm) == len && !strncmp(nm, cold, len) && s.st_shndx != SHN_UNDEF &&
		    GELF_ST_TYPE(s.st_info) == STT_FUNC) {
			*addr = a;
			*sym = s;
			return 1;
		}
	}
	return 0;
}

static void fill_symbol(struct symentry *e, Dwfl_Module *mod, uint64_t addr)
{
	GElf_Off off = 0;
	GElf_Sym sym;
	GElf_Addr symaddr = 0;
	const char *nm = _stp_addrtab_addrinfo(table_of(mod), mod, addr, &off, &sym);
	char *plain;
	size_t len;

	if (!nm || !*nm)
		return;
	symaddr = addr - off;
	plain = strdup(nm);
	if (!plain)
		return;
	plain[strcspn(plain, "@")] = '\0';
	len = strlen(plain);
	if (len > 5 && !strcmp(plain + len - 5, ".cold")) {
		GElf_Addr pa;
		GElf_Sym ps;

		if (find_parent(mod, plain, &pa, &ps)) {
			plain[len - 5] = '\0';
			e->info.cold = 1;
			if (addr >= pa) {
				symaddr = pa;
				sym = ps;
			}
		}
	}
	e->name = _stp_sym_demangle(plain);
	if (e->name)
		free(plain);
	else
		e->name = plain;
	e->info.name = e->name;
	e->info.symaddr = symaddr;
	e->info.offset = addr - symaddr;
	e->info.size = sym.st_size;
}

static void fill_line(struct symentry *e, Dwfl_Module *mod, uint64_t addr)
{
	Dwfl_Line *l = dwfl_module_getsrc(mod, addr);
	const char *f;
	int line = 0;

	if (!l)
		return;
	f = dwfl_lineinfo(l, NULL, &line, NULL, NULL, NULL);
	if (!f)
		return;
	e->file = strdup(f);
	e->info.file = e->file;
	e->info.line = line;
}

static const struct modname *modname_of(struct _stp_symtab *st, const char *path)
{
	struct modname *m = st->lastmod;

	if (m && !strcmp(m->path, path))
		return m;
	for (m = st->mods; m && strcmp(m->path, path); m = m->next)
		;
	if (!m) {
		if (!(m = calloc(1, sizeof *m)))
			return NULL;
		m->path = strdup(path);
		m->base = m->path ? strdup(base_name(path)) : NULL;
		if (!m->base) {
			free(m->path);
			free(m);
			return NULL;
		}
		m->next = st->mods;
		st->mods = m;
	}
	return st->lastmod = m;
}

static void fill(struct _stp_symtab *st, struct symentry *e, Dwfl_Module *mod, uint64_t addr)
{
	Dwarf_Addr start = 0, end = 0;
	GElf_Addr bias = 0;
	const char *mainfile = NULL;
	const char *name = dwfl_module_info(mod, NULL, &start, &end, NULL, NULL, &mainfile, NULL);

	if (!name)
		return;
	/* libdwfl names the vDSO "[vdso: PID]": its soname is stable */
	if (!strncmp(name, "[vdso", 5))
		name = "linux-vdso.so.1";
	const struct modname *mn = modname_of(st, name);
	if (!mn)
		return;
	e->info.modpath = mn->path;
	e->info.module = mn->base;
	e->info.modstart = start;
	e->info.modend = end;
	if (dwfl_module_getelf(mod, &bias))
		e->info.modoff = addr - bias;
	else
		e->info.modoff = addr - start;
	if (st->main_path && !strcmp(st->main_path, name))
		e->info.is_main = 1;
	e->info.plt = (uint8_t)_stp_sectab_in_plt(sections_of(mod), addr);
	fill_symbol(e, mod, addr);
}

static __attribute__((noinline)) const struct _stp_syminfo *lookup_miss(struct _stp_symtab *st,
									uint64_t addr)
{
	Dwfl_Module *mod = NULL;
	struct symentry *e;

	/* A miss is once per address. dlopen and dlclose reach us through
	 * the cache's hooks (_stp_sym_unmapped: stale); reading the maps
	 * (about as dear as a ptrace stop) is left for an address in no
	 * module known, which may have been mapped unseen. */
	if (st->stale || !st->dwfl)
		report(st);
	if (st->dwfl && !(mod = dwfl_addrmodule(st->dwfl, addr)) &&
	    maps_hash(st->pid) != st->maps_hash && report(st) == 0)
		mod = dwfl_addrmodule(st->dwfl, addr);
	e = calloc(1, sizeof *e);
	if (!e)
		return NULL;
	e->info.addr = addr;
	if (mod)
		fill(st, e, mod, addr);
	if (++st->n > (size_t)1 << st->bits && st->bits < 24)
		grow(st);
	unsigned b = bucket_of(st, addr);
	e->next = st->buckets[b];
	st->buckets[b] = e;
	return &e->info;
}

/* (the hit is kept a leaf: the call graph asks millions of times) */
const struct _stp_syminfo *_stp_sym_lookup(struct _stp_symtab *st, uint64_t addr)
{
	for (struct symentry *e = st->buckets[bucket_of(st, addr)]; e; e = e->next)
		if (e->info.addr == addr)
			return &e->info;
	return lookup_miss(st, addr);
}

/* ---- formatting ---- */

static size_t put(char *buf, size_t len, int n)
{
	if (n < 0) {
		if (len)
			buf[0] = '\0';
		return 0;
	}
	return (size_t)n < len ? (size_t)n : (len ? len - 1 : 0);
}

size_t _stp_sym_usymdata(struct _stp_symtab *st, uint64_t addr, char *buf, size_t len)
{
	const struct _stp_syminfo *i = _stp_sym_lookup(st, addr);

	/* SystemTap's usymdata names the module by its full path */
	const char *mod = i && i->modpath ? i->modpath : i ? i->module : NULL;

	if (i && i->name && mod)
		return put(buf, len,
			   snprintf(buf, len, "%s+0x%" PRIx64 "/0x%" PRIx64 " [%s]", i->name,
				    i->offset, i->size, mod));
	if (i && i->name)
		return put(
		    buf, len,
		    snprintf(buf, len, "%s+0x%" PRIx64 "/0x%" PRIx64, i->name, i->offset, i->size));
	if (mod)
		return put(buf, len,
			   snprintf(buf, len, "0x%" PRIx64 " [%s+0x%" PRIx64 "/0x%" PRIx64 "]",
				    addr, mod, addr - i->modstart, i->modend - i->modstart));
	return put(buf, len, snprintf(buf, len, "0x%" PRIx64, addr));
}

size_t _stp_sym_usymname(struct _stp_symtab *st, uint64_t addr, char *buf, size_t len)
{
	const struct _stp_syminfo *i = _stp_sym_lookup(st, addr);

	if (i && i->name)
		return put(buf, len, snprintf(buf, len, "%s", i->name));
	return put(buf, len, snprintf(buf, len, "0x%" PRIx64, addr));
}

size_t _stp_sym_umodname(struct _stp_symtab *st, uint64_t addr, char *buf, size_t len)
{
	const struct _stp_syminfo *i = _stp_sym_lookup(st, addr);

	return put(buf, len, snprintf(buf, len, "%s", i && i->module ? i->module : "<unknown>"));
}

static size_t cgname_of(const struct _stp_syminfo *i, uint64_t addr, char *buf, size_t len);

uint64_t _stp_sym_generation(void)
{
	return _stp_sym_gen;
}

const char *_stp_sym_cgname_kept(const struct _stp_syminfo *i, size_t *len)
{
	struct symentry *e =
	    i ? (struct symentry *)((char *)i - offsetof(struct symentry, info)) : NULL;

	/* made whole (C++ names may be kilobytes long) */
	for (size_t cap = 256; e && !e->cgname && cap <= ((size_t)1 << 24); cap *= 2) {
		char *v = malloc(cap);
		size_t n = v ? cgname_of(i, i->addr, v, cap) : 0;
		if (!v)
			break;
		if (n + 1 < cap) {
			e->cgname = v;
			e->cglen = n;
		} else {
			free(v);
		}
	}
	if (!e || !e->cgname)
		return NULL;
	*len = e->cglen;
	return e->cgname;
}

size_t _stp_sym_cgname(struct _stp_symtab *st, uint64_t addr, char *buf, size_t len)
{
	size_t n;
	const char *kept = _stp_sym_cgname_kept(_stp_sym_lookup(st, addr), &n);

	if (!kept)
		return cgname_of(_stp_sym_lookup(st, addr), addr, buf, len);
	/* as put: what fits, and its length */
	if (len) {
		size_t k = n < len ? n : len - 1;
		memcpy(buf, kept, k);
		buf[k] = '\0';
	}
	return n < len ? n : (len ? len - 1 : 0);
}

static size_t cgname_of(const struct _stp_syminfo *i, uint64_t addr, char *buf, size_t len)
{
	char off[32] = "";

	if (!i || !i->module)
		return put(buf, len, snprintf(buf, len, "0x%" PRIx64, addr));
	if (!i->name)
		return put(buf, len, snprintf(buf, len, "%s+0x%" PRIx64, i->module, i->modoff));
	if (i->offset)
		snprintf(off, sizeof off, "+0x%" PRIx64, i->offset);
	if (i->is_main)
		return put(buf, len, snprintf(buf, len, "%s%s", i->name, off));
	return put(buf, len, snprintf(buf, len, "%s%s [%s]", i->name, off, i->module));
}

const struct _stp_syminfo *_stp_sym_lookup_line(struct _stp_symtab *st, uint64_t addr)
{
	const struct _stp_syminfo *i = _stp_sym_lookup(st, addr);
	struct symentry *e;
	Dwfl_Module *mod;

	if (!i)
		return NULL;
	e = (struct symentry *)((char *)i - offsetof(struct symentry, info));
	if (e->line_done || !i->module)
		return i;
	e->line_done = 1;
	if (st->stale || !st->dwfl)
		report(st);
	mod = st->dwfl ? dwfl_addrmodule(st->dwfl, addr) : NULL;
	if (mod)
		fill_line(e, mod, addr);
	return i;
}

size_t _stp_sym_fileline(struct _stp_symtab *st, uint64_t addr, char *buf, size_t len)
{
	const struct _stp_syminfo *i = _stp_sym_lookup_line(st, addr);

	if (!i || !i->file)
		return put(buf, len, snprintf(buf, len, "%s", ""));
	return put(buf, len, snprintf(buf, len, "%s:%d", i->file, i->line));
}

/* ---- unwinding ---- */

struct unwind_acc {
	uint64_t *pcs;
	struct _stp_sym_frame *fr; /* or the frames, with rsp */
	int n, max;
};

static int frame_cb(Dwfl_Frame *state, void *arg)
{
	struct unwind_acc *u = arg;
	Dwarf_Addr pc;
	Dwarf_Word sp = 0;
	bool act = false;

	if (!dwfl_frame_pc(state, &pc, &act))
		return DWARF_CB_ABORT;
	if (u->fr) {
		if (dwfl_frame_reg(state, 7, &sp) != 0)
			sp = 0;
		u->fr[u->n] = (struct _stp_sym_frame){pc, sp, act};
		u->n++;
	} else {
		u->pcs[u->n++] = pc;
	}
	return u->n < u->max ? DWARF_CB_OK : DWARF_CB_ABORT;
}

/* The thread state libdwfl unwinds from: our own callbacks, not
 * dwfl_linux_proc_attach's. Those read the registers with PTRACE_GETREGS
 * (a thread stopped past a breakpoint's int3 has pc = probe + 1, so the
 * CFI row after the function's first instruction is used: at -O2 the
 * return address is read from the wrong slot) and cache the memory they
 * read for as long as the Dwfl stays attached (the stack contents of the
 * first unwind were reused for every later one). Here the registers are
 * the probe's, as the runtime fixed them up, and memory is read afresh. */
struct unwind_state {
	pid_t pid, tid;
	const uint64_t *dregs; /* DWARF x86_64 order: 0..15 then rip (16) */
	int given;	       /* next_thread already returned the thread */
	_stp_sym_read_fn read; /* NULL: /proc/PID/mem */
	void *read_arg;
};

static pid_t uw_next_thread(Dwfl *dwfl, void *arg, void **thread_argp)
{
	struct unwind_state *u = arg;

	(void)dwfl;
	if (u->given)
		return 0;
	u->given = 1;
	*thread_argp = u;
	return u->tid;
}

static bool uw_get_thread(Dwfl *dwfl, pid_t tid, void *arg, void **thread_argp)
{
	struct unwind_state *u = arg;

	(void)dwfl;
	if (tid != u->tid)
		return false;
	*thread_argp = u;
	return true;
}

static bool uw_memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result, void *arg)
{
	struct unwind_state *u = arg;
	Dwarf_Word w;
	char path[64];
	FILE *f;
	size_t n = 0;

	(void)dwfl;
	if (u->read) {
		if (u->read(u->read_arg, addr, &w, sizeof w) < 0)
			return false;
		*result = w;
		return true;
	}
	snprintf(path, sizeof path, "/proc/%d/mem", (int)u->pid);
	f = fopen(path, "re");
	if (!f)
		return false;
	if (fseeko(f, (off_t)addr, SEEK_SET) == 0)
		n = fread(&w, 1, sizeof w, f);
	fclose(f);
	if (n != sizeof w)
		return false;
	*result = w;
	return true;
}

static bool uw_set_initial_registers(Dwfl_Thread *thread, void *thread_arg)
{
	struct unwind_state *u = thread_arg;
	Dwarf_Word r[17];

	for (int i = 0; i < 17; i++)
		r[i] = u->dregs[i];
	if (!dwfl_thread_state_registers(thread, 0, 17, r))
		return false;
	dwfl_thread_state_register_pc(thread, r[16]);
	return true;
}

static const Dwfl_Thread_Callbacks unwind_callbacks = {
    .next_thread = uw_next_thread,
    .get_thread = uw_get_thread,
    .memory_read = uw_memory_read,
    .set_initial_registers = uw_set_initial_registers,
};

static struct unwind_state uw_state;

int _stp_sym_unwind(struct _stp_symtab *st, pid_t tid, const uint64_t *dregs, uint64_t *pcs,
		    int max)
{
	return _stp_sym_unwind_with(st, tid, dregs, NULL, NULL, pcs, max);
}

static int unwind(struct _stp_symtab *st, pid_t tid, const uint64_t *dregs, _stp_sym_read_fn read,
		  void *arg, struct unwind_acc u);

int _stp_sym_unwind_with(struct _stp_symtab *st, pid_t tid, const uint64_t *dregs,
			 _stp_sym_read_fn read, void *arg, uint64_t *pcs, int max)
{
	return unwind(st, tid, dregs, read, arg, (struct unwind_acc){pcs, NULL, 0, max});
}

int _stp_sym_unwind_frames(struct _stp_symtab *st, pid_t tid, const uint64_t *dregs,
			   _stp_sym_read_fn read, void *arg, struct _stp_sym_frame *fr, int max)
{
	return unwind(st, tid, dregs, read, arg, (struct unwind_acc){NULL, fr, 0, max});
}

static int unwind(struct _stp_symtab *st, pid_t tid, const uint64_t *dregs, _stp_sym_read_fn read,
		  void *arg, struct unwind_acc u)
{
	uint64_t own[17];
	int max = u.max;

	if (max <= 0)
		return 0;
	if (!dregs) {
		/* the thread's registers as they are */
		struct user_regs_struct r;

		if (ptrace(PTRACE_GETREGS, tid, NULL, &r) != 0)
			return -1;
		own[0] = r.rax, own[1] = r.rdx, own[2] = r.rcx, own[3] = r.rbx;
		own[4] = r.rsi, own[5] = r.rdi, own[6] = r.rbp, own[7] = r.rsp;
		own[8] = r.r8, own[9] = r.r9, own[10] = r.r10, own[11] = r.r11;
		own[12] = r.r12, own[13] = r.r13, own[14] = r.r14, own[15] = r.r15;
		own[16] = r.rip;
		dregs = own;
	}
	if (st->stale || !st->dwfl || maps_hash(st->pid) != st->maps_hash)
		report(st);
	if (!st->dwfl)
		return -1;
	if (!st->attached) {
		/* the callbacks' argument is fixed at attach: it points at
		 * uw_state, refilled for every unwind */
		if (!dwfl_attach_state(st->dwfl, NULL, st->pid, &unwind_callbacks, &uw_state))
			return -1;
		st->attached = 1;
	}
	uw_state.pid = st->pid;
	uw_state.tid = tid;
	uw_state.dregs = dregs;
	uw_state.given = 0;
	uw_state.read = read;
	uw_state.read_arg = arg;
	if (dwfl_getthread_frames(st->dwfl, tid, frame_cb, &u) != 0 && u.n == 0)
		return -1;
	return u.n;
}

/* ---- module biases ---- */

struct bias_find {
	const char *path;
	uint64_t bias;
	int found;
};

static int bias_cb(Dwfl_Module *mod, void **ud, const char *name, Dwarf_Addr start, void *arg)
{
	struct bias_find *b = arg;
	char real[PATH_MAX];
	GElf_Addr bias;

	(void)ud;
	(void)start;
	if (!name || (strcmp(name, b->path) && (!realpath(name, real) || strcmp(real, b->path))))
		return DWARF_CB_OK;
	if (!dwfl_module_getelf(mod, &bias))
		return DWARF_CB_OK;
	b->bias = bias;
	b->found = 1;
	return DWARF_CB_ABORT;
}

int _stp_sym_module_bias(struct _stp_symtab *st, const char *path, uint64_t *bias)
{
	char real[PATH_MAX];
	struct bias_find b = {realpath(path, real) ? real : path, 0, 0};

	if (st->stale || !st->dwfl || maps_hash(st->pid) != st->maps_hash)
		report(st);
	if (!st->dwfl)
		return -1;
	dwfl_getmodules(st->dwfl, bias_cb, &b, 0);
	if (!b.found)
		return -1;
	*bias = b.bias;
	return 0;
}
