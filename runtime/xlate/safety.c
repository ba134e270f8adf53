/* The safety net of an attached process (cfg.protect, for -x): if staprun
 * dies, even by SIGKILL, the kernel detaches the process and every int3
 * of ours (probes, return probes, the agent's doorbell, trap stubs) would
 * kill it with SIGTRAP. A SIGTRAP handler of ours (the agent's
 * xl_sigtrap, in a process region: layout.h, struct xl_pctl) restores the
 * original byte of a breakpoint when a thread meets it, sends a thread at
 * a trap stub or its doorbell back to native code for good, and passes
 * any other SIGTRAP on to the program's own action. staprun keeps the
 * mirror of the ptrace engine's breakpoints it needs up to date. Under a
 * live tracer the handler never runs (the tracer gets SIGTRAP first). */
#include "xlate/xl_internal.h"
#include "xlate/agent.h"

#include <errno.h>
#include <signal.h>
#include <stddef.h>
#include <string.h>
#include <sys/syscall.h>

#define SA_RESTORER_ 0x04000000

static struct xl_pctl *pctl_of(struct xl_proc *xp)
{
	return (struct xl_pctl *)(xp->preg.mem + XL_CTL_OFF);
}

void xl_mirror_bkpt(struct xl_proc *xp, uint64_t addr, int armed, uint8_t orig)
{
	struct xl_pctl *p = pctl_of(xp);
	uint64_t i = (addr * 0x9E3779B97F4A7C15ull) >> (64 - XL_PBK_BITS), tomb = UINT64_MAX;

	for (unsigned n = 0; n < XL_PBK_N; n++, i = (i + 1) & (XL_PBK_N - 1)) {
		struct xl_pbk *b = &p->bk[i];
		if (b->addr == addr) {
			if (!armed)
				b->addr = 1;
			else
				b->orig = orig;
			return;
		}
		if (b->addr == 1 && tomb == UINT64_MAX)
			tomb = i;
		if (!b->addr)
			break;
	}
	if (!armed)
		return;
	if (tomb == UINT64_MAX)
		tomb = i;
	if (p->bk[tomb].addr > 1)
		return; /* full (4096 int3s at once): not mirrored */
	/* the byte first: a handler never sees an address with a wrong one */
	p->bk[tomb].orig = orig;
	__atomic_store_n(&p->bk[tomb].addr, addr, __ATOMIC_RELEASE);
}

void xl_protect_region(struct xl_proc *xp, uint64_t region)
{
	struct xl_pctl *p;

	if (!xp->pctl)
		return;
	p = pctl_of(xp);
	for (uint64_t i = 0; i < p->nregions; i++)
		if (p->regions[i] == region)
			return;
	if (p->nregions < XL_PREGIONS)
		p->regions[p->nregions++] = region;
}

/* Map the process region through stopped thread t, install the handler
 * (the program's SIGTRAP action kept for it to chain to) and fill the
 * mirror with the int3s there now. */
int xl_protect(struct xl_proc *xp, struct _stp_pt_thread *t)
{
	struct xl_pctl *p;
	int rc;

	if (xp->pctl)
		return 0;
	if ((rc = xl_map_pregion(xp, t, &xp->preg)) < 0)
		return rc;
	memcpy(xp->preg.mem, _stp_xl_agent.code, _stp_xl_agent.size);
	p = pctl_of(xp);
	memset(p, 0, sizeof *p);
	p->act.handler = xp->preg.addr + _stp_xl_agent.sigtrap;
	p->act.flags = SA_SIGINFO | SA_ONSTACK | SA_RESTORER_;
	p->act.restorer = xp->preg.addr + _stp_xl_agent.restorer;
	uint64_t a[6] = {SIGTRAP,
			 xp->preg.addr + XL_CTL_OFF + offsetof(struct xl_pctl, act),
			 xp->preg.addr + XL_CTL_OFF + offsetof(struct xl_pctl, old),
			 8,
			 0,
			 0};
	int64_t ret;
	if ((rc = _stp_pt_inject_syscall(t, SYS_rt_sigaction, a, &ret)) < 0)
		return rc;
	if (ret < 0)
		return (int)ret;
	xp->pctl = 1;
	for (struct xl_thread *xt = xp->threads; xt; xt = xt->next)
		xl_protect_region(xp, xt->rg.addr);
	/* again: the mirror gets the int3s armed before now */
	_stp_pt_watch_breakpoints(xp->p, xl_watch_fn, xp);
	xl_debug("SIGTRAP handler of %d at %#llx", (int)xp->pid,
		 (unsigned long long)p->act.handler);
	return 0;
}

/* The program's SIGTRAP action back (the process is left as found). */
int xl_unprotect(struct xl_proc *xp, struct _stp_pt_thread *t)
{
	int64_t ret;

	if (!xp->pctl)
		return 0;
	uint64_t a[6] = {
	    SIGTRAP, xp->preg.addr + XL_CTL_OFF + offsetof(struct xl_pctl, old), 0, 8, 0, 0};
	int rc = _stp_pt_inject_syscall(t, SYS_rt_sigaction, a, &ret);
	xp->pctl = 0;
	return rc < 0 ? rc : ret < 0 ? (int)ret : 0;
}
