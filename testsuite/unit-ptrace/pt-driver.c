/* A test client of the ptrace engine (runtime/ptrace/ptrace_engine.h): launches
 * or attaches to a target, puts probes on functions named on the command
 * line (found in the target's ELF symbol table, placed again after every
 * exec), and prints what it saw after the target ends or it detaches:
 *
 *   probe NAME hits=N returns=M retsum=S
 *   steps NAME insn=N      (with -s NAME: instructions stepped in NAME)
 *   exit status=N | exit signal=N
 *
 * Options:
 *   -f NAME   entry probe on function NAME (repeatable)
 *   -r NAME   entry and return probe on NAME (repeatable)
 *   -s NAME   single-step each call of NAME (-S: single-block instead)
 *   -l LIB:FN entry probe on function FN of the shared library LIB (its
 *             file name), placed whenever LIB is loaded (dlopen too),
 *             removed when it goes
 *   -y        count getppid() system calls (entries, exits; checks that
 *             the exit returns the parent's pid): "syscall getppid ..."
 *   -W        the same through the main thread's system-call watch
 *             (_stp_pt_watch_syscalls; with -y: the watch nearest the
 *             call, its note kept from entry to exit): "watch getppid ..."
 *   -F        follow fork/vfork children
 *   -c        run the command through /bin/sh -c (one argument)
 *   -X        start the command untraced, then attach to it (-x)
 *   -d N      detach after N probe hits, then check the target (code bytes
 *             of its executable identical to before attaching, threads not
 *             stopped), print "detached", "code identical", "not stopped",
 *             and let it finish (or SIGTERM it with -X)
 *   -i N      at the N-th hit, SIGINT ourselves (the loop then detaches)
 *   -K N      at the N-th hit, SIGKILL the target from inside the handler
 *             (then keep using the thread's context: errors, no crash)
 *   -R N      after N hits, remove every probe (threads running), print
 *             "removed" and let the target run to its end
 *   -A        entry and return probes on every function of the program
 *             (prints "all functions probed" when some were)
 *   -P        with -X: stop the target with SIGSTOP before attaching
 *   -p PID    attach to PID (not started by us); no command needed
 *   -t MS     detach after MS milliseconds; then print "state C" (the
 *             state letter of PID's main thread in /proc/PID/stat)
 *   -e        print "launched PID" once the target runs (for tests that
 *             kill us: the target must die with us)
 *   -B        print the blockstep and hardware-breakpoint self-tests'
 *             results and exit
 *   -g        signal handler entries (_stp_pt_signal_step) in every
 *             thread: checks rip is on_sig or on_info and [rsp] the
 *             restorer, prints "sigstep on_sig calls=N" (and on_info)
 *   -G        the same, stepping even signals without a handler
 *   -T        print "threads started=N": thread_start callbacks (with
 *             -X, those of the threads there at attach count too)
 *   -H N      at every N-th hit, stop each other thread that runs
 *             (_stp_pt_stop_thread: in tracing stop, registers readable),
 *             then resume it; prints "threads held" when some were and
 *             none failed
 *   -v        engine debug messages
 * The target's own output goes to stdout before ours (it is flushed when
 * it exits, or we wait for it after detaching). */
#define _GNU_SOURCE
#include "ptrace/ptrace_engine.h"
/* The engine's messages go through the runtime's debug domains; engine.exp
 * builds this driver from the engine's own files, so they come in here. */
#include "lang/debug.c"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

struct sym {
	const char *name;
	int ret;  /* with return probe */
	int step; /* 0, or _STP_PT_STEP_INSN / _BLOCK */
	uint64_t hits, returns, retsum, steps;
};

static struct sym syms[16];
static int nsyms;
static const char *lib_name; /* -l */
static struct sym *lib_sym;
static volatile sig_atomic_t got_sigint;
static uint64_t total_hits, detach_after, sigint_after;
static struct _stp_pt_session *S;
static int failures;
static pid_t attach_pid;
static int detach_ms, stop_first;
static uint64_t remove_after, kill_after;
static int count_syscalls, echo_pid;
static uint64_t sys_entries, sys_exits;
static int sym_addr(pid_t pid, const char *name, uint64_t *addr);
static int watch_on, in_call = 3; /* the last: 1 probe entry, 2 watch entry, 3 watch exit */
static uint64_t watch_entries, watch_exits;
static unsigned char watch_want[SYS_getppid + 1] = {[SYS_getppid] = 1};

static void check_order(int was, int now)
{
	if (count_syscalls && watch_on && in_call != was) {
		printf("FAIL: system-call stop %d after %d, not %d\n", now, in_call, was);
		failures++;
	}
	in_call = now;
}

static void on_watch(struct _stp_pt_thread *t, struct _stp_pt_syscall *c, void *data)
{
	(void)t;
	(void)data;
	if (c->nr != SYS_getppid) {
		printf("FAIL: watch of getppid got %ld\n", c->nr);
		failures++;
		return;
	}
	if (!c->exit) {
		check_order(1, 2);
		c->note = ++watch_entries;
		return;
	}
	check_order(2, 3);
	watch_exits++;
	if (c->note != watch_entries || c->ret != getpid()) {
		printf("FAIL: watch exit note %llu ret %lld\n", (unsigned long long)c->note,
		       (long long)c->ret);
		failures++;
	}
}

static void on_syscall(struct _stp_pt_thread *t, int is_exit, long nr, void *data)
{
	struct user_regs_struct r;

	(void)data;
	if (nr != SYS_getppid)
		return;
	if (!is_exit) {
		check_order(3, 1);
		sys_entries++;
		return;
	}
	check_order(3, 3);
	sys_exits++;
	if (_stp_pt_get_regs(t, &r) < 0 || (pid_t)r.rax != getpid()) {
		printf("FAIL: getppid returned %lld\n", (long long)r.rax);
		failures++;
	}
}
/* ---- signal handler entries (-g) ---- */

static int sigstep_on;
static uint64_t on_sig_addr, on_info_addr, sig_calls, info_calls;
extern int _stp_pt_sigstep_always; /* engine internal, for -G */

static void on_sigstep(struct _stp_pt_thread *t, int sig, void *data)
{
	static const uint8_t restorer[] = {0x48, 0xc7, 0xc0, 0x0f, 0, 0, 0, 0x0f, 0x05};
	struct user_regs_struct r;
	uint8_t code[sizeof restorer];
	uint64_t ra = 0;

	(void)data;
	if (_stp_pt_get_regs(t, &r) < 0) {
		printf("FAIL: sigstep regs\n");
		failures++;
		return;
	}
	if (r.rip == on_sig_addr) {
		sig_calls++;
	} else if (r.rip == on_info_addr) {
		info_calls++;
	} else {
		printf("FAIL: sigstep signal %d at %#llx\n", sig, r.rip);
		failures++;
	}
	/* the frame: [rsp] returns to the restorer (rt_sigreturn) */
	if (_stp_pt_read(t, r.rsp, &ra, 8) < 0 || _stp_pt_read_code(t, ra, code, sizeof code) < 0 ||
	    memcmp(code, restorer, sizeof code) != 0) {
		printf("FAIL: sigstep signal %d: no restorer at [rsp] %#llx\n", sig,
		       (unsigned long long)ra);
		failures++;
	}
}

static void sigstep_addrs(pid_t pid)
{
	if (sym_addr(pid, "on_sig", &on_sig_addr) < 0)
		on_sig_addr = 0;
	if (sym_addr(pid, "on_info", &on_info_addr) < 0)
		on_info_addr = 0;
}

static int count_threads;
static uint64_t threads_started;

/* -H: the threads started (not the main one), until they exit */
static uint64_t hold_every, held, hold_failed;
static struct _stp_pt_thread *known[256];
static int nknown;

static void cb_thread_start(struct _stp_pt_thread *t, void *user)
{
	(void)user;
	threads_started++;
	if (nknown < 256)
		known[nknown++] = t;
	if (sigstep_on)
		_stp_pt_signal_step(t, on_sigstep, NULL);
}

static void cb_thread_exit(struct _stp_pt_thread *t, int status, void *user)
{
	(void)status;
	(void)user;
	for (int i = 0; i < nknown; i++)
		if (known[i] == t)
			known[i--] = known[--nknown];
}

static char thread_state(pid_t pid);

static void hold_others(struct _stp_pt_thread *t)
{
	struct user_regs_struct r;

	for (int i = 0; i < nknown; i++) {
		if (known[i] == t)
			continue;
		int rc = _stp_pt_stop_thread(known[i]);
		if (rc == 1) {
			char st = thread_state(_stp_pt_tid(known[i]));
			if (st != 't' || _stp_pt_get_regs(known[i], &r) < 0) {
				printf("FAIL: thread %d held: state %c\n", (int)_stp_pt_tid(known[i]),
				       st);
				hold_failed++;
			}
			_stp_pt_stop_thread_end(known[i]);
			held++;
		} else if (rc < 0 && rc != -EAGAIN) {
			printf("FAIL: stop thread %d: %s\n", (int)_stp_pt_tid(known[i]),
			       strerror(-rc));
			hold_failed++;
		}
	}
}

static struct _stp_pt_probe *placed[64];
static struct _stp_pt_proc *placed_in[64];
static int nplaced;

/* ---- ELF: a function's address in the running process ---- */

static void (*each_fn)(const char *name, uint64_t value, void *arg);
static void *each_arg;

/* Find function `name` (or with name NULL, call each_fn for every one). */
static int elf_lookup(const char *path, const char *name, uint64_t *value, int *is_dyn,
		      uint64_t *first_vaddr)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), found = 0;
	Elf *e;
	Elf_Scn *scn = NULL;
	GElf_Ehdr eh;
	size_t nph;

	if (fd < 0)
		return -1;
	elf_version(EV_CURRENT);
	e = elf_begin(fd, ELF_C_READ, NULL);
	if (!e || !gelf_getehdr(e, &eh)) {
		close(fd);
		return -1;
	}
	*is_dyn = eh.e_type == ET_DYN;
	*first_vaddr = 0;
	if (elf_getphdrnum(e, &nph) == 0) {
		for (size_t i = 0; i < nph; i++) {
			GElf_Phdr ph;
			if (gelf_getphdr(e, (int)i, &ph) && ph.p_type == PT_LOAD) {
				*first_vaddr = ph.p_vaddr & ~0xfffULL;
				break;
			}
		}
	}
	while (!found && (scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;
		if (!gelf_getshdr(scn, &sh) ||
		    (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM))
			continue;
		d = elf_getdata(scn, NULL);
		for (size_t i = 0; d && sh.sh_entsize && i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym s;
			const char *n;
			if (!gelf_getsym(d, (int)i, &s) || GELF_ST_TYPE(s.st_info) != STT_FUNC ||
			    !s.st_value)
				continue;
			n = elf_strptr(e, sh.sh_link, s.st_name);
			if (n && !name && sh.sh_type == SHT_SYMTAB) {
				if (each_fn)
					each_fn(n, s.st_value, each_arg);
				continue;
			}
			if (n && name && strcmp(n, name) == 0) {
				*value = s.st_value;
				found = 1;
				break;
			}
		}
	}
	elf_end(e);
	close(fd);
	return found || !name ? 0 : -1;
}

/* Where the main executable of pid is loaded (its offset-0 mapping). */
static uint64_t exe_base(pid_t pid, const char *exe)
{
	char path[64], line[4096];
	uint64_t base = 0;
	FILE *f;

	snprintf(path, sizeof path, "/proc/%d/maps", (int)pid);
	if (!(f = fopen(path, "r")))
		return 0;
	while (fgets(line, sizeof line, f)) {
		unsigned long lo, off;
		char *p = strchr(line, '/');
		if (!p || sscanf(line, "%lx-%*x %*s %lx", &lo, &off) != 2)
			continue;
		p[strcspn(p, "\n")] = 0;
		if (off == 0 && strcmp(p, exe) == 0) {
			base = lo;
			break;
		}
	}
	fclose(f);
	return base;
}

static uint64_t bias;

/* A thread of pid whose /proc entries show the process's memory (not a
 * zombie leader, whose exe and maps are empty). */
static pid_t live_task(pid_t pid)
{
	char path[96], exe[16];
	FILE *ls;
	pid_t found = pid;

	char self[64], lbuf[8];

	/* the leader itself when it is alive (other threads may end soon) */
	snprintf(self, sizeof self, "/proc/%d/exe", (int)pid);
	if (readlink(self, lbuf, sizeof lbuf) > 0)
		return pid;
	snprintf(path, sizeof path, "ls /proc/%d/task 2>/dev/null", (int)pid);
	if (!(ls = popen(path, "r")))
		return pid;
	while (fgets(exe, sizeof exe, ls)) {
		char link[64], buf[8];
		int tid = atoi(exe);
		snprintf(link, sizeof link, "/proc/%d/task/%d/exe", (int)pid, tid);
		if (readlink(link, buf, sizeof buf) > 0) {
			found = tid;
			break;
		}
	}
	pclose(ls);
	return found;
}

static int sym_addr(pid_t pid, const char *name, uint64_t *addr)
{
	char link[64], exe[4096];
	uint64_t v = 0, first;
	int dyn;
	ssize_t n;

	snprintf(link, sizeof link, "/proc/%d/exe", (int)pid);
	n = readlink(link, exe, sizeof exe - 1);
	if (n <= 0) {
		pid = live_task(pid);
		snprintf(link, sizeof link, "/proc/%d/exe", (int)pid);
		n = readlink(link, exe, sizeof exe - 1);
	}
	if (n <= 0)
		return -1;
	exe[n] = 0;
	void (*fn)(const char *, uint64_t, void *) = each_fn;
	each_fn = NULL;
	if (elf_lookup(exe, NULL, &v, &dyn, &first) < 0) /* for the bias only */
		return -1;
	bias = dyn ? exe_base(pid, exe) - first : 0;
	each_fn = fn;
	if (!name)
		return fn ? elf_lookup(exe, NULL, &v, &dyn, &first) : 0;
	if (elf_lookup(exe, name, &v, &dyn, &first) < 0)
		return -1;
	*addr = bias + v;
	return 0;
}

static int on_entry_all(struct _stp_pt_thread *t, struct _stp_pt_probe *p, void *data);
static int on_return_all(struct _stp_pt_thread *t, struct _stp_pt_probe *p, void *data);
static int all_functions, all_placed;
static struct sym all_sym = {"*", 1, 0, 0, 0, 0, 0};

static void place_one(const char *name, uint64_t value, void *arg)
{
	struct _stp_pt_proc *p = arg;
	int rc = _stp_pt_probe_add(p, bias + value, on_entry_all, on_return_all, &all_sym, NULL);

	if (rc == 0)
		all_placed++;
	else if (rc != -ENOTSUP) /* a few first instructions cannot be moved */
		printf("FAIL: probe %s: %s\n", name, strerror(-rc));
}

/* ---- handlers ---- */

static void step_fn(struct _stp_pt_thread *t, void *data)
{
	struct sym *s = data;
	struct user_regs_struct r;
	uint64_t *end = (uint64_t *)*_stp_pt_thread_user(t);

	s->steps++;
	if (_stp_pt_get_regs(t, &r) == 0 && end && r.rip == *end) {
		_stp_pt_step_mode(t, _STP_PT_STEP_NONE, NULL, NULL);
		free(end);
		*_stp_pt_thread_user(t) = NULL;
	}
}

static int on_entry(struct _stp_pt_thread *t, struct _stp_pt_probe *p, void *data)
{
	struct sym *s = data;
	struct user_regs_struct r;
	uint64_t ra;

	(void)p;
	s->hits++;
	total_hits++;
	if (sigstep_on)
		_stp_pt_signal_step(t, on_sigstep, NULL); /* attached threads */
	if (_stp_pt_get_regs(t, &r) < 0 || _stp_pt_read(t, r.rsp, &ra, 8) < 0)
		return -EFAULT;
	if (s->hits == 1) {
		/* memory access: the int3 is visible to _stp_pt_read only, and
		 * a write over it keeps it (and changes the byte under it) */
		uint8_t raw, code, back;
		if (_stp_pt_read(t, r.rip, &raw, 1) < 0 ||
		    _stp_pt_read_code(t, r.rip, &code, 1) < 0 || raw != 0xcc || code == 0xcc) {
			printf("FAIL: read %#x / read_code %#x at the probe\n", raw, code);
			failures++;
		} else if (_stp_pt_write(t, r.rip, &code, 1) < 0 ||
			   _stp_pt_read(t, r.rip, &back, 1) < 0 || back != 0xcc) {
			printf("FAIL: write over the probe\n");
			failures++;
		}
		if (_stp_pt_read(t, 8, &raw, 1) != -EFAULT) {
			printf("FAIL: read of address 8 did not fault\n");
			failures++;
		}
	}
	if (_stp_pt_probe_point(t) != r.rip) {
		printf("FAIL: probe point %#lx != rip %#llx\n", (long)_stp_pt_probe_point(t),
		       r.rip);
		failures++;
	}
	if (s->ret && _stp_pt_frame_data(t))
		*_stp_pt_frame_data(t) = r.rsp; /* checked at return */
	if (s->step && !*_stp_pt_thread_user(t)) {
		uint64_t *end = malloc(sizeof *end);
		*end = ra;
		*_stp_pt_thread_user(t) = end;
		_stp_pt_step_mode(t, s->step, step_fn, s);
	}
	if (hold_every && total_hits % hold_every == 0)
		hold_others(t);
	if (sigint_after && total_hits == sigint_after)
		kill(getpid(), SIGINT);
	if (kill_after && total_hits == kill_after) {
		uint64_t v;
		kill(_stp_pt_pid(t), SIGKILL);
		usleep(10000);
		/* the context may or may not still answer; it must not crash */
		(void)_stp_pt_read(t, r.rsp, &v, 8);
		(void)_stp_pt_get_regs(t, &r);
	}
	return 0;
}

static int on_return(struct _stp_pt_thread *t, struct _stp_pt_probe *p, void *data)
{
	struct sym *s = data;
	struct user_regs_struct r;

	(void)p;
	s->returns++;
	if (_stp_pt_get_regs(t, &r) < 0)
		return -EFAULT;
	s->retsum += (uint32_t)r.rax;
	if (!_stp_pt_frame_data(t) || *_stp_pt_frame_data(t) + 8 != r.rsp) {
		printf("FAIL: return frame mismatch\n");
		failures++;
	}
	return 0;
}

static int on_entry_all(struct _stp_pt_thread *t, struct _stp_pt_probe *p, void *data)
{
	struct user_regs_struct r;

	(void)p;
	((struct sym *)data)->hits++;
	if (_stp_pt_get_regs(t, &r) == 0 && _stp_pt_frame_data(t))
		*_stp_pt_frame_data(t) = r.rsp;
	return 0;
}

static int on_return_all(struct _stp_pt_thread *t, struct _stp_pt_probe *p, void *data)
{
	struct user_regs_struct r;

	(void)p;
	((struct sym *)data)->returns++;
	if (_stp_pt_get_regs(t, &r) < 0 || *_stp_pt_frame_data(t) + 8 != r.rsp) {
		printf("FAIL: return frame mismatch\n");
		failures++;
	}
	return 0;
}

static void place(struct _stp_pt_thread *t)
{
	struct _stp_pt_proc *p = _stp_pt_thread_proc(t);

	if (all_functions) {
		each_fn = place_one;
		each_arg = p;
		sym_addr(_stp_pt_pid(t), NULL, NULL);
		each_fn = NULL;
	}

	for (int i = 0; i < nsyms; i++) {
		uint64_t a;
		int rc;
		if (&syms[i] == lib_sym)
			continue;
		if (sym_addr(_stp_pt_pid(t), syms[i].name, &a) < 0)
			continue; /* not in this program (e.g. the shell) */
		struct _stp_pt_probe *pr = NULL;
		rc = _stp_pt_probe_add(p, a, on_entry, syms[i].ret ? on_return : NULL, &syms[i],
				       &pr);
		if (rc == 0 && nplaced < 64) {
			placed_in[nplaced] = p;
			placed[nplaced++] = pr;
		}
		if (rc < 0) {
			printf("FAIL: probe %s at %#lx: %s\n", syms[i].name, (long)a,
			       strerror(-rc));
			failures++;
		}
	}
}

/* ---- a library probe (-l) ---- */

/* Per process: the probe placed in the library's current load. A fork
 * child has a copy of its parent's, whose pointer we do not know (as
 * runtime/probes/process_probes.c): pr NULL, placed 1. */
struct libpl {
	struct _stp_pt_proc *p;
	struct _stp_pt_probe *pr;
	uint64_t bias;
	int placed, seen;
};
static struct libpl libpls[32];

static struct libpl *libpl_of(struct _stp_pt_proc *p)
{
	struct libpl *free_one = NULL;

	for (int i = 0; i < 32; i++) {
		if (libpls[i].p == p)
			return &libpls[i];
		if (!libpls[i].p && !free_one)
			free_one = &libpls[i];
	}
	if (free_one) {
		memset(free_one, 0, sizeof *free_one);
		free_one->p = p;
	}
	return free_one;
}

static void each_lib(const char *name, uint64_t bias, void *data)
{
	struct libpl *lp = data;
	const char *base = strrchr(name, '/');
	uint64_t v, first;
	int dyn;

	base = base ? base + 1 : name;
	if (strcmp(base, lib_name) != 0)
		return;
	lp->seen = 1;
	if (lp->placed && lp->bias == bias)
		return;
	if (lp->placed && lp->pr)
		_stp_pt_probe_remove(lp->p, lp->pr);
	lp->pr = NULL;
	lp->placed = 0;
	if (elf_lookup(name, lib_sym->name, &v, &dyn, &first) < 0) {
		printf("FAIL: %s not in %s\n", lib_sym->name, name);
		return;
	}
	if (_stp_pt_probe_add(lp->p, bias + v, on_entry, NULL, lib_sym, &lp->pr) < 0)
		printf("FAIL: probe %s in %s\n", lib_sym->name, name);
	else
		lp->placed = 1;
	lp->bias = bias;
}

static void on_libs(struct _stp_pt_thread *t, void *data)
{
	struct libpl *lp = libpl_of(_stp_pt_thread_proc(t));

	(void)data;
	if (!lp)
		return;
	lp->seen = 0;
	_stp_pt_each_library(lp->p, each_lib, lp);
	if (!lp->seen && lp->placed) {
		/* unloaded: its code is gone, and so is our int3 */
		if (lp->pr)
			_stp_pt_probe_remove(lp->p, lp->pr);
		lp->pr = NULL;
		lp->placed = 0;
	}
}

static void cb_fork(struct _stp_pt_thread *parent, struct _stp_pt_proc *child, void *user)
{
	struct libpl *pp = libpl_of(_stp_pt_thread_proc(parent)), *cp;

	(void)user;
	if (lib_name && pp && pp->placed && (cp = libpl_of(child))) {
		cp->placed = 1;
		cp->bias = pp->bias;
		cp->pr = NULL;
	}
}

static void cb_proc_gone(struct _stp_pt_proc *p)
{
	for (int i = 0; i < 32; i++)
		if (libpls[i].p == p)
			libpls[i].p = NULL;
}

static void cb_exec(struct _stp_pt_thread *t, void *user)
{
	(void)user;
	place(t);
	if (sigstep_on) {
		sigstep_addrs(_stp_pt_pid(t));
		_stp_pt_signal_step(t, on_sigstep, NULL);
	}
	if (lib_name) {
		struct libpl *lp = libpl_of(_stp_pt_thread_proc(t));
		if (lp)
			lp->placed = 0, lp->pr = NULL;
		if (_stp_pt_watch_libraries(_stp_pt_thread_proc(t), on_libs, NULL) < 0)
			printf("FAIL: watch libraries\n");
	}
	if (count_syscalls)
		_stp_pt_syscalls(_stp_pt_thread_proc(t), on_syscall, NULL);
	if (watch_on)
		_stp_pt_watch_syscalls(t, watch_want, sizeof watch_want, on_watch, NULL);
}

static pid_t main_pid;
static int main_status = -1;

static void cb_proc_exit(struct _stp_pt_proc *p, int status, void *user)
{
	(void)user;
	cb_proc_gone(p);
	if (_stp_pt_proc_pid(p) == main_pid)
		main_status = status;
}

static void cb_other_exit(pid_t pid, int status, void *user)
{
	(void)user;
	if (pid == main_pid)
		main_status = status;
}

static void on_sigint(int sig)
{
	(void)sig;
	got_sigint = 1;
}

/* ---- checks after detaching ---- */

static unsigned char *read_code(pid_t pid, size_t *len)
{
	char path[64], line[4096];
	unsigned char *buf = NULL;
	FILE *f;
	int fd;

	*len = 0;
	pid = live_task(pid);
	snprintf(path, sizeof path, "/proc/%d/maps", (int)pid);
	if (!(f = fopen(path, "r")))
		return NULL;
	snprintf(path, sizeof path, "/proc/%d/mem", (int)pid);
	fd = open(path, O_RDONLY);
	while (fd >= 0 && fgets(line, sizeof line, f)) {
		unsigned long lo, hi;
		char perms[8];
		if (sscanf(line, "%lx-%lx %7s", &lo, &hi, perms) != 3 || perms[2] != 'x' ||
		    strstr(line, "[v")) /* [vdso], [vsyscall] */
			continue;
		buf = realloc(buf, *len + (hi - lo));
		if (pread(fd, buf + *len, hi - lo, (off_t)lo) != (ssize_t)(hi - lo))
			continue;
		*len += hi - lo;
	}
	if (fd >= 0)
		close(fd);
	fclose(f);
	return buf;
}

static int any_stopped(pid_t pid)
{
	char path[64], buf[512];
	int stopped = 0;

	for (int tries = 0; tries < 50; tries++) {
		FILE *ls;
		char cmd[128];
		stopped = 0;
		snprintf(cmd, sizeof cmd, "ls /proc/%d/task", (int)pid);
		if (!(ls = popen(cmd, "r")))
			return -1;
		while (fgets(buf, sizeof buf, ls)) {
			int tid = atoi(buf), fd;
			ssize_t n;
			char *p;
			snprintf(path, sizeof path, "/proc/%d/task/%d/stat", (int)pid, tid);
			if ((fd = open(path, O_RDONLY)) < 0)
				continue;
			n = read(fd, buf, sizeof buf - 1);
			close(fd);
			if (n <= 0)
				continue;
			buf[n] = 0;
			p = strrchr(buf, ')');
			if (p && (p[2] == 'T' || p[2] == 't'))
				stopped = 1;
		}
		pclose(ls);
		if (!stopped)
			return 0;
		usleep(10000); /* detaching wakes threads asynchronously */
	}
	return stopped;
}

static char thread_state(pid_t pid)
{
	char path[64], buf[512], *p;
	FILE *f;

	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	if (!(f = fopen(path, "r")))
		return '?';
	p = fgets(buf, sizeof buf, f) ? strrchr(buf, ')') : NULL;
	fclose(f);
	return p && p[1] ? p[2] : '?';
}

static void report(void)
{
	for (int i = 0; i < nsyms; i++) {
		if (syms[i].step)
			printf("steps %s insn=%llu\n", syms[i].name,
			       (unsigned long long)syms[i].steps);
		else if (syms[i].ret)
			printf("probe %s hits=%llu returns=%llu retsum=%llu\n", syms[i].name,
			       (unsigned long long)syms[i].hits,
			       (unsigned long long)syms[i].returns,
			       (unsigned long long)syms[i].retsum);
		else
			printf("probe %s hits=%llu\n", syms[i].name,
			       (unsigned long long)syms[i].hits);
	}
	if (count_syscalls)
		printf("syscall getppid entries=%llu exits=%llu\n", (unsigned long long)sys_entries,
		       (unsigned long long)sys_exits);
	if (watch_on)
		printf("watch getppid entries=%llu exits=%llu\n", (unsigned long long)watch_entries,
		       (unsigned long long)watch_exits);
	if (count_threads)
		printf("threads started=%llu\n", (unsigned long long)threads_started);
	if (held && !hold_failed)
		printf("threads held\n");
	if (sigstep_on) {
		printf("sigstep on_sig calls=%llu\n", (unsigned long long)sig_calls);
		printf("sigstep on_info calls=%llu\n", (unsigned long long)info_calls);
	}
	if (main_status >= 0) {
		if (WIFEXITED(main_status))
			printf("exit status=%d\n", WEXITSTATUS(main_status));
		else if (WIFSIGNALED(main_status))
			printf("exit signal=%d\n", WTERMSIG(main_status));
	}
}

static pid_t start_untraced(char **argv)
{
	int pfd[2];
	char c;
	pid_t pid;

	if (pipe(pfd) < 0)
		return -1;
	pid = fork();
	if (pid == 0) {
		/* the target writes one byte on fd 3 when it is ready */
		close(pfd[0]);
		if (pfd[1] != 3) {
			dup2(pfd[1], 3);
			close(pfd[1]);
		}
		execvp(argv[0], argv);
		_exit(127);
	}
	close(pfd[1]);
	if (read(pfd[0], &c, 1) != 1)
		fprintf(stderr, "target did not say it was ready\n");
	close(pfd[0]);
	return pid;
}

int main(int argc, char **argv)
{
	struct _stp_pt_callbacks cb = {0};
	struct _stp_pt_proc *p = NULL;
	struct sigaction sa;
	int opt, options = 0, attach = 0, rc;
	unsigned char *before = NULL;
	size_t before_len = 0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	while ((opt = getopt(argc, argv, "+f:r:s:S:Fcd:i:XBAvp:t:PR:K:yWl:egGTH:")) != -1) {
		switch (opt) {
		case 'f':
		case 'r':
		case 's':
		case 'S':
			if (nsyms == 16)
				return 2;
			syms[nsyms].name = optarg;
			syms[nsyms].ret = opt == 'r';
			syms[nsyms].step = opt == 's'	? _STP_PT_STEP_INSN
					   : opt == 'S' ? _STP_PT_STEP_BLOCK
							: 0;
			nsyms++;
			break;
		case 'F':
			options |= _STP_PT_FOLLOW_FORK;
			break;
		case 'A':
			all_functions = 1;
			break;
		case 'p':
			attach_pid = atoi(optarg);
			attach = 1;
			break;
		case 't':
			detach_ms = atoi(optarg);
			break;
		case 'P':
			stop_first = 1;
			break;
		case 'R':
			remove_after = strtoull(optarg, NULL, 0);
			break;
		case 'K':
			kill_after = strtoull(optarg, NULL, 0);
			break;
		case 'y':
			count_syscalls = 1;
			break;
		case 'W':
			watch_on = 1;
			break;
		case 'e':
			echo_pid = 1;
			break;
		case 'l': {
			char *colon = strchr(optarg, ':');
			if (!colon || nsyms == 16)
				return 2;
			*colon = 0;
			lib_name = optarg;
			lib_sym = &syms[nsyms];
			syms[nsyms++].name = colon + 1;
			break;
		}
		case 'c':
			options |= _STP_PT_SHELL;
			break;
		case 'd':
			detach_after = strtoull(optarg, NULL, 0);
			break;
		case 'i':
			sigint_after = strtoull(optarg, NULL, 0);
			break;
		case 'X':
			attach = 1;
			break;
		case 'B':
			printf("blockstep honoured=%d\n", _stp_pt_blockstep_honoured());
			printf("hardware breakpoints honoured=%d\n", _stp_pt_hwbp_honoured());
			return 0;
		case 'G':
			_stp_pt_sigstep_always = 1;
			/* fall through */
		case 'g':
			sigstep_on = 1;
			break;
		case 'T':
			count_threads = 1;
			break;
		case 'H':
			hold_every = strtoull(optarg, NULL, 0);
			break;
		case 'v':
			_stp_pt_set_debug(1);
			break;
		default:
			return 2;
		}
	}
	if (optind >= argc && !attach_pid) {
		fprintf(stderr, "usage: pt-driver [options] -- command [args]\n");
		return 2;
	}
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_sigint; /* no SA_RESTART: interrupts the wait */
	sigaction(SIGINT, &sa, NULL);
	cb.exec = cb_exec;
	cb.thread_start = cb_thread_start;
	cb.thread_exit = cb_thread_exit;
	cb.fork = cb_fork;
	cb.proc_exit = cb_proc_exit;
	cb.other_exit = cb_other_exit;
	S = _stp_pt_session_new(&cb, NULL, options);
	if (attach) {
		main_pid = attach_pid ? attach_pid : start_untraced(argv + optind);
		if (stop_first) {
			kill(main_pid, SIGSTOP);
			for (int i = 0; i < 500 && thread_state(main_pid) != 'T'; i++)
				usleep(2000);
		}
		before = read_code(main_pid, &before_len);
		rc = _stp_pt_attach(S, main_pid, &p);
		if (rc == 0 && sigstep_on)
			sigstep_addrs(main_pid);
		if (rc == 0) {
			struct _stp_pt_thread *t = NULL;
			/* place through any thread: the ELF lookup needs only the pid */
			(void)t;
			for (int i = 0; i < nsyms; i++) {
				uint64_t a;
				if (sym_addr(main_pid, syms[i].name, &a) == 0)
					rc = _stp_pt_probe_add(p, a, on_entry,
							       syms[i].ret ? on_return : NULL,
							       &syms[i], NULL);
				if (rc < 0)
					printf("FAIL: probe %s: %s\n", syms[i].name, strerror(-rc));
			}
		}
	} else {
		rc = _stp_pt_launch(S, argv + optind, &p);
		if (rc == 0)
			main_pid = _stp_pt_proc_pid(p);
	}
	if (rc < 0) {
		printf("FAIL: %s: %s\n", attach ? "attach" : "launch", strerror(-rc));
		free(before);
		if (attach && !attach_pid)
			kill(main_pid, SIGKILL);
		_stp_pt_session_free(S);
		return 1;
	}
	_stp_pt_resume(p);
	if (echo_pid)
		printf("launched %d\n", (int)main_pid);
	while (_stp_pt_active(S)) {
		if (got_sigint || (detach_after && total_hits >= detach_after))
			break;
		if (remove_after && total_hits >= remove_after) {
			for (int i = 0; i < nplaced; i++)
				if (_stp_pt_probe_remove(placed_in[i], placed[i]) < 0)
					printf("FAIL: remove\n");
			printf("removed\n");
			remove_after = 0;
		}
		if (detach_ms > 0) {
			_stp_pt_wait(S, detach_ms);
			break;
		}
		rc = _stp_pt_wait(S, -1);
		if (rc < 0 && rc != -EINTR)
			break;
	}
	if (_stp_pt_active(S)) {
		_stp_pt_detach_all(S);
		printf("detached%s\n", got_sigint ? " on SIGINT" : "");
		if (attach) {
			size_t after_len;
			unsigned char *after = read_code(main_pid, &after_len);
			if (getenv("PT_DRIVER_DEBUG") && after && before) {
				fprintf(stderr, "code: %zu bytes before, %zu after\n", before_len,
					after_len);
				for (size_t i = 0; i < before_len && i < after_len; i++)
					if (before[i] != after[i]) {
						fprintf(stderr,
							"first difference at %zu: %02x -> %02x\n",
							i, before[i], after[i]);
						break;
					}
				char c[64];
				snprintf(c, sizeof c, "cat /proc/%d/maps >&2", (int)main_pid);
				if (system(c) != 0)
					fprintf(stderr, "no maps\n");
			}
			printf("code %s\n", after && before && after_len == before_len &&
						    memcmp(before, after, after_len) == 0
						? "identical"
						: "CHANGED");
			if (!attach_pid && !stop_first)
				printf("%s\n", any_stopped(main_pid) ? "STOPPED" : "not stopped");
			free(after);
			if (detach_ms) {
				char st = thread_state(main_pid);
				/* PTRACE_DETACH wakes a thread of a stopped group,
				 * which re-enters the group-stop by itself: until it
				 * has, /proc shows it running (see ptrace-quirks.md) */
				for (int i = 0; stop_first && st != 'T' && i < 300; i++) {
					usleep(10000);
					st = thread_state(main_pid);
				}
				printf("state %c\n", st);
			}
			if (attach_pid) {
				free(before);
				report();
				_stp_pt_session_free(S);
				return failures ? 1 : 0;
			}
			kill(main_pid, stop_first ? SIGKILL : SIGTERM);
		}
		/* the target is still our child: wait for it */
		if (waitpid(main_pid, &main_status, 0) < 0)
			main_status = -1;
	}
	free(before);
	if (all_functions && all_placed > 0)
		printf("all functions probed\n");
	report();
	{
		struct _stp_pt_stats st;
		_stp_pt_get_stats(S, &st);
		fprintf(
		    stderr,
		    "stats: stops=%llu hits=%llu returns=%llu emulated=%llu ool=%llu errors=%llu\n",
		    (unsigned long long)st.stops, (unsigned long long)st.hits,
		    (unsigned long long)st.returns, (unsigned long long)st.emulated,
		    (unsigned long long)st.stepped, (unsigned long long)st.errors);
	}
	_stp_pt_session_free(S);
	return failures ? 1 : 0;
}
