/* The dynamic call graph's breakpoint mechanism: int3 sites on the branches
 * of the code a traced thread runs (see dcg_internal.h). A traced call
 * costs the stop at its call instruction and the one at its return; the
 * code between is walked once, when first reached, and the walk only ever
 * follows addresses that are certainly instruction starts (the address the
 * thread is at, fall-through, direct jump targets): never what follows a
 * call, which may be a noreturn call's padding or another function. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "dcg_internal.h"
#include "ptrace_engine.h"
#include "stp_internal.h"
#include "arch/x86_64/insn.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- reading code ---- */

#define WIN 512
static struct {
	pid_t pid;
	uint64_t base;
	size_t len;
	uint8_t b[WIN];
} win;

void _stp_dcg_window_drop(void)
{
	win.len = 0;
}

int _stp_dcg_read_insn(struct _stp_pt_thread *t, uint64_t addr, struct _stp_x86_insn *in)
{
	pid_t pid = _stp_pt_pid(t);

	if (win.pid != pid || addr < win.base || addr - win.base + 15 > win.len) {
		/* a whole window, or less where the mapping ends */
		size_t n = WIN;
		win.len = 0;
		while (n >= 16 && _stp_pt_read_code(t, addr, win.b, n) < 0)
			n /= 2;
		if (n < 16) {
			n = 15;
			while (n > 0 && _stp_pt_read_code(t, addr, win.b, n) < 0)
				n--;
			if (!n)
				return -EFAULT;
		}
		win.pid = pid;
		win.base = addr;
		win.len = n;
	}
	return _stp_x86_decode(win.b + (addr - win.base), win.base + win.len - addr, addr, in);
}

/* ---- per-process tables ---- */

struct site {
	uint64_t addr; /* 0: free slot */
	uint8_t flags;
	struct _stp_pt_probe *pr;
	struct _stp_x86_insn in;
};

struct sproc {
	pid_t pid;
	struct _stp_pt_proc *proc;
	struct site *s; /* open addressing by addr */
	size_t ns, caps;
	uint64_t *seen; /* instruction addresses walked */
	size_t nseen, capseen;
	int warned;
};

static struct sproc *procs;
static size_t nprocs;
static uint64_t placed;

static size_t hash(uint64_t a, size_t cap)
{
	return (size_t)((a ^ (a >> 17)) * 0x9e3779b97f4a7c15ull >> 7) & (cap - 1);
}

static struct sproc *sproc_of(pid_t pid, struct _stp_pt_thread *t)
{
	for (size_t i = 0; i < nprocs; i++)
		if (procs[i].pid == pid)
			return &procs[i];
	if (!t)
		return NULL;
	struct sproc *v = realloc(procs, (nprocs + 1) * sizeof *v);
	if (!v)
		return NULL;
	procs = v;
	memset(&procs[nprocs], 0, sizeof *procs);
	procs[nprocs].pid = pid;
	procs[nprocs].proc = _stp_pt_thread_proc(t);
	return &procs[nprocs++];
}

static int seen_has(const struct sproc *p, uint64_t a)
{
	if (!p->capseen)
		return 0;
	for (size_t i = hash(a, p->capseen);; i = (i + 1) & (p->capseen - 1)) {
		if (p->seen[i] == a)
			return 1;
		if (!p->seen[i])
			return 0;
	}
}

static int seen_add(struct sproc *p, uint64_t a)
{
	if (2 * (p->nseen + 1) > p->capseen) {
		size_t cap = p->capseen ? 2 * p->capseen : 4096;
		uint64_t *v = calloc(cap, sizeof *v);
		if (!v)
			return -ENOMEM;
		for (size_t i = 0; i < p->capseen; i++)
			if (p->seen[i])
				for (size_t j = hash(p->seen[i], cap);; j = (j + 1) & (cap - 1))
					if (!v[j]) {
						v[j] = p->seen[i];
						break;
					}
		free(p->seen);
		p->seen = v;
		p->capseen = cap;
	}
	for (size_t i = hash(a, p->capseen);; i = (i + 1) & (p->capseen - 1))
		if (!p->seen[i]) {
			p->seen[i] = a;
			p->nseen++;
			return 0;
		} else if (p->seen[i] == a) {
			return 0;
		}
}

static struct site *site_find(const struct sproc *p, uint64_t a)
{
	if (!p->caps)
		return NULL;
	for (size_t i = hash(a, p->caps);; i = (i + 1) & (p->caps - 1)) {
		if (p->s[i].addr == a)
			return &p->s[i];
		if (!p->s[i].addr)
			return NULL;
	}
}

static struct site *site_slot(struct sproc *p, uint64_t a)
{
	struct site *s = site_find(p, a);

	if (s)
		return s;
	if (2 * (p->ns + 1) > p->caps) {
		size_t cap = p->caps ? 2 * p->caps : 1024;
		struct site *v = calloc(cap, sizeof *v);
		if (!v)
			return NULL;
		for (size_t i = 0; i < p->caps; i++)
			if (p->s[i].addr)
				for (size_t j = hash(p->s[i].addr, cap);; j = (j + 1) & (cap - 1))
					if (!v[j].addr) {
						v[j] = p->s[i];
						break;
					}
		free(p->s);
		p->s = v;
		p->caps = cap;
	}
	for (size_t i = hash(a, p->caps);; i = (i + 1) & (p->caps - 1))
		if (!p->s[i].addr) {
			p->ns++;
			return &p->s[i];
		}
}

static int site_add(struct sproc *p, uint64_t a, int flag, const struct _stp_x86_insn *in)
{
	struct site *s = site_slot(p, a);
	int rc;

	if (!s)
		return -ENOMEM;
	if (s->addr) {
		s->flags |= (uint8_t)flag;
		return 0;
	}
	s->addr = a;
	s->flags = (uint8_t)flag;
	s->in = *in;
	rc = _stp_pt_probe_add(p->proc, a, _stp_dcg_on_site, NULL, NULL, &s->pr);
	if (rc < 0) {
		s->pr = NULL; /* kept: not tried again */
		if (!p->warned++)
			_stp_msg_warn("dynamic call graph: cannot trap '%s' at 0x%" PRIx64
				      " in process %d (%s): calls through it are missed",
				      in->text, a, (int)p->pid, strerror(-rc));
		return rc;
	}
	placed++;
	return 0;
}

/* ---- the walk ---- */

/* Instructions after which the next bytes are not reached by falling
 * through: ud2, hlt, int3 (the program's own). */
static int stops_here(const struct _stp_x86_insn *in)
{
	return (in->len == 2 && in->bytes[0] == 0x0f && in->bytes[1] == 0x0b) ||
	       (in->len == 1 && (in->bytes[0] == 0xf4 || in->bytes[0] == 0xcc));
}

#define WALK_MAX 200000 /* instructions per walk: a bound, never reached by real code */

int _stp_dcg_sites_from(struct _stp_pt_thread *t, uint64_t addr)
{
	struct sproc *p = sproc_of(_stp_pt_pid(t), t);
	uint64_t *work = NULL;
	size_t nwork = 0, capwork = 0;
	struct _stp_x86_insn in;
	int rc = 0, budget = WALK_MAX;

	uint64_t lo = 0, hi = 0;

	if (!p)
		return -ENOMEM;
	if (seen_has(p, addr))
		return 0;
	/* jumps inside the function need no symbol lookup */
	if (_stp_dcg_func_range(t, addr, &lo, &hi) < 0)
		lo = hi = 0;
	for (;;) {
		if (seen_has(p, addr) || budget-- <= 0 || seen_add(p, addr) < 0 ||
		    _stp_dcg_read_insn(t, addr, &in) < 0) {
			if (!nwork)
				break;
			addr = work[--nwork];
			continue;
		}
		uint64_t next = addr + in.len;
		int end = 0;
		switch (in.kind) {
		case STP_X86_CALL:
		case STP_X86_CALL_IND:
		case STP_X86_RET:
		case STP_X86_JMP_IND:
			site_add(p, addr, DCG_SITE_BRANCH, &in);
			end = 1;
			break;
		case STP_X86_JMP:
		case STP_X86_JCC:
			if ((in.target <= lo || in.target >= hi) &&
			    _stp_dcg_enters_func(t, addr, in.target)) {
				site_add(p, addr, DCG_SITE_BRANCH, &in);
			} else if (!seen_has(p, in.target)) {
				if (nwork == capwork) {
					size_t cap = capwork ? 2 * capwork : 64;
					uint64_t *v = realloc(work, cap * sizeof *v);
					if (!v) {
						rc = -ENOMEM;
						goto out;
					}
					work = v;
					capwork = cap;
				}
				work[nwork++] = in.target;
			}
			end = in.kind == STP_X86_JMP;
			break;
		default:
			end = stops_here(&in);
			break;
		}
		if (!end) {
			addr = next;
			continue;
		}
		if (!nwork)
			break;
		addr = work[--nwork];
	}
out:
	free(work);
	return rc;
}

int _stp_dcg_site_return(struct _stp_pt_thread *t, uint64_t addr)
{
	struct sproc *p = sproc_of(_stp_pt_pid(t), t);
	struct _stp_x86_insn in;

	if (!p)
		return -ENOMEM;
	struct site *s = site_find(p, addr);
	if (s) {
		s->flags |= DCG_SITE_RETURN;
		return 0;
	}
	if (_stp_dcg_read_insn(t, addr, &in) < 0)
		return -EFAULT;
	return site_add(p, addr, DCG_SITE_RETURN, &in);
}

int _stp_dcg_site(pid_t pid, uint64_t addr, const struct _stp_x86_insn **in)
{
	struct sproc *p = sproc_of(pid, NULL);
	struct site *s = p ? site_find(p, addr) : NULL;

	if (!s || !s->pr)
		return 0;
	if (in)
		*in = &s->in;
	return s->flags;
}

/* ---- letting go ---- */

static void sproc_clear(struct sproc *p, int remove)
{
	for (size_t i = 0; remove && i < p->caps; i++)
		if (p->s[i].addr && p->s[i].pr)
			_stp_pt_probe_remove(p->proc, p->s[i].pr);
	free(p->s);
	free(p->seen);
	p->s = NULL;
	p->seen = NULL;
	p->ns = p->caps = p->nseen = p->capseen = 0;
}

static void sproc_drop(pid_t pid, int remove)
{
	for (size_t i = 0; i < nprocs; i++)
		if (procs[i].pid == pid) {
			sproc_clear(&procs[i], remove);
			procs[i] = procs[--nprocs];
			return;
		}
}

void _stp_dcg_sites_release(pid_t pid)
{
	sproc_drop(pid, 1);
}

void _stp_dcg_sites_forget(pid_t pid)
{
	sproc_drop(pid, 0);
	_stp_dcg_window_drop();
}

/* Executable mappings of pid, as [lo, hi) pairs. */
static size_t exec_ranges(pid_t pid, uint64_t **out)
{
	char path[64], line[512];
	uint64_t *v = NULL;
	size_t n = 0, cap = 0;

	snprintf(path, sizeof path, "/proc/%d/maps", (int)pid);
	FILE *f = fopen(path, "re");
	if (!f)
		return 0;
	while (fgets(line, sizeof line, f)) {
		uint64_t lo, hi;
		char perm[8];
		if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %7s", &lo, &hi, perm) != 3 ||
		    perm[2] != 'x')
			continue;
		if (n + 2 > cap) {
			cap = cap ? 2 * cap : 64;
			uint64_t *w = realloc(v, cap * sizeof *w);
			if (!w)
				break;
			v = w;
		}
		v[n++] = lo;
		v[n++] = hi;
	}
	fclose(f);
	*out = v;
	return n / 2;
}

void _stp_dcg_sites_unmapped(struct _stp_pt_thread *t)
{
	struct sproc *p = sproc_of(_stp_pt_pid(t), NULL);
	uint64_t *r = NULL;

	_stp_dcg_window_drop();
	if (!p)
		return;
	size_t nr = exec_ranges(p->pid, &r);
	for (size_t i = 0; i < p->caps; i++) {
		struct site *s = &p->s[i];
		int mapped = 0;
		for (size_t j = 0; s->addr && j < nr && !mapped; j++)
			mapped = s->addr >= r[2 * j] && s->addr < r[2 * j + 1];
		if (!s->addr || mapped)
			continue;
		if (s->pr)
			_stp_pt_probe_remove(p->proc, s->pr);
		s->pr = NULL;
		s->flags = 0; /* a tombstone: the table is rebuilt below */
	}
	free(r);
	/* rebuild without the tombstones; forget what was walked */
	struct site *old = p->s;
	size_t cap = p->caps;
	p->s = NULL;
	p->ns = p->caps = 0;
	for (size_t i = 0; i < cap; i++)
		if (old[i].addr && old[i].pr) {
			struct site *s = site_slot(p, old[i].addr);
			if (s)
				*s = old[i];
		}
	free(old);
	free(p->seen);
	p->seen = NULL;
	p->nseen = p->capseen = 0;
}

void _stp_dcg_sites_free(void)
{
	for (size_t i = 0; i < nprocs; i++)
		sproc_clear(&procs[i], 0);
	free(procs);
	procs = NULL;
	nprocs = 0;
	placed = 0;
	_stp_dcg_window_drop();
}

uint64_t _stp_dcg_sites_placed(void)
{
	return placed;
}
