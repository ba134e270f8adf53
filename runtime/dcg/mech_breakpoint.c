/* The call graph's breakpoint mechanism: int3 sites (mech_breakpoint_sites.c)
 * on the calls, returns and jumps out of the code the traced thread runs,
 * placed when the code is first reached: a traced call costs two stops
 * (its call and its return; a call into a leaf or excluded function: its
 * call and its return address). Threads that are not traced pay a stop
 * when they run a site (shared code), none in other code. Signal handlers
 * are caught by stepping into them when the engine delivers the signal.
 * When no thread of the process is traced, no int3 is left; the sites and
 * the code walked are kept, and armed again (without reading the code)
 * when tracing is switched on. Code a traced thread maps, unmaps,
 * protects or moves itself is seen at its system calls
 * (mech_breakpoint_mem.c). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "dcg_internal.h"
#include "mech_breakpoint.h"
#include "ptrace/ptrace_engine.h"
#include "arch/x86_64/insn.h"

#include <inttypes.h>
#include <stdio.h>

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
static int lazy_plt(struct dthread *d, uint64_t a)
{
	uint8_t b[5];

	if (dcg_is_endbr(&d->rd, a))
		a += 4;
	return _stp_pt_read_code(d->t, a, b, 1) < 0 || b[0] == 0x68;
}

/* A call to a PLT stub whose GOT slot is bound: the function it goes to
 * (0 if not bound yet or not a stub). */
static uint64_t plt_bound(struct dthread *d, uint64_t stub)
{
	uint64_t a = dcg_is_endbr(&d->rd, stub) ? stub + 4 : stub, v = 0;
	const struct dec *x = dcg_decode_at(&d->rd, a);
	struct _stp_x86_insn in;

	if (!x || !x->ripjmp || _stp_dcg_read_insn(&d->rd, a, &in) < 0)
		return 0;
	if (_stp_pt_read(d->t, a + in.len + (uint64_t)in.mem.disp, &v, sizeof v) < 0 || !v ||
	    dcg_is_stub(&d->rd, v) || lazy_plt(d, v))
		return 0;
	return v;
}

/* After a branch or return in d: trap the code the thread goes on with,
 * or, for a callee not descended into, only where it returns to. */
static void follow(struct dthread *d, uint64_t now, uint64_t ret_addr)
{
	const struct frame *top = d->nf ? &d->f[d->nf - 1] : NULL;

	if (!d->on)
		return;
	/* entering a function not descended into (a leaf, excluded, too
	 * deep; called, tail-called or reached through a lazy PLT stub) */
	if (top && top->mute && !top->stub) {
		uint64_t ra = ret_addr;
		if (!ra && top->known && _stp_pt_read(d->t, top->sp, &ra, sizeof ra) < 0)
			ra = 0;
		if (ra)
			_stp_dcg_site_return(d, ra);
		return;
	}
	_stp_dcg_sites_from(d, now);
}

static void branch_site(struct dthread *d, uint64_t pc, const struct _stp_x86_insn *in,
			struct user_regs_struct *r, int64_t ns)
{
	struct user_regs_struct after = *r;
	struct _stp_x86_mem_ops ops = {read_mem, write_none, d->t};
	const struct dec *x = dcg_decode_at(&d->rd, pc);
	int call = in->kind == STP_X86_CALL || in->kind == STP_X86_CALL_IND;

	/* what the instruction will do; if it faults, the engine gives the
	 * program its SIGSEGV */
	if (!x || _stp_x86_emulate(in, pc, &after, &ops) != 1)
		return;
	uint64_t now = after.rip, bound;
	int jump = in->kind == STP_X86_JMP || (in->kind == STP_X86_JCC && now == in->target);
	if ((call || jump) && dcg_is_stub(&d->rd, now) && (bound = plt_bound(d, now))) {
		/* straight to the bound function, as if the stub had run: one
		 * stop less per PLT call or tail call */
		uint64_t ra = pc + in->len;
		if (!call || _stp_pt_write(d->t, after.rsp, &ra, sizeof ra) == 0) {
			after.rip = now = bound;
			_stp_pt_set_regs(d->t, &after);
		}
	}
	dcg_ran(d, pc, x, now, after.rsp, ns);
	/* a signal handler returning: what it interrupted is trapped already */
	if (in->kind == STP_X86_RET && dcg_restorer_at(&d->rd, now))
		return;
	follow(d, now, call ? pc + in->len : 0);
}

/* A return address of a callee not descended into: it has returned. */
static void return_site(struct dthread *d, uint64_t pc, uint64_t rsp, int64_t ns)
{
	size_t nf0 = d->nf;
	struct dcg_event e = {.kind = DCG_EV_RETURN, .to = pc, .sp = rsp, .ns = ns};

	dcg_event(d, &e);
	if (d->nf < nf0 && !dcg_restorer_at(&d->rd, pc))
		_stp_dcg_sites_from(d, pc);
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
		_stp_pt_stop_uncounted(t);
		_stp_pt_probe_remove(_stp_pt_thread_proc(t), p);
		return 0;
	}
	if (!d || !d->on || d->pid != _stp_pt_pid(t)) {
		/* a thread not traced keeps its CPUs */
		dcg_n_other++;
		_stp_pt_stop_uncounted(t);
		return 0;
	}
	dcg_n_stops++;
	if (_stp_pt_get_regs(t, &r) < 0)
		return 0;
	int64_t ns = dcg_now_ns();
	if (dcg_stopped(d, ns))
		return 0;
	if (fl & DCG_SITE_RETURN)
		return_site(d, pc, r.rsp, ns);
	if ((fl & DCG_SITE_BRANCH) && d->on)
		branch_site(d, pc, in, &r, ns);
	return 0;
}

/* The kernel is about to run a signal handler in d (the engine stepped
 * into it): a frame of its own, called from the interrupted function. */
static void bp_signal(struct dthread *d, int sig)
{
	struct user_regs_struct r;

	dcg_n_stops++;
	if (!d->on || _stp_pt_get_regs(d->t, &r) < 0)
		return;
	int64_t ns = dcg_now_ns();
	if (dcg_stopped(d, ns))
		return;
	struct dcg_event e = {
	    .kind = DCG_EV_SIGNAL, .to = r.rip, .sp = r.rsp, .ns = ns, .sig = sig};
	dcg_event(d, &e);
	follow(d, r.rip, 0);
}

/* ---- the mechanism ---- */

static int bp_on(struct dthread *d, uint64_t pc)
{
	int rc = _stp_dcg_sites_from(d, pc);

	if (rc < 0)
		return rc;
	dcg_pt_signal_entries(d, 1);
	_stp_dcg_bp_watch_mem(d->t, 1);
	_stp_pt_colocate(d->t, 1); /* two stops a call: on the tracer's CPU */
	return 0;
}

static void bp_off(struct dthread *d, enum dcg_off how, int last)
{
	if (how == DCG_OFF_SCRIPT)
		dcg_pt_signal_entries(d, 0);
	_stp_dcg_bp_watch_mem(d->t, 0);
	if (how == DCG_OFF_SCRIPT || how == DCG_OFF_END) /* else the engine's */
		_stp_pt_colocate(d->t, 0);
	/* the last traced thread of its process: the sites go (at the end
	 * of the run the engine's detach removes them; exec forgets them) */
	if (last && (how == DCG_OFF_SCRIPT || how == DCG_OFF_GONE))
		_stp_dcg_sites_release(d->pid);
}

static void bp_mem_changed(pid_t pid, struct _stp_pt_thread *t, enum dcg_mem what)
{
	(void)t;
	if (what == DCG_MEM_LIBS)
		_stp_dcg_sites_unmapped(pid);
	else
		_stp_dcg_sites_forget(pid);
}

static void bp_report(char *how, size_t len)
{
	uint64_t rearms = 0, sites = _stp_dcg_sites_placed(&rearms);
	uint64_t sys = _stp_pt_watch_syscall_stops();
	char again[64] = "", stops[64] = "";

	if (rearms)
		snprintf(again, sizeof again, ", armed again %" PRIu64 " times", rearms);
	if (sys)
		snprintf(stops, sizeof stops, ", %" PRIu64 " system-call stops", sys);
	snprintf(how, len, " (int3 at %" PRIu64 " calls, returns and jumps%s%s)", sites, again,
		 stops);
}

const struct dcg_mech dcg_mech_breakpoint = {
    .name = "breakpoint",
    .auto_rank = 3,
    .thread_on = bp_on,
    .thread_off = bp_off,
    .mem_changed = bp_mem_changed,
    .signal = bp_signal,
    .report = bp_report,
    .finish = _stp_dcg_sites_free,
};
