/* The encodings' memo (encmemo.h): a direct-mapped table keyed by the
 * whole request, written over on a collision. */
#include "xlate/encmemo.h"

#include <string.h>

#define MEMO_SLOTS 2048 /* a power of 2 */
#define MEMO_OPS 3

struct key {
	uint64_t mn, prefixes;
	uint64_t f[MEMO_OPS][2]; /* per operand: its kind and registers, its number */
};

struct slot {
	struct key k;
	uint8_t len; /* 0: empty */
	uint8_t bytes[ZYDIS_MAX_INSTRUCTION_LENGTH];
};

static struct slot memo[MEMO_SLOTS];
unsigned long xl_memo_made, xl_memo_copied;

/* Only these mnemonics (and indirect jumps) are memoized: none of them is
 * a relative branch, so only a rip-relative operand could make the bytes
 * depend on the pc. */
static int memo_mnemonic(ZydisMnemonic mn)
{
	return mn == ZYDIS_MNEMONIC_MOV || mn == ZYDIS_MNEMONIC_LEA || mn == ZYDIS_MNEMONIC_MOVZX ||
	    mn == ZYDIS_MNEMONIC_RDTSC || mn == ZYDIS_MNEMONIC_SYSCALL || mn == ZYDIS_MNEMONIC_INT3;
}

/* An operand's kind and registers in one word (Zydis's registers are
 * below 2^16). */
static uint64_t pack(ZydisOperandType type, ZydisRegister a, ZydisRegister b, unsigned small,
		     unsigned size)
{
	return (uint64_t)type | (uint64_t)(a & 0xffff) << 8 | (uint64_t)(b & 0xffff) << 24 |
	    (uint64_t)(small & 0xff) << 40 | (uint64_t)(size & 0xffff) << 48;
}

/* The key of a request, 0 if it must be encoded where it lands. */
static int make_key(struct key *k, uint64_t prefixes, ZydisMnemonic mn, int nops,
		    const ZydisEncoderOperand *ops)
{
	int ind_jmp = mn == ZYDIS_MNEMONIC_JMP && nops == 1 &&
	    ops[0].type != ZYDIS_OPERAND_TYPE_IMMEDIATE; /* jmp [abs], jmp reg */

	if ((!memo_mnemonic(mn) && !ind_jmp) || nops < 0 || nops > MEMO_OPS)
		return 0;
	memset(k, 0, sizeof *k);
	k->mn = (uint64_t)mn | (uint64_t)nops << 32;
	k->prefixes = prefixes;
	for (int i = 0; i < nops; i++) {
		const ZydisEncoderOperand *o = &ops[i];
		uint64_t *f = k->f[i];

		switch (o->type) {
		case ZYDIS_OPERAND_TYPE_REGISTER:
			f[0] = pack(o->type, o->reg.value, 0, o->reg.is4, 0);
			break;
		case ZYDIS_OPERAND_TYPE_MEMORY:
			if (o->mem.base == ZYDIS_REGISTER_RIP || o->mem.base == ZYDIS_REGISTER_EIP)
				return 0;
			f[0] = pack(o->type, o->mem.base, o->mem.index, o->mem.scale, o->mem.size);
			f[1] = (uint64_t)o->mem.displacement;
			break;
		case ZYDIS_OPERAND_TYPE_IMMEDIATE:
			f[0] = pack(o->type, 0, 0, 0, 0);
			f[1] = o->imm.u;
			break;
		default:
			return 0;
		}
	}
	return 1;
}

static unsigned hash(const struct key *k)
{
	const uint64_t *w = (const uint64_t *)k;
	uint64_t h = 0xcbf29ce484222325ull;

	for (size_t i = 0; i < sizeof *k / sizeof *w; i++)
		h = (h ^ w[i]) * 0x100000001b3ull;
	return (unsigned)(h ^ h >> 32) & (MEMO_SLOTS - 1);
}

int xl_memo_seg(struct xl_emit *e, uint64_t prefixes, ZydisMnemonic mn, int nops,
		const ZydisEncoderOperand *ops)
{
	struct key k;
	struct slot *s;
	size_t at = e->len;

	if (e->err || !make_key(&k, prefixes, mn, nops, ops))
		return xl_emit_seg(e, prefixes, mn, nops, ops);
	s = &memo[hash(&k)];
	if (s->len && !memcmp(&s->k, &k, sizeof k)) {
		xl_memo_copied++;
		return xl_emit_bytes(e, s->bytes, s->len);
	}
	if (xl_emit_seg(e, prefixes, mn, nops, ops) < 0)
		return e->err;
	s->k = k;
	s->len = (uint8_t)(e->len - at);
	memcpy(s->bytes, e->buf + at, s->len);
	xl_memo_made++;
	return 0;
}

int xl_memo0(struct xl_emit *e, ZydisMnemonic mn)
{
	return xl_memo_seg(e, 0, mn, 0, NULL);
}

int xl_memo1(struct xl_emit *e, ZydisMnemonic mn, ZydisEncoderOperand a)
{
	return xl_memo_seg(e, 0, mn, 1, &a);
}

int xl_memo2(struct xl_emit *e, ZydisMnemonic mn, ZydisEncoderOperand a, ZydisEncoderOperand b)
{
	ZydisEncoderOperand ops[2] = {a, b};

	return xl_memo_seg(e, 0, mn, 2, ops);
}
