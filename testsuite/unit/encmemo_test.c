/* runtime/xlate/encmemo.c: the memo's bytes are exactly the encoder's.
 * The instructions the block translator emits (control-block slot moves
 * at many addresses, [rcx+d] and [rsp+d] stores, immediates, indirect
 * jumps, rip-relative lea, which is never memoized) go twice through the
 * memo and once straight to xl_emit_seg, each at its own pc; every byte
 * and every annotation must match. Enough distinct requests to overwrite
 * the memo's slots many times over. */
#include "unit.h"
#include "xlate/encmemo.h"

#include <errno.h>
#include <stdio.h>

#define R(r) xl_reg(ZYDIS_REGISTER_##r)
#define MN(m) ZYDIS_MNEMONIC_##m
#define NONE ZYDIS_REGISTER_NONE

struct req {
	ZydisMnemonic mn;
	int nops;
	ZydisEncoderOperand ops[2];
};

static size_t make_reqs(struct req *v, size_t max)
{
	static const ZydisRegister regs[] = {ZYDIS_REGISTER_RAX, ZYDIS_REGISTER_RCX,
					     ZYDIS_REGISTER_RDX, ZYDIS_REGISTER_R8,
					     ZYDIS_REGISTER_R15};
	static const int64_t disps[] = {0, 8, -8, 127, 128, -129, 0x7fffffff, 4, 15, 24};
	static const int64_t imms[] = {0,
				       1,
				       -1,
				       0x7f,
				       0x80,
				       0x7fffffff,
				       0x80000000ll,
				       0xffffffffll,
				       0x123456789ll,
				       -0x80000000ll};
	size_t n = 0;

	for (int k = 0; k < 700 && n + 2 <= max; k++) {
		uint64_t ctl = 0x10004000ull + 8 * (uint64_t)k; /* the region sits low */
		ZydisRegister r = regs[k % 5];
		v[n++] = (struct req){MN(MOV), 2, {xl_abs(ctl, 8), xl_reg(r)}};
		v[n++] = (struct req){MN(MOV), 2, {xl_reg(r), xl_abs(ctl, 8)}};
	}
	for (size_t d = 0; d < sizeof disps / sizeof *disps; d++)
		for (size_t i = 0; i < sizeof imms / sizeof *imms && n + 5 <= max; i++) {
			ZydisEncoderOperand m8 = xl_mem(ZYDIS_REGISTER_RCX, NONE, 0, disps[d], 8);
			ZydisEncoderOperand m4 = xl_mem(ZYDIS_REGISTER_RSP, NONE, 0, disps[d], 4);
			v[n++] = (struct req){MN(MOV), 2, {m8, R(RAX)}};
			v[n++] = (struct req){MN(MOV), 2, {m4, xl_imm((int32_t)imms[i])}};
			v[n++] = (struct req){MN(MOV), 2, {R(RAX), xl_imm(imms[i])}};
			v[n++] = (struct req){MN(LEA), 2, {R(RCX), m8}};
			v[n++] = (struct req){MN(LEA),
					      2,
					      {R(RCX),
					       xl_mem(ZYDIS_REGISTER_RIP, NONE, 0,
						      0x7f0000100000ll + (imms[i] & 0xffff), 8)}};
		}
	/* immediates of every class (memoized by class, the value put in
	 * the copy): each at several operand forms and widths */
	uint64_t x = 0x9E3779B97F4A7C15ull;
	for (int k = 0; k < 600 && n + 8 <= max; k++) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		int bits = (int)(x >> 60) % 8; /* 1, 2, 4 or 8 bytes, either sign */
		uint64_t val = x >> (64 - (8 << (bits % 4)));
		if (bits >= 4)
			val = ~val;
		ZydisEncoderOperand m8 = xl_mem(ZYDIS_REGISTER_RCX, NONE, 0, 8 * (k % 5), 8);
		ZydisEncoderOperand m4 = xl_mem(ZYDIS_REGISTER_RSP, NONE, 0, 4 * (k % 3), 4);
		ZydisEncoderOperand m2 = xl_mem(ZYDIS_REGISTER_RDX, NONE, 0, k % 7, 2);
		ZydisEncoderOperand m1 = xl_mem(ZYDIS_REGISTER_RAX, NONE, 0, 0, 1);
		v[n++] = (struct req){MN(MOV), 2, {R(RAX), xl_imm((int64_t)val)}};
		v[n++] = (struct req){MN(MOV), 2, {R(R9), xl_imm((int64_t)val)}};
		v[n++] = (struct req){MN(MOV), 2, {R(ECX), xl_imm((int32_t)val)}};
		v[n++] = (struct req){MN(MOV), 2, {R(AL), xl_imm((int8_t)val)}};
		v[n++] = (struct req){MN(MOV), 2, {m8, xl_imm((int32_t)val)}};
		v[n++] = (struct req){MN(MOV), 2, {m4, xl_imm((int32_t)val)}};
		v[n++] = (struct req){MN(MOV), 2, {m2, xl_imm((int16_t)val)}};
		v[n++] = (struct req){MN(MOV), 2, {m1, xl_imm((int8_t)val)}};
	}
	if (n + 4 <= max) {
		v[n++] = (struct req){MN(JMP), 1, {xl_abs(0x10008000ull, 8)}};
		v[n++] = (struct req){MN(JMP), 1, {R(RCX)}};
		v[n++] = (struct req){MN(MOVZX), 2, {R(ECX), R(AX)}};
		v[n++] = (struct req){MN(RDTSC), 0, {{0}}};
	}
	return n;
}

/* The encoder's own bytes for a branch of the emitter's fixed widths. */
static int zydis_branch(ZydisMnemonic mn, uint64_t pc, uint64_t target, uint8_t *out, size_t *n)
{
	int short_only = mn == MN(JRCXZ) || mn == MN(LOOP);
	ZydisEncoderRequest rq;
	ZyanUSize len = ZYDIS_MAX_INSTRUCTION_LENGTH;

	memset(&rq, 0, sizeof rq);
	rq.machine_mode = ZYDIS_MACHINE_MODE_LONG_64;
	rq.mnemonic = mn;
	rq.operand_count = 1;
	rq.operands[0] = xl_imm((int64_t)target);
	rq.branch_type = short_only ? ZYDIS_BRANCH_TYPE_SHORT : ZYDIS_BRANCH_TYPE_NEAR;
	rq.branch_width = short_only ? ZYDIS_BRANCH_WIDTH_8 : ZYDIS_BRANCH_WIDTH_32;
	if (!ZYAN_SUCCESS(ZydisEncoderEncodeInstructionAbsolute(&rq, out, &len, pc)))
		return -1;
	*n = len;
	return 0;
}

/* emit.c's branches are memoized by mnemonic and distance: at many pcs
 * and every distance of a block's own branches (each met again at other
 * pcs, the memo's slots overwritten by other mnemonics and distances),
 * and far ones, the bytes are the encoder's, and a distance out of rel8
 * reach fails as it does. */
static void branches(void)
{
	static const ZydisMnemonic mns[] = {MN(JMP), MN(JZ), MN(JNBE), MN(JRCXZ), MN(LOOP)};
	static const int64_t far[] = {1 << 20, -(1 << 20), 0x7fff0000, -0x7fff0000};
	int ok = 1, fails = 1;
	long n = 0;
	char why[256] = "";

	for (uint64_t k = 0; k < 6; k++)
		for (int64_t d = -2100; d < 2100 + 4; d++)
			for (size_t m = 0; m < sizeof mns / sizeof *mns; m++) {
				uint64_t pc = 0x7f0000100000ull + 0x1003 * k;
				int64_t delta = d < 2100 ? d : far[d - 2100] + (int64_t)k;
				uint64_t to = pc + (uint64_t)delta;
				uint8_t a[ZYDIS_MAX_INSTRUCTION_LENGTH];
				uint8_t b[ZYDIS_MAX_INSTRUCTION_LENGTH];
				size_t nb = 0;
				int rb = zydis_branch(mns[m], pc, to, b, &nb);
				int ra;

				/* at its own length: xl_emit_branch_to_at's check */
				memset(a, 0, sizeof a);
				ra = xl_emit_branch_to_at(a, rb ? 2 : nb, mns[m], pc, to);
				n++;
				if (rb && !ra)
					fails = 0;
				if (!rb && (ra || memcmp(a, b, nb))) {
					if (ok)
						snprintf(why, sizeof why,
							 "mnemonic %d at %#llx to %#llx",
							 (int)mns[m], (unsigned long long)pc,
							 (unsigned long long)to);
					ok = 0;
				}
			}
	unit_result("branch memo: the encoder's bytes at every pc and distance", ok, why);
	unit_result("branch memo: out of reach fails as the encoder does", fails, NULL);
	printf("NOTE: %ld branches compared\n", n);
}

/* A rip-relative lea copied from the memo to a pc whose distance to the
 * target is out of disp32 reach fails as the encoder does (-EINVAL), and
 * one just within reach gets the encoder's bytes. */
static void rip_reach(void)
{
	/* target - pc; the lea is 7 bytes: disp32 = distance - 7 */
	static const int64_t dists[] = {0x80000006ll, 0x80000007ll, -0x7ffffff9ll, -0x7ffffffall,
					0x100000000ll};
	uint64_t target = 0x7f0040000000ull;
	uint8_t a[32], b[32];
	struct xl_emit ea, eb;
	int ok = 1;
	char why[128] = "";

	xl_emit_init(&ea, a, sizeof a, target + 0x1000); /* made here */
	xl_memo2(&ea, MN(LEA), R(RDX), xl_mem(ZYDIS_REGISTER_RIP, NONE, 0, (int64_t)target, 8));
	xl_emit_fini(&ea);
	for (size_t i = 0; i < sizeof dists / sizeof *dists; i++) {
		uint64_t pc = target - (uint64_t)dists[i];
		ZydisEncoderOperand m = xl_mem(ZYDIS_REGISTER_RIP, NONE, 0, (int64_t)target, 8);

		xl_emit_init(&ea, a, sizeof a, pc);
		xl_emit_init(&eb, b, sizeof b, pc);
		xl_memo2(&ea, MN(LEA), R(RDX), m);
		xl_emit2(&eb, MN(LEA), R(RDX), m);
		if (ea.err != eb.err || ea.len != eb.len || memcmp(a, b, ea.len)) {
			if (ok)
				snprintf(why, sizeof why, "distance %lld: error %d, encoder's %d",
					 (long long)dists[i], ea.err, eb.err);
			ok = 0;
		}
		xl_emit_fini(&ea);
		xl_emit_fini(&eb);
	}
	unit_result("memo: rip-relative copies within and out of reach as the encoder", ok, why);
}

int main(void)
{
	branches();
	static struct req v[8192];
	static uint8_t a[1 << 17], b[1 << 17];
	size_t n = make_reqs(v, sizeof v / sizeof *v);
	struct xl_emit ea, eb;
	int same = 1, ann = 1;
	char why[256] = "";

	/* two rounds at different pcs: the second takes from the memo */
	for (int round = 0; round < 2; round++) {
		uint64_t pc = 0x7f0000100000ull + 0x1003 * (uint64_t)round;

		xl_emit_init(&ea, a, sizeof a, pc);
		xl_emit_init(&eb, b, sizeof b, pc);
		for (size_t i = 0; i < n; i++) {
			xl_st_mid(&ea, i, XL_PC_CONST, (int)(i & 3), 0);
			xl_st_mid(&eb, i, XL_PC_CONST, (int)(i & 3), 0);
			xl_memo_seg(&ea, 0, v[i].mn, v[i].nops, v[i].ops);
			xl_emit_seg(&eb, 0, v[i].mn, v[i].nops, v[i].ops);
			if (eb.err && !*why)
				snprintf(why, sizeof why,
					 "round %d, request %zu (mnemonic %d): error %d", round, i,
					 (int)v[i].mn, eb.err);
			if (same && (ea.len != eb.len || memcmp(a, b, ea.len))) {
				snprintf(why, sizeof why, "round %d, request %zu (mnemonic %d)",
					 round, i, (int)v[i].mn);
				same = 0;
			}
		}
		ann &= ea.nan == eb.nan;
		for (size_t i = 0; ann && i < ea.nan; i++)
			ann = ea.an[i].off == eb.an[i].off && ea.an[i].st.pc == eb.an[i].st.pc &&
			    ea.an[i].st.saved == eb.an[i].st.saved &&
			    ea.an[i].st.kind == eb.an[i].st.kind;
		unit_result(round ? "memo: copies are the encoder's bytes"
				  : "memo: first encodings are the encoder's bytes",
			    same && !ea.err && !eb.err, why);
		xl_emit_fini(&ea);
		xl_emit_fini(&eb);
	}
	unit_result("memo: annotations unchanged", ann, NULL);
	unit_result("memo: used", xl_memo_copied > 100 && xl_memo_made > 100, NULL);
	printf("NOTE: %zu requests, %lu encodings made, %lu copied\n", n, xl_memo_made,
	       xl_memo_copied);
	/* out of room: the same sticky error as the encoder's */
	uint8_t small[4];
	xl_emit_init(&ea, small, sizeof small, 0x1000);
	xl_memo2(&ea, MN(MOV), xl_abs(0x10004000ull, 8), R(RAX));
	unit_check_long("memo: out of room", ea.err, -ENOSPC);
	xl_emit_fini(&ea);
	rip_reach();
	return unit_failures != 0;
}
