/* .library("LIB"): find shared libraries as the dynamic loader would for
 * a given executable (simple cases: DT_RPATH, LD_LIBRARY_PATH,
 * DT_RUNPATH with $ORIGIN, /etc/ld.so.cache, the default directories;
 * no hwcaps subdirectories, no dlopen'ed libraries). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "dwarf_query.h"

#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <gelf.h>
#include <libgen.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

struct strv {
	char **v;
	int n, cap;
};

static void sv_push(struct strv *s, char *str)
{
	if (s->n == s->cap) {
		s->cap = s->cap ? s->cap * 2 : 16;
		s->v = realloc(s->v, (size_t)s->cap * sizeof *s->v);
		if (!s->v)
			abort();
	}
	s->v[s->n++] = str;
}

static int sv_has(const struct strv *s, const char *str)
{
	for (int i = 0; i < s->n; i++)
		if (!strcmp(s->v[i], str))
			return 1;
	return 0;
}

void dwq_free_strv(char **v, int n)
{
	for (int i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

struct dyninfo {
	struct strv needed;
	char *rpath, *runpath;
	int is64;
	int soname, interp, is_dyn; /* DT_SONAME, PT_INTERP, ET_DYN */
	char *interp_path;	    /* PT_INTERP's text */
};

static void read_dynamic(const char *path, struct dyninfo *di)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	Elf *elf;
	Elf_Scn *scn = NULL;

	memset(di, 0, sizeof *di);
	if (fd < 0)
		return;
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf) {
		close(fd);
		return;
	}
	di->is64 = gelf_getclass(elf) == ELFCLASS64;
	GElf_Ehdr eh;
	size_t nph = 0;
	di->is_dyn = gelf_getehdr(elf, &eh) && eh.e_type == ET_DYN;
	for (size_t i = 0; elf_getphdrnum(elf, &nph) == 0 && i < nph; i++) {
		GElf_Phdr ph;
		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_INTERP) {
			char buf[PATH_MAX];
			di->interp = 1;
			if (!di->interp_path && ph.p_filesz && ph.p_filesz < sizeof buf &&
			    pread(fd, buf, ph.p_filesz, (off_t)ph.p_offset) == (ssize_t)ph.p_filesz)
				di->interp_path = strndup(buf, ph.p_filesz);
		}
	}
	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNAMIC || !sh.sh_entsize)
			continue;
		d = elf_getdata(scn, NULL);
		for (size_t i = 0; d && i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Dyn dyn;
			const char *s;

			if (!gelf_getdyn(d, (int)i, &dyn) || dyn.d_tag == DT_NULL)
				break;
			di->soname |= dyn.d_tag == DT_SONAME;
			if (dyn.d_tag != DT_NEEDED && dyn.d_tag != DT_RPATH &&
			    dyn.d_tag != DT_RUNPATH)
				continue;
			s = elf_strptr(elf, sh.sh_link, dyn.d_un.d_val);
			if (!s)
				continue;
			if (dyn.d_tag == DT_NEEDED)
				sv_push(&di->needed, strdup(s));
			else if (dyn.d_tag == DT_RPATH && !di->rpath)
				di->rpath = strdup(s);
			else if (dyn.d_tag == DT_RUNPATH && !di->runpath)
				di->runpath = strdup(s);
		}
	}
	elf_end(elf);
	close(fd);
}

static void dyninfo_free(struct dyninfo *di)
{
	dwq_free_strv(di->needed.v, di->needed.n);
	free(di->rpath);
	free(di->runpath);
	free(di->interp_path);
}

/* ET_DYN with a DT_SONAME, or without a PT_INTERP (a PIE has an
 * interpreter and no soname; libc.so.6 has both and is a library; ld.so
 * has neither). */
int dwq_is_shared_library(const char *path)
{
	struct dyninfo di;
	if (!path)
		return 0;
	read_dynamic(path, &di);
	int lib = di.is_dyn && (di.soname || !di.interp);
	dyninfo_free(&di);
	return lib;
}

static int is_file(const char *p)
{
	struct stat st;

	return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

/* dwq_needed_names: paths as the search found them, not canonical */
static int as_found;

static char *canon(const char *p)
{
	char buf[PATH_MAX];

	if (!realpath(p, buf))
		return NULL;
	return strdup(as_found ? p : buf);
}

/* Search a colon-separated list of directories, expanding $ORIGIN. */
static char *search_dirs(const char *list, const char *origin, const char *name)
{
	char *copy, *save = NULL, *dir, *found = NULL;

	if (!list || !*list)
		return NULL;
	copy = strdup(list);
	for (dir = strtok_r(copy, ":", &save); dir && !found; dir = strtok_r(NULL, ":", &save)) {
		char path[PATH_MAX];
		const char *o = strstr(dir, "$ORIGIN");

		if (o)
			snprintf(path, sizeof path, "%.*s%s%s/%s", (int)(o - dir), dir, origin,
				 o + 7, name);
		else
			snprintf(path, sizeof path, "%s/%s", dir, name);
		if (is_file(path))
			found = canon(path);
	}
	free(copy);
	return found;
}

/* /etc/ld.so.cache, "glibc-ld.so.cache1.1" format: a 48-byte header
 * (magic, version, nlibs, string-table length, flags, extension offset)
 * then 24-byte entries (flags, key offset, value offset, osversion,
 * hwcap); offsets count from the start of the file. */
static char *search_cache(const char *name)
{
	static const char magic[] = "glibc-ld.so.cache1.1";
	int fd = open("/etc/ld.so.cache", O_RDONLY | O_CLOEXEC);
	struct stat st;
	const unsigned char *p;
	char *found = NULL;
	uint32_t nlibs;

	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) < 0 || st.st_size < 48) {
		close(fd);
		return NULL;
	}
	p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (p == MAP_FAILED)
		return NULL;
	if (memcmp(p, magic, sizeof magic - 1) != 0)
		goto out;
	memcpy(&nlibs, p + 20, 4);
	for (uint32_t i = 0; i < nlibs; i++) {
		size_t e = 48 + (size_t)i * 24;
		uint32_t key, value;
		const char *k;

		if (e + 24 > (size_t)st.st_size)
			break;
		memcpy(&key, p + e + 4, 4);
		memcpy(&value, p + e + 8, 4);
		if (key >= (size_t)st.st_size || value >= (size_t)st.st_size)
			continue;
		k = (const char *)p + key;
		if (strnlen(k, (size_t)st.st_size - key) == (size_t)st.st_size - key)
			continue;
		if (!strcmp(k, name) && is_file((const char *)p + value)) {
			found = canon((const char *)p + value);
			break;
		}
	}
out:
	munmap((void *)p, (size_t)st.st_size);
	return found;
}

static const char *const default_dirs =
    "/lib/x86_64-linux-gnu:/usr/lib/x86_64-linux-gnu:/lib64:/usr/lib64:/lib:/usr/lib";

/* One DT_NEEDED name, needed by an object whose own dynamic info is DI
 * and whose directory is ORIGIN. */
static char *resolve_needed(const char *name, const struct dyninfo *di, const char *origin)
{
	char *p;

	if (strchr(name, '/'))
		return is_file(name) ? canon(name) : NULL;
	if (!di->runpath && (p = search_dirs(di->rpath, origin, name)))
		return p;
	if ((p = search_dirs(getenv("LD_LIBRARY_PATH"), origin, name)))
		return p;
	if ((p = search_dirs(di->runpath, origin, name)))
		return p;
	if ((p = search_cache(name)))
		return p;
	return search_dirs(default_dirs, origin, name);
}

/* Breadth-first over EXE's DT_NEEDED; with as_found set, the paths as
 * found, one per file (ids: their canonical paths), the interpreter of
 * EXE, when needed, named by its PT_INTERP (as ldd names them). */
static int closure(const char *exe, char ***out, char *err, size_t errlen)
{
	struct strv done = {0}, ids = {0};
	char *first = canon(exe);

	*out = NULL;
	if (!first) {
		dwq_seterr(err, errlen, "cannot find executable %s: %s", exe, strerror(errno));
		return -1;
	}
	char id0[PATH_MAX], interp_id[PATH_MAX];
	char *interp = NULL;
	sv_push(&done, first);
	sv_push(&ids, strdup(realpath(first, id0) ? id0 : first));
	/* done.v[0] is EXE itself; breadth-first over the rest. */
	for (int i = 0; i < done.n; i++) {
		struct dyninfo di;
		char *dircopy = strdup(done.v[i]);
		const char *origin = dirname(dircopy);
		char buf[PATH_MAX];

		read_dynamic(done.v[i], &di);
		if (as_found && i == 0 && di.interp_path && realpath(di.interp_path, interp_id))
			interp = strdup(di.interp_path);
		for (int k = 0; k < di.needed.n; k++) {
			char *p = resolve_needed(di.needed.v[k], &di, origin);
			char *id = p && realpath(p, buf) ? buf : p;

			if (p && interp && !strcmp(id, interp_id)) {
				/* the loader has it already, by this name */
				free(p);
				p = strdup(interp);
			}
			if (p && !sv_has(&done, p) && !sv_has(&ids, id)) {
				sv_push(&ids, strdup(id));
				sv_push(&done, p);
			} else {
				free(p);
			}
		}
		dyninfo_free(&di);
		free(dircopy);
	}
	dwq_free_strv(ids.v, ids.n);
	free(interp);
	free(done.v[0]);
	memmove(done.v, done.v + 1, (size_t)(done.n - 1) * sizeof *done.v);
	*out = done.v;
	return done.n - 1;
}

int dwq_needed_closure(const char *exe, char ***out, char *err, size_t errlen)
{
	return closure(exe, out, err, errlen);
}

int dwq_needed_names(const char *exe, char ***out, char *err, size_t errlen)
{
	as_found = 1;
	int n = closure(exe, out, err, errlen);
	as_found = 0;
	return n;
}

/* A name or pattern matches a library's file name, as in SystemTap:
 * "libc.so.6" or "libc.so*" names libc, "libc" or "libc.so" does not. */
static int lib_name_matches(const char *want, const char *path)
{
	const char *base = strrchr(path, '/');

	base = base ? base + 1 : path;
	return !strcmp(want, base) || !fnmatch(want, base, 0);
}

char *dwq_find_library(const char *exe, const char *lib, char *err, size_t errlen)
{
	char **libs;
	char *found = NULL;
	int n;

	if (strchr(lib, '/')) {
		found = is_file(lib) ? canon(lib) : NULL;
		if (!found)
			dwq_seterr(err, errlen, "cannot find library %s: %s", lib,
				   strerror(ENOENT));
		return found;
	}
	n = exe ? dwq_needed_names(exe, &libs, err, errlen) : 0;
	if (n < 0)
		return NULL;
	/* by its file's name first, then by the name it was found by
	 * ("libz.so.1", a link to the file) */
	for (int pass = 0; pass < 2 && !found; pass++)
		for (int i = 0; i < n && !found; i++) {
			char *real = canon(libs[i]);

			if (real && lib_name_matches(lib, pass ? libs[i] : real))
				found = real;
			else
				free(real);
		}
	if (exe)
		dwq_free_strv(libs, n);
	/* A name applies to the libraries the program needs (stapprobes(3):
	 * "statically determined to be in use"); any other takes its path. */
	if (!found && !exe) {
		struct dyninfo none;

		memset(&none, 0, sizeof none);
		found = resolve_needed(lib, &none, ".");
	}
	if (!found)
		dwq_seterr(err, errlen, "cannot find library %s%s%s", lib, exe ? " needed by " : "",
			   exe ? exe : "");
	return found;
}

int dwq_library_named_directly(const char *lib)
{
	char *p;
	int found;

	if (strpbrk(lib, "*?["))
		return 0;
	if (strchr(lib, '/') || is_file(lib))
		return 1;
	p = search_dirs(getenv("LD_LIBRARY_PATH"), ".", lib);
	found = p != NULL;
	free(p);
	return found;
}

/* A glob, or a bare name ld.so.cache knows, becomes the file found; a
 * path or another name stays as written (SystemTap rewrites only what
 * its own search resolved). */
char *dwq_library_pn(const char *lib, const char *found)
{
	char *p;

	if (strpbrk(lib, "*?["))
		return strdup(found);
	if (strchr(lib, '/'))
		return strdup(lib);
	p = search_cache(lib);
	return p ? p : strdup(lib);
}

char *dwq_find_executable(const char *name, char *err, size_t errlen)
{
	const char *path = getenv("PATH");
	char *copy, *save = NULL, *dir, *found = NULL;

	if (strchr(name, '/')) {
		found = is_file(name) ? canon(name) : NULL;
		if (!found)
			dwq_seterr(err, errlen, "cannot find executable '%s'", name);
		return found;
	}
	copy = strdup(path && *path ? path : "/usr/local/bin:/usr/bin:/bin");
	for (dir = strtok_r(copy, ":", &save); dir && !found; dir = strtok_r(NULL, ":", &save)) {
		char full[PATH_MAX];

		snprintf(full, sizeof full, "%s/%s", *dir ? dir : ".", name);
		if (is_file(full) && access(full, X_OK) == 0)
			found = canon(full);
	}
	free(copy);
	/* as SystemTap: else a program of that name in the current directory */
	if (!found && is_file(name))
		found = canon(name);
	if (!found)
		dwq_seterr(err, errlen, "cannot find executable '%s'", name);
	return found;
}
