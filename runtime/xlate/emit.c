/* The emitter (emit.h): Zydis's encoder at the final address. */
#include "xlate/emit.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

void xl_emit_init(struct xl_emit *e, uint8_t *buf, size_t cap, uint64_t pc)
{
	memset(e, 0, sizeof *e);
	e->buf = buf;
	e->cap = cap;
	e->pc = pc;
}

void xl_emit_fini(struct xl_emit *e)
{
	free(e->an);
	free(e->fx);
	e->an = NULL;
	e->fx = NULL;
}

uint64_t xl_emit_here(const struct xl_emit *e)
{
	return e->pc + e->len;
}

static int st_eq(const struct xl_state *a, const struct xl_state *b)
{
	return a->kind == b->kind && a->saved == b->saved && a->pc_src == b->pc_src &&
	    a->after_trap == b->after_trap && a->rsp_adj == b->rsp_adj && a->pc == b->pc;
}

static void annotate(struct xl_emit *e)
{
	if (e->nan && e->an[e->nan - 1].off == e->len) {
		e->an[e->nan - 1].st = e->st; /* nothing emitted since */
		return;
	}
	if (e->nan && st_eq(&e->an[e->nan - 1].st, &e->st))
		return; /* same state as the previous instruction */
	if (e->nan == e->capan) {
		size_t cap = e->capan ? 2 * e->capan : 32;
		struct xl_annot *v = realloc(e->an, cap * sizeof *v);
		if (!v) {
			e->err = -ENOMEM;
			return;
		}
		e->an = v;
		e->capan = cap;
	}
	e->an[e->nan].off = (uint32_t)e->len;
	e->an[e->nan++].st = e->st;
}

static int encode_at(ZydisEncoderRequest *rq, uint8_t *out, size_t *len, uint64_t pc)
{
	ZyanUSize n = ZYDIS_MAX_INSTRUCTION_LENGTH;

	if (!ZYAN_SUCCESS(ZydisEncoderEncodeInstructionAbsolute(rq, out, &n, pc)))
		return -EINVAL;
	*len = n;
	return 0;
}

static void request(ZydisEncoderRequest *rq, ZydisMnemonic mn, int nops,
		    const ZydisEncoderOperand *ops)
{
	memset(rq, 0, sizeof *rq);
	rq->machine_mode = ZYDIS_MACHINE_MODE_LONG_64;
	rq->mnemonic = mn;
	rq->operand_count = (ZyanU8)nops;
	for (int i = 0; i < nops; i++)
		rq->operands[i] = ops[i];
}

static int put(struct xl_emit *e, const uint8_t *b, size_t n)
{
	if (e->err)
		return e->err;
	if (e->len + n > e->cap)
		return e->err = -ENOSPC;
	annotate(e);
	memcpy(e->buf + e->len, b, n);
	e->len += n;
	return e->err;
}

uint8_t *xl_emit_reserve(struct xl_emit *e, size_t n)
{
	uint8_t *d;

	if (e->err)
		return NULL;
	if (e->len + n > e->cap) {
		e->err = -ENOSPC;
		return NULL;
	}
	annotate(e);
	d = e->buf + e->len;
	e->len += n;
	return d;
}

int xl_emit_seg(struct xl_emit *e, uint64_t prefixes, ZydisMnemonic mn, int nops,
		const ZydisEncoderOperand *ops)
{
	ZydisEncoderRequest rq;
	uint8_t out[ZYDIS_MAX_INSTRUCTION_LENGTH];
	size_t n;

	if (e->err)
		return e->err;
	request(&rq, mn, nops, ops);
	rq.prefixes = prefixes;
	if (encode_at(&rq, out, &n, xl_emit_here(e)) < 0)
		return e->err = -EINVAL;
	return put(e, out, n);
}

int xl_emit_op(struct xl_emit *e, ZydisMnemonic mn, int nops, const ZydisEncoderOperand *ops)
{
	return xl_emit_seg(e, 0, mn, nops, ops);
}

int xl_emit0(struct xl_emit *e, ZydisMnemonic mn)
{
	return xl_emit_op(e, mn, 0, NULL);
}

int xl_emit1(struct xl_emit *e, ZydisMnemonic mn, ZydisEncoderOperand a)
{
	return xl_emit_op(e, mn, 1, &a);
}

int xl_emit2(struct xl_emit *e, ZydisMnemonic mn, ZydisEncoderOperand a, ZydisEncoderOperand b)
{
	ZydisEncoderOperand ops[2] = {a, b};

	return xl_emit_op(e, mn, 2, ops);
}

static int short_only(ZydisMnemonic mn)
{
	return mn == ZYDIS_MNEMONIC_JRCXZ || mn == ZYDIS_MNEMONIC_JECXZ ||
	    mn == ZYDIS_MNEMONIC_LOOP || mn == ZYDIS_MNEMONIC_LOOPE || mn == ZYDIS_MNEMONIC_LOOPNE;
}

/* Branches encoded so far, by mnemonic and distance: a branch of a fixed
 * width to target - pc has the same bytes wherever it is (a block's own
 * branches go over a few hundred bytes: most are copies). Direct-mapped,
 * written over on a collision. */
#define BR_BITS 12
#define BR_SLOTS (1u << BR_BITS)
struct br_slot {
	int64_t delta;
	uint16_t mn; /* 0: empty (ZYDIS_MNEMONIC_INVALID) */
	uint8_t len;
	uint8_t bytes[ZYDIS_MAX_INSTRUCTION_LENGTH];
};
static struct br_slot br_memo[BR_SLOTS];

/* A branch of a fixed width (rel8 for the short-only ones, else rel32),
 * so that it can be encoded again in place when its label binds. */
static int encode_branch(ZydisMnemonic mn, uint64_t pc, uint64_t target, uint8_t *out, size_t *n)
{
	ZydisEncoderRequest rq;
	ZydisEncoderOperand op = xl_imm((int64_t)target);
	int64_t delta = (int64_t)(target - pc);
	uint64_t h = ((uint64_t)delta + ((uint64_t)mn << 32)) * 0x9E3779B97F4A7C15ull;
	struct br_slot *s = &br_memo[h >> (64 - BR_BITS)];

	if (s->mn == (uint16_t)mn && s->delta == delta) {
		memcpy(out, s->bytes, s->len);
		*n = s->len;
		return 0;
	}
	request(&rq, mn, 1, &op);
	rq.branch_type = short_only(mn) ? ZYDIS_BRANCH_TYPE_SHORT : ZYDIS_BRANCH_TYPE_NEAR;
	rq.branch_width = short_only(mn) ? ZYDIS_BRANCH_WIDTH_8 : ZYDIS_BRANCH_WIDTH_32;
	if (encode_at(&rq, out, n, pc) < 0)
		return -ERANGE;
	s->mn = (uint16_t)mn;
	s->delta = delta;
	s->len = (uint8_t)*n;
	memcpy(s->bytes, out, *n);
	return 0;
}

int xl_emit_branch(struct xl_emit *e, ZydisMnemonic mn, uint64_t target)
{
	uint8_t out[ZYDIS_MAX_INSTRUCTION_LENGTH];
	size_t n;

	if (e->err)
		return e->err;
	if (encode_branch(mn, xl_emit_here(e), target, out, &n) < 0)
		return e->err = -ERANGE;
	return put(e, out, n);
}

int xl_emit_branch_to(struct xl_emit *e, ZydisMnemonic mn, struct xl_label *l)
{
	uint64_t here = xl_emit_here(e);
	size_t at = e->len;

	if (l->off >= 0)
		return xl_emit_branch(e, mn, e->pc + (uint64_t)l->off);
	/* not bound yet: encoded to itself for now, again at the bind */
	if (xl_emit_branch(e, mn, here) < 0)
		return e->err;
	if (e->nfx == e->capfx) {
		size_t cap = e->capfx ? 2 * e->capfx : 16;
		struct xl_fixup *v = realloc(e->fx, cap * sizeof *v);
		if (!v)
			return e->err = -ENOMEM;
		e->fx = v;
		e->capfx = cap;
	}
	e->fx[e->nfx++] = (struct xl_fixup){(uint32_t)at, (uint8_t)(e->len - at), mn, l};
	return 0;
}

void xl_emit_bind(struct xl_emit *e, struct xl_label *l)
{
	l->off = (int32_t)e->len;
	for (size_t i = 0; i < e->nfx && !e->err; i++) {
		struct xl_fixup *f = &e->fx[i];
		uint8_t out[ZYDIS_MAX_INSTRUCTION_LENGTH];
		size_t n;
		if (f->to != l)
			continue;
		if (encode_branch(f->mn, e->pc + f->off, e->pc + (uint64_t)l->off, out, &n) < 0 ||
		    n != f->len) {
			e->err = -ERANGE;
			return;
		}
		memcpy(e->buf + f->off, out, n);
		f->to = NULL;
	}
}

int xl_emit_bytes(struct xl_emit *e, const uint8_t *b, size_t n)
{
	return put(e, b, n);
}

long xl_emit_quad(struct xl_emit *e, uint64_t v)
{
	static const uint8_t pad[8] = {0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc};
	size_t fill = (8 - (xl_emit_here(e) & 7)) & 7;

	if (fill && put(e, pad, fill) < 0)
		return -1;
	long off = (long)e->len;
	if (put(e, (const uint8_t *)&v, 8) < 0)
		return -1;
	return off;
}

int xl_emit_branch_to_at(uint8_t *code, size_t len, ZydisMnemonic mn, uint64_t at_pc,
			 uint64_t target)
{
	uint8_t out[ZYDIS_MAX_INSTRUCTION_LENGTH];
	size_t n;

	if (encode_branch(mn, at_pc, target, out, &n) < 0 || n != len)
		return -ERANGE;
	memcpy(code, out, n);
	return 0;
}

void xl_st_clean(struct xl_emit *e, uint64_t pc)
{
	e->st = (struct xl_state){.kind = XL_ST_CLEAN, .pc_src = XL_PC_CONST, .pc = pc};
}

void xl_st_mid(struct xl_emit *e, uint64_t pc, int pc_src, int saved, int rsp_adj)
{
	e->st = (struct xl_state){.kind = XL_ST_MID,
				  .saved = (uint8_t)saved,
				  .pc_src = (uint8_t)pc_src,
				  .rsp_adj = (int16_t)rsp_adj,
				  .pc = pc};
}
