/* Address spaces of traced processes: memory access through /proc/PID/mem
 * (it writes through page protections, so code can be patched without
 * mprotect), and mapping scratch pages into a target by making one of its
 * threads run an mmap system call. */
#include "ptrace_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000
#endif

static int open_mem(pid_t pid)
{
	char path[64];

	snprintf(path, sizeof path, "/proc/%d/mem", (int)pid);
	return open(path, O_RDWR | O_CLOEXEC);
}

struct pt_mm *_stp_pt_mm_new(pid_t pid)
{
	struct pt_mm *mm = calloc(1, sizeof *mm);

	if (!mm)
		return NULL;
	mm->refs = 1;
	mm->pid = pid;
	mm->memfd = open_mem(pid);
	if (mm->memfd < 0) {
		int err = errno;
		_stp_dbg(STP_DBG_PTRACE, 1, "open /proc/%d/mem: %s", (int)pid, strerror(err));
		free(mm);
		errno = err; /* EMFILE, ...: the caller reports it */
		return NULL;
	}
	return mm;
}

/* The address space of a fork child: the same breakpoints (its memory is a
 * copy of the parent's, int3s included) and scratch pages. */
struct pt_mm *_stp_pt_mm_copy(const struct pt_mm *from, pid_t pid)
{
	struct pt_mm *mm = _stp_pt_mm_new(pid);

	if (!mm)
		return NULL;
	mm->syscall_insn = from->syscall_insn;
	for (const struct pt_scratch *sc = from->scratch; sc; sc = sc->next) {
		struct pt_scratch *n = malloc(sizeof *n);
		if (!n)
			goto fail;
		*n = *sc;
		n->next = mm->scratch;
		mm->scratch = n;
	}
	for (int b = 0; b < PT_BK_BUCKETS; b++) {
		for (const struct _stp_pt_bkpt *bk = from->bk[b]; bk; bk = bk->next) {
			struct _stp_pt_bkpt *n = malloc(sizeof *n);
			if (!n)
				goto fail;
			*n = *bk;
			n->probes = NULL;
			n->ret_refs = 0; /* counted again by _stp_pt_frames_copy */
			n->next = mm->bk[b];
			mm->bk[b] = n;
			mm->nbk++;
			for (const struct _stp_pt_probe *p = bk->probes; p; p = p->next) {
				struct _stp_pt_probe *np = calloc(1, sizeof *np);
				if (!np)
					goto fail;
				np->bp = n;
				np->entry = p->entry;
				np->ret = p->ret;
				np->data = p->data;
				np->next = n->probes;
				n->probes = np;
			}
		}
	}
	return mm;
fail:
	_stp_pt_mm_put(mm);
	return NULL;
}

/* Drop a reference; the last one frees the bookkeeping (never touches the
 * target's memory: removing breakpoints is _stp_pt_mm_remove_all's job). */
void _stp_pt_mm_put(struct pt_mm *mm)
{
	if (!mm || --mm->refs > 0)
		return;
	for (int b = 0; b < PT_BK_BUCKETS; b++) {
		struct _stp_pt_bkpt *bk = mm->bk[b];
		while (bk) {
			struct _stp_pt_bkpt *nb = bk->next;
			struct _stp_pt_probe *p = bk->probes;
			while (p) {
				struct _stp_pt_probe *np = p->next;
				free(p);
				p = np;
			}
			free(bk);
			bk = nb;
		}
	}
	while (mm->dead_probes) {
		struct _stp_pt_probe *n = mm->dead_probes->next;
		free(mm->dead_probes);
		mm->dead_probes = n;
	}
	while (mm->scratch) {
		struct pt_scratch *n = mm->scratch->next;
		free(mm->scratch);
		mm->scratch = n;
	}
	if (mm->memfd >= 0)
		close(mm->memfd);
	free(mm->code);
	free(mm);
}

size_t _stp_pt_exec_ranges(pid_t tid, uint64_t (**out)[2])
{
	char path[64], line[512];
	uint64_t(*v)[2] = NULL;
	size_t n = 0, cap = 0;
	FILE *f;

	*out = NULL;
	snprintf(path, sizeof path, "/proc/%d/maps", (int)tid);
	if (!(f = fopen(path, "re")))
		return 0;
	while (fgets(line, sizeof line, f)) {
		unsigned long lo, hi;
		char perms[8];
		if (sscanf(line, "%lx-%lx %7s", &lo, &hi, perms) != 3 || perms[2] != 'x')
			continue;
		if (n == cap) {
			void *w = realloc(v, (cap = cap ? 2 * cap : 64) * sizeof *v);
			if (!w) {
				free(v);
				fclose(f);
				return 0;
			}
			v = w;
		}
		v[n][0] = lo;
		v[n++][1] = hi;
	}
	fclose(f);
	*out = v;
	return n;
}

void _stp_pt_mm_code_read(struct pt_mm *mm, pid_t tid)
{
	free(mm->code);
	mm->ncode = _stp_pt_exec_ranges(tid, &mm->code);
}

int _stp_pt_mm_is_code(struct pt_mm *mm, pid_t tid, uint64_t addr)
{
	if (_stp_pt_in_ranges(mm->code, mm->ncode, addr))
		return 1;
	_stp_pt_mm_code_read(mm, tid);
	return _stp_pt_in_ranges(mm->code, mm->ncode, addr);
}

/* process_vm_readv/writev first: cheaper per call than /proc/PID/mem
 * (which takes a bounce page each time); /proc/PID/mem then for what they
 * refuse: pages without the access (code, for breakpoints) and a vfork
 * child's memory reached through its parent's pid. */
int _stp_pt_mm_read(struct pt_mm *mm, uint64_t addr, void *buf, size_t len)
{
	struct iovec local = {buf, len}, remote = {(void *)(uintptr_t)addr, len};
	ssize_t n;

	if (addr > (uint64_t)INT64_MAX - len)
		return -EFAULT;
	if (process_vm_readv(mm->pid, &local, 1, &remote, 1, 0) == (ssize_t)len)
		return 0;
	n = pread(mm->memfd, buf, len, (off_t)addr);
	return n == (ssize_t)len ? 0 : -EFAULT;
}

int _stp_pt_mm_write(struct pt_mm *mm, uint64_t addr, const void *buf, size_t len)
{
	struct iovec local = {(void *)buf, len}, remote = {(void *)(uintptr_t)addr, len};
	ssize_t n;

	if (addr > (uint64_t)INT64_MAX - len)
		return -EFAULT;
	if (len <= 64 && process_vm_writev(mm->pid, &local, 1, &remote, 1, 0) == (ssize_t)len)
		return 0;
	n = pwrite(mm->memfd, buf, len, (off_t)addr);
	return n == (ssize_t)len ? 0 : -EFAULT;
}

/* An executable `syscall` instruction (0f 05) of the target, found without
 * writing anything: first in the vDSO, else in any executable mapping.
 * Other threads may run that code meanwhile; it is not changed. */
static uint64_t find_syscall_insn(struct pt_mm *mm, pid_t tid)
{
	char path[64], line[512];
	uint64_t found = 0;
	FILE *f;

	/* the thread's view: a leader that called pthread_exit has no maps */
	snprintf(path, sizeof path, "/proc/%d/maps", (int)tid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	for (int pass = 0; pass < 2 && !found; pass++) {
		rewind(f);
		while (!found && fgets(line, sizeof line, f)) {
			unsigned long lo, hi;
			char perms[8];
			uint8_t *buf;
			size_t n;

			if (sscanf(line, "%lx-%lx %7s", &lo, &hi, perms) != 3 || perms[2] != 'x')
				continue;
			if (pass == 0 && !strstr(line, "[vdso]"))
				continue;
			n = hi - lo > 1 << 20 ? 1 << 20 : hi - lo;
			buf = malloc(n);
			if (!buf)
				break;
			if (_stp_pt_mm_read(mm, lo, buf, n) == 0) {
				for (size_t i = 0; i + 1 < n; i++) {
					if (buf[i] == 0x0f && buf[i + 1] == 0x05) {
						found = lo + i;
						break;
					}
				}
			}
			free(buf);
		}
	}
	fclose(f);
	return found;
}

/* A free page-sized gap in the target's address space as near to `near`
 * as possible (so RIP-relative operands of copied instructions reach). */
static uint64_t free_gap_near(pid_t pid, uint64_t near)
{
	char path[64], line[512];
	uint64_t prev_hi = 0x10000, best = 0, best_dist = UINT64_MAX;
	FILE *f;

	snprintf(path, sizeof path, "/proc/%d/maps", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (fgets(line, sizeof line, f)) {
		unsigned long lo, hi;

		if (sscanf(line, "%lx-%lx", &lo, &hi) != 2)
			continue;
		if (lo >= prev_hi + 2 * PT_SCRATCH_SIZE) {
			/* gap [prev_hi, lo): leave a guard page on each side */
			uint64_t a = lo - 2 * PT_SCRATCH_SIZE, b = prev_hi + PT_SCRATCH_SIZE;
			uint64_t cand = near > a ? a : near < b ? b : near & ~(uint64_t)4095;
			uint64_t d = cand > near ? cand - near : near - cand;
			if (d < best_dist) {
				best_dist = d;
				best = cand;
			}
		}
		if (hi > prev_hi)
			prev_hi = hi;
	}
	fclose(f);
	return best;
}

/* Single-step t until done(regs, arg) says so; signals arriving meanwhile
 * are kept for delivery when t resumes. *r: the registers after. */
static int step_until(struct _stp_pt_thread *t,
		      int (*done)(const struct user_regs_struct *, uint64_t), uint64_t arg,
		      struct user_regs_struct *r)
{
	int st;

	for (;;) {
		if (ptrace(PTRACE_SINGLESTEP, t->tid, 0, 0) < 0)
			return -errno;
		pid_t w;
		while ((w = waitpid(t->tid, &st, __WALL)) < 0 && errno == EINTR)
			; /* a signal to the tracer: the thread still steps */
		if (w < 0)
			return -errno;
		t->proc->s->stats.stops++;
		if (!WIFSTOPPED(st)) {
			/* died (SIGKILL): let the loop see the exit */
			t->state = PT_RUNNING;
			t->regs_valid = 0;
			_stp_pt_requeue_exit(t, st);
			return -ESRCH;
		}
		if (WSTOPSIG(st) == SIGTRAP && (st >> 16) == 0) {
			if (ptrace(PTRACE_GETREGS, t->tid, 0, r) < 0)
				return -errno;
			if (done(r, arg))
				return 0;
			continue; /* not stepped yet (spurious trap) */
		}
		if ((st >> 16) == 0 && WSTOPSIG(st) != SIGTRAP && !t->resume_sig)
			t->resume_sig = WSTOPSIG(st); /* deliver later */
	}
}

static int at_rip(const struct user_regs_struct *r, uint64_t rip)
{
	return r->rip == rip;
}

static int moved_from(const struct user_regs_struct *r, uint64_t rip)
{
	return r->rip != rip;
}

/* Make thread t run system call nr(a[0..5]) at the target's `syscall`
 * instruction and return its result in *ret. t must be stopped; its
 * registers are restored afterwards. A signal arriving meanwhile is kept
 * for delivery when t resumes. */
int _stp_pt_inject_syscall(struct _stp_pt_thread *t, long nr, const uint64_t a[6], int64_t *ret)
{
	struct pt_mm *mm = t->proc->mm;
	struct user_regs_struct saved, r;
	int rc = 0;

	if (!mm->syscall_insn)
		mm->syscall_insn = find_syscall_insn(mm, t->tid);
	if (!mm->syscall_insn)
		return -ENOEXEC;
	if ((rc = _stp_pt_fetch_regs(t)) < 0)
		return rc;
	saved = t->regs;
	r = saved;
	r.rax = (unsigned long long)nr;
	r.orig_rax = (unsigned long long)-1; /* no syscall restart on resume */
	r.rdi = a[0];
	r.rsi = a[1];
	r.rdx = a[2];
	r.r10 = a[3];
	r.r8 = a[4];
	r.r9 = a[5];
	r.rip = mm->syscall_insn;
	if (ptrace(PTRACE_SETREGS, t->tid, 0, &r) < 0)
		return -errno;
	rc = step_until(t, at_rip, mm->syscall_insn + 2, &r);
	if (rc == -ESRCH)
		return rc;
	if (ptrace(PTRACE_SETREGS, t->tid, 0, &saved) < 0 && !rc)
		rc = -errno;
	t->regs = saved;
	t->regs_valid = 1;
	if (rc == 0)
		*ret = (int64_t)r.rax;
	return rc;
}

/* pushfq and popfq are emulated, not stepped: the kernel takes the trap
 * flag of a stepped popf for the program's own (x86 enable_single_step)
 * and keeps it so while the thread is stepped on, into a signal handler
 * too, whose frame then restores it: after the handler the program would
 * die of a SIGTRAP. 1 when done. */
int _stp_pt_emulate_flags_insn(struct _stp_pt_thread *t)
{
	struct _stp_x86_insn in;
	struct _stp_x86_mem_ops ops = _stp_pt_x86_mem_ops(t);
	uint8_t op;

	if (_stp_pt_read(t, t->regs.rip, &op, 1) < 0 || (op != 0x9c && op != 0x9d) ||
	    _stp_x86_decode(&op, 1, t->regs.rip, &in) < 0 ||
	    (in.kind != STP_X86_PUSHF && in.kind != STP_X86_POPF) ||
	    _stp_x86_emulate(&in, t->regs.rip, &t->regs, &ops) != 1)
		return 0;
	t->regs_dirty = 1;
	return 1;
}

int _stp_pt_step_insn(struct _stp_pt_thread *t)
{
	struct user_regs_struct r;
	int rc;

	if ((rc = _stp_pt_fetch_regs(t)) < 0)
		return rc;
	if (_stp_pt_emulate_flags_insn(t))
		return 0;
	if (t->regs_dirty) {
		if (ptrace(PTRACE_SETREGS, t->tid, 0, &t->regs) < 0)
			return -errno;
		t->regs_dirty = 0;
	}
	if ((rc = step_until(t, moved_from, t->regs.rip, &r)) < 0)
		return rc;
	t->regs = r;
	t->regs_valid = 1;
	return 0;
}

/* Map a scratch page (r-x, private, anonymous) as near `near` as the
 * address space allows, through thread t. */
int _stp_pt_inject_mmap(struct _stp_pt_thread *t, uint64_t near, uint64_t *addr)
{
	uint64_t hint = near ? free_gap_near(t->tid, near) : 0;
	uint64_t a[6] = {hint,
			 PT_SCRATCH_SIZE,
			 PROT_READ | PROT_EXEC,
			 MAP_PRIVATE | MAP_ANONYMOUS | (hint ? MAP_FIXED_NOREPLACE : 0),
			 (uint64_t)-1,
			 0};
	int64_t ret;
	int rc = _stp_pt_inject_syscall(t, SYS_mmap, a, &ret);

	if (rc < 0)
		return rc;
	if (ret < 0 && ret > -4096) {
		if (hint && ret == -EEXIST)
			return _stp_pt_inject_mmap(t, 0, addr);
		return (int)ret;
	}
	*addr = (uint64_t)ret;
	_stp_dbg(STP_DBG_BKPT, 1, "scratch page %#llx in %d (near %#llx)", (unsigned long long)ret,
		 (int)t->tid, (unsigned long long)near);
	return 0;
}

int _stp_pt_inject_munmap(struct _stp_pt_thread *t, uint64_t addr)
{
	uint64_t a[6] = {addr, PT_SCRATCH_SIZE, 0, 0, 0, 0};
	int64_t ret;
	int rc = _stp_pt_inject_syscall(t, SYS_munmap, a, &ret);

	return rc < 0 ? rc : (int)ret;
}
