/* x86-64 decoding (libZydis), emulation of common probed instructions and
 * out-of-line preparation for the ptrace engine.
 *
 * Emulated: what function entries and return sites usually start with
 * (endbr64, nops, push, pop, mov, lea, add/sub imm, xor-zeroing) and every
 * relative or indirect call/jump/ret, so a branch never has to run out of
 * line (its result would depend on where it runs). Everything else runs
 * out of line; instructions whose meaning depends on their address other
 * than through a RIP-relative memory operand are rejected. */
#include "insn.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <Zydis/Zydis.h>

enum { CF = 1 << 0, PF = 1 << 2, AF = 1 << 4, ZF = 1 << 6, SF = 1 << 7, OF = 1 << 11 };
/* popfq in user mode: CF PF AF ZF SF TF DF OF NT AC ID; IF and IOPL
 * stay; pushfq stores RF and VM as 0 */
#define EFLAGS_POPF 0x244dd5u
#define EFLAGS_RF 0x10000u
#define EFLAGS_VM 0x20000u

uint64_t *_stp_x86_reg(struct user_regs_struct *r, int n)
{
	switch (n) {
	case 0:
		return (uint64_t *)&r->rax;
	case 1:
		return (uint64_t *)&r->rcx;
	case 2:
		return (uint64_t *)&r->rdx;
	case 3:
		return (uint64_t *)&r->rbx;
	case 4:
		return (uint64_t *)&r->rsp;
	case 5:
		return (uint64_t *)&r->rbp;
	case 6:
		return (uint64_t *)&r->rsi;
	case 7:
		return (uint64_t *)&r->rdi;
	case 8:
		return (uint64_t *)&r->r8;
	case 9:
		return (uint64_t *)&r->r9;
	case 10:
		return (uint64_t *)&r->r10;
	case 11:
		return (uint64_t *)&r->r11;
	case 12:
		return (uint64_t *)&r->r12;
	case 13:
		return (uint64_t *)&r->r13;
	case 14:
		return (uint64_t *)&r->r14;
	case 15:
		return (uint64_t *)&r->r15;
	}
	return NULL;
}

/* Our number of a Zydis general-purpose register of 32 or 64 bits; -1 for
 * anything else (8/16-bit registers are left to out-of-line execution). */
static int gpr(ZydisRegister reg, int *width)
{
	static const ZydisRegister r64[16] = {
	    ZYDIS_REGISTER_RAX, ZYDIS_REGISTER_RCX, ZYDIS_REGISTER_RDX, ZYDIS_REGISTER_RBX,
	    ZYDIS_REGISTER_RSP, ZYDIS_REGISTER_RBP, ZYDIS_REGISTER_RSI, ZYDIS_REGISTER_RDI,
	    ZYDIS_REGISTER_R8,	ZYDIS_REGISTER_R9,  ZYDIS_REGISTER_R10, ZYDIS_REGISTER_R11,
	    ZYDIS_REGISTER_R12, ZYDIS_REGISTER_R13, ZYDIS_REGISTER_R14, ZYDIS_REGISTER_R15,
	};
	int w = ZydisRegisterGetWidth(ZYDIS_MACHINE_MODE_LONG_64, reg);
	ZydisRegister big = ZydisRegisterGetLargestEnclosing(ZYDIS_MACHINE_MODE_LONG_64, reg);

	if (w != 32 && w != 64)
		return -1;
	for (int i = 0; i < 16; i++) {
		if (r64[i] == big) {
			if (width)
				*width = w / 8;
			return i;
		}
	}
	return -1;
}

/* A memory operand in our form; -1 if it uses registers we do not model. */
static int mem_of(const ZydisDecodedOperand *op, struct _stp_x86_mem *m)
{
	m->base = m->index = -1;
	m->scale = op->mem.scale;
	m->disp = op->mem.disp.has_displacement ? op->mem.disp.value : 0;
	m->seg = 0;
	if (op->mem.segment == ZYDIS_REGISTER_FS)
		m->seg = 'f';
	else if (op->mem.segment == ZYDIS_REGISTER_GS)
		m->seg = 'g';
	if (op->mem.base == ZYDIS_REGISTER_RIP)
		m->base = STP_X86_RIP;
	else if (op->mem.base != ZYDIS_REGISTER_NONE && (m->base = gpr(op->mem.base, NULL)) < 0)
		return -1;
	if (op->mem.index != ZYDIS_REGISTER_NONE && (m->index = gpr(op->mem.index, NULL)) < 0)
		return -1;
	if ((op->mem.base != ZYDIS_REGISTER_NONE &&
	     ZydisRegisterGetWidth(ZYDIS_MACHINE_MODE_LONG_64, op->mem.base) != 64) ||
	    (op->mem.index != ZYDIS_REGISTER_NONE &&
	     ZydisRegisterGetWidth(ZYDIS_MACHINE_MODE_LONG_64, op->mem.index) != 64))
		return -1; /* 32-bit addressing: rare, run it out of line */
	return 0;
}

static int is_reg(const ZydisDecodedOperand *op)
{
	return op->type == ZYDIS_OPERAND_TYPE_REGISTER;
}

static void classify_emulated(struct _stp_x86_insn *in, const ZydisDecodedInstruction *d,
			      const ZydisDecodedOperand *ops, uint64_t addr)
{
	int nv = d->operand_count_visible, w = 0, w2 = 0;

	in->kind = STP_X86_OOL;
	switch (d->mnemonic) {
	case ZYDIS_MNEMONIC_NOP:
	case ZYDIS_MNEMONIC_ENDBR64:
	case ZYDIS_MNEMONIC_ENDBR32:
		in->kind = STP_X86_NOP;
		return;
	case ZYDIS_MNEMONIC_PUSH:
		if (nv == 1 && is_reg(&ops[0]) && (in->src = gpr(ops[0].reg.value, &w)) >= 0 &&
		    w == 8) {
			in->kind = STP_X86_PUSH;
		} else if (nv == 1 && ops[0].type == ZYDIS_OPERAND_TYPE_IMMEDIATE &&
			   d->operand_width == 64) {
			in->kind = STP_X86_PUSH;
			in->src = -1;
			in->imm = ops[0].imm.value.s;
		}
		return;
	case ZYDIS_MNEMONIC_POP:
		if (nv == 1 && is_reg(&ops[0]) && (in->dst = gpr(ops[0].reg.value, &w)) >= 0 &&
		    w == 8)
			in->kind = STP_X86_POP;
		return;
	case ZYDIS_MNEMONIC_PUSHFQ:
		in->kind = STP_X86_PUSHF;
		return;
	case ZYDIS_MNEMONIC_POPFQ:
		in->kind = STP_X86_POPF;
		return;
	case ZYDIS_MNEMONIC_MOV:
		if (nv != 2 || !is_reg(&ops[0]) || (in->dst = gpr(ops[0].reg.value, &w)) < 0)
			return;
		in->width = (uint8_t)w;
		if (is_reg(&ops[1]) && (in->src = gpr(ops[1].reg.value, &w2)) >= 0 && w2 == w) {
			in->kind = STP_X86_MOV_RR;
		} else if (ops[1].type == ZYDIS_OPERAND_TYPE_IMMEDIATE) {
			in->kind = STP_X86_MOV_RI;
			in->imm =
			    ops[1].imm.is_signed ? ops[1].imm.value.s : (int64_t)ops[1].imm.value.u;
		}
		return;
	case ZYDIS_MNEMONIC_LEA:
		if (nv == 2 && is_reg(&ops[0]) && (in->dst = gpr(ops[0].reg.value, &w)) >= 0 &&
		    mem_of(&ops[1], &in->mem) == 0 && in->mem.seg == 0) {
			in->kind = STP_X86_LEA;
			in->width = (uint8_t)w;
		}
		return;
	case ZYDIS_MNEMONIC_ADD:
	case ZYDIS_MNEMONIC_SUB:
		if (nv == 2 && is_reg(&ops[0]) && (in->dst = gpr(ops[0].reg.value, &w)) >= 0 &&
		    ops[1].type == ZYDIS_OPERAND_TYPE_IMMEDIATE) {
			in->kind = STP_X86_ADDSUB_RI;
			in->width = (uint8_t)w;
			in->is_sub = d->mnemonic == ZYDIS_MNEMONIC_SUB;
			in->imm =
			    ops[1].imm.is_signed ? ops[1].imm.value.s : (int64_t)ops[1].imm.value.u;
		}
		return;
	case ZYDIS_MNEMONIC_XOR:
		if (nv == 2 && is_reg(&ops[0]) && is_reg(&ops[1]) &&
		    ops[0].reg.value == ops[1].reg.value &&
		    (in->dst = gpr(ops[0].reg.value, &w)) >= 0) {
			in->kind = STP_X86_XOR_SELF;
			in->width = (uint8_t)w;
		}
		return;
	case ZYDIS_MNEMONIC_CALL:
	case ZYDIS_MNEMONIC_JMP:
		in->kind = STP_X86_REJECT; /* far forms */
		if (ops[0].type == ZYDIS_OPERAND_TYPE_IMMEDIATE) {
			in->kind = d->mnemonic == ZYDIS_MNEMONIC_CALL ? STP_X86_CALL : STP_X86_JMP;
			in->target = addr + d->length + (uint64_t)ops[0].imm.value.s;
		} else if (is_reg(&ops[0]) && (in->src = gpr(ops[0].reg.value, &w)) >= 0 &&
			   w == 8) {
			in->kind =
			    d->mnemonic == ZYDIS_MNEMONIC_CALL ? STP_X86_CALL_IND : STP_X86_JMP_IND;
		} else if (ops[0].type == ZYDIS_OPERAND_TYPE_MEMORY && ops[0].size == 64 &&
			   mem_of(&ops[0], &in->mem) == 0) {
			in->kind =
			    d->mnemonic == ZYDIS_MNEMONIC_CALL ? STP_X86_CALL_IND : STP_X86_JMP_IND;
			in->has_mem = 1;
		}
		return;
	case ZYDIS_MNEMONIC_RET:
		in->kind = STP_X86_RET;
		in->imm = nv == 1 ? (int64_t)ops[0].imm.value.u : 0;
		return;
	default:
		break;
	}
}

/* What cannot be emulated runs out of line, if it can be moved. */
static void classify(struct _stp_x86_insn *in, const ZydisDecodedInstruction *d,
		     const ZydisDecodedOperand *ops, uint64_t addr)
{
	classify_emulated(in, d, ops, addr);
	if (in->kind != STP_X86_OOL)
		return;
	if (d->meta.category == ZYDIS_CATEGORY_COND_BR && d->opcode_map <= ZYDIS_OPCODE_MAP_0F &&
	    ((d->opcode & 0xf0) == 0x70 || (d->opcode & 0xf0) == 0x80) &&
	    ops[0].type == ZYDIS_OPERAND_TYPE_IMMEDIATE) {
		in->kind = STP_X86_JCC;
		in->cond = d->opcode & 0x0f;
		in->target = addr + d->length + (uint64_t)ops[0].imm.value.s;
		return;
	}
	/* Out of line: anything that branches or is relative otherwise than
	 * through a RIP-relative memory operand cannot be moved. */
	switch (d->meta.category) {
	case ZYDIS_CATEGORY_COND_BR:
	case ZYDIS_CATEGORY_UNCOND_BR:
	case ZYDIS_CATEGORY_CALL:
	case ZYDIS_CATEGORY_RET:
		in->kind = STP_X86_REJECT;
		return;
	default:
		break;
	}
	int riprel = 0;
	for (int i = 0; i < d->operand_count; i++)
		if (ops[i].type == ZYDIS_OPERAND_TYPE_MEMORY &&
		    ops[i].mem.base == ZYDIS_REGISTER_RIP)
			riprel = 1;
	if ((riprel && d->raw.disp.size != 32) ||
	    (!riprel && (d->attributes & ZYDIS_ATTRIB_IS_RELATIVE))) {
		in->kind = STP_X86_REJECT;
		return;
	}
	if (riprel)
		in->disp_off = d->raw.disp.offset;
}

int _stp_x86_decode(const uint8_t *buf, size_t n, uint64_t addr, struct _stp_x86_insn *in)
{
	ZydisDecoder dec;
	ZydisDecodedInstruction d;
	ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];

	memset(in, 0, sizeof *in);
	in->dst = in->src = -1;
	if (n > 15)
		n = 15;
	if (!ZYAN_SUCCESS(ZydisDecoderInit(&dec, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64)))
		return -EINVAL;
	if (!ZYAN_SUCCESS(ZydisDecoderDecodeFull(&dec, buf, n, &d, ops)))
		return -EINVAL;
	in->len = d.length;
	memcpy(in->bytes, buf, d.length);
	snprintf(in->text, sizeof in->text, "%s", ZydisMnemonicGetString(d.mnemonic));
	classify(in, &d, ops, addr);
	return 0;
}

static int parity(uint64_t v)
{
	return !(__builtin_popcount((unsigned)(v & 0xff)) & 1);
}

static uint64_t mask_of(int width)
{
	return width == 8 ? ~0ULL : (1ULL << (width * 8)) - 1;
}

/* add/sub of width bytes; sets the six arithmetic flags as the CPU does. */
static uint64_t addsub(uint64_t a, uint64_t b, int sub, int width, unsigned long long *eflags)
{
	uint64_t m = mask_of(width), res;
	int top = width * 8 - 1;
	unsigned long long f = *eflags & ~(unsigned long long)(CF | PF | AF | ZF | SF | OF);

	a &= m;
	b &= m;
	res = (sub ? a - b : a + b) & m;
	if (sub ? a < b : res < a)
		f |= CF;
	if (parity(res))
		f |= PF;
	if ((a ^ b ^ res) & 0x10)
		f |= AF;
	if (res == 0)
		f |= ZF;
	if ((res >> top) & 1)
		f |= SF;
	if (sub ? (((a ^ b) & (a ^ res)) >> top) & 1 : (((a ^ res) & (b ^ res)) >> top) & 1)
		f |= OF;
	*eflags = f;
	return res;
}

static int cond_true(int cc, unsigned long long f)
{
	int cf = !!(f & CF), zf = !!(f & ZF), sf = !!(f & SF), of = !!(f & OF), pf = !!(f & PF);
	int t;

	switch (cc >> 1) {
	case 0:
		t = of;
		break; /* o */
	case 1:
		t = cf;
		break; /* b */
	case 2:
		t = zf;
		break; /* e */
	case 3:
		t = cf || zf;
		break; /* be */
	case 4:
		t = sf;
		break; /* s */
	case 5:
		t = pf;
		break; /* p */
	case 6:
		t = sf != of;
		break; /* l */
	default:
		t = zf || sf != of;
		break; /* le */
	}
	return (cc & 1) ? !t : t;
}

static uint64_t ea(const struct _stp_x86_mem *m, uint64_t next_rip, struct user_regs_struct *r)
{
	uint64_t a = (uint64_t)m->disp;

	if (m->base == STP_X86_RIP)
		a += next_rip;
	else if (m->base >= 0)
		a += *_stp_x86_reg(r, m->base);
	if (m->index >= 0)
		a += *_stp_x86_reg(r, m->index) * m->scale;
	if (m->seg == 'f')
		a += r->fs_base;
	else if (m->seg == 'g')
		a += r->gs_base;
	return a;
}

static void set_reg(struct user_regs_struct *r, int n, uint64_t v, int width)
{
	*_stp_x86_reg(r, n) = width == 8 ? v : v & 0xffffffffULL; /* 32-bit writes zero-extend */
}

int _stp_x86_emulate(const struct _stp_x86_insn *in, uint64_t addr, struct user_regs_struct *r,
		     const struct _stp_x86_mem_ops *m)
{
	uint64_t next = addr + in->len, v;

	switch (in->kind) {
	case STP_X86_NOP:
		break;
	case STP_X86_PUSH:
		v = in->src >= 0 ? *_stp_x86_reg(r, in->src) : (uint64_t)in->imm;
		if (m->write(m->ctx, r->rsp - 8, &v, 8) < 0)
			return -EFAULT;
		r->rsp -= 8;
		break;
	case STP_X86_POP:
		if (m->read(m->ctx, r->rsp, &v, 8) < 0)
			return -EFAULT;
		r->rsp += 8;
		*_stp_x86_reg(r, in->dst) = v;
		break;
	case STP_X86_PUSHF:
		v = r->eflags & ~(uint64_t)(EFLAGS_RF | EFLAGS_VM);
		if (m->write(m->ctx, r->rsp - 8, &v, 8) < 0)
			return -EFAULT;
		r->rsp -= 8;
		break;
	case STP_X86_POPF:
		if (m->read(m->ctx, r->rsp, &v, 8) < 0)
			return -EFAULT;
		r->rsp += 8;
		r->eflags = (r->eflags & ~(uint64_t)(EFLAGS_POPF | EFLAGS_RF)) | (v & EFLAGS_POPF);
		break;
	case STP_X86_MOV_RR:
		set_reg(r, in->dst, *_stp_x86_reg(r, in->src), in->width);
		break;
	case STP_X86_MOV_RI:
		set_reg(r, in->dst, (uint64_t)in->imm, in->width);
		break;
	case STP_X86_LEA:
		set_reg(r, in->dst, ea(&in->mem, next, r), in->width);
		break;
	case STP_X86_ADDSUB_RI:
		v = addsub(*_stp_x86_reg(r, in->dst), (uint64_t)in->imm, in->is_sub, in->width,
			   &r->eflags);
		set_reg(r, in->dst, v, in->width);
		break;
	case STP_X86_XOR_SELF:
		set_reg(r, in->dst, 0, in->width);
		r->eflags =
		    (r->eflags & ~(unsigned long long)(CF | PF | AF | ZF | SF | OF)) | ZF | PF;
		break;
	case STP_X86_CALL:
	case STP_X86_CALL_IND: {
		uint64_t to = in->target;
		if (in->kind == STP_X86_CALL_IND) {
			if (!in->has_mem)
				to = *_stp_x86_reg(r, in->src);
			else if (m->read(m->ctx, ea(&in->mem, next, r), &to, 8) < 0)
				return -EFAULT;
		}
		if (m->write(m->ctx, r->rsp - 8, &next, 8) < 0)
			return -EFAULT;
		r->rsp -= 8;
		r->rip = to;
		return 1;
	}
	case STP_X86_JMP:
		r->rip = in->target;
		return 1;
	case STP_X86_JMP_IND:
		if (!in->has_mem)
			v = *_stp_x86_reg(r, in->src);
		else if (m->read(m->ctx, ea(&in->mem, next, r), &v, 8) < 0)
			return -EFAULT;
		r->rip = v;
		return 1;
	case STP_X86_JCC:
		r->rip = cond_true(in->cond, r->eflags) ? in->target : next;
		return 1;
	case STP_X86_RET:
		if (m->read(m->ctx, r->rsp, &v, 8) < 0)
			return -EFAULT;
		r->rsp += 8 + (uint64_t)in->imm;
		r->rip = v;
		return 1;
	default:
		return 0;
	}
	r->rip = next;
	return 1;
}

int _stp_x86_ool_bytes(const struct _stp_x86_insn *in, uint64_t addr, uint64_t slot,
		       uint8_t out[16])
{
	memcpy(out, in->bytes, in->len);
	if (in->disp_off) {
		int32_t d;
		int64_t nd;

		memcpy(&d, in->bytes + in->disp_off, 4);
		nd = (int64_t)d + (int64_t)(addr - slot);
		if (nd < INT32_MIN || nd > INT32_MAX)
			return -ERANGE;
		d = (int32_t)nd;
		memcpy(out + in->disp_off, &d, 4);
	}
	return in->len;
}
