/* The agent's C body: what translated code cannot do inline. Runs on the
 * agent stack with the program's registers saved (entry.S); freestanding,
 * no libc, no data of its own (its state is the control block, rip-relative
 * at xl_ctl). It refills the lookup tables from the directory, rings the
 * doorbell (an int3 staprun answers in the stop) for what staprun must do,
 * fixes up signal frames at rt_sigreturn, and, when staprun is gone,
 * returns the thread to native code. */
#include "../layout.h"

extern struct xl_ctl xl_ctl __attribute__((visibility("hidden")));
extern char xl_base[] __attribute__((visibility("hidden")));
void xl_doorbell(void) __attribute__((visibility("hidden")));
void xl_do_sigreturn(void) __attribute__((visibility("hidden")));
uint64_t xl_agent(int why) __attribute__((visibility("hidden"), used));

static uint64_t *table(unsigned off)
{
	return (uint64_t *)(xl_base + off);
}

static const struct xl_dirent *dir_find(uint64_t native)
{
	const struct xl_dirent *d = (const struct xl_dirent *)(xl_base + XL_DIR_OFF);
	uint64_t i = (native * 0x9E3779B97F4A7C15ull) >> (64 - XL_DIR_BITS);

	for (unsigned n = 0; n < XL_DIR_N; n++, i = (i + 1) & (XL_DIR_N - 1)) {
		volatile const struct xl_dirent *e = &d[i];
		if (e->native == native)
			return (const struct xl_dirent *)e;
		if (e->native == 0)
			return 0;
	}
	return 0;
}

/* Ask staprun; its answer, or native_pc when it did not answer (gone). */
static uint64_t ask(struct xl_ctl *c, uint64_t req, uint64_t arg)
{
	volatile struct xl_ctl *v = c;

	if (v->gone)
		return v->native_pc;
	v->req = req;
	v->arg = arg;
	v->answer = 0;
	c->n_doorbells++;
	xl_doorbell();
	uint64_t a = v->answer;
	v->req = XL_REQ_NONE;
	if (!(a & XL_ANSWERED)) {
		v->gone = 1;
		return v->native_pc;
	}
	a &= ~XL_ANSWERED;
	return a ? a : v->native_pc;
}

/* Entry order: the key goes last, so a thread stopped between the stores
 * never sees a key with another key's value. */
static void fill(unsigned keys, unsigned vals, uint64_t key, uint64_t val)
{
	volatile uint64_t *k = table(keys) + (key & (XL_TAB_N - 1));
	volatile uint64_t *v = table(vals) + (key & (XL_TAB_N - 1));

	*k = 0;
	*v = val;
	*k = (uint64_t) - (int64_t)key;
}

/* A lookup miss: the target is native_pc (a return or call, done), or
 * for a jump s_tgt (native_pc is the jump, still to happen). */
static uint64_t miss(struct xl_ctl *c, int jump)
{
	uint64_t key = jump ? c->s_tgt : c->native_pc;
	const struct xl_dirent *e = dir_find(key);

	if (!e) {
		uint64_t a = ask(c, XL_REQ_TRANSLATE, key);
		if (a == c->native_pc || !(e = dir_find(key)))
			return a; /* native (staprun gone), or wherever it said */
	} else {
		c->n_dir_hits++;
	}
	if (jump) {
		fill(XL_JKEYS_OFF, XL_JVALS_OFF, key, e->jentry);
		return e->jentry;
	}
	fill(XL_RKEYS_OFF, XL_RVALS_OFF, key, e->entry);
	return e->entry;
}

/* rt_sigreturn: the frame (struct rt_sigframe without its return address:
 * the ucontext at rsp) says where the thread goes on; make that a cache
 * address. uc_mcontext.rip is at 40 + 16 * 8. */
static uint64_t sigreturn(struct xl_ctl *c)
{
	volatile uint64_t *rip = (volatile uint64_t *)(c->s_rsp + 168);
	uint64_t pc = *rip;
	uint64_t a = ask(c, XL_REQ_SIGRETURN, pc);

	if (a != c->native_pc)
		*rip = a;
	/* not back to the cache's syscall: it may have been flushed */
	return (uint64_t)(uintptr_t)xl_do_sigreturn;
}

uint64_t xl_agent(int why)
{
	struct xl_ctl *c = &xl_ctl;

	c->n_agent++;
	switch (why) {
	case XL_E_MISS_RET:
		return miss(c, 0);
	case XL_E_MISS_JMP:
		return miss(c, 1);
	case XL_E_MISS_DIRECT: /* rax: the target, which native_pc is */
		return ask(c, XL_REQ_TRANSLATE, c->native_pc);
	case XL_E_FULL:
		return ask(c, XL_REQ_DRAIN, 0);
	case XL_E_SIGRETURN:
		return sigreturn(c);
	default:
		return ask(c, XL_REQ_FALLBACK, c->native_pc);
	}
}
