/* The step mechanisms of the call graph: blockstep (PTRACE_SINGLEBLOCK:
 * a stop at each taken branch where the processor honours BTF, else
 * after every instruction: still correct, only slower) and singlestep
 * (PTRACE_SINGLESTEP, a reference for tests). At each stop the
 * instructions run since the previous one are decoded and the branch
 * among them fed to the core; a stop at a signal handler's entry is the
 * signal's event. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "dcg_internal.h"
#include "ptrace/ptrace_engine.h"
#include "arch/x86_64/insn.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static int btf = -2; /* _stp_pt_blockstep_honoured(), -2: not asked */

static void on_step(struct _stp_pt_thread *t, void *data)
{
	/* by tid, not data: at the end of the run the engine may still report
	 * a step trap while detaching, after the state is gone */
	struct dthread *d = dcg_find_thread(_stp_pt_tid(t), 0);
	struct user_regs_struct r;

	(void)data;
	dcg_n_stops++;
	if (!d || !d->on || _stp_pt_get_regs(t, &r) < 0)
		return;
	int64_t ns = dcg_now_ns();
	if (dcg_stopped(d, ns))
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
	const struct dec *x0 = pc ? dcg_decode_at(&d->rd, pc) : NULL;
	if (x0 && now != pc + x0->len && !dcg_in_handler_frame(d, r.rsp) &&
	    dcg_sig_entry(&d->rd, r.rsp)) {
		struct dcg_event e = {.kind = DCG_EV_SIGNAL,
				      .from = pc,
				      .to = now,
				      .sp = r.rsp,
				      .ns = ns,
				      .sig = (int)(r.rdi & 0x7f)};
		dcg_event(d, &e);
		return;
	}
	/* Find the instruction that branched: the first control transfer from
	 * pc (a block when BTF is honoured; one instruction otherwise). */
	for (int i = 0; i < 4096 && pc; i++) {
		const struct dec *x = dcg_decode_at(&d->rd, pc);
		if (!x || dcg_ran(d, pc, x, now, r.rsp, ns))
			return;
		if (x->syscall) {
			/* the restorer's rt_sigreturn, back where the signal came */
			if (now != pc + x->len && pc >= 7 && dcg_restorer_at(&d->rd, pc - 7)) {
				struct dcg_event e = {.kind = DCG_EV_SIGRETURN,
						      .from = pc,
						      .to = now,
						      .sp = r.rsp,
						      .ns = ns};
				dcg_event(d, &e);
			}
			return;
		}
		if (pc + x->len == now)
			return;
		pc += x->len;
	}
}

static int step_on(struct dthread *d, int mode)
{
	return _stp_pt_step_mode(d->t, mode, on_step, NULL);
}

static int block_on(struct dthread *d, uint64_t pc)
{
	(void)pc;
	return step_on(d, _STP_PT_STEP_BLOCK);
}

static int insn_on(struct dthread *d, uint64_t pc)
{
	(void)pc;
	return step_on(d, _STP_PT_STEP_INSN);
}

static void step_off(struct dthread *d, enum dcg_off how, int last)
{
	(void)last;
	/* at exit and exec the engine has dropped the mode; at the end of
	 * the run its detach must still find it */
	if (how == DCG_OFF_SCRIPT)
		_stp_pt_step_mode(d->t, _STP_PT_STEP_NONE, NULL, NULL);
}

/* blockstep where the processor stops only at taken branches; elsewhere
 * it would stop at every instruction (auto takes breakpoint then) */
static int block_usable(char *why, size_t len)
{
	if (btf == -2)
		btf = _stp_pt_blockstep_honoured();
	if (btf == 1)
		return 1;
	if (btf == 0)
		snprintf(why, len,
			 "the processor ignores BTF (it would stop after every instruction)");
	else
		snprintf(why, len, "the BTF self-test failed: %s", strerror(-btf));
	return 0;
}

static void block_report(char *how, size_t len)
{
	if (btf == -2)
		btf = _stp_pt_blockstep_honoured();
	snprintf(how, len, "%s",
		 btf == 1 ? " (BTF honoured: stops at taken branches)"
			  : " (BTF not honoured: stops after every instruction)");
}

static void insn_report(char *how, size_t len)
{
	snprintf(how, len, " (stops after every instruction)");
}

const struct dcg_mech dcg_mech_blockstep = {
    .name = "blockstep",
    .auto_rank = 1,
    .usable = block_usable,
    .thread_on = block_on,
    .thread_off = step_off,
    .report = block_report,
};

const struct dcg_mech dcg_mech_singlestep = {
    .name = "singlestep",
    .thread_on = insn_on,
    .thread_off = step_off,
    .report = insn_report,
};
