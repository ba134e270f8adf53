/* The emitter: instructions for the code cache, encoded by Zydis's
 * encoder at their final address (so relative branches and rip-relative
 * operands are computed by Zydis), with labels for branches inside a
 * block and, for every instruction, the state a stop just before it maps
 * to (sigmap.c). The only bytes written by hand are the copies of the
 * program's own instructions (reloc.c). */
#ifndef STP_XL_EMIT_H
#define STP_XL_EMIT_H

#include <stddef.h>
#include <stdint.h>

#include <Zydis/Zydis.h>

/* What a stop just before an instruction means in native terms. */
enum xl_st_kind {
	XL_ST_CLEAN,  /* native registers = cache registers; pc = native insn */
	XL_ST_MID,    /* inside instrumentation: apply the fields */
	XL_ST_SYSRET, /* just after the syscall: pc = native next, rcx = pc */
	XL_ST_TRAP,   /* a trap stub's int3 for the breakpoint at pc */
	XL_ST_RSEQ,   /* in the copy of an rseq critical section: aborted,
		       * pc = its abort handler (rseq.c) */
	XL_ST_EVENT,  /* an event trap's int3 before a record's commit
		       * (cfg.stop): otherwise as XL_ST_MID */
};
enum xl_pc_src {
	XL_PC_CONST, /* pc */
	XL_PC_TGT,   /* the control block's s_tgt (an indirect target) */
	XL_PC_FROM,  /* its s_from (an indirect jump's address) */
};
#define XL_SAVED_RAX 1
#define XL_SAVED_RCX 2
#define XL_SAVED_RDX 4

struct xl_state {
	uint8_t kind;	    /* enum xl_st_kind */
	uint8_t saved;	    /* XL_SAVED_*: the program's value is in its slot */
	uint8_t pc_src;	    /* enum xl_pc_src */
	uint8_t after_trap; /* the breakpoint at pc has trapped already */
	int16_t rsp_adj;    /* native rsp = rsp + rsp_adj */
	uint8_t skip;	    /* XL_ST_EVENT: bytes of the commit after the int3 */
	uint64_t pc;
};

struct xl_annot {
	uint32_t off; /* from the block's start */
	struct xl_state st;
};

struct xl_label {
	int32_t off; /* -1 until bound */
};

struct xl_fixup {
	uint32_t off;
	uint8_t len;
	ZydisMnemonic mn;
	struct xl_label *to;
};

struct xl_emit {
	uint8_t *buf;	    /* where the bytes go (staprun's view) */
	uint64_t pc;	    /* the target address of buf[0] */
	size_t len, cap;    /* bytes used, room */
	int err;	    /* sticky: -ENOSPC, -EINVAL (an encoding failed) */
	struct xl_state st; /* given to each instruction emitted next */
	struct xl_annot *an;
	size_t nan, capan;
	struct xl_fixup *fx;
	size_t nfx, capfx;
};

void xl_emit_init(struct xl_emit *e, uint8_t *buf, size_t cap, uint64_t pc);
void xl_emit_fini(struct xl_emit *e);
uint64_t xl_emit_here(const struct xl_emit *e);

/* Operands (inline: a block's translation makes some fifty). */
static inline ZydisEncoderOperand xl_reg(ZydisRegister r)
{
	return (ZydisEncoderOperand){.type = ZYDIS_OPERAND_TYPE_REGISTER, .reg.value = r};
}

static inline ZydisEncoderOperand xl_imm(int64_t v)
{
	return (ZydisEncoderOperand){.type = ZYDIS_OPERAND_TYPE_IMMEDIATE, .imm.s = v};
}

/* [base + index * scale + disp] of `size` bytes (ZYDIS_REGISTER_NONE for
 * none; no base and no index: a 32-bit absolute address). */
static inline ZydisEncoderOperand xl_mem(ZydisRegister base, ZydisRegister index, uint8_t scale,
					 int64_t disp, uint16_t size)
{
	return (ZydisEncoderOperand){.type = ZYDIS_OPERAND_TYPE_MEMORY,
				     .mem = {.base = base,
					     .index = index,
					     .scale = index == ZYDIS_REGISTER_NONE ? 0 : scale,
					     .displacement = disp,
					     .size = size}};
}

static inline ZydisEncoderOperand xl_abs(uint64_t addr, uint16_t size)
{
	return xl_mem(ZYDIS_REGISTER_NONE, ZYDIS_REGISTER_NONE, 0, (int64_t)addr, size);
}

/* One instruction. Returns 0 or the sticky error. */
int xl_emit_op(struct xl_emit *e, ZydisMnemonic mn, int nops, const ZydisEncoderOperand *ops);
/* The same with prefixes (ZYDIS_ATTRIB_HAS_SEGMENT_FS: an fs: operand). */
int xl_emit_seg(struct xl_emit *e, uint64_t prefixes, ZydisMnemonic mn, int nops,
		const ZydisEncoderOperand *ops);
int xl_emit0(struct xl_emit *e, ZydisMnemonic mn);
int xl_emit1(struct xl_emit *e, ZydisMnemonic mn, ZydisEncoderOperand a);
int xl_emit2(struct xl_emit *e, ZydisMnemonic mn, ZydisEncoderOperand a, ZydisEncoderOperand b);
/* A relative branch (jmp, jcc, call: rel32; jrcxz, loop: rel8) to an
 * absolute target, or to a label (bound later or already). */
int xl_emit_branch(struct xl_emit *e, ZydisMnemonic mn, uint64_t target);
int xl_emit_branch_to(struct xl_emit *e, ZydisMnemonic mn, struct xl_label *l);
void xl_emit_bind(struct xl_emit *e, struct xl_label *l);
/* Room for one instruction of n bytes, annotated as put does: where the
 * caller writes them (NULL: the sticky error, set when out of room). */
uint8_t *xl_emit_reserve(struct xl_emit *e, size_t n);
/* Bytes of a program instruction, copied (already relocated). */
int xl_emit_bytes(struct xl_emit *e, const uint8_t *b, size_t n);
/* A 64-bit literal (8-byte aligned), e.g. for jmp [rip+lit]; returns its
 * offset from the block's start, or -1. */
long xl_emit_quad(struct xl_emit *e, uint64_t v);

/* Encode again the branch mn of len bytes at code (target address at_pc)
 * to go to target (linking blocks). 0, or -ERANGE (out of reach). */
int xl_emit_branch_to_at(uint8_t *code, size_t len, ZydisMnemonic mn, uint64_t at_pc,
			 uint64_t target);

/* Helpers for the state of the next instructions. */
void xl_st_clean(struct xl_emit *e, uint64_t pc);
void xl_st_mid(struct xl_emit *e, uint64_t pc, int pc_src, int saved, int rsp_adj);

#endif
