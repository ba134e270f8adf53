/* The context API's backend for a handler fired from a record: the
 * registers the record captured, and no thread stopped, so no memory (and
 * no register written back) at this event. */
#include "backend.h"

#include <errno.h>
#include <string.h>

static int rec_get_regs(struct _stp_tctx *tc, struct user_regs_struct *r)
{
	/* the record's registers were copied in at the start */
	if (r != &tc->regs)
		memcpy(r, &tc->regs, sizeof *r);
	return 0;
}

static int rec_set_regs(struct _stp_tctx *tc, const struct user_regs_struct *r)
{
	(void)tc;
	(void)r;
	return -ENODATA;
}

static int rec_read(struct _stp_tctx *tc, uint64_t addr, void *buf, size_t len)
{
	(void)tc;
	(void)addr;
	(void)buf;
	(void)len;
	return -ENODATA;
}

static int rec_write(struct _stp_tctx *tc, uint64_t addr, const void *buf, size_t len)
{
	(void)tc;
	(void)addr;
	(void)buf;
	(void)len;
	return -ENODATA;
}

static const struct _stp_target_ops record_ops = {
    .name = "record",
    .get_regs = rec_get_regs,
    .set_regs = rec_set_regs,
    .read = rec_read,
    .write = rec_write,
};

void _stp_tctx_record(struct _stp_tctx *tc, pid_t pid, pid_t tid,
		      const struct user_regs_struct *regs)
{
	tc->ops = &record_ops;
	tc->thread = NULL;
	tc->pid = pid;
	tc->tid = tid;
	memcpy(&tc->regs, regs, sizeof tc->regs);
	tc->have_regs = 1;
}
