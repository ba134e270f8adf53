/* The sites of the call graph's breakpoint mechanism: int3s on the
 * branches of the code a traced thread runs (see mech_breakpoint.h). A traced call
 * costs the stop at its call instruction and the one at its return; the
 * code between is walked once, when first reached, and the walk only ever
 * follows addresses that are certainly instruction starts (the address the
 * thread is at, fall-through, direct jump targets): never what follows a
 * call, which may be a noreturn call's padding or another function. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "dcg_internal.h"
#include "mech_breakpoint.h"
#include "ptrace/ptrace_engine.h"
#include "lang/stp_internal.h"
#include "lang/debug.h"
#include "sym/symbols.h"
#include "arch/x86_64/insn.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- per-process tables ----
 *
 * What is learnt about the code is kept while no thread of the process is
 * traced: the sites (disarmed, their int3s removed, so untraced threads
 * run at full speed) and the instructions walked. Tracing switched on
 * again walks the same code from these tables, without reading or
 * decoding it, and re-arms only the sites that walk reaches. Each period
 * of tracing is a generation. Code outside any module (JIT, anonymous
 * mappings) may change unseen: a generation that walked some is not kept.
 * exec, dlopen and dlclose drop what they may have changed. */

struct site {
	uint64_t addr;	/* 0: free slot */
	uint8_t flags;	/* of the current generation */
	uint8_t failed; /* could not be trapped: not tried again */
	uint16_t gen;
	struct _stp_pt_probe *pr; /* NULL: disarmed */
	struct _stp_x86_insn in;
};

/* An instruction walked: what a later walk needs from it. */
enum { WALK_SITE = 0x40, WALK_STOP = 0x80, WALK_KIND = 0x3f };
struct walked {
	uint64_t addr; /* 0: free slot */
	int32_t rel;   /* direct jumps: target - (addr + len) */
	uint16_t gen;
	uint8_t len;
	uint8_t what; /* the kind; a branch site; not falling through */
};

struct sproc {
	pid_t pid;
	struct _stp_pt_proc *proc;
	struct site *s; /* open addressing by addr */
	size_t ns, caps;
	struct walked *seen; /* open addressing by addr */
	size_t nseen, capseen;
	uint16_t gen;
	int volatile_code;   /* this generation walked code outside modules */
	uint64_t (*mods)[2]; /* [lo, hi) of the modules code was walked in */
	size_t nmods;
	int warned;
};

static struct sproc *procs;
static size_t nprocs;
static uint64_t placed, rearmed;

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
	procs[nprocs].gen = 1;
	return &procs[nprocs++];
}

/* Open addressing by address, for tables of n-byte entries whose first
 * member is the address (0: a free slot). */
static uint64_t key_at(const void *tab, size_t i, size_t n)
{
	return *(const uint64_t *)((const char *)tab + i * n);
}

/* The entry of a (add: a new zeroed one if there is none, the table grown
 * to stay half empty); NULL when there is none (or no memory). */
static void *slot_of(void **tab, size_t *cap, size_t *used, size_t n, uint64_t a, int add)
{
	if (add && 2 * (*used + 1) > *cap) {
		size_t nc = *cap ? 2 * *cap : 1024;
		char *v = calloc(nc, n);
		if (!v)
			return NULL;
		for (size_t i = 0; i < *cap; i++) {
			uint64_t k = key_at(*tab, i, n);
			size_t j = hash(k, nc);
			if (!k)
				continue;
			while (key_at(v, j, n))
				j = (j + 1) & (nc - 1);
			memcpy(v + j * n, (char *)*tab + i * n, n);
		}
		free(*tab);
		*tab = v;
		*cap = nc;
	}
	for (size_t i = *cap ? hash(a, *cap) : 0; *cap; i = (i + 1) & (*cap - 1)) {
		char *e = (char *)*tab + i * n;
		uint64_t k = key_at(*tab, i, n);
		if (k == a)
			return e;
		if (k)
			continue;
		if (!add)
			return NULL;
		memset(e, 0, n);
		memcpy(e, &a, sizeof a);
		(*used)++;
		return e;
	}
	return NULL;
}

static struct walked *walked_find(struct sproc *p, uint64_t a)
{
	return slot_of((void **)&p->seen, &p->capseen, &p->nseen, sizeof *p->seen, a, 0);
}

static struct site *site_find(struct sproc *p, uint64_t a)
{
	return slot_of((void **)&p->s, &p->caps, &p->ns, sizeof *p->s, a, 0);
}

/* Code at a is in a module (not JIT or anonymous memory, which may be
 * replaced unseen): if not, the generation is not kept. A symbol lookup
 * only for an address outside the modules met so far. */
static void note_code(struct sproc *p, uint64_t a)
{
	for (size_t i = 0; i < p->nmods; i++)
		if (a >= p->mods[i][0] && a < p->mods[i][1])
			return;
	const struct _stp_syminfo *si = dcg_sym(p->pid, a);
	uint64_t(*v)[2] = si && si->module ? realloc(p->mods, (p->nmods + 1) * sizeof *v) : NULL;
	if (!v) {
		p->volatile_code = 1;
		return;
	}
	p->mods = v;
	p->mods[p->nmods][0] = si->modstart;
	p->mods[p->nmods++][1] = si->modend;
}

/* Trap a in this generation (flag: why); a new site is decoded from in,
 * or read when in is NULL. */
static int site_arm(struct sproc *p, struct dthread *d, uint64_t a, int flag,
		    const struct _stp_x86_insn *in)
{
	struct site *s = site_find(p, a);
	struct _stp_x86_insn rd;
	int rc;

	if (!s) {
		if (!in) {
			if (_stp_dcg_read_insn(&d->rd, a, &rd) < 0)
				return -EFAULT;
			in = &rd;
		}
		if (!(s = slot_of((void **)&p->s, &p->caps, &p->ns, sizeof *p->s, a, 1)))
			return -ENOMEM;
		s->in = *in;
		s->gen = p->gen;
		placed++;
	} else if (!s->pr && !s->failed) {
		rearmed++;
	}
	if (s->gen != p->gen) {
		s->gen = p->gen;
		s->flags = 0;
	}
	s->flags |= (uint8_t)flag;
	if (s->pr || s->failed)
		return s->failed ? -EINVAL : 0;
	rc = _stp_pt_probe_add(p->proc, a, _stp_dcg_on_site, NULL, NULL, &s->pr);
	if (rc < 0) {
		s->pr = NULL;
		s->failed = 1;
		if (!p->warned++)
			_stp_msg_warn("dynamic call graph: cannot trap '%s' at 0x%" PRIx64
				      " in process %d (%s): calls through it are missed",
				      s->in.text, a, (int)p->pid, strerror(-rc));
		struct dcg_event e = {.kind = DCG_EV_GAP, .from = a, .ns = dcg_now_ns()};
		dcg_event(d, &e);
	}
	return rc;
}

/* ---- the walk ---- */

/* Instructions after which the next bytes are not reached by falling
 * through: ud2, hlt, int3 (the program's own). */
static int stops_here(const struct _stp_x86_insn *in)
{
	return (in->len == 2 && in->bytes[0] == 0x0f && in->bytes[1] == 0x0b) ||
	    (in->len == 1 && (in->bytes[0] == 0xf4 || in->bytes[0] == 0xcc));
}

/* The walk's view of the instruction at addr: from the table, or read,
 * decoded and entered (in then holds it). NULL: unreadable, or no memory. */
static struct walked *walk_insn(struct sproc *p, const struct dcg_reader *rd, uint64_t addr,
				struct _stp_x86_insn *in, int *fresh)
{
	struct walked *w = walked_find(p, addr);

	*fresh = !w;
	if (w)
		return w;
	if (_stp_dcg_read_insn(rd, addr, in) < 0 ||
	    !(w = slot_of((void **)&p->seen, &p->capseen, &p->nseen, sizeof *p->seen, addr, 1)))
		return NULL;
	w->len = in->len;
	w->what = (uint8_t)((in->kind & WALK_KIND) | (stops_here(in) ? WALK_STOP : 0));
	if (in->kind == STP_X86_JMP || in->kind == STP_X86_JCC)
		w->rel = (int32_t)(in->target - (addr + in->len));
	note_code(p, addr);
	return w;
}

#define WALK_MAX 200000 /* instructions per walk: a bound, never reached by real code */

int _stp_dcg_sites_from(struct dthread *d, uint64_t addr)
{
	struct sproc *p = sproc_of(d->pid, d->t);
	uint64_t *work = NULL;
	size_t nwork = 0, capwork = 0;
	struct _stp_x86_insn in;
	int rc = 0, budget = WALK_MAX, fresh;
	uint64_t lo = 0, hi = 0, placed0 = placed, rearmed0 = rearmed, from = addr;
	struct walked *w;

	if (!p)
		return -ENOMEM;
	if ((w = walked_find(p, addr)) && w->gen == p->gen)
		return 0;
	/* jumps inside the function need no symbol lookup (code walked
	 * before: no lookup at all) */
	if (!w && dcg_func_range(p->pid, addr, &lo, &hi) < 0)
		lo = hi = 0;
	for (;;) {
		w = walked_find(p, addr);
		if ((w && w->gen == p->gen) || budget-- <= 0 ||
		    !(w = walk_insn(p, &d->rd, addr, &in, &fresh))) {
			if (!nwork)
				break;
			addr = work[--nwork];
			continue;
		}
		w->gen = p->gen;
		uint64_t next = addr + w->len, target = next + (uint64_t)(int64_t)w->rel;
		int kind = w->what & WALK_KIND, end = 0;
		switch (kind) {
		case STP_X86_CALL:
		case STP_X86_CALL_IND:
		case STP_X86_RET:
		case STP_X86_JMP_IND:
			w->what |= WALK_SITE;
			site_arm(p, d, addr, DCG_SITE_BRANCH, fresh ? &in : NULL);
			end = 1;
			break;
		case STP_X86_JMP:
		case STP_X86_JCC:
			if (fresh && (target <= lo || target >= hi) &&
			    dcg_enters_func(&d->rd, addr, target))
				w->what |= WALK_SITE;
			if (w->what & WALK_SITE) {
				site_arm(p, d, addr, DCG_SITE_BRANCH, fresh ? &in : NULL);
			} else if (!((w = walked_find(p, target)) && w->gen == p->gen)) {
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
				work[nwork++] = target;
			}
			end = kind == STP_X86_JMP;
			break;
		default:
			end = (w->what & WALK_STOP) != 0;
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
	_stp_dbg(STP_DBG_DCG, 2,
		 "process %d: code from 0x%" PRIx64 ": %" PRIu64 " sites placed, %" PRIu64
		 " armed again",
		 (int)p->pid, from, placed - placed0, rearmed - rearmed0);
	return rc;
}

int _stp_dcg_site_return(struct dthread *d, uint64_t addr)
{
	struct sproc *p = sproc_of(d->pid, d->t);

	if (!p)
		return -ENOMEM;
	if (!site_find(p, addr))
		note_code(p, addr);
	return site_arm(p, d, addr, DCG_SITE_RETURN, NULL);
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

static void disarm_all(struct sproc *p, int remove)
{
	for (size_t i = 0; i < p->caps; i++)
		if (p->s[i].addr && p->s[i].pr) {
			if (remove)
				_stp_pt_probe_remove(p->proc, p->s[i].pr);
			p->s[i].pr = NULL;
		}
}

/* Forget what was learnt about pid's code. */
static void sproc_clear(struct sproc *p)
{
	free(p->s);
	free(p->seen);
	free(p->mods);
	p->s = NULL;
	p->seen = NULL;
	p->mods = NULL;
	p->ns = p->caps = p->nseen = p->capseen = p->nmods = 0;
	p->volatile_code = 0;
}

static void sproc_drop(pid_t pid, int remove)
{
	for (size_t i = 0; i < nprocs; i++)
		if (procs[i].pid == pid) {
			disarm_all(&procs[i], remove);
			sproc_clear(&procs[i]);
			procs[i] = procs[--nprocs];
			return;
		}
}

void _stp_dcg_sites_release(pid_t pid)
{
	struct sproc *p = sproc_of(pid, NULL);

	if (!p)
		return;
	disarm_all(p, 1);
	if (p->volatile_code) {
		sproc_clear(p);
		return;
	}
	/* the next generation; at the wrap every entry becomes an old one */
	if (++p->gen == 0) {
		for (size_t i = 0; i < p->capseen; i++)
			p->seen[i].gen = 0;
		for (size_t i = 0; i < p->caps; i++)
			p->s[i].gen = 0;
		p->gen = 1;
	}
}

void _stp_dcg_sites_forget(pid_t pid)
{
	sproc_drop(pid, 0);
}

/* Rebuild p's sites with those keep() says stay; the others' probes go
 * (the engine writes a byte back only where its int3 still is: where the
 * code went, it dropped the probe already). The number dropped. */
static size_t sites_keep(struct sproc *p, int (*keep)(const struct site *, const void *),
			 const void *arg)
{
	struct site *old = p->s;
	size_t cap = p->caps, n = 0;

	p->s = NULL;
	p->ns = p->caps = 0;
	for (size_t i = 0; i < cap; i++) {
		struct site *s = &old[i], *e = NULL;
		if (!s->addr)
			continue;
		if (!keep(s, arg))
			n++;
		else if ((e = slot_of((void **)&p->s, &p->caps, &p->ns, sizeof *p->s, s->addr, 1)))
			*e = *s;
		if (!e && s->pr)
			_stp_pt_probe_remove(p->proc, s->pr);
	}
	free(old);
	return n;
}

struct ranges {
	uint64_t (*r)[2];
	size_t n;
};

static int still_mapped(const struct site *s, const void *arg)
{
	const struct ranges *m = arg;

	return _stp_pt_in_ranges(m->r, m->n, s->addr);
}

void _stp_dcg_sites_unmapped(pid_t pid)
{
	struct sproc *p = sproc_of(pid, NULL);
	struct ranges m;

	if (!p)
		return;
	m.n = _stp_pt_exec_ranges(p->pid, &m.r);
	/* rebuild with the sites still mapped; forget what was walked */
	sites_keep(p, still_mapped, &m);
	free(m.r);
	free(p->seen);
	free(p->mods);
	p->seen = NULL;
	p->mods = NULL;
	p->nseen = p->capseen = p->nmods = 0;
}

/* Does the instruction at a (len bytes, at least 1) lie in [lo, hi)? */
static int overlaps(uint64_t a, unsigned len, uint64_t lo, uint64_t hi)
{
	return a < hi && a + (len ? len : 1) > lo;
}

static int outside(const struct site *s, const void *arg)
{
	const uint64_t *r = arg;

	return !overlaps(s->addr, s->in.len, r[0], r[1]);
}

void _stp_dcg_sites_drop_range(pid_t pid, uint64_t lo, uint64_t hi)
{
	struct sproc *p = sproc_of(pid, NULL);
	size_t n = 0;

	if (!p)
		return;
	for (size_t i = 0; i < p->caps && !n; i++)
		n = p->s[i].addr && overlaps(p->s[i].addr, p->s[i].in.len, lo, hi);
	for (size_t i = 0; i < p->capseen && !n; i++)
		n = p->seen[i].addr && overlaps(p->seen[i].addr, p->seen[i].len, lo, hi);
	if (!n)
		return; /* nothing learnt there */
	const uint64_t range[2] = {lo, hi};
	n = sites_keep(p, outside, range);
	/* the instructions there go; the others are walked again from the
	 * table (not read again), so a walk that led into the range goes
	 * into what is there now */
	struct walked *oldw = p->seen;
	size_t capw = p->capseen;
	p->seen = NULL;
	p->nseen = p->capseen = 0;
	for (size_t i = 0; i < capw; i++) {
		struct walked *w = &oldw[i], *e;
		if (!w->addr || overlaps(w->addr, w->len, lo, hi))
			continue;
		if ((e = slot_of((void **)&p->seen, &p->capseen, &p->nseen, sizeof *p->seen,
				 w->addr, 1))) {
			*e = *w;
			e->gen = 0; /* never a generation's number */
		}
	}
	free(oldw);
	/* a module there may be gone: code there is judged again */
	size_t k = 0;
	for (size_t i = 0; i < p->nmods; i++)
		if (!(p->mods[i][0] < hi && p->mods[i][1] > lo)) {
			p->mods[k][0] = p->mods[i][0];
			p->mods[k++][1] = p->mods[i][1];
		}
	p->nmods = k;
	_stp_dbg(STP_DBG_DCG, 1,
		 "process %d: code at 0x%" PRIx64 "-0x%" PRIx64 " changed: %zu sites dropped",
		 (int)pid, lo, hi, n);
}

void _stp_dcg_sites_free(void)
{
	for (size_t i = 0; i < nprocs; i++)
		sproc_clear(&procs[i]);
	free(procs);
	procs = NULL;
	nprocs = 0;
	placed = rearmed = 0;
}

uint64_t _stp_dcg_sites_placed(uint64_t *rearms)
{
	if (rearms)
		*rearms = rearmed;
	return placed;
}
