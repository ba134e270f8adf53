/* Restartable sequences (doc/in-process-engine.md, "rseq"). The kernel
 * aborts a critical section (preemption, migration, signal) only when
 * the thread's real pc is inside the range its rseq_cs descriptor gives;
 * in a translation of the section it never is. So a section whose
 * descriptor is active runs as a copy in the cache that the kernel knows
 * of: just before the copy's first instruction, rseq_cs is made to point
 * at a shadow descriptor of ours (in the control block) for the copy,
 * whose abort handler (after the thread's signature) leads to the
 * translation of the program's. A stop inside the copy maps to the
 * program's abort handler with rseq_cs cleared: what the kernel does at
 * the preemption every stop is.
 *
 * Sections are learnt from rseq_cs itself: after each store at fs: (the
 * way glibc's and librseq's conventions reach the rseq area, which is
 * per thread at a fixed fs: offset), the block checks rseq_cs; a
 * descriptor it does not know goes to staprun, which reads it and makes
 * the section's start begin a block of its own. A store to rseq_cs not
 * made through fs: is not seen (doc). */
#include "xlate/block.h"

#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <sys/ptrace.h>

#define GET_RSEQ_CONFIGURATION 0x420f /* PTRACE_GET_RSEQ_CONFIGURATION */
#define RSEQ_CS_OFF 8		      /* struct rseq: rseq_cs */
#define MAX_SEC_INSNS 64

struct rseq_conf { /* struct ptrace_rseq_configuration */
	uint64_t rseq_abi_pointer;
	uint32_t rseq_abi_size, signature, flags, pad;
};

void xl_rseq_thread_init(struct xl_thread *xt)
{
	struct rseq_conf conf;
	struct user_regs_struct r;

	xt->rseq_on = 0;
	memset(&conf, 0, sizeof conf);
	if (ptrace((enum __ptrace_request)GET_RSEQ_CONFIGURATION, xt->tid, sizeof conf, &conf) <
		(long)sizeof conf ||
	    !conf.rseq_abi_pointer || _stp_pt_get_regs(xt->t, &r) < 0)
		return;
	int64_t off = (int64_t)(conf.rseq_abi_pointer - r.fs_base);
	if (off + RSEQ_CS_OFF != (int32_t)(off + RSEQ_CS_OFF)) {
		xl_debug("thread %d: its rseq area is out of reach of fs:", (int)xt->tid);
		return;
	}
	xt->rseq_area = conf.rseq_abi_pointer;
	xt->rseq_off = (int32_t)off;
	xt->rseq_sig = conf.signature;
	xt->rseq_on = 1;
}

const struct xl_rseq_sec *xl_rseq_at(struct xl_proc *xp, uint64_t pc)
{
	for (int i = 0; i < xp->nrseq; i++)
		if (xp->rseq[i].start == pc && xp->rseq[i].end > pc)
			return &xp->rseq[i];
	return NULL;
}

static int is_shadow(const struct xl_thread *xt, uint64_t desc)
{
	uint64_t lo = xl_ctl_addr(xt, offsetof(struct xl_ctl, shadow));

	return desc >= lo && desc < lo + sizeof xt->ctl->shadow;
}

int xl_rseq_learn(struct xl_thread *xt, uint64_t desc, const struct xl_rseq_sec **sec)
{
	struct xl_proc *xp = xt->xp;
	struct xl_rseq_cs cs;
	uint64_t zero = 0;

	*sec = NULL;
	if (!xt->rseq_on || !desc)
		return 0;
	if (is_shadow(xt, desc)) {
		/* left by a copy that was left in a way we did not see */
		_stp_pt_write(xt->t, xt->rseq_area + RSEQ_CS_OFF, &zero, 8);
		return 0;
	}
	for (int i = 0; i < xp->nrseq; i++)
		if (xp->rseq[i].desc == desc) {
			*sec = &xp->rseq[i]; /* known since the block was made */
			return 0;
		}
	if (xp->nrseq == XL_RSEQ_MAX)
		return -ENOSPC;
	struct xl_rseq_sec *s = &xp->rseq[xp->nrseq++];
	memset(s, 0, sizeof *s);
	s->desc = desc;
	/* as the kernel checks it; an invalid one stays known, as no section */
	if (_stp_pt_read(xt->t, desc, &cs, sizeof cs) == 0 && !cs.version &&
	    cs.start_ip + cs.post_commit_offset > cs.start_ip &&
	    cs.abort_ip - cs.start_ip >= cs.post_commit_offset) {
		s->start = cs.start_ip;
		s->end = cs.start_ip + cs.post_commit_offset;
		s->abort = cs.abort_ip;
	}
	xl_debug("rseq section %#llx: [%#llx, %#llx) abort %#llx", (unsigned long long)desc,
		 (unsigned long long)s->start, (unsigned long long)s->end,
		 (unsigned long long)s->abort);
	*sec = s;
	return 1;
}

void xl_rseq_aborted(struct xl_thread *xt)
{
	uint64_t zero = 0;

	_stp_pt_write(xt->t, xt->rseq_area + RSEQ_CS_OFF, &zero, 8);
	xt->no_restore = 1;
}

void xl_rseq_release(struct xl_thread *xt, int shadow)
{
	if (shadow >= 0)
		xt->shadow_used &= ~(1u << shadow);
}

/* ---- translation ---- */

static ZydisEncoderOperand rseq_cs(struct tctx *c)
{
	return xl_abs((uint64_t)(int64_t)(c->xt->rseq_off + RSEQ_CS_OFF), 8);
}

static void load_cs(struct tctx *c, ZydisRegister r)
{
	ZydisEncoderOperand ops[2] = {xl_reg(r), rseq_cs(c)};

	xl_emit_seg(&c->e, ZYDIS_ATTRIB_HAS_SEGMENT_FS, MN(MOV), 2, ops);
}

static void store_cs(struct tctx *c, uint64_t v)
{
	ZydisEncoderOperand ops[2] = {rseq_cs(c), xl_imm((int64_t)v)};

	xl_emit_seg(&c->e, ZYDIS_ATTRIB_HAS_SEGMENT_FS, MN(MOV), 2, ops);
}

/* jrcxz reaches 127 bytes: over a jmp to the far label. */
static void if_rcx_zero(struct tctx *c, struct xl_label *to)
{
	struct xl_label yes = {-1}, no = {-1};

	xl_emit_branch_to(&c->e, MN(JRCXZ), &yes);
	xl_emit_branch_to(&c->e, MN(JMP), &no);
	xl_emit_bind(&c->e, &yes);
	xl_emit_branch_to(&c->e, MN(JMP), to);
	xl_emit_bind(&c->e, &no);
}

/* After a store at fs: that may be to rseq_cs. A mov of a register is
 * seen as it is (where: a lea of its operand; what: the register), so a
 * preemption just after the store, which clears rseq_cs (the pc is not
 * in the section), changes nothing; other stores read rseq_cs again. */
void xl_rseq_after_store(struct tctx *c, const struct xl_insn *in, uint64_t next)
{
	struct cold *k = xb_cold_new(c, C_RSEQ_CHK);
	struct xl_label ok = {-1};
	const ZydisDecodedOperand *m = &in->fs_mem;
	int64_t d = m->mem.disp.value - ((int64_t)c->xt->rseq_off + RSEQ_CS_OFF);

	if (!k)
		return;
	k->pc = next;
	k->src = in->fs_src != NONE && d == (int32_t)d ? in->fs_src : NONE;
	xb_clean(c, next);
	xb_to_slot(c, XL_CTL_S_RCX, ZYDIS_REGISTER_RCX);
	xb_mid(c, next, XL_PC_CONST, XL_SAVED_RCX, 0);
	if (k->src != NONE) {
		xb_to_slot(c, XL_CTL_S_RAX, ZYDIS_REGISTER_RAX);
		xb_mid(c, next, XL_PC_CONST, RAXRCX, 0);
		xl_emit2(&c->e, MN(LEA), REG(RCX),
			 xl_mem(m->mem.base, m->mem.index, m->mem.scale, d, 8));
		if_rcx_zero(c, &k->at); /* to rseq_cs */
		xb_from_slot(c, ZYDIS_REGISTER_RAX, XL_CTL_S_RAX);
		xb_mid(c, next, XL_PC_CONST, XL_SAVED_RCX, 0);
	} else {
		load_cs(c, ZYDIS_REGISTER_RCX);
		xl_emit_branch_to(&c->e, MN(JRCXZ), &ok);
		xl_emit_branch_to(&c->e, MN(JMP), &k->at);
	}
	xl_emit_bind(&c->e, &ok);
	k->back = ok.off;
	xb_from_slot(c, ZYDIS_REGISTER_RCX, XL_CTL_S_RCX);
	xb_clean(c, next);
	xb_exit_to(c, MN(JMP), next);
}

/* rax = what rseq_cs holds now (rax and rcx in their slots): nothing, a
 * descriptor known when the block was made (if its section starts at
 * once, its copy follows in this block), or one for staprun to learn
 * (XL_REQ_RSEQ, the value in s_tgt). */
static void cold_check(struct tctx *c, struct cold *k)
{
	struct xl_proc *xp = c->xt->xp;
	struct xl_label hit[XL_RSEQ_MAX], none = {-1}, back = {k->back};
	int copy = 0;

	xb_mid(c, k->pc, XL_PC_CONST, k->src != NONE ? RAXRCX : XL_SAVED_RCX, 0);
	if (k->src == ZYDIS_REGISTER_RCX)
		xb_from_slot(c, ZYDIS_REGISTER_RAX, XL_CTL_S_RCX);
	else if (k->src == ZYDIS_REGISTER_RAX)
		xb_from_slot(c, ZYDIS_REGISTER_RAX, XL_CTL_S_RAX);
	else if (k->src != NONE)
		xl_emit2(&c->e, MN(MOV), REG(RAX), xl_reg(k->src));
	if (k->src != NONE) {
		xl_emit2(&c->e, MN(MOV), REG(RCX), REG(RAX));
		if_rcx_zero(c, &none);
	} else {
		xb_to_slot(c, XL_CTL_S_RAX, ZYDIS_REGISTER_RAX);
		xb_mid(c, k->pc, XL_PC_CONST, RAXRCX, 0);
		xl_emit2(&c->e, MN(MOV), REG(RAX), REG(RCX));
	}
	for (int i = 0; i < xp->nrseq; i++) {
		hit[i].off = -1;
		xb_mov_imm(c, ZYDIS_REGISTER_RCX, (uint64_t) - (int64_t)xp->rseq[i].desc);
		xl_emit2(&c->e, MN(LEA), REG(RCX),
			 xl_mem(ZYDIS_REGISTER_RCX, ZYDIS_REGISTER_RAX, 1, 0, 8));
		if_rcx_zero(c, &hit[i]);
	}
	xb_to_slot(c, XL_CTL_S_TGT, ZYDIS_REGISTER_RAX);
	xb_mov_imm(c, ZYDIS_REGISTER_RAX, k->pc);
	xb_to_slot(c, XL_CTL_NATIVE_PC, ZYDIS_REGISTER_RAX);
	xl_emit1(&c->e, MN(JMP), xb_entry(c, XL_E_RSEQ));
	for (int i = 0; i < xp->nrseq; i++) {
		const struct xl_rseq_sec *s = &xp->rseq[i];
		struct cold *cp;
		xl_emit_bind(&c->e, &hit[i]);
		if (s->start == k->pc && s->end > s->start && !copy++ &&
		    (cp = xb_cold_new(c, C_RSEQ))) {
			cp->sec = s;
			cp->pc = s->start;
			xl_emit_branch_to(&c->e, MN(JMP), &cp->at);
		} else {
			xl_emit_branch_to(&c->e, MN(JMP), &none);
		}
	}
	xl_emit_bind(&c->e, &none);
	xb_from_slot(c, ZYDIS_REGISTER_RAX, XL_CTL_S_RAX);
	xb_mid(c, k->pc, XL_PC_CONST, XL_SAVED_RCX, 0);
	xl_emit_branch_to(&c->e, MN(JMP), &back);
}

void xl_rseq_entry(struct tctx *c, const struct xl_rseq_sec *s)
{
	struct cold *k = xb_cold_new(c, C_RSEQ);
	uint64_t a = s->start;

	if (!k)
		return;
	k->sec = s;
	k->pc = a;
	c->entry_copy = k;
	xb_save_rax_rcx(c, a);
	load_cs(c, ZYDIS_REGISTER_RCX);
	xb_mov_imm(c, ZYDIS_REGISTER_RAX, (uint64_t) - (int64_t)s->desc);
	xl_emit2(&c->e, MN(LEA), REG(RCX), xl_mem(ZYDIS_REGISTER_RCX, ZYDIS_REGISTER_RAX, 1, 0, 8));
	if_rcx_zero(c, &k->at);
	xb_from_slot(c, ZYDIS_REGISTER_RAX, XL_CTL_S_RAX);
	xb_mid(c, a, XL_PC_CONST, XL_SAVED_RCX, 0);
	xb_from_slot(c, ZYDIS_REGISTER_RCX, XL_CTL_S_RCX);
	xb_clean(c, a);
}

/* The section's instructions, if it can be copied: only plain ones and
 * direct jumps (the rules of rseq forbid calls and system calls), no
 * breakpoint of ours. NULL, or why not. */
static const char *decode(struct tctx *c, const struct xl_rseq_sec *s, struct xl_insn *ins, int *n)
{
	struct _stp_pt_proc *p = _stp_pt_thread_proc(c->xt->t);
	uint64_t pc = s->start;

	for (*n = 0; pc < s->end; pc += ins[(*n)++].len) {
		struct xl_insn *in = &ins[*n];
		if (*n == MAX_SEC_INSNS)
			return "too long";
		if (_stp_pt_bkpt_at(p, pc))
			return "a probe inside";
		if (xl_read_insn(&c->xt->rd, pc, in) < 0)
			return "undecodable";
		if (in->cls != XL_I_PLAIN && in->cls != XL_I_JCC && in->cls != XL_I_JMP)
			return "a call, return, system call or indirect branch inside";
	}
	if (pc != s->end)
		return "its end inside an instruction";
	for (int i = 0; i < *n; i++) {
		uint64_t t = ins[i].target;
		int ok = ins[i].cls == XL_I_PLAIN || t == s->end || t < s->start || t > s->end;
		for (int j = 0; j < *n && !ok; j++)
			ok = ins[j].pc == t;
		if (!ok)
			return "a jump into an instruction";
	}
	return NULL;
}

static int shadow_take(struct xl_thread *xt)
{
	for (int i = 0; i < XL_RSEQ_SHADOWS; i++)
		if (!(xt->shadow_used & (1u << i))) {
			xt->shadow_used |= 1u << i;
			return i;
		}
	return -1;
}

/* Entered with rseq_cs == the section's descriptor, rax and rcx in their
 * slots. */
static void cold_copy(struct tctx *c, struct cold *k)
{
	const struct xl_rseq_sec *s = k->sec;
	struct xl_insn ins[MAX_SEC_INSNS];
	struct xl_label lab[MAX_SEC_INSNS], end = {-1}, abort_at = {-1};
	int n = 0;
	const char *why = decode(c, s, ins, &n);

	if (!why && c->shadow >= 0)
		why = "two in one block";
	if (!why && (c->shadow = shadow_take(c->xt)) < 0)
		why = "too many in the cache";
	xb_mid(c, s->start, XL_PC_CONST, RAXRCX, 0);
	xb_from_slot(c, ZYDIS_REGISTER_RCX, XL_CTL_S_RCX);
	xb_mid(c, s->start, XL_PC_CONST, XL_SAVED_RAX, 0);
	xb_from_slot(c, ZYDIS_REGISTER_RAX, XL_CTL_S_RAX);
	xb_mid(c, s->start, XL_PC_CONST, 0, 0);
	if (why) {
		xl_debug("rseq section at %#llx: not copied (%s): the thread falls back",
			 (unsigned long long)s->start, why);
		struct xl_insn at = {.pc = s->start};
		xb_do_bad(c, &at);
		return;
	}
	int slot = c->shadow;
	uint64_t desc =
	    c->ctl + offsetof(struct xl_ctl, shadow) + (uint64_t)slot * sizeof(struct xl_rseq_cs);
	store_cs(c, desc); /* the copy's first instruction follows at once */
	uint64_t copy = xl_emit_here(&c->e);
	c->e.st = (struct xl_state){.kind = XL_ST_RSEQ, .pc = s->abort};
	for (int i = 0; i < n; i++)
		lab[i].off = -1; /* unbound, also for a jump forward to it */
	for (int i = 0; i < n; i++) {
		const struct xl_insn *in = &ins[i];
		uint8_t b[16];
		xl_emit_bind(&c->e, &lab[i]);
		if (in->cls == XL_I_PLAIN) {
			if (xl_relocate(in, xl_emit_here(&c->e), b) < 0) {
				c->e.err = -ERANGE;
				c->why = "a rip-relative operand out of reach of the cache";
				return;
			}
			xl_emit_bytes(&c->e, b, in->len);
			continue;
		}
		struct xl_label *to = &end;
		if (in->target != s->end && (in->target < s->start || in->target > s->end)) {
			struct cold *out = xb_cold_new(c, C_RSEQ_OUT);
			if (!out)
				return;
			out->pc = in->target;
			to = &out->at;
		}
		for (int j = 0; j < n && to == &end && in->target != s->end; j++)
			if (ins[j].pc == in->target)
				to = &lab[j];
		xl_emit_branch_to(&c->e, in->mn, to);
	}
	xl_emit_bind(&c->e, &end); /* every label of lab[] is bound now */
	uint64_t copy_end = xl_emit_here(&c->e);
	xb_mid(c, s->end, XL_PC_CONST, 0, 0);
	store_cs(c, 0);
	xb_exit_to(c, MN(JMP), s->end);
	uint32_t sig = c->xt->rseq_sig;
	xl_emit_bytes(&c->e, (const uint8_t *)&sig, sizeof sig);
	xl_emit_bind(&c->e, &abort_at);
	uint64_t abort_pc = xl_emit_here(&c->e);
	xb_mid(c, s->abort, XL_PC_CONST, 0, 0);
	xb_exit_to(c, MN(JMP), s->abort);

	xl_debug("rseq section at %#llx: copied at %#llx (shadow %d)", (unsigned long long)s->start,
		 (unsigned long long)copy, slot);
	struct xl_rseq_cs *sh = &c->xt->ctl->shadow[slot];
	sh->version = sh->flags = 0;
	sh->start_ip = copy;
	sh->post_commit_offset = copy_end - copy;
	sh->abort_ip = abort_pc;
}

/* A branch out of the copy: rseq_cs cleared (the shadow descriptor
 * would outlive the copy), then the target's block. */
static void cold_out(struct tctx *c, struct cold *k)
{
	xb_mid(c, k->pc, XL_PC_CONST, 0, 0);
	store_cs(c, 0);
	xb_exit_to(c, MN(JMP), k->pc);
}

void xl_rseq_cold(struct tctx *c, struct cold *k)
{
	switch (k->kind) {
	case C_RSEQ:
		cold_copy(c, k);
		break;
	case C_RSEQ_CHK:
		cold_check(c, k);
		break;
	case C_RSEQ_OUT:
		cold_out(c, k);
		break;
	}
}
