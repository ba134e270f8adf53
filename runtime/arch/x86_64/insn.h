/* x86-64 instruction decoding for the ptrace engine (libZydis): what a
 * probed instruction is, emulating the common ones in the tracer, and
 * preparing the others to run out of line in a scratch slot. */
#ifndef STP_X86_INSN_H
#define STP_X86_INSN_H

#include <stddef.h>
#include <stdint.h>
#include <sys/user.h>

/* How a displaced instruction is executed. */
enum _stp_x86_kind {
	STP_X86_OOL,	   /* copy to a scratch slot and single-step it */
	STP_X86_REJECT,	   /* neither: a probe here cannot be handled */
	STP_X86_NOP,	   /* nop, endbr64, ... */
	STP_X86_PUSH,	   /* push r64 / push imm */
	STP_X86_POP,	   /* pop r64 */
	STP_X86_MOV_RR,	   /* mov r64/r32, r64/r32 */
	STP_X86_MOV_RI,	   /* mov r64/r32, imm */
	STP_X86_LEA,	   /* lea r64/r32, mem */
	STP_X86_ADDSUB_RI, /* add/sub r64/r32, imm (flags computed) */
	STP_X86_XOR_SELF,  /* xor r, r (zeroing) */
	STP_X86_CALL,	   /* call rel32 */
	STP_X86_CALL_IND,  /* call r64 / call [mem] */
	STP_X86_JMP,	   /* jmp rel */
	STP_X86_JMP_IND,   /* jmp r64 / jmp [mem] */
	STP_X86_JCC,	   /* jcc rel */
	STP_X86_RET,	   /* ret / ret imm16 */
	STP_X86_PUSHF,	   /* pushfq */
	STP_X86_POPF,	   /* popfq (what user mode may change) */
};

/* A memory operand: base/index are register numbers (0-15, -1 none,
 * STP_X86_RIP for RIP-relative), seg 0 / 'f' / 'g'. */
#define STP_X86_RIP 16
struct _stp_x86_mem {
	int8_t base, index;
	uint8_t scale;
	char seg;
	int64_t disp;
};

struct _stp_x86_insn {
	uint8_t bytes[16];
	uint8_t len;
	uint8_t kind;	  /* enum _stp_x86_kind */
	uint8_t width;	  /* operand width in bytes (4 or 8) */
	int8_t dst, src;  /* register numbers 0-15 (rax, rcx, rdx, rbx, rsp,
			   * rbp, rsi, rdi, r8-r15), -1 when none */
	uint8_t cond;	  /* jcc condition code (low nibble of the opcode) */
	uint8_t is_sub;	  /* ADDSUB: 1 for sub */
	uint8_t has_mem;  /* operand `mem` is used */
	uint8_t disp_off; /* OOL: offset of a RIP-relative disp32, 0 if none */
	int64_t imm;	  /* immediate, sign-extended where the insn does */
	uint64_t target;  /* relative branches: absolute target */
	struct _stp_x86_mem mem;
	char text[64]; /* disassembly, for messages */
};

/* Memory access for emulation (the engine's read/write of the target). */
struct _stp_x86_mem_ops {
	int (*read)(void *ctx, uint64_t addr, void *buf, size_t n);
	int (*write)(void *ctx, uint64_t addr, const void *buf, size_t n);
	void *ctx;
};

/* Decode the instruction at `addr` from its original bytes (n >= 1, up to
 * 15 used). Returns 0, or -EINVAL if the bytes are not an instruction. */
int _stp_x86_decode(const uint8_t *buf, size_t n, uint64_t addr, struct _stp_x86_insn *in);

/* Execute `in` (which was at `addr`) on regs r. Returns 1 when done (r
 * updated, memory written), 0 if the kind is not emulated, -EFAULT if a
 * memory access faulted (nothing changed: run it for real instead). */
int _stp_x86_emulate(const struct _stp_x86_insn *in, uint64_t addr, struct user_regs_struct *r,
		     const struct _stp_x86_mem_ops *m);

/* The bytes to place at scratch address `slot` so that running them there
 * does what `in` does at `addr` (RIP-relative displacement adjusted).
 * Returns the length, or -ERANGE when the slot is out of reach (beyond
 * +-2 GiB of a RIP-relative target). */
int _stp_x86_ool_bytes(const struct _stp_x86_insn *in, uint64_t addr, uint64_t slot,
		       uint8_t out[16]);

/* Register number n (0-15) of r. */
uint64_t *_stp_x86_reg(struct user_regs_struct *r, int n);

#endif
