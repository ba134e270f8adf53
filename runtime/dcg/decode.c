/* The call graph's view of code: instructions read through a thread's
 * reader (a small window of the target's code, original bytes under
 * breakpoints) and decoded (cached per process and address), and what
 * they are to a call graph: PLT stubs, function entries, jumps that are
 * calls, signal restorers. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "dcg_internal.h"
#include "sym/symbols.h"
#include "arch/x86_64/insn.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* ---- reading code ---- */

#define WIN 512
static struct {
	pid_t pid;
	uint64_t base;
	size_t len;
	uint8_t b[WIN];
} win;

int _stp_dcg_read_insn(const struct dcg_reader *rd, uint64_t addr, struct _stp_x86_insn *in)
{
	pid_t pid = rd->pid;

	if (win.pid != pid || addr < win.base || addr - win.base + 15 > win.len) {
		/* a whole window, or less where the mapping ends */
		size_t n = WIN;
		win.len = 0;
		while (n >= 16 && rd->read(rd->ctx, addr, win.b, n) < 0)
			n /= 2;
		if (n < 16) {
			n = 15;
			while (n > 0 && rd->read(rd->ctx, addr, win.b, n) < 0)
				n--;
			if (!n)
				return -EFAULT;
		}
		win.pid = pid;
		win.base = addr;
		win.len = n;
	}
	return _stp_x86_decode(win.b + (addr - win.base), win.base + win.len - addr, addr, in);
}

/* ---- decodings ---- */

#define DEC_BITS 14
static struct dec *decs;
static uint64_t dec_epoch = 1; /* of the decodings (and is_stub's answers) */

static __attribute__((noinline)) const struct dec *decode_miss(const struct dcg_reader *rd,
							       uint64_t addr, struct dec *d)
{
	struct _stp_x86_insn in;

	if (_stp_dcg_read_insn(rd, addr, &in) < 0)
		return NULL;
	memset(d, 0, sizeof *d);
	d->pid = rd->pid;
	d->addr = addr;
	d->valid = 1;
	d->len = in.len;
	d->kind = in.kind;
	d->target = in.target;
	d->syscall = in.len == 2 &&
	    ((in.bytes[0] == 0x0f && in.bytes[1] == 0x05) ||
	     (in.bytes[0] == 0xcd && in.bytes[1] == 0x80));
	d->ripjmp = in.kind == STP_X86_JMP_IND && in.has_mem && in.mem.base == STP_X86_RIP;
	static const uint8_t endbr[3] = {0xf3, 0x0f, 0x1e}, mov_rt[7] = {0x48, 0xc7, 0xc0, 0x0f};
	d->endbr = in.len == 4 && !memcmp(in.bytes, endbr, 3) &&
	    (in.bytes[3] == 0xfa || in.bytes[3] == 0xfb);
	d->mov_rt = in.len == 7 && !memcmp(in.bytes, mov_rt, 7);
	return d;
}

/* (the hit is kept a leaf) */
const struct dec *dcg_decode_at(const struct dcg_reader *rd, uint64_t addr)
{
	pid_t pid = rd->pid;

	if (!decs) {
		decs = calloc((size_t)1 << DEC_BITS, sizeof *decs);
		if (!decs)
			return NULL;
	}
	struct dec *d = &decs[(addr ^ (addr >> DEC_BITS) ^ (uint64_t)pid * 0x9e37) &
			      (((size_t)1 << DEC_BITS) - 1)];
	if (d->valid && d->addr == addr && d->pid == pid)
		return d;
	return decode_miss(rd, addr, d);
}

void dcg_decodings_drop(pid_t pid)
{
	for (size_t i = 0; decs && i < ((size_t)1 << DEC_BITS); i++)
		if (decs[i].pid == pid)
			decs[i].valid = 0;
	win.len = 0;
	dec_epoch++;
}

void dcg_decodings_drop_range(pid_t pid, uint64_t lo, uint64_t hi)
{
	/* an instruction may start up to 14 bytes before lo */
	for (size_t i = 0; decs && i < ((size_t)1 << DEC_BITS); i++)
		if (decs[i].pid == pid && decs[i].addr < hi && decs[i].addr + 15 > lo)
			decs[i].valid = 0;
	win.len = 0;
	dec_epoch++;
}

void dcg_decode_free(void)
{
	free(decs);
	decs = NULL;
	win.len = 0;
	dec_epoch++;
}

/* ---- what the code is ---- */

int dcg_is_endbr(const struct dcg_reader *rd, uint64_t addr)
{
	const struct dec *d = dcg_decode_at(rd, addr);
	return d && d->endbr;
}

/* A PLT stub: (endbr64;) jmp *GOT(%rip) in a PLT section. The same code
 * elsewhere is a function of its own (liblzma's lzma_crc64). */
static int stub_at(const struct dcg_reader *rd, uint64_t addr)
{
	const struct _stp_syminfo *si = dcg_sym(rd->pid, addr);

	if (!si || !si->plt)
		return 0;
	if (dcg_is_endbr(rd, addr))
		addr += 4;
	const struct dec *d = dcg_decode_at(rd, addr);
	return d && d->ripjmp;
}

/* Its answers, asked of most calls' targets: they hold while the symbol
 * cache's entries and the decodings do (a PLT is file-backed code). */
#define STUB_BITS 12
static struct stub {
	pid_t pid;
	int ans;
	uint64_t addr, gen, epoch;
} stubs[1u << STUB_BITS];

int dcg_is_stub(const struct dcg_reader *rd, uint64_t addr)
{
	struct stub *s =
	    &stubs[((addr ^ (uint64_t)rd->pid) * 0x9E3779B97F4A7C15ull) >> (64 - STUB_BITS)];

	if (s->epoch == dec_epoch && s->addr == addr && s->pid == rd->pid && s->gen == _stp_sym_gen)
		return s->ans;
	int ans = stub_at(rd, addr);
	*s = (struct stub){rd->pid, ans, addr, _stp_sym_gen, dec_epoch};
	return ans;
}

int dcg_in_plt(pid_t pid, uint64_t addr)
{
	const struct _stp_syminfo *si = dcg_sym(pid, addr);
	return si && si->plt;
}

/* A function's entry (not the start of its .cold part). */
int dcg_func_start(pid_t pid, uint64_t addr)
{
	const struct _stp_syminfo *si = dcg_sym(pid, addr);
	return si && si->name && si->offset == 0 && !si->cold;
}

/* Are a and b in the same function (X.cold counts as X)? (Cached
 * entries stay valid across lookups.) */
int dcg_same_func(pid_t pid, uint64_t a, uint64_t b)
{
	const struct _stp_syminfo *sa = dcg_sym(pid, a), *sb = dcg_sym(pid, b);

	if (!sa || !sa->name || !sb || !sb->name)
		return 0;
	if (sb->symaddr == sa->symaddr)
		return 1;
	return !strcmp(sb->name, sa->name) && sa->modpath && sb->modpath &&
	    !strcmp(sa->modpath, sb->modpath);
}

/* The function containing pc: its start if known, else pc. */
uint64_t dcg_func_of(pid_t pid, uint64_t pc)
{
	const struct _stp_syminfo *si = dcg_sym(pid, pc);
	return si && si->name ? si->symaddr : pc;
}

int dcg_enters_func(const struct dcg_reader *rd, uint64_t from, uint64_t to)
{
	pid_t pid = rd->pid;
	const struct _stp_syminfo *st, *sf;

	/* a function's entry, its own too (a self tail call) */
	if (dcg_func_start(pid, to) || dcg_is_stub(rd, to))
		return 1;
	/* another module's code, with or without a symbol there (ld.so's
	 * jmp *%rax into a stripped program's _fini); code in no module
	 * counts as one module */
	if (!(st = dcg_sym(pid, to)))
		return 0;
	if (st->module)
		return from < st->modstart || from >= st->modend;
	return (sf = dcg_sym(pid, from)) && sf->module;
}

int dcg_func_range(pid_t pid, uint64_t addr, uint64_t *lo, uint64_t *hi)
{
	const struct _stp_syminfo *si = dcg_sym(pid, addr);

	if (!si || !si->name || !si->size)
		return -1;
	*lo = si->symaddr;
	*hi = si->symaddr + si->size;
	return 0;
}

/* A signal handler's entry: the kernel pushed the return address of the
 * restorer (mov $15,%rax; syscall: rt_sigreturn) at rsp. */
int dcg_restorer_at(const struct dcg_reader *rd, uint64_t a)
{
	const struct dec *d = dcg_decode_at(rd, a), *e;

	return d && d->mov_rt && (e = dcg_decode_at(rd, a + 7)) && e->syscall;
}

int dcg_sig_entry(const struct dcg_reader *rd, uint64_t rsp)
{
	uint64_t ra;

	return rd->read(rd->ctx, rsp, &ra, sizeof ra) == 0 && dcg_restorer_at(rd, ra);
}
