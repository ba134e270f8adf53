/* The context API's backend for a thread stopped under the ptrace engine:
 * today's, the only file of target/ that calls the engine. */
#include "backend.h"
#include "ptrace/ptrace_engine.h"

static struct _stp_pt_thread *pt(struct _stp_tctx *tc)
{
	return tc->thread;
}

static int pt_get_regs(struct _stp_tctx *tc, struct user_regs_struct *r)
{
	return _stp_pt_get_regs(pt(tc), r);
}

static int pt_set_regs(struct _stp_tctx *tc, const struct user_regs_struct *r)
{
	return _stp_pt_set_regs(pt(tc), r);
}

static int pt_read(struct _stp_tctx *tc, uint64_t addr, void *buf, size_t len)
{
	return _stp_pt_read(pt(tc), addr, buf, len);
}

static int pt_write(struct _stp_tctx *tc, uint64_t addr, const void *buf, size_t len)
{
	return _stp_pt_write(pt(tc), addr, buf, len);
}

static const struct _stp_target_ops ptrace_ops = {
    .name = "ptrace",
    .get_regs = pt_get_regs,
    .set_regs = pt_set_regs,
    .read = pt_read,
    .write = pt_write,
};

void _stp_tctx_ptrace(struct _stp_tctx *tc, struct _stp_pt_thread *t)
{
	tc->ops = t ? &ptrace_ops : NULL;
	tc->thread = t;
	if (t) {
		tc->pid = _stp_pt_pid(t);
		tc->tid = _stp_pt_tid(t);
	}
}

struct _stp_pt_thread *_stp_tctx_pt_thread(const struct _stp_tctx *tc)
{
	return tc && tc->ops == &ptrace_ops ? tc->thread : NULL;
}
