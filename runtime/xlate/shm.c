/* Memory shared with a target: each mapping is a memfd of its own, made
 * in the target by an injected memfd_create, opened by staprun through
 * /proc/PID/fd/N, mapped in both, and closed in both at once (the
 * mappings keep the memory): the target is left no descriptor of ours.
 * Addresses are chosen from /proc/PID/maps and mapped with
 * MAP_FIXED_NOREPLACE, so nothing of the program is ever replaced. */
#include "xlate/xl_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000
#endif
#ifndef MFD_CLOEXEC
#define MFD_CLOEXEC 1
#endif
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

#define LOW_LIMIT 0x80000000ull /* regions: below 2 GiB */
#define GUARD 0x10000ull

static int64_t sys(struct _stp_pt_thread *t, long nr, uint64_t a0, uint64_t a1, uint64_t a2,
		   uint64_t a3, uint64_t a4, uint64_t a5)
{
	uint64_t a[6] = {a0, a1, a2, a3, a4, a5};
	int64_t ret;
	int rc = _stp_pt_inject_syscall(t, nr, a, &ret);

	return rc < 0 ? rc : ret;
}

/* A memfd of size bytes: its descriptor in the target (*tfd) and in
 * staprun (returned), or a negative errno. Its name goes briefly below
 * the thread's red zone (the thread is stopped), then the bytes there
 * are put back. */
static int memfd_in(struct _stp_pt_thread *t, size_t size, int *tfd)
{
	static const char name[16] = "ustap-xlate";
	struct user_regs_struct r;
	uint8_t saved[sizeof name];
	char path[64];
	int rc, fd;

	if ((rc = _stp_pt_get_regs(t, &r)) < 0)
		return rc;
	uint64_t at = (r.rsp - 128 - 256) & ~15ull;
	if ((rc = _stp_pt_read(t, at, saved, sizeof saved)) < 0 ||
	    (rc = _stp_pt_write(t, at, name, sizeof name)) < 0)
		return rc;
	int64_t n = sys(t, SYS_memfd_create, at, MFD_CLOEXEC, 0, 0, 0, 0);
	if ((rc = _stp_pt_write(t, at, saved, sizeof saved)) < 0 || n < 0) {
		if (n >= 0)
			sys(t, SYS_close, (uint64_t)n, 0, 0, 0, 0, 0);
		return n < 0 ? (int)n : rc;
	}
	*tfd = (int)n;
	snprintf(path, sizeof path, "/proc/%d/fd/%d", (int)_stp_pt_pid(t), *tfd);
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0 || ftruncate(fd, (off_t)size) < 0) {
		rc = -errno;
		if (fd >= 0)
			close(fd);
		sys(t, SYS_close, (uint64_t)*tfd, 0, 0, 0, 0, 0);
		return rc;
	}
	return fd;
}

struct gap {
	uint64_t lo, hi;
};

/* The free gaps of the target's address space (between mappings). */
static size_t gaps(pid_t pid, struct gap *g, size_t max)
{
	char path[64], line[512];
	uint64_t prev = 0x10000;
	size_t n = 0;
	FILE *f;

	snprintf(path, sizeof path, "/proc/%d/maps", (int)pid);
	if (!(f = fopen(path, "re")))
		return 0;
	while (fgets(line, sizeof line, f) && n < max) {
		unsigned long lo, hi;
		if (sscanf(line, "%lx-%lx", &lo, &hi) != 2)
			continue;
		if (lo > prev)
			g[n++] = (struct gap){prev, lo};
		if (hi > prev)
			prev = hi;
	}
	if (n < max && prev < 0x7ffffffff000ull)
		g[n++] = (struct gap){prev, 0x7ffffffff000ull};
	fclose(f);
	return n;
}

/* Where to put size bytes: the highest place below 2 GiB (low: near is
 * 0), else as near `near` as possible, within reach of it. 0: none. */
static uint64_t place(pid_t pid, uint64_t near, size_t size)
{
	struct gap g[1024];
	size_t n = gaps(pid, g, 1024);
	uint64_t best = 0, best_d = UINT64_MAX;

	for (size_t i = 0; i < n; i++) {
		uint64_t lo = (g[i].lo + GUARD + 0xffff) & ~0xffffull, hi = g[i].hi;
		if (!near && hi > LOW_LIMIT)
			hi = LOW_LIMIT;
		if (hi < GUARD + size || lo > hi - GUARD - size)
			continue;
		uint64_t top = (hi - GUARD - size) & ~0xffffull;
		if (top < lo)
			continue;
		if (!near) {
			if (top > best)
				best = top;
			continue;
		}
		uint64_t c = near < lo ? lo : near > top ? top : near & ~0xffffull;
		uint64_t d = c > near ? c - near : near - c;
		if (d < best_d) {
			best_d = d;
			best = c;
		}
	}
	if (near && best_d >= XL_CHUNK_REACH - size)
		return 0;
	return best;
}

static int remember(struct xl_proc *xp, const struct xl_mapping *m)
{
	struct xl_mapping *v = realloc(xp->maps, (xp->nmaps + 1) * sizeof *v);

	if (!v)
		return -ENOMEM;
	xp->maps = v;
	xp->maps[xp->nmaps++] = *m;
	return 0;
}

/* A new mapping of size bytes (rw- in the target, or r-x when exec), at
 * the place `near` says (0: low), in *m. */
static int map_new(struct xl_proc *xp, struct _stp_pt_thread *t, uint64_t near, size_t size,
		   int exec, struct xl_mapping *m)
{
	int tfd, fd = memfd_in(t, size, &tfd), rc = -ENOMEM;
	int prot = PROT_READ | (exec ? PROT_EXEC : PROT_WRITE);

	if (fd < 0)
		return fd;
	int64_t a = -EEXIST;
	for (int tries = 0; tries < 4 && a == -EEXIST; tries++) {
		uint64_t at = place(_stp_pt_tid(t), near, size);
		if (!at) {
			a = -ENOMEM;
			break;
		}
		a = sys(t, SYS_mmap, at, size, (uint64_t)prot, MAP_SHARED | MAP_FIXED_NOREPLACE,
			(uint64_t)tfd, 0);
		if (a >= 0 && (uint64_t)a != at) { /* a kernel ignoring the flag */
			sys(t, SYS_munmap, (uint64_t)a, size, 0, 0, 0, 0);
			a = -EEXIST;
		}
	}
	sys(t, SYS_close, (uint64_t)tfd, 0, 0, 0, 0, 0);
	if (a < 0 && a > -4096) {
		close(fd);
		return (int)a;
	}
	m->addr = (uint64_t)a;
	m->size = size;
	m->mem = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	rc = m->mem == MAP_FAILED ? -errno : 0;
	close(fd);
	if (rc < 0 || (rc = remember(xp, m)) < 0) {
		if (m->mem != MAP_FAILED)
			munmap(m->mem, size);
		sys(t, SYS_munmap, m->addr, size, 0, 0, 0, 0);
		return rc;
	}
	xl_debug("mapped %zu bytes at %#llx in %d%s", size, (unsigned long long)m->addr,
		 (int)_stp_pt_tid(t), exec ? " (code)" : "");
	return 0;
}

/* Fault in [off, off + len) of m in both processes now: a first touch
 * costs tens of microseconds on these machines (shadow paging), better
 * paid at setup than inside the traced code. */
static void populate(struct xl_thread *xt, const struct xl_mapping *m, size_t off, size_t len)
{
	madvise(m->mem + off, len, MADV_POPULATE_WRITE);
	sys(xt->t, SYS_madvise, m->addr + off, len, MADV_POPULATE_WRITE, 0, 0, 0);
}

/* The thread's region (layout.h): rw-, then its first pages (the agent)
 * r-x; the control block, agent stack and ring faulted in. */
int xl_map_region(struct xl_thread *xt, size_t size)
{
	int rc = map_new(xt->xp, xt->t, 0, size, 0, &xt->rg);

	if (rc < 0)
		return rc;
	int64_t r =
	    sys(xt->t, SYS_mprotect, xt->rg.addr, XL_AGENT_MAX, PROT_READ | PROT_EXEC, 0, 0, 0);
	if (r < 0)
		return (int)r;
	populate(xt, &xt->rg, XL_CTL_OFF, XL_STACK_TOP - XL_CTL_OFF);
	populate(xt, &xt->rg, XL_RING_OFF, size - XL_RING_OFF);
	return 0;
}

int xl_map_chunk(struct xl_thread *xt, uint64_t near, struct xl_chunk *ch)
{
	struct xl_mapping m;
	int rc = map_new(xt->xp, xt->t, near, xl_chunk_size(xt->xp->x), 1, &m);

	if (rc < 0)
		return rc;
	memset(ch, 0, sizeof *ch);
	ch->addr = m.addr;
	ch->mem = m.mem;
	ch->size = m.size;
	memset(ch->mem, 0xcc, ch->size);
	return 0;
}

/* The process region of an attached process (layout.h, xl_pctl): rw-,
 * its agent r-x. */
int xl_map_pregion(struct xl_proc *xp, struct _stp_pt_thread *t, struct xl_mapping *m)
{
	int rc = map_new(xp, t, 0, XL_PREGION_SIZE, 0, m);

	if (rc < 0)
		return rc;
	int64_t r = sys(t, SYS_mprotect, m->addr, XL_AGENT_MAX, PROT_READ | PROT_EXEC, 0, 0, 0);
	return r < 0 ? (int)r : 0;
}

/* Unmap everything of ours from the target (t stopped, none of its
 * threads in our code) and from staprun. */
void xl_unmap_all(struct xl_proc *xp, struct _stp_pt_thread *t)
{
	for (size_t i = 0; i < xp->nmaps; i++) {
		struct xl_mapping *m = &xp->maps[i];
		if (t)
			sys(t, SYS_munmap, m->addr, m->size, 0, 0, 0, 0);
		munmap(m->mem, m->size);
	}
	free(xp->maps);
	xp->maps = NULL;
	xp->nmaps = 0;
}
