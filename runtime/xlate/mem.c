/* What the program's code may do under us: code in private, read-only,
 * file-backed mappings (a program's and its libraries' text) is taken as
 * stable; code anywhere else (writable, anonymous, shared: JITs, and
 * memory another mapping or process can write) is checked at each block
 * entry against the bytes it was translated from (the check is below).
 * The mappings come from /proc/PID/maps, read again when an address is
 * not covered. A stable mapping that goes or changes (dlclose: the core
 * tells us, _stp_xl_mem_changed; mmap, mprotect, munmap, mremap: the
 * translated code asks after each, XL_REQ_MEMSYS) takes its blocks with
 * it. Code neither executable nor readable (PROT_NONE) is translated as
 * checked: the load of its check faults as the jump to it would (same
 * si_addr, same si_code), and it runs once made executable again.
 * Readable code that is not executable is not translated: the thread
 * leaves the cache and meets the fault natively. */
#include "xlate/block.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static void reload(struct xl_proc *xp, pid_t tid)
{
	char path[64], line[512];
	FILE *f;

	xp->nmr = 0;
	snprintf(path, sizeof path, "/proc/%d/maps", (int)tid);
	if (!(f = fopen(path, "re")))
		return;
	while (fgets(line, sizeof line, f)) {
		unsigned long lo, hi, off, ino;
		unsigned maj, min;
		char perms[8];
		int n = 0;
		if (sscanf(line, "%lx-%lx %7s %lx %x:%x %lu %n", &lo, &hi, perms, &off, &maj, &min,
			   &ino, &n) < 7)
			continue;
		if (xp->nmr == xp->capmr) {
			size_t cap = xp->capmr ? 2 * xp->capmr : 64;
			struct xl_mrange *v = realloc(xp->mr, cap * sizeof *v);
			if (!v)
				break;
			xp->mr = v;
			xp->capmr = cap;
		}
		/* a regular file's private, read-only text: inode, no w, x, p
		 * (protected otherwise since: its blocks go) */
		int exec = perms[2] == 'x', unreadable = perms[0] != 'r';
		int stable =
		    ino != 0 && perms[1] != 'w' && exec && perms[3] == 'p' && line[n] == '/';
		xp->mr[xp->nmr++] = (struct xl_mrange){
		    lo, hi, stable, off, ino, (uint64_t)maj << 32 | min, exec, unreadable};
	}
	fclose(f);
}

static const struct xl_mrange *find(const struct xl_proc *xp, uint64_t addr)
{
	size_t lo = 0, hi = xp->nmr;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (addr < xp->mr[mid].lo)
			hi = mid;
		else if (addr >= xp->mr[mid].hi)
			lo = mid + 1;
		else
			return &xp->mr[mid];
	}
	return NULL;
}

/* Each thread's list of the stable code blocks of its address space come
 * from (layout.h, the agent's test after a memory system call): m in it.
 * Only added to (a superset costs a doorbell, no more); the count last
 * (a running thread reads it). */
static void publish1(struct xl_ctl *c, const struct xl_mrange *m)
{
	uint64_t n = c->ncode;

	if (n > XL_CODE_N)
		return;
	for (uint64_t i = 0; i < n; i++)
		if (c->code[i][0] == m->lo && c->code[i][1] == m->hi)
			return;
	if (n == XL_CODE_N) {
		c->ncode = XL_CODE_N + 1; /* too many: always ask */
		return;
	}
	c->code[n][0] = m->lo;
	c->code[n][1] = m->hi;
	__atomic_store_n(&c->ncode, n + 1, __ATOMIC_RELEASE);
}

static void publish(struct xl_proc *xp, const struct xl_mrange *m)
{
	for (struct xl_proc *q = xp->x->procs; q; q = q->next) {
		if (q != xp && !_stp_pt_proc_shares_mm(q->p, xp->p))
			continue;
		for (struct xl_thread *t = q->threads; t; t = t->next)
			if (t->ctl)
				publish1(t->ctl, m);
	}
}

void xl_code_publish(struct xl_thread *xt)
{
	for (size_t i = 0; i < xt->xp->ncmap; i++)
		publish1(xt->ctl, &xt->xp->cmap[i]);
}

int xl_code_stable(struct xl_thread *xt, uint64_t addr)
{
	struct xl_proc *xp = xt->xp;
	const struct xl_mrange *m = find(xp, addr);

	/* only what was seen stable is believed: anything else, look again
	 * (an mprotect or a new mapping since) */
	if (!m || !m->stable) {
		reload(xp, xt->tid);
		m = find(xp, addr);
	}
	if (!m || !m->stable)
		return 0;
	size_t i;
	for (i = 0; i < xp->ncmap && xp->cmap[i].lo != m->lo; i++)
		;
	if (i == xp->ncmap) {
		if (xp->ncmap == xp->capcmap) {
			size_t cap = xp->capcmap ? 2 * xp->capcmap : 16;
			struct xl_mrange *v = realloc(xp->cmap, cap * sizeof *v);
			if (!v)
				return 0; /* not remembered: checked instead */
			xp->cmap = v;
			xp->capcmap = cap;
		}
		xp->cmap[xp->ncmap++] = *m;
	}
	publish(xp, m);
	return 1;
}

int xl_code_runs(struct xl_thread *xt, uint64_t addr)
{
	const struct xl_mrange *m = find(xt->xp, addr);

	if (!m || !m->exec) {
		reload(xt->xp, xt->tid);
		m = find(xt->xp, addr);
	}
	return m && (m->exec || m->unreadable);
}

int xl_mem_gone(struct xl_proc *xp, pid_t tid, uint64_t (*out)[2], int max)
{
	int n = 0;

	reload(xp, tid);
	for (size_t i = 0; i < xp->ncmap;) {
		const struct xl_mrange *c = &xp->cmap[i], *m = find(xp, c->lo);
		if (m && m->lo == c->lo && m->hi == c->hi && m->stable && m->off == c->off &&
		    m->ino == c->ino && m->dev == c->dev) {
			i++;
			continue;
		}
		if (n < max) {
			out[n][0] = c->lo;
			out[n][1] = c->hi;
		} else {
			out[max - 1][0] = 0; /* too many: everything */
			out[max - 1][1] = UINT64_MAX;
		}
		n += n < max;
		xp->cmap[i] = xp->cmap[--xp->ncmap];
	}
	return n;
}

void xl_mem_free(struct xl_proc *xp)
{
	free(xp->mr);
	free(xp->cmap);
	xp->mr = xp->cmap = NULL;
	xp->nmr = xp->capmr = xp->ncmap = xp->capcmap = 0;
}

int xl_block_changed(struct xl_thread *xt, const struct xl_block *b)
{
	uint8_t now[XL_CHECK_MAX];

	if (!b->checked)
		return 0;
	if (_stp_pt_read(xt->t, b->native, now, b->native_end - b->native) < 0)
		return 1;
	return memcmp(now, b->orig, b->native_end - b->native) != 0;
}

/* The entry check of a block from code that may change: its bytes in
 * memory (int3s included) against those it was translated from, 8 (then
 * 4, 2, 1) at a time: rax = the bytes, rcx = their negation + rax, zero
 * when equal (lea, jrcxz: no flags). A change goes to the agent as a
 * miss of the block's start; staprun translates it again. */
void xl_emit_entry_check(struct tctx *c)
{
	uint64_t n = c->native, end = c->native_end;
	struct xl_label fail = {-1};

	xb_save_rax_rcx(c, n);
	for (uint64_t a = n; a < end;) {
		static const struct {
			uint16_t size;
			ZydisRegister reg;
		} w[] = {{8, ZYDIS_REGISTER_RAX},
			 {4, ZYDIS_REGISTER_EAX},
			 {2, ZYDIS_REGISTER_AX},
			 {1, ZYDIS_REGISTER_AL}};
		struct xl_label same = {-1};
		int k = end - a >= 8 ? 0 : end - a >= 4 ? 1 : end - a >= 2 ? 2 : 3;
		uint64_t v = 0;
		memcpy(&v, c->expect + (a - n), w[k].size);
		if (k >= 2)
			xl_emit2(&c->e, MN(MOV), REG(EAX), xl_imm(0));
		xl_emit2(&c->e, MN(MOV), xl_reg(w[k].reg), xl_abs(a, w[k].size));
		xb_mov_imm(c, ZYDIS_REGISTER_RCX, (uint64_t) - (int64_t)v);
		xl_emit2(&c->e, MN(LEA), REG(RCX),
			 xl_mem(ZYDIS_REGISTER_RCX, ZYDIS_REGISTER_RAX, 1, 0, 8));
		xl_emit_branch_to(&c->e, MN(JRCXZ), &same);
		xl_emit_branch_to(&c->e, MN(JMP), &fail);
		xl_emit_bind(&c->e, &same);
		a += w[k].size;
	}
	xb_from_slot(c, ZYDIS_REGISTER_RAX, XL_CTL_S_RAX);
	xb_mid(c, n, XL_PC_CONST, XL_SAVED_RCX, 0);
	xb_from_slot(c, ZYDIS_REGISTER_RCX, XL_CTL_S_RCX);
	xb_clean(c, n);
	xl_emit_branch(&c->e, MN(JMP), c->e.pc + (uint64_t)c->body_real);
	xl_emit_bind(&c->e, &fail);
	xb_mid(c, n, XL_PC_CONST, RAXRCX, 0);
	xb_mov_imm(c, ZYDIS_REGISTER_RAX, n);
	xb_to_slot(c, XL_CTL_NATIVE_PC, ZYDIS_REGISTER_RAX);
	xl_emit1(&c->e, MN(JMP), xb_entry(c, XL_E_MISS_DIRECT));
}
