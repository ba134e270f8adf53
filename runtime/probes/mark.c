/* SDT semaphores: the 16-bit counter of a .mark probe's marker is raised
 * while the probe is placed (a guarded marker then fires), and put back
 * when its memory is left: at the end of the run, or never when the
 * process (or the library) is gone. A fork child has the parent's
 * counters raised too. */
#include "lang/stp_internal.h"
#include "probes_internal.h"

#include <stdlib.h>
#include <string.h>

struct semrec {
	struct _stp_pt_proc *proc;
	uint64_t addr;
};
static struct semrec *sems;
static size_t nsems, semcap;

static int sem_add(struct _stp_pt_proc *proc, uint64_t addr, int delta)
{
	uint16_t v;
	int rc = _stp_pt_proc_read(proc, addr, &v, sizeof v);

	if (rc == 0) {
		v = (uint16_t)(v + delta);
		rc = _stp_pt_proc_write(proc, addr, &v, sizeof v);
	}
	return rc;
}

static void sem_record(struct _stp_pt_proc *proc, uint64_t addr)
{
	if (nsems == semcap) {
		size_t cap = semcap ? 2 * semcap : 16;
		struct semrec *v = realloc(sems, cap * sizeof *v);
		if (!v)
			return;
		sems = v;
		semcap = cap;
	}
	sems[nsems].proc = proc;
	sems[nsems].addr = addr;
	nsems++;
}

/* Forget proc's semaphores (its memory is gone: exec, exit) or just the
 * one at addr (addr != 0: its library was unmapped). */
void _stp_sem_forget(struct _stp_pt_proc *proc, uint64_t addr)
{
	size_t k = 0;

	for (size_t j = 0; j < nsems; j++) {
		if (sems[j].proc == proc && (!addr || sems[j].addr == addr)) {
			if (addr) {
				addr = 0; /* one record */
				proc = NULL;
			}
			continue;
		}
		sems[k++] = sems[j];
	}
	nsems = k;
}

/* A fork child has its parent's memory, semaphores raised included. */
static void sem_fork(struct _stp_pt_proc *parent, struct _stp_pt_proc *child)
{
	size_t n = nsems;

	/* a vfork or CLONE_VM child shares the parent's semaphores: put back
	 * once, by the parent's record */
	if (_stp_pt_proc_shares_mm(parent, child))
		return;
	for (size_t j = 0; j < n; j++)
		if (sems[j].proc == parent)
			sem_record(child, sems[j].addr);
}

/* End of run: put every semaphore back as it was. */
static void sem_restore_all(void)
{
	for (size_t j = 0; j < nsems; j++)
		sem_add(sems[j].proc, sems[j].addr, -1);
	free(sems);
	sems = NULL;
	nsems = semcap = 0;
}

void _stp_sem_raise(struct _stp_pt_proc *proc, const struct _stp_probe *p, uint64_t bias)
{
	int r = sem_add(proc, p->semaphore + bias, 1);
	if (r == 0)
		sem_record(proc, p->semaphore + bias);
	else
		_stp_msg_warn("couldn't set the semaphore of %s at 0x%llx: %s", p->pp,
			      (unsigned long long)(p->semaphore + bias), strerror(-r));
}

static void mark_image_gone(struct _stp_pt_proc *proc, struct pstate *ps)
{
	(void)ps;
	_stp_sem_forget(proc, 0);
}

static void mark_fork(struct _stp_pt_proc *parent, struct _stp_pt_proc *child, struct pstate *pp,
		      struct pstate *cp)
{
	(void)pp;
	(void)cp;
	sem_fork(parent, child);
}

const struct _stp_proc_kind _stp_proc_mark_kind = {
    .name = "mark",
    .stop = sem_restore_all,
    .image_gone = mark_image_gone,
    .fork = mark_fork,
};
