/* Registers and memory of traced threads, as the engine's clients see
 * them: registers are fetched once per stop and written back at resume;
 * memory reads show the original bytes under our int3s, and writes keep
 * the int3s in place. */
#include "ptrace_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>

/* ---- registers, memory ---- */

int _stp_pt_fetch_regs(struct _stp_pt_thread *t)
{
	if (t->regs_valid)
		return 0;
	if (t->state != PT_STOPPED)
		return -ESRCH;
	if (ptrace(PTRACE_GETREGS, t->tid, 0, &t->regs) < 0)
		return -errno;
	t->regs_valid = 1;
	return 0;
}

int _stp_pt_get_regs(struct _stp_pt_thread *t, struct user_regs_struct *r)
{
	int rc = _stp_pt_fetch_regs(t);

	if (rc == 0)
		*r = t->regs;
	return rc;
}

int _stp_pt_resume_signal(const struct _stp_pt_thread *t)
{
	return t->resume_sig;
}

void _stp_pt_set_resume_signal(struct _stp_pt_thread *t, int sig)
{
	t->resume_sig = sig;
}

int _stp_pt_set_regs(struct _stp_pt_thread *t, const struct user_regs_struct *r)
{
	int rc = _stp_pt_fetch_regs(t);

	if (rc < 0)
		return rc;
	t->regs = *r;
	t->regs_dirty = 1;
	return 0;
}

int _stp_pt_read(struct _stp_pt_thread *t, uint64_t addr, void *buf, size_t len)
{
	return t->proc->mm ? _stp_pt_mm_read(t->proc->mm, addr, buf, len) : -ESRCH;
}

int _stp_pt_proc_read(struct _stp_pt_proc *p, uint64_t addr, void *buf, size_t len)
{
	return p->mm ? _stp_pt_mm_read(p->mm, addr, buf, len) : -ESRCH;
}

/* Call fn for every armed breakpoint in [addr, addr+len). */
static void each_bk_in(struct pt_mm *mm, uint64_t addr, size_t len,
		       void (*fn)(struct _stp_pt_bkpt *, uint8_t *, uint64_t), uint8_t *buf)
{
	if (len <= 64) {
		for (size_t i = 0; i < len; i++) {
			struct _stp_pt_bkpt *bk = _stp_pt_bk_find(mm, addr + i);
			if (bk && bk->live)
				fn(bk, buf, addr);
		}
		return;
	}
	for (int b = 0; b < PT_BK_BUCKETS; b++)
		for (struct _stp_pt_bkpt *bk = mm->bk[b]; bk; bk = bk->next)
			if (bk->live && bk->addr >= addr && bk->addr - addr < len)
				fn(bk, buf, addr);
}

static void show_orig(struct _stp_pt_bkpt *bk, uint8_t *buf, uint64_t addr)
{
	buf[bk->addr - addr] = bk->orig;
}

int _stp_pt_read_code(struct _stp_pt_thread *t, uint64_t addr, void *buf, size_t len)
{
	int rc = _stp_pt_read(t, addr, buf, len);

	if (rc == 0)
		each_bk_in(t->proc->mm, addr, len, show_orig, buf);
	return rc;
}

static void keep_int3(struct _stp_pt_bkpt *bk, uint8_t *buf, uint64_t addr)
{
	bk->orig = buf[bk->addr - addr];
	buf[bk->addr - addr] = 0xcc;
}

int _stp_pt_write(struct _stp_pt_thread *t, uint64_t addr, const void *buf, size_t len)
{
	return _stp_pt_proc_write(t->proc, addr, buf, len);
}

int _stp_pt_proc_write(struct _stp_pt_proc *p, uint64_t addr, const void *buf, size_t len)
{
	struct pt_mm *mm = p->mm;
	uint8_t small[64], *copy = small;
	int rc;

	if (!mm)
		return -ESRCH;
	if (len > sizeof small && !(copy = malloc(len)))
		return -ENOMEM;
	memcpy(copy, buf, len);
	each_bk_in(mm, addr, len, keep_int3, copy);
	rc = _stp_pt_mm_write(mm, addr, copy, len);
	if (copy != small)
		free(copy);
	return rc;
}
