/* Inside the in-process engine (runtime/xlate/ only). */
#ifndef STP_XL_INTERNAL_H
#define STP_XL_INTERNAL_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "xlate/xlate.h"
#include "xlate/emit.h"
#include "xlate/reader.h"

#include <stdio.h>
#include <sys/user.h>

extern int _stp_xl_debug_on;
void _stp_xl_msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
#define xl_debug(...)                             \
	do {                                      \
		if (_stp_xl_debug_on)             \
			_stp_xl_msg(__VA_ARGS__); \
	} while (0)

#pragma GCC visibility push(hidden)

/* ---- a map of 64-bit keys (not 0) to 64-bit values (map.c) ---- */
struct xl_map {
	uint64_t *k, *v;
	size_t cap, n, dead;
};
int xl_map_put(struct xl_map *m, uint64_t k, uint64_t v);
uint64_t xl_map_get(const struct xl_map *m, uint64_t k); /* 0: none */
void xl_map_del(struct xl_map *m, uint64_t k);
void xl_map_clear(struct xl_map *m);
void xl_map_free(struct xl_map *m);

/* ---- code chunks and blocks (cache.c) ---- */

#define XL_CHUNK_MAX (1u << 20)
#define XL_CHUNK_REACH (1ull << 30) /* from the code it translates */
#define XL_MAX_CHUNKS 16
#define XL_BLOCK_MAX 16384 /* code of one block, at most */

struct xl_chunk {
	uint64_t addr; /* in the target */
	uint8_t *mem;  /* staprun's mapping */
	size_t size, used;
};

/* A branch of a block that goes to another block once linked. */
struct xl_exit {
	uint32_t off; /* the branch (jmp or jcc rel32) in the block */
	uint8_t len;
	ZydisMnemonic mn;
	uint32_t stub;	 /* its miss stub (also a far trampoline) */
	uint64_t target; /* native */
	struct xl_block *b;
	struct xl_exit *wnext; /* exits to the same target */
	int linked;
};

struct xl_block {
	uint64_t native, native_end; /* the native code it covers */
	int dead;		     /* invalidated: its code stays (a thread may
				      * be stopped in it) but nothing leads there */
	uint64_t cache;		     /* its code in the target */
	uint32_t size;
	uint32_t jentry, entry, body; /* offsets of its entry points */
	uint32_t fid;
	struct xl_annot *an;
	size_t nan;
	struct xl_exit *ex;
	size_t nex;
	struct xl_chunk *chunk;
	int checked;	     /* from code that may change: checked at entry */
	uint8_t *orig;	     /* checked: the bytes it was translated from */
	int shadow;	     /* the rseq shadow descriptor of its section copy, or -1 */
	uint32_t copy_entry; /* a section starts here: its copy's entry, or 0 */
	int ends_call;	     /* in a call: native_end is its return address */
};

/* At most this many native bytes in a checked block. */
#define XL_CHECK_MAX 256

/* ---- memory shared with a target (shm.c) ---- */

/* A mapping of a memfd in the target and in staprun. */
struct xl_mapping {
	uint64_t addr; /* target */
	uint8_t *mem;  /* staprun */
	size_t size;
};

struct xl_proc;

struct xl_thread {
	struct xl_proc *xp;
	struct _stp_pt_thread *t;
	pid_t tid;
	int on;
	struct xl_mapping rg; /* the region (layout.h) */
	struct xl_ctl *ctl;
	size_t ring_n;	  /* records */
	uint64_t ow_done; /* overwrite mode: records written and read (ring.c) */
	struct xl_chunk ch[XL_MAX_CHUNKS];
	int nch;
	size_t code_bytes;
	struct xl_map byn;   /* native start -> struct xl_block * */
	struct xl_map clean; /* native insn -> cache address of a clean point */
	struct xl_map after; /* the same after the trap stub of a breakpoint */
	struct xl_map wait;  /* native target -> first struct xl_exit * */
	/* the blocks of each chunk (ch[i]) by cache address, sorted: a
	 * chunk's space is taken in order, so a block is appended */
	struct xl_blocks {
		struct xl_block **v;
		size_t n, cap;
	} byc[XL_MAX_CHUNKS];
	size_t nbyc;  /* blocks in all */
	uint64_t gen; /* changes when code is invalidated or flushed */
	struct xl_reader rd;
	/* the last stop: the registers as stopped and as made native */
	int mapped;
	/* the breakpoint the thread trapped on at this stop (0: none), and
	 * its registers then: the engine runs the instruction there */
	uint64_t trapped_at;
	struct user_regs_struct trap_regs;
	/* a signal frame resumes at this breakpoint with its trap taken */
	uint64_t frame_after_trap;
	unsigned sigret_next; /* the next ctl->sigret_* slot to take */
	/* the stop was after the trap stub at this pc (its trap taken) */
	uint64_t pending_after;
	/* native ranges to invalidate at the next stop (it was running) */
	uint64_t inval[16][2];
	int ninval;
	uint64_t mapped_gen;
	int no_restore; /* the stop aborted an rseq section's copy */
	int at_event;	/* stopped at an event trap, its records being read */
	int last_part;	/* the records given now end where the drain ends */
	struct user_regs_struct cache_regs, native_regs;
	/* rseq (rseq.c): the thread's struct rseq, reached at fs:rseq_off */
	int rseq_on;
	uint64_t rseq_area;
	int32_t rseq_off;
	uint32_t rseq_sig;
	uint32_t shadow_used;	/* bit i: ctl->shadow[i] belongs to a block */
	struct xl_thread *next; /* in xp */
};

/* Mappings of the target, for what code may change (mem.c). */
struct xl_mrange {
	uint64_t lo, hi;
	int stable;		/* private, read-only, of a regular file */
	uint64_t off, ino, dev; /* which file, where in it */
	int exec, unreadable;	/* PROT_EXEC, no PROT_READ */
};

/* Functions' address ranges, as the core gave them (cache.c). */
struct xl_frange {
	uint64_t lo, hi;
	uint32_t fid;
};

/* A critical section (rseq.c), known from its descriptor. */
struct xl_rseq_sec {
	uint64_t desc;		    /* the struct rseq_cs's address */
	uint64_t start, end, abort; /* end = start + post_commit_offset;
				     * start == end: not a valid one */
};
#define XL_RSEQ_MAX 16

struct xl_proc {
	struct _stp_xl_engine *x;
	struct xl_rseq_sec rseq[XL_RSEQ_MAX];
	int nrseq;
	struct xl_frange *fr; /* sorted by lo, disjoint */
	size_t nfr, capfr;
	struct xl_map nofunc; /* addresses in no known function */
	struct xl_mrange *mr; /* sorted */
	size_t nmr, capmr;
	struct xl_mrange *cmap; /* stable mappings blocks were made from */
	size_t ncmap, capcmap;
	struct xl_mapping preg; /* the process region (safety.c) */
	int pctl;		/* it is there, the handler installed */
	struct _stp_pt_proc *p;
	pid_t pid;
	struct xl_thread *threads;
	struct xl_mapping *free_rg; /* regions of threads gone, for reuse */
	size_t nfree_rg;
	struct xl_mapping *maps; /* everything mapped in the target */
	size_t nmaps;
	struct xl_proc *next;
};

struct _stp_xl_engine {
	struct _stp_pt_session *s;
	struct _stp_xl_ops ops;
	void *core;
	struct _stp_xl_config cfg;
	struct xl_proc *procs;
	int nthreads_on;
	struct xl_map fids; /* function start -> id */
	uint32_t next_fid;
	/* tsc -> CLOCK_MONOTONIC */
	uint64_t tsc0;
	int64_t ns0;
	double ns_per_tick;
	struct _stp_xl_stats st;
	struct xl_rec *ow_copy; /* overwrite mode: a ring's records, read */
	size_t ow_copy_n;
	/* STAP_XLATE_READ_DELAY_US: tests wait up to this long in a read
	 * (ring.c), more or less from read to read */
	unsigned read_delay_us, reads;
};

/* Addresses in a thread's region. */
static inline uint64_t xl_ctl_addr(const struct xl_thread *xt, unsigned off)
{
	return xt->rg.addr + XL_CTL_OFF + off;
}

/* shm.c */
int xl_map_region(struct xl_thread *xt, size_t size);
int xl_map_pregion(struct xl_proc *xp, struct _stp_pt_thread *t, struct xl_mapping *m);

/* safety.c */
int xl_protect(struct xl_proc *xp, struct _stp_pt_thread *t);
int xl_unprotect(struct xl_proc *xp, struct _stp_pt_thread *t);
void xl_protect_region(struct xl_proc *xp, uint64_t region);
void xl_mirror_bkpt(struct xl_proc *xp, uint64_t addr, int armed, uint8_t orig);
/* thread.c: the ptrace engine's breakpoint notification */
void xl_watch_fn(uint64_t addr, int armed, uint8_t orig, void *data);
int xl_map_chunk(struct xl_thread *xt, uint64_t near, struct xl_chunk *ch);
void xl_unmap_all(struct xl_proc *xp, struct _stp_pt_thread *t);

/* cache.c */
struct xl_block *xl_block_at(struct xl_thread *xt, uint64_t native);
struct xl_block *xl_block_of_cache(struct xl_thread *xt, uint64_t cache);
/* A block for native (translated now, and what it reaches, up to a
 * budget), NULL on failure (*why says). */
struct xl_block *xl_translate(struct xl_thread *xt, uint64_t native, const char **why);
/* The cache address to enter native pc at with native registers; where
 * a breakpoint is, its trap stub, unless the thread comes back from that
 * breakpoint's trap with the instruction still to run (after_trap). */
uint64_t xl_enter_at(struct xl_thread *xt, uint64_t pc, int after_trap, const char **why);
/* Chunks of cfg.cache_bytes / 2 (64 KiB to 1 MiB). */
size_t xl_chunk_size(const struct _stp_xl_engine *x);
/* Everything translated for the thread goes (the cache is full); the
 * thread must be stopped and in none of it. */
void xl_flush(struct xl_thread *xt);
/* The signal frames' entries given to the agent forgotten (blocks went). */
void xl_sigret_forget(struct xl_thread *xt);
/* Room for a block near native; NULL if none can be had. */
struct xl_chunk *xl_chunk_for(struct xl_thread *xt, uint64_t native);
/* The block is done: register it (directory, links, clean points). */
int xl_block_add(struct xl_thread *xt, struct xl_block *b);
void xl_cache_free(struct xl_thread *xt);
uint32_t xl_fid(struct xl_thread *xt, uint64_t addr);
/* Function ranges over [lo, hi) are asked again (the code there went). */
void xl_funcs_forget(struct xl_proc *xp, uint64_t lo, uint64_t hi);

/* Blocks covering native [lo, hi) are dropped (links, directory,
 * tables, clean points); the thread must be stopped. */
void xl_invalidate(struct xl_thread *xt, uint64_t lo, uint64_t hi);

/* block.c: translate one block at native into ch (at ch->used). */
void xl_emit_miss_stub(struct xl_emit *e, uint64_t ctl, uint64_t target);
int xl_block_translate(struct xl_thread *xt, struct xl_chunk *ch, uint64_t native,
		       struct xl_block **out, const char **why);

/* mem.c */
/* Is the code at addr stable (text of a file, read-only, private)? Else
 * its blocks check their bytes at entry. */
int xl_code_stable(struct xl_thread *xt, uint64_t addr);
/* May code at addr be translated: executable, or not readable either
 * (its check faults as the code would; mem.c)? The maps read again if not. */
int xl_code_runs(struct xl_thread *xt, uint64_t addr);
/* A new thread's list of the stable code of its address space (mem.c). */
void xl_code_publish(struct xl_thread *xt);
/* The mappings blocks were made from that are not there any more (as
 * they were: dlclose, munmap, another file at the same place), now that
 * the thread (stopped) says the memory changed: into out (at most max),
 * forgotten. Their count. */
int xl_mem_gone(struct xl_proc *xp, pid_t tid, uint64_t (*out)[2], int max);
void xl_mem_free(struct xl_proc *xp);
/* thread.c: blocks over [lo, hi) go in every thread of xp's address space
 * (now for stopped threads, at their next stop for the others). */
void xl_invalidate_all(struct xl_proc *xp, uint64_t lo, uint64_t hi);
/* Have the bytes of checked block b changed since its translation? */
int xl_block_changed(struct xl_thread *xt, const struct xl_block *b);

/* sigmap.c */
/* The native state of a thread stopped at r (cache or agent); 1 if it
 * was in our code (r changed), 2 if that was a trap stub's int3 (the
 * engine's breakpoint at r->rip - 1), 3 if an event trap's int3 (r: the
 * state before the event's instruction; its record not committed), 0 if native already, -1 if it
 * cannot be told (r unchanged). is_trap: the stop is an int3's SIGTRAP.
 * *after_trap (if not NULL): the native pc when the thread had taken the
 * trap of a breakpoint there and not run its instruction yet, else 0. */
int xl_to_native(struct xl_thread *xt, struct user_regs_struct *r, int is_trap,
		 uint64_t *after_trap);
int xl_is_our_rdtsc(struct xl_thread *xt, uint64_t pc);
/* After an event trap's int3 at cache pc - 1: where the thread goes on,
 * past its commit (staprun commits at the stop); 0 if none there. */
uint64_t xl_event_resume(struct xl_thread *xt, uint64_t pc);
#define XL_EFLAGS_TF 0x100ull

/* rseq.c */
/* The thread's rseq area (it is stopped): rseq_on if it has one that
 * fs: reaches. */
void xl_rseq_thread_init(struct xl_thread *xt);
/* The section that starts at pc, or NULL. */
const struct xl_rseq_sec *xl_rseq_at(struct xl_proc *xp, uint64_t pc);
/* desc, stored in the thread's rseq_cs (it is stopped): 1 if it is new,
 * 0 if none or known (*sec: its section), -ENOSPC if too many. */
int xl_rseq_learn(struct xl_thread *xt, uint64_t desc, const struct xl_rseq_sec **sec);
/* A stop in a section's copy aborted it: rseq_cs cleared, as the kernel
 * does. */
void xl_rseq_aborted(struct xl_thread *xt);
void xl_rseq_release(struct xl_thread *xt, int shadow);

/* ring.c */
void xl_ring_reset(struct xl_thread *xt);
void xl_ring_drain(struct xl_thread *xt);
int xl_ring_put(struct xl_thread *xt, const struct xl_rec *r);
/* Before a record of kind that staprun writes: the registers' records the
 * script wants (config capture), from the registers r at it. */
void xl_ring_put_args(struct xl_thread *xt, unsigned kind, const struct user_regs_struct *r);
int64_t xl_tsc_ns(struct _stp_xl_engine *x, uint64_t tsc);
void xl_time_init(struct _stp_xl_engine *x);
double xl_ns_per_tick(struct _stp_xl_engine *x);

#pragma GCC visibility pop

#endif
