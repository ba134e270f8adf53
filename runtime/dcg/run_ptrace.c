/* The call graph's ptrace side: the script's $dynamic_call_graph from a
 * handler's context, the run's hooks (process_probes.c: threads,
 * exec, exit, libraries), the script's dynamic_call_graph.call/.return
 * probes, and the ptrace engine behind the core's interfaces (the code
 * reader, signal handler entries). Everything else of the core runs
 * without the engine. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "dcg.h"
#include "dcg_internal.h"
#include "lang/stp_internal.h"
#include "probes/process.h"
#include "sym/symbols.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/* ---- the script's calls ---- */

void _stp_dcg_set(struct _stp_context *c, int64_t on, const char *m)
{
	struct _stp_tctx *tc = c ? (struct _stp_tctx *)c->target : NULL;
	struct user_regs_struct r;

	/* off also from a handler fired from a record (no thread stopped) */
	if (!on && tc && tc->ops) {
		struct dthread *d = dcg_find_thread(tc->tid, 0);
		if (d)
			dcg_thread_off(d, DCG_OFF_SCRIPT);
		return;
	}
	if (!_stp_tctx_pt_thread(tc))
		return;
	struct dthread *d = dcg_find_thread(tc->tid, 1);
	if (!d)
		return;
	if (d->on) /* on twice: nothing changes */
		return;
	dcg_mech_pick(m); /* the -D's choice, once */
	if (_stp_pt_get_regs(_stp_tctx_pt_thread(tc), &r) < 0)
		return;
	/* dlclose: what was decoded and symbolized there must go */
	_stp_proc_watch_libraries(_stp_pt_thread_proc(_stp_tctx_pt_thread(tc)));
	d->t = _stp_tctx_pt_thread(tc);
	d->pid = tc->pid;
	dcg_pt_reader(&d->rd, _stp_tctx_pt_thread(tc));
	_stp_ctx_execname(c, d->comm, sizeof d->comm);
	if (dcg_thread_on(d, r.rip, r.rsp) < 0)
		d->t = NULL;
}

int64_t _stp_dcg_get(struct _stp_context *c)
{
	struct _stp_tctx *tc = c ? (struct _stp_tctx *)c->target : NULL;
	struct dthread *d = tc ? dcg_find_thread(tc->tid, 0) : NULL;

	return d && d->on;
}

/* ---- the run's hooks ---- */

void _stp_dcg_thread_gone(pid_t tid)
{
	struct dthread *d = dcg_find_thread(tid, 0);

	if (d)
		dcg_thread_off(d, DCG_OFF_GONE);
	dcg_thread_exit(tid);
}

void _stp_dcg_thread_start(struct _stp_pt_thread *t)
{
	dcg_new_thread(t);
}

void _stp_dcg_exec(pid_t pid)
{
	dcg_mem_changed(pid, NULL, DCG_MEM_EXEC);
}

void _stp_dcg_proc_gone(pid_t pid)
{
	dcg_mem_changed(pid, NULL, DCG_MEM_EXIT);
}

void _stp_dcg_libs_changed(struct _stp_pt_thread *t)
{
	dcg_mem_changed(_stp_pt_pid(t), t, DCG_MEM_LIBS);
}

/* ---- the engine behind the core's interfaces ---- */

static int read_code(void *ctx, uint64_t addr, void *buf, size_t len)
{
	return _stp_pt_read_code(ctx, addr, buf, len);
}

void dcg_pt_reader(struct dcg_reader *rd, struct _stp_pt_thread *t)
{
	rd->read = read_code;
	rd->ctx = t;
	rd->pid = _stp_pt_pid(t);
}

static void on_signal(struct _stp_pt_thread *t, int sig, void *data)
{
	struct dthread *d = dcg_find_thread(_stp_pt_tid(t), 0);

	(void)data;
	if (d && d->on && d->mech->signal)
		d->mech->signal(d, sig);
}

void dcg_pt_signal_entries(struct dthread *d, int on)
{
	_stp_pt_signal_step(d->t, on ? on_signal : NULL, NULL);
}

/* ---- dynamic_call_graph.call / .return probes ---- */

static int want_call = -1, want_ret;
static struct {
	int active, kind;
	pid_t pid;
	uint64_t from, to, caller, callee;
	int64_t depth, tail, ns, dur;
	uint64_t arg[6], ret; /* arg1..arg6 of a call, retval of a return */
} ev;

/* arg1..arg6 (call) or retval (return) of the event being fired, when the
 * script uses them, from the record (late: the handler gets the record
 * backend) or the thread stopped at it; 0 where not known: the
 * root's call (tracing began inside it), a frame left by longjmp, a
 * record that did not capture them. */
static void event_regs(struct dthread *d, int kind, uint32_t depth, struct _stp_tctx *tc)
{
	const struct dcg_event *e = d->ev;
	struct user_regs_struct r;
	uint64_t v[7] = {0};

	/* late: from a record; the root's call under such a mechanism too,
	 * unless the thread is held at the event being read */
	if (e ? e->late : d->mech && d->mech->late && !d->held) {
		if (e && e->regs)
			memcpy(v, e->regs, sizeof v);
		memset(&r, 0, sizeof r);
		r.rdi = v[0], r.rsi = v[1], r.rdx = v[2], r.rcx = v[3], r.r8 = v[4], r.r9 = v[5];
		r.rax = v[6];
		r.rip = tc->uaddr;
		r.rsp = e ? e->sp : 0;
		_stp_tctx_record(tc, d->pid, d->tid, &r);
	} else if ((dcg_capture() & (DCG_CAP_ARGS | DCG_CAP_RET)) && tc->ops &&
		   tc->ops->get_regs(tc, &r) == 0) {
		v[0] = r.rdi, v[1] = r.rsi, v[2] = r.rdx, v[3] = r.rcx, v[4] = r.r8, v[5] = r.r9;
		v[6] = r.rax;
	}
	if (kind == DCG_CALL && depth) /* not the root */
		memcpy(ev.arg, v, sizeof ev.arg);
	else if (kind != DCG_CALL && !d->unwinding)
		ev.ret = v[6];
}

void dcg_probes_reset(void)
{
	want_call = -1;
}

int dcg_probes_wanted(void)
{
	if (want_call < 0) {
		const struct _stp_module *m = _stp_proc_module();
		want_call = want_ret = 0;
		for (int i = 0; m && i < m->nprobes; i++) {
			want_call |= m->probes[i].kind == STP_PROBE_DCG_CALL;
			want_ret |= m->probes[i].kind == STP_PROBE_DCG_RETURN;
		}
	}
	return want_call || want_ret;
}

void dcg_fire_event(struct dthread *d, int kind, uint32_t depth, uint64_t from, uint64_t to,
		    uint64_t name)
{
	const struct _stp_module *m = _stp_proc_module();
	enum _stp_probe_kind pk = kind == DCG_CALL ? STP_PROBE_DCG_CALL : STP_PROBE_DCG_RETURN;
	const struct frame *f = depth < d->capf ? &d->f[depth] : NULL;
	struct _stp_tctx tc;

	if (!m || !d->t || ev.active || (kind == DCG_CALL ? !want_call : !want_ret))
		return;
	memset(&ev, 0, sizeof ev);
	ev.kind = kind;
	ev.pid = d->pid;
	ev.from = from;
	ev.to = to;
	ev.depth = depth;
	ev.ns = (int64_t)d->now;
	ev.callee = name;
	if (kind == DCG_CALL) {
		ev.caller = from ? dcg_func_of(d->pid, from) : 0;
		ev.tail = f ? f->tail : 0;
	} else {
		ev.caller = dcg_func_of(d->pid, to);
		ev.dur = f ? ev.ns - (int64_t)f->ns : 0;
	}
	memset(&tc, 0, sizeof tc);
	_stp_tctx_ptrace(&tc, d->t);
	tc.pid = d->pid;
	tc.tid = d->tid;
	tc.uaddr = kind == DCG_CALL ? to : from;
	tc.comm = d->comm;
	event_regs(d, kind, depth, &tc);
	ev.active = 1;
	for (int i = 0; i < m->nprobes; i++)
		if (m->probes[i].kind == pk && _stp_session_state == STP_SESSION_RUNNING &&
		    !_stp_exit_requested)
			_stp_run_probe(&m->probes[i], &tc);
	ev.active = 0;
}

int64_t _stp_dcg_event(struct _stp_context *c, int field)
{
	(void)c;
	if (!ev.active)
		return 0;
	switch (field) {
	case 0:
		return (int64_t)ev.from;
	case 1:
		return (int64_t)ev.to;
	case 2:
		return ev.depth;
	case 3:
		return ev.tail;
	case 4:
		return ev.ns;
	case 5:
		return ev.dur;
	case 6: /* arg1..arg6 */
	case 7:
	case 8:
	case 9:
	case 10:
	case 11:
		return (int64_t)ev.arg[field - 6];
	case 12:
		return (int64_t)ev.ret;
	default:
		return 0;
	}
}

void _stp_dcg_event_name(struct _stp_context *c, int which, char *dst, size_t len)
{
	uint64_t a = which ? ev.callee : ev.caller;
	struct _stp_symtab *st;

	(void)c;
	if (!len)
		return;
	dst[0] = '\0';
	if (!ev.active || !a)
		return;
	if ((st = dcg_symtab_of(ev.pid)))
		_stp_sym_cgname(st, a, dst, len);
	else
		snprintf(dst, len, "0x%" PRIx64, a);
}
