/* The native state of a thread stopped in our code: in a translated
 * block, from the state the block's annotations give the instruction it
 * stopped before (emit.h); in the agent's C body, from what its entry
 * stub saved (layout.h, enum xl_saved). Every stop of a translated
 * thread goes through here first, so signal frames, handlers and the
 * ptrace engine only ever see native registers. */
#include "xlate/xl_internal.h"
#include "xlate/agent.h"

/* The annotation that covers offset off (the last one at or before it). */
static const struct xl_annot *annot_at(const struct xl_block *b, uint32_t off)
{
	size_t lo = 0, hi = b->nan;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (b->an[mid].off <= off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? &b->an[lo - 1] : NULL;
}

static void apply(const struct xl_thread *xt, const struct xl_state *s, struct user_regs_struct *r)
{
	const struct xl_ctl *c = xt->ctl;

	if (s->saved & XL_SAVED_RAX)
		r->rax = c->s_rax;
	if (s->saved & XL_SAVED_RCX)
		r->rcx = c->s_rcx;
	if (s->saved & XL_SAVED_RDX)
		r->rdx = c->s_rdx;
	r->rsp += (uint64_t)(int64_t)s->rsp_adj;
	r->rip = s->pc_src == XL_PC_TGT ? c->s_tgt : s->pc_src == XL_PC_FROM ? c->s_from : s->pc;
	if (s->kind == XL_ST_SYSRET)
		r->rcx = r->rip;
}

static void from_agent_stack(const struct xl_thread *xt, struct user_regs_struct *r)
{
	const struct xl_ctl *c = xt->ctl;
	const uint64_t *top = (const uint64_t *)(xt->rg.mem + XL_STACK_TOP);

	r->rax = c->s_rax;
	r->rcx = c->s_rcx;
	r->rsp = c->s_rsp;
	r->rip = c->native_pc;
	/* a system call of the agent's own (the futex of a ring wait) is
	 * not restarted at the native pc */
	r->orig_rax = (uint64_t)-1;
	/* TF: never the program's in the pushed flags (a stepped pushfq is
	 * emulated without it: ptrace_mem.c) */
	r->eflags = top[-XL_SV_FLAGS] & ~XL_EFLAGS_TF;
	r->rdx = top[-XL_SV_RDX];
	r->rbx = top[-XL_SV_RBX];
	r->rsi = top[-XL_SV_RSI];
	r->rdi = top[-XL_SV_RDI];
	r->rbp = top[-XL_SV_RBP];
	r->r8 = top[-XL_SV_R8];
	r->r9 = top[-XL_SV_R9];
	r->r10 = top[-XL_SV_R10];
	r->r11 = top[-XL_SV_R11];
	r->r12 = top[-XL_SV_R12];
	r->r13 = top[-XL_SV_R13];
	r->r14 = top[-XL_SV_R14];
	r->r15 = top[-XL_SV_R15];
}

/* Is the instruction at cache address pc one of our rdtsc (of a record,
 * not a copy of the program's)? It faults when the thread has disabled
 * the time-stamp counter (prctl PR_SET_TSC, PR_TSC_SIGSEGV). */
int xl_is_our_rdtsc(struct xl_thread *xt, uint64_t pc)
{
	const struct xl_block *b = xl_block_of_cache(xt, pc);
	const struct xl_annot *a;

	if (!b || pc + 2 > b->cache + b->size || !(a = annot_at(b, (uint32_t)(pc - b->cache))))
		return 0;
	const uint8_t *code = b->chunk->mem + (pc - b->chunk->addr);
	return code[0] == 0x0f && code[1] == 0x31 && a->st.kind == XL_ST_MID;
}

int xl_to_native(struct xl_thread *xt, struct user_regs_struct *r, int is_trap,
		 uint64_t *after_trap)
{
	uint64_t pc = r->rip, base = xt->rg.addr;

	if (after_trap)
		*after_trap = 0;

	if (pc >= base && pc < base + XL_AGENT_MAX) {
		uint64_t off = pc - base;
		if (off >= _stp_xl_agent.body_start && off < _stp_xl_agent.body_end) {
			from_agent_stack(xt, r);
			return 1;
		}
		return -1; /* in an entry or exit stub: step out of it */
	}
	struct xl_block *b = xl_block_of_cache(xt, pc);
	if (!b)
		return 0;
	uint32_t off = (uint32_t)(pc - b->cache);
	const struct xl_annot *a;
	if (is_trap && off > 0 && (a = annot_at(b, off - 1)) && a->off == off - 1 &&
	    a->st.kind == XL_ST_TRAP) {
		/* the trap stub's int3: as if the breakpoint had been hit */
		r->rip = a->st.pc + 1;
		return 2;
	}
	if (is_trap && off > 0 && (a = annot_at(b, off - 1)) && a->off == off - 1 &&
	    a->st.kind == XL_ST_EVENT) {
		apply(xt, &a->st, r); /* before the event's instruction */
		return 3;
	}
	if (!(a = annot_at(b, off)))
		return -1;
	apply(xt, &a->st, r);
	if (a->st.kind == XL_ST_RSEQ)
		xl_rseq_aborted(xt); /* as the kernel would at this stop */
	if (a->st.after_trap && after_trap)
		*after_trap = r->rip;
	return 1;
}

uint64_t xl_event_resume(struct xl_thread *xt, uint64_t pc)
{
	const struct xl_block *b = xl_block_of_cache(xt, pc);
	const struct xl_annot *a;
	uint32_t off = b ? (uint32_t)(pc - b->cache) : 0;

	if (!b || !off || !(a = annot_at(b, off - 1)) || a->off != off - 1 ||
	    a->st.kind != XL_ST_EVENT)
		return 0;
	return pc + a->st.skip;
}
