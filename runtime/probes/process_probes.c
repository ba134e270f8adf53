/* Process probes: the run's target under the ptrace engine. -c launches
 * the command (through /bin/sh -c, following forks) and places the probes
 * of a program whenever a traced process execs it, before its first
 * instruction; -x attaches and places them at once. Function probes are
 * engine probes at module address + load bias; return probes are engine
 * return probes (a breakpoint at the return site matched by stack
 * pointer). The run ends when the target process exits; on any other end
 * (exit(), -T, a signal) everything is detached, and a -c command still
 * running is killed, as target.c does without process probes. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "lang/stp_internal.h"
#include "process.h"
#include "dcg/dcg.h"
#include "run/target.h"
#include "run/sigstate.h"
#include "run/shellcmd.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* A .library probe placed in one process at one load of its library. */
struct libplace {
	int probe;		  /* index in M->probes */
	uint64_t bias;		  /* the library's load bias */
	struct _stp_pt_probe *pr; /* NULL in a fork child (a copy it has) */
	int seen;
};

/* Per traced process: what it runs and where it is loaded. */
struct pstate {
	char exe[PATH_MAX];
	struct _stp_fileid exeid; /* the image it runs */
	uint64_t base;		  /* start of the executable's mapping at file offset 0 */
	char comm[17];		  /* its name (execname() after it is gone) */
	int syscalls;		  /* system call stops are on */
	struct libplace *libs;
	size_t nlibs, libcap;
	/* the /bin/sh of a shell -c command (or a fork of it), not yet
	 * exec'd a command: bare process probes leave it out */
	int launcher;
	unsigned char *begun; /* per probe: its process.begin fired here */
	struct pstate *next;  /* all live pstates, freed at the end */
};

static struct pstate *all_pstates;

/* Per probe: the image its module and its library are (the translator
 * names a -x process's image by /proc/PID/exe or map_files when the file
 * at the path is another one now). */
static struct _stp_fileid *modid, *libid;

/* realpath of each probe's library (NULL: not a .library probe). */
static char **libreal;

static struct _stp_pt_session *S;
static const struct _stp_module *M;
static struct _stp_pt_proc *root;
static pid_t root_pid;
static int launched, root_gone, root_status, verbose_exit;
static int attaching;		    /* 0 while placing probes at an exec stop */
static int shell_launch, launching; /* -c through /bin/sh; in _stp_pt_launch */

const struct _stp_module *_stp_proc_module(void)
{
	return M;
}

static int is_process_kind(enum _stp_probe_kind k)
{
	return k == STP_PROBE_PROCESS_FUNCTION || k == STP_PROBE_PROCESS_RETURN ||
	    k == STP_PROBE_PROCESS_BEGIN || k == STP_PROBE_PROCESS_END ||
	    k == STP_PROBE_PROCESS_THREAD_BEGIN || k == STP_PROBE_PROCESS_THREAD_END ||
	    k == STP_PROBE_PROCESS_SYSCALL || k == STP_PROBE_PROCESS_SYSCALL_RETURN;
}

int _stp_proc_wanted(const struct _stp_module *m)
{
	for (int i = 0; m && i < m->nprobes; i++)
		if (is_process_kind(m->probes[i].kind))
			return 1;
	return 0;
}

static struct pstate *pstate_of(struct _stp_pt_proc *p)
{
	void **u = _stp_pt_proc_user(p);

	if (!*u) {
		struct pstate *ps = calloc(1, sizeof(struct pstate));

		if (ps) {
			ps->next = all_pstates;
			all_pstates = ps;
		}
		*u = ps;
	}
	return *u;
}

/* The executable of pid and the start of its mapping at offset 0.
 * Returns 0, or -errno when its memory map cannot be read (EMFILE, ...):
 * then no probe can be placed at the right address. */
static int read_exe(pid_t pid, struct pstate *ps)
{
	char path[64], line[PATH_MAX + 128];
	ssize_t n;
	FILE *f;

	ps->exe[0] = '\0';
	ps->base = 0;
	snprintf(path, sizeof path, "/proc/%d/exe", (int)pid);
	n = readlink(path, ps->exe, sizeof ps->exe - 1);
	ps->exe[n > 0 ? n : 0] = '\0';
	_stp_fileid_of(path, &ps->exeid);
	snprintf(path, sizeof path, "/proc/%d/comm", (int)pid);
	f = fopen(path, "re");
	ps->comm[0] = '\0';
	if (f) {
		if (fgets(ps->comm, sizeof ps->comm, f))
			ps->comm[strcspn(ps->comm, "\n")] = '\0';
		fclose(f);
	}
	snprintf(path, sizeof path, "/proc/%d/maps", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof line, f)) {
		unsigned long long lo, hi, off;
		int pos = 0;
		char *name;

		if (sscanf(line, "%llx-%llx %*s %llx %*s %*s%n", &lo, &hi, &off, &pos) < 3)
			continue;
		name = line + pos;
		while (*name == ' ')
			name++;
		name[strcspn(name, "\n")] = '\0';
		if (off == 0 && !strcmp(name, ps->exe)) {
			ps->base = lo;
			break;
		}
	}
	fclose(f);
	return 0;
}

/* Does a probe's module name the executable of ps? By identity where
 * both are known (a path now naming another file is another program),
 * else by path. */
static int module_matches(const struct _stp_probe *p, const struct pstate *ps)
{
	char real[PATH_MAX];
	const struct _stp_fileid *id = modid ? &modid[p - M->probes] : NULL;

	if (!p->module || !*p->module)
		return 1;
	if (id && id->ok && ps->exeid.ok)
		return _stp_fileid_same(id, &ps->exeid);
	if (!strcmp(p->module, ps->exe))
		return 1;
	return realpath(p->module, real) && !strcmp(real, ps->exe);
}

/* Is probe p for the process of ps? */
static int ps_matches(const struct _stp_probe *p, const struct pstate *ps)
{
	if (ps->launcher && (!p->module || !*p->module))
		return 0;
	return module_matches(p, ps);
}

static uint64_t bias_of(const struct _stp_probe *p, const struct pstate *ps)
{
	return ps->base >= p->module_base ? ps->base - p->module_base : 0;
}

static int can_run(void)
{
	return _stp_session_state == STP_SESSION_RUNNING && !_stp_exit_requested;
}

static void fire(const struct _stp_probe *p, struct _stp_pt_thread *t, pid_t pid, uint64_t uaddr,
		 uint64_t bias, const char *comm)
{
	struct _stp_tctx tc;

	memset(&tc, 0, sizeof tc);
	tc.t = t;
	tc.pid = t ? _stp_pt_pid(t) : pid;
	tc.tid = t ? _stp_pt_tid(t) : pid;
	tc.uaddr = uaddr;
	tc.bias = bias;
	tc.is_return = p->kind == STP_PROBE_PROCESS_RETURN;
	tc.comm = comm;
	_stp_run_probe(p, &tc);
	if (tc.is_return && t) {
		struct user_regs_struct r;
		if (_stp_pt_get_regs(t, &r) == 0)
			_stp_entry_done(tc.tid, p, r.rsp);
	}
}

static int on_hit(struct _stp_pt_thread *t, struct _stp_pt_probe *pr, void *data)
{
	const struct _stp_probe *p = data;
	struct pstate *ps = pstate_of(_stp_pt_thread_proc(t));

	if (can_run() && ps)
		fire(p, t, 0, _stp_pt_probe_point(t),
		     p->library ? _stp_pt_probe_addr(pr) - p->addr : bias_of(p, ps), ps->comm);
	return 0;
}

/* ---- SDT semaphores: raised while a .mark probe is placed ---- */

struct semrec {
	struct _stp_pt_proc *proc;
	uint64_t addr;
};
static struct semrec *sems;
static size_t nsems, semcap;

static int sem_add(struct _stp_pt_proc *proc, uint64_t addr, int delta)
{
	uint16_t v;
	int rc = _stp_pt_proc_read(proc, addr, &v, sizeof v);

	if (rc == 0) {
		v = (uint16_t)(v + delta);
		rc = _stp_pt_proc_write(proc, addr, &v, sizeof v);
	}
	return rc;
}

static void sem_record(struct _stp_pt_proc *proc, uint64_t addr)
{
	if (nsems == semcap) {
		size_t cap = semcap ? 2 * semcap : 16;
		struct semrec *v = realloc(sems, cap * sizeof *v);
		if (!v)
			return;
		sems = v;
		semcap = cap;
	}
	sems[nsems].proc = proc;
	sems[nsems].addr = addr;
	nsems++;
}

/* Forget proc's semaphores (its memory is gone: exec, exit) or just the
 * one at addr (addr != 0: its library was unmapped). */
static void sem_forget(struct _stp_pt_proc *proc, uint64_t addr)
{
	size_t k = 0;

	for (size_t j = 0; j < nsems; j++) {
		if (sems[j].proc == proc && (!addr || sems[j].addr == addr)) {
			if (addr) {
				addr = 0; /* one record */
				proc = NULL;
			}
			continue;
		}
		sems[k++] = sems[j];
	}
	nsems = k;
}

/* A fork child has its parent's memory, semaphores raised included. */
static void sem_fork(struct _stp_pt_proc *parent, struct _stp_pt_proc *child)
{
	size_t n = nsems;

	/* a vfork or CLONE_VM child shares the parent's semaphores: put back
	 * once, by the parent's record */
	if (_stp_pt_proc_shares_mm(parent, child))
		return;
	for (size_t j = 0; j < n; j++)
		if (sems[j].proc == parent)
			sem_record(child, sems[j].addr);
}

/* End of run: put every semaphore back as it was. */
static void sem_restore_all(void)
{
	for (size_t j = 0; j < nsems; j++)
		sem_add(sems[j].proc, sems[j].addr, -1);
	free(sems);
	sems = NULL;
	nsems = semcap = 0;
}

/* ---- .library probes: placed when the library is mapped ---- */

/* ---- placement: a run none of whose probes can be placed fails ---- */

/* Per probe: how often it was placed, and failed to be. */
static unsigned *placed, *failed;

static int is_placed_kind(const struct _stp_probe *p)
{
	return p->kind == STP_PROBE_PROCESS_FUNCTION || p->kind == STP_PROBE_PROCESS_RETURN;
}

static void count_placement(const struct _stp_probe *p, int rc)
{
	if (placed && p >= M->probes && p < M->probes + M->nprobes)
		(rc < 0 ? failed : placed)[p - M->probes]++;
}

/* Has every probe to place (optional ones aside) failed, with none
 * placed anywhere and none still waiting for its process or library? */
static int none_placed(void)
{
	int any = 0;

	for (int i = 0; placed && i < M->nprobes; i++) {
		if (!is_placed_kind(&M->probes[i]) || M->probes[i].optional)
			continue;
		if (placed[i] || !failed[i])
			return 0;
		any = 1;
	}
	return any;
}

static int placement_failed;

/* After probes were placed: all failed ends the run with an error (said
 * once; before the begin probes, the run does not start). */
static void check_placement(void)
{
	if (placement_failed || !none_placed())
		return;
	placement_failed = 1;
	_stp_msg_error("none of the script's probes could be placed");
	if (_stp_session_state == STP_SESSION_RUNNING) {
		_stp_error_count++;
		_stp_exit(NULL);
	}
}

static int add_probe(struct _stp_pt_proc *proc, const struct _stp_probe *p, uint64_t bias,
		     struct _stp_pt_probe **out)
{
	int ret = p->kind == STP_PROBE_PROCESS_RETURN;
	int rc = _stp_pt_probe_add(proc, p->addr + bias, ret ? NULL : on_hit, ret ? on_hit : NULL,
				   (void *)p, out);

	count_placement(p, rc);
	if (rc < 0) {
		_stp_msg_warn("couldn't place probe %s at 0x%llx: %s", p->pp,
			      (unsigned long long)(p->addr + bias), strerror(-rc));
		return rc;
	}
	if (p->semaphore) {
		int r = sem_add(proc, p->semaphore + bias, 1);
		if (r == 0)
			sem_record(proc, p->semaphore + bias);
		else
			_stp_msg_warn("couldn't set the semaphore of %s at 0x%llx: %s", p->pp,
				      (unsigned long long)(p->semaphore + bias), strerror(-r));
	}
	return rc;
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
	struct _stp_fileid loaded = {0, 0, 0};
	char buf[PATH_MAX], *real;
	int looked = 0;

	if (!name || !*name)
		return;
	real = realpath(name, buf);
	for (int i = 0; i < M->nprobes; i++) {
		const struct _stp_probe *p = &M->probes[i];
		size_t j;

		/* the maps are read only for a candidate: the same path, or a
		 * probe resolved against a process's image of a library */
		if (!libreal[i] ||
		    (strcmp(libreal[i], real ? real : name) && strncmp(libreal[i], "/proc/", 6)) ||
		    !ps_matches(p, ps) ||
		    !lib_matches(i, _stp_pt_proc_pid(ls->proc), name, real, &loaded, &looked))
			continue;
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
		if (add_probe(ls->proc, p, bias, &lp->pr) == 0)
			ps->nlibs++;
	}
}

/* The set of libraries of proc may have changed: place the probes of
 * libraries newly mapped, remove those of libraries gone (dlclose). */
static void scan_libraries(struct _stp_pt_proc *proc)
{
	struct pstate *ps = pstate_of(proc);
	struct libscan ls = {proc, ps};
	size_t k = 0;

	if (!ps)
		return;
	for (size_t j = 0; j < ps->nlibs; j++)
		ps->libs[j].seen = 0;
	if (_stp_pt_each_library(proc, lib_loaded, &ls) < 0)
		return;
	check_placement();
	for (size_t j = 0; j < ps->nlibs; j++) {
		if (!ps->libs[j].seen) {
			const struct _stp_probe *p = &M->probes[ps->libs[j].probe];
			if (ps->libs[j].pr)
				_stp_pt_probe_remove(proc, ps->libs[j].pr);
			if (p->semaphore)
				sem_forget(proc, p->semaphore + ps->libs[j].bias);
			continue;
		}
		ps->libs[k++] = ps->libs[j];
	}
	ps->nlibs = k;
}

static void on_libraries(struct _stp_pt_thread *t, void *data)
{
	(void)data;
	_stp_dcg_libs_changed(t);
	scan_libraries(_stp_pt_thread_proc(t));
}

/* The dynamic call graph hears of dlopen/dlclose even with no .library
 * probe (its code sites in a library closed must go). */
void _stp_proc_watch_libraries(struct _stp_pt_proc *proc)
{
	(void)_stp_pt_watch_libraries(proc, on_libraries, NULL);
}

/* Does the program of ps have .library probes? */
static int wants_libraries(const struct pstate *ps)
{
	for (int i = 0; libreal && i < M->nprobes; i++)
		if (libreal[i] && ps_matches(&M->probes[i], ps))
			return 1;
	return 0;
}

static void fire_kind(enum _stp_probe_kind kind, struct _stp_pt_thread *t, pid_t pid,
		      const struct pstate *ps)
{
	for (int i = 0; i < M->nprobes && can_run(); i++) {
		const struct _stp_probe *p = &M->probes[i];
		if (p->kind == kind && ps_matches(p, ps))
			fire(p, t, pid, 0, bias_of(p, ps), ps->comm);
	}
}

/* process.begin: once per process and probe, when the process first
 * matches it (launched or attached, forked by a process it matches, or an
 * exec into the image a probe names). t NULL: the process of pid, stopped
 * with no thread at hand. */
static void fire_begin(struct _stp_pt_thread *t, pid_t pid, struct pstate *ps)
{
	for (int i = 0; i < M->nprobes && can_run(); i++) {
		const struct _stp_probe *p = &M->probes[i];

		if (p->kind != STP_PROBE_PROCESS_BEGIN || !ps_matches(p, ps) ||
		    (ps->begun && ps->begun[i]))
			continue;
		if (!ps->begun)
			ps->begun = calloc((size_t)M->nprobes, 1);
		if (ps->begun)
			ps->begun[i] = 1;
		fire(p, t, pid, 0, bias_of(p, ps), ps->comm);
	}
}

/* ---- thread and system call probes ---- */

static void on_thread_start(struct _stp_pt_thread *t, void *user)
{
	struct pstate *ps = pstate_of(_stp_pt_thread_proc(t));

	(void)user;
	_stp_dcg_thread_start(t); /* its registers the program's own first */
	if (ps)
		fire_kind(STP_PROBE_PROCESS_THREAD_BEGIN, t, 0, ps);
}

static void on_thread_exit(struct _stp_pt_thread *t, int status, void *user)
{
	struct pstate *ps = pstate_of(_stp_pt_thread_proc(t));
	pid_t pid = _stp_pt_pid(t), tid = _stp_pt_tid(t);

	(void)user;
	(void)status;
	_stp_dcg_thread_gone(tid);
	if (!ps || tid == pid) /* the main thread: process.end */
		return;
	for (int i = 0; i < M->nprobes && can_run(); i++) {
		const struct _stp_probe *p = &M->probes[i];
		struct _stp_tctx tc;

		if (p->kind != STP_PROBE_PROCESS_THREAD_END || !ps_matches(p, ps))
			continue;
		memset(&tc, 0, sizeof tc);
		tc.pid = pid;
		tc.tid = tid;
		tc.bias = bias_of(p, ps);
		tc.comm = ps->comm;
		_stp_run_probe(p, &tc);
	}
}

static void on_syscall(struct _stp_pt_thread *t, int is_exit, long nr, void *data)
{
	struct pstate *ps = pstate_of(_stp_pt_thread_proc(t));
	enum _stp_probe_kind k =
	    is_exit ? STP_PROBE_PROCESS_SYSCALL_RETURN : STP_PROBE_PROCESS_SYSCALL;

	(void)nr;
	(void)data;
	if (ps)
		fire_kind(k, t, 0, ps);
}

static int wants_kind(const struct pstate *ps, enum _stp_probe_kind a, enum _stp_probe_kind b)
{
	for (int i = 0; i < M->nprobes; i++)
		if ((M->probes[i].kind == a || M->probes[i].kind == b) &&
		    ps_matches(&M->probes[i], ps))
			return 1;
	return 0;
}

/* Put every function and return probe of this process's program in. */
static void place_probes(struct _stp_pt_proc *proc)
{
	struct pstate *ps = pstate_of(proc);
	int rc;

	if (!ps)
		return;
	rc = read_exe(_stp_pt_proc_pid(proc), ps);
	ps->nlibs = 0; /* exec dropped every probe */
	sem_forget(proc, 0);
	for (int i = 0; i < M->nprobes; i++) {
		const struct _stp_probe *p = &M->probes[i];

		if (!is_placed_kind(p) || p->library || !ps_matches(p, ps))
			continue;
		if (rc < 0) { /* no load address: say why, not a bad address */
			count_placement(p, rc);
			_stp_msg_warn("couldn't place probe %s: can't read the memory map of "
				      "process %d: %s",
				      p->pp, (int)_stp_pt_proc_pid(proc), strerror(-rc));
			continue;
		}
		add_probe(proc, p, bias_of(p, ps), NULL);
	}
	check_placement();
	if (wants_kind(ps, STP_PROBE_PROCESS_SYSCALL, STP_PROBE_PROCESS_SYSCALL_RETURN)) {
		int rc = _stp_pt_syscalls(proc, on_syscall, NULL);
		if (rc < 0)
			_stp_msg_warn("couldn't trace the system calls of %s: %s", ps->exe,
				      strerror(-rc));
		ps->syscalls = rc == 0;
	} else if (ps->syscalls) {
		_stp_pt_syscalls(proc, NULL, NULL);
		ps->syscalls = 0;
	}
	if (wants_libraries(ps)) {
		int rc = _stp_pt_watch_libraries(proc, on_libraries, NULL);
		if (rc < 0)
			_stp_msg_warn("couldn't watch the shared libraries of %s: %s", ps->exe,
				      strerror(-rc));
		else if (attaching)
			scan_libraries(proc); /* already mapped (attach) */
	}
}

static void on_exec(struct _stp_pt_thread *t, void *user)
{
	struct _stp_pt_proc *proc = _stp_pt_thread_proc(t);

	(void)user;
	_stp_dcg_exec(_stp_pt_proc_pid(proc));
	struct pstate *ps = pstate_of(proc);
	if (ps) {
		ps->launcher = launching && shell_launch;
		/* a new image: the probes naming one may begin again */
		for (int i = 0; ps->begun && i < M->nprobes; i++)
			if (M->probes[i].module && *M->probes[i].module)
				ps->begun[i] = 0;
	}
	place_probes(proc);
	/* The first exec of a -c command happens before the begin probes;
	 * process.begin then waits for the release. */
	if (ps)
		fire_begin(t, 0, ps);
}

static void on_fork(struct _stp_pt_thread *parent, struct _stp_pt_proc *child, void *user)
{
	struct pstate *pp = pstate_of(_stp_pt_thread_proc(parent)), *cp = pstate_of(child);

	(void)user;
	sem_fork(_stp_pt_thread_proc(parent), child);
	if (pp && cp) {
		struct pstate *next = cp->next;
		*cp = *pp;
		cp->next = next;
		cp->begun = NULL;
		cp->libs = NULL;
		cp->nlibs = cp->libcap = 0;
		if (pp->nlibs && (cp->libs = malloc(pp->nlibs * sizeof *cp->libs))) {
			memcpy(cp->libs, pp->libs, pp->nlibs * sizeof *cp->libs);
			cp->nlibs = cp->libcap = pp->nlibs;
			for (size_t j = 0; j < cp->nlibs; j++)
				cp->libs[j].pr = NULL; /* the child's copies: not ours */
		}
		fire_begin(NULL, _stp_pt_proc_pid(child), cp);
	}
}

/* Unlink and free one pstate (NULL is fine). */
static void pstate_free(struct pstate *ps)
{
	for (struct pstate **pp = &all_pstates; ps && *pp; pp = &(*pp)->next)
		if (*pp == ps) {
			*pp = ps->next;
			break;
		}
	if (ps) {
		free(ps->libs);
		free(ps->begun);
	}
	free(ps);
}

static void on_proc_exit(struct _stp_pt_proc *p, int status, void *user)
{
	struct pstate *ps = pstate_of(p);
	pid_t pid = _stp_pt_proc_pid(p);

	(void)user;
	if (ps) {
		fire_kind(STP_PROBE_PROCESS_END, NULL, pid, ps);
	}
	sem_forget(p, 0);
	_stp_dcg_proc_gone(pid);
	pstate_free(ps);
	*_stp_pt_proc_user(p) = NULL;
	if (p == root) {
		root = NULL;
		root_gone = 1;
		root_status = status;
	}
}

static const struct _stp_pt_callbacks callbacks = {
    .exec = on_exec,
    .fork = on_fork,
    .thread_start = on_thread_start,
    .thread_exit = on_thread_exit,
    .proc_exit = on_proc_exit,
};

int _stp_proc_start(const struct _stp_module *m, const struct _stp_run_options *o)
{
	char **words = NULL;
	int rc, shell;

	M = m;
	root = NULL;
	root_pid = 0;
	root_gone = launched = 0;
	verbose_exit = o->verbose;
	_stp_target = 0;
	if (o->target_cmd && o->target_pid) {
		_stp_msg_error("You can't specify the '-c' and '-x' options together.");
		return -1;
	}
	if (!o->target_cmd && !o->target_pid) {
		_stp_msg_error("process probes need a target process: use -c CMD or -x PID");
		return -1;
	}
	placement_failed = 0;
	placed = calloc((size_t)m->nprobes + 1, sizeof *placed);
	failed = calloc((size_t)m->nprobes + 1, sizeof *failed);
	libreal = calloc((size_t)m->nprobes + 1, sizeof *libreal);
	modid = calloc((size_t)m->nprobes + 1, sizeof *modid);
	libid = calloc((size_t)m->nprobes + 1, sizeof *libid);
	for (int i = 0; modid && libid && i < m->nprobes; i++) {
		_stp_fileid_of(m->probes[i].module, &modid[i]);
		_stp_fileid_of(m->probes[i].library, &libid[i]);
	}
	for (int i = 0; libreal && i < m->nprobes; i++) {
		const char *lib = m->probes[i].library;
		if (lib && *lib)
			libreal[i] = realpath(lib, NULL);
		if (lib && *lib && !libreal[i])
			libreal[i] = strdup(lib);
	}
	if (getenv("STAP_PTRACE_DEBUG"))
		_stp_pt_set_debug(1);
	/* A plain command is run directly (where that is what sh -c would
	 * do), so the first exec is the program itself; a shell's commands
	 * are its children (or what it execs): bare process probes fire for
	 * those, not for the shell. */
	if (o->target_cmd)
		words = _stp_cmd_words(o->target_cmd);
	shell = o->target_cmd && !words;
	shell_launch = shell;
	S = _stp_pt_session_new(&callbacks, NULL,
				_STP_PT_FOLLOW_FORK | (shell ? _STP_PT_SHELL : 0));
	if (!S) {
		_stp_msg_error("couldn't start the ptrace session: %s", strerror(errno));
		_stp_cmd_words_free(words);
		return -1;
	}
	{
		sigset_t mask, ignored;
		_stp_signals_caller(&mask, &ignored);
		_stp_pt_launch_signals(S, &mask, &ignored);
	}
	if (o->target_cmd) {
		char *one[] = {(char *)o->target_cmd, NULL};

		launching = 1;
		rc = _stp_pt_launch(S, words ? words : one, &root);
		launching = 0;
		launched = 1;
		_stp_cmd_words_free(words);
	} else {
		rc = (o->target_pid <= 0 || o->target_pid > INT32_MAX)
		    ? -ESRCH
		    : _stp_pt_attach(S, (pid_t)o->target_pid, &root);
		if (rc == 0) {
			attaching = 1;
			place_probes(root);
			attaching = 0;
		}
	}
	if (rc < 0) {
		if (o->target_cmd)
			_stp_msg_error("couldn't start '%s': %s", o->target_cmd, strerror(-rc));
		else
			_stp_msg_error("couldn't attach to process %ld: %s", o->target_pid,
				       strerror(-rc));
		_stp_pt_session_free(S);
		S = NULL;
		root = NULL;
		return -1;
	}
	root_pid = _stp_pt_proc_pid(root);
	_stp_target = root_pid;
	/* nothing placed before the begin probes: the run does not start
	 * (_stp_proc_finish puts the target back) */
	return placement_failed ? -1 : 0;
}

int _stp_proc_release(void)
{
	if (!S || !root)
		return 0;
	if (_stp_session_state != STP_SESSION_RUNNING)
		return 0;
	/* process.begin of the program already loaded (-c: the first exec
	 * happened during the launch; -x: the attached process). */
	{
		struct pstate *ps = pstate_of(root);
		if (ps)
			fire_begin(NULL, root_pid, ps);
	}
	return _stp_pt_resume(root) < 0 ? -1 : 0;
}

int _stp_proc_dispatch(void)
{
	if (!S)
		return 0;
	if (_stp_pt_dispatch(S) < 0 && errno != ECHILD && _stp_pt_active(S) == 0)
		return 1;
	return root_gone || _stp_pt_active(S) == 0;
}

void _stp_proc_finish(int verbose)
{
	int status;

	if (!S)
		return;
	_stp_dcg_finish(verbose);
	if (root_gone)
		_stp_target_report_exit(root_status, verbose_exit);
	sem_restore_all();
	_stp_pt_detach_all(S);
	_stp_pt_session_free(S);
	S = NULL;
	while (all_pstates)
		pstate_free(all_pstates);
	if (launched && !root_gone && root_pid > 0) {
		kill(root_pid, SIGKILL);
		while (waitpid(root_pid, &status, 0) < 0 && errno == EINTR)
			;
	}
	root = NULL;
	root_pid = 0;
	_stp_target = 0;
	for (int i = 0; libreal && M && i < M->nprobes; i++)
		free(libreal[i]);
	free(libreal);
	libreal = NULL;
	free(placed);
	free(failed);
	placed = failed = NULL;
	free(modid);
	free(libid);
	modid = libid = NULL;
}
