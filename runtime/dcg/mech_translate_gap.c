/* The frames a translated thread entered while its records were lost
 * (overwrite mode, mech_translate.c), found again when it is stopped
 * after them: at a snapshot in its own handler, or at a switch-off.
 *
 * Its real stack now, unwound by its CFI (sym/), holds every frame still
 * open; the records read after the gap tell which of those were entered
 * after it (a call's slot), and which frames open at the gap have
 * returned since (a return whose slot no call in them made). The frames
 * open at the gap are those of the real stack the records do not enter,
 * outermost first, then those that return in them, innermost last; the
 * core's stack is put so before the records go through it (events.c,
 * dcg_place_stack). A frame's tail calls in the gap show as the
 * function its caller called and the one it is in now (add_frame). What
 * the records cannot tell is not made up: a frame entered in the gap and
 * left by longjmp after it, the tail calls between those two. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "mech_translate_gap.h"
#include "sink_out.h"
#include "lang/debug.h"
#include "sym/symbols.h"
#include "arch/x86_64/insn.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_FRAMES = 4096 };

/* A signal set of thread tid now (/proc/TID/status: "SigBlk:", the
 * blocked; "SigCgt:", those with a handler), 0 if unknown. */
static uint64_t sigset_now(pid_t tid, const char *key)
{
	char path[64], line[256];
	size_t kl = strlen(key);
	uint64_t m = 0;

	snprintf(path, sizeof path, "/proc/%d/status", (int)tid);
	FILE *f = fopen(path, "re");
	while (f && fgets(line, sizeof line, f))
		if (!strncmp(line, key, kl))
			m = strtoull(line + kl, NULL, 16);
	if (f)
		fclose(f);
	return m;
}

/* The signal of a set of one, else 0. */
static int one(uint64_t m)
{
	return m && !(m & (m - 1)) ? __builtin_ctzll(m) + 1 : 0;
}

/* A handler's signal when nothing better is known: the one signal with
 * a handler, else none known (shown as SIG?). */
static int some_signal(pid_t tid)
{
	int sig = one(sigset_now(tid, "SigCgt:"));

	return sig ? sig : 127;
}

/* The signal of a handler frame still open whose restorer address is at
 * slot (the kernel's rt_sigframe: that address, then a ucontext whose
 * uc_sigmask, at 8 + 296, is the mask the handler restores, *old); during:
 * the mask while it runs. The handler's signal is blocked while it runs
 * and not before (siginfo is in the frame only for SA_SIGINFO). */
static int signal_of(struct dthread *d, uint64_t slot, uint64_t during, uint64_t *old)
{
	int sig;

	*old = 0;
	if (d->rd.read(d->rd.ctx, slot + 8 + 296, old, sizeof *old) == 0 &&
	    (sig = one(during & ~*old)))
		return sig;
	return some_signal(d->tid);
}

/* The function a call ending at ra called: a direct call, or one through
 * memory at rip (-fno-plt), through a PLT stub's GOT slot; 0 if unknown
 * (a call through a register). */
static uint64_t called_before(const struct dcg_reader *rd, uint64_t ra)
{
	struct _stp_x86_insn in;
	uint64_t to = 0;

	if (_stp_dcg_read_insn(rd, ra - 5, &in) == 0 && in.len == 5 && in.kind == STP_X86_CALL)
		to = in.target;
	else if (_stp_dcg_read_insn(rd, ra - 6, &in) == 0 && in.len == 6 &&
		 in.kind == STP_X86_CALL_IND && in.has_mem && in.mem.base == STP_X86_RIP &&
		 rd->read(rd->ctx, ra + (uint64_t)in.mem.disp, &to, sizeof to) < 0)
		return 0;
	if (to && dcg_is_stub(rd, to)) {
		uint64_t at = dcg_is_endbr(rd, to) ? to + 4 : to, slot;
		if (_stp_dcg_read_insn(rd, at, &in) < 0 || !in.has_mem)
			return 0;
		slot = at + in.len + (uint64_t)in.mem.disp;
		if (rd->read(rd->ctx, slot, &to, sizeof to) < 0)
			return 0;
	}
	return to;
}

/* A frame at slot whose code is in func, called from before ra: the
 * function called first when that is another (its tail calls led to
 * func; those between are not known), then func. */
static int add_frame(struct dthread *d, struct dcg_frame_at **g, size_t *ng, size_t *cap,
		     uint64_t slot, uint64_t func, uint64_t ra, int sig)
{
	uint64_t first = sig ? 0 : called_before(&d->rd, ra);
	int chain = first && dcg_func_start(d->pid, first) && first != func &&
	    !dcg_same_func(d->pid, first, func);

	if (dcg_grow(g, *ng, cap, sizeof **g) < 0 ||
	    (chain && dcg_grow(g, *ng + 1, cap, sizeof **g) < 0))
		return -1;
	if (chain)
		(*g)[(*ng)++] = (struct dcg_frame_at){slot, first, 0, 0};
	(*g)[(*ng)++] = (struct dcg_frame_at){slot, func, sig, chain};
	return 0;
}

/* The slots of the frames the records enter that are still open at
 * their end (p, outermost first), and the returns of frames they do not
 * enter (m, in order: innermost first). */
struct ret_at {
	uint64_t slot, func, ra;
	int sig;
};
struct walk {
	uint64_t *p;
	size_t np, capp;
	struct ret_at *m;
	size_t nm, capm;
	/* tail calls of frames open at the gap: the function each was in
	 * before its first (by slot) */
	struct ret_at *j;
	size_t nj, capj;
};

/* The function the frame at slot was in at the gap, func if it made no
 * tail call since (the note is taken: the slot may be used again). */
static uint64_t before_jumps(struct walk *w, uint64_t slot, uint64_t func)
{
	for (size_t i = w->nj; i-- > 0;)
		if (w->j[i].slot == slot) {
			func = w->j[i].func;
			w->j[i] = w->j[--w->nj];
			break;
		}
	return func;
}

static int walk_records(struct dthread *d, struct walk *w, const struct xl_rec *r, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		unsigned kind = (unsigned)(r[i].from_kind >> XL_KIND_SHIFT);
		uint64_t from = r[i].from_kind & XL_ADDR_MASK, sp = r[i].sp;
		if (kind == XL_REC_CALL || (kind & 0x80)) { /* 0x80: a handler entered */
			/* frames at or below the new slot are over */
			while (w->np && w->p[w->np - 1] <= sp)
				w->np--;
			if (dcg_grow(&w->p, w->np, &w->capp, sizeof *w->p) < 0)
				return -1;
			w->p[w->np++] = sp;
		} else if (kind == XL_REC_RET) {
			uint64_t slot = sp - 8;
			while (w->np && w->p[w->np - 1] < slot)
				w->np--;
			if (w->np && w->p[w->np - 1] == slot) {
				w->np--;
				continue;
			}
			if (dcg_grow(&w->m, w->nm, &w->capm, sizeof *w->m) < 0)
				return -1;
			w->m[w->nm++] = (struct ret_at){
			    slot, before_jumps(w, slot, dcg_func_of(d->pid, from)), r[i].to,
			    dcg_restorer_at(&d->rd, r[i].to) ? some_signal(d->tid) : 0};
		} else if (kind == XL_REC_JUMP) {
			/* below the stack pointer nothing is open (longjmp) */
			while (w->np && w->p[w->np - 1] < sp)
				w->np--;
			/* a tail call of a frame open at the gap (its slot at sp) */
			if ((!w->np || w->p[w->np - 1] != sp) &&
			    dcg_enters_func(&d->rd, from, r[i].to)) {
				size_t k = 0;
				while (k < w->nj && w->j[k].slot != sp)
					k++;
				if (k == w->nj &&
				    dcg_grow(&w->j, w->nj, &w->capj, sizeof *w->j) < 0)
					return -1;
				if (k == w->nj)
					w->j[w->nj++] =
					    (struct ret_at){sp, dcg_func_of(d->pid, from), 0, 0};
			}
		}
	}
	return 0;
}

/* Did the frame at slot make a tail call from func in the records? (A
 * root that tail-called is at its slot in another function.) */
static int jumped_from(const struct walk *w, uint64_t slot, uint64_t func)
{
	for (size_t i = 0; i < w->nj; i++)
		if (w->j[i].slot == slot && w->j[i].func == func)
			return 1;
	return 0;
}

static int entered(const struct walk *w, uint64_t slot)
{
	for (size_t i = 0; i < w->np; i++)
		if (w->p[i] == slot)
			return 1;
	return 0;
}

/* The thread's frames now, innermost first, each with its slot (that of
 * the return address into its caller: the caller's rsp - 8). */
static int unwind_now(struct dthread *d, struct _stp_sym_frame *fr)
{
	struct user_regs_struct ur;
	struct _stp_symtab *st = dcg_symtab_of(d->pid);

	if (!st || _stp_pt_get_regs(d->t, &ur) < 0)
		return -1;
	const uint64_t dregs[17] = {ur.rax, ur.rdx, ur.rcx, ur.rbx, ur.rsi, ur.rdi,
				    ur.rbp, ur.rsp, ur.r8,  ur.r9,  ur.r10, ur.r11,
				    ur.r12, ur.r13, ur.r14, ur.r15, ur.rip};
	int k = _stp_sym_unwind_frames(st, d->tid, dregs, d->rd.read, d->rd.ctx, fr, MAX_FRAMES);
	return k >= MAX_FRAMES ? -1 : k; /* deeper: the root may be past it */
}

/* The index of the root's frame in fr[0..k) (its slot: fr[i + 1].sp - 8),
 * or -1: the frame of the root's function at its slot (entered at its
 * start), or the innermost above the stack pointer it had (entered
 * elsewhere). Not found after an exec (another image), nor for a root
 * that has returned (its caller's slot is not known). */
static int root_index(struct dthread *d, const struct _stp_sym_frame *fr, int k,
		      const struct walk *w)
{
	const struct frame *root = &d->f[0];

	for (int i = 0; i + 1 < k && root->sp; i++) {
		uint64_t slot = fr[i + 1].sp - 8;
		uint64_t pc = i && !fr[i].activation ? fr[i].pc - 1 : fr[i].pc;
		if (!fr[i + 1].sp || (root->known && slot > root->sp))
			return -1;
		if ((root->known ? slot == root->sp : slot >= root->sp) &&
		    (dcg_func_of(d->pid, pc) == root->func ||
		     (root->known && jumped_from(w, slot, root->func))))
			return i;
	}
	return -1;
}

int dcg_xl_place(struct dthread *d, const struct xl_rec *r, size_t n)
{
	static struct _stp_sym_frame fr[MAX_FRAMES];
	static int sigs[MAX_FRAMES];
	struct walk w = {0};
	struct dcg_frame_at *g = NULL;
	size_t ng = 0, capg = 0;
	int k, ri, rc = -1;

	if (!n || !d->nf || (k = unwind_now(d, fr)) <= 0 || walk_records(d, &w, r, n) < 0 ||
	    (ri = root_index(d, fr, k, &w)) < 0)
		goto out;
	memset(sigs, 0, (size_t)ri * sizeof *sigs);
	/* the handlers' signals, innermost first: each runs with the mask
	 * its inner handler restores (the innermost: the thread's now) */
	uint64_t during = sigset_now(d->tid, "SigBlk:");
	for (int i = 0; i + 1 < ri; i++)
		if (dcg_restorer_at(&d->rd, fr[i + 1].pc))
			sigs[i] = signal_of(d, fr[i + 1].sp - 8, during, &during);
	/* the frames under the root still open, entered before the records,
	 * outermost first; a signal restorer's marks the handler above it */
	for (int i = ri - 1; i >= 0; i--) {
		uint64_t slot = fr[i + 1].sp - 8;
		uint64_t pc = i && !fr[i].activation ? fr[i].pc - 1 : fr[i].pc;
		if (!fr[i + 1].sp)
			goto out;
		if (dcg_restorer_at(&d->rd, fr[i].pc) || entered(&w, slot))
			continue;
		if (add_frame(d, &g, &ng, &capg, slot,
			      before_jumps(&w, slot, dcg_func_of(d->pid, pc)), fr[i + 1].pc,
			      sigs[i]) < 0)
			goto out;
	}
	/* then those that returned in the records, outermost first */
	for (size_t i = w.nm; i-- > 0;) {
		const struct ret_at *m = &w.m[i];
		if (m->slot >= fr[ri + 1].sp - 8)
			continue; /* the root's own return, or its caller's */
		if (add_frame(d, &g, &ng, &capg, m->slot, m->func, m->ra, m->sig) < 0)
			goto out;
	}
	_stp_dbg(STP_DBG_DCG, 1, "thread %d: after lost records, %zu frames under the root",
		 (int)d->tid, ng);
	dcg_place_stack(d, g, ng, (int64_t)r[0].tsc);
	rc = 0;
out:
	free(w.p);
	free(w.m);
	free(w.j);
	free(g);
	return rc;
}
