/* The agent's C body: what translated code cannot do inline. Runs on the
 * agent stack with the program's registers saved (entry.S); freestanding,
 * no libc, no data of its own (its state is the control block, rip-relative
 * at xl_ctl). It refills the lookup tables from the directory, rings the
 * doorbell (an int3 staprun answers in the stop) for what staprun must do,
 * fixes up signal frames at rt_sigreturn, and, when staprun is gone,
 * returns the thread to native code. */
#include "../layout.h"
#include "../ring_lap.h"

extern struct xl_ctl xl_ctl __attribute__((visibility("hidden")));
extern struct xl_pctl xl_pctl __attribute__((visibility("hidden")));
extern char xl_base[] __attribute__((visibility("hidden")));
void xl_doorbell(void) __attribute__((visibility("hidden")));
void xl_do_sigreturn(void) __attribute__((visibility("hidden")));
uint64_t xl_agent(int why) __attribute__((visibility("hidden"), used));
void xl_sigtrap(int sig, void *si, void *uc) __attribute__((visibility("hidden"), used));

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
	volatile struct xl_ctl *v = c;
	uint64_t pc = *rip, a = 0;

	for (int i = 0; i < XL_SIGRETS && pc; i++)
		if (v->sigret_pc[i] == pc) {
			a = v->sigret_to[i]; /* learnt at the handler's entry */
			break;
		}
	if (!a)
		a = ask(c, XL_REQ_SIGRETURN, pc);

	if (a != c->native_pc)
		*rip = a;
	/* not back to the cache's syscall: it may have been flushed */
	return (uint64_t)(uintptr_t)xl_do_sigreturn;
}

static long sys4(long n, long a, long b, long c, long d);

#define FUTEX_WAIT_ 0 /* not private: the word is in a memfd staprun maps too */
#define ETIMEDOUT_ 110
#define EAGAIN_ 11
#define EINTR_ 4

static uint64_t rdtsc(void)
{
	uint32_t lo, hi;

	__asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
	return (uint64_t)hi << 32 | lo;
}

/* A full ring: room again once staprun has read (ring_lap.h), at once in
 * overwrite mode. Else wait for staprun's reads while they go on (read
 * lately: read_tsc), on the futex word wake, which they bump; when they
 * do not (staprun idle, its reads backed off, or gone), at the doorbell,
 * where staprun reads everything (gone: it does not answer, the thread
 * goes native). The time waited is counted. */
static uint64_t full(struct xl_ctl *c)
{
	volatile struct xl_ctl *v = c;
	char *ring = (char *)(uintptr_t)c->ring_base;
	uint64_t t0 = 0;

	if (v->gone)
		return v->native_pc;
	if (!v->overwrite)
		c->n_full++;
	while (!xl_ring_room(v, ring)) {
		uint64_t now = rdtsc();
		if (!t0)
			t0 = now;
		uint32_t seen = v->wake;
		if (v->wait_ns && (int64_t)(now - v->read_tsc) < (int64_t)v->wait_tsc) {
			v->waiting = 1;
			__atomic_thread_fence(__ATOMIC_SEQ_CST); /* staprun: read, then waiting */
			if (xl_ring_room(v, ring)) {
				v->waiting = 0;
				break;
			}
			struct {
				long s, ns;
			} ts = {(long)(v->wait_ns / 1000000000), (long)(v->wait_ns % 1000000000)};
			c->n_waits++;
			long rc =
			    sys4(202 /* futex */, (long)&v->wake, FUTEX_WAIT_, seen, (long)&ts);
			v->waiting = 0;
			if (rc == 0 || rc == -EAGAIN_ || rc == -EINTR_ || rc == -ETIMEDOUT_)
				continue;
			v->wait_ns = 0; /* futex refused (a sandbox): the doorbell from now on */
		}
		c->n_full_doorbells++;
		uint64_t a = ask(c, XL_REQ_DRAIN, 0);
		if (a != c->retry)
			return a; /* staprun is gone: native */
	}
	if (t0)
		c->tsc_waited += rdtsc() - t0;
	return c->retry;
}

static int touches_code(volatile struct xl_ctl *c, uint64_t lo, uint64_t len)
{
	uint64_t hi = lo + ((len + 4095) & ~4095ull), n = c->ncode;

	if (n > XL_CODE_N || hi < lo)
		return 1;
	for (uint64_t i = 0; i < n; i++)
		if (lo < c->code[i][1] && c->code[i][0] < hi)
			return 1;
	return 0;
}

/* After a system call that may unmap, replace or protect code (s_tgt: its
 * number; its arguments still in the registers): staprun drops the blocks
 * of what changed, unless the call failed, was an mmap that replaces
 * nothing (no MAP_FIXED) or touches no stable code of the address space
 * (code that is not stable checks itself). */
static uint64_t memsys(struct xl_ctl *c)
{
	const uint64_t *sv = (const uint64_t *)(xl_base + XL_STACK_TOP);
	uint64_t rc = c->s_rax, nr = c->s_tgt, flags = sv[-XL_SV_R10];
	int ask_it;

	if (rc >= (uint64_t)-4095 || (nr == 9 && !(flags & 0x10 /* MAP_FIXED */)))
		return c->retry;
	ask_it = touches_code(c, sv[-XL_SV_RDI], sv[-XL_SV_RSI]);
	if (nr == 25 && (flags & 2 /* MREMAP_FIXED */)) /* onto r8, new length rdx */
		ask_it = ask_it || touches_code(c, sv[-XL_SV_R8], sv[-XL_SV_RDX]);
	return ask_it ? ask(c, XL_REQ_MEMSYS, c->native_pc) : c->retry;
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
		return full(c);
	case XL_E_SIGRETURN:
		return sigreturn(c);
	case XL_E_RSEQ:
		return ask(c, XL_REQ_RSEQ, c->native_pc);
	case XL_E_MEMSYS:
		return memsys(c);
	default:
		return ask(c, XL_REQ_FALLBACK, c->native_pc);
	}
}

/* ---- the SIGTRAP handler of an attached process (layout.h, xl_pctl) ----
 * It runs only when no tracer is attached (a tracer gets every SIGTRAP
 * first): staprun is gone. An int3 of ours in the program's code gets its
 * byte back and runs again; a trap stub of translated code goes on at
 * its native pc (the byte restored there too); a thread that rang its
 * doorbell is marked gone (its agent returns it to native code); any
 * other SIGTRAP is the program's, for its own action. */

#define UC_RIP 168 /* ucontext: uc_mcontext.rip */
#define SA_SIGINFO_ 4

static long sys4(long n, long a, long b, long c, long d)
{
	long r;
	register long r10 __asm__("r10") = d;

	__asm__ volatile("syscall"
			 : "=a"(r)
			 : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10)
			 : "rcx", "r11", "memory");
	return r;
}

/* The original byte back under the int3 at addr, through /proc/self/mem
 * (it writes through page protections). */
static void restore(uint64_t addr, uint8_t byte)
{
	static const char mem[] = "/proc/self/mem";
	long fd = sys4(2 /* open */, (long)mem, 2 /* O_RDWR */, 0, 0);

	if (fd < 0)
		return;
	sys4(18 /* pwrite64 */, fd, (long)&byte, 1, (long)addr);
	sys4(3 /* close */, fd, 0, 0, 0);
}

static const struct xl_pbk *bk_find(const struct xl_pctl *p, uint64_t addr)
{
	uint64_t i = (addr * 0x9E3779B97F4A7C15ull) >> (64 - XL_PBK_BITS);

	for (unsigned n = 0; n < XL_PBK_N; n++, i = (i + 1) & (XL_PBK_N - 1)) {
		const struct xl_pbk *b = &p->bk[i];
		if (b->addr == addr)
			return b;
		if (!b->addr)
			return 0;
	}
	return 0;
}

static void chain(struct xl_pctl *p, int sig, void *si, void *uc)
{
	uint64_t h = p->old.handler;

	if (h == 1) /* SIG_IGN */
		return;
	if (h == 0) { /* SIG_DFL: the program dies of it as untraced */
		sys4(13 /* rt_sigaction */, sig, (long)&p->old, 0, 8);
		sys4(234 /* tgkill */, sys4(39 /* getpid */, 0, 0, 0, 0),
		     sys4(186 /* gettid */, 0, 0, 0, 0), sig, 0);
		return;
	}
	if (p->old.flags & SA_SIGINFO_)
		((void (*)(int, void *, void *))(uintptr_t)h)(sig, si, uc);
	else
		((void (*)(int))(uintptr_t)h)(sig);
}

void xl_sigtrap(int sig, void *si, void *uc)
{
	struct xl_pctl *p = &xl_pctl;
	volatile uint64_t *rip = (volatile uint64_t *)((char *)uc + UC_RIP);
	uint64_t pc = *rip - 1; /* the int3's */
	const struct xl_pbk *b;

	for (uint64_t i = 0; i < p->nregions && i < XL_PREGIONS; i++) {
		char *r = (char *)(uintptr_t)p->regions[i];
		struct xl_ctl *c = (struct xl_ctl *)(r + XL_CTL_OFF);
		const struct xl_dirent *d = (const struct xl_dirent *)(r + XL_DIR_OFF);
		if (*rip == c->doorbell) {
			c->gone = 1;
			return;
		}
		for (unsigned k = 0; k < XL_DIR_N; k++)
			if (d[k].native > 1 && d[k].direct == pc) {
				/* a trap stub: native from here on */
				c->gone = 1;
				if ((b = bk_find(p, d[k].native)))
					restore(b->addr, (uint8_t)b->orig);
				*rip = d[k].native;
				return;
			}
	}
	if ((b = bk_find(p, pc))) {
		restore(b->addr, (uint8_t)b->orig);
		*rip = pc;
		return;
	}
	chain(p, sig, si, uc);
}
