/* process.thread.begin and .thread.end: a thread of a traced process
 * starts, or one (not the main one: that is process.end) exits. */
#include "lang/stp_internal.h"
#include "probes_internal.h"

#include <string.h>

static void thread_start(struct _stp_pt_thread *t, struct pstate *ps)
{
	_stp_proc_fire_kind(STP_PROBE_PROCESS_THREAD_BEGIN, t, 0, ps);
}

/* The thread is gone: the handler gets its ids, not the thread. */
static void thread_exit(struct _stp_pt_thread *t, struct pstate *ps)
{
	const struct _stp_module *M = _stp_proc_module();
	pid_t pid = _stp_pt_pid(t), tid = _stp_pt_tid(t);

	if (tid == pid)
		return;
	for (int i = 0; i < M->nprobes && _stp_proc_can_run(); i++) {
		const struct _stp_probe *p = &M->probes[i];
		struct _stp_tctx tc;

		if (p->kind != STP_PROBE_PROCESS_THREAD_END || !_stp_proc_matches(p, ps))
			continue;
		memset(&tc, 0, sizeof tc);
		tc.pid = pid;
		tc.tid = tid;
		tc.bias = _stp_proc_bias(p, ps);
		tc.comm = ps->comm;
		_stp_run_probe(p, &tc);
	}
}

const struct _stp_proc_kind _stp_proc_thread_kind = {
    .name = "thread",
    .kinds =
	STP_KIND_BIT(STP_PROBE_PROCESS_THREAD_BEGIN) | STP_KIND_BIT(STP_PROBE_PROCESS_THREAD_END),
    .thread_start = thread_start,
    .thread_exit = thread_exit,
};
