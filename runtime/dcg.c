/* The dynamic call graph: see dcg.h. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "dcg.h"
#include "dcg_internal.h"
#include "stp_internal.h"
#include "process.h"
#include "symbols.h"
#include "arch/x86_64/insn.h"

#include <errno.h>
#include <fnmatch.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { DCG_CALL = 1, DCG_RET = 2 };
enum { MECH_BLOCKSTEP, MECH_SINGLESTEP, MECH_BREAKPOINT };
static const char *const mech_names[] = {"blockstep", "singlestep", "breakpoint"};

/* One event, formatted only when printed. */
struct rec {
	uint8_t kind;
	uint8_t sig; /* a signal handler's call: its signal number */
	uint32_t depth;
	uint64_t ns;   /* since tracing began in the thread */
	uint64_t from; /* call / return instruction (0: the root) */
	uint64_t to;   /* target / return address */
	uint64_t name; /* address whose call-graph name is printed */
};

struct frame {
	uint64_t sp;   /* rsp after the call: the return-address slot */
	uint64_t func; /* the callee (start of its symbol when known) */
	uint64_t ns;
	uint8_t known; /* sp known (0: root entered other than by a call) */
	uint8_t stub;  /* in a PLT stub: the call is not shown yet */
	uint8_t tail;
	uint8_t hide;  /* not shown (excluded, too deep, under a leaf) */
	uint8_t mute;  /* its callees are not shown */
	uint8_t sig;   /* a signal handler entered by the kernel: the signal */
};

struct dthread {
	pid_t tid, pid;
	int on;
	struct _stp_pt_thread *t;
	char comm[32];
	int64_t t0;
	uint64_t prev_pc;
	struct frame *f;
	size_t nf, capf;
	struct rec *r;
	size_t nr, capr;
	/* lazy binding under a PLT call not shown yet: the call's record
	 * goes at index `hold` once the resolved function is known, and the
	 * records from there on wait for it (NO_HOLD: none) */
	size_t hold;
	/* the root's call event, for the script's probes: fired at the first
	 * trap, not from inside the handler that switched tracing on */
	int root_pending;
};
#define NO_HOLD ((size_t)-1)

static struct dthread **threads;
static size_t nthreads;

/* Decodings per (pid, address). */
struct dec {
	pid_t pid;
	uint64_t addr;
	uint8_t valid, len, kind, syscall, ripjmp;
	uint64_t target;
};
#define DEC_BITS 14
static struct dec *decs;

/* Symbol tables per process. */
struct stab {
	pid_t pid;
	struct _stp_symtab *st;
};
static struct stab *stabs;
static size_t nstabs;

/* Limits (dynamic_call_graph_max_depth/_leaf/_exclude). */
static int64_t max_depth = -1;
static char **leafpat, **exclpat;
static size_t nleaf, nexcl;

static int mech = -1;
static int btf = -2; /* _stp_pt_blockstep_honoured(), -2: not asked */
static uint64_t n_stops, n_calls, n_rets;
static uint64_t n_other; /* stops of untraced threads at the sites */

static int64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void pick_mechanism(const char *m)
{
	const char *env = getenv("STAP_DCG_MECHANISM");

	if (mech >= 0)
		return;
	if (env && *env)
		m = env;
	if (m && !strcmp(m, "blockstep"))
		mech = MECH_BLOCKSTEP;
	else if (m && !strcmp(m, "singlestep"))
		mech = MECH_SINGLESTEP;
	else if (m && !strcmp(m, "breakpoint"))
		mech = MECH_BREAKPOINT;
	else {
		if (m && *m && strcmp(m, "auto"))
			_stp_msg_warn("dynamic call graph: unknown mechanism '%s' (auto, "
				      "breakpoint, blockstep, singlestep): using auto", m);
		/* blockstep where the processor stops only at taken branches;
		 * breakpoints where it would stop at every instruction */
		btf = _stp_pt_blockstep_honoured();
		mech = btf == 1 ? MECH_BLOCKSTEP : MECH_BREAKPOINT;
	}
}

/* Is tracing on in another thread of pid? */
static int pid_traced(pid_t pid)
{
	for (size_t i = 0; i < nthreads; i++)
		if (threads[i]->on && threads[i]->pid == pid)
			return 1;
	return 0;
}

static struct _stp_symtab *symtab_of(pid_t pid)
{
	for (size_t i = 0; i < nstabs; i++)
		if (stabs[i].pid == pid)
			return stabs[i].st;
	struct stab *v = realloc(stabs, (nstabs + 1) * sizeof *v);
	if (!v)
		return NULL;
	stabs = v;
	stabs[nstabs].pid = pid;
	stabs[nstabs].st = _stp_sym_open(pid);
	return stabs[nstabs++].st;
}

static struct dthread *find_thread(pid_t tid, int create)
{
	for (size_t i = 0; i < nthreads; i++)
		if (threads[i]->tid == tid)
			return threads[i];
	if (!create)
		return NULL;
	struct dthread **v = realloc(threads, (nthreads + 1) * sizeof *v);
	if (!v)
		return NULL;
	threads = v;
	struct dthread *d = calloc(1, sizeof *d);
	if (!d)
		return NULL;
	d->tid = tid;
	d->hold = NO_HOLD;
	threads[nthreads++] = d;
	return d;
}

/* ---- decoding ---- */

static const struct dec *decode_at(struct _stp_pt_thread *t, uint64_t addr)
{
	pid_t pid = _stp_pt_pid(t);
	struct _stp_x86_insn in;

	if (!decs) {
		decs = calloc((size_t)1 << DEC_BITS, sizeof *decs);
		if (!decs)
			return NULL;
	}
	struct dec *d = &decs[(addr ^ (addr >> DEC_BITS) ^ (uint64_t)pid * 0x9e37) &
			      (((size_t)1 << DEC_BITS) - 1)];
	if (d->valid && d->addr == addr && d->pid == pid)
		return d;
	if (_stp_dcg_read_insn(t, addr, &in) < 0)
		return NULL;
	memset(d, 0, sizeof *d);
	d->pid = pid;
	d->addr = addr;
	d->valid = 1;
	d->len = in.len;
	d->kind = in.kind;
	d->target = in.target;
	d->syscall = in.len == 2 && ((in.bytes[0] == 0x0f && in.bytes[1] == 0x05) ||
				     (in.bytes[0] == 0xcd && in.bytes[1] == 0x80));
	d->ripjmp = in.kind == STP_X86_JMP_IND && in.has_mem && in.mem.base == STP_X86_RIP;
	return d;
}

static int is_endbr(struct _stp_pt_thread *t, uint64_t addr)
{
	uint8_t b[4];
	return _stp_pt_read_code(t, addr, b, 4) == 0 && b[0] == 0xf3 && b[1] == 0x0f &&
	       b[2] == 0x1e && (b[3] == 0xfa || b[3] == 0xfb);
}

/* A PLT stub: (endbr64;) jmp *GOT(%rip). */
static int is_stub(struct _stp_pt_thread *t, uint64_t addr)
{
	if (is_endbr(t, addr))
		addr += 4;
	const struct dec *d = decode_at(t, addr);
	return d && d->ripjmp;
}

/* ---- symbols ---- */

static const struct _stp_syminfo *sym(struct dthread *d, uint64_t addr)
{
	struct _stp_symtab *st = symtab_of(d->pid);
	return st ? _stp_sym_lookup(st, addr) : NULL;
}

static int func_start(struct dthread *d, uint64_t addr)
{
	const struct _stp_syminfo *si = sym(d, addr);
	return si && si->name && si->offset == 0;
}

/* Are a and b in the same function (X.cold counts as X)? */
static int same_func(struct dthread *d, uint64_t a, uint64_t b)
{
	const struct _stp_syminfo *sa = sym(d, a);
	if (!sa || !sa->name)
		return 0;
	uint64_t sa_addr = sa->symaddr;
	char name[256];
	const char *mod = sa->modpath;
	snprintf(name, sizeof name, "%s", sa->name);
	const struct _stp_syminfo *sb = sym(d, b);
	if (!sb || !sb->name)
		return 0;
	if (sb->symaddr == sa_addr)
		return 1;
	return !strcmp(sb->name, name) && mod && sb->modpath && !strcmp(mod, sb->modpath);
}

/* ---- dynamic_call_graph.call / .return probes ---- */

static int want_call = -1, want_ret;
static struct {
	int active, kind;
	pid_t pid;
	uint64_t from, to, caller, callee;
	int64_t depth, tail, ns, dur;
} ev;

static int probes_wanted(void)
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

static uint64_t func_of(struct dthread *d, uint64_t pc);

static void fire_event(struct dthread *d, int kind, uint32_t depth, uint64_t from, uint64_t to,
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
	ev.ns = now_ns() - d->t0;
	ev.callee = name;
	if (kind == DCG_CALL) {
		ev.caller = from ? func_of(d, from) : 0;
		ev.tail = f ? f->tail : 0;
	} else {
		ev.caller = func_of(d, to);
		ev.dur = f ? ev.ns - (int64_t)f->ns : 0;
	}
	memset(&tc, 0, sizeof tc);
	tc.t = d->t;
	tc.pid = d->pid;
	tc.tid = d->tid;
	tc.uaddr = kind == DCG_CALL ? to : from;
	tc.comm = d->comm;
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
	if ((st = symtab_of(ev.pid)))
		_stp_sym_cgname(st, a, dst, len);
	else
		snprintf(dst, len, "0x%" PRIx64, a);
}

/* ---- records and output ---- */

/* A call or return: a record for the tree, or the script's probes when it
 * has any. Returns 1 when a record was added. */
static int emit(struct dthread *d, int kind, uint32_t depth, uint64_t from, uint64_t to,
		uint64_t name)
{
	if (kind == DCG_CALL)
		n_calls++;
	else
		n_rets++;
	/* the script's probes fire now, except under a lazily bound PLT
	 * call, whose own event must come first: kept until it is known */
	if (probes_wanted() && d->hold == NO_HOLD) {
		fire_event(d, kind, depth, from, to, name);
		return 0;
	}
	/* before adding: callers look at the record they added */
	if (d->nr >= 4096 && d->hold == NO_HOLD)
		_stp_dcg_flush_all();
	if (d->nr == d->capr) {
		size_t cap = d->capr ? 2 * d->capr : 256;
		struct rec *v = realloc(d->r, cap * sizeof *v);
		if (!v)
			return 0;
		d->r = v;
		d->capr = cap;
	}
	/* symbolize the callee now (a cached lookup after the first): once
	 * the process has exited, its modules can no longer be read */
	if (kind == DCG_CALL)
		(void)sym(d, name);
	struct rec *r = &d->r[d->nr++];
	r->kind = (uint8_t)kind;
	r->sig = 0;
	r->depth = depth;
	r->ns = (uint64_t)(now_ns() - d->t0);
	r->from = from;
	r->to = to;
	r->name = name;
	return 1;
}

/* The held call record of a PLT call resolved lazily, in its place. */
static void emit_held(struct dthread *d, uint32_t depth, uint64_t from, uint64_t to,
		      uint64_t ns)
{
	size_t at = d->hold;

	d->hold = NO_HOLD;
	if (probes_wanted()) {
		size_t n = d->nr;
		d->nr = at; /* kept only to be fired, never printed */
		fire_event(d, DCG_CALL, depth, from, to, to);
		for (size_t i = at; i < n && d->on; i++)
			fire_event(d, d->r[i].kind, d->r[i].depth, d->r[i].from, d->r[i].to,
				   d->r[i].name);
		return;
	}
	if (!emit(d, DCG_CALL, depth, from, to, to) || at >= d->nr)
		return;
	struct rec r = d->r[d->nr - 1];
	memmove(&d->r[at + 1], &d->r[at], (d->nr - 1 - at) * sizeof r);
	r.ns = ns;
	d->r[at] = r;
}

static void flush_thread(struct dthread *d)
{
	struct _stp_symtab *st = d->nr ? symtab_of(d->pid) : NULL;
	char name[512], line[1024];
	size_t upto = d->hold < d->nr ? d->hold : d->nr;

	for (size_t i = 0; i < upto; i++) {
		const struct rec *r = &d->r[i];
		if (st)
			_stp_sym_cgname(st, r->name, name, sizeof name);
		else
			snprintf(name, sizeof name, "0x%" PRIx64, r->name);
		char sig[32] = "";
		if (r->sig)
			snprintf(sig, sizeof sig, " (signal SIG%s)",
				 sigabbrev_np(r->sig) ? sigabbrev_np(r->sig) : "?");
		int n = snprintf(line, sizeof line, "%6" PRIu64 " %s(%d):%*s%s%s%s\n",
				 r->ns / 1000, d->comm, (int)d->tid, (int)r->depth, "",
				 r->kind == DCG_CALL ? "->" : "<-", name, sig);
		if (n > 0)
			_stp_print_n(NULL, line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1);
	}
	if (d->nr > upto && upto)
		memmove(d->r, d->r + upto, (d->nr - upto) * sizeof *d->r);
	d->nr -= upto;
	if (d->hold != NO_HOLD)
		d->hold -= upto;
}

void _stp_dcg_flush_all(void)
{
	for (size_t i = 0; i < nthreads; i++)
		flush_thread(threads[i]);
}

/* ---- the shadow stack ---- */

static struct frame *push(struct dthread *d, uint64_t sp, uint64_t func, int known)
{
	if (d->nf == d->capf) {
		size_t cap = d->capf ? 2 * d->capf : 64;
		struct frame *v = realloc(d->f, cap * sizeof *v);
		if (!v)
			return NULL;
		d->f = v;
		d->capf = cap;
	}
	struct frame *f = &d->f[d->nf++];
	memset(f, 0, sizeof *f);
	f->sp = sp;
	f->func = func;
	f->known = (uint8_t)known;
	f->ns = (uint64_t)(now_ns() - d->t0);
	return f;
}

/* Close the top frame with a return record. */
static void pop(struct dthread *d, uint64_t from, uint64_t to)
{
	struct frame *f = &d->f[--d->nf];
	if (f->stub && d->hold != NO_HOLD && !f->hide) /* never resolved: show what ran */
		emit_held(d, (uint32_t)d->nf, f->func, f->func, f->ns);
	else if (f->stub && d->hold != NO_HOLD)
		d->nr = d->hold, d->hold = NO_HOLD;
	else if (!f->stub && !f->hide)
		emit(d, DCG_RET, (uint32_t)d->nf, from, to, f->func);
}

/* Frames whose return-address slot is at or below `limit` are gone. */
static void pop_dead(struct dthread *d, uint64_t limit, uint64_t from, uint64_t to)
{
	while (d->nf && d->f[d->nf - 1].known && d->f[d->nf - 1].sp <= limit) {
		uint64_t sp = d->f[d->nf - 1].sp;
		int sig = d->f[d->nf - 1].sig;
		pop(d, from, to);
		/* below a signal frame on another stack (sigaltstack above
		 * the thread's stack): those frames are alive */
		if (sig && d->nf && d->f[d->nf - 1].sp < sp)
			break;
	}
}

/* The function containing pc: its start if known, else pc. */
static uint64_t func_of(struct dthread *d, uint64_t pc)
{
	const struct _stp_syminfo *si = sym(d, pc);
	return si && si->name ? si->symaddr : pc;
}

static int matches(char **pat, size_t n, const struct _stp_syminfo *si)
{
	for (size_t i = 0; si && i < n; i++)
		if ((si->name && !fnmatch(pat[i], si->name, 0)) ||
		    (si->module && !fnmatch(pat[i], si->module, 0)))
			return 1;
	return 0;
}

/* Whether the top frame (callee at `to`) is shown and descended into. */
static void classify(struct dthread *d, uint64_t to)
{
	struct frame *f = &d->f[d->nf - 1];
	const struct frame *parent = d->nf > 1 ? &d->f[d->nf - 2] : NULL;

	f->hide = f->mute = 0;
	/* a signal handler is no callee of the function it interrupted */
	if (parent && parent->mute && !f->sig) {
		f->hide = f->mute = 1;
		return;
	}
	if (max_depth >= 0 && (int64_t)(d->nf - 1) > max_depth) {
		f->hide = f->mute = 1;
		return;
	}
	if (!nleaf && !nexcl)
		return;
	const struct _stp_syminfo *si = sym(d, to);
	if (matches(exclpat, nexcl, si))
		f->hide = f->mute = 1;
	else if (matches(leafpat, nleaf, si))
		f->mute = 1;
}

/* A new callee at `to` (a call, or a tail call with the caller's slot). */
static void enter(struct dthread *d, struct _stp_pt_thread *t, uint64_t from, uint64_t to,
		  uint64_t sp, int known, int tail, int sig)
{
	struct frame *f = push(d, sp, to, known);
	if (!f)
		return;
	f->tail = (uint8_t)tail;
	f->sig = (uint8_t)(sig ? sig : 0);
	if (is_stub(t, to)) {
		f->stub = 1;
		/* hidden already if its caller is muted */
		f->hide = f->mute = d->nf > 1 && d->f[d->nf - 2].mute;
		return;
	}
	classify(d, to);
	if (!f->hide && emit(d, DCG_CALL, (uint32_t)(d->nf - 1), from, to, to))
		d->r[d->nr - 1].sig = (uint8_t)sig;
}

static void on_call(struct dthread *d, struct _stp_pt_thread *t, uint64_t from, uint64_t to,
		    uint64_t rsp)
{
	pop_dead(d, rsp, from, to);
	enter(d, t, from, to, rsp, 1, 0, 0);
}

static void on_ret(struct dthread *d, uint64_t from, uint64_t to, uint64_t rsp)
{
	size_t before = d->nf;

	/* after ret, rsp is above the slot of every frame that returned */
	pop_dead(d, rsp - 1, from, to);
	if (d->nf == before && d->nf && !d->f[d->nf - 1].known)
		pop(d, from, to);
	if (!d->nf) /* returned out of the root: the caller is the new root */
		push(d, 0, func_of(d, to), 0);
}

static void on_jump(struct dthread *d, struct _stp_pt_thread *t, uint64_t from, uint64_t to,
		    uint64_t rsp, int indirect)
{
	struct frame *top = d->nf ? &d->f[d->nf - 1] : NULL;

	if (indirect) /* longjmp: frames above the new stack pointer are gone */
		pop_dead(d, rsp - 1, from, to);
	top = d->nf ? &d->f[d->nf - 1] : NULL;
	if (top && top->stub) {
		/* leaving a PLT stub (or the lazy-binding code) for a function */
		if (func_start(d, to) && !is_stub(t, to)) {
			const struct _stp_syminfo *si = sym(d, to);
			if (d->hold == NO_HOLD && si && si->name &&
			    !strncmp(si->name, "_dl_runtime_", 12)) {
				/* lazy binding: its calls go under the call */
				d->hold = d->nr;
				return;
			}
			top->stub = 0;
			top->func = to;
			classify(d, to);
			if (top->mute && !top->hide && d->hold != NO_HOLD) {
				/* a leaf: what the resolver did is inside it */
				d->nr = d->hold;
				d->hold = NO_HOLD;
			}
			if (top->hide) {
				if (d->hold != NO_HOLD) /* what the resolver did: hidden too */
					d->nr = d->hold;
				d->hold = NO_HOLD;
			} else if (d->hold != NO_HOLD) {
				emit_held(d, (uint32_t)(d->nf - 1), from, to, top->ns);
			} else {
				emit(d, DCG_CALL, (uint32_t)(d->nf - 1), from, to, to);
			}
		}
		return;
	}
	if (!top)
		return;
	/* tail call: a jump to the start of another function */
	if ((func_start(d, to) || is_stub(t, to)) && !same_func(d, from, to))
		enter(d, t, from, to, top->sp, top->known, 1, 0);
}

/* A signal handler's entry: the kernel pushed the return address of the
 * restorer (mov $15,%rax; syscall: rt_sigreturn) at rsp. */
static int restorer_at(struct _stp_pt_thread *t, uint64_t a)
{
	static const uint8_t restorer[9] = {0x48, 0xc7, 0xc0, 0x0f, 0, 0, 0, 0x0f, 0x05};
	uint8_t b[sizeof restorer];

	return _stp_pt_read_code(t, a, b, sizeof b) == 0 && !memcmp(b, restorer, sizeof b);
}

static int sig_entry(struct _stp_pt_thread *t, uint64_t rsp)
{
	uint64_t ra;

	return _stp_pt_read_code(t, rsp, &ra, sizeof ra) == 0 && restorer_at(t, ra);
}

/* rsp is the slot of the innermost handler's frame: back in the handler
 * from a callee, or the handler's tail call (not a new signal). */
static int in_handler_frame(struct dthread *d, uint64_t rsp)
{
	for (size_t i = d->nf; i-- > 0;)
		if (d->f[i].sig)
			return d->f[i].sp == rsp;
	return 0;
}

/* ---- the trap callback ---- */

/* The root's call event for the script's probes, at the first trap after
 * tracing was switched on. Returns 1 if a probe switched tracing off. */
static int root_event(struct dthread *d)
{
	if (d->root_pending && d->nf) {
		d->root_pending = 0;
		emit(d, DCG_CALL, 0, 0, d->f[0].func, d->f[0].func);
		return !d->on;
	}
	return 0;
}

/* The instruction x at pc has run, leaving the thread at now with rsp:
 * a call, return or jump of the call graph. Returns 1 if x branched. */
static int transfer(struct dthread *d, struct _stp_pt_thread *t, uint64_t pc,
		    const struct dec *x, uint64_t now, uint64_t rsp)
{
	switch (x->kind) {
	case STP_X86_CALL:
	case STP_X86_CALL_IND:
		on_call(d, t, pc, now, rsp);
		return 1;
	case STP_X86_RET:
		on_ret(d, pc, now, rsp);
		return 1;
	case STP_X86_JMP:
	case STP_X86_JMP_IND:
		on_jump(d, t, pc, now, rsp, x->kind == STP_X86_JMP_IND);
		return 1;
	case STP_X86_JCC:
		if (now == x->target && now != pc + x->len) {
			on_jump(d, t, pc, now, rsp, 0);
			return 1;
		}
		return 0;
	default:
		return 0;
	}
}

static void on_step(struct _stp_pt_thread *t, void *data)
{
	/* by tid, not data: at the end of the run the engine may still report
	 * a step trap while detaching, after the state is gone */
	struct dthread *d = find_thread(_stp_pt_tid(t), 0);
	struct user_regs_struct r;

	(void)data;
	n_stops++;
	if (!d || !d->on || _stp_pt_get_regs(t, &r) < 0)
		return;
	if (root_event(d))
		return;
	uint64_t pc = d->prev_pc, now = r.rip;
	d->prev_pc = now;
	/* not the next instruction: a branch, or a signal delivered (the
	 * instructions from pc do not lead to now); a handler's tail call
	 * leaves the restorer at rsp too */
	const struct dec *x0 = pc ? decode_at(t, pc) : NULL;
	if (x0 && now != pc + x0->len && !in_handler_frame(d, r.rsp) && sig_entry(t, r.rsp)) {
		enter(d, t, pc, now, r.rsp, 1, 0, (int)(r.rdi & 0x7f) ? (int)(r.rdi & 0x7f) : 1);
		return;
	}
	/* Find the instruction that branched: the first control transfer from
	 * pc (a block when BTF is honoured; one instruction otherwise). */
	for (int i = 0; i < 4096 && pc; i++) {
		const struct dec *x = decode_at(t, pc);
		if (!x || transfer(d, t, pc, x, now, r.rsp) || x->syscall)
			return;
		if (pc + x->len == now)
			return;
		pc += x->len;
	}
}

/* ---- the breakpoint mechanism's traps ---- */

int _stp_dcg_enters_func(struct _stp_pt_thread *t, uint64_t from, uint64_t to)
{
	struct dthread tmp = {.pid = _stp_pt_pid(t)};

	return (func_start(&tmp, to) || is_stub(t, to)) && !same_func(&tmp, from, to);
}

int _stp_dcg_func_range(struct _stp_pt_thread *t, uint64_t addr, uint64_t *lo, uint64_t *hi)
{
	struct dthread tmp = {.pid = _stp_pt_pid(t)};
	const struct _stp_syminfo *si = sym(&tmp, addr);

	if (!si || !si->name || !si->size)
		return -1;
	*lo = si->symaddr;
	*hi = si->symaddr + si->size;
	return 0;
}

static int read_mem(void *ctx, uint64_t addr, void *buf, size_t n)
{
	return _stp_pt_read(ctx, addr, buf, n);
}

static int write_none(void *ctx, uint64_t addr, const void *buf, size_t n)
{
	(void)ctx, (void)addr, (void)buf, (void)n;
	return 0;
}

/* Lazily bound PLT code starts with (endbr64;) push $index. */
static int lazy_plt(struct _stp_pt_thread *t, uint64_t a)
{
	uint8_t b[5];

	if (is_endbr(t, a))
		a += 4;
	return _stp_pt_read_code(t, a, b, 1) < 0 || b[0] == 0x68;
}

/* A call to a PLT stub whose GOT slot is bound: the function it goes to
 * (0 if not bound yet or not a stub). */
static uint64_t plt_bound(struct _stp_pt_thread *t, uint64_t stub)
{
	uint64_t a = is_endbr(t, stub) ? stub + 4 : stub, v = 0;
	const struct dec *x = decode_at(t, a);
	struct _stp_x86_insn in;

	if (!x || !x->ripjmp || _stp_dcg_read_insn(t, a, &in) < 0)
		return 0;
	if (_stp_pt_read(t, a + in.len + (uint64_t)in.mem.disp, &v, sizeof v) < 0 || !v ||
	    is_stub(t, v) || lazy_plt(t, v))
		return 0;
	return v;
}

/* After a branch or return in d: trap the code the thread goes on with,
 * or, for a callee not descended into, only where it returns to. */
static void follow(struct dthread *d, struct _stp_pt_thread *t, size_t nf0, uint64_t now,
		   uint64_t ret_addr)
{
	const struct frame *top = d->nf ? &d->f[d->nf - 1] : NULL;

	if (!d->on)
		return;
	if (top && d->nf > nf0 && top->mute && !top->stub) {
		uint64_t ra = ret_addr;
		if (!ra && top->known && _stp_pt_read(t, top->sp, &ra, sizeof ra) < 0)
			ra = 0;
		if (ra)
			_stp_dcg_site_return(t, ra);
		return;
	}
	_stp_dcg_sites_from(t, now);
}

static void branch_site(struct dthread *d, struct _stp_pt_thread *t, uint64_t pc,
			const struct _stp_x86_insn *in, struct user_regs_struct *r)
{
	struct user_regs_struct after = *r;
	struct _stp_x86_mem_ops ops = {read_mem, write_none, t};
	const struct dec *x = decode_at(t, pc);
	size_t nf0 = d->nf;
	int call = in->kind == STP_X86_CALL || in->kind == STP_X86_CALL_IND;

	/* what the instruction will do; if it faults, the engine gives the
	 * program its SIGSEGV */
	if (!x || _stp_x86_emulate(in, pc, &after, &ops) != 1)
		return;
	uint64_t now = after.rip, bound;
	if (call && is_stub(t, now) && (bound = plt_bound(t, now))) {
		/* straight to the bound function, as if the stub had run:
		 * one stop less per PLT call */
		uint64_t ra = pc + in->len;
		if (_stp_pt_write(t, after.rsp, &ra, sizeof ra) == 0) {
			after.rip = now = bound;
			_stp_pt_set_regs(t, &after);
		}
	}
	if (in->kind == STP_X86_RET && restorer_at(t, now)) {
		/* a signal handler returns: what it interrupted is trapped */
		transfer(d, t, pc, x, now, after.rsp);
		return;
	}
	transfer(d, t, pc, x, now, after.rsp);
	follow(d, t, nf0, now, call ? pc + in->len : 0);
}

/* A return address of a callee not descended into: it has returned. */
static void return_site(struct dthread *d, struct _stp_pt_thread *t, uint64_t pc, uint64_t rsp)
{
	size_t nf0 = d->nf;

	pop_dead(d, rsp - 1, 0, pc);
	if (d->nf < nf0 && !restorer_at(t, pc))
		_stp_dcg_sites_from(t, pc);
}

/* The kernel is about to run a signal handler in t (the engine stepped
 * into it): a frame of its own, called from the interrupted function. */
static void on_signal(struct _stp_pt_thread *t, int sig, void *data)
{
	struct dthread *d = find_thread(_stp_pt_tid(t), 0);
	struct user_regs_struct r;

	(void)data;
	n_stops++;
	if (!d || !d->on || _stp_pt_get_regs(t, &r) < 0 || root_event(d))
		return;
	size_t nf0 = d->nf;
	enter(d, t, 0, r.rip, r.rsp, 1, 0, sig > 0 ? sig : 1);
	follow(d, t, nf0, r.rip, 0);
}

int _stp_dcg_on_site(struct _stp_pt_thread *t, struct _stp_pt_probe *p, void *data)
{
	struct dthread *d = find_thread(_stp_pt_tid(t), 0);
	uint64_t pc = _stp_pt_probe_addr(p);
	const struct _stp_x86_insn *in = NULL;
	struct user_regs_struct r;
	int fl = _stp_dcg_site(_stp_pt_pid(t), pc, &in);

	(void)data;
	if (!fl) {
		/* a fork child's copy, or left over: not wanted any more */
		n_other++;
		_stp_pt_probe_remove(_stp_pt_thread_proc(t), p);
		return 0;
	}
	if (!d || !d->on || d->pid != _stp_pt_pid(t)) {
		n_other++;
		return 0;
	}
	n_stops++;
	if (_stp_pt_get_regs(t, &r) < 0)
		return 0;
	if (root_event(d))
		return 0;
	if (fl & DCG_SITE_RETURN)
		return_site(d, t, pc, r.rsp);
	if ((fl & DCG_SITE_BRANCH) && d->on)
		branch_site(d, t, pc, in, &r);
	return 0;
}

/* ---- the script side ---- */

/* Tracing off in d. keep_mode: the end of the run; the engine's detach
 * must still see the thread in step mode, or a step trap already queued
 * would be delivered to the program as a SIGTRAP. */
static void thread_off(struct dthread *d, int keep_mode)
{
	int was_on = d->on;

	if (d->t && d->on && !keep_mode && mech != MECH_BREAKPOINT)
		_stp_pt_step_mode(d->t, _STP_PT_STEP_NONE, NULL, NULL);
	if (d->t && d->on && !keep_mode && mech == MECH_BREAKPOINT)
		_stp_pt_signal_step(d->t, NULL, NULL);
	d->on = 0;
	/* the last traced thread of its process: the sites go (at the end
	 * of the run the engine's detach removes them) */
	if (was_on && !keep_mode && mech == MECH_BREAKPOINT && !pid_traced(d->pid))
		_stp_dcg_sites_release(d->pid);
	d->t = NULL;
	d->hold = NO_HOLD;
	flush_thread(d);
	d->nf = 0;
}

void _stp_dcg_set(struct _stp_context *c, int64_t on, const char *m)
{
	struct _stp_tctx *tc = c ? (struct _stp_tctx *)c->target : NULL;
	struct user_regs_struct r;

	if (!tc || !tc->t)
		return;
	struct dthread *d = find_thread(tc->tid, on != 0);
	if (!d)
		return;
	if (!on) {
		thread_off(d, 0);
		return;
	}
	if (d->on) /* on twice: nothing changes */
		return;
	pick_mechanism(m);
	if (_stp_pt_get_regs(tc->t, &r) < 0)
		return;
	/* dlclose: what was decoded and symbolized there must go */
	_stp_proc_watch_libraries(_stp_pt_thread_proc(tc->t));
	if (mech == MECH_BREAKPOINT) {
		if (_stp_dcg_sites_from(tc->t, r.rip) < 0)
			return;
		_stp_pt_signal_step(tc->t, on_signal, NULL);
	} else if (_stp_pt_step_mode(tc->t, mech == MECH_SINGLESTEP ? _STP_PT_STEP_INSN
								    : _STP_PT_STEP_BLOCK,
				     on_step, NULL) < 0) {
		return;
	}
	d->on = 1;
	d->t = tc->t;
	d->pid = tc->pid;
	_stp_ctx_execname(c, d->comm, sizeof d->comm);
	d->prev_pc = r.rip;
	d->nf = 0;
	/* The root: the function we are in; at its first instruction the
	 * return-address slot is at rsp. */
	int at_entry = func_start(d, r.rip);
	uint64_t f = func_of(d, r.rip);
	d->t0 = now_ns();
	push(d, r.rsp, f, at_entry);
	d->root_pending = probes_wanted();
	if (!d->root_pending)
		emit(d, DCG_CALL, 0, 0, r.rip, f);
	if (d->nr)
		d->r[d->nr - 1].ns = 0; /* the root starts the clock */
}

void _stp_dcg_limit(int what, int64_t n, const char *pattern)
{
	char ***v = what == 1 ? &leafpat : &exclpat;
	size_t *nv = what == 1 ? &nleaf : &nexcl;

	if (what == 0) {
		max_depth = n < 0 ? -1 : n;
		return;
	}
	if (!pattern || !*pattern)
		return;
	char **w = realloc(*v, (*nv + 1) * sizeof *w);
	if (!w)
		return;
	*v = w;
	if ((w[*nv] = strdup(pattern)))
		(*nv)++;
}

int64_t _stp_dcg_get(struct _stp_context *c)
{
	struct _stp_tctx *tc = c ? (struct _stp_tctx *)c->target : NULL;
	struct dthread *d = tc ? find_thread(tc->tid, 0) : NULL;

	return d && d->on;
}

void _stp_dcg_thread_gone(pid_t tid)
{
	struct dthread *d = find_thread(tid, 0);

	if (!d)
		return;
	int was_on = d->on;

	d->t = NULL; /* the engine has forgotten it */
	d->on = 0;
	d->hold = NO_HOLD;
	flush_thread(d);
	d->nf = 0;
	if (was_on && mech == MECH_BREAKPOINT && !pid_traced(d->pid))
		_stp_dcg_sites_release(d->pid);
}

/* pid's memory is gone (exec, exit): its sites, decodings and symbols. */
static void forget_pid(pid_t pid)
{
	_stp_dcg_sites_forget(pid);
	for (size_t i = 0; decs && i < ((size_t)1 << DEC_BITS); i++)
		if (decs[i].pid == pid)
			decs[i].valid = 0;
	for (size_t i = 0; i < nstabs; i++)
		if (stabs[i].pid == pid) {
			if (stabs[i].st)
				_stp_sym_close(stabs[i].st);
			stabs[i] = stabs[--nstabs];
			break;
		}
}

void _stp_dcg_exec(pid_t pid)
{
	for (size_t i = 0; i < nthreads; i++)
		if (threads[i]->pid == pid && threads[i]->on)
			thread_off(threads[i], 1);
	forget_pid(pid);
}

void _stp_dcg_proc_gone(pid_t pid)
{
	forget_pid(pid);
}

void _stp_dcg_libs_changed(struct _stp_pt_thread *t)
{
	pid_t pid = _stp_pt_pid(t);

	/* code may have been unmapped: what was decoded or symbolized there
	 * may now be another library's */
	_stp_dcg_sites_unmapped(t);
	for (size_t i = 0; decs && i < ((size_t)1 << DEC_BITS); i++)
		if (decs[i].pid == pid)
			decs[i].valid = 0;
	/* records are named from the symbol cache: print them first */
	for (size_t i = 0; i < nthreads; i++)
		if (threads[i]->pid == pid)
			flush_thread(threads[i]);
	for (size_t i = 0; i < nstabs; i++)
		if (stabs[i].pid == pid && stabs[i].st)
			_stp_sym_reset(stabs[i].st);
}

void _stp_dcg_finish(int verbose)
{
	int used = nthreads > 0;

	for (size_t i = 0; i < nthreads; i++) {
		thread_off(threads[i], 1);
		free(threads[i]->f);
		free(threads[i]->r);
		free(threads[i]);
	}
	free(threads);
	threads = NULL;
	nthreads = 0;
	const char *rep = getenv("STAP_DCG_REPORT");
	if (used && (verbose >= 1 || (rep && *rep == '1'))) {
		if (btf == -2)
			btf = mech == MECH_BLOCKSTEP ? _stp_pt_blockstep_honoured() : -1;
		char how[96];
		if (mech == MECH_BREAKPOINT)
			snprintf(how, sizeof how, " (int3 at %" PRIu64 " calls, returns and jumps)",
				 _stp_dcg_sites_placed());
		else if (mech == MECH_BLOCKSTEP)
			snprintf(how, sizeof how, "%s",
				 btf == 1 ? " (BTF honoured: stops at taken branches)"
					  : " (BTF not honoured: stops after every instruction)");
		else
			snprintf(how, sizeof how, " (stops after every instruction)");
		fprintf(stderr,
			"dynamic call graph: mechanism %s%s, %" PRIu64 " stops, %" PRIu64
			" calls, %" PRIu64 " returns, %.2f stops per traced call",
			mech_names[mech < 0 ? 0 : mech], how, n_stops, n_calls, n_rets,
			n_calls ? (double)n_stops / (double)n_calls : 0.0);
		if (n_other)
			fprintf(stderr, "; %" PRIu64 " stops of other threads at its breakpoints",
				n_other);
		fputc('\n', stderr);
	}
	for (size_t i = 0; i < nstabs; i++)
		if (stabs[i].st)
			_stp_sym_close(stabs[i].st);
	free(stabs);
	stabs = NULL;
	nstabs = 0;
	free(decs);
	decs = NULL;
	_stp_dcg_sites_free();
	for (size_t i = 0; i < nleaf; i++)
		free(leafpat[i]);
	for (size_t i = 0; i < nexcl; i++)
		free(exclpat[i]);
	free(leafpat);
	free(exclpat);
	leafpat = exclpat = NULL;
	nleaf = nexcl = 0;
	max_depth = -1;
	mech = -1;
	want_call = -1;
	n_stops = n_calls = n_rets = n_other = 0;
}
