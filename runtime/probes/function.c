/* Function, statement, mark and plt probes and their .return: engine
 * probes at the module's address + load bias (a .library one at its
 * library's, placed by library.c), the return probes engine return
 * probes (a breakpoint at the return site matched by stack pointer). A
 * run none of whose probes can be placed fails. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "lang/stp_internal.h"
#include "probes_internal.h"

#include <stdlib.h>
#include <string.h>

static int on_hit(struct _stp_pt_thread *t, struct _stp_pt_probe *pr, void *data)
{
	const struct _stp_probe *p = data;
	struct pstate *ps = _stp_proc_pstate(_stp_pt_thread_proc(t));

	if (_stp_proc_can_run() && ps)
		_stp_proc_fire(p, t, 0, _stp_pt_probe_point(t),
			       p->library ? _stp_pt_probe_addr(pr) - p->addr
					  : _stp_proc_bias(p, ps),
			       ps->comm);
	return 0;
}

/* Per probe: how often it was placed, and failed to be. */
static unsigned *placed, *failed;

static int is_placed_kind(const struct _stp_probe *p)
{
	return p->kind == STP_PROBE_PROCESS_FUNCTION || p->kind == STP_PROBE_PROCESS_RETURN;
}

static void count_placement(const struct _stp_probe *p, int rc)
{
	const struct _stp_module *M = _stp_proc_module();

	if (placed && p >= M->probes && p < M->probes + M->nprobes)
		(rc < 0 ? failed : placed)[p - M->probes]++;
}

/* Has every probe to place (optional ones aside) failed, with none
 * placed anywhere and none still waiting for its process or library? */
static int none_placed(void)
{
	const struct _stp_module *M = _stp_proc_module();
	int any = 0;

	for (int i = 0; placed && i < M->nprobes; i++) {
		if (!is_placed_kind(&M->probes[i]) || M->probes[i].optional)
			continue;
		if (placed[i] || !failed[i])
			return 0;
		any = 1;
	}
	return any;
}

static int placement_failed;

/* After probes were placed: all failed ends the run with an error (said
 * once; before the begin probes, the run does not start). */
void _stp_proc_check_placement(void)
{
	if (placement_failed || !none_placed())
		return;
	placement_failed = 1;
	_stp_msg_error("none of the script's probes could be placed");
	if (_stp_session_state == STP_SESSION_RUNNING) {
		_stp_error_count++;
		_stp_exit(NULL);
	}
}

int _stp_proc_placement_failed(void)
{
	return placement_failed;
}

int _stp_proc_add_probe(struct _stp_pt_proc *proc, const struct _stp_probe *p, uint64_t bias,
			struct _stp_pt_probe **out)
{
	int ret = p->kind == STP_PROBE_PROCESS_RETURN;
	int rc = _stp_pt_probe_add(proc, p->addr + bias, ret ? NULL : on_hit, ret ? on_hit : NULL,
				   (void *)p, out);

	count_placement(p, rc);
	if (rc < 0) {
		_stp_msg_warn("couldn't place probe %s at 0x%llx: %s", p->pp,
			      (unsigned long long)(p->addr + bias), strerror(-rc));
		return rc;
	}
	if (p->semaphore)
		_stp_sem_raise(proc, p, bias);
	return rc;
}
static void function_start(const struct _stp_module *m)
{
	placement_failed = 0;
	placed = calloc((size_t)m->nprobes + 1, sizeof *placed);
	failed = calloc((size_t)m->nprobes + 1, sizeof *failed);
}

static void function_finish(void)
{
	free(placed);
	free(failed);
	placed = failed = NULL;
}

/* Put every function and return probe of this process's program in. */
static void function_place(struct _stp_pt_proc *proc, struct pstate *ps, int rc, int attaching)
{
	const struct _stp_module *M = _stp_proc_module();

	(void)attaching;
	for (int i = 0; i < M->nprobes; i++) {
		const struct _stp_probe *p = &M->probes[i];

		if (!is_placed_kind(p) || p->library || !_stp_proc_matches(p, ps))
			continue;
		if (rc < 0) { /* no load address: say why, not a bad address */
			count_placement(p, rc);
			_stp_msg_warn("couldn't place probe %s: can't read the memory map of "
				      "process %d: %s",
				      p->pp, (int)_stp_pt_proc_pid(proc), strerror(-rc));
			continue;
		}
		_stp_proc_add_probe(proc, p, _stp_proc_bias(p, ps), NULL);
	}
	_stp_proc_check_placement();
}

const struct _stp_proc_kind _stp_proc_function_kind = {
    .name = "function",
    .kinds = STP_KIND_BIT(STP_PROBE_PROCESS_FUNCTION) | STP_KIND_BIT(STP_PROBE_PROCESS_RETURN),
    .start = function_start,
    .finish = function_finish,
    .place = function_place,
};
