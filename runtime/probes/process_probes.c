/* Process probes: the run's target under the ptrace engine. -c launches
 * the command (through /bin/sh -c, following forks) and places the probes
 * of a program whenever a traced process execs it, before its first
 * instruction; -x attaches and places them at once; neither attaches every
 * process that runs a probed file, now and as they exec (run/syswide.h,
 * doc/process-paths.md), until the run ends. The run ends when the
 * target process exits; on any other end (exit(), -T, a signal)
 * everything is detached, and a -c command still running is killed, as
 * target.c does without process probes.
 *
 * This is the core: the session, what each traced process runs and where
 * it is loaded (struct pstate), and the engine's events, passed on to the
 * hooks of each kind (probes_internal.h) in the order of the table. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "lang/stp_internal.h"
#include "probes_internal.h"
#include "dcg/dcg.h"
#include "sym/symbols.h"
#include "run/target.h"
#include "run/sigstate.h"
#include "run/shellcmd.h"
#include "run/syswide.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* The kinds, one line each; every event calls their hooks in this order
 * (the probes placed before the system calls are traced and the
 * libraries watched; a fork's semaphores and libraries copied before its
 * process.begin). */
static const struct _stp_proc_kind *const kinds[] = {
    &_stp_proc_function_kind, &_stp_proc_mark_kind,	 &_stp_proc_syscall_kind,
    &_stp_proc_library_kind,  &_stp_proc_begin_end_kind, &_stp_proc_thread_kind,
};
#define NKINDS (sizeof kinds / sizeof kinds[0])
#define EACH_KIND(hook, ...)                                  \
	do {                                                  \
		for (size_t k_ = 0; k_ < NKINDS; k_++)        \
			if (kinds[k_]->hook)                  \
				kinds[k_]->hook(__VA_ARGS__); \
	} while (0)

static struct pstate *all_pstates;

/* System-wide: the processes attached before the begin probes, held
 * stopped until _stp_proc_release (NULL: gone since). */
static struct _stp_pt_proc **held;
static size_t nheld, capheld;

/* Per probe: the image its module is (the translator names a -x
 * process's image by /proc/PID/exe or map_files when the file at the path
 * is another one now). */
static struct _stp_fileid *modid;

static struct _stp_pt_session *S;
static const struct _stp_module *M;
static struct _stp_pt_proc *root;
static pid_t root_pid;
static int launched, root_gone, root_status, verbose_exit;
static int attaching;		    /* 0 while placing probes at an exec stop */
static int shell_launch, launching; /* -c through /bin/sh; in _stp_pt_launch */
static int syswide;		    /* neither -c nor -x: every process that runs the files */

const struct _stp_module *_stp_proc_module(void)
{
	return M;
}

static int is_process_kind(enum _stp_probe_kind k)
{
	for (size_t i = 0; i < NKINDS; i++)
		if (kinds[i]->kinds & STP_KIND_BIT(k))
			return 1;
	return 0;
}

int _stp_proc_wanted(const struct _stp_module *m)
{
	for (int i = 0; m && i < m->nprobes; i++)
		if (is_process_kind(m->probes[i].kind))
			return 1;
	return 0;
}

struct pstate *_stp_proc_pstate(struct _stp_pt_proc *p)
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
	ps->pid = pid;
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
int _stp_proc_matches(const struct _stp_probe *p, const struct pstate *ps)
{
	/* a library of any process (process("LIB")): the launcher's too */
	if (ps->launcher && (!p->module || !*p->module) && !p->library)
		return 0;
	if (p->pid && p->pid != ps->pid)
		return 0;
	return module_matches(p, ps);
}

uint64_t _stp_proc_bias(const struct _stp_probe *p, const struct pstate *ps)
{
	return ps->base >= p->module_base ? ps->base - p->module_base : 0;
}

int _stp_proc_can_run(void)
{
	return _stp_session_state == STP_SESSION_RUNNING && !_stp_exit_requested;
}

void _stp_proc_fire(const struct _stp_probe *p, struct _stp_pt_thread *t, pid_t pid, uint64_t uaddr,
		    uint64_t bias, const char *comm)
{
	struct _stp_tctx tc;

	memset(&tc, 0, sizeof tc);
	_stp_tctx_ptrace(&tc, t);
	tc.pid = t ? _stp_pt_pid(t) : pid;
	tc.tid = t ? _stp_pt_tid(t) : pid;
	tc.uaddr = uaddr;
	tc.bias = bias;
	tc.is_return = p->kind == STP_PROBE_PROCESS_RETURN;
	tc.comm = comm;
	/* a process whose symbols handlers use: the cache hears of its dlclose */
	if (t && _stp_sym_needs_watch(tc.pid)) {
		_stp_proc_watch_libraries(_stp_pt_thread_proc(t));
		_stp_sym_watching(tc.pid);
	}
	_stp_run_probe(p, &tc);
	if (tc.is_return && t) {
		struct user_regs_struct r;
		if (_stp_pt_get_regs(t, &r) == 0)
			_stp_entry_done(tc.tid, p, r.rsp);
	}
}

void _stp_proc_fire_kind(enum _stp_probe_kind kind, struct _stp_pt_thread *t, pid_t pid,
			 const struct pstate *ps)
{
	for (int i = 0; i < M->nprobes && _stp_proc_can_run(); i++) {
		const struct _stp_probe *p = &M->probes[i];
		if (p->kind == kind && _stp_proc_matches(p, ps))
			_stp_proc_fire(p, t, pid, 0, _stp_proc_bias(p, ps), ps->comm);
	}
}

int _stp_proc_wants_kind(const struct pstate *ps, enum _stp_probe_kind a, enum _stp_probe_kind b)
{
	for (int i = 0; i < M->nprobes; i++)
		if ((M->probes[i].kind == a || M->probes[i].kind == b) &&
		    _stp_proc_matches(&M->probes[i], ps))
			return 1;
	return 0;
}

/* ---- the engine's events ---- */

static void on_thread_start(struct _stp_pt_thread *t, void *user)
{
	struct pstate *ps = _stp_proc_pstate(_stp_pt_thread_proc(t));

	(void)user;
	_stp_dcg_thread_start(t); /* its registers the program's own first */
	if (ps)
		EACH_KIND(thread_start, t, ps);
}

static void on_thread_exit(struct _stp_pt_thread *t, int status, void *user)
{
	struct pstate *ps = _stp_proc_pstate(_stp_pt_thread_proc(t));

	(void)user;
	(void)status;
	_stp_dcg_thread_gone(_stp_pt_tid(t));
	if (ps)
		EACH_KIND(thread_exit, t, ps);
}

/* A new image (exec, or attached): every kind places its probes. */
static void place_probes(struct _stp_pt_proc *proc)
{
	struct pstate *ps = _stp_proc_pstate(proc);
	int rc;

	if (!ps)
		return;
	rc = read_exe(_stp_pt_proc_pid(proc), ps);
	EACH_KIND(image_gone, proc, ps);
	EACH_KIND(place, proc, ps, rc, attaching);
}

static void on_exec(struct _stp_pt_thread *t, void *user)
{
	struct _stp_pt_proc *proc = _stp_pt_thread_proc(t);

	(void)user;
	_stp_dcg_exec(_stp_pt_proc_pid(proc));
	_stp_sym_exec(_stp_pt_proc_pid(proc));
	struct pstate *ps = _stp_proc_pstate(proc);
	if (ps)
		ps->launcher = launching && shell_launch;
	place_probes(proc);
	if (ps)
		EACH_KIND(exec, t, ps);
}

static void on_fork(struct _stp_pt_thread *parent, struct _stp_pt_proc *child, void *user)
{
	struct _stp_pt_proc *pproc = _stp_pt_thread_proc(parent);
	struct pstate *pp = _stp_proc_pstate(pproc), *cp = _stp_proc_pstate(child);

	(void)user;
	if (pp && cp) {
		struct pstate *next = cp->next;
		*cp = *pp;
		cp->next = next;
		cp->pid = _stp_pt_proc_pid(child);
	}
	EACH_KIND(fork, pproc, child, pp, cp);
}

/* Unlink and free one pstate (NULL is fine). */
static void pstate_free(struct pstate *ps)
{
	for (struct pstate **pp = &all_pstates; ps && *pp; pp = &(*pp)->next)
		if (*pp == ps) {
			*pp = ps->next;
			break;
		}
	if (ps)
		EACH_KIND(free_state, ps);
	free(ps);
}

static void on_proc_exit(struct _stp_pt_proc *p, int status, void *user)
{
	struct pstate *ps = _stp_proc_pstate(p);
	pid_t pid = _stp_pt_proc_pid(p);

	(void)user;
	if (ps)
		EACH_KIND(proc_exit, p, ps);
	EACH_KIND(image_gone, p, ps);
	_stp_dcg_proc_gone(pid);
	_stp_sym_gone(pid);
	pstate_free(ps);
	*_stp_pt_proc_user(p) = NULL;
	if (p == root) {
		root = NULL;
		root_gone = 1;
		root_status = status;
	}
	for (size_t i = 0; i < nheld; i++)
		if (held[i] == p)
			held[i] = NULL;
}

static const struct _stp_pt_callbacks callbacks = {
    .exec = on_exec,
    .fork = on_fork,
    .thread_start = on_thread_start,
    .thread_exit = on_thread_exit,
    .proc_exit = on_proc_exit,
};

/* ---- system-wide: neither -c nor -x ---- */

/* Processes this run must not trace: staprun and the stap that runs it,
 * and what they start. */
static pid_t own[2];

static pid_t parent_of(pid_t pid)
{
	char path[64], buf[512], *p;
	FILE *f;
	int ppid = 0;

	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	if (!(f = fopen(path, "re")))
		return 0;
	if (fgets(buf, sizeof buf, f) && (p = strrchr(buf, ')')))
		sscanf(p + 1, " %*c %d", &ppid);
	fclose(f);
	return (pid_t)ppid;
}

static int in_own_tree(pid_t pid)
{
	for (int depth = 0; pid > 1 && depth < 256; depth++, pid = parent_of(pid))
		if (pid == own[0] || pid == own[1])
			return 1;
	return 0;
}

static void find_own(void)
{
	char path[64], comm[32] = "";
	FILE *f;

	own[0] = getpid();
	own[1] = 0;
	snprintf(path, sizeof path, "/proc/%d/comm", (int)getppid());
	if ((f = fopen(path, "re"))) {
		if (fgets(comm, sizeof comm, f))
			comm[strcspn(comm, "\n")] = '\0';
		fclose(f);
	}
	if (!strcmp(comm, "stap"))
		own[1] = getppid();
}

/* Does pid map the file at path (a library of a process probe)? */
static int maps_file(pid_t pid, const char *path)
{
	char file[64], line[PATH_MAX + 128], real[PATH_MAX];
	int found = 0;
	FILE *f;

	if (!realpath(path, real))
		snprintf(real, sizeof real, "%s", path);
	snprintf(file, sizeof file, "/proc/%d/maps", (int)pid);
	if (!(f = fopen(file, "re")))
		return 0;
	while (!found && fgets(line, sizeof line, f)) {
		char *name = strchr(line, '/');
		if (name) {
			name[strcspn(name, "\n")] = '\0';
			found = !strcmp(name, real);
		}
	}
	fclose(f);
	return found;
}

/* The libraries probed as the process (their realpaths; each once). */
static char **sw_libs;
static int nsw_libs;

/* Does pid map one of them? One read of its maps. */
static int maps_a_library(pid_t pid)
{
	char file[64], line[PATH_MAX + 128];
	int found = 0;
	FILE *f;

	snprintf(file, sizeof file, "/proc/%d/maps", (int)pid);
	if (!nsw_libs || !(f = fopen(file, "re")))
		return 0;
	while (!found && fgets(line, sizeof line, f)) {
		char *name = strchr(line, '/');
		if (!name)
			continue;
		name[strcspn(name, "\n")] = '\0';
		for (int i = 0; i < nsw_libs && !found; i++)
			found = !strcmp(name, sw_libs[i]);
	}
	fclose(f);
	return found;
}

/* Does a process probe of the run apply to pid (of the caller's
 * privileges: root, or the same user)? PID 1 only when named. A library
 * probed as the process applies when pid maps it, or has just opened it
 * (opened: dlopen maps it next). */
static int syswide_wanted(pid_t pid, struct pstate *ps, int opened)
{
	char path[64];
	struct stat st;

	snprintf(path, sizeof path, "/proc/%d", (int)pid);
	if (stat(path, &st) < 0 || (geteuid() != 0 && st.st_uid != geteuid()))
		return 0;
	if (read_exe(pid, ps) < 0 || !ps->exe[0])
		return 0;
	for (int i = 0; i < M->nprobes; i++) {
		const struct _stp_probe *p = &M->probes[i];
		if (!is_process_kind(p->kind) || (p->pid && p->pid != pid) || (pid == 1 && !p->pid))
			continue;
		if (p->library && *p->library && (!p->module || !*p->module)) {
			if (opened || maps_file(pid, p->library))
				return 1;
		} else if (module_matches(p, ps)) {
			return 1;
		}
	}
	return 0;
}

/* Why pid cannot be traced, when it is already. */
static pid_t tracer_of(pid_t pid)
{
	char path[64], line[256];
	int tracer = 0;
	FILE *f;

	snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
	if (!(f = fopen(path, "re")))
		return 0;
	while (fgets(line, sizeof line, f))
		if (sscanf(line, "TracerPid: %d", &tracer) == 1)
			break;
	fclose(f);
	return (pid_t)tracer;
}

static int syswide_consider(pid_t pid, enum _stp_sw_why why, void *data)
{
	struct pstate probe_ps;
	struct _stp_pt_proc *proc = NULL;
	static int warned;
	int rc;

	(void)data;
	memset(&probe_ps, 0, sizeof probe_ps);
	if (!S || pid <= 0 || in_own_tree(pid))
		return 1;
	/* looked at again: only a library mapped since can make it wanted */
	if (why == _STP_SW_AGAIN && !maps_a_library(pid))
		return 0;
	if (!syswide_wanted(pid, &probe_ps, why == _STP_SW_OPENED))
		return 0;
	rc = _stp_pt_attach(S, pid, &proc);
	if (rc == -EINVAL || rc == -ESRCH)
		return 1; /* ours already (a traced process's exec), or gone */
	if (rc < 0) {
		pid_t tracer = tracer_of(pid);
		if (tracer)
			_stp_msg_warn("couldn't attach to process %d (%s): already traced by "
				      "process %d",
				      (int)pid, probe_ps.comm, (int)tracer);
		else
			_stp_msg_warn("couldn't attach to process %d (%s): %s", (int)pid,
				      probe_ps.comm, strerror(-rc));
		return 1;
	}
	if (!warned && M->maxattach >= 0 && _stp_pt_active(S) > M->maxattach) {
		warned = 1;
		_stp_msg_warn("tracing more than %lld processes (-DMAXATTACH=%lld)",
			      (long long)M->maxattach, (long long)M->maxattach);
	}
	attaching = 1;
	place_probes(proc);
	attaching = 0;
	if (_stp_session_state == STP_SESSION_STARTING) {
		if (nheld == capheld) {
			size_t cap = capheld ? capheld * 2 : 16;
			struct _stp_pt_proc **v = realloc(held, cap * sizeof *v);
			if (!v) {
				_stp_pt_resume(proc);
				return 1;
			}
			held = v;
			capheld = cap;
		}
		held[nheld++] = proc;
		return 1;
	}
	struct pstate *ps = _stp_proc_pstate(proc);
	if (ps && _stp_proc_can_run())
		EACH_KIND(release, pid, ps);
	_stp_pt_resume(proc);
	return 1;
}

/* The libraries probed as the process (sw_libs): the files whose opens
 * are watched, and looked for in the maps. */
static void syswide_libraries(void)
{
	char **v = calloc((size_t)M->nprobes + 1, sizeof *v);
	int n = 0;

	for (int i = 0; v && i < M->nprobes; i++) {
		const struct _stp_probe *p = &M->probes[i];
		char *real;
		int dup = 0;
		if (!is_process_kind(p->kind) || !p->library || !*p->library ||
		    (p->module && *p->module))
			continue;
		if (!(real = realpath(p->library, NULL)) && !(real = strdup(p->library)))
			continue;
		for (int j = 0; j < n && !dup; j++)
			dup = !strcmp(v[j], real);
		if (dup)
			free(real);
		else
			v[n++] = real;
	}
	sw_libs = v;
	nsw_libs = n;
}

static void syswide_libraries_free(void)
{
	for (int i = 0; i < nsw_libs; i++)
		free(sw_libs[i]);
	free(sw_libs);
	sw_libs = NULL;
	nsw_libs = 0;
}

static int syswide_start(void)
{
	syswide = 1;
	find_own();
	S = _stp_pt_session_new(&callbacks, NULL, _STP_PT_FOLLOW_FORK);
	if (!S) {
		_stp_msg_error("couldn't start the ptrace session: %s", strerror(errno));
		return -1;
	}
	syswide_libraries();
	int nlibs = nsw_libs;
	int how = _stp_sw_start(syswide_consider, NULL, (const char *const *)sw_libs, nlibs);
	if (verbose_exit)
		fprintf(stderr, "system-wide: new processes noticed by %s\n",
			how & _STP_SW_CONNECTOR ? "the process-events connector"
						: "scanning /proc");
	if (verbose_exit && nlibs)
		fprintf(stderr, "system-wide: dlopen of the libraries noticed by %s\n",
			how & _STP_SW_FANOTIFY ? "fanotify" : "scanning /proc/PID/maps");
	return _stp_proc_placement_failed() ? -1 : 0;
}

static int syswide_release(void)
{
	for (size_t i = 0; i < nheld; i++) {
		struct pstate *ps;
		if (!held[i])
			continue;
		if ((ps = _stp_proc_pstate(held[i])) && _stp_proc_can_run())
			EACH_KIND(release, _stp_pt_proc_pid(held[i]), ps);
		(void)_stp_pt_resume(held[i]); /* one gone meanwhile: the others run */
	}
	nheld = 0;
	return 0;
}

int _stp_proc_start(const struct _stp_module *m, const struct _stp_run_options *o)
{
	char **words = NULL;
	int rc, shell;

	M = m;
	_stp_entry_set_module(m);
	root = NULL;
	root_pid = 0;
	root_gone = launched = 0;
	verbose_exit = o->verbose;
	_stp_target = 0;
	if (o->target_cmd && o->target_pid) {
		_stp_msg_error("You can't specify the '-c' and '-x' options together.");
		return -1;
	}
	modid = calloc((size_t)m->nprobes + 1, sizeof *modid);
	for (int i = 0; modid && i < m->nprobes; i++)
		_stp_fileid_of(m->probes[i].module, &modid[i]);
	EACH_KIND(start, m);
	if (getenv("STAP_PTRACE_DEBUG"))
		_stp_pt_set_debug(1);
	if (!o->target_cmd && !o->target_pid)
		return syswide_start();
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
	return _stp_proc_placement_failed() ? -1 : 0;
}

int _stp_proc_release(void)
{
	if (syswide && S && _stp_session_state == STP_SESSION_RUNNING)
		return syswide_release();
	if (!S || !root)
		return 0;
	if (_stp_session_state != STP_SESSION_RUNNING)
		return 0;
	{
		struct pstate *ps = _stp_proc_pstate(root);
		if (ps)
			EACH_KIND(release, root_pid, ps);
	}
	return _stp_pt_resume(root) < 0 ? -1 : 0;
}

int _stp_proc_dispatch(void)
{
	if (!S)
		return 0;
	if (syswide) { /* until exit(), -T or a signal, traced processes or not */
		(void)_stp_pt_dispatch(S);
		return 0;
	}
	if (_stp_pt_dispatch(S) < 0 && errno != ECHILD && _stp_pt_active(S) == 0)
		return 1;
	return root_gone || _stp_pt_active(S) == 0;
}

void _stp_proc_finish(int verbose)
{
	int status;

	if (!S)
		return;
	_stp_sw_stop();
	syswide_libraries_free();
	_stp_dcg_finish(verbose);
	_stp_sym_cache_free();
	_stp_ctx_modules_free();
	_stp_ctx_tls_free();
	if (root_gone)
		_stp_target_report_exit(root_status, verbose_exit);
	EACH_KIND(stop);
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
	EACH_KIND(finish);
	free(modid);
	modid = NULL;
	free(held);
	held = NULL;
	nheld = capheld = 0;
	syswide = 0;
}