/* .library probes: placed in a process when it maps the library (at
 * start, or by dlopen) at its load bias, removed when it unmaps it
 * (dlclose); the engine tells of both at the dynamic linker's
 * breakpoint. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "lang/stp_internal.h"
#include "probes_internal.h"
#include "sym/symbols.h"
#include "dcg/dcg.h"
#include "run/buildid.h"

#include <stdlib.h>
#include <string.h>

/* A .library probe placed in one process at one load of its library. */
struct libplace {
	int probe;		  /* index in M->probes */
	uint64_t bias;		  /* the library's load bias */
	struct _stp_pt_probe *pr; /* NULL in a fork child (a copy it has) */
	int seen;
};

/* Per probe: the image its library is (the translator names a -x
 * process's image by /proc/PID/map_files when the file at the path is
 * another one now), its realpath (NULL: not a .library probe), and its
 * build ID (another copy of it, dlopened, is probed as it). */
static struct _stp_fileid *libid;
static char **libreal;
struct buildid {
	size_t len;
	unsigned char id[64];
};
static struct buildid *libbid;

/* The build IDs of the libraries loaded, by file (each read once). */
struct bidfile {
	struct _stp_fileid file;
	struct buildid bid;
};
static struct bidfile *bidfiles;
static size_t nbidfiles;

/* The build ID of the file at path, which is file. */
static const struct buildid *loaded_build_id(const struct _stp_fileid *file, const char *path)
{
	for (size_t i = 0; i < nbidfiles; i++)
		if (_stp_fileid_same(&bidfiles[i].file, file))
			return &bidfiles[i].bid;
	struct bidfile *v = realloc(bidfiles, (nbidfiles + 1) * sizeof *v);
	if (!v)
		return NULL;
	bidfiles = v;
	v[nbidfiles].file = *file;
	v[nbidfiles].bid.len = _stp_build_id(path, v[nbidfiles].bid.id, sizeof v[nbidfiles].bid.id);
	return &bidfiles[nbidfiles++].bid;
}

/* Is the library loaded at real a copy of probe i's: another file with
 * the same build ID, mapped as it is on the disk? The translator
 * resolves a copy of a library the program needs at start; this is for
 * one dlopened. The maps are read only when the build IDs are equal. */
static int lib_copy(int i, pid_t pid, const char *real)
{
	struct _stp_fileid there, mapped;
	const struct buildid *b;

	if (!libbid || !libbid[i].len || !real)
		return 0;
	_stp_fileid_of(real, &there);
	if (!there.ok || !(b = loaded_build_id(&there, real)) || b->len != libbid[i].len ||
	    memcmp(b->id, libbid[i].id, b->len))
		return 0;
	_stp_fileid_mapped(pid, real, &mapped);
	return _stp_fileid_same(&there, &mapped);
}

struct libscan {
	struct _stp_pt_proc *proc;
	struct pstate *ps;
};

/* Is the library loaded as name (real: its realpath, NULL when it is gone
 * from the disk) the one probe i was resolved against? By identity where
 * known (loaded: found in the maps once needed), else by path. */
static int lib_matches(int i, pid_t pid, const char *name, const char *real,
		       struct _stp_fileid *loaded, int *looked)
{
	int known = libid && libid[i].ok;

	if (known && !*looked) {
		_stp_fileid_mapped(pid, real ? real : name, loaded);
		*looked = 1;
	}
	if (known && loaded->ok)
		return _stp_fileid_same(&libid[i], loaded);
	return real && !strcmp(libreal[i], real);
}

static void lib_loaded(const char *name, uint64_t bias, void *data)
{
	struct libscan *ls = data;
	struct pstate *ps = ls->ps;
	const struct _stp_module *M = _stp_proc_module();
	struct _stp_fileid loaded = {0, 0, 0};
	char buf[PATH_MAX], *real;
	int looked = 0;

	if (!name || !*name)
		return;
	real = realpath(name, buf);
	for (int i = 0; i < M->nprobes; i++) {
		const struct _stp_probe *p = &M->probes[i];
		pid_t pid = _stp_pt_proc_pid(ls->proc);
		size_t j;

		if (!libreal[i] || !_stp_proc_matches(p, ps))
			continue;
		/* the maps are read only for a candidate: the same path, or a
		 * probe resolved against a process's image of a library, or
		 * one whose library has a build ID (a copy) */
		if (!strcmp(libreal[i], real ? real : name) || !strncmp(libreal[i], "/proc/", 6)) {
			if (!lib_matches(i, pid, name, real, &loaded, &looked))
				continue;
		} else if (!lib_copy(i, pid, real)) {
			continue;
		}
		for (j = 0; j < ps->nlibs; j++)
			if (ps->libs[j].probe == i && ps->libs[j].bias == bias)
				break;
		if (j < ps->nlibs) {
			ps->libs[j].seen = 1;
			continue;
		}
		if (ps->nlibs == ps->libcap) {
			size_t cap = ps->libcap ? ps->libcap * 2 : 16;
			struct libplace *v = realloc(ps->libs, cap * sizeof *v);
			if (!v)
				return;
			ps->libs = v;
			ps->libcap = cap;
		}
		struct libplace *lp = &ps->libs[ps->nlibs];
		lp->probe = i;
		lp->bias = bias;
		lp->pr = NULL;
		lp->seen = 1;
		if (_stp_proc_add_probe(ls->proc, p, bias, &lp->pr) == 0)
			ps->nlibs++;
	}
}

/* The set of libraries of proc may have changed: place the probes of
 * libraries newly mapped, remove those of libraries gone (dlclose). */
static void scan_libraries(struct _stp_pt_proc *proc)
{
	struct pstate *ps = _stp_proc_pstate(proc);
	struct libscan ls = {proc, ps};
	size_t k = 0;

	if (!ps)
		return;
	for (size_t j = 0; j < ps->nlibs; j++)
		ps->libs[j].seen = 0;
	if (_stp_pt_each_library(proc, lib_loaded, &ls) < 0)
		return;
	_stp_proc_check_placement();
	for (size_t j = 0; j < ps->nlibs; j++) {
		if (!ps->libs[j].seen) {
			const struct _stp_probe *p = &_stp_proc_module()->probes[ps->libs[j].probe];
			if (ps->libs[j].pr)
				_stp_pt_probe_remove(proc, ps->libs[j].pr);
			if (p->semaphore)
				_stp_sem_forget(proc, p->semaphore + ps->libs[j].bias);
			continue;
		}
		ps->libs[k++] = ps->libs[j];
	}
	ps->nlibs = k;
}

static void on_libraries(struct _stp_pt_thread *t, void *data)
{
	(void)data;
	_stp_dcg_libs_changed(t); /* first: it names its records */
	_stp_sym_maps_changed(_stp_pt_pid(t));
	scan_libraries(_stp_pt_thread_proc(t));
}

/* The dynamic call graph and the symbol cache hear of dlopen/dlclose even
 * with no .library probe (code sites and names in a library closed must
 * go). */
void _stp_proc_watch_libraries(struct _stp_pt_proc *proc)
{
	(void)_stp_pt_watch_libraries(proc, on_libraries, NULL);
}

/* Does the program of ps have .library probes? */
static int wants_libraries(const struct pstate *ps)
{
	const struct _stp_module *M = _stp_proc_module();

	for (int i = 0; libreal && i < M->nprobes; i++)
		if (libreal[i] && _stp_proc_matches(&M->probes[i], ps))
			return 1;
	return 0;
}
static void library_start(const struct _stp_module *m)
{
	libreal = calloc((size_t)m->nprobes + 1, sizeof *libreal);
	libid = calloc((size_t)m->nprobes + 1, sizeof *libid);
	for (int i = 0; libid && i < m->nprobes; i++)
		_stp_fileid_of(m->probes[i].library, &libid[i]);
	libbid = calloc((size_t)m->nprobes + 1, sizeof *libbid);
	for (int i = 0; libreal && i < m->nprobes; i++) {
		const char *lib = m->probes[i].library;
		if (lib && *lib)
			libreal[i] = realpath(lib, NULL);
		if (lib && *lib && !libreal[i])
			libreal[i] = strdup(lib);
		for (int j = 0; libbid && libreal[i] && j < i; j++)
			if (libreal[j] && !strcmp(libreal[j], libreal[i]))
				libbid[i] = libbid[j]; /* read once per library */
		if (libbid && libreal[i] && !libbid[i].len)
			libbid[i].len =
			    _stp_build_id(libreal[i], libbid[i].id, sizeof libbid[i].id);
	}
}

static void library_finish(void)
{
	const struct _stp_module *M = _stp_proc_module();

	for (int i = 0; libreal && M && i < M->nprobes; i++)
		free(libreal[i]);
	free(libreal);
	libreal = NULL;
	free(libid);
	libid = NULL;
	free(libbid);
	libbid = NULL;
	free(bidfiles);
	bidfiles = NULL;
	nbidfiles = 0;
}

/* exec dropped every probe; at exit the process is gone */
static void library_image_gone(struct _stp_pt_proc *proc, struct pstate *ps)
{
	(void)proc;
	if (ps)
		ps->nlibs = 0;
}

static void library_place(struct _stp_pt_proc *proc, struct pstate *ps, int maps_rc, int attaching)
{
	(void)maps_rc;
	if (wants_libraries(ps)) {
		int rc = _stp_pt_watch_libraries(proc, on_libraries, NULL);
		if (rc < 0)
			_stp_msg_warn("couldn't watch the shared libraries of %s: %s", ps->exe,
				      strerror(-rc));
		else if (attaching)
			scan_libraries(proc); /* already mapped (attach) */
	}
}

/* The child has the parent's libraries mapped, and the parent's probes in
 * them: copies, the child's, not ours to remove. */
static void library_fork(struct _stp_pt_proc *parent, struct _stp_pt_proc *child, struct pstate *pp,
			 struct pstate *cp)
{
	(void)parent;
	(void)child;
	if (!pp || !cp)
		return;
	cp->libs = NULL;
	cp->nlibs = cp->libcap = 0;
	if (pp->nlibs && (cp->libs = malloc(pp->nlibs * sizeof *cp->libs))) {
		memcpy(cp->libs, pp->libs, pp->nlibs * sizeof *cp->libs);
		cp->nlibs = cp->libcap = pp->nlibs;
		for (size_t j = 0; j < cp->nlibs; j++)
			cp->libs[j].pr = NULL; /* the child's copies: not ours */
	}
}

static void library_free_state(struct pstate *ps)
{
	free(ps->libs);
}

const struct _stp_proc_kind _stp_proc_library_kind = {
    .name = "library",
    .start = library_start,
    .finish = library_finish,
    .image_gone = library_image_gone,
    .place = library_place,
    .fork = library_fork,
    .free_state = library_free_state,
};
