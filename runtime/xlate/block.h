/* The block translator's working state and helpers (block.c), shared
 * with the rules that live elsewhere (rseq.c). Inside runtime/xlate/. */
#ifndef STP_XL_BLOCK_H
#define STP_XL_BLOCK_H

#include "xlate/xl_internal.h"

#define REG(r) xl_reg(ZYDIS_REGISTER_##r)
#define MN(m) ZYDIS_MNEMONIC_##m
#define NONE ZYDIS_REGISTER_NONE
#define ALL3 (XL_SAVED_RAX | XL_SAVED_RCX | XL_SAVED_RDX)
#define RAXRCX (XL_SAVED_RAX | XL_SAVED_RCX)

#define XL_BLOCK_INSNS 48 /* native instructions per block, at most */
#define MAX_COLD 96
#define MAX_EXITS 16

/* Rarely run code, emitted after the block's main part. */
enum cold_kind {
	C_FULL,
	C_EXIT,
	C_CLONE,
	C_SIGRET,
	C_MEMSYS,
	C_JREC,
	C_XJUMP,
	C_CHECK,
	C_RSEQ,	    /* the copy of an active critical section (rseq.c) */
	C_RSEQ_CHK, /* rseq_cs set after a store at fs: (rseq.c) */
	C_RSEQ_OUT, /* a branch out of a section's copy (rseq.c) */
};

struct cold {
	int kind;
	uint64_t after_trap_pc;	       /* the instruction's (struct tctx) */
	struct xl_label at;	       /* where it starts */
	int32_t back;		       /* offset of where it goes back to: C_FULL: the
					* retry; C_CLONE, C_MEMSYS: after the syscall; C_SIGRET:
					* the syscall; C_RSEQ_CHK: the check's end (all
					* bound before cold code) */
	uint64_t pc, pc2;	       /* native pcs (see each kind) */
	int pc_src;		       /* C_FULL: where its native pc is */
	int exit;		       /* C_EXIT: the exit's index */
	const struct xl_rseq_sec *sec; /* C_RSEQ */
	ZydisRegister src;	       /* C_RSEQ_CHK: the stored register, or NONE */
};

struct tctx {
	struct xl_thread *xt;
	struct xl_emit e;
	uint64_t ctl;
	int ncold;
	int nex;
	struct xl_label jentry;
	uint64_t native, native_end;
	int checked;		 /* code that may change: compared at entry */
	int32_t body_real;	 /* checked: the body after the check's jump */
	uint64_t after_trap_pc;	 /* the instruction being translated follows
				  * the trap stub of a breakpoint there */
	int shadow;		 /* the rseq shadow descriptor taken, or -1 */
	struct cold *entry_copy; /* a section's copy at the block's start */
	const char *why;
	int ends_call; /* the block ends in a call */
	/* from here on not zeroed per block: each entry is set when taken */
	struct cold cold[MAX_COLD];
	struct xl_exit ex[MAX_EXITS];
	uint8_t expect[XL_CHECK_MAX]; /* checked: its bytes, as in memory */
};

/* Operands: a control-block slot, an agent entry's address, [base+disp]. */
ZydisEncoderOperand xb_slot(struct tctx *c, unsigned off);
ZydisEncoderOperand xb_entry(struct tctx *c, int k);
ZydisEncoderOperand xb_at(ZydisRegister base, int64_t disp, uint16_t size);
void xb_to_slot(struct tctx *c, unsigned off, ZydisRegister r);
void xb_from_slot(struct tctx *c, ZydisRegister r, unsigned off);
void xb_mov_imm(struct tctx *c, ZydisRegister r, uint64_t v);
/* The state of the next instructions (emit.h). */
void xb_clean(struct tctx *c, uint64_t pc);
void xb_mid(struct tctx *c, uint64_t pc, int src, int saved, int adj);
/* rax and rcx to their slots, for the instruction at pc (clean before). */
void xb_save_rax_rcx(struct tctx *c, uint64_t pc);
struct cold *xb_cold_new(struct tctx *c, int kind);
/* A branch to another block (its miss stub until linked). */
void xb_exit_to(struct tctx *c, ZydisMnemonic mn, uint64_t target);
/* The thread leaves the cache at in->pc (the core's fallback). */
void xb_do_bad(struct tctx *c, const struct xl_insn *in);

/* mem.c: a checked block's entry check (C_CHECK). */
void xl_emit_entry_check(struct tctx *c);

/* rseq.c: the rules of restartable sequences. */
/* After a store at fs: (pc: the next instruction): the block ends with a
 * check of rseq_cs. */
void xl_rseq_after_store(struct tctx *c, const struct xl_insn *in, uint64_t next);
/* At the start of section s: its copy when s's descriptor is active. */
void xl_rseq_entry(struct tctx *c, const struct xl_rseq_sec *s);
void xl_rseq_cold(struct tctx *c, struct cold *k);

#endif
