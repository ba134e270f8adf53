/* The reader: the program's instructions from their original bytes (under
 * our breakpoints too), decoded by Zydis and sorted into the classes the
 * block translator has a rule for; and the relocator, which copies a
 * plain instruction to another address. */
#ifndef STP_XL_READER_H
#define STP_XL_READER_H

#include <stddef.h>
#include <stdint.h>

#include <Zydis/Zydis.h>

enum xl_cls {
	XL_I_PLAIN,    /* copied (a rip-relative displacement re-computed) */
	XL_I_JMP,      /* jmp rel8/rel32 */
	XL_I_JCC,      /* jcc rel8/rel32 */
	XL_I_JCXZ,     /* jrcxz, jecxz, loop, loope, loopne (rel8 only) */
	XL_I_CALL,     /* call rel32 */
	XL_I_CALL_IND, /* call r/m64 */
	XL_I_JMP_IND,  /* jmp r/m64 */
	XL_I_RET,      /* ret, ret imm16 */
	XL_I_SYSCALL,  /* syscall */
	XL_I_STOP,     /* copied, and the block ends after it: int3, int n,
			* ud2, hlt, ... (the stop it causes maps to native) */
	XL_I_BAD,      /* not translated: the thread falls back */
};

struct xl_insn {
	uint64_t pc;
	uint8_t len;
	uint8_t cls;	  /* enum xl_cls */
	uint8_t disp_off; /* a rip-relative disp32's offset in bytes, 0: none */
	uint16_t ret_imm; /* ret imm16 */
	uint8_t bytes[16];
	uint64_t target;   /* relative branches: their target */
	uint64_t rip_addr; /* a rip-relative operand's address */
	ZydisMnemonic mn;
	/* the indirect branches' operand */
	ZydisDecodedOperand op;
	uint64_t segment_attr;	    /* ZYDIS_ATTRIB_HAS_SEGMENT_FS/GS, else 0 */
	uint8_t fs_store;	    /* writes memory at fs: (thread data: rseq_cs too) */
	ZydisDecodedOperand fs_mem; /* fs_store: the memory operand */
	ZydisRegister fs_src;	    /* a mov of this register there, or NONE */
	const char *why;	    /* XL_I_BAD: why */
};

/* Reads original program bytes: 0, or -EFAULT. */
typedef int (*xl_read_fn)(void *ctx, uint64_t addr, void *buf, size_t len);

struct xl_reader {
	xl_read_fn read;
	void *ctx;
	uint64_t win_lo; /* a window of code bytes read ahead */
	size_t win_len;
	uint8_t win[512];
	ZydisDecoder dec;
};

void xl_reader_init(struct xl_reader *r, xl_read_fn read, void *ctx);
/* Forget what was read (code changed). */
void xl_reader_drop(struct xl_reader *r);
/* Decode the instruction at pc. 0, -EFAULT (not readable), -EINVAL
 * (not an instruction: cls XL_I_BAD with len 0). */
int xl_read_insn(struct xl_reader *r, uint64_t pc, struct xl_insn *in);

/* Copy `in` to run at new_pc: into out (in->len bytes). -ERANGE when a
 * rip-relative operand is out of reach from there. */
int xl_relocate(const struct xl_insn *in, uint64_t new_pc, uint8_t *out);

#endif
