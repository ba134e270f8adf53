/* The encodings' memo (encmemo.h): a direct-mapped table keyed by the
 * whole request, written over on a collision. A request with one
 * immediate is keyed by the immediate's class (the narrowest signed and
 * unsigned widths it fits), not its value: which encodings can hold it,
 * so which one the encoder picks, depends on that alone, and a copy gets
 * the value's low bytes in the immediate field (found by decoding the
 * encoder's bytes, which must hold the value there; else the request is
 * keyed by its value). A rip-relative operand is keyed without its
 * target: its field is always a disp32 (there is no shorter form), so
 * the bytes differ only there, and a copy gets target - (its end). */
#include "xlate/encmemo.h"

#include <string.h>

#define MEMO_BITS 11
#define MEMO_SLOTS (1u << MEMO_BITS)
#define MEMO_OPS 2 /* block.c's requests have at most two operands */

/* w[0]: mnemonic, operand count and the flags below; w[1]: prefixes;
 * then per operand its kind and registers, and its number (none for a
 * rip-relative operand or an immediate keyed by class: its class) */
#define K_BY_CLASS (1ull << 40) /* never equal to a key by value */
#define K_RIP (1ull << 41)
struct key {
	uint64_t w[2 + 2 * MEMO_OPS];
};

struct slot {
	struct key k;
	uint8_t len;		/* 0: empty */
	uint8_t imm_off, imm_n; /* the immediate's field (imm_n 0: keyed by value) */
	uint8_t rel_off;	/* a rip-relative operand's disp32 field */
	uint8_t bytes[ZYDIS_MAX_INSTRUCTION_LENGTH];
};

static struct slot memo[MEMO_SLOTS];
unsigned long xl_memo_made, xl_memo_copied;

/* Only these mnemonics (and indirect jumps) are memoized: none of them is
 * a relative branch, so only a rip-relative operand makes the bytes
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

/* What a request holds besides its key: its one immediate (keyed by
 * class when by_class), its rip-relative target. */
struct vals {
	int nimm, rip;
	uint64_t imm, target;
};

/* The key of a request, 0 if it must be encoded where it lands. An
 * immediate is keyed by class when by_class and it is the only one. */
static inline int make_key(struct key *k, uint64_t prefixes, ZydisMnemonic mn, int nops,
			   const ZydisEncoderOperand *ops, int by_class, struct vals *v)
{
	int ind_jmp = mn == ZYDIS_MNEMONIC_JMP && nops == 1 &&
	    ops[0].type != ZYDIS_OPERAND_TYPE_IMMEDIATE; /* jmp [abs], jmp reg */

	if ((!memo_mnemonic(mn) && !ind_jmp) || nops < 0 || nops > MEMO_OPS)
		return 0;
	v->nimm = v->rip = 0;
	k->w[0] = (uint64_t)mn | (uint64_t)nops << 32;
	k->w[1] = prefixes;
	for (int i = 0; i < MEMO_OPS; i++)
		k->w[2 + 2 * i] = k->w[3 + 2 * i] = 0;
	for (int i = 0; i < nops; i++) {
		const ZydisEncoderOperand *o = &ops[i];
		uint64_t *f = &k->w[2 + 2 * i];

		switch (o->type) {
		case ZYDIS_OPERAND_TYPE_REGISTER:
			f[0] = pack(o->type, o->reg.value, 0, o->reg.is4, 0);
			break;
		case ZYDIS_OPERAND_TYPE_MEMORY:
			f[0] = pack(o->type, o->mem.base, o->mem.index, o->mem.scale, o->mem.size);
			if (o->mem.base == ZYDIS_REGISTER_EIP)
				return 0;
			if (o->mem.base == ZYDIS_REGISTER_RIP) {
				v->rip = 1;
				v->target = (uint64_t)o->mem.displacement;
			} else {
				f[1] = (uint64_t)o->mem.displacement;
			}
			break;
		case ZYDIS_OPERAND_TYPE_IMMEDIATE:
			f[0] = pack(o->type, 0, 0, 0, 0);
			f[1] = v->imm = o->imm.u;
			v->nimm++;
			break;
		default:
			return 0;
		}
	}
	if (v->rip)
		k->w[0] |= K_RIP;
	if (by_class && v->nimm == 1) {
		for (int i = 0; i < nops; i++)
			if (ops[i].type == ZYDIS_OPERAND_TYPE_IMMEDIATE)
				k->w[2 + 2 * i + 1] = imm_class(v->imm);
		k->w[0] |= K_BY_CLASS;
	}
	return 1;
}

/* Where the fields of an encoding are: its one immediate, if it holds v's
 * low bytes there (*imm_n 0: not found so); its rip-relative disp32,
 * which must hold target - end (else -1: the bytes are not kept). */
static int fields(const uint8_t *b, size_t n, uint64_t end, const struct vals *v, int by_class,
		  uint8_t *imm_off, uint8_t *imm_n, uint8_t *rel_off)
{
	static ZydisDecoder dec;
	static int dec_ok;
	ZydisDecodedInstruction in;

	*imm_n = *rel_off = 0;
	if (!dec_ok &&
	    !ZYAN_SUCCESS(ZydisDecoderInit(&dec, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64)))
		return v->rip ? -1 : 0;
	dec_ok = 1;
	if (!ZYAN_SUCCESS(ZydisDecoderDecodeInstruction(&dec, NULL, b, n, &in)))
		return v->rip ? -1 : 0;
	if (by_class && !in.raw.imm[1].size && in.raw.imm[0].size && !(in.raw.imm[0].size % 8) &&
	    in.raw.imm[0].offset + in.raw.imm[0].size / 8 <= n) {
		unsigned sz = in.raw.imm[0].size / 8;
		uint64_t got = 0, mask = sz == 8 ? ~0ull : (1ull << (8 * sz)) - 1;
		memcpy(&got, b + in.raw.imm[0].offset, sz); /* little-endian */
		if (got == (v->imm & mask)) {
			*imm_off = in.raw.imm[0].offset;
			*imm_n = (uint8_t)sz;
		}
	}
	if (v->rip) {
		int32_t got;
		if (in.raw.disp.size != 32 || !in.raw.disp.offset || in.raw.disp.offset + 4u > n)
			return -1;
		memcpy(&got, b + in.raw.disp.offset, 4);
		if ((int64_t)got != (int64_t)(v->target - end))
			return -1;
		*rel_off = in.raw.disp.offset;
	}
	return 0;
}

/* (the words folded by rotations, the slot from the product's high
 * bits: they depend on every bit) */
static unsigned hash(const struct key *k)
{
	uint64_t h = k->w[0];

	for (size_t i = 1; i < sizeof k->w / sizeof *k->w; i++) {
		unsigned r = (unsigned)(13 * i) & 63; /* (a shift by 64 or more is undefined) */
		h ^= r ? k->w[i] << r | k->w[i] >> (64 - r) : k->w[i];
	}
	return (unsigned)((h * 0x9E3779B97F4A7C15ull) >> (64 - MEMO_BITS));
}

static int key_eq(const struct key *a, const struct key *b)
{
	uint64_t d = 0;

	for (size_t i = 0; i < sizeof a->w / sizeof *a->w; i++)
		d |= a->w[i] ^ b->w[i];
	return !d;
}

/* n bytes (at most 16) from s to d, by whole words where they fit */
static void put_bytes(uint8_t *d, const uint8_t *s, size_t n)
{
	if (n >= 8) {
		memcpy(d, s, 8);
		memcpy(d + n - 8, s + n - 8, 8);
	} else if (n >= 4) {
		memcpy(d, s, 4);
		memcpy(d + n - 4, s + n - 4, 4);
	} else {
		for (size_t i = 0; i < n; i++)
			d[i] = s[i];
	}
}

/* 1 done (or the sticky error), 0: the copy's target is out of reach
 * (encoded where it lands instead, as the encoder fails so too). */
static int copy(struct xl_emit *e, const struct slot *s, const struct vals *v)
{
	uint64_t end = xl_emit_here(e) + s->len;
	int64_t rel = (int64_t)(v->target - end);
	uint8_t *d;

	if (s->rel_off && rel != (int32_t)rel)
		return 0;
	if (!(d = xl_emit_reserve(e, s->len)))
		return 1;
	put_bytes(d, s->bytes, s->len);
	if (s->imm_n)
		put_bytes(d + s->imm_off, (const uint8_t *)&v->imm, s->imm_n); /* little-endian */
	if (s->rel_off) {
		int32_t r = (int32_t)rel;
		memcpy(d + s->rel_off, &r, 4);
	}
	xl_memo_copied++;
	return 1;
}

int xl_memo_seg(struct xl_emit *e, uint64_t prefixes, ZydisMnemonic mn, int nops,
		const ZydisEncoderOperand *ops)
{
	struct key k;
	struct vals v;
	struct slot *s;
	size_t at = e->len;
	int by_class;

	if (e->err || !make_key(&k, prefixes, mn, nops, ops, 1, &v))
		return xl_emit_seg(e, prefixes, mn, nops, ops);
	by_class = v.nimm == 1;
	s = &memo[hash(&k)];
	if (s->len && key_eq(&s->k, &k)) {
		if (!by_class || s->imm_n) {
			if (copy(e, s, &v))
				return e->err;
			return xl_emit_seg(e, prefixes, mn, nops, ops);
		}
		/* a class whose field was not found: keyed by value */
		by_class = 0;
		make_key(&k, prefixes, mn, nops, ops, 0, &v);
		s = &memo[hash(&k)];
		if (s->len && key_eq(&s->k, &k)) {
			if (copy(e, s, &v))
				return e->err;
			return xl_emit_seg(e, prefixes, mn, nops, ops);
		}
	}
	if (xl_emit_seg(e, prefixes, mn, nops, ops) < 0)
		return e->err;
	size_t len = e->len - at;
	uint8_t imm_off = 0, imm_n = 0, rel_off = 0;
	if ((by_class || v.rip) &&
	    fields(e->buf + at, len, xl_emit_here(e), &v, by_class, &imm_off, &imm_n, &rel_off) < 0)
		return 0; /* not copied from (a rip-relative field not found) */
	s->k = k;
	s->len = (uint8_t)len;
	s->imm_off = imm_off;
	s->imm_n = imm_n;
	s->rel_off = rel_off;
	memcpy(s->bytes, e->buf + at, len);
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

/* The commonest requests (block.c's slot and record moves, immediates:
 * mov, lea or movzx of registers, [base + disp] with no index and at
 * most one immediate) in a table of their own with a three-word key, in
 * front of the whole request's: what that one gives for them is copied,
 * an immediate keyed by class as there. */
#define FRONT_BITS 11
struct front_slot {
	uint64_t k0, k1, k2;	/* see xl_memo2 */
	uint8_t len;		/* 0: empty */
	uint8_t imm_off, imm_n; /* the immediate's field */
	uint8_t bytes[ZYDIS_MAX_INSTRUCTION_LENGTH];
};
static struct front_slot front[1u << FRONT_BITS];

/* An operand of a front request in 24 bits (its kind, register or base,
 * size; Zydis's registers are below 2^16), its number in *disp or *imm;
 * -1: not one of those forms. */
static inline int64_t front_op(const ZydisEncoderOperand *o, uint64_t *disp, uint64_t *imm,
			       int *nmem, int *nimm)
{
	switch (o->type) {
	case ZYDIS_OPERAND_TYPE_REGISTER:
		if (o->reg.is4 || (unsigned)o->reg.value >= 0x10000)
			return -1;
		return 1 | (int64_t)o->reg.value << 2;
	case ZYDIS_OPERAND_TYPE_MEMORY:
		if (o->mem.index != ZYDIS_REGISTER_NONE || o->mem.scale ||
		    o->mem.base == ZYDIS_REGISTER_RIP || o->mem.base == ZYDIS_REGISTER_EIP ||
		    (unsigned)o->mem.base >= 0x10000 || o->mem.size >= 64 || (*nmem)++)
			return -1;
		*disp = (uint64_t)o->mem.displacement;
		return 2 | (int64_t)o->mem.base << 2 | (int64_t)o->mem.size << 18;
	case ZYDIS_OPERAND_TYPE_IMMEDIATE:
		if ((*nimm)++)
			return -1;
		*imm = o->imm.u;
		return 3;
	default:
		return -1;
	}
}

/* (the rest of xl_memo2: the operands copied only here; the bytes go
 * into s when s is not NULL) */
static __attribute__((noinline)) int memo2_whole(struct xl_emit *e, ZydisMnemonic mn,
						 const ZydisEncoderOperand *a,
						 const ZydisEncoderOperand *b, struct front_slot *s,
						 const struct front_slot *k, int nimm, uint64_t imm)
{
	ZydisEncoderOperand ops[2] = {*a, *b};
	size_t at = e->len, len;
	uint8_t imm_off = 0, imm_n = 0, rel_off;
	struct vals v = {.nimm = nimm, .imm = imm};

	if (xl_memo_seg(e, 0, mn, 2, ops) < 0 || !s || e->err ||
	    (len = e->len - at) > sizeof s->bytes)
		return e->err;
	if (nimm &&
	    (fields(e->buf + at, len, xl_emit_here(e), &v, 1, &imm_off, &imm_n, &rel_off) < 0 ||
	     !imm_n))
		return 0; /* its field not found: left to the whole request's */
	*s = *k;
	s->len = (uint8_t)len;
	s->imm_off = imm_off;
	s->imm_n = imm_n;
	memcpy(s->bytes, e->buf + at, len);
	return 0;
}

int xl_memo2(struct xl_emit *e, ZydisMnemonic mn, ZydisEncoderOperand a, ZydisEncoderOperand b)
{
	uint64_t disp = 0, imm = 0;
	int nmem = 0, nimm = 0;
	int64_t da, db;

	if (e->err ||
	    (mn != ZYDIS_MNEMONIC_MOV && mn != ZYDIS_MNEMONIC_LEA && mn != ZYDIS_MNEMONIC_MOVZX) ||
	    (da = front_op(&a, &disp, &imm, &nmem, &nimm)) < 0 ||
	    (db = front_op(&b, &disp, &imm, &nmem, &nimm)) < 0)
		return memo2_whole(e, mn, &a, &b, NULL, NULL, 0, 0);
	struct front_slot k = {.k0 = ((uint64_t)mn & 0xffff) | (uint64_t)da << 16 |
				   (uint64_t)db << 40,
			       .k1 = disp,
			       .k2 = nimm ? imm_class(imm) : 0};
	struct front_slot *s =
	    &front[(((k.k0 ^ k.k1 * 0xff51afd7ed558ccdull) + k.k2) * 0x9E3779B97F4A7C15ull) >>
		   (64 - FRONT_BITS)];
	if (!s->len || s->k0 != k.k0 || s->k1 != k.k1 || s->k2 != k.k2)
		return memo2_whole(e, mn, &a, &b, s, &k, nimm, imm);
	uint8_t *d = xl_emit_reserve(e, s->len);
	if (d) {
		put_bytes(d, s->bytes, s->len);
		if (s->imm_n)
			put_bytes(d + s->imm_off, (const uint8_t *)&imm,
				  s->imm_n); /* little-endian */
		xl_memo_copied++;
	}
	return e->err;
}
