/* The block translator: one basic block of the program into the code
 * cache, by the rules of doc/in-process-engine.md ("Translation rules").
 * The fast path uses only mov, lea, movzx, jrcxz, rdtsc and branches (no
 * flag changes) and writes below rsp only a call's return-address slot.
 * Every instruction emitted carries the state a stop before it maps to
 * (emit.h); rarely run code (ring full, exits not linked yet, the clone
 * and rt_sigreturn paths) goes after the block's main part. */
#include "xlate/block.h"
#include "xlate/agent.h"
#include "xlate/encmemo.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

ZydisEncoderOperand xb_slot(struct tctx *c, unsigned off)
{
	return xl_abs(c->ctl + off, 8);
}

ZydisEncoderOperand xb_entry(struct tctx *c, int k)
{
	return xl_abs(c->ctl + XL_CTL_ENTRY + 8 * (unsigned)k, 8);
}

ZydisEncoderOperand xb_at(ZydisRegister base, int64_t disp, uint16_t size)
{
	return xl_mem(base, NONE, 0, disp, size);
}

void xb_to_slot(struct tctx *c, unsigned off, ZydisRegister r)
{
	xl_memo2(&c->e, MN(MOV), xb_slot(c, off), xl_reg(r));
}

void xb_from_slot(struct tctx *c, ZydisRegister r, unsigned off)
{
	xl_memo2(&c->e, MN(MOV), xl_reg(r), xb_slot(c, off));
}

void xb_mov_imm(struct tctx *c, ZydisRegister r, uint64_t v)
{
	xl_memo2(&c->e, MN(MOV), xl_reg(r), xl_imm((int64_t)v));
}

/* lea r, [rip + the block's offset off] */
static void lea_off(struct tctx *c, ZydisRegister r, int32_t off)
{
	xl_memo2(&c->e, MN(LEA), xl_reg(r),
		 xl_mem(ZYDIS_REGISTER_RIP, NONE, 0, (int64_t)(c->e.pc + (uint64_t)off), 8));
}

/* States at the breakpoint's pc after its trap stub are marked: the
 * trap was taken (a frame coming back there must not take it again). */
static void mark(struct tctx *c)
{
	if (c->after_trap_pc && c->e.st.pc == c->after_trap_pc)
		c->e.st.after_trap = 1;
}

void xb_clean(struct tctx *c, uint64_t pc)
{
	xl_st_clean(&c->e, pc);
	mark(c);
}

void xb_mid(struct tctx *c, uint64_t pc, int src, int saved, int adj)
{
	xl_st_mid(&c->e, pc, src, saved, adj);
	mark(c);
}

void xb_save_rax_rcx(struct tctx *c, uint64_t pc)
{
	xb_clean(c, pc);
	xb_to_slot(c, XL_CTL_S_RAX, ZYDIS_REGISTER_RAX);
	xb_mid(c, pc, XL_PC_CONST, XL_SAVED_RAX, 0);
	xb_to_slot(c, XL_CTL_S_RCX, ZYDIS_REGISTER_RCX);
	xb_mid(c, pc, XL_PC_CONST, RAXRCX, 0);
}

struct cold *xb_cold_new(struct tctx *c, int kind)
{
	if (c->ncold == MAX_COLD) {
		c->e.err = -ENOSPC;
		return NULL;
	}
	struct cold *k = &c->cold[c->ncold++];
	memset(k, 0, sizeof *k);
	k->kind = kind;
	k->after_trap_pc = c->after_trap_pc;
	k->at.off = -1;
	return k;
}

/* A branch that goes to another block: at first to its miss stub. */
void xb_exit_to(struct tctx *c, ZydisMnemonic mn, uint64_t target)
{
	struct cold *k;

	if (c->nex == MAX_EXITS || !(k = xb_cold_new(c, C_EXIT))) {
		c->e.err = -ENOSPC;
		return;
	}
	struct xl_exit *x = &c->ex[c->nex];
	memset(x, 0, sizeof *x);
	x->off = (uint32_t)c->e.len;
	x->mn = mn;
	x->target = target;
	k->exit = c->nex++;
	k->pc = target;
	xl_emit_branch_to(&c->e, mn, &k->at);
	x->len = (uint8_t)(c->e.len - x->off);
}

/* ---- records ---- */

/* Room for one record (rax, rcx, rdx saved): else to the agent, which
 * has staprun drain the ring and comes back at retry. ring_left is one
 * more than the free slots: `loop` decrements it and goes on while it is
 * not zero (no flags); at 1, the ring is full. */
/* Records of registers the script uses, written before a record of kind
 * (config capture): how many. */
static int rec_nargs(struct tctx *c, int kind)
{
	int cap = c->xt->xp->x->cfg.capture;

	if (kind == XL_REC_RET)
		return cap & XL_CAP_RET ? 1 : 0;
	return cap & XL_CAP_ARGS ? XL_ARGS_SLOTS : 0;
}

static void rec_reserve(struct tctx *c, const struct xl_label *retry, uint64_t back, int back_src,
			int kind)
{
	struct cold *k = xb_cold_new(c, C_FULL);
	int n = 1 + rec_nargs(c, kind);

	if (!k)
		return;
	k->back = retry->off;
	k->pc = back;
	k->pc_src = back_src;
	xb_from_slot(c, ZYDIS_REGISTER_RCX, XL_CTL_RING_LEFT);
	/* one loop per record: all of them fit, or none is taken */
	for (int i = 0; i < n; i++) {
		struct xl_label room = {-1};
		xl_emit_branch_to(&c->e, MN(LOOP), &room);
		xl_emit_branch_to(&c->e, MN(JMP), &k->at);
		xl_emit_bind(&c->e, &room);
	}
	xb_to_slot(c, XL_CTL_RING_LEFT, ZYDIS_REGISTER_RCX);
}

enum { SRC_IMM, SRC_TGT, SRC_FROM };

/* One XL_REC_ARGS record at rcx + at: values a and b (registers, or
 * NONE: rax holds it, loaded by the caller). */
static void rec_args_one(struct tctx *c, int32_t at, unsigned part, ZydisRegister a,
			 ZydisRegister b)
{
	xl_memo2(&c->e, MN(MOV), xb_at(ZYDIS_REGISTER_RCX, at, 8), xl_imm(0));
	if (a != NONE)
		xl_memo2(&c->e, MN(MOV), xb_at(ZYDIS_REGISTER_RCX, at + 16, 8), xl_reg(a));
	else
		xl_memo2(&c->e, MN(MOV), xb_at(ZYDIS_REGISTER_RCX, at + 16, 8), REG(RAX));
	if (b != NONE)
		xl_memo2(&c->e, MN(MOV), xb_at(ZYDIS_REGISTER_RCX, at + 24, 8), xl_reg(b));
	else
		xl_memo2(&c->e, MN(MOV), xb_at(ZYDIS_REGISTER_RCX, at + 24, 8), REG(RAX));
	xb_mov_imm(c, ZYDIS_REGISTER_RAX, part | (uint64_t)XL_REC_ARGS << XL_KIND_SHIFT);
	xl_memo2(&c->e, MN(MOV), xb_at(ZYDIS_REGISTER_RCX, at + 8, 8), REG(RAX));
}

/* The registers' records before the record of kind, at wp (rcx), rcx
 * moved past them. The program's rax and rcx are in their slots; rdx is
 * still the program's (rdtsc comes after). */
static void rec_args(struct tctx *c, int kind)
{
	int n = rec_nargs(c, kind);

	if (!n)
		return;
	if (kind == XL_REC_RET) {
		xb_from_slot(c, ZYDIS_REGISTER_RAX, XL_CTL_S_RAX);
		rec_args_one(c, 0, 3, NONE, NONE);
	} else {
		rec_args_one(c, 0, 0, ZYDIS_REGISTER_RDI, ZYDIS_REGISTER_RSI);
		xb_from_slot(c, ZYDIS_REGISTER_RAX, XL_CTL_S_RCX);
		rec_args_one(c, 32, 1, ZYDIS_REGISTER_RDX, NONE);
		rec_args_one(c, 64, 2, ZYDIS_REGISTER_R8, ZYDIS_REGISTER_R9);
	}
	xl_memo2(&c->e, MN(LEA), REG(RCX), xb_at(ZYDIS_REGISTER_RCX, 32 * n, 8));
}

/* The record at wp (rcx = the next one after); not committed yet. */
static void rec_write(struct tctx *c, int kind, int from_src, uint64_t from, int to_src,
		      uint64_t to, int sp_add)
{
	xb_from_slot(c, ZYDIS_REGISTER_RCX, XL_CTL_RING_WP);
	rec_args(c, kind);
	xl_memo0(&c->e, MN(RDTSC));
	xl_memo2(&c->e, MN(MOV), xb_at(ZYDIS_REGISTER_RCX, 0, 4), REG(EAX));
	xl_memo2(&c->e, MN(MOV), xb_at(ZYDIS_REGISTER_RCX, 4, 4), REG(EDX));
	if (from_src == SRC_IMM) {
		xb_mov_imm(c, ZYDIS_REGISTER_RAX, from | (uint64_t)kind << XL_KIND_SHIFT);
		xl_memo2(&c->e, MN(MOV), xb_at(ZYDIS_REGISTER_RCX, 8, 8), REG(RAX));
	} else {
		xb_from_slot(c, ZYDIS_REGISTER_RAX, XL_CTL_S_FROM);
		xl_memo2(&c->e, MN(MOV), xb_at(ZYDIS_REGISTER_RCX, 8, 8), REG(RAX));
		xl_memo2(&c->e, MN(MOV), xb_at(ZYDIS_REGISTER_RCX, 15, 1), xl_imm(kind));
	}
	if (to_src == SRC_IMM)
		xb_mov_imm(c, ZYDIS_REGISTER_RAX, to);
	else
		xb_from_slot(c, ZYDIS_REGISTER_RAX, XL_CTL_S_TGT);
	xl_memo2(&c->e, MN(MOV), xb_at(ZYDIS_REGISTER_RCX, 16, 8), REG(RAX));
	if (sp_add) {
		xl_memo2(&c->e, MN(LEA), REG(RAX), xb_at(ZYDIS_REGISTER_RSP, sp_add, 8));
		xl_memo2(&c->e, MN(MOV), xb_at(ZYDIS_REGISTER_RCX, 24, 8), REG(RAX));
	} else {
		xl_memo2(&c->e, MN(MOV), xb_at(ZYDIS_REGISTER_RCX, 24, 8), REG(RSP));
	}
	xl_memo2(&c->e, MN(LEA), REG(RCX), xb_at(ZYDIS_REGISTER_RCX, 32, 8));
}

/* Events of this kind stop the thread (cfg.stop): a handler needs it. */
static int stops_at(struct tctx *c, int kind)
{
	int stop = c->xt->xp->x->cfg.stop;

	return kind == XL_REC_RET ? stop & XL_STOP_RET : stop & XL_STOP_CALL;
}

/* The commit point: from here on the instruction has happened. An event
 * that stops the thread traps just before it, in the state before the
 * instruction: staprun commits the record itself at that stop, runs the
 * handlers with the thread held, and resumes it past the commit (so a
 * record is never read before its stop, nor the instruction redone). */
static void rec_commit(struct tctx *c, int kind)
{
	if (!stops_at(c, kind)) {
		xb_to_slot(c, XL_CTL_RING_WP, ZYDIS_REGISTER_RCX);
		return;
	}
	struct xl_state st = c->e.st;
	c->e.st.kind = XL_ST_EVENT;
	xl_memo0(&c->e, MN(INT3));
	size_t ai = c->e.nan - 1, at = c->e.len;
	c->e.st = st;
	xb_to_slot(c, XL_CTL_RING_WP, ZYDIS_REGISTER_RCX);
	if (!c->e.err && c->e.nan > ai && c->e.an[ai].st.kind == XL_ST_EVENT)
		c->e.an[ai].st.skip = (uint8_t)(c->e.len - at);
}

/* Save rax, rdx, rcx (the record's registers) for the instruction at pc;
 * binds `start` at the first save (where a retry comes back). */
static void save3(struct tctx *c, uint64_t pc, struct xl_label *start)
{
	xb_clean(c, pc);
	xl_emit_bind(&c->e, start);
	xb_to_slot(c, XL_CTL_S_RAX, ZYDIS_REGISTER_RAX);
	xb_mid(c, pc, XL_PC_CONST, XL_SAVED_RAX, 0);
	xb_to_slot(c, XL_CTL_S_RDX, ZYDIS_REGISTER_RDX);
	xb_mid(c, pc, XL_PC_CONST, XL_SAVED_RAX | XL_SAVED_RDX, 0);
	xb_to_slot(c, XL_CTL_S_RCX, ZYDIS_REGISTER_RCX);
	xb_mid(c, pc, XL_PC_CONST, ALL3, 0);
}

/* The real return address of a call: lea rsp,[rsp-8] and two 32-bit movs. */
static void push_ret(struct tctx *c, uint64_t pc, uint64_t ret)
{
	xl_memo2(&c->e, MN(LEA), REG(RSP), xb_at(ZYDIS_REGISTER_RSP, -8, 8));
	xb_mid(c, pc, XL_PC_CONST, ALL3, 8);
	xl_memo2(&c->e, MN(MOV), xb_at(ZYDIS_REGISTER_RSP, 0, 4), xl_imm((int32_t)(uint32_t)ret));
	xl_memo2(&c->e, MN(MOV), xb_at(ZYDIS_REGISTER_RSP, 4, 4),
		 xl_imm((int32_t)(uint32_t)(ret >> 32)));
}

/* rax = the native target: to its block through the lookup table (negated
 * keys: a hit leaves rcx zero), else to the agent. */
static void lookup(struct tctx *c, int jump)
{
	struct xl_label hit = {-1};
	uint64_t base = c->xt->rg.addr;
	uint64_t keys = base + (jump ? XL_JKEYS_OFF : XL_RKEYS_OFF);
	uint64_t vals = base + (jump ? XL_JVALS_OFF : XL_RVALS_OFF);

	xl_memo2(&c->e, MN(MOVZX), REG(ECX), REG(AX));
	xl_memo2(&c->e, MN(MOV), REG(RCX), xl_mem(NONE, ZYDIS_REGISTER_RCX, 8, (int64_t)keys, 8));
	xl_memo2(&c->e, MN(LEA), REG(RCX), xl_mem(ZYDIS_REGISTER_RCX, ZYDIS_REGISTER_RAX, 1, 0, 8));
	xl_emit_branch_to(&c->e, MN(JRCXZ), &hit);
	if (jump) {
		/* the jump is still to happen (its record, if any, too): the
		 * agent's native pc is the jump, the target in s_tgt */
		xb_to_slot(c, XL_CTL_S_TGT, ZYDIS_REGISTER_RAX);
		xb_from_slot(c, ZYDIS_REGISTER_RAX, XL_CTL_S_FROM);
	}
	xb_to_slot(c, XL_CTL_NATIVE_PC, ZYDIS_REGISTER_RAX);
	xl_memo1(&c->e, MN(JMP), xb_entry(c, jump ? XL_E_MISS_JMP : XL_E_MISS_RET));
	xl_emit_bind(&c->e, &hit);
	xl_memo2(&c->e, MN(MOVZX), REG(ECX), REG(AX));
	xl_memo1(&c->e, MN(JMP), xl_mem(NONE, ZYDIS_REGISTER_RCX, 8, (int64_t)vals, 8));
}

/* rax = the indirect branch's target (registers still the program's). */
static void load_target(struct tctx *c, const struct xl_insn *in)
{
	const ZydisDecodedOperand *op = &in->op;

	if (op->type == ZYDIS_OPERAND_TYPE_REGISTER) {
		xl_memo2(&c->e, MN(MOV), REG(RAX), xl_reg(op->reg.value));
		return;
	}
	int64_t disp = op->mem.disp.value;
	if (op->mem.base == ZYDIS_REGISTER_RIP)
		disp = (int64_t)in->rip_addr; /* encoded for the new address */
	ZydisEncoderOperand ops[2] = {REG(RAX),
				      xl_mem(op->mem.base, op->mem.index, op->mem.scale, disp, 8)};
	xl_memo_seg(&c->e, in->segment_attr, MN(MOV), 2, ops); /* fs:/gs: kept */
}

/* ---- the rules, per class ---- */

static int cross(struct tctx *c, uint64_t from, uint64_t to)
{
	return xl_fid(c->xt, from) != xl_fid(c->xt, to);
}

static void do_call(struct tctx *c, const struct xl_insn *in)
{
	struct xl_label start = {-1};
	uint64_t a = in->pc, r = in->pc + in->len;
	int ind = in->cls == XL_I_CALL_IND;

	c->ends_call = 1;
	save3(c, a, &start);
	if (ind) {
		load_target(c, in);
		xb_to_slot(c, XL_CTL_S_TGT, ZYDIS_REGISTER_RAX);
	}
	rec_reserve(c, &start, a, XL_PC_CONST, XL_REC_CALL);
	push_ret(c, a, r);
	rec_write(c, XL_REC_CALL, SRC_IMM, a, ind ? SRC_TGT : SRC_IMM, in->target, 0);
	rec_commit(c, XL_REC_CALL);
	if (ind) {
		xb_mid(c, 0, XL_PC_TGT, ALL3, 0);
		xb_from_slot(c, ZYDIS_REGISTER_RDX, XL_CTL_S_RDX);
		xb_mid(c, 0, XL_PC_TGT, RAXRCX, 0);
		xb_from_slot(c, ZYDIS_REGISTER_RAX, XL_CTL_S_TGT);
		lookup(c, 0);
		return;
	}
	xb_mid(c, in->target, XL_PC_CONST, ALL3, 0);
	xb_from_slot(c, ZYDIS_REGISTER_RAX, XL_CTL_S_RAX);
	xb_mid(c, in->target, XL_PC_CONST, XL_SAVED_RCX | XL_SAVED_RDX, 0);
	xb_from_slot(c, ZYDIS_REGISTER_RDX, XL_CTL_S_RDX);
	xb_mid(c, in->target, XL_PC_CONST, XL_SAVED_RCX, 0);
	xb_from_slot(c, ZYDIS_REGISTER_RCX, XL_CTL_S_RCX);
	xb_clean(c, in->target);
	xb_exit_to(c, MN(JMP), in->target);
}

static void do_ret(struct tctx *c, const struct xl_insn *in)
{
	struct xl_label start = {-1};
	uint64_t a = in->pc;
	int pop = 8 + in->ret_imm;

	save3(c, a, &start);
	xl_memo2(&c->e, MN(MOV), REG(RAX), xb_at(ZYDIS_REGISTER_RSP, 0, 8));
	xb_to_slot(c, XL_CTL_S_TGT, ZYDIS_REGISTER_RAX);
	rec_reserve(c, &start, a, XL_PC_CONST, XL_REC_RET);
	rec_write(c, XL_REC_RET, SRC_IMM, a, SRC_TGT, 0, pop);
	xl_memo2(&c->e, MN(LEA), REG(RSP), xb_at(ZYDIS_REGISTER_RSP, pop, 8));
	xb_mid(c, a, XL_PC_CONST, ALL3, -pop);
	rec_commit(c, XL_REC_RET);
	xb_mid(c, 0, XL_PC_TGT, ALL3, 0);
	xb_from_slot(c, ZYDIS_REGISTER_RDX, XL_CTL_S_RDX);
	xb_mid(c, 0, XL_PC_TGT, RAXRCX, 0);
	xb_from_slot(c, ZYDIS_REGISTER_RAX, XL_CTL_S_TGT);
	lookup(c, 0);
}

/* An indirect jmp: the jump table's values are jump entries, which write
 * a record only when the target is in another function than the site. */
static void do_jmp_ind(struct tctx *c, const struct xl_insn *in)
{
	uint64_t a = in->pc;

	xb_save_rax_rcx(c, a);
	load_target(c, in);
	xl_memo2(&c->e, MN(MOV), xl_abs(c->ctl + XL_CTL_S_JFN, 4), xl_imm(xl_fid(c->xt, a)));
	xb_mov_imm(c, ZYDIS_REGISTER_RCX, a);
	xb_to_slot(c, XL_CTL_S_FROM, ZYDIS_REGISTER_RCX);
	lookup(c, 1);
}

/* A direct jump into another function (a tail call): its record, then
 * the exit. The state rolls back to the jump itself (flags untouched). */
static void xjump(struct tctx *c, uint64_t a, uint64_t target)
{
	struct xl_label start = {-1};

	save3(c, a, &start);
	rec_reserve(c, &start, a, XL_PC_CONST, XL_REC_JUMP);
	rec_write(c, XL_REC_JUMP, SRC_IMM, a, SRC_IMM, target, 0);
	rec_commit(c, XL_REC_JUMP);
	xb_mid(c, target, XL_PC_CONST, ALL3, 0);
	xb_from_slot(c, ZYDIS_REGISTER_RAX, XL_CTL_S_RAX);
	xb_mid(c, target, XL_PC_CONST, XL_SAVED_RCX | XL_SAVED_RDX, 0);
	xb_from_slot(c, ZYDIS_REGISTER_RDX, XL_CTL_S_RDX);
	xb_mid(c, target, XL_PC_CONST, XL_SAVED_RCX, 0);
	xb_from_slot(c, ZYDIS_REGISTER_RCX, XL_CTL_S_RCX);
	xb_clean(c, target);
	xb_exit_to(c, MN(JMP), target);
}

static void do_jmp(struct tctx *c, const struct xl_insn *in)
{
	if (cross(c, in->pc, in->target)) {
		xjump(c, in->pc, in->target);
		return;
	}
	xb_clean(c, in->pc);
	xb_exit_to(c, MN(JMP), in->target);
}

static void do_jcc(struct tctx *c, const struct xl_insn *in)
{
	uint64_t f = in->pc + in->len;

	xb_clean(c, in->pc);
	if (cross(c, in->pc, in->target)) {
		struct cold *k = xb_cold_new(c, C_XJUMP);
		if (!k)
			return;
		k->pc = in->pc;
		k->pc2 = in->target;
		xl_emit_branch_to(&c->e, in->mn, &k->at);
	} else {
		xb_exit_to(c, in->mn, in->target);
	}
	xb_clean(c, f);
	xb_exit_to(c, MN(JMP), f);
}

/* jrcxz, loop*: rel8 only: over a jmp to the far exit. */
static void do_jcxz(struct tctx *c, const struct xl_insn *in)
{
	struct xl_label taken = {-1};
	uint64_t f = in->pc + in->len;

	xb_clean(c, in->pc);
	xl_emit_branch_to(&c->e, in->mn, &taken);
	xb_clean(c, f);
	xb_exit_to(c, MN(JMP), f);
	xl_emit_bind(&c->e, &taken);
	xb_clean(c, in->target);
	xb_exit_to(c, MN(JMP), in->target);
}

/* syscall stays the real instruction. rt_sigreturn goes through the agent
 * (the frame's rip becomes a cache address); clone, fork, vfork and
 * clone3 go through a copy after which a child (rax 0) leaves at once;
 * mmap, mprotect, munmap and mremap through a copy after which the agent
 * may have staprun drop the blocks of code they changed. Each test: a lea
 * and a jrcxz not taken. */
static void do_syscall(struct tctx *c, const struct xl_insn *in)
{
	static const int16_t clones[] = {56, 57, 58, 435}, mems[] = {9, 10, 11, 25};
	struct xl_label sys = {-1}, after = {-1}, to_sr = {-1}, to_cl = {-1}, to_ms = {-1},
			go = {-1};
	uint64_t a = in->pc, f = in->pc + in->len;
	struct cold *sr = xb_cold_new(c, C_SIGRET), *cl = xb_cold_new(c, C_CLONE),
		    *ms = xb_cold_new(c, C_MEMSYS);

	if (!sr || !cl || !ms)
		return;
	xb_clean(c, a);
	xb_to_slot(c, XL_CTL_S_RCX, ZYDIS_REGISTER_RCX);
	xb_mid(c, a, XL_PC_CONST, XL_SAVED_RCX, 0);
	xl_memo2(&c->e, MN(LEA), REG(RCX), xb_at(ZYDIS_REGISTER_RAX, -15, 8));
	xl_emit_branch_to(&c->e, MN(JRCXZ), &to_sr);
	for (size_t i = 0; i < sizeof clones / sizeof *clones; i++) {
		xl_memo2(&c->e, MN(LEA), REG(RCX), xb_at(ZYDIS_REGISTER_RAX, -clones[i], 8));
		xl_emit_branch_to(&c->e, MN(JRCXZ), &to_cl);
	}
	for (size_t i = 0; i < sizeof mems / sizeof *mems; i++) {
		xl_memo2(&c->e, MN(LEA), REG(RCX), xb_at(ZYDIS_REGISTER_RAX, -mems[i], 8));
		xl_emit_branch_to(&c->e, MN(JRCXZ), &to_ms);
	}
	/* jrcxz reaches 127 bytes: through jumps to the far paths */
	xl_emit_branch_to(&c->e, MN(JMP), &go);
	xl_emit_bind(&c->e, &to_sr);
	xl_emit_branch_to(&c->e, MN(JMP), &sr->at);
	xl_emit_bind(&c->e, &to_cl);
	xl_emit_branch_to(&c->e, MN(JMP), &cl->at);
	xl_emit_bind(&c->e, &to_ms);
	xl_emit_branch_to(&c->e, MN(JMP), &ms->at);
	xl_emit_bind(&c->e, &go);
	xl_emit_bind(&c->e, &sys);
	xl_memo0(&c->e, MN(SYSCALL));
	c->e.st = (struct xl_state){.kind = XL_ST_SYSRET, .pc = f};
	xb_mov_imm(c, ZYDIS_REGISTER_RCX, f);
	xl_emit_bind(&c->e, &after);
	xb_clean(c, f);
	sr->pc = a;
	sr->back = sys.off;
	cl->pc = a;
	cl->pc2 = f;
	cl->back = after.off;
	ms->pc = a;
	ms->pc2 = f;
	ms->back = after.off;
}

/* An instruction that cannot be translated: the agent hands the thread
 * back (staprun's fallback). */
void xb_do_bad(struct tctx *c, const struct xl_insn *in)
{
	xb_save_rax_rcx(c, in->pc);
	xb_mov_imm(c, ZYDIS_REGISTER_RAX, in->pc);
	xb_to_slot(c, XL_CTL_NATIVE_PC, ZYDIS_REGISTER_RAX);
	xl_memo1(&c->e, MN(JMP), xb_entry(c, XL_E_FALLBACK));
}

static void do_copy(struct tctx *c, const struct xl_insn *in)
{
	uint8_t b[16];

	xb_clean(c, in->pc);
	if (xl_relocate(in, xl_emit_here(&c->e), b) < 0) {
		c->e.err = -ERANGE;
		c->why = "a rip-relative operand out of reach of the cache";
		return;
	}
	xl_emit_bytes(&c->e, b, in->len);
}

/* ---- the rarely run code ---- */

static void cold_full(struct tctx *c, struct cold *k)
{
	xb_mid(c, k->pc, k->pc_src, ALL3, 0);
	xb_from_slot(c, ZYDIS_REGISTER_RDX, XL_CTL_S_RDX);
	xb_mid(c, k->pc, k->pc_src, RAXRCX, 0);
	if (k->pc_src == XL_PC_FROM)
		xb_from_slot(c, ZYDIS_REGISTER_RCX, XL_CTL_S_FROM);
	else
		xb_mov_imm(c, ZYDIS_REGISTER_RCX, k->pc);
	xb_to_slot(c, XL_CTL_NATIVE_PC, ZYDIS_REGISTER_RCX);
	lea_off(c, ZYDIS_REGISTER_RCX, k->back);
	xb_to_slot(c, XL_CTL_RETRY, ZYDIS_REGISTER_RCX);
	xl_memo1(&c->e, MN(JMP), xb_entry(c, XL_E_FULL));
}

/* A direct exit's miss stub (at least 14 bytes: it becomes a far
 * trampoline when its target is out of rel32 reach; unlinking emits it
 * again, the same bytes). */
void xl_emit_miss_stub(struct xl_emit *e, uint64_t ctl, uint64_t target)
{
	xl_st_clean(e, target);
	xl_memo2(e, MN(MOV), xl_abs(ctl + XL_CTL_S_RAX, 8), REG(RAX));
	xl_st_mid(e, target, XL_PC_CONST, XL_SAVED_RAX, 0);
	xl_memo2(e, MN(MOV), xl_abs(ctl + XL_CTL_S_RCX, 8), REG(RCX));
	xl_st_mid(e, target, XL_PC_CONST, RAXRCX, 0);
	xl_memo2(e, MN(MOV), REG(RAX), xl_imm((int64_t)target));
	xl_memo2(e, MN(MOV), xl_abs(ctl + XL_CTL_NATIVE_PC, 8), REG(RAX));
	xl_memo1(e, MN(JMP), xl_abs(ctl + XL_CTL_ENTRY + 8 * XL_E_MISS_DIRECT, 8));
}

static void cold_exit(struct tctx *c, struct cold *k)
{
	c->ex[k->exit].stub = (uint32_t)c->e.len;
	xl_emit_miss_stub(&c->e, c->ctl, k->pc);
}

/* pc: the syscall; pc2: the native next pc. */
static void cold_clone(struct tctx *c, struct cold *k)
{
	struct xl_label child = {-1}, after = {k->back};

	xb_mid(c, k->pc, XL_PC_CONST, XL_SAVED_RCX, 0);
	xl_memo0(&c->e, MN(SYSCALL));
	c->e.st = (struct xl_state){.kind = XL_ST_SYSRET, .pc = k->pc2};
	xl_memo2(&c->e, MN(MOV), REG(RCX), REG(RAX));
	xl_emit_branch_to(&c->e, MN(JRCXZ), &child);
	xb_mov_imm(c, ZYDIS_REGISTER_RCX, k->pc2);
	xb_clean(c, k->pc2);
	xl_emit_branch_to(&c->e, MN(JMP), &after);
	/* the child: native at once, reading nothing of ours */
	xl_emit_bind(&c->e, &child);
	c->e.st = (struct xl_state){.kind = XL_ST_SYSRET, .pc = k->pc2};
	xb_mov_imm(c, ZYDIS_REGISTER_RCX, k->pc2);
	xb_clean(c, k->pc2);
	xl_memo1(&c->e, MN(JMP), REG(RCX));
}

/* pc: the syscall; pc2: the native next pc; back: there in the block. The
 * agent goes on at back (rcx = pc2 restored) or where staprun says. */
static void cold_memsys(struct tctx *c, struct cold *k)
{
	xb_mid(c, k->pc, XL_PC_CONST, XL_SAVED_RCX, 0);
	xb_to_slot(c, XL_CTL_S_TGT, ZYDIS_REGISTER_RAX);
	xl_memo0(&c->e, MN(SYSCALL));
	c->e.st = (struct xl_state){.kind = XL_ST_SYSRET, .pc = k->pc2};
	xb_mov_imm(c, ZYDIS_REGISTER_RCX, k->pc2);
	xb_save_rax_rcx(c, k->pc2);
	lea_off(c, ZYDIS_REGISTER_RCX, k->back);
	xb_to_slot(c, XL_CTL_RETRY, ZYDIS_REGISTER_RCX);
	xb_mov_imm(c, ZYDIS_REGISTER_RCX, k->pc2);
	xb_to_slot(c, XL_CTL_NATIVE_PC, ZYDIS_REGISTER_RCX);
	xl_memo1(&c->e, MN(JMP), xb_entry(c, XL_E_MEMSYS));
}

/* pc: the syscall. */
static void cold_sigret(struct tctx *c, struct cold *k)
{
	xb_mid(c, k->pc, XL_PC_CONST, XL_SAVED_RCX, 0);
	xb_to_slot(c, XL_CTL_S_RAX, ZYDIS_REGISTER_RAX);
	xb_mid(c, k->pc, XL_PC_CONST, RAXRCX, 0);
	xb_mov_imm(c, ZYDIS_REGISTER_RCX, k->pc);
	xb_to_slot(c, XL_CTL_NATIVE_PC, ZYDIS_REGISTER_RCX);
	xl_memo1(&c->e, MN(JMP), xb_entry(c, XL_E_SIGRETURN));
}

/* A conditional jump into another function, taken: rolls back to the jcc
 * (pc), goes on at pc2. */
static void cold_xjump(struct tctx *c, struct cold *k)
{
	xjump(c, k->pc, k->pc2);
}

/* The jump entry's record (jump into this block from another function):
 * pc: the block's native start; the jump site is in s_from. */
static void cold_jrec(struct tctx *c, struct cold *k, struct xl_label *ientry)
{
	struct xl_label start = {-1};

	xb_mid(c, 0, XL_PC_FROM, RAXRCX, 0);
	xl_emit_bind(&c->e, &start);
	xb_to_slot(c, XL_CTL_S_RDX, ZYDIS_REGISTER_RDX);
	xb_mid(c, 0, XL_PC_FROM, ALL3, 0);
	rec_reserve(c, &c->jentry, 0, XL_PC_FROM, XL_REC_JUMP);
	rec_write(c, XL_REC_JUMP, SRC_FROM, 0, SRC_IMM, k->pc, 0);
	rec_commit(c, XL_REC_JUMP);
	xb_mid(c, k->pc, XL_PC_CONST, ALL3, 0);
	xb_from_slot(c, ZYDIS_REGISTER_RDX, XL_CTL_S_RDX);
	xb_mid(c, k->pc, XL_PC_CONST, RAXRCX, 0);
	xl_emit_branch_to(&c->e, MN(JMP), ientry);
}

static void emit_cold(struct tctx *c, struct xl_label *ientry)
{
	for (int i = 0; i < c->ncold && !c->e.err; i++) {
		struct cold *k = &c->cold[i];
		c->after_trap_pc = k->after_trap_pc;
		xl_emit_bind(&c->e, &k->at);
		switch (k->kind) {
		case C_FULL:
			cold_full(c, k);
			break;
		case C_EXIT:
			cold_exit(c, k);
			break;
		case C_CLONE:
			cold_clone(c, k);
			break;
		case C_SIGRET:
			cold_sigret(c, k);
			break;
		case C_MEMSYS:
			cold_memsys(c, k);
			break;
		case C_XJUMP:
			cold_xjump(c, k);
			break;
		case C_JREC:
			cold_jrec(c, k, ientry);
			break;
		case C_CHECK:
			xl_emit_entry_check(c);
			break;
		default:
			xl_rseq_cold(c, k);
			break;
		}
	}
}

/* ---- one block ---- */

/* jump entry: to ientry when the site's function is this one's, else
 * through the record; ientry: restores rax and rcx; then the body. */
static void prologue(struct tctx *c, uint64_t native, uint32_t fid, struct xl_label *ientry)
{
	struct cold *k = xb_cold_new(c, C_JREC);

	if (!k)
		return;
	k->pc = native;
	/* until the check, the jump may still need its record: a stop here
	 * goes back to the jump (in s_from) */
	xb_mid(c, 0, XL_PC_FROM, RAXRCX, 0);
	xl_emit_bind(&c->e, &c->jentry);
	xl_memo2(&c->e, MN(MOV), REG(ECX), xl_abs(c->ctl + XL_CTL_S_JFN, 4));
	xl_memo2(&c->e, MN(LEA), REG(RCX), xb_at(ZYDIS_REGISTER_RCX, -(int64_t)fid, 8));
	xl_emit_branch_to(&c->e, MN(JRCXZ), ientry);
	xl_emit_branch_to(&c->e, MN(JMP), &k->at);
	xl_emit_bind(&c->e, ientry);
	xb_mid(c, native, XL_PC_CONST, RAXRCX, 0);
	xb_from_slot(c, ZYDIS_REGISTER_RAX, XL_CTL_S_RAX);
	xb_mid(c, native, XL_PC_CONST, XL_SAVED_RCX, 0);
	xb_from_slot(c, ZYDIS_REGISTER_RCX, XL_CTL_S_RCX);
}

/* One instruction; returns 1 when the block ends after it. */
static int one(struct tctx *c, const struct xl_insn *in)
{
	switch (in->cls) {
	case XL_I_PLAIN:
		do_copy(c, in);
		return 0;
	case XL_I_SYSCALL:
		do_syscall(c, in);
		return 0;
	case XL_I_JMP:
		do_jmp(c, in);
		return 1;
	case XL_I_JCC:
		do_jcc(c, in);
		return 1;
	case XL_I_JCXZ:
		do_jcxz(c, in);
		return 1;
	case XL_I_CALL:
	case XL_I_CALL_IND:
		do_call(c, in);
		return 1;
	case XL_I_RET:
		do_ret(c, in);
		return 1;
	case XL_I_JMP_IND:
		do_jmp_ind(c, in);
		return 1;
	case XL_I_STOP:
		do_copy(c, in);
		xb_clean(c, in->pc + in->len);
		xb_exit_to(c, MN(JMP), in->pc + in->len);
		return 1;
	default:
		xb_do_bad(c, in);
		return 1;
	}
}

static int body(struct tctx *c, uint64_t native, uint64_t *end)
{
	struct _stp_pt_proc *p = _stp_pt_thread_proc(c->xt->t);
	uint64_t pc = native;

	for (int n = 0; !c->e.err; n++) {
		struct xl_insn in;
		int bk = _stp_pt_bkpt_at(p, pc);
		int full = n == XL_BLOCK_INSNS || (c->checked && pc + 15 > native + XL_CHECK_MAX);
		int sec = c->xt->rseq_on && xl_rseq_at(c->xt->xp, pc);
		if (n > 0 && (bk || full || sec)) {
			/* a probe, a critical section start their own block */
			xb_clean(c, pc);
			xb_exit_to(c, MN(JMP), pc);
			break;
		}
		if (bk) {
			c->e.st = (struct xl_state){.kind = XL_ST_TRAP, .pc = pc};
			xl_memo0(&c->e, MN(INT3));
			c->after_trap_pc = pc;
		}
		int rc = xl_read_insn(&c->xt->rd, pc, &in);
		if (rc == -EFAULT && n == 0) {
			c->why = "code that cannot be read";
			return -EFAULT;
		}
		if (rc == -EFAULT) { /* let the block that starts there fail */
			xb_clean(c, pc);
			xb_exit_to(c, MN(JMP), pc);
			break;
		}
		int end = one(c, &in);
		c->after_trap_pc = 0;
		if (!end && in.fs_store && c->xt->rseq_on && !c->checked) {
			xl_rseq_after_store(c, &in, pc + in.len); /* rseq_cs, maybe */
			end = 1;
		}
		pc += in.len;
		if (end)
			break;
	}
	*end = pc;
	return c->e.err;
}

/* The working state and the code buffer, kept from block to block (one
 * block is translated at a time per staprun thread): allocating and
 * zeroing 25 KiB per block cost more than some blocks' translation. */
static __thread struct tctx *tc_keep;
static __thread uint8_t *buf_keep;

int xl_block_translate(struct xl_thread *xt, struct xl_chunk *ch, uint64_t native,
		       struct xl_block **out, const char **why)
{
	struct tctx *c = tc_keep ? tc_keep : (tc_keep = malloc(sizeof *c));
	struct xl_label ientry = {-1};
	uint8_t *buf = buf_keep ? buf_keep : (buf_keep = malloc(XL_BLOCK_MAX));
	uint64_t start = (ch->addr + ch->used + 15) & ~15ull, end = native;
	struct xl_block *b = NULL;
	int rc = -ENOMEM;

	*why = NULL;
	*out = NULL;
	if (!c || !buf)
		return -ENOMEM;
	memset(c, 0, offsetof(struct tctx, cold));
	c->xt = xt;
	c->ctl = xl_ctl_addr(xt, 0);
	c->shadow = -1;
	c->jentry.off = -1;
	xl_emit_init(&c->e, buf, XL_BLOCK_MAX, start);
	uint32_t fid = xl_fid(xt, native);
	prologue(c, native, fid, &ientry);
	uint32_t body_off = (uint32_t)c->e.len;
	c->native = native;
	if ((c->checked = !xl_code_stable(xt, native))) {
		struct cold *k = xb_cold_new(c, C_CHECK);
		xl_reader_drop(&xt->rd); /* read what is there now */
		xb_clean(c, native);
		if (k)
			xl_emit_branch_to(&c->e, MN(JMP), &k->at);
		c->body_real = (int32_t)c->e.len;
	}
	const struct xl_rseq_sec *sec;
	if (!c->checked && xt->rseq_on && (sec = xl_rseq_at(xt->xp, native)) &&
	    sec->end > sec->start)
		xl_rseq_entry(c, sec);
	if ((rc = body(c, native, &end)) == 0) {
		c->native_end = end;
		if (c->checked && _stp_pt_read(xt->t, native, c->expect, end - native) < 0)
			rc = -EFAULT;
		if (rc == 0)
			emit_cold(c, &ientry);
		rc = rc ? rc : c->e.err;
	}
	if (rc == -ENOSPC && c->e.len + 64 > XL_BLOCK_MAX)
		*why = "a block too big";
	if (rc < 0) {
		if (!*why)
			*why = c->why ? c->why : "an encoding failure";
		goto out;
	}
	if (start + c->e.len > ch->addr + ch->size) {
		rc = -ENOSPC; /* the caller takes another chunk */
		goto out;
	}
	b = calloc(1, sizeof *b);
	if (!b) {
		rc = -ENOMEM;
		goto out;
	}
	memset(ch->mem + ch->used, 0xcc, (size_t)(start - ch->addr - ch->used));
	memcpy(ch->mem + (start - ch->addr), buf, c->e.len);
	ch->used = (size_t)(start - ch->addr) + c->e.len;
	b->native = native;
	b->native_end = end;
	b->cache = start;
	b->size = (uint32_t)c->e.len;
	b->jentry = (uint32_t)c->jentry.off;
	b->entry = (uint32_t)ientry.off;
	b->body = body_off;
	b->fid = fid;
	b->ends_call = c->ends_call;
	b->chunk = ch;
	b->an = c->e.an;
	b->nan = c->e.nan;
	c->e.an = NULL;
	b->ex = malloc((size_t)(c->nex ? c->nex : 1) * sizeof *b->ex);
	if (!b->ex) {
		free(b->an);
		free(b);
		b = NULL;
		rc = -ENOMEM;
		goto out;
	}
	memcpy(b->ex, c->ex, (size_t)c->nex * sizeof *b->ex);
	b->shadow = c->shadow;
	c->shadow = -1;
	b->copy_entry = c->entry_copy ? (uint32_t)c->entry_copy->at.off : 0;
	b->nex = (size_t)c->nex;
	for (size_t i = 0; i < b->nex; i++)
		b->ex[i].b = b;
	if ((b->checked = c->checked) && (b->orig = malloc(end - native)))
		memcpy(b->orig, c->expect, end - native);
	else if (b->checked)
		b->checked = 0; /* no memory: never seen as changed (rare) */
	rc = 0;
out:
	if (c->shadow >= 0)
		xl_rseq_release(xt, c->shadow);
	xl_emit_fini(&c->e);
	*out = b;
	return rc;
}
