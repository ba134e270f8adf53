/* The dynamic call graph: see dcg.h; its threads, decodings and symbols,
 * and the script side. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "dcg.h"
#include "dcg_internal.h"
#include "lang/stp_internal.h"
#include "probes/process.h"
#include "sym/symbols.h"
#include "arch/x86_64/insn.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct dthread **dcg_threads;
size_t dcg_nthreads;

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
int64_t dcg_max_depth = -1;
char **dcg_leafpat, **dcg_exclpat;
size_t dcg_nleaf, dcg_nexcl;

static const char *const mech_names[] = {"blockstep", "singlestep", "breakpoint"};
static int mech = -1;
static int btf = -2; /* _stp_pt_blockstep_honoured(), -2: not asked */
uint64_t dcg_n_stops, dcg_n_calls, dcg_n_rets;
uint64_t dcg_n_other; /* stops of untraced threads at the sites */

int64_t dcg_now_ns(void)
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
				      "breakpoint, blockstep, singlestep): using auto",
				      m);
		/* blockstep where the processor stops only at taken branches;
		 * breakpoints where it would stop at every instruction */
		btf = _stp_pt_blockstep_honoured();
		mech = btf == 1 ? MECH_BLOCKSTEP : MECH_BREAKPOINT;
	}
}

/* Is tracing on in another thread of pid? */
static int pid_traced(pid_t pid)
{
	for (size_t i = 0; i < dcg_nthreads; i++)
		if (dcg_threads[i]->on && dcg_threads[i]->pid == pid)
			return 1;
	return 0;
}

struct _stp_symtab *dcg_symtab_of(pid_t pid)
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

struct dthread *dcg_find_thread(pid_t tid, int create)
{
	for (size_t i = 0; i < dcg_nthreads; i++)
		if (dcg_threads[i]->tid == tid)
			return dcg_threads[i];
	if (!create)
		return NULL;
	struct dthread **v = realloc(dcg_threads, (dcg_nthreads + 1) * sizeof *v);
	if (!v)
		return NULL;
	dcg_threads = v;
	struct dthread *d = calloc(1, sizeof *d);
	if (!d)
		return NULL;
	d->tid = tid;
	d->hold = NO_HOLD;
	dcg_threads[dcg_nthreads++] = d;
	return d;
}

/* ---- decoding ---- */

const struct dec *dcg_decode_at(struct _stp_pt_thread *t, uint64_t addr)
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
	d->syscall = in.len == 2 &&
	    ((in.bytes[0] == 0x0f && in.bytes[1] == 0x05) ||
	     (in.bytes[0] == 0xcd && in.bytes[1] == 0x80));
	d->ripjmp = in.kind == STP_X86_JMP_IND && in.has_mem && in.mem.base == STP_X86_RIP;
	static const uint8_t endbr[3] = {0xf3, 0x0f, 0x1e}, mov_rt[7] = {0x48, 0xc7, 0xc0, 0x0f};
	d->endbr = in.len == 4 && !memcmp(in.bytes, endbr, 3) &&
	    (in.bytes[3] == 0xfa || in.bytes[3] == 0xfb);
	d->mov_rt = in.len == 7 && !memcmp(in.bytes, mov_rt, 7);
	return d;
}

int dcg_is_endbr(struct _stp_pt_thread *t, uint64_t addr)
{
	const struct dec *d = dcg_decode_at(t, addr);
	return d && d->endbr;
}

/* A PLT stub: (endbr64;) jmp *GOT(%rip) in a PLT section. The same code
 * elsewhere is a function of its own (liblzma's lzma_crc64). */
int dcg_is_stub(struct _stp_pt_thread *t, uint64_t addr)
{
	const struct _stp_syminfo *si = dcg_sym(_stp_pt_pid(t), addr);

	if (!si || !si->plt)
		return 0;
	if (dcg_is_endbr(t, addr))
		addr += 4;
	const struct dec *d = dcg_decode_at(t, addr);
	return d && d->ripjmp;
}

int dcg_in_plt(pid_t pid, uint64_t addr)
{
	const struct _stp_syminfo *si = dcg_sym(pid, addr);
	return si && si->plt;
}

/* ---- symbols ---- */

const struct _stp_syminfo *dcg_sym(pid_t pid, uint64_t addr)
{
	struct _stp_symtab *st = dcg_symtab_of(pid);
	return st ? _stp_sym_lookup(st, addr) : NULL;
}

/* A function's entry (not the start of its .cold part). */
int dcg_func_start(pid_t pid, uint64_t addr)
{
	const struct _stp_syminfo *si = dcg_sym(pid, addr);
	return si && si->name && si->offset == 0 && !si->cold;
}

/* Are a and b in the same function (X.cold counts as X)? (Cached
 * entries stay valid across lookups.) */
int dcg_same_func(pid_t pid, uint64_t a, uint64_t b)
{
	const struct _stp_syminfo *sa = dcg_sym(pid, a), *sb = dcg_sym(pid, b);

	if (!sa || !sa->name || !sb || !sb->name)
		return 0;
	if (sb->symaddr == sa->symaddr)
		return 1;
	return !strcmp(sb->name, sa->name) && sa->modpath && sb->modpath &&
	    !strcmp(sa->modpath, sb->modpath);
}

/* The function containing pc: its start if known, else pc. */
uint64_t dcg_func_of(pid_t pid, uint64_t pc)
{
	const struct _stp_syminfo *si = dcg_sym(pid, pc);
	return si && si->name ? si->symaddr : pc;
}

int _stp_dcg_enters_func(struct _stp_pt_thread *t, uint64_t from, uint64_t to)
{
	pid_t pid = _stp_pt_pid(t);
	const struct _stp_syminfo *st, *sf;

	/* a function's entry, its own too (a self tail call) */
	if (dcg_func_start(pid, to) || dcg_is_stub(t, to))
		return 1;
	/* another module's code, with or without a symbol there (ld.so's
	 * jmp *%rax into a stripped program's _fini); code in no module
	 * counts as one module */
	if (!(st = dcg_sym(pid, to)))
		return 0;
	if (st->module)
		return from < st->modstart || from >= st->modend;
	return (sf = dcg_sym(pid, from)) && sf->module;
}

int _stp_dcg_func_range(struct _stp_pt_thread *t, uint64_t addr, uint64_t *lo, uint64_t *hi)
{
	const struct _stp_syminfo *si = dcg_sym(_stp_pt_pid(t), addr);

	if (!si || !si->name || !si->size)
		return -1;
	*lo = si->symaddr;
	*hi = si->symaddr + si->size;
	return 0;
}

/* ---- the script side ---- */

/* Tracing off in d. keep_mode: the end of the run; the engine's detach
 * must still see the thread in step mode, or a step trap already queued
 * would be delivered to the program as a SIGTRAP. */
static void thread_off(struct dthread *d, int keep_mode)
{
	int was_on = d->on;

	if (d->t && was_on && !keep_mode) {
		if (mech == MECH_BREAKPOINT)
			_stp_pt_signal_step(d->t, NULL, NULL);
		else
			_stp_pt_step_mode(d->t, _STP_PT_STEP_NONE, NULL, NULL);
	}
	d->on = 0;
	/* the last traced thread of its process: the sites go (at the end
	 * of the run the engine's detach removes them) */
	if (was_on && !keep_mode && mech == MECH_BREAKPOINT && !pid_traced(d->pid))
		_stp_dcg_sites_release(d->pid);
	d->t = NULL;
	d->hold = NO_HOLD;
	dcg_flush_thread(d);
	d->nf = 0;
}

void _stp_dcg_set(struct _stp_context *c, int64_t on, const char *m)
{
	struct _stp_tctx *tc = c ? (struct _stp_tctx *)c->target : NULL;
	struct user_regs_struct r;

	if (!tc || !tc->t)
		return;
	struct dthread *d = dcg_find_thread(tc->tid, on != 0);
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
		_stp_pt_signal_step(tc->t, dcg_on_signal, NULL);
	} else if (_stp_pt_step_mode(
		       tc->t, mech == MECH_SINGLESTEP ? _STP_PT_STEP_INSN : _STP_PT_STEP_BLOCK,
		       dcg_on_step, NULL) < 0) {
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
	int at_entry = dcg_func_start(d->pid, r.rip);
	uint64_t f = dcg_func_of(d->pid, r.rip);
	d->t0 = dcg_now_ns();
	dcg_push(d, r.rsp, f, at_entry);
	d->root_pending = dcg_probes_wanted();
	if (!d->root_pending)
		dcg_emit(d, DCG_CALL, 0, 0, r.rip, f);
	if (d->nr)
		d->r[d->nr - 1].ns = 0; /* the root starts the clock */
}

void _stp_dcg_limit(int what, int64_t n, const char *pattern)
{
	char ***v = what == 1 ? &dcg_leafpat : &dcg_exclpat;
	size_t *nv = what == 1 ? &dcg_nleaf : &dcg_nexcl;

	if (what == 0) {
		dcg_max_depth = n < 0 ? -1 : n;
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
	struct dthread *d = tc ? dcg_find_thread(tc->tid, 0) : NULL;

	return d && d->on;
}

void _stp_dcg_thread_gone(pid_t tid)
{
	struct dthread *d = dcg_find_thread(tid, 0);

	if (!d)
		return;
	d->t = NULL; /* the engine has forgotten it: nothing to switch off there */
	thread_off(d, 0);
}

static void drop_decodings(pid_t pid)
{
	for (size_t i = 0; decs && i < ((size_t)1 << DEC_BITS); i++)
		if (decs[i].pid == pid)
			decs[i].valid = 0;
}

/* pid's memory is gone (exec, exit): its sites, decodings and symbols. */
static void forget_pid(pid_t pid)
{
	_stp_dcg_sites_forget(pid);
	drop_decodings(pid);
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
	for (size_t i = 0; i < dcg_nthreads; i++)
		if (dcg_threads[i]->pid == pid && dcg_threads[i]->on)
			thread_off(dcg_threads[i], 1);
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
	drop_decodings(pid);
	/* records are named from the symbol cache: print them first */
	for (size_t i = 0; i < dcg_nthreads; i++)
		if (dcg_threads[i]->pid == pid)
			dcg_flush_thread(dcg_threads[i]);
	for (size_t i = 0; i < nstabs; i++)
		if (stabs[i].pid == pid && stabs[i].st)
			_stp_sym_reset(stabs[i].st);
}

void _stp_dcg_finish(int verbose)
{
	int used = dcg_nthreads > 0;

	for (size_t i = 0; i < dcg_nthreads; i++) {
		thread_off(dcg_threads[i], 1);
		free(dcg_threads[i]->f);
		free(dcg_threads[i]->r);
		free(dcg_threads[i]);
	}
	free(dcg_threads);
	dcg_threads = NULL;
	dcg_nthreads = 0;
	const char *rep = getenv("STAP_DCG_REPORT");
	if (used && (verbose >= 1 || (rep && *rep == '1'))) {
		if (btf == -2)
			btf = mech == MECH_BLOCKSTEP ? _stp_pt_blockstep_honoured() : -1;
		char how[128];
		uint64_t rearms = 0, sites = _stp_dcg_sites_placed(&rearms);
		if (mech == MECH_BREAKPOINT && rearms)
			snprintf(how, sizeof how,
				 " (int3 at %" PRIu64
				 " calls, returns and jumps, armed again %" PRIu64 " times)",
				 sites, rearms);
		else if (mech == MECH_BREAKPOINT)
			snprintf(how, sizeof how, " (int3 at %" PRIu64 " calls, returns and jumps)",
				 sites);
		else if (mech == MECH_BLOCKSTEP)
			snprintf(how, sizeof how, "%s",
				 btf == 1 ? " (BTF honoured: stops at taken branches)"
					  : " (BTF not honoured: stops after every instruction)");
		else
			snprintf(how, sizeof how, " (stops after every instruction)");
		fprintf(stderr,
			"dynamic call graph: mechanism %s%s, %" PRIu64 " stops, %" PRIu64
			" calls, %" PRIu64 " returns, %.2f stops per traced call",
			mech_names[mech < 0 ? 0 : mech], how, dcg_n_stops, dcg_n_calls, dcg_n_rets,
			dcg_n_calls ? (double)dcg_n_stops / (double)dcg_n_calls : 0.0);
		if (dcg_n_other)
			fprintf(stderr, "; %" PRIu64 " stops of other threads at its breakpoints",
				dcg_n_other);
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
	for (size_t i = 0; i < dcg_nleaf; i++)
		free(dcg_leafpat[i]);
	for (size_t i = 0; i < dcg_nexcl; i++)
		free(dcg_exclpat[i]);
	free(dcg_leafpat);
	free(dcg_exclpat);
	dcg_leafpat = dcg_exclpat = NULL;
	dcg_nleaf = dcg_nexcl = 0;
	dcg_max_depth = -1;
	mech = -1;
	dcg_tree_reset();
	dcg_records_finish();
	dcg_n_stops = dcg_n_calls = dcg_n_rets = dcg_n_other = 0;
}
