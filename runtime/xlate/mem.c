/* What the program's code may do under us: code in private, read-only,
 * file-backed mappings (a program's and its libraries' text) is taken as
 * stable; code anywhere else (writable, anonymous, shared: JITs, and
 * memory another mapping or process can write) is checked at each block
 * entry against the bytes it was translated from (block.c). The mappings
 * come from /proc/PID/maps, read again when an address is not covered. */
#include "xlate/xl_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static void reload(struct xl_proc *xp, pid_t tid)
{
	char path[64], line[512];
	FILE *f;

	xp->nmr = 0;
	snprintf(path, sizeof path, "/proc/%d/maps", (int)tid);
	if (!(f = fopen(path, "re")))
		return;
	while (fgets(line, sizeof line, f)) {
		unsigned long lo, hi, ino;
		char perms[8];
		int n = 0;
		if (sscanf(line, "%lx-%lx %7s %*s %*s %lu %n", &lo, &hi, perms, &ino, &n) < 4)
			continue;
		if (xp->nmr == xp->capmr) {
			size_t cap = xp->capmr ? 2 * xp->capmr : 64;
			struct xl_mrange *v = realloc(xp->mr, cap * sizeof *v);
			if (!v)
				break;
			xp->mr = v;
			xp->capmr = cap;
		}
		/* a regular file's private, read-only text: inode, no w, p */
		int stable = ino != 0 && perms[1] != 'w' && perms[3] == 'p' && line[n] == '/';
		xp->mr[xp->nmr++] = (struct xl_mrange){ lo, hi, stable };
	}
	fclose(f);
}

static const struct xl_mrange *find(const struct xl_proc *xp, uint64_t addr)
{
	size_t lo = 0, hi = xp->nmr;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (addr < xp->mr[mid].lo)
			hi = mid;
		else if (addr >= xp->mr[mid].hi)
			lo = mid + 1;
		else
			return &xp->mr[mid];
	}
	return NULL;
}

int xl_code_stable(struct xl_thread *xt, uint64_t addr)
{
	struct xl_proc *xp = xt->xp;
	const struct xl_mrange *m = find(xp, addr);

	/* only what was seen stable is believed: anything else, look again
	 * (an mprotect or a new mapping since) */
	if (!m || !m->stable) {
		reload(xp, xt->tid);
		m = find(xp, addr);
	}
	return m && m->stable;
}

void xl_mem_forget(struct xl_proc *xp)
{
	xp->nmr = 0;
}

int xl_block_changed(struct xl_thread *xt, const struct xl_block *b)
{
	uint8_t now[XL_CHECK_MAX];

	if (!b->checked)
		return 0;
	if (_stp_pt_read(xt->t, b->native, now, b->native_end - b->native) < 0)
		return 1;
	return memcmp(now, b->orig, b->native_end - b->native) != 0;
}
