/* The symbol cache: one table per traced process (symbols.h), shared by
 * the context tapset (usymname, ubacktrace, ...) and the call graph.
 *
 * The rule: a cached name holds while the file mapping it came from is
 * still mapped at the same place from the same file, the file known by
 * device and inode through /proc/PID/map_files/ (a library rebuilt over
 * its path and loaded again at the same address is another file). An exec
 * or the end of the process drops the whole table.
 *
 * Every change reaches the cache from one place, the probe hooks
 * (probes/process_probes.c): exec, process gone, and the engine's
 * "libraries changed" (dlopen, dlclose), each after the call graph has
 * named the records it still holds. The engine reports the library
 * changes of a process only when asked to (by the call graph, .library
 * probes), so the hooks ask it for every process with a table, at its
 * first probe hit after the table was opened (_stp_sym_needs_watch), and
 * the mappings are compared then for what changed unseen in between.
 * Lookups never compare: reading /proc/PID/maps costs about as much as a
 * ptrace stop. A comparison stops at the hash of /proc/PID/maps when it is
 * the same; else the names of every range mapped otherwise go (unmapped,
 * mapped anew, or from another file). Not seen: an mmap or munmap of code
 * behind the dynamic linker's back, between two of its changes. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "symbols.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

/* A file mapping: [start, end) of the file dev:ino. */
struct fmap {
	uint64_t start, end;
	unsigned long long dev, ino;
};

struct proc_syms {
	pid_t pid;
	struct _stp_symtab *st;
	uint64_t hash; /* of /proc/PID/maps at the last comparison */
	struct fmap *maps;
	size_t nmaps;
	int watched; /* the engine was asked for its library changes */
};

static struct proc_syms *procs;
static size_t nprocs;

/* The file mappings of pid in address order, and a hash (FNV-1a) of its
 * /proc/PID/maps. The file of each mapping is given by the maps line; the
 * caller asks map_files (identify) only when the hash changed. 0, or -1
 * (gone, out of memory). */
static int read_maps(pid_t pid, uint64_t *hash, struct fmap **out, size_t *nout)
{
	char path[64], line[PATH_MAX + 256];
	uint64_t h = 0xcbf29ce484222325ull;
	struct fmap *v = NULL;
	size_t n = 0, cap = 0;
	FILE *f;

	snprintf(path, sizeof path, "/proc/%d/maps", (int)pid);
	if (!(f = fopen(path, "re")))
		return -1;
	while (fgets(line, sizeof line, f)) {
		unsigned long long lo, hi, ino;
		unsigned maj, min;

		for (const char *c = line; *c; c++)
			h = (h ^ (unsigned char)*c) * 0x100000001b3ull;
		if (sscanf(line, "%llx-%llx %*s %*x %x:%x %llu", &lo, &hi, &maj, &min, &ino) < 5 ||
		    !ino)
			continue;
		if (n == cap) {
			struct fmap *w = realloc(v, (cap = cap ? 2 * cap : 64) * sizeof *w);
			if (!w) {
				free(v);
				fclose(f);
				return -1;
			}
			v = w;
		}
		v[n].start = lo;
		v[n].end = hi;
		v[n].dev = makedev(maj, min);
		v[n++].ino = ino;
	}
	fclose(f);
	*hash = h;
	*out = v;
	*nout = n;
	return 0;
}

/* The file of each mapping by its map_files link (what is mapped,
 * whatever its path names now), where that can be followed. */
static void identify(pid_t pid, struct fmap *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		char link[96];
		struct stat sb;

		snprintf(link, sizeof link, "/proc/%d/map_files/%llx-%llx", (int)pid,
			 (unsigned long long)v[i].start, (unsigned long long)v[i].end);
		if (stat(link, &sb) == 0) {
			v[i].dev = sb.st_dev;
			v[i].ino = sb.st_ino;
		}
	}
}

static int same_map(const struct fmap *a, const struct fmap *b)
{
	return a->start == b->start && a->end == b->end && a->dev == b->dev && a->ino == b->ino;
}

/* Compare p's mappings with those of the last comparison (none: take
 * them as they are, the table being new); forget what changed. */
static void compare(struct proc_syms *p, int baseline)
{
	struct fmap *now;
	size_t nnow, i = 0, j = 0;
	uint64_t h;

	if (read_maps(p->pid, &h, &now, &nnow) < 0)
		return; /* gone (its exit drops the table), or out of memory */
	if (!baseline && h == p->hash) {
		free(now);
		return;
	}
	identify(p->pid, now, nnow);
	/* both lists are in address order */
	while (!baseline && (i < p->nmaps || j < nnow)) {
		const struct fmap *o = i < p->nmaps ? &p->maps[i] : NULL;
		const struct fmap *w = j < nnow ? &now[j] : NULL;

		if (o && (!w || o->start < w->start)) {
			_stp_sym_unmap(p->pid, o->start, o->end);
			i++;
		} else if (!o || w->start < o->start) {
			_stp_sym_unmap(p->pid, w->start, w->end);
			j++;
		} else {
			if (!same_map(o, w)) {
				_stp_sym_unmap(p->pid, o->start, o->end);
				_stp_sym_unmap(p->pid, w->start, w->end);
			}
			i++;
			j++;
		}
	}
	free(p->maps);
	p->maps = now;
	p->nmaps = nnow;
	p->hash = h;
}

static struct proc_syms *find(pid_t pid)
{
	for (size_t i = 0; i < nprocs; i++)
		if (procs[i].pid == pid)
			return &procs[i];
	return NULL;
}

struct _stp_symtab *_stp_sym_of(pid_t pid)
{
	struct proc_syms *p = find(pid), *v;

	if (p)
		return p->st;
	if (!(v = realloc(procs, (nprocs + 1) * sizeof *v)))
		return NULL;
	procs = v;
	p = &procs[nprocs];
	memset(p, 0, sizeof *p);
	if (!(p->st = _stp_sym_open(pid)))
		return NULL;
	p->pid = pid;
	nprocs++;
	compare(p, 1);
	return p->st;
}

int _stp_sym_needs_watch(pid_t pid)
{
	struct proc_syms *p = find(pid);

	return p && !p->watched;
}

void _stp_sym_watching(pid_t pid)
{
	struct proc_syms *p = find(pid);

	if (p && !p->watched) {
		p->watched = 1;
		compare(p, 0);
	}
}

void _stp_sym_unmap(pid_t pid, uint64_t start, uint64_t end)
{
	struct proc_syms *p = find(pid);

	if (p)
		_stp_sym_unmapped(p->st, start, end);
}

void _stp_sym_maps_changed(pid_t pid)
{
	struct proc_syms *p = find(pid);

	if (p)
		compare(p, 0);
}

void _stp_sym_gone(pid_t pid)
{
	struct proc_syms *p = find(pid);

	if (!p)
		return;
	_stp_sym_close(p->st);
	free(p->maps);
	*p = procs[--nprocs];
}

void _stp_sym_exec(pid_t pid)
{
	/* a new image, maybe at the same addresses: nothing of the old holds */
	_stp_sym_gone(pid);
}

void _stp_sym_cache_free(void)
{
	while (nprocs)
		_stp_sym_gone(procs[0].pid);
	free(procs);
	procs = NULL;
}
