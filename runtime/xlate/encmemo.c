/* The encodings' memo (encmemo.h): a direct-mapped table keyed by the
 * whole request, written over on a collision. A request with one
 * immediate is keyed by the immediate's class (the narrowest signed and
 * unsigned widths it fits), not its value: which encodings can hold it,
 * so which one the encoder picks, depends on that alone, and a copy gets
 * the value's low bytes in the immediate field (found by decoding the
 * encoder's bytes, which must hold the value there; else the request is
 * keyed by its value). */
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
	uint8_t len;		/* 0: empty */
	uint8_t imm_off, imm_n; /* the immediate's field (imm_n 0: keyed by value) */
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

/* The narrowest of 8, 16, 32, 64 bits that holds v sign-extended, and
 * zero-extended, as 0..3 each. */
static unsigned imm_class(uint64_t v)
{
	unsigned s = 3, u = 3;

	for (unsigned w = 0; w < 3; w++) {
		unsigned bits = 8u << w;
		int64_t lo = -((int64_t)1 << (bits - 1)), hi = ((int64_t)1 << (bits - 1)) - 1;
		if (s == 3 && (int64_t)v >= lo && (int64_t)v <= hi)
			s = w;
		if (u == 3 && v >> bits == 0)
			u = w;
	}
	return 1 + (s << 2 | u); /* never 0 */
}

/* The key of a request, 0 if it must be encoded where it lands. *by_class
 * (when not NULL): its one immediate is keyed by class. */
static int make_key(struct key *k, uint64_t prefixes, ZydisMnemonic mn, int nops,
		    const ZydisEncoderOperand *ops, int *by_class)
{
	int nimm = 0;

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
			nimm++;
			break;
		default:
			return 0;
		}
	}
	if (by_class && nimm == 1) {
		for (int i = 0; i < nops; i++)
			if (ops[i].type == ZYDIS_OPERAND_TYPE_IMMEDIATE)
				k->f[i][1] = imm_class(ops[i].imm.u);
		k->mn |= (uint64_t)1 << 40; /* never equal to a key by value */
		*by_class = 1;
	}
	return 1;
}

/* Where the one immediate of an encoding is, if it holds v's low bytes
 * there: its offset and size in bytes (0: not found so). */
static unsigned imm_field(const uint8_t *b, size_t n, uint64_t v, uint8_t *off)
{
	static ZydisDecoder dec;
	static int dec_ok;
	ZydisDecodedInstruction in;

	if (!dec_ok &&
	    !ZYAN_SUCCESS(ZydisDecoderInit(&dec, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64)))
		return 0;
	dec_ok = 1;
	if (!ZYAN_SUCCESS(ZydisDecoderDecodeInstruction(&dec, NULL, b, n, &in)) ||
	    in.raw.imm[1].size || !in.raw.imm[0].size || in.raw.imm[0].size % 8 ||
	    in.raw.imm[0].offset + in.raw.imm[0].size / 8 > n)
		return 0;
	unsigned sz = in.raw.imm[0].size / 8;
	uint64_t got = 0, mask = sz == 8 ? ~0ull : (1ull << (8 * sz)) - 1;
	memcpy(&got, b + in.raw.imm[0].offset, sz); /* little-endian */
	if (got != (v & mask))
		return 0;
	*off = in.raw.imm[0].offset;
	return sz;
}

static unsigned hash(const struct key *k)
{
	const uint64_t *w = (const uint64_t *)k;
	uint64_t h = 0xcbf29ce484222325ull;

	for (size_t i = 0; i < sizeof *k / sizeof *w; i++)
		h = (h ^ w[i]) * 0x100000001b3ull;
	return (unsigned)(h ^ h >> 32) & (MEMO_SLOTS - 1);
}

static int copy(struct xl_emit *e, const struct slot *s, uint64_t v)
{
	uint8_t b[ZYDIS_MAX_INSTRUCTION_LENGTH];

	memcpy(b, s->bytes, s->len);
	if (s->imm_n)
		memcpy(b + s->imm_off, &v, s->imm_n); /* its low bytes, little-endian */
	xl_memo_copied++;
	return xl_emit_bytes(e, b, s->len);
}

int xl_memo_seg(struct xl_emit *e, uint64_t prefixes, ZydisMnemonic mn, int nops,
		const ZydisEncoderOperand *ops)
{
	struct key k;
	struct slot *s;
	size_t at = e->len;
	int by_class = 0;
	uint64_t v = 0;

	if (e->err || !make_key(&k, prefixes, mn, nops, ops, &by_class))
		return xl_emit_seg(e, prefixes, mn, nops, ops);
	for (int i = 0; by_class && i < nops; i++)
		if (ops[i].type == ZYDIS_OPERAND_TYPE_IMMEDIATE)
			v = ops[i].imm.u;
	s = &memo[hash(&k)];
	if (s->len && !memcmp(&s->k, &k, sizeof k)) {
		if (!by_class || s->imm_n)
			return copy(e, s, v);
		/* a class whose field was not found: keyed by value */
		by_class = 0;
		make_key(&k, prefixes, mn, nops, ops, NULL);
		s = &memo[hash(&k)];
		if (s->len && !memcmp(&s->k, &k, sizeof k))
			return copy(e, s, v);
	}
	if (xl_emit_seg(e, prefixes, mn, nops, ops) < 0)
		return e->err;
	s->k = k;
	s->len = (uint8_t)(e->len - at);
	s->imm_n = 0;
	if (by_class)
		s->imm_n = (uint8_t)imm_field(e->buf + at, s->len, v, &s->imm_off);
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
