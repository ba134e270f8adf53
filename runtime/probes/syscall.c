/* process.syscall and .syscall.return: the engine's system call stops,
 * on in a process whose program a probe of them names. */
#include "lang/stp_internal.h"
#include "probes_internal.h"

#include <string.h>

static void on_syscall(struct _stp_pt_thread *t, int is_exit, long nr, void *data)
{
	struct pstate *ps = _stp_proc_pstate(_stp_pt_thread_proc(t));
	enum _stp_probe_kind k =
	    is_exit ? STP_PROBE_PROCESS_SYSCALL_RETURN : STP_PROBE_PROCESS_SYSCALL;

	(void)nr;
	(void)data;
	if (ps)
		_stp_proc_fire_kind(k, t, 0, ps);
}

static void syscall_place(struct _stp_pt_proc *proc, struct pstate *ps, int maps_rc, int attaching)
{
	(void)maps_rc;
	(void)attaching;
	if (_stp_proc_wants_kind(ps, STP_PROBE_PROCESS_SYSCALL, STP_PROBE_PROCESS_SYSCALL_RETURN)) {
		int rc = _stp_pt_syscalls(proc, on_syscall, NULL);
		if (rc < 0)
			_stp_msg_warn("couldn't trace the system calls of %s: %s", ps->exe,
				      strerror(-rc));
		ps->syscalls = rc == 0;
	} else if (ps->syscalls) {
		_stp_pt_syscalls(proc, NULL, NULL);
		ps->syscalls = 0;
	}
}

const struct _stp_proc_kind _stp_proc_syscall_kind = {
    .name = "syscall",
    .kinds =
	STP_KIND_BIT(STP_PROBE_PROCESS_SYSCALL) | STP_KIND_BIT(STP_PROBE_PROCESS_SYSCALL_RETURN),
    .place = syscall_place,
};
