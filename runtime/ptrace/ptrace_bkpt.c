/* Breakpoints, probe hits and return probes.
 *
 * A probe is an int3 over the first byte of an instruction. When a thread
 * hits it, the handlers run, then the displaced instruction is emulated
 * (runtime/arch/x86_64/insn.c) or, failing that, run out of line: each
 * breakpoint has a slot in a scratch page of the target holding a copy of
 * its instruction (RIP-relative displacement adjusted) followed by a jump
 * back to the next original instruction, so the thread simply continues
 * there: one ptrace stop per hit either way, and the int3 never leaves
 * memory while threads run.
 *
 * Removing a breakpoint restores the byte but keeps the record as a
 * tombstone: a thread that hit the int3 just before its removal reports the
 * trap later, and is then rewound to re-run the original instruction.
 *
 * Return probes: at the entry of a function with a return probe, the frame
 * (RSP+8 after return, the return address) is pushed on the thread's frame
 * stack and a breakpoint is put on the return address (shared by every
 * frame returning there). A hit there whose RSP equals a frame's fires it;
 * frames below the current RSP are gone (longjmp, exceptions) and dropped.
 * The return address on the stack is never changed. */
#include "ptrace_internal.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <unistd.h>

static unsigned bk_hash(uint64_t addr)
{
	return (unsigned)((addr ^ (addr >> 8) ^ (addr >> 16)) % PT_BK_BUCKETS);
}

struct _stp_pt_bkpt *_stp_pt_bk_find(struct pt_mm *mm, uint64_t addr)
{
	for (struct _stp_pt_bkpt *bk = mm->bk[bk_hash(addr)]; bk; bk = bk->next)
		if (bk->addr == addr)
			return bk;
	return NULL;
}

/* Put the int3 at bk (decoding the original instruction the first time). */
static int bk_arm(struct pt_mm *mm, struct _stp_pt_bkpt *bk, int verify)
{
	uint8_t buf[16], cc = 0xcc;
	size_t n = sizeof buf - 1;
	int rc;

	/* verify: the code may have been unmapped and other code mapped there
	 * since (dlclose, dlopen), taking our int3 with it */
	if (bk->live && (!verify || (_stp_pt_mm_read(mm, bk->addr, buf, 1) == 0 && buf[0] == 0xcc)))
		return 0;
	bk->live = 0;
	/* do not read past the end of the page when the next is unmapped */
	while ((rc = _stp_pt_mm_read(mm, bk->addr, buf, n)) < 0 && n > 1)
		n = n > 8 ? 8 : n - 1;
	if (rc < 0)
		return rc;
	if (buf[0] == 0xcc)
		return -EEXIST; /* an int3 that is not ours */
	struct _stp_x86_insn was = bk->insn;
	/* armed again over the same bytes (the dynamic call graph's sites
	 * at each switch-on): the same instruction */
	if (!(was.len && was.len <= n && !memcmp(buf, was.bytes, was.len)) &&
	    _stp_x86_decode(buf, n, bk->addr, &bk->insn) < 0)
		return -EINVAL;
	if (was.len != bk->insn.len || memcmp(was.bytes, bk->insn.bytes, was.len) != 0)
		bk->slot = 0; /* not the instruction its slot holds a copy of */
	if (bk->insn.kind == STP_X86_REJECT)
		return -ENOTSUP;
	bk->orig = buf[0];
	if ((rc = _stp_pt_mm_write(mm, bk->addr, &cc, 1)) < 0)
		return rc;
	bk->live = 1;
	if (mm->bk_watch)
		mm->bk_watch(bk->addr, 1, bk->orig, mm->bk_watch_data);
	return 0;
}

static void bk_disarm(struct pt_mm *mm, struct _stp_pt_bkpt *bk)
{
	uint8_t now;

	if (!bk->live)
		return;
	/* no int3 there any more: the code was unmapped and maybe other code
	 * mapped in its place (munmap, a JIT), which must not be patched */
	if (_stp_pt_mm_read(mm, bk->addr, &now, 1) < 0 || now != 0xcc)
		_stp_dbg(STP_DBG_BKPT, 1, "%#llx in %d: our int3 is gone, not restored",
			 (unsigned long long)bk->addr, (int)mm->pid);
	else if (_stp_pt_mm_write(mm, bk->addr, &bk->orig, 1) < 0)
		_stp_dbg(STP_DBG_BKPT, 1, "could not restore %#llx in %d",
			 (unsigned long long)bk->addr, (int)mm->pid);
	bk->live = 0;
	if (mm->bk_watch)
		mm->bk_watch(bk->addr, 0, bk->orig, mm->bk_watch_data);
}

int _stp_pt_bkpt_at(struct _stp_pt_proc *p, uint64_t addr)
{
	struct _stp_pt_bkpt *bk = p->mm ? _stp_pt_bk_find(p->mm, addr) : NULL;

	return bk && bk->live;
}

uint64_t _stp_pt_bkpt_slot(struct _stp_pt_proc *p, uint64_t addr)
{
	struct _stp_pt_bkpt *bk = p->mm ? _stp_pt_bk_find(p->mm, addr) : NULL;

	return bk ? bk->slot : 0;
}

void _stp_pt_watch_breakpoints(struct _stp_pt_proc *p, _stp_pt_bkpt_fn fn, void *data)
{
	if (!p->mm)
		return;
	p->mm->bk_watch = fn;
	p->mm->bk_watch_data = data;
	for (int b = 0; fn && b < PT_BK_BUCKETS; b++)
		for (struct _stp_pt_bkpt *bk = p->mm->bk[b]; bk; bk = bk->next)
			if (bk->live)
				fn(bk->addr, 1, bk->orig, data);
}

static struct _stp_pt_bkpt *bk_get(struct pt_mm *mm, uint64_t addr, int verify, int *rc)
{
	struct _stp_pt_bkpt *bk = _stp_pt_bk_find(mm, addr);

	if (!bk) {
		unsigned h = bk_hash(addr);
		bk = calloc(1, sizeof *bk);
		if (!bk) {
			*rc = -ENOMEM;
			return NULL;
		}
		bk->addr = addr;
		bk->next = mm->bk[h];
		mm->bk[h] = bk;
		mm->nbk++;
	}
	*rc = bk_arm(mm, bk, verify);
	return *rc < 0 ? NULL : bk;
}

/* Disarm when nothing needs the breakpoint any more. */
static void bk_maybe_disarm(struct pt_mm *mm, struct _stp_pt_bkpt *bk)
{
	if (!bk->probes && bk->ret_refs <= 0)
		bk_disarm(mm, bk);
}

int _stp_pt_probe_add(struct _stp_pt_proc *p, uint64_t addr, _stp_pt_handler entry,
		      _stp_pt_handler ret, void *data, struct _stp_pt_probe **out)
{
	struct _stp_pt_probe *pr;
	struct _stp_pt_bkpt *bk;
	int rc;

	if (!p->mm)
		return p->mm_err ? -p->mm_err : -ESRCH;
	bk = bk_get(p->mm, addr, 1, &rc);
	if (!bk)
		return rc;
	pr = calloc(1, sizeof *pr);
	if (!pr) {
		bk_maybe_disarm(p->mm, bk);
		return -ENOMEM;
	}
	pr->bp = bk;
	pr->entry = entry;
	pr->ret = ret;
	pr->data = data;
	/* append: handlers run in the order probes were placed */
	struct _stp_pt_probe **pp = &bk->probes;
	while (*pp)
		pp = &(*pp)->next;
	*pp = pr;
	_stp_dbg(STP_DBG_BKPT, 1, "probe at %#llx in %d: %s (%s)", (unsigned long long)addr,
		 (int)p->pid, bk->insn.text,
		 bk->insn.kind == STP_X86_OOL ? "out of line" : "emulated");
	if (out)
		*out = pr;
	return 0;
}

/* Free the dead probes nothing names any more. */
static void reap_dead(struct pt_mm *mm)
{
	if (mm->hits_running)
		return;
	for (struct _stp_pt_probe **pp = &mm->dead_probes; *pp;) {
		struct _stp_pt_probe *pr = *pp;
		if (pr->frame_refs || pr->orphan) {
			pp = &pr->next;
			continue;
		}
		*pp = pr->next;
		free(pr);
	}
}

/* pr leaves its breakpoint's list (dropped: the client still has it). */
static void probe_kill(struct pt_mm *mm, struct _stp_pt_probe *pr, int dropped)
{
	pr->dead = 1;
	pr->orphan = dropped;
	pr->next = mm->dead_probes;
	mm->dead_probes = pr;
}

int _stp_pt_probe_remove(struct _stp_pt_proc *p, struct _stp_pt_probe *pr)
{
	struct _stp_pt_bkpt *bk = pr->bp;

	/* a probe of another address space (a fork parent's, say): never
	 * touch the wrong memory */
	if (!p->mm || _stp_pt_bk_find(p->mm, bk->addr) != bk)
		return -ENOENT;
	if (pr->dead) {
		/* dropped by the engine (dlclose): the client lets go of it */
		pr->orphan = 0;
		reap_dead(p->mm);
		return -ENOENT;
	}
	for (struct _stp_pt_probe **pp = &bk->probes; *pp; pp = &(*pp)->next) {
		if (*pp == pr) {
			_stp_dbg(STP_DBG_BKPT, 2, "probe at %#llx in %d removed",
				 (unsigned long long)bk->addr, (int)p->pid);
			*pp = pr->next;
			probe_kill(p->mm, pr, 0);
			bk_maybe_disarm(p->mm, bk);
			reap_dead(p->mm);
			return 0;
		}
	}
	return -ENOENT;
}

uint64_t _stp_pt_probe_addr(const struct _stp_pt_probe *pr)
{
	return pr->bp->addr;
}

uint64_t _stp_pt_probe_hits(const struct _stp_pt_probe *pr)
{
	return pr->hits;
}

uint64_t _stp_pt_probe_returns(const struct _stp_pt_probe *pr)
{
	return pr->returns;
}

/* ---- return frames ---- */

static void frame_drop(struct _stp_pt_thread *t, const struct pt_frame *f)
{
	struct pt_mm *mm = t->proc->mm;
	struct _stp_pt_bkpt *bk = mm ? _stp_pt_bk_find(mm, f->ret_addr) : NULL;

	/* the int3 stays: the next call from the same site needs it again
	 * (re-checked then, the code may have been replaced meanwhile) */
	if (bk && --bk->ret_refs <= 0)
		bk->ret_refs = 0;
	if (f->probe->frame_refs && !--f->probe->frame_refs && f->probe->dead && mm)
		reap_dead(mm);
}

/* Drop the frames whose stack is gone: those at or below `sp`. */
static void frames_unwind(struct _stp_pt_thread *t, uint64_t sp, int inclusive)
{
	while (t->nframes) {
		struct pt_frame *f = &t->frames[t->nframes - 1];
		if (inclusive ? f->sp > sp : f->sp >= sp)
			break;
		frame_drop(t, f);
		t->nframes--;
	}
}

void _stp_pt_frames_clear(struct _stp_pt_thread *t)
{
	if (t->proc && t->proc->mm)
		while (t->nframes)
			frame_drop(t, &t->frames[--t->nframes]);
	t->nframes = 0;
	free(t->frames);
	t->frames = NULL;
	t->cap = 0;
}

static struct pt_frame *frame_push(struct _stp_pt_thread *t)
{
	if (t->nframes == t->cap) {
		size_t nc = t->cap ? 2 * t->cap : 16;
		struct pt_frame *n = realloc(t->frames, nc * sizeof *n);
		if (!n)
			return NULL;
		t->frames = n;
		t->cap = nc;
	}
	return &t->frames[t->nframes++];
}

/* A fork child's thread gets the forking thread's frames (it returns
 * through the same addresses), mapped to the child's copies of the probes. */
int _stp_pt_frames_copy(struct _stp_pt_thread *to, const struct _stp_pt_thread *from)
{
	struct pt_mm *mm = to->proc->mm;

	for (size_t i = 0; i < from->nframes; i++) {
		const struct pt_frame *f = &from->frames[i];
		struct _stp_pt_bkpt *eb = _stp_pt_bk_find(mm, f->probe->bp->addr);
		struct _stp_pt_bkpt *rb = _stp_pt_bk_find(mm, f->ret_addr);
		struct _stp_pt_probe *np = NULL;
		struct pt_frame *nf;

		for (struct _stp_pt_probe *q = eb ? eb->probes : NULL; q; q = q->next)
			if (q->entry == f->probe->entry && q->ret == f->probe->ret &&
			    q->data == f->probe->data)
				np = q;
		if (!np || !rb || !(nf = frame_push(to)))
			continue;
		*nf = *f;
		nf->probe = np;
		np->frame_refs++;
		rb->ret_refs++;
	}
	/* breakpoints the copy does not need any more (return sites of other
	 * threads' frames) */
	for (int b = 0; b < PT_BK_BUCKETS; b++)
		for (struct _stp_pt_bkpt *bk = mm->bk[b]; bk; bk = bk->next)
			bk_maybe_disarm(mm, bk);
	return 0;
}

/* Among the frames on top whose sp is `sp`, drop those for which
 * gone(frame) says the stack slot of their return address was reused. */
static void frames_drop_reused(struct _stp_pt_thread *t, uint64_t sp, uint64_t ret_addr,
			       const struct _stp_pt_probe *same_probe)
{
	size_t lo = t->nframes, k;

	while (lo > 0 && t->frames[lo - 1].sp == sp)
		lo--;
	k = lo;
	for (size_t i = lo; i < t->nframes; i++) {
		struct pt_frame *f = &t->frames[i];
		if (f->ret_addr != ret_addr || f->probe == same_probe)
			frame_drop(t, f);
		else
			t->frames[k++] = *f;
	}
	t->nframes = k;
}

static void run_returns(struct _stp_pt_thread *t, struct _stp_pt_bkpt *bk)
{
	uint64_t sp = t->regs.rsp;
	struct _stp_pt_session *s = t->proc->s;

	/* below sp: gone; at sp but for another return address: the slot
	 * was reused, gone too (longjmp or an exception, then a call) */
	frames_unwind(t, sp, 0);
	frames_drop_reused(t, sp, bk->addr, NULL);
	while (t->nframes) {
		struct pt_frame f = t->frames[t->nframes - 1];
		if (f.sp != sp || f.ret_addr != bk->addr)
			break;
		t->nframes--;
		if (!f.probe->dead && f.probe->ret) {
			t->cur_frame_data = &f.data;
			t->probe_point = bk->addr;
			f.probe->returns++;
			s->stats.returns++;
			s->in_handler = 1;
			if (f.probe->ret(t, f.probe, f.probe->data) < 0)
				s->stats.errors++;
			s->in_handler = 0;
			t->cur_frame_data = NULL;
		}
		frame_drop(t, &f);
	}
}

/* One entry probe's hit: its return frame (if it has a return probe), then
 * its handler. */
static void run_entry(struct _stp_pt_thread *t, struct _stp_pt_bkpt *bk, struct _stp_pt_probe *p)
{
	struct _stp_pt_session *s = t->proc->s;
	struct pt_mm *mm = t->proc->mm;
	size_t fi = (size_t)-1;
	uint64_t ra = 0;

	if (p->ret) {
		struct pt_frame *f;
		int rc = 0;
		struct _stp_pt_bkpt *rb;

		/* frames below this one's are gone; so are those at the same
		 * place for another return address or the same probe (a
		 * tail call from one probed function to another keeps both) */
		frames_unwind(t, t->regs.rsp, 1);
		if (_stp_pt_mm_read(mm, t->regs.rsp, &ra, 8) == 0)
			frames_drop_reused(t, t->regs.rsp + 8, ra, p);
		/* entered other than by a call (a .cold part reached by a
		 * jump, _start): [rsp] is data, maybe the heap's, never to
		 * get an int3 */
		if (ra && !_stp_pt_mm_is_code(mm, t->tid, ra)) {
			ra = 0;
			rc = -EFAULT;
		}
		rb = ra ? _stp_pt_bk_find(mm, ra) : NULL;
		int idle = !rb || (rb->ret_refs <= 0 && !rb->probes);
		if (ra && (rb = bk_get(mm, ra, idle, &rc)) && (f = frame_push(t))) {
			f->sp = t->regs.rsp + 8;
			f->ret_addr = ra;
			f->probe = p;
			f->data = 0;
			fi = t->nframes - 1;
			rb->ret_refs++;
			p->frame_refs++;
		} else {
			_stp_dbg(
			    STP_DBG_BKPT, 1, "no return probe for %#llx (return address %#llx): %s",
			    (unsigned long long)bk->addr, (unsigned long long)ra, strerror(-rc));
			s->stats.errors++;
		}
	}
	p->hits++;
	s->stats.hits++;
	if (p->entry) {
		t->probe_point = bk->addr;
		t->cur_frame_data = fi != (size_t)-1 ? &t->frames[fi].data : NULL;
		s->in_handler = 1;
		if (p->entry(t, p, p->data) < 0)
			s->stats.errors++;
		s->in_handler = 0;
		t->cur_frame_data = NULL;
	}
}

static void run_entries(struct _stp_pt_thread *t, struct _stp_pt_bkpt *bk)
{
	struct _stp_pt_session *s = t->proc->s;
	struct pt_mm *mm = t->proc->mm;
	struct _stp_pt_probe *few[8], **list = few;
	size_t cap = 8;
	uint64_t seq = ++s->hit_seq;

	/* Each pass runs the probes as they are at its start: handlers may
	 * add or remove probes (one removed is kept until the hit is over).
	 * A probe a handler placed here is this hit's too while the thread
	 * is still to run the instruction (the dynamic call graph switched
	 * on at a branch it then traps), so the passes go on until none is
	 * new. */
	mm->hits_running++;
	for (;;) {
		size_t n = 0;
		for (struct _stp_pt_probe *p = bk->probes; p; p = p->next) {
			if (p->seq == seq)
				continue;
			if (n == cap) {
				struct _stp_pt_probe **nl = malloc(2 * cap * sizeof *nl);
				if (!nl)
					break;
				memcpy(nl, list, n * sizeof *nl);
				if (list != few)
					free(list);
				list = nl;
				cap *= 2;
			}
			p->seq = seq;
			list[n++] = p;
		}
		for (size_t i = 0; i < n; i++)
			if (!list[i]->dead)
				run_entry(t, bk, list[i]);
		if (!n || t->regs.rip != bk->addr || !bk->live)
			break;
	}
	if (list != few)
		free(list);
	mm->hits_running--;
	reap_dead(mm);
}

uint64_t *_stp_pt_frame_data(struct _stp_pt_thread *t)
{
	return t->cur_frame_data;
}

/* ---- executing the displaced instruction ---- */

static int mem_read_cb(void *ctx, uint64_t addr, void *buf, size_t n)
{
	return _stp_pt_read(ctx, addr, buf, n);
}

static int mem_write_cb(void *ctx, uint64_t addr, const void *buf, size_t n)
{
	return _stp_pt_write(ctx, addr, buf, n);
}

struct _stp_x86_mem_ops _stp_pt_x86_mem_ops(struct _stp_pt_thread *t)
{
	return (struct _stp_x86_mem_ops){mem_read_cb, mem_write_cb, t};
}

/* The slot of bk in a scratch page near it, written on first use. */
static int bk_slot(struct _stp_pt_thread *t, struct _stp_pt_bkpt *bk)
{
	struct pt_mm *mm = t->proc->mm;
	uint8_t code[PT_SLOT_SIZE];
	uint64_t back = bk->addr + bk->insn.len;
	int n = -ERANGE, rc;

	if (bk->slot)
		return 0;
	for (int attempt = 0; attempt < 2 && n < 0; attempt++) {
		struct pt_scratch *sc;
		uint64_t slot = 0;

		for (sc = mm->scratch; sc; sc = sc->next) {
			if (sc->used >= PT_SCRATCH_SIZE / PT_SLOT_SIZE)
				continue;
			slot = sc->addr + sc->used * PT_SLOT_SIZE;
			if ((n = _stp_x86_ool_bytes(&bk->insn, bk->addr, slot, code)) >= 0)
				break;
		}
		if (!sc) {
			uint64_t page;
			if (attempt)
				return -ERANGE;
			if ((rc = _stp_pt_inject_mmap(t, bk->addr, &page)) < 0)
				return rc;
			if (!(sc = calloc(1, sizeof *sc)))
				return -ENOMEM;
			sc->addr = page;
			sc->next = mm->scratch;
			mm->scratch = sc;
			continue;
		}
		/* jmp *0(%rip); .quad back */
		static const uint8_t jmp[6] = {0xff, 0x25, 0, 0, 0, 0};
		memcpy(code + n, jmp, 6);
		memcpy(code + n + 6, &back, 8);
		if ((rc = _stp_pt_mm_write(mm, slot, code, (size_t)n + 14)) < 0)
			return rc;
		sc->used++;
		bk->slot = slot;
	}
	return bk->slot ? 0 : -ERANGE;
}

static int displaced(struct _stp_pt_thread *t, struct _stp_pt_bkpt *bk)
{
	struct _stp_pt_session *s = t->proc->s;
	struct _stp_x86_mem_ops ops = _stp_pt_x86_mem_ops(t);
	int rc;

	/* A push emulated costs a write into the target (a system call);
	 * its copy in the scratch page costs nothing more than the hit. */
	if (bk->insn.kind == STP_X86_PUSH && !t->step_mode && bk_slot(t, bk) == 0)
		goto out_of_line;
	if (bk->insn.kind != STP_X86_OOL &&
	    (rc = _stp_x86_emulate(&bk->insn, bk->addr, &t->regs, &ops)) == 1) {
		t->regs_dirty = 1;
		s->stats.emulated++;
		if (t->step_mode)
			_stp_pt_step_trap(t);
		return 0;
	}
	if (bk->insn.kind != STP_X86_OOL && bk->insn.kind != STP_X86_NOP &&
	    bk->insn.kind != STP_X86_PUSH && bk->insn.kind != STP_X86_POP &&
	    bk->insn.kind != STP_X86_MOV_RR && bk->insn.kind != STP_X86_MOV_RI &&
	    bk->insn.kind != STP_X86_LEA && bk->insn.kind != STP_X86_ADDSUB_RI &&
	    bk->insn.kind != STP_X86_XOR_SELF && bk->insn.kind != STP_X86_PUSHF &&
	    bk->insn.kind != STP_X86_POPF) {
		/* a branch whose memory access faults: the program gets the
		 * SIGSEGV it would get untraced, at the branch */
		t->resume_sig = SIGSEGV;
		return 0;
	}
	if ((rc = bk_slot(t, bk)) < 0)
		return rc;
out_of_line:
	t->regs.rip = bk->slot;
	t->regs_dirty = 1;
	s->stats.stepped++;
	if (t->step_mode) {
		/* step the copy alone, so the client never sees the scratch */
		t->ool_active = 1;
		t->ool_orig = bk->addr;
		t->ool_slot = bk->slot;
		t->ool_len = bk->insn.len;
	}
	return 0;
}

/* The step after an out-of-line instruction in step mode. */
void _stp_pt_ool_finish(struct _stp_pt_thread *t)
{
	if (_stp_pt_fetch_regs(t) < 0)
		return;
	if (t->regs.rip == t->ool_slot + (uint64_t)t->ool_len) {
		t->regs.rip = t->ool_orig + (uint64_t)t->ool_len;
		t->regs_dirty = 1;
	}
	/* at the slot's start: not run yet (a signal came first); the jump
	 * after the copy brings it back when it runs */
	t->ool_active = 0;
}

/* A hit: t is stopped after the int3 of bk (regs fetched). */
int _stp_pt_bk_hit(struct _stp_pt_thread *t, struct _stp_pt_bkpt *bk)
{
	struct _stp_pt_session *s = t->proc->s;
	int rc;

	_stp_dbg(STP_DBG_BKPT, 2, "thread %d: hit %#llx%s", (int)t->tid,
		 (unsigned long long)bk->addr, bk->live ? "" : " (removed since)");
	t->regs.rip = bk->addr;
	t->regs_dirty = 1;
	/* A process that outlives us (attached) must not resume past the
	 * int3 if we die during this stop: the pc goes back at once (it then
	 * meets the int3 again, whose byte the safety net restores). */
	if (t->proc->attached && ptrace(PTRACE_SETREGS, t->tid, 0, &t->regs) == 0)
		t->regs_dirty = 0;
	if (!bk->live) {
		/* removed after the thread trapped: run the original */
		return 0;
	}
	if (s->detaching)
		return 0; /* about to be removed: re-run the original */
	if (bk->ret_refs > 0)
		run_returns(t, bk);
	if (bk->probes)
		run_entries(t, bk);
	if (t->regs.rip != bk->addr || !bk->live)
		return 0; /* a handler moved the thread, or no int3 remains */
	rc = displaced(t, bk);
	if (rc < 0) {
		s->stats.errors++;
		_stp_dbg(STP_DBG_BKPT, 1, "cannot run %s displaced at %#llx: %s", bk->insn.text,
			 (unsigned long long)bk->addr, strerror(-rc));
		/* last resort: the thread would trap forever, so stop probing
		 * here (all probes at this address stop firing) */
		bk_disarm(t->proc->mm, bk);
	}
	return rc;
}

/* A signal stop of t: a fault of the copy of an instruction in its slot is
 * made the original's (rip, and si_addr where it is the pc), so handlers
 * and core dumps see the program's pc. A handler that returns runs it
 * again from the original, its probe firing again (as with uprobes). */
void _stp_pt_fault_in_slot(struct _stp_pt_thread *t, int sig)
{
	struct pt_mm *mm = t->proc->mm;
	siginfo_t si;
	int inside = 0;

	if ((sig != SIGSEGV && sig != SIGBUS && sig != SIGILL && sig != SIGFPE) || !mm ||
	    !mm->scratch || _stp_pt_fetch_regs(t) < 0)
		return;
	for (struct pt_scratch *sc = mm->scratch; sc && !inside; sc = sc->next)
		inside = t->regs.rip >= sc->addr && t->regs.rip < sc->addr + PT_SCRATCH_SIZE;
	/* only faults the kernel raised at that instruction, not a kill() */
	if (!inside || ptrace(PTRACE_GETSIGINFO, t->tid, 0, &si) < 0 || si.si_code <= 0)
		return;
	for (int b = 0; b < PT_BK_BUCKETS; b++) {
		for (struct _stp_pt_bkpt *bk = mm->bk[b]; bk; bk = bk->next) {
			if (!bk->slot || t->regs.rip != bk->slot)
				continue;
			_stp_dbg(STP_DBG_BKPT, 1, "thread %d: signal %d in the copy of %#llx",
				 (int)t->tid, sig, (unsigned long long)bk->addr);
			t->regs.rip = bk->addr;
			t->regs_dirty = 1;
			if (sig != SIGSEGV && si.si_addr == (void *)(uintptr_t)bk->slot) {
				si.si_addr = (void *)(uintptr_t)bk->addr;
				ptrace(PTRACE_SETSIGINFO, t->tid, 0, &si);
			}
			return;
		}
	}
}

/* Before detaching: a thread stopped in a scratch slot (about to run the
 * copy, or about to jump back) is put where the original instruction is,
 * or after it, so the scratch pages can go. */
int _stp_pt_leave_scratch(struct _stp_pt_thread *t)
{
	struct pt_mm *mm = t->proc->mm;
	int inside = 0;

	if (!mm || !mm->scratch || _stp_pt_fetch_regs(t) < 0)
		return 0;
	for (struct pt_scratch *sc = mm->scratch; sc; sc = sc->next)
		if (t->regs.rip >= sc->addr && t->regs.rip < sc->addr + PT_SCRATCH_SIZE)
			inside = 1;
	if (!inside)
		return 0;
	for (int b = 0; b < PT_BK_BUCKETS; b++) {
		for (struct _stp_pt_bkpt *bk = mm->bk[b]; bk; bk = bk->next) {
			if (!bk->slot)
				continue;
			if (t->regs.rip == bk->slot)
				t->regs.rip = bk->addr;
			else if (t->regs.rip == bk->slot + bk->insn.len)
				t->regs.rip = bk->addr + bk->insn.len;
			else
				continue;
			t->regs_dirty = 1;
			return 0;
		}
	}
	return -EFAULT; /* cannot happen: slots hold one instruction and a jump */
}

/* bk's code went with its mapping: its probes die as if removed (a fork
 * child's copies too, which its client cannot name), so a later load at
 * the same place starts clean and nothing is ever written there for them. */
static void bk_drop(struct _stp_pt_thread *t, struct _stp_pt_bkpt *bk)
{
	struct pt_mm *mm = t->proc->mm;

	_stp_dbg(STP_DBG_BKPT, 1, "%#llx in %d: code unmapped, its probes dropped",
		 (unsigned long long)bk->addr, (int)t->proc->pid);
	while (bk->probes) {
		struct _stp_pt_probe *pr = bk->probes;
		bk->probes = pr->next;
		probe_kill(mm, pr, 1);
	}
	if (bk->live && mm->bk_watch)
		mm->bk_watch(bk->addr, 0, bk->orig, mm->bk_watch_data);
	bk->live = 0; /* nothing to restore: the page is gone */
}

/* After a dlclose: breakpoints on code no longer mapped went with it. */
void _stp_pt_drop_unmapped(struct _stp_pt_thread *t)
{
	struct pt_mm *mm = t->proc->mm;

	if (!mm)
		return;
	_stp_pt_mm_code_read(mm, t->tid);
	if (!mm->code)
		return;
	for (int b = 0; b < PT_BK_BUCKETS; b++) {
		for (struct _stp_pt_bkpt *bk = mm->bk[b]; bk; bk = bk->next) {
			if ((bk->live || bk->probes) &&
			    !_stp_pt_in_ranges(mm->code, mm->ncode, bk->addr))
				bk_drop(t, bk);
		}
	}
}

void _stp_pt_code_gone(struct _stp_pt_thread *t, uint64_t lo, uint64_t hi, uint64_t moved_to)
{
	struct pt_mm *mm = t->proc->mm;
	uint8_t now;

	if (mm) { /* the executable mappings changed: read again when asked */
		free(mm->code);
		mm->code = NULL;
		mm->ncode = 0;
	}
	for (int b = 0; mm && b < PT_BK_BUCKETS; b++) {
		for (struct _stp_pt_bkpt *bk = mm->bk[b]; bk; bk = bk->next) {
			if (bk->addr < lo || bk->addr >= hi || (!bk->live && !bk->probes))
				continue;
			uint64_t to = moved_to + (bk->addr - lo);
			/* the copy of our int3 the move took along */
			if (moved_to && bk->live && _stp_pt_mm_read(mm, to, &now, 1) == 0 &&
			    now == 0xcc && _stp_pt_mm_write(mm, to, &bk->orig, 1) < 0)
				_stp_dbg(STP_DBG_BKPT, 1, "could not restore %#llx in %d",
					 (unsigned long long)to, (int)t->proc->pid);
			bk_drop(t, bk);
		}
	}
}

/* Remove every int3 of an address space (all its threads stopped). */
/* At an exec: int3s written through mm's /proc/PID/mem while the exec was
 * still in flight (attached between its switch to the new image and its
 * PTRACE_EVENT_EXEC stop, as a system-wide run's connector event can) are
 * in the new image, which that file then reaches; an old image's file
 * reads nothing once the exec is done. Their bytes go back before the new
 * image's probes are placed, or they would be taken for another's int3s
 * and stay. A shared mm (vfork) is its parent's: left alone. */
void _stp_pt_mm_exec_undo(struct pt_mm *mm)
{
	if (!mm || mm->refs != 1 || mm->memfd < 0)
		return;
	for (int b = 0; b < PT_BK_BUCKETS; b++)
		for (struct _stp_pt_bkpt *bk = mm->bk[b]; bk; bk = bk->next) {
			uint8_t now;

			if (!bk->live || pread(mm->memfd, &now, 1, (off_t)bk->addr) != 1 ||
			    now != 0xcc)
				continue;
			if (pwrite(mm->memfd, &bk->orig, 1, (off_t)bk->addr) == 1)
				_stp_dbg(STP_DBG_BKPT, 1,
					 "%#llx in %d: int3 placed in the image an exec "
					 "was making, restored",
					 (unsigned long long)bk->addr, (int)mm->pid);
			bk->live = 0;
		}
}

int _stp_pt_mm_remove_all(struct pt_mm *mm)
{
	for (int b = 0; b < PT_BK_BUCKETS; b++)
		for (struct _stp_pt_bkpt *bk = mm->bk[b]; bk; bk = bk->next)
			bk_disarm(mm, bk);
	return 0;
}
