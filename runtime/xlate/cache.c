/* The code cache of a thread: chunks near the code they translate, the
 * blocks (by native start, by cache address), the directory the agent
 * reads, the links between blocks, and clean points (where a native pc
 * can be entered with native registers). */
#include "xlate/xl_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define BATCH 64 /* blocks translated ahead per request */

struct xl_block *xl_block_at(struct xl_thread *xt, uint64_t native)
{
	return (struct xl_block *)(uintptr_t)xl_map_get(&xt->byn, native);
}

struct xl_block *xl_block_of_cache(struct xl_thread *xt, uint64_t cache)
{
	for (int c = 0; c < xt->nch; c++) {
		const struct xl_blocks *bs = &xt->byc[c];
		size_t lo = 0, hi = bs->n;

		if (cache < xt->ch[c].addr || cache - xt->ch[c].addr >= xt->ch[c].size)
			continue;
		while (lo < hi) {
			size_t mid = (lo + hi) / 2;
			struct xl_block *b = bs->v[mid];
			if (cache < b->cache)
				hi = mid;
			else if (cache >= b->cache + b->size)
				lo = mid + 1;
			else
				return b;
		}
		return NULL;
	}
	return NULL;
}

static struct xl_frange *frange_find(struct xl_proc *xp, uint64_t addr)
{
	size_t lo = 0, hi = xp->nfr;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (addr < xp->fr[mid].lo)
			hi = mid;
		else if (addr >= xp->fr[mid].hi)
			lo = mid + 1;
		else
			return &xp->fr[mid];
	}
	return NULL;
}

static void frange_add(struct xl_proc *xp, uint64_t lo, uint64_t hi, uint32_t fid)
{
	size_t i = 0;

	if (xp->nfr == xp->capfr) {
		size_t cap = xp->capfr ? 2 * xp->capfr : 256;
		struct xl_frange *v = realloc(xp->fr, cap * sizeof *v);
		if (!v)
			return;
		xp->fr = v;
		xp->capfr = cap;
	}
	/* the first range not below lo, by halving */
	for (size_t hi = xp->nfr; i < hi;) {
		size_t mid = i + (hi - i) / 2;
		if (xp->fr[mid].lo < lo)
			i = mid + 1;
		else
			hi = mid;
	}
	if ((i > 0 && xp->fr[i - 1].hi > lo) || (i < xp->nfr && xp->fr[i].lo < hi))
		return; /* overlapping symbols: ask again next time */
	memmove(xp->fr + i + 1, xp->fr + i, (xp->nfr - i) * sizeof *xp->fr);
	xp->fr[i] = (struct xl_frange){lo, hi, fid};
	xp->nfr++;
}

/* A small id of the function containing addr (0: unknown), for the jump
 * entries' flag-free comparison. */
uint32_t xl_fid(struct xl_thread *xt, uint64_t addr)
{
	struct xl_proc *xp = xt->xp;
	struct _stp_xl_engine *x = xp->x;
	struct xl_frange *r = frange_find(xp, addr);
	uint64_t lo = 0, hi = 0, f;

	if (r)
		return r->fid;
	if (!x->ops.func_of || xl_map_get(&xp->nofunc, addr))
		return 0;
	if (!(f = x->ops.func_of(x->core, xt->t, addr, &lo, &hi))) {
		xl_map_put(&xp->nofunc, addr, 1);
		return 0;
	}
	uint64_t id = xl_map_get(&x->fids, f);
	if (!id) {
		id = ++x->next_fid;
		xl_map_put(&x->fids, f, id);
	}
	if (lo <= addr && addr < hi)
		frange_add(xp, lo, hi, (uint32_t)id);
	return (uint32_t)id;
}

void xl_funcs_forget(struct xl_proc *xp, uint64_t lo, uint64_t hi)
{
	size_t n = 0;

	for (size_t i = 0; i < xp->nfr; i++)
		if (xp->fr[i].hi <= lo || xp->fr[i].lo >= hi)
			xp->fr[n++] = xp->fr[i];
	xp->nfr = n;
	xl_map_clear(&xp->nofunc); /* (cheap to ask again) */
}

size_t xl_chunk_size(const struct _stp_xl_engine *x)
{
	size_t n = x->cfg.cache_bytes / 2;

	n = n < (64u << 10) ? 64u << 10 : n > XL_CHUNK_MAX ? XL_CHUNK_MAX : n;
	return n & ~(size_t)0xffff;
}

struct xl_chunk *xl_chunk_for(struct xl_thread *xt, uint64_t native)
{
	for (int i = xt->nch - 1; i >= 0; i--) {
		struct xl_chunk *ch = &xt->ch[i];
		uint64_t d = ch->addr > native ? ch->addr - native : native - ch->addr;
		if (d < XL_CHUNK_REACH && ch->used + XL_BLOCK_MAX <= ch->size)
			return ch;
	}
	if (xt->nch == XL_MAX_CHUNKS ||
	    (size_t)(xt->nch + 1) * xl_chunk_size(xt->xp->x) > xt->xp->x->cfg.cache_bytes)
		return NULL;
	if (xl_map_chunk(xt, native, &xt->ch[xt->nch]) < 0)
		return NULL;
	return &xt->ch[xt->nch++];
}

/* Point exit x at block b (rel32 when in reach, else through its stub as
 * a far trampoline: jmp [rip+lit]). */
static void link_exit(struct xl_thread *xt, struct xl_exit *x, struct xl_block *b)
{
	struct xl_block *from = x->b;
	uint8_t *code = from->chunk->mem + (from->cache - from->chunk->addr);
	uint64_t to = b->cache + b->body, at = from->cache + x->off;
	ZydisEncoderOperand op = xl_reg(ZYDIS_REGISTER_NONE);
	struct xl_emit e;

	if (xl_emit_branch_to_at(code + x->off, x->len, x->mn, at, to) == 0) {
		x->linked = 1;
		return;
	}
	/* far: the stub becomes jmp [rip+lit]; lit */
	uint64_t stub = from->cache + x->stub;
	uint64_t lit = (stub + 6 + 7) & ~7ull;
	xl_emit_init(&e, code + x->stub, (size_t)(lit + 8 - stub), stub);
	op = xl_abs(lit, 8);
	op.mem.base = ZYDIS_REGISTER_RIP;
	xl_emit1(&e, ZYDIS_MNEMONIC_JMP, op);
	xl_emit_fini(&e);
	if (e.err || e.len > lit - stub)
		return;
	memcpy(code + (lit - from->cache), &to, 8);
	if (xl_emit_branch_to_at(code + x->off, x->len, x->mn, at, stub) == 0)
		x->linked = 1;
	(void)xt;
}

static int index_by_cache(struct xl_thread *xt, struct xl_block *b)
{
	struct xl_blocks *bs = &xt->byc[b->chunk - xt->ch];

	if (bs->n == bs->cap) {
		size_t cap = bs->cap ? 2 * bs->cap : 256;
		struct xl_block **v = realloc(bs->v, cap * sizeof *v);
		if (!v)
			return -ENOMEM;
		bs->v = v;
		bs->cap = cap;
	}
	/* by halving (at the end but for a block placed out of order) */
	size_t i = 0, hi = bs->n;
	if (hi && bs->v[hi - 1]->cache < b->cache)
		i = hi;
	while (i < hi) {
		size_t mid = i + (hi - i) / 2;
		if (bs->v[mid]->cache > b->cache)
			hi = mid;
		else
			i = mid + 1;
	}
	memmove(bs->v + i + 1, bs->v + i, (bs->n - i) * sizeof *bs->v);
	bs->v[i] = b;
	bs->n++;
	xt->nbyc++;
	return 0;
}

/* The directory (open addressing, read by the agent: layout.h). */
static int dir_put(struct xl_thread *xt, const struct xl_block *b)
{
	struct xl_dirent *d = (struct xl_dirent *)(xt->rg.mem + XL_DIR_OFF);
	uint64_t i = (b->native * 0x9E3779B97F4A7C15ull) >> (64 - XL_DIR_BITS);

	for (unsigned n = 0; n < XL_DIR_N; n++, i = (i + 1) & (XL_DIR_N - 1)) {
		if (d[i].native && d[i].native != b->native)
			continue;
		/* the agent reads native last-written-first: fill, then key */
		d[i].entry = b->cache + b->entry;
		d[i].jentry = b->cache + b->jentry;
		d[i].direct = b->cache + b->body;
		__atomic_store_n(&d[i].native, b->native, __ATOMIC_RELEASE);
		return 0;
	}
	return -ENOSPC;
}

int xl_block_add(struct xl_thread *xt, struct xl_block *b)
{
	int rc;

	/* the directory first: when it is full nothing else is changed */
	if ((rc = dir_put(xt, b)) < 0 ||
	    (rc = xl_map_put(&xt->byn, b->native, (uint64_t)(uintptr_t)b)) < 0 ||
	    (rc = index_by_cache(xt, b)) < 0)
		return rc;
	xt->code_bytes += b->size;
	xt->xp->x->st.blocks++;
	xt->xp->x->st.code_bytes += b->size;
	for (size_t i = 0; i < b->nan; i++) {
		const struct xl_annot *a = &b->an[i];
		/* only the block's own instructions (not exits to others) */
		struct xl_map *m = a->st.after_trap ? &xt->after : &xt->clean;
		if (a->st.kind == XL_ST_CLEAN && a->st.pc >= b->native &&
		    a->st.pc < b->native_end && !xl_map_get(m, a->st.pc))
			xl_map_put(m, a->st.pc, b->cache + a->off);
	}
	/* exits waiting for this block, and this block's own exits */
	for (struct xl_exit *x = (struct xl_exit *)(uintptr_t)xl_map_get(&xt->wait, b->native); x;
	     x = x->wnext)
		if (!x->linked)
			link_exit(xt, x, b);
	for (size_t i = 0; i < b->nex; i++) {
		struct xl_exit *x = &b->ex[i];
		struct xl_block *to = xl_block_at(xt, x->target);
		x->wnext = (struct xl_exit *)(uintptr_t)xl_map_get(&xt->wait, x->target);
		xl_map_put(&xt->wait, x->target, (uint64_t)(uintptr_t)x);
		if (to)
			link_exit(xt, x, to);
	}
	return 0;
}

/* One block; when the cache is full, may_flush empties it first (only
 * for the block a request is about: no block of the batch survives). */
static struct xl_block *translate_one(struct xl_thread *xt, uint64_t native, const char **why,
				      int may_flush)
{
	struct xl_block *b = xl_block_at(xt, native);

	if (b)
		return b;
	if (!xl_code_runs(xt, native)) {
		*why = "code readable but not executable: it faults natively";
		return NULL;
	}
	for (int tries = 0; tries < 4; tries++) {
		struct xl_chunk *ch = xl_chunk_for(xt, native);
		if (!ch) {
			if (may_flush-- > 0) {
				xl_flush(xt);
				continue;
			}
			*why = "no room for translated code near it";
			return NULL;
		}
		int rc = xl_block_translate(xt, ch, native, &b, why);
		if (rc == -ENOSPC && !*why) {
			ch->used = ch->size; /* full: the next try takes a new one */
			continue;
		}
		if (rc < 0)
			return NULL;
		if (xl_block_add(xt, b) < 0) {
			xl_rseq_release(xt, b->shadow);
			free(b->an);
			free(b->ex);
			free(b->orig);
			free(b);
			if (may_flush-- > 0) {
				xl_flush(xt);
				continue;
			}
			*why = "the directory is full";
			return NULL;
		}
		return b;
	}
	*why = "no room for translated code near it";
	return NULL;
}

/* Where block b goes on in straight line, if anywhere: what a not-taken
 * branch, a split block or a returning call lead to. The way out of its
 * k-th exit, or (k == nex) past its call. */
static uint64_t straight_on(const struct xl_block *b, size_t k)
{
	if (k == b->nex)
		return b->ends_call ? b->native_end : 0;
	const struct xl_exit *x = &b->ex[k];
	return x->mn == ZYDIS_MNEMONIC_JMP && x->target == b->native_end ? x->target : 0;
}

/* The block at native, and ahead of it the blocks it goes on to in
 * straight line: fall-through exits and the code after calls (returns
 * are looked up: each return site would be a request of its own), on
 * through the blocks so reached while they are in the function of the
 * block at native (a function's entry is a function of its own: from a
 * miss at an entry, one step). Taken branches and callees' entries are
 * left to their misses. python3.11 -S -E of print(0): no block ahead,
 * 31,150 blocks for 31,165 requests; every direct exit inside the
 * function and each callee's first block, 84,945 for 12,663 (most never
 * run; 26 MiB of code: the cache flushed twice); that and the code
 * after calls, 102,064 for 6,283; straight on (this), 36,804 for 6,563
 * (11.4 MiB, one flush). */
struct xl_block *xl_translate(struct xl_thread *xt, uint64_t native, const char **why)
{
	uint64_t queue[BATCH];
	size_t head = 0, tail = 0;
	struct xl_block *first = translate_one(xt, native, why, 1);

	if (!first)
		return NULL;
	queue[tail++] = native;
	while (head < tail) {
		struct xl_block *b = xl_block_at(xt, queue[head++]);
		if (b && b->fid != first->fid)
			continue; /* reached, not followed further */
		for (size_t k = 0; b && k <= b->nex && tail < BATCH; k++) {
			uint64_t to = straight_on(b, k);
			const char *w = NULL;
			/* not into another function (past a call that does
			 * not return, say) */
			if (!to || xl_block_at(xt, to) || xl_fid(xt, to - 1) != xl_fid(xt, to))
				continue;
			if (!translate_one(xt, to, &w, 0))
				continue; /* translated when reached, or fails then */
			queue[tail++] = to;
		}
	}
	return first;
}

uint64_t xl_enter_at(struct xl_thread *xt, uint64_t pc, int after_trap, const char **why)
{
	uint64_t c = xl_map_get(after_trap ? &xt->after : &xt->clean, pc);
	struct xl_block *b;

	/* a clean point inside a block from changing code skips the block's
	 * check: do it here */
	if (c && (b = xl_block_of_cache(xt, c)) && xl_block_changed(xt, b)) {
		xl_invalidate(xt, b->native, b->native_end);
		c = 0;
	}

	if (!after_trap && _stp_pt_bkpt_at(_stp_pt_thread_proc(xt->t), pc)) {
		/* as natively: the int3 there traps (its block starts with it) */
		if (!(b = xl_translate(xt, pc, why)))
			return 0;
		return b->cache + b->body;
	}
	if (c)
		return c;
	if (!(b = xl_translate(xt, pc, why)))
		return 0;
	if ((c = xl_map_get(after_trap ? &xt->after : &xt->clean, pc)))
		return c;
	/* after a trap, where the breakpoint is gone: its instruction */
	if (after_trap && (c = xl_map_get(&xt->clean, pc)))
		return c;
	return b->cache + b->body;
}

/* ---- invalidation ---- */

/* Exit x goes to its miss stub again (the stub emitted anew: it may have
 * been made a far trampoline). */
static void unlink_exit(struct xl_thread *xt, struct xl_exit *x)
{
	struct xl_block *from = x->b;
	uint8_t *code = from->chunk->mem + (from->cache - from->chunk->addr);
	struct xl_emit e;

	if (!x->linked)
		return;
	xl_emit_init(&e, code + x->stub, 64, from->cache + x->stub);
	xl_emit_miss_stub(&e, xl_ctl_addr(xt, 0), x->target);
	xl_emit_fini(&e);
	xl_emit_branch_to_at(code + x->off, x->len, x->mn, from->cache + x->off,
			     from->cache + x->stub);
	x->linked = 0;
}

static void dir_del(struct xl_thread *xt, uint64_t native)
{
	struct xl_dirent *d = (struct xl_dirent *)(xt->rg.mem + XL_DIR_OFF);
	uint64_t i = (native * 0x9E3779B97F4A7C15ull) >> (64 - XL_DIR_BITS);

	for (unsigned n = 0; n < XL_DIR_N && d[i].native; n++, i = (i + 1) & (XL_DIR_N - 1))
		if (d[i].native == native) {
			d[i].native = 1; /* a tombstone: lookups go on past it */
			return;
		}
}

/* The lookup tables' entry for native (the key goes first). */
static void table_del(struct xl_thread *xt, unsigned keys, uint64_t native)
{
	uint64_t *k = (uint64_t *)(xt->rg.mem + keys) + (native & (XL_TAB_N - 1));

	if (*k == (uint64_t) - (int64_t)native)
		*k = 0;
}

static void map_del_into(struct xl_map *m, const struct xl_block *b)
{
	for (size_t i = 0; i < m->cap; i++)
		if (m->k[i] && m->k[i] != UINT64_MAX && m->v[i] >= b->cache &&
		    m->v[i] < b->cache + b->size)
			xl_map_del(m, m->k[i]);
}

static void kill_block(struct xl_thread *xt, struct xl_block *b)
{
	b->dead = 1;
	xl_rseq_release(xt, b->shadow);
	b->shadow = -1;
	if (xl_block_at(xt, b->native) == b)
		xl_map_del(&xt->byn, b->native);
	dir_del(xt, b->native);
	table_del(xt, XL_RKEYS_OFF, b->native);
	table_del(xt, XL_JKEYS_OFF, b->native);
	map_del_into(&xt->clean, b);
	map_del_into(&xt->after, b);
	/* the exits linked to it go back to their miss stubs (they wait for
	 * its next translation); its own exits wait for nothing any more */
	for (struct xl_exit *x = (struct xl_exit *)(uintptr_t)xl_map_get(&xt->wait, b->native); x;
	     x = x->wnext)
		if (!x->b->dead)
			unlink_exit(xt, x);
	for (size_t i = 0; i < b->nex; i++) {
		struct xl_exit *x = &b->ex[i], **pp;
		uint64_t head = xl_map_get(&xt->wait, x->target);
		struct xl_exit *first = (struct xl_exit *)(uintptr_t)head;
		for (pp = &first; *pp && *pp != x; pp = &(*pp)->wnext)
			;
		if (*pp)
			*pp = x->wnext;
		if (first)
			xl_map_put(&xt->wait, x->target, (uint64_t)(uintptr_t)first);
		else
			xl_map_del(&xt->wait, x->target);
	}
}

void xl_invalidate(struct xl_thread *xt, uint64_t lo, uint64_t hi)
{
	int n = 0, order[XL_MAX_CHUNKS];

	/* the chunks by address (as one table by cache address was) */
	for (int c = 0; c < xt->nch; c++) {
		int j = c;
		for (; j > 0 && xt->ch[order[j - 1]].addr > xt->ch[c].addr; j--)
			order[j] = order[j - 1];
		order[j] = c;
	}
	for (int c = 0; c < xt->nch; c++)
		for (size_t i = 0; i < xt->byc[order[c]].n; i++) {
			struct xl_block *b = xt->byc[order[c]].v[i];
			uint64_t end = b->native_end > b->native ? b->native_end : b->native + 1;
			if (!b->dead && b->native < hi && lo < end) {
				kill_block(xt, b);
				n++;
			}
		}
	if (n) {
		xt->gen++; /* a stopped thread cannot go back into them */
		xl_sigret_forget(xt);
		xl_debug("%d blocks of %d invalidated at %#llx-%#llx", n, (int)xt->tid,
			 (unsigned long long)lo, (unsigned long long)hi);
	}
}

void xl_flush(struct xl_thread *xt)
{
	xl_cache_free(xt);
	for (int i = 0; i < xt->nch; i++) {
		memset(xt->ch[i].mem, 0xcc, xt->ch[i].size);
		xt->ch[i].used = 0;
	}
	/* tables and directory: zero pages again */
	madvise(xt->rg.mem + XL_RKEYS_OFF, XL_RING_OFF - XL_RKEYS_OFF, MADV_REMOVE);
	xt->xp->x->st.flushes++;
	xl_debug("cache of %d flushed", (int)xt->tid);
}

void xl_cache_free(struct xl_thread *xt)
{
	for (int c = 0; c < XL_MAX_CHUNKS; c++) {
		struct xl_blocks *bs = &xt->byc[c];
		for (size_t i = 0; i < bs->n; i++) {
			free(bs->v[i]->an);
			free(bs->v[i]->ex);
			free(bs->v[i]->orig);
			free(bs->v[i]);
		}
		free(bs->v);
		*bs = (struct xl_blocks){0};
	}
	xt->nbyc = 0;
	xl_map_free(&xt->byn);
	xl_map_free(&xt->clean);
	xl_map_free(&xt->after);
	xl_map_free(&xt->wait);
	xt->code_bytes = 0;
	xt->shadow_used = 0;
	xt->gen++;
	xl_sigret_forget(xt);
}
