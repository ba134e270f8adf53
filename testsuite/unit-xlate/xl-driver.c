/* A test client of the in-process engine (runtime/xlate/xlate.h) on the
 * ptrace engine: launches a target, and at each entry of function FUNC
 * (of the main program) switches the thread into translated code, at its
 * return switches it off, and prints the calls and returns it recorded
 * in between as a tree (names from the runtime's symbol tables), after
 * the target's own output:
 *
 *   xl: -> FUNC                 the traced call (depth 0)
 *   xl:  -> callee              a call (one more space per level)
 *   xl:  <- callee              its return
 *   xl:  => other               a jump into another function (tail call)
 *   xl:  -> handler (signal N)  a signal handler's entry
 *   xl: exit status=N | exit signal=N
 *
 * Options:
 *   -f FUNC   the function (required)
 *   -q        no tree: "xl: records=N calls=N returns=N" per traced call
 *   -S        engine counters at the end ("xl: stats ...")
 *   -r BYTES  ring size per thread
 *   -C BYTES  translated code per thread, at most (then it is flushed)
 *   -M N      threads translated at once, at most
 *   -c FUNC   count the calls of FUNC (of the main program) in each
 *             traced call: "xl: calls of FUNC=N"
 *   -a MARK:SYM  at each entry of function MARK, a counting probe at
 *             symbol SYM (a function or a label) is placed if it is not
 *             there, removed if it is; at the end "xl: probe SYM hits=N"
 *             (repeatable)
 *   -y        system-call probes: getppid() entries and exits while traced
 *             are counted ("xl: getppid entries=N exits=N"), with the pc
 *             checked (native: in a module) and the result at exit
 *   -G        signal handlers (and what they call) are not shown
 *   -L        libraries as leaves: a library function called from the
 *             program is shown as "@MODULE", what it calls is not (but
 *             calls back into the program are)
 *   -R        the raw records too ("xl: rec KIND FROM TO SP")
 *   -X        start the program untraced (its stdin a pipe, in a session
 *             of its own), attach to
 *             it, install the safety net (_stp_xl_protect) at the first
 *             entry of FUNC, then write "go" to the program; "xl: on" on
 *             stderr at the first switch-on (for tests that kill us)
 *   -N        no translation: the probes only
 *   -l        libraries watched (r_debug): at each change the engine is
 *             told (_stp_xl_mem_changed), as the core does
 *   -v        engine debug messages (STAP_XLATE_DEBUG=1 does the same)
 * A call into a PLT stub followed by the stub's jump is shown as a call
 * of the function the stub jumps to. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "ptrace/ptrace_engine.h"
#include "sym/symbols.h"
#include "xlate/xlate.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <libelf.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *func_name, *count_name;
static uint64_t count_addr;
static int quiet, show_stats, lib_leaves, hide_signals, raw, sys_probes, attach_mode,
    no_translation, watch_libs;
static uint64_t sys_entries, sys_exits;
static struct _stp_xl_config cfg;
static int said_on; /* "xl: on" on stderr (-X) */
struct toggle {
	const char *mark, *sym;
	uint64_t mark_addr, sym_addr, hits;
	struct _stp_pt_probe *probe; /* the counting probe while placed */
};
static struct toggle toggles[8];
static int ntoggles;
static struct _stp_pt_session *S;
static struct _stp_xl_engine *X;
static struct _stp_symtab *symtab;
static int failures;

/* ---- output, kept until the target is done ---- */

struct lines {
	char **v;
	size_t n, cap;
};

static void add_line(struct lines *l, char *s)
{
	if (l->n == l->cap) {
		l->cap = l->cap ? 2 * l->cap : 256;
		l->v = realloc(l->v, l->cap * sizeof *l->v);
		if (!l->v)
			exit(2);
	}
	l->v[l->n++] = s;
}

static void print_lines(struct lines *l)
{
	for (size_t i = 0; i < l->n; i++) {
		printf("%s\n", l->v[i]);
		free(l->v[i]);
	}
	free(l->v);
	memset(l, 0, sizeof *l);
}

/* Per traced thread: its tree, printed in the order the threads were
 * first traced (a thread's last records may come after the next one has
 * begun: at its exit). */
struct frame {
	uint64_t func; /* callee; for a PLT stub not resolved yet, the stub */
	uint64_t sp; /* its return-address slot */
	int shown, stub;
	int hidden; /* in a signal handler not shown (-G) */
};

struct tstate {
	pid_t tid;
	struct frame f[4096];
	int nf;
	uint64_t n_recs, n_calls, n_rets, n_sigs, n_counted;
	int fell_back; /* the call's tree ended at a fallback */
	struct lines out;
};
static struct tstate *tstates[256];
static int ntstates;
static struct tstate *cur; /* the thread whose events are handled */
static struct lines global_out;

static struct tstate *tstate_of(pid_t tid)
{
	for (int i = 0; i < ntstates; i++)
		if (tstates[i]->tid == tid)
			return tstates[i];
	if (ntstates == (int)(sizeof tstates / sizeof *tstates))
		return tstates[ntstates - 1];
	struct tstate *ts = calloc(1, sizeof *ts);
	if (!ts)
		exit(2);
	ts->tid = tid;
	tstates[ntstates++] = ts;
	return ts;
}

static void emit(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void emit(const char *fmt, ...)
{
	va_list ap;
	char *s;

	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		s = NULL;
	va_end(ap);
	if (s)
		add_line(cur ? &cur->out : &global_out, s);
}

/* ---- names ---- */

static const char *name_of(uint64_t addr, char *buf, size_t len)
{
	const struct _stp_syminfo *si = symtab ? _stp_sym_lookup(symtab, addr) : NULL;

	if (si && si->name)
		snprintf(buf, len, "%s%s%s", si->name, si->is_main ? "" : " @",
			 si->is_main ? "" : si->module);
	else
		snprintf(buf, len, "0x%" PRIx64, addr);
	return buf;
}

/* Has addr a symbol, or is it outside every module (a JIT's code)? Else
 * it is taken for a PLT stub, shown as the function it jumps to. */
static int named(uint64_t addr)
{
	const struct _stp_syminfo *si = symtab ? _stp_sym_lookup(symtab, addr) : NULL;

	return si &&
	    (si->name || !si->module || !si->modpath || si->modpath[0] != '/' ||
	     !strncmp(si->modpath, "/memfd:", 7));
}

static uint64_t func_of(void *core, struct _stp_pt_thread *t, uint64_t addr, uint64_t *lo,
			uint64_t *hi)
{
	const struct _stp_syminfo *si = symtab ? _stp_sym_lookup(symtab, addr) : NULL;

	(void)core, (void)t;
	if (!si || !si->name)
		return 0;
	*lo = si->symaddr;
	*hi = si->symaddr + (si->size ? si->size : 1);
	return si->symaddr;
}

/* ---- the tree (of cur) ---- */

static int in_main(uint64_t addr)
{
	const struct _stp_syminfo *si = symtab ? _stp_sym_lookup(symtab, addr) : NULL;

	return si && si->is_main;
}

/* The indentation of the top frame: shown frames below it. */
static int indent(void)
{
	int d = 0;

	for (int i = 0; i < cur->nf - 1; i++)
		d += cur->f[i].shown;
	return d;
}

static const char *shown_name(uint64_t addr, char *buf, size_t len)
{
	const struct _stp_syminfo *si = symtab ? _stp_sym_lookup(symtab, addr) : NULL;

	if (lib_leaves && si && !si->is_main && si->module)
		snprintf(buf, len, "@%s", si->module);
	else
		name_of(addr, buf, len);
	return buf;
}

/* With -L, a library function is shown when called from the program,
 * not from a library; the program's functions always are. */
static int wants(uint64_t func)
{
	if (cur->nf && cur->f[cur->nf - 1].hidden)
		return 0;
	if (!lib_leaves || in_main(func))
		return 1;
	return cur->nf < 2 || in_main(cur->f[cur->nf - 2].func);
}

static void show(const char *arrow, uint64_t func, const char *note)
{
	char nm[256];

	if (!quiet)
		emit("xl: %*s%s %s%s", indent(), "", arrow, shown_name(func, nm, sizeof nm), note);
}

static void push(uint64_t func, uint64_t sp, int stub, const char *note)
{
	if (cur->nf == (int)(sizeof cur->f / sizeof *cur->f)) {
		emit("FAIL: too deep");
		failures++;
		return;
	}
	int hidden = (cur->nf > 0 && cur->f[cur->nf - 1].hidden) || (note[0] && hide_signals);
	cur->f[cur->nf++] = (struct frame){ func, sp, 0, stub, hidden };
	if (!stub && !hidden && (cur->f[cur->nf - 1].shown = wants(func)))
		show("->", func, note);
}

/* Frames whose return-address slot is below sp are gone. */
static void pop_below(uint64_t sp)
{
	while (cur->nf > 0 && cur->f[cur->nf - 1].sp < sp) {
		struct frame *f = &cur->f[cur->nf - 1];
		if (f->shown)
			show("<-", f->func, "");
		cur->nf--;
	}
}

/* A jump into another function: out of a PLT stub, the callee of the
 * call that went to the stub (or of the tail call); into a PLT stub (a
 * tail call through it): wait for the stub's jump; else a tail call. In a
 * library under -L, jumps inside the library are not shown. */
static void jump(struct frame *top, uint64_t from, uint64_t to)
{
	char a[256], b[256];
	int was_stub = top->stub == 1 && from == top->func;
	int tail_stub = top->stub == 2 && from == top->func;

	if (!named(to)) {
		top->stub = top->stub == 1 ? 1 : 2; /* a tail call into a stub */
		top->func = to;
		return;
	}
	top->stub = 0;
	if (was_stub) {
		top->func = to;
		if ((top->shown = wants(to)))
			show("->", to, "");
		return;
	}
	int same = !strcmp(shown_name(top->func, a, sizeof a), shown_name(to, b, sizeof b));
	top->func = to;
	if (top->shown && (!same || !lib_leaves) && (tail_stub || !same || !lib_leaves))
		show("=>", to, "");
}

static void on_records(void *core, struct _stp_pt_thread *t, const struct xl_rec *r, size_t n)
{
	char note[32];

	(void)core;
	cur = tstate_of(_stp_pt_tid(t));
	for (size_t i = 0; i < n; i++) {
		unsigned kind = (unsigned)(r[i].from_kind >> XL_KIND_SHIFT);
		uint64_t from = r[i].from_kind & XL_ADDR_MASK;
		struct frame *top = cur->nf ? &cur->f[cur->nf - 1] : NULL;
		cur->n_recs++;
		if (raw)
			emit("xl: rec %u %#" PRIx64 " %#" PRIx64 " %#" PRIx64, kind, from, r[i].to,
			     r[i].sp);
		if (kind == XL_REC_CALL) {
			cur->n_calls++;
			cur->n_counted += count_addr && r[i].to == count_addr;
			pop_below(r[i].sp + 1); /* frames longjmp left */
			push(r[i].to, r[i].sp, !named(r[i].to), "");
		} else if (kind == XL_REC_RET) {
			cur->n_rets++;
			pop_below(r[i].sp);
		} else if (kind == XL_REC_JUMP && top) {
			jump(top, from, r[i].to);
		} else if (kind & 0x80) {
			cur->n_sigs++;
			snprintf(note, sizeof note, " (signal %u)", kind & 0x7f);
			pop_below(r[i].sp + 1);
			push(r[i].to, r[i].sp, 0, note);
		} else if (kind != XL_REC_JUMP) {
			emit("FAIL: record of kind %u", kind);
			failures++;
		}
	}
}

/* The thread leaves translated code for good (the core would trace it on
 * with another mechanism): the tree of this call ends here. */
static void on_fallback(void *core, struct _stp_pt_thread *t, uint64_t pc, const char *why)
{
	char nm[256];

	(void)core;
	cur = tstate_of(_stp_pt_tid(t));
	emit("xl: fallback at %s: %s", shown_name(pc, nm, sizeof nm), why);
	cur->fell_back = 1;
	cur = NULL;
}

/* ---- probes ---- */

static int on_count(struct _stp_pt_thread *t, struct _stp_pt_probe *p, void *data)
{
	struct toggle *tg = data;

	(void)t, (void)p;
	tg->hits++;
	return 0;
}

static int on_mark(struct _stp_pt_thread *t, struct _stp_pt_probe *p, void *data)
{
	struct _stp_pt_proc *proc = _stp_pt_thread_proc(t);
	int rc = 0;

	(void)data;
	cur = tstate_of(_stp_pt_tid(t));
	for (int i = 0; i < ntoggles; i++) {
		struct toggle *tg = &toggles[i];
		if (tg->mark_addr != _stp_pt_probe_addr(p))
			continue;
		if (tg->probe) {
			rc = _stp_pt_probe_remove(proc, tg->probe);
			tg->probe = NULL;
		} else {
			rc = _stp_pt_probe_add(proc, tg->sym_addr, on_count, NULL, tg, &tg->probe);
		}
		if (rc < 0) {
			emit("FAIL: probe %s: %s", tg->sym, strerror(-rc));
			failures++;
		}
	}
	cur = NULL;
	return 0;
}

/* -l: the libraries changed (t stopped): as the core's r_debug watch
 * tells the engine. */
static void on_libs(struct _stp_pt_thread *t, void *data)
{
	(void)data;
	_stp_xl_mem_changed(X, t);
}

static void on_syscall(struct _stp_pt_thread *t, int is_exit, long nr, void *data)
{
	struct user_regs_struct r;
	const struct _stp_syminfo *si;

	(void)data;
	if (nr != SYS_getppid || !_stp_xl_thread_is_on(X, t))
		return;
	cur = tstate_of(_stp_pt_tid(t));
	if (_stp_pt_get_regs(t, &r) < 0 || !(si = _stp_sym_lookup(symtab, r.rip)) || !si->module) {
		emit("FAIL: getppid stop at %#llx: not in a module", r.rip);
		failures++;
	}
	if (is_exit && (pid_t)r.rax != getpid()) {
		emit("FAIL: getppid returned %lld", (long long)r.rax);
		failures++;
	}
	if (is_exit)
		sys_exits++;
	else
		sys_entries++;
	cur = NULL;
}

static int on_entry(struct _stp_pt_thread *t, struct _stp_pt_probe *p, void *data)
{
	struct user_regs_struct r;
	int rc;

	(void)data;
	cur = tstate_of(_stp_pt_tid(t));
	cur->nf = 0;
	cur->fell_back = 0;
	cur->n_recs = cur->n_calls = cur->n_rets = cur->n_sigs = cur->n_counted = 0;
	if (_stp_pt_get_regs(t, &r) == 0)
		push(_stp_pt_probe_addr(p), r.rsp, 0, "");
	if (attach_mode && (rc = _stp_xl_protect(X, t)) < 0) {
		emit("FAIL: protect: %s", strerror(-rc));
		failures++;
	}
	if (no_translation) {
		rc = 0;
		if (attach_mode && !said_on++)
			fprintf(stderr, "xl: on\n");
	} else if ((rc = _stp_xl_thread_on(X, t)) == -EBUSY) {
		emit("xl: thread on: %s", strerror(-rc)); /* a limit (-M) */
		cur->fell_back = 1;
	} else if (rc < 0) {
		emit("FAIL: thread on: %s", strerror(-rc));
		failures++;
	} else if (attach_mode && !said_on++) {
		fprintf(stderr, "xl: on\n");
	}
	return 0;
}

static int on_return(struct _stp_pt_thread *t, struct _stp_pt_probe *p, void *data)
{
	(void)p, (void)data;
	cur = tstate_of(_stp_pt_tid(t));
	_stp_xl_thread_off(X, t);
	if (quiet) {
		emit("xl: records=%" PRIu64 " calls=%" PRIu64 " returns=%" PRIu64, cur->n_recs,
		     cur->n_calls, cur->n_rets);
		emit("xl: signals=%" PRIu64, cur->n_sigs);
	} else if (cur->nf != 0 && !cur->fell_back)
		emit("FAIL: %d frames left at the return", cur->nf);
	if (count_name)
		emit("xl: calls of %s=%" PRIu64, count_name, cur->n_counted);
	if (sys_probes)
		emit("xl: getppid entries=%" PRIu64 " exits=%" PRIu64, sys_entries, sys_exits);
	cur->nf = 0;
	cur = NULL;
	return 0;
}

/* The address of the main program's function name in process pid. */
static int func_addr(pid_t pid, const char *name, uint64_t *addr)
{
	char exe[64], path[4096];
	ssize_t n;
	int fd, found = 0;
	Elf *e;
	Elf_Scn *scn = NULL;
	uint64_t bias = 0;

	snprintf(exe, sizeof exe, "/proc/%d/exe", (int)pid);
	if ((n = readlink(exe, path, sizeof path - 1)) < 0)
		return -errno;
	path[n] = 0;
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return -errno;
	elf_version(EV_CURRENT);
	e = elf_begin(fd, ELF_C_READ, NULL);
	while (e && !found && (scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB ||
		    !(d = elf_getdata(scn, NULL)))
			continue;
		for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym sym;
			const char *nm;
			if (gelf_getsym(d, (int)i, &sym) &&
			    (GELF_ST_TYPE(sym.st_info) == STT_FUNC ||
			     GELF_ST_TYPE(sym.st_info) == STT_NOTYPE) &&
			    sym.st_shndx != SHN_UNDEF &&
			    (nm = elf_strptr(e, sh.sh_link, sym.st_name)) && !strcmp(nm, name)) {
				*addr = sym.st_value;
				found = 1;
				break;
			}
		}
	}
	if (e)
		elf_end(e);
	close(fd);
	if (!found)
		return -ENOENT;
	if (_stp_sym_module_bias(symtab, path, &bias) < 0)
		return -ENOENT;
	*addr += bias;
	return 0;
}

/* ---- the engine's callbacks ---- */

/* Probes of process p (at its exec, or after attaching to it). */
static void setup(struct _stp_pt_proc *p)
{
	pid_t pid = _stp_pt_proc_pid(p);
	uint64_t addr;
	int rc;

	if (symtab)
		_stp_sym_close(symtab);
	symtab = _stp_sym_open(pid);
	if ((rc = func_addr(pid, func_name, &addr)) < 0) {
		emit("FAIL: no function %s: %s", func_name, strerror(-rc));
		failures++;
		return;
	}
	if (count_name && (rc = func_addr(pid, count_name, &count_addr)) < 0) {
		emit("FAIL: no function %s: %s", count_name, strerror(-rc));
		failures++;
	}
	if (sys_probes)
		_stp_pt_syscalls(p, on_syscall, NULL);
	if (watch_libs && (rc = _stp_pt_watch_libraries(p, on_libs, NULL)) < 0) {
		emit("FAIL: watch libraries: %s", strerror(-rc));
		failures++;
	}
	for (int i = 0; i < ntoggles; i++) {
		struct toggle *tg = &toggles[i];
		int placed = 0;
		tg->probe = NULL;
		if (func_addr(pid, tg->mark, &tg->mark_addr) < 0 ||
		    func_addr(pid, tg->sym, &tg->sym_addr) < 0) {
			emit("FAIL: no %s or %s", tg->mark, tg->sym);
			failures++;
			continue;
		}
		for (int j = 0; j < i; j++)
			placed |= toggles[j].mark_addr == tg->mark_addr;
		if (!placed)
			_stp_pt_probe_add(p, tg->mark_addr, on_mark, NULL, NULL, NULL);
	}
	if ((rc = _stp_pt_probe_add(p, addr, on_entry, on_return, NULL, NULL)) < 0) {
		emit("FAIL: probe %s: %s", func_name, strerror(-rc));
		failures++;
	}
}

static void cb_exec(struct _stp_pt_thread *t, void *user)
{
	(void)user;
	_stp_xl_proc_gone(X, _stp_pt_thread_proc(t));
	setup(_stp_pt_thread_proc(t));
}

static void cb_thread_start(struct _stp_pt_thread *t, void *user)
{
	(void)user;
	_stp_xl_thread_start(X, t);
}

static void cb_thread_exit(struct _stp_pt_thread *t, int status, void *user)
{
	(void)user, (void)status;
	_stp_xl_thread_gone(X, t);
}

static int exit_status = -1;

static void cb_proc_exit(struct _stp_pt_proc *p, int status, void *user)
{
	(void)user;
	_stp_xl_proc_gone(X, p);
	exit_status = status;
}

int main(int argc, char **argv)
{
	struct _stp_pt_callbacks cb = { .exec = cb_exec,
					.thread_start = cb_thread_start,
					.thread_exit = cb_thread_exit,
					.proc_exit = cb_proc_exit };
	struct _stp_xl_ops ops = { func_of, on_records, on_fallback, NULL };
	struct _stp_pt_proc *p;
	char why[256];
	int opt, rc;

	while ((opt = getopt(argc, argv, "+a:c:f:lqr:C:GLM:NRSvXy")) != -1) {
		switch (opt) {
		case 'f':
			func_name = optarg;
			break;
		case 'c':
			count_name = optarg;
			break;
		case 'q':
			quiet = 1;
			break;
		case 'r':
			cfg.ring_bytes = strtoul(optarg, NULL, 0);
			break;
		case 'C':
			cfg.cache_bytes = strtoul(optarg, NULL, 0);
			break;
		case 'M':
			cfg.max_threads = atoi(optarg);
			break;
		case 'S':
			show_stats = 1;
			break;
		case 'L':
			lib_leaves = 1;
			break;
		case 'G':
			hide_signals = 1;
			break;
		case 'R':
			raw = 1;
			break;
		case 'y':
			sys_probes = 1;
			break;
		case 'X':
			attach_mode = 1;
			break;
		case 'N':
			no_translation = 1;
			break;
		case 'l':
			watch_libs = 1;
			break;
		case 'a': {
			char *colon = strchr(optarg, ':');
			if (!colon || ntoggles == (int)(sizeof toggles / sizeof *toggles))
				return 2;
			*colon = 0;
			toggles[ntoggles].mark = optarg;
			toggles[ntoggles++].sym = colon + 1;
			break;
		}
		case 'v':
			setenv("STAP_XLATE_DEBUG", "1", 1);
			break;
		default:
			return 2;
		}
	}
	if (!func_name || optind >= argc) {
		fprintf(stderr, "usage: xl-driver [-qSv] -f FUNC -- PROGRAM [ARG...]\n");
		return 2;
	}
	if (!_stp_xl_usable(why, sizeof why)) {
		printf("FAIL: engine not usable: %s\n", why);
		return 1;
	}
	S = _stp_pt_session_new(&cb, NULL, 0);
	X = _stp_xl_new(S, &ops, NULL, &cfg);
	if (!S || !X)
		return 1;
	int go = -1;
	if (attach_mode) {
		/* the program's parent is a waiter (not us): it reports how the
		 * program ended on stderr, even after we are gone */
		int fds[2], pids[2];
		pid_t pid;
		if (pipe(fds) < 0 || pipe(pids) < 0 || (pid = fork()) < 0)
			return 1;
		if (pid == 0) {
			setsid(); /* a session of its own, as one attaches to */
			pid_t prog = fork();
			if (prog == 0) {
				dup2(fds[0], 0);
				close(fds[0]);
				close(fds[1]);
				execv(argv[optind], argv + optind);
				_exit(127);
			}
			int st;
			if (write(pids[1], &prog, sizeof prog) != sizeof prog)
				_exit(1);
			close(fds[0]);
			close(fds[1]);
			while (waitpid(prog, &st, 0) < 0 && errno == EINTR)
				;
			if (WIFEXITED(st))
				fprintf(stderr, "xl: target exit status=%d\n", WEXITSTATUS(st));
			else
				fprintf(stderr, "xl: target exit signal=%d\n", WTERMSIG(st));
			_exit(0);
		}
		close(fds[0]);
		go = fds[1];
		if (read(pids[0], &pid, sizeof pid) != sizeof pid)
			return 1;
		/* attach once the program waits for "go" in read(0, ...), well
		 * past its execve (an attach during the execve sees its exec
		 * event after the probes are placed: see the report) */
		char link[64], sys[256];
		snprintf(link, sizeof link, "/proc/%d/syscall", (int)pid);
		for (int i = 0; i < 10000; i++) {
			int fd = open(link, O_RDONLY);
			ssize_t n = fd >= 0 ? read(fd, sys, sizeof sys - 1) : -1;
			if (fd >= 0)
				close(fd);
			sys[n > 0 ? n : 0] = 0;
			if (!strncmp(sys, "0 0x0 ", 6))
				break;
			usleep(1000);
		}
		if ((rc = _stp_pt_attach(S, pid, &p)) < 0) {
			printf("FAIL: attach: %s\n", strerror(-rc));
			return 1;
		}
		setup(p);
	} else if ((rc = _stp_pt_launch(S, argv + optind, &p)) < 0) {
		printf("FAIL: launch: %s\n", strerror(-rc));
		return 1;
	}
	_stp_pt_resume(p);
	if (go >= 0 && (write(go, "go\n", 3) != 3 || close(go) < 0))
		return 1;
	while (_stp_pt_active(S) > 0)
		if ((rc = _stp_pt_wait(S, -1)) < 0 && rc != -EINTR)
			break;
	fflush(stdout);
	for (int i = 0; i < ntstates; i++) {
		print_lines(&tstates[i]->out);
		free(tstates[i]);
	}
	print_lines(&global_out);
	for (int i = 0; i < ntoggles; i++)
		printf("xl: probe %s hits=%" PRIu64 "\n", toggles[i].sym, toggles[i].hits);
	if (show_stats) {
		struct _stp_xl_stats st;
		_stp_xl_get_stats(X, &st);
		printf("xl: stats threads=%" PRIu64 " blocks=%" PRIu64 " code=%" PRIu64
		       " doorbells=%" PRIu64 " records=%" PRIu64 " signals=%" PRIu64
		       " flushes=%" PRIu64 " drain_ms=%.1f doorbell_ms=%.1f\n",
		       st.threads, st.blocks, st.code_bytes, st.doorbells, st.records, st.signals,
		       st.flushes, st.drain_ns / 1e6, st.doorbell_ns / 1e6);
	}
	if (exit_status >= 0 && WIFEXITED(exit_status))
		printf("xl: exit status=%d\n", WEXITSTATUS(exit_status));
	else if (exit_status >= 0)
		printf("xl: exit signal=%d\n", WTERMSIG(exit_status));
	_stp_xl_free(X);
	_stp_pt_session_free(S);
	if (symtab)
		_stp_sym_close(symtab);
	return failures ? 1 : 0;
}
