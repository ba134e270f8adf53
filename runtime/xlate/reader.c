/* The reader and the relocator (reader.h). */
#include "xlate/reader.h"

#include <errno.h>
#include <string.h>

void xl_reader_init(struct xl_reader *r, xl_read_fn read, void *ctx)
{
	memset(r, 0, sizeof *r);
	r->read = read;
	r->ctx = ctx;
	ZydisDecoderInit(&r->dec, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64);
}

void xl_reader_drop(struct xl_reader *r)
{
	r->win_len = 0;
}

/* Up to 15 bytes at pc, through the window; fewer at the end of readable
 * memory. Returns the count (0: nothing readable). */
static size_t fetch(struct xl_reader *r, uint64_t pc, uint8_t *out)
{
	if (pc < r->win_lo || pc + 15 > r->win_lo + r->win_len) {
		r->win_len = 0;
		r->win_lo = pc;
		/* the window may end at a page boundary: try shorter */
		for (size_t n = sizeof r->win; n >= 16; n /= 2) {
			if (r->read(r->ctx, pc, r->win, n) == 0) {
				r->win_len = n;
				break;
			}
		}
		if (!r->win_len) {
			uint64_t page_end = (pc | 4095) + 1;
			size_t n = (size_t)(page_end - pc);
			if (n < 15 && r->read(r->ctx, pc, r->win, n) == 0)
				r->win_len = n;
		}
	}
	size_t avail = r->win_len - (size_t)(pc - r->win_lo);
	if (!r->win_len || pc < r->win_lo)
		return 0;
	if (avail > 15)
		avail = 15;
	memcpy(out, r->win + (pc - r->win_lo), avail);
	return avail;
}

static int is_jcc(ZydisMnemonic m)
{
	switch (m) {
	case ZYDIS_MNEMONIC_JB:
	case ZYDIS_MNEMONIC_JBE:
	case ZYDIS_MNEMONIC_JL:
	case ZYDIS_MNEMONIC_JLE:
	case ZYDIS_MNEMONIC_JNB:
	case ZYDIS_MNEMONIC_JNBE:
	case ZYDIS_MNEMONIC_JNL:
	case ZYDIS_MNEMONIC_JNLE:
	case ZYDIS_MNEMONIC_JNO:
	case ZYDIS_MNEMONIC_JNP:
	case ZYDIS_MNEMONIC_JNS:
	case ZYDIS_MNEMONIC_JNZ:
	case ZYDIS_MNEMONIC_JO:
	case ZYDIS_MNEMONIC_JP:
	case ZYDIS_MNEMONIC_JS:
	case ZYDIS_MNEMONIC_JZ:
		return 1;
	default:
		return 0;
	}
}

/* Instructions after which the block ends, copied as they are. */
static int is_stop(ZydisMnemonic m)
{
	switch (m) {
	case ZYDIS_MNEMONIC_INT3:
	case ZYDIS_MNEMONIC_INT:
	case ZYDIS_MNEMONIC_INT1:
	case ZYDIS_MNEMONIC_INTO:
	case ZYDIS_MNEMONIC_UD0:
	case ZYDIS_MNEMONIC_UD1:
	case ZYDIS_MNEMONIC_UD2:
	case ZYDIS_MNEMONIC_HLT:
		return 1;
	default:
		return 0;
	}
}

/* Instructions that change the flow in ways the rules do not cover. */
static const char *bad_reason(const ZydisDecodedInstruction *zi)
{
	switch (zi->mnemonic) {
	case ZYDIS_MNEMONIC_SYSENTER:
	case ZYDIS_MNEMONIC_SYSEXIT:
	case ZYDIS_MNEMONIC_SYSRET:
	case ZYDIS_MNEMONIC_IRET:
	case ZYDIS_MNEMONIC_IRETD:
	case ZYDIS_MNEMONIC_IRETQ:
		return "a privileged return";
	case ZYDIS_MNEMONIC_XBEGIN:
		return "a transaction (xbegin)";
	default:
		break;
	}
	if (zi->meta.branch_type == ZYDIS_BRANCH_TYPE_FAR)
		return "a far branch";
	return NULL;
}

static void classify(struct xl_insn *in, const ZydisDecodedInstruction *zi,
		     const ZydisDecodedOperand *ops)
{
	const char *bad = bad_reason(zi);

	in->mn = zi->mnemonic;
	in->cls = XL_I_PLAIN;
	if (bad) {
		in->cls = XL_I_BAD;
		in->why = bad;
		return;
	}
	if (zi->attributes & ZYDIS_ATTRIB_IS_RELATIVE) {
		for (int i = 0; i < zi->operand_count_visible; i++) {
			if (ops[i].type == ZYDIS_OPERAND_TYPE_IMMEDIATE && ops[i].imm.is_relative)
				in->target = in->pc + in->len + (uint64_t)ops[i].imm.value.s;
			if (ops[i].type == ZYDIS_OPERAND_TYPE_MEMORY &&
			    ops[i].mem.base == ZYDIS_REGISTER_RIP) {
				in->rip_addr = in->pc + in->len + (uint64_t)ops[i].mem.disp.value;
				in->disp_off = zi->raw.disp.offset;
			}
		}
	}
	switch (zi->mnemonic) {
	case ZYDIS_MNEMONIC_JMP:
	case ZYDIS_MNEMONIC_CALL: {
		int call = zi->mnemonic == ZYDIS_MNEMONIC_CALL;
		if (ops[0].type == ZYDIS_OPERAND_TYPE_IMMEDIATE) {
			in->cls = call ? XL_I_CALL : XL_I_JMP;
			return;
		}
		in->cls = call ? XL_I_CALL_IND : XL_I_JMP_IND;
		in->op = ops[0];
		if (zi->attributes & ZYDIS_ATTRIB_HAS_SEGMENT_FS)
			in->segment_attr = ZYDIS_ATTRIB_HAS_SEGMENT_FS;
		if (zi->attributes & ZYDIS_ATTRIB_HAS_SEGMENT_GS)
			in->segment_attr = ZYDIS_ATTRIB_HAS_SEGMENT_GS;
		if (zi->operand_width != 64) {
			in->cls = XL_I_BAD;
			in->why = "an indirect branch of another width";
		}
		return;
	}
	case ZYDIS_MNEMONIC_RET:
		in->cls = XL_I_RET;
		if (zi->operand_count_visible > 0 && ops[0].type == ZYDIS_OPERAND_TYPE_IMMEDIATE)
			in->ret_imm = (uint16_t)ops[0].imm.value.u;
		if (zi->operand_width != 64) {
			in->cls = XL_I_BAD;
			in->why = "a ret of another width";
		}
		return;
	case ZYDIS_MNEMONIC_JRCXZ:
	case ZYDIS_MNEMONIC_JECXZ:
	case ZYDIS_MNEMONIC_LOOP:
	case ZYDIS_MNEMONIC_LOOPE:
	case ZYDIS_MNEMONIC_LOOPNE:
		in->cls = XL_I_JCXZ;
		return;
	case ZYDIS_MNEMONIC_SYSCALL:
		in->cls = XL_I_SYSCALL;
		return;
	default:
		break;
	}
	if (is_jcc(zi->mnemonic))
		in->cls = XL_I_JCC;
	else if (is_stop(zi->mnemonic))
		in->cls = XL_I_STOP;
	else if (zi->meta.category == ZYDIS_CATEGORY_COND_BR ||
		 zi->meta.category == ZYDIS_CATEGORY_UNCOND_BR ||
		 zi->meta.category == ZYDIS_CATEGORY_CALL ||
		 zi->meta.category == ZYDIS_CATEGORY_RET) {
		in->cls = XL_I_BAD;
		in->why = "a branch the translator does not know";
	}
}

int xl_read_insn(struct xl_reader *r, uint64_t pc, struct xl_insn *in)
{
	ZydisDecodedInstruction zi;
	ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];
	uint8_t b[16];
	size_t n;

	memset(in, 0, sizeof *in);
	in->pc = pc;
	if (!(n = fetch(r, pc, b)))
		return -EFAULT;
	if (!ZYAN_SUCCESS(ZydisDecoderDecodeFull(&r->dec, b, n, &zi, ops))) {
		in->cls = XL_I_BAD;
		in->why = "an instruction the decoder does not know";
		return -EINVAL;
	}
	in->len = zi.length;
	memcpy(in->bytes, b, zi.length);
	classify(in, &zi, ops);
	for (int i = 0; i < zi.operand_count; i++)
		if (ops[i].type == ZYDIS_OPERAND_TYPE_MEMORY &&
		    ops[i].mem.segment == ZYDIS_REGISTER_FS &&
		    (ops[i].actions & ZYDIS_OPERAND_ACTION_MASK_WRITE)) {
			in->fs_store = 1;
			in->fs_mem = ops[i];
		}
	/* mov r64 to fs:[base + index * scale + disp]: rseq.c sees what it
	 * stores and where without reading memory again */
	if (in->fs_store && zi.mnemonic == ZYDIS_MNEMONIC_MOV && zi.operand_count_visible == 2 &&
	    ops[0].type == ZYDIS_OPERAND_TYPE_MEMORY && ops[0].size == 64 &&
	    ops[0].mem.base != ZYDIS_REGISTER_RIP && ops[1].type == ZYDIS_OPERAND_TYPE_REGISTER &&
	    ZydisRegisterGetClass(ops[1].reg.value) == ZYDIS_REGCLASS_GPR64)
		in->fs_src = ops[1].reg.value;
	return 0;
}

int xl_relocate(const struct xl_insn *in, uint64_t new_pc, uint8_t *out)
{
	memcpy(out, in->bytes, in->len);
	if (!in->disp_off)
		return 0;
	int64_t d = (int64_t)(in->rip_addr - (new_pc + in->len));
	if (d != (int32_t)d)
		return -ERANGE;
	int32_t d32 = (int32_t)d;
	memcpy(out + in->disp_off, &d32, 4);
	return 0;
}
