/* The memory shared by staprun and a traced thread running translated
 * code (doc/in-process-engine.md): the per-thread region's layout, the
 * control block, the record format, the agent's entry points and its
 * requests. Included by the agent (freestanding: only fixed-size types),
 * so nothing here may need libc. */
#ifndef STP_XL_LAYOUT_H
#define STP_XL_LAYOUT_H

#ifndef __ASSEMBLER__
#include <stdint.h>
#endif

/* ---- the per-thread region (below 2 GiB: absolute 32-bit addressing) ---- */

#define XL_AGENT_OFF 0x0 /* agent code, r-x */
#define XL_AGENT_MAX 0x4000
#define XL_CTL_OFF 0x4000   /* control block, rw- from here on */
#define XL_STACK_OFF 0x5000 /* agent stack */
#define XL_STACK_TOP 0x9000
#define XL_TAB_BITS 16 /* lookup table index: low 16 bits */
#define XL_TAB_N (1u << XL_TAB_BITS)
#define XL_RKEYS_OFF 0x10000			   /* return/call table: negated keys */
#define XL_RVALS_OFF (XL_RKEYS_OFF + 8 * XL_TAB_N) /* indirect entries */
#define XL_JKEYS_OFF (XL_RVALS_OFF + 8 * XL_TAB_N) /* jump table */
#define XL_JVALS_OFF (XL_JKEYS_OFF + 8 * XL_TAB_N) /* jump entries */
#define XL_DIR_OFF (XL_JVALS_OFF + 8 * XL_TAB_N)
#define XL_DIR_BITS 16
#define XL_DIR_N (1u << XL_DIR_BITS)
#define XL_DIRENT_SIZE 32
#define XL_RING_OFF (XL_DIR_OFF + XL_DIR_N * XL_DIRENT_SIZE)
#define XL_REGION_FIXED XL_RING_OFF /* the region's size without the ring */

/* ---- the agent's entry points ---- */

/* Why the translated code entered the agent (its entry points). In every
 * case the program's rax and rcx are in s_rax/s_rcx, every other register
 * is the program's, and native_pc is where the thread is in native terms
 * (with those registers). */
#define XL_E_MISS_RET 0	   /* lookup miss, return/call table; rax = target */
#define XL_E_MISS_JMP 1	   /* lookup miss, jump table; s_tgt = target */
#define XL_E_MISS_DIRECT 2 /* a direct exit not translated yet; rax = target */
#define XL_E_FULL 3	   /* ring full: retry is where to go on */
#define XL_E_SIGRETURN 4   /* rt_sigreturn (rax 15): the agent runs it */
#define XL_E_FALLBACK 5	   /* an instruction that cannot be translated */
#define XL_E_RSEQ 6	   /* rseq_cs holds a descriptor the block does not know */
#define XL_E_MEMSYS                                                                  \
	7 /* after mmap, mprotect, munmap, mremap: s_tgt = its number, retry = after \
	   */
#define XL_E_N 8

/* ---- control block offsets (struct xl_ctl, checked below) ---- */

#define XL_CTL_S_RAX 0x00
#define XL_CTL_S_RCX 0x08
#define XL_CTL_S_RDX 0x10
#define XL_CTL_S_TGT 0x18
#define XL_CTL_S_FROM 0x20
#define XL_CTL_S_JFN 0x28
#define XL_CTL_RING_WP 0x30
#define XL_CTL_RING_LEFT 0x38
#define XL_CTL_NATIVE_PC 0x40
#define XL_CTL_RETRY 0x48
#define XL_CTL_DEST 0x50
#define XL_CTL_S_RSP 0x58
#define XL_CTL_ENTRY 0x80

#ifndef __ASSEMBLER__

/* ---- records ---- */

enum xl_kind {
	XL_REC_CALL = 1,   /* from: call insn, to: callee, sp: return-address slot */
	XL_REC_RET = 2,	   /* from: ret insn, to: return address, sp: after the ret */
	XL_REC_JUMP = 3,   /* into another function: from, to, sp */
	XL_REC_SIGNAL = 4, /* handler entry: from: interrupted pc, to: handler */
	/* registers of the record that follows, written before it when the
	 * script uses them (config capture): from = part, to and sp two
	 * values (tsc 0); parts 0..2 before a call, a jump or a signal entry:
	 * rdi rsi, rdx rcx, r8 r9; part 3 before a return: rax */
	XL_REC_ARGS = 5,
};
#define XL_ARGS_SLOTS 3 /* records of arguments before a call or a jump */
#define XL_KIND_SHIFT 56
#define XL_ADDR_MASK ((1ull << XL_KIND_SHIFT) - 1)

struct xl_rec {
	uint64_t tsc;
	uint64_t from_kind; /* from | kind << 56 */
	uint64_t to;
	uint64_t sp;
};

/* One directory entry (open addressing by native address; written by
 * staprun while the thread is stopped, read by the agent). */
struct xl_dirent {
	uint64_t native;
	uint64_t entry;	 /* indirect entry (restores rax, rcx) */
	uint64_t jentry; /* jump entry (checks the function, may record) */
	uint64_t direct; /* the block's first instruction (registers native) */
};

/* ---- the agent protocol ---- */

/* Requests (the doorbell: the agent's int3; staprun answers in the stop). */
enum xl_req {
	XL_REQ_NONE,
	XL_REQ_TRANSLATE, /* arg: native address; answer: its entry (or 0) */
	XL_REQ_DRAIN,	  /* the ring is full; answer: where to go on */
	XL_REQ_FALLBACK,  /* arg: native pc; answer: where to go on */
	XL_REQ_SIGRETURN, /* arg: frame's native pc; answer: its clean entry */
	XL_REQ_RSEQ,	  /* arg: native pc; a descriptor to learn (rseq.c) */
	XL_REQ_MEMSYS,	  /* arg: native pc after a system call that may change code */
};

/* The kernel's struct rseq_cs (linux/rseq.h). */
struct xl_rseq_cs {
	uint32_t version, flags;
	uint64_t start_ip, post_commit_offset, abort_ip;
} __attribute__((aligned(32)));
#define XL_RSEQ_SHADOWS 32

#define XL_SIGRETS 4
#define XL_CODE_N 16

/* Answers carry this bit (an address alone may be 0 = "go native"). */
#define XL_ANSWERED (1ull << 63)

/* The control block. Offsets are part of the contract with the translated
 * code (absolute addresses) and the agent; checked below. */
struct xl_ctl {
	/* scratch save slots of the translated code */
	uint64_t s_rax, s_rcx, s_rdx; /* 0x00 */
	uint64_t s_tgt;		      /* 0x18 an indirect target */
	uint64_t s_from;	      /* 0x20 an indirect jump's address */
	uint64_t s_jfn;		      /* 0x28 its function id (low 32 bits) */
	/* the ring */
	uint64_t ring_wp;   /* 0x30 next record */
	uint64_t ring_left; /* 0x38 records before the slow path */
	/* the agent protocol */
	uint64_t native_pc;	/* 0x40 */
	uint64_t retry;		/* 0x48 cache address to go on at */
	uint64_t dest;		/* 0x50 agent exit: where to jump */
	uint64_t s_rsp;		/* 0x58 program rsp while in the agent */
	uint64_t req;		/* 0x60 enum xl_req */
	uint64_t arg;		/* 0x68 */
	uint64_t answer;	/* 0x70 XL_ANSWERED | value, 0 until answered */
	uint64_t gone;		/* 0x78 staprun is gone: go native */
	uint64_t entry[XL_E_N]; /* 0x80 agent entry addresses */
	uint64_t exit_native;	/* the agent's exit stub */
	uint64_t doorbell;	/* the pc of a thread stopped at its doorbell */
	/* where things are (absolute addresses in the target) */
	uint64_t region;
	uint64_t ring_base, ring_end;
	/* The ring's laps (ring.c, ring_lap.h): wrap_seq is twice the laps
	 * begun, odd while one begins; a record's sequence number (records
	 * written before it) is wrap_seq / 2 laps plus its slot. At a full
	 * ring the agent begins a lap itself, in overwrite mode (the flight
	 * recorder) over the oldest records, else only over records staprun
	 * has read: read is the sequence number it read up to (staprun's,
	 * published as it reads). */
	uint64_t overwrite, wrap_seq;
	uint64_t read;
	uint64_t ring_need; /* the largest reservation, in records */
	/* No room: the agent waits on the futex word wake (staprun adds one
	 * and wakes it after a read while waiting is set) while staprun's
	 * reads go on: read_tsc (the TSC at its last read) not older than
	 * wait_tsc ticks (wait_ns); else it rings the doorbell. wait_ns 0:
	 * the doorbell at once (a client that does not read while threads
	 * run). */
	uint32_t wake, waiting;
	uint64_t wait_ns, wait_tsc, read_tsc;
	/* Where frames of signals being handled go back to: a native pc and
	 * its cache entry, learnt at the handler's entry (thread.c) so that
	 * the agent's rt_sigreturn rings no doorbell; 0 when blocks go. */
	uint64_t sigret_pc[XL_SIGRETS], sigret_to[XL_SIGRETS];
	/* counters (the agent's; tsc_waited: TSC ticks waited for room) */
	uint64_t n_agent, n_dir_hits, n_doorbells;
	uint64_t n_full, n_waits, n_full_doorbells, tsc_waited;
	/* rseq: the descriptors of the copies of critical sections in this
	 * thread's cache (rseq_cs points to one while its copy runs) */
	struct xl_rseq_cs shadow[XL_RSEQ_SHADOWS];
	/* The stable code (mem.c) this thread's blocks were translated from,
	 * mapping by mapping (written by staprun as it translates): a memory
	 * system call that touches none of it needs no doorbell (code that
	 * is not stable checks itself). ncode > XL_CODE_N: always ask. */
	uint64_t ncode;
	uint64_t code[XL_CODE_N][2];
};

_Static_assert(__builtin_offsetof(struct xl_ctl, s_jfn) == XL_CTL_S_JFN, "ctl layout");
_Static_assert(__builtin_offsetof(struct xl_ctl, ring_left) == XL_CTL_RING_LEFT, "ctl layout");
_Static_assert(__builtin_offsetof(struct xl_ctl, s_rsp) == XL_CTL_S_RSP, "ctl layout");
_Static_assert(__builtin_offsetof(struct xl_ctl, entry) == XL_CTL_ENTRY, "ctl layout");
_Static_assert(sizeof(struct xl_ctl) <= XL_STACK_OFF - XL_CTL_OFF, "ctl size");
_Static_assert(sizeof(struct xl_rec) == 32, "record size");
_Static_assert(sizeof(struct xl_dirent) == XL_DIRENT_SIZE, "directory entry size");

/* The process region of an attached process (-x): a copy of the agent
 * whose SIGTRAP handler keeps the program alive when staprun is gone,
 * and this control block at XL_CTL_OFF (the agent reaches it as xl_ctl):
 * the program's SIGTRAP action (to chain to), the thread regions (their
 * doorbells and trap stubs), and a mirror of the ptrace engine's
 * breakpoints with their original bytes (restored by the handler when it
 * meets one). Written by staprun; read by the handler only when no
 * tracer is attached any more. */
#define XL_PBK_BITS 12
#define XL_PBK_N (1u << XL_PBK_BITS)
#define XL_PREGIONS 64
struct xl_pbk {
	uint64_t addr; /* 0: empty, 1: removed */
	uint64_t orig; /* the byte under the int3 */
};
struct xl_kaction { /* the kernel's struct sigaction on x86-64 */
	uint64_t handler, flags, restorer, mask;
};
struct xl_pctl {
	struct xl_kaction act, old; /* ours, the program's before */
	uint64_t nregions;
	uint64_t regions[XL_PREGIONS];
	struct xl_pbk bk[XL_PBK_N];
};
#define XL_PREGION_SIZE (XL_CTL_OFF + ((sizeof(struct xl_pctl) + 4095) & ~4095ul))

/* The agent's stack, as its entry stubs leave it for the C body (pushed
 * in this order after pushfq): the native registers staprun reads when the
 * thread stops inside the C body. Offsets from XL_STACK_TOP downwards. */
enum xl_saved {
	XL_SV_FLAGS = 1, /* at TOP - 8 */
	XL_SV_RDX,
	XL_SV_RBX,
	XL_SV_RSI,
	XL_SV_RDI,
	XL_SV_RBP,
	XL_SV_R8,
	XL_SV_R9,
	XL_SV_R10,
	XL_SV_R11,
	XL_SV_R12,
	XL_SV_R13,
	XL_SV_R14,
	XL_SV_R15, /* at TOP - 8 * 14 */
};

#endif /* !__ASSEMBLER__ */

#endif
