/* The breakpoint mechanism's sites (mech_breakpoint_sites.c), for its
 * traps (mech_breakpoint.c). */
#ifndef STP_DCG_MECH_BREAKPOINT_H
#define STP_DCG_MECH_BREAKPOINT_H

#include <stdint.h>
#include <sys/types.h>

struct dthread;
struct _stp_pt_thread;
struct _stp_pt_probe;
struct _stp_x86_insn;

#pragma GCC visibility push(hidden)

/* What a site traps (a site may be both). */
enum {
	DCG_SITE_BRANCH = 1, /* a call, return or jump leaving the code seen so far */
	DCG_SITE_RETURN = 2, /* the return address of a call not descended into */
};
/* Trap every branch of the code reachable from addr, which d's thread is
 * about to run: follow straight-line code, conditional and direct jumps
 * inside the function; stop at calls (what follows a call is reached by
 * its return), returns, indirect jumps and jumps into other functions,
 * each a DCG_SITE_BRANCH. Code seen before is not walked again (in a
 * later period of tracing, its sites are armed again without reading the
 * code). */
int _stp_dcg_sites_from(struct dthread *d, uint64_t addr);
/* Trap a return address (DCG_SITE_RETURN). */
int _stp_dcg_site_return(struct dthread *d, uint64_t addr);
/* The flags of the site at addr in pid (0: none), and its instruction. */
int _stp_dcg_site(pid_t pid, uint64_t addr, const struct _stp_x86_insn **in);
/* Tracing is off in all pid's threads: every site's int3 goes; what was
 * learnt about the code stays for the next time (see the sites' file). */
void _stp_dcg_sites_release(pid_t pid);
/* Forget pid's sites without touching its memory (exec, exit). */
void _stp_dcg_sites_forget(pid_t pid);
/* Remove the sites of pid that are no longer in mapped code (dlclose). */
void _stp_dcg_sites_unmapped(pid_t pid);
/* The code at [lo, hi) of pid changed (the program's mmap, munmap,
 * mremap, mprotect): its sites go (their int3s removed where the engine
 * still has them: drop the breakpoints of code that is gone from the
 * engine first), with the instructions walked there; the code walked
 * elsewhere is walked again when reached (from the table: a walk that
 * went into the range meets the code there now). */
void _stp_dcg_sites_drop_range(pid_t pid, uint64_t lo, uint64_t hi);
/* t's system calls that may replace code are seen (on 1), or not any
 * more (mech_breakpoint_mem.c). */
void _stp_dcg_bp_watch_mem(struct _stp_pt_thread *t, int on);
/* Everything, at the end of the run (the engine removes the int3s). */
void _stp_dcg_sites_free(void);
/* Sites placed so far (for -v), and times one was armed again. */
uint64_t _stp_dcg_sites_placed(uint64_t *rearms);

/* The sites' probe handler (mech_breakpoint.c). */
int _stp_dcg_on_site(struct _stp_pt_thread *t, struct _stp_pt_probe *p, void *data);

#pragma GCC visibility pop

#endif
