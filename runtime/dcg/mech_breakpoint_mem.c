/* The breakpoint mechanism and code a traced thread replaces with its own
 * system calls, outside the dynamic linker (whose dlopen and dlclose reach
 * us as DCG_MEM_LIBS): mmap over code, munmap, mremap, mprotect. A traced
 * thread stops at the entry and exit of each of its system calls (two
 * stops, whatever the call); at the entry of one of these four, whether
 * code is in its range now is read from /proc/PID/maps; at the exit of
 * one that succeeded and touched code or made some, what was learnt about
 * that range only goes:
 *   - code gone (munmap, mmap MAP_FIXED over it, mremap's old range): the
 *     engine's int3s there, not written back (other bytes are there now;
 *     after a move, the int3s the pages took along are taken out), the
 *     sites and instructions walked there, the decodings and names;
 *   - mprotect keeps the bytes, our int3s in them: the sites stay (made
 *     executable again, the code runs as walked), unless the code is made
 *     writable (a JIT about to rewrite it): then they are removed while
 *     the bytes under them are still ours to put back;
 *   - new code (mmap, mprotect to PROT_EXEC): names and decodings there.
 * The thread's next code there is walked afresh. Calls by threads not
 * traced are not seen. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "dcg_internal.h"
#include "mech_breakpoint.h"
#include "ptrace/ptrace_engine.h"

#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

static const unsigned char wanted[] = {
    [SYS_mmap] = 1, [SYS_mprotect] = 1, [SYS_munmap] = 1, [SYS_mremap] = 1};

static uint64_t pages(uint64_t n)
{
	uint64_t pg = (uint64_t)sysconf(_SC_PAGESIZE);

	return (n + pg - 1) & ~(pg - 1);
}

/* Is any byte of [lo, hi) in an executable mapping of tid's process? */
static int code_in(pid_t tid, uint64_t lo, uint64_t hi)
{
	uint64_t(*r)[2];
	size_t n = _stp_pt_exec_ranges(tid, &r);
	int found = !r; /* not known: as if it were */

	for (size_t i = 0; i < n && !found; i++)
		found = r[i][0] < hi && r[i][1] > lo;
	free(r);
	return found;
}

/* Code at [lo, hi) of t's process changed: its sites, walked
 * instructions, decodings and names go. */
static void changed(struct _stp_pt_thread *t, uint64_t lo, uint64_t hi)
{
	if (lo >= hi)
		return;
	_stp_dcg_sites_drop_range(_stp_pt_pid(t), lo, hi);
	dcg_code_changed(_stp_pt_pid(t), lo, hi);
}

/* The code at [lo, hi) is gone (moved_to: moved there). */
static void gone(struct _stp_pt_thread *t, uint64_t lo, uint64_t hi, uint64_t moved_to)
{
	if (lo >= hi)
		return;
	_stp_pt_code_gone(t, lo, hi, moved_to);
	changed(t, lo, hi);
}

/* Before the call: is there code it may take away? */
static int code_before(struct _stp_pt_thread *t, const struct _stp_pt_syscall *c)
{
	const uint64_t *a = c->args;
	pid_t tid = _stp_pt_tid(t);

	switch (c->nr) {
	case SYS_mmap:
		return (a[3] & MAP_FIXED) && code_in(tid, a[0], a[0] + pages(a[1]));
	case SYS_munmap:
	case SYS_mprotect:
		return code_in(tid, a[0], a[0] + pages(a[1]));
	case SYS_mremap:
		return code_in(tid, a[0], a[0] + pages(a[1])) ||
		    ((a[3] & MREMAP_FIXED) && code_in(tid, a[4], a[4] + pages(a[2])));
	default:
		return 0;
	}
}

static void mremap_done(struct _stp_pt_thread *t, const struct _stp_pt_syscall *c)
{
	uint64_t old = c->args[0], olen = pages(c->args[1]), nlen = pages(c->args[2]);
	uint64_t now = (uint64_t)c->ret;

	if (now == old) { /* in place: the bytes stay where they were */
		gone(t, old + nlen, old + olen, 0);
		changed(t, old + olen, old + nlen);
		return;
	}
	gone(t, now, now + nlen, 0); /* what MREMAP_FIXED replaced there */
	/* olen 0: a second mapping of shared pages; the first stays */
	if (olen)
		gone(t, old, old + olen, now);
}

static void on_syscall(struct _stp_pt_thread *t, struct _stp_pt_syscall *c, void *data)
{
	const uint64_t *a = c->args;

	(void)data;
	if (!c->exit) {
		c->note = (uint64_t)code_before(t, c);
		return;
	}
	if (c->ret < 0 && c->ret >= -4095) /* failed: nothing changed */
		return;
	uint64_t r = (uint64_t)c->ret;
	switch (c->nr) {
	case SYS_mmap:
		if (c->note)
			gone(t, r, r + pages(a[1]), 0);
		else if (a[2] & PROT_EXEC) /* new code where there was none */
			dcg_code_changed(_stp_pt_pid(t), r, r + pages(a[1]));
		break;
	case SYS_munmap:
		if (c->note)
			gone(t, a[0], a[0] + pages(a[1]), 0);
		break;
	case SYS_mremap:
		if (c->note)
			mremap_done(t, c);
		break;
	case SYS_mprotect:
		if (c->note && (a[2] & PROT_WRITE))
			changed(t, a[0], a[0] + pages(a[1]));
		else if (a[2] & PROT_EXEC)
			dcg_code_changed(_stp_pt_pid(t), a[0], a[0] + pages(a[1]));
		break;
	}
}

void _stp_dcg_bp_watch_mem(struct _stp_pt_thread *t, int on)
{
	_stp_pt_watch_syscalls(t, wanted, sizeof wanted, on ? on_syscall : NULL, NULL);
}
