/* The dynamic call graph's traps: a step of the blockstep and singlestep
 * mechanisms, and the sites and signal entries of the breakpoint one. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "dcg.h"
#include "dcg_internal.h"
#include "lang/stp_internal.h"
#include "probes/process.h"
#include "sym/symbols.h"
#include "arch/x86_64/insn.h"

/* ---- the step mechanisms ---- */

void dcg_on_step(struct _stp_pt_thread *t, void *data)
{
	/* by tid, not data: at the end of the run the engine may still report
	 * a step trap while detaching, after the state is gone */
	struct dthread *d = dcg_find_thread(_stp_pt_tid(t), 0);
	struct user_regs_struct r;

	(void)data;
	dcg_n_stops++;
	if (!d || !d->on || _stp_pt_get_regs(t, &r) < 0)
		return;
	if (dcg_root_event(d))
		return;
	uint64_t pc = d->prev_pc, now = r.rip;
	d->prev_pc = now;
	/* still at the same instruction: a rep-prefixed string instruction
	 * stops after each iteration (a restarted system call too) */
	if (now == pc)
		return;
	/* not the next instruction: a branch, or a signal delivered (the
	 * instructions from pc do not lead to now); a handler's tail call
	 * leaves the restorer at rsp too */
	const struct dec *x0 = pc ? dcg_decode_at(t, pc) : NULL;
	if (x0 && now != pc + x0->len && !dcg_in_handler_frame(d, r.rsp) &&
	    dcg_sig_entry(t, r.rsp)) {
		dcg_enter(d, t, pc, now, r.rsp, 1, 0,
			  (int)(r.rdi & 0x7f) ? (int)(r.rdi & 0x7f) : 1);
		return;
	}
	/* Find the instruction that branched: the first control transfer from
	 * pc (a block when BTF is honoured; one instruction otherwise). */
	for (int i = 0; i < 4096 && pc; i++) {
		const struct dec *x = dcg_decode_at(t, pc);
		if (!x || dcg_transfer(d, t, pc, x, now, r.rsp) || x->syscall)
			return;
		if (pc + x->len == now)
			return;
		pc += x->len;
	}
}

/* ---- the breakpoint mechanism's traps ---- */

static int read_mem(void *ctx, uint64_t addr, void *buf, size_t n)
{
	return _stp_pt_read(ctx, addr, buf, n);
}

static int write_none(void *ctx, uint64_t addr, const void *buf, size_t n)
{
	(void)ctx, (void)addr, (void)buf, (void)n;
	return 0;
}

/* Lazily bound PLT code starts with (endbr64;) push $index. */
static int lazy_plt(struct _stp_pt_thread *t, uint64_t a)
{
	uint8_t b[5];

	if (dcg_is_endbr(t, a))
		a += 4;
	return _stp_pt_read_code(t, a, b, 1) < 0 || b[0] == 0x68;
}

/* A call to a PLT stub whose GOT slot is bound: the function it goes to
 * (0 if not bound yet or not a stub). */
static uint64_t plt_bound(struct _stp_pt_thread *t, uint64_t stub)
{
	uint64_t a = dcg_is_endbr(t, stub) ? stub + 4 : stub, v = 0;
	const struct dec *x = dcg_decode_at(t, a);
	struct _stp_x86_insn in;

	if (!x || !x->ripjmp || _stp_dcg_read_insn(t, a, &in) < 0)
		return 0;
	if (_stp_pt_read(t, a + in.len + (uint64_t)in.mem.disp, &v, sizeof v) < 0 || !v ||
	    dcg_is_stub(t, v) || lazy_plt(t, v))
		return 0;
	return v;
}

/* After a branch or return in d: trap the code the thread goes on with,
 * or, for a callee not descended into, only where it returns to. */
static void follow(struct dthread *d, struct _stp_pt_thread *t, uint64_t now, uint64_t ret_addr)
{
	const struct frame *top = d->nf ? &d->f[d->nf - 1] : NULL;

	if (!d->on)
		return;
	/* entering a function not descended into (a leaf, excluded, too
	 * deep; called, tail-called or reached through a lazy PLT stub) */
	if (top && top->mute && !top->stub) {
		uint64_t ra = ret_addr;
		if (!ra && top->known && _stp_pt_read(t, top->sp, &ra, sizeof ra) < 0)
			ra = 0;
		if (ra)
			_stp_dcg_site_return(t, ra);
		return;
	}
	_stp_dcg_sites_from(t, now);
}

static void branch_site(struct dthread *d, struct _stp_pt_thread *t, uint64_t pc,
			const struct _stp_x86_insn *in, struct user_regs_struct *r)
{
	struct user_regs_struct after = *r;
	struct _stp_x86_mem_ops ops = {read_mem, write_none, t};
	const struct dec *x = dcg_decode_at(t, pc);
	int call = in->kind == STP_X86_CALL || in->kind == STP_X86_CALL_IND;

	/* what the instruction will do; if it faults, the engine gives the
	 * program its SIGSEGV */
	if (!x || _stp_x86_emulate(in, pc, &after, &ops) != 1)
		return;
	uint64_t now = after.rip, bound;
	int jump = in->kind == STP_X86_JMP || (in->kind == STP_X86_JCC && now == in->target);
	if ((call || jump) && dcg_is_stub(t, now) && (bound = plt_bound(t, now))) {
		/* straight to the bound function, as if the stub had run: one
		 * stop less per PLT call or tail call */
		uint64_t ra = pc + in->len;
		if (!call || _stp_pt_write(t, after.rsp, &ra, sizeof ra) == 0) {
			after.rip = now = bound;
			_stp_pt_set_regs(t, &after);
		}
	}
	dcg_transfer(d, t, pc, x, now, after.rsp);
	/* a signal handler returning: what it interrupted is trapped already */
	if (in->kind == STP_X86_RET && dcg_restorer_at(t, now))
		return;
	follow(d, t, now, call ? pc + in->len : 0);
}

/* A return address of a callee not descended into: it has returned. */
static void return_site(struct dthread *d, struct _stp_pt_thread *t, uint64_t pc, uint64_t rsp)
{
	size_t nf0 = d->nf;

	dcg_pop_dead(d, rsp - 1, 0, pc);
	if (d->nf < nf0 && !dcg_restorer_at(t, pc))
		_stp_dcg_sites_from(t, pc);
}

/* The kernel is about to run a signal handler in t (the engine stepped
 * into it): a frame of its own, called from the interrupted function. */
void dcg_on_signal(struct _stp_pt_thread *t, int sig, void *data)
{
	struct dthread *d = dcg_find_thread(_stp_pt_tid(t), 0);
	struct user_regs_struct r;

	(void)data;
	dcg_n_stops++;
	if (!d || !d->on || _stp_pt_get_regs(t, &r) < 0 || dcg_root_event(d))
		return;
	dcg_enter(d, t, 0, r.rip, r.rsp, 1, 0, sig > 0 ? sig : 1);
	follow(d, t, r.rip, 0);
}

int _stp_dcg_on_site(struct _stp_pt_thread *t, struct _stp_pt_probe *p, void *data)
{
	struct dthread *d = dcg_find_thread(_stp_pt_tid(t), 0);
	uint64_t pc = _stp_pt_probe_addr(p);
	const struct _stp_x86_insn *in = NULL;
	struct user_regs_struct r;
	int fl = _stp_dcg_site(_stp_pt_pid(t), pc, &in);

	(void)data;
	if (!fl) {
		/* a fork child's copy, or left over: not wanted any more */
		dcg_n_other++;
		_stp_pt_probe_remove(_stp_pt_thread_proc(t), p);
		return 0;
	}
	if (!d || !d->on || d->pid != _stp_pt_pid(t)) {
		dcg_n_other++;
		return 0;
	}
	dcg_n_stops++;
	if (_stp_pt_get_regs(t, &r) < 0)
		return 0;
	if (dcg_root_event(d))
		return 0;
	if (fl & DCG_SITE_RETURN)
		return_site(d, t, pc, r.rsp);
	if ((fl & DCG_SITE_BRANCH) && d->on)
		branch_site(d, t, pc, in, &r);
	return 0;
}
