/* Thread-local variables (@var of a __thread variable): the thread's
 * block of the module's TLS, found as glibc lays it out on x86-64 (the
 * TLS ABI's variant II, "ELF Handling For Thread-Local Storage"): the
 * thread pointer (fs base) points at the TCB, whose second word is the
 * thread's DTV; entry N of the DTV (16 bytes each, the length in entry
 * -1) holds the address of the block of the module whose TLS module ID
 * is N. Module IDs are given in load order to the modules that have a
 * PT_TLS segment, the executable first: the dynamic linker's list
 * (r_debug, through the executable's DT_DEBUG) is walked in that order.
 * libthread_db is not used. Only blocks in the static TLS area (the
 * executable's and the libraries loaded at start, and those of
 * initial-exec libraries) are read: a block the DTV gives elsewhere was
 * allocated for a library loaded by dlopen, whose module ID this count
 * cannot be sure of after a dlclose, and is refused. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "lang/stp_internal.h"
#include "context_internal.h"
#include "sym/symbols.h"

#include <elf.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* struct r_debug and struct link_map (<link.h>, 64-bit): the fields read */
#define R_MAP 8
#define L_NAME 8
#define L_NEXT 24
#define TCB_DTV 8
#define DTV_SLOT 16
#define DTV_UNALLOCATED ((uint64_t)-1)
/* far more than glibc's static TLS area (its initial modules' blocks and
 * a surplus of a few KiB) can be */
#define STATIC_TLS_MAX (16u << 20)

/* What the file of a module says: its PT_TLS size, PT_DYNAMIC vaddr. */
struct elfinfo {
	char *path; /* realpath */
	int ok;
	uint64_t tls_memsz, dyn_vaddr;
};

static struct elfinfo *infos;
static size_t ninfos;

/* The module IDs found, per process and file (a realpath) */
static struct _stp_ctx_modfacts modids;

static void read_phdrs(struct elfinfo *e)
{
	int fd = open(e->path, O_RDONLY | O_CLOEXEC);
	Elf *elf;
	size_t n;

	if (fd < 0)
		return;
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (elf && elf_getphdrnum(elf, &n) == 0) {
		e->ok = 1;
		for (size_t i = 0; i < n; i++) {
			GElf_Phdr ph;
			if (!gelf_getphdr(elf, (int)i, &ph))
				continue;
			if (ph.p_type == PT_TLS)
				e->tls_memsz = ph.p_memsz;
			else if (ph.p_type == PT_DYNAMIC)
				e->dyn_vaddr = ph.p_vaddr;
		}
	}
	if (elf)
		elf_end(elf);
	close(fd);
}

/* The facts of the file at PATH (read once per file), NULL if not ELF. */
static const struct elfinfo *elf_info(const char *path)
{
	char real[PATH_MAX];
	struct elfinfo *v;

	if (!realpath(path, real))
		return NULL;
	for (size_t i = 0; i < ninfos; i++)
		if (!strcmp(infos[i].path, real))
			return infos[i].ok ? &infos[i] : NULL;
	if (!(v = realloc(infos, (ninfos + 1) * sizeof *v)))
		return NULL;
	infos = v;
	v = &infos[ninfos];
	memset(v, 0, sizeof *v);
	if (!(v->path = strdup(real)))
		return NULL;
	ninfos++;
	read_phdrs(v);
	return v->ok ? v : NULL;
}

static int read8(struct _stp_context *c, uint64_t addr, uint64_t *v)
{
	return _stp_ctx_read_target_quiet(c, addr, v, sizeof *v);
}

/* The address of the process's r_debug, 0 when unknown. */
static uint64_t r_debug_of(struct _stp_context *c, const char *exe)
{
	struct _stp_symtab *st = _stp_sym_of((pid_t)_stp_ctx_pid(c));
	const struct elfinfo *e = elf_info(exe);
	uint64_t bias, d[2];

	if (!st || !e || !e->dyn_vaddr || _stp_sym_module_bias(st, exe, &bias) < 0)
		return 0;
	for (uint64_t a = bias + e->dyn_vaddr; read8(c, a, &d[0]) == 0; a += 16) {
		if (d[0] == DT_NULL || read8(c, a + 8, &d[1]) < 0)
			return 0;
		if (d[0] == DT_DEBUG)
			return d[1];
	}
	return 0;
}

/* The TLS module ID of the module whose file is REAL (a realpath) in the
 * process whose executable is EXE: 0 when it has no TLS or is not
 * loaded, -1 when the dynamic linker's list cannot be read. */
static int64_t tls_modid(struct _stp_context *c, const char *exe, const char *real)
{
	uint64_t rd = r_debug_of(c, exe), lm;
	int64_t id = 0;

	if (!rd || read8(c, rd + R_MAP, &lm) < 0)
		return -1;
	for (int n = 0; lm && n < 4096; n++) {
		uint64_t np, next;
		char name[PATH_MAX] = "";
		const struct elfinfo *e;

		if (read8(c, lm + L_NAME, &np) < 0 || read8(c, lm + L_NEXT, &next) < 0)
			return -1;
		if (np)
			(void)_stp_ctx_read_cstr(c, np, name, sizeof name);
		/* the executable's entry is the first, with an empty name */
		e = elf_info(n == 0 && !name[0] ? exe : name);
		if (e && e->tls_memsz) {
			id++;
			if (!strcmp(e->path, real))
				return id;
		}
		lm = next;
	}
	return 0;
}

static int64_t tls_modid_cached(struct _stp_context *c, const char *exe, const char *real)
{
	struct _stp_ctx_modfact *f = _stp_ctx_modfact(&modids, (pid_t)_stp_ctx_pid(c), real);
	int64_t id;

	if (f && _stp_ctx_modfact_fresh(f))
		return (int64_t)f->value;
	id = tls_modid(c, exe, real);
	if (f && id >= 0)
		_stp_ctx_modfact_set(f, 1, (uint64_t)id);
	return id;
}

int _stp_ctx_tls_addr(struct _stp_context *c, const char *path, uint64_t offset, uint64_t *addr)
{
	struct _stp_tctx *tc = c ? (struct _stp_tctx *)c->target : NULL;
	char link[64], exe[PATH_MAX];
	uint64_t ignored, dtv, len, block, memsz;
	char real[PATH_MAX];
	const struct elfinfo *e;
	int64_t id;
	ssize_t n;

	*addr = 0;
	if (!tc || !tc->ops) {
		_stp_error(c, "cannot access thread-local variables in this probe");
		return -1;
	}
	if (_stp_ctx_reg(c, 16, &ignored) < 0) /* fills tc->regs */
		return -1;
	uint64_t tp = tc->regs.fs_base;
	/* with its error: a fault, or memory the backend has not at this event */
	if (_stp_ctx_read_target(c, tp + TCB_DTV, &dtv, sizeof dtv) < 0)
		return -1;
	snprintf(link, sizeof link, "/proc/%d/exe", (int)tc->pid);
	if ((n = readlink(link, exe, sizeof exe - 1)) <= 0) {
		_stp_error(c, "cannot read the executable of process %d", (int)tc->pid);
		return -1;
	}
	exe[n] = '\0';
	if (!(e = elf_info(path)) || !e->tls_memsz) {
		_stp_error(c, "module %s has no thread-local storage", path);
		return -1;
	}
	/* (copies: the table moves when more files are read) */
	memsz = e->tls_memsz;
	snprintf(real, sizeof real, "%s", e->path);
	if ((id = tls_modid_cached(c, exe, real)) < 0) {
		_stp_error(c, "cannot read the dynamic linker's list of modules of process %d",
			   (int)tc->pid);
		return -1;
	}
	if (id == 0) {
		_stp_error(c, "module %s is not mapped in process %d", path, (int)tc->pid);
		return -1;
	}
	if (read8(c, dtv - DTV_SLOT, &len) < 0 || (uint64_t)id > len ||
	    read8(c, dtv + DTV_SLOT * (uint64_t)id, &block) < 0 || block == DTV_UNALLOCATED) {
		_stp_error(c, "thread-local storage of %s is not allocated in thread %d", path,
			   (int)tc->tid);
		return -1;
	}
	if (block > tp || block + memsz > tp || tp - block > STATIC_TLS_MAX) {
		_stp_error(c,
			   "thread-local storage of %s is not in the static TLS area (a library "
			   "loaded by dlopen): not supported",
			   path);
		return -1;
	}
	*addr = block + offset;
	return 0;
}

void _stp_ctx_tls_free(void)
{
	for (size_t i = 0; i < ninfos; i++)
		free(infos[i].path);
	free(infos);
	infos = NULL;
	ninfos = 0;
	_stp_ctx_modfacts_free(&modids);
}
