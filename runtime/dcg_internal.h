/* Between the dynamic call graph's core (dcg.c: threads, shadow stack,
 * records) and the code sites of its breakpoint mechanism (dcg_sites.c). */
#ifndef STP_DCG_INTERNAL_H
#define STP_DCG_INTERNAL_H

#include <stdint.h>
#include <sys/types.h>

struct _stp_pt_thread;
struct _stp_pt_probe;
struct _stp_x86_insn;

/* The instruction at addr from its original bytes (under breakpoints
 * too), read through a small window of the target's code. 0 or -errno. */
int _stp_dcg_read_insn(struct _stp_pt_thread *t, uint64_t addr, struct _stp_x86_insn *in);
/* The cached code window is stale (exec, dlclose, munmap). */
void _stp_dcg_window_drop(void);

/* Does a jump from `from` to `to` enter another function (a tail call)? */
int _stp_dcg_enters_func(struct _stp_pt_thread *t, uint64_t from, uint64_t to);

/* The bounds of the function containing addr, when its symbol has a
 * size: 0, else -1. */
int _stp_dcg_func_range(struct _stp_pt_thread *t, uint64_t addr, uint64_t *lo, uint64_t *hi);

/* What a site traps (a site may be both). */
enum {
	DCG_SITE_BRANCH = 1, /* a call, return or jump leaving the code seen so far */
	DCG_SITE_RETURN = 2, /* the return address of a call not descended into */
};
/* Trap every branch of the code reachable from addr, which the thread is
 * about to run: follow straight-line code, conditional and direct jumps
 * inside the function; stop at calls (what follows a call is reached by
 * its return), returns, indirect jumps and jumps into other functions,
 * each a DCG_SITE_BRANCH. Code seen before is not walked again. */
int _stp_dcg_sites_from(struct _stp_pt_thread *t, uint64_t addr);
/* Trap a return address (DCG_SITE_RETURN). */
int _stp_dcg_site_return(struct _stp_pt_thread *t, uint64_t addr);
/* The flags of the site at addr in pid (0: none), and its instruction. */
int _stp_dcg_site(pid_t pid, uint64_t addr, const struct _stp_x86_insn **in);
/* Remove every site of pid (tracing is off in all its threads). */
void _stp_dcg_sites_release(pid_t pid);
/* Forget pid's sites without touching its memory (exec, exit). */
void _stp_dcg_sites_forget(pid_t pid);
/* Remove the sites of pid that are no longer in mapped code (dlclose). */
void _stp_dcg_sites_unmapped(struct _stp_pt_thread *t);
/* Everything, at the end of the run (the engine removes the int3s). */
void _stp_dcg_sites_free(void);
/* Sites placed so far (for -v). */
uint64_t _stp_dcg_sites_placed(void);

/* The sites' probe handler (dcg.c). */
int _stp_dcg_on_site(struct _stp_pt_thread *t, struct _stp_pt_probe *p, void *data);

#endif
