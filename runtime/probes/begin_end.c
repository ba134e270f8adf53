/* process.begin and process.end: begin once per process and probe, when
 * the process first matches it (launched or attached, forked by a process
 * it matches, or an exec into the image a probe names); end when it
 * exits. */
#include "lang/stp_internal.h"
#include "probes_internal.h"

#include <stdlib.h>

/* t NULL: the process of pid, stopped with no thread at hand. */
static void fire_begin(struct _stp_pt_thread *t, pid_t pid, struct pstate *ps)
{
	const struct _stp_module *M = _stp_proc_module();

	for (int i = 0; i < M->nprobes && _stp_proc_can_run(); i++) {
		const struct _stp_probe *p = &M->probes[i];

		if (p->kind != STP_PROBE_PROCESS_BEGIN || !_stp_proc_matches(p, ps) ||
		    (ps->begun && ps->begun[i]))
			continue;
		if (!ps->begun)
			ps->begun = calloc((size_t)M->nprobes, 1);
		if (ps->begun)
			ps->begun[i] = 1;
		_stp_proc_fire(p, t, pid, 0, _stp_proc_bias(p, ps), ps->comm);
	}
}

/* The first exec of a -c command happens before the begin probes;
 * process.begin then waits for the release. */
static void begin_exec(struct _stp_pt_thread *t, struct pstate *ps)
{
	const struct _stp_module *M = _stp_proc_module();

	/* a new image: the probes naming one may begin again */
	for (int i = 0; ps->begun && i < M->nprobes; i++)
		if (M->probes[i].module && *M->probes[i].module)
			ps->begun[i] = 0;
	fire_begin(t, 0, ps);
}

static void begin_fork(struct _stp_pt_proc *parent, struct _stp_pt_proc *child, struct pstate *pp,
		       struct pstate *cp)
{
	(void)parent;
	if (!pp || !cp)
		return;
	cp->begun = NULL;
	fire_begin(NULL, _stp_pt_proc_pid(child), cp);
}

/* The program already loaded (-c: the first exec happened during the
 * launch; -x: the attached process). */
static void begin_release(pid_t root_pid, struct pstate *ps)
{
	fire_begin(NULL, root_pid, ps);
}

static void end_proc_exit(struct _stp_pt_proc *proc, struct pstate *ps)
{
	_stp_proc_fire_kind(STP_PROBE_PROCESS_END, NULL, _stp_pt_proc_pid(proc), ps);
}

static void begin_free_state(struct pstate *ps)
{
	free(ps->begun);
}

const struct _stp_proc_kind _stp_proc_begin_end_kind = {
    .name = "begin_end",
    .kinds = STP_KIND_BIT(STP_PROBE_PROCESS_BEGIN) | STP_KIND_BIT(STP_PROBE_PROCESS_END),
    .exec = begin_exec,
    .fork = begin_fork,
    .release = begin_release,
    .proc_exit = end_proc_exit,
    .free_state = begin_free_state,
};
