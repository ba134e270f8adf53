/* Shared libraries of a traced process, through the dynamic linker's
 * debugger interface (<link.h>): the executable's DT_DEBUG entry points at
 * struct r_debug, whose r_map lists the loaded objects and whose r_brk is
 * a function the dynamic linker calls before and after each change of that
 * list (r_state RT_ADD/RT_DELETE, then RT_CONSISTENT). A probe on r_brk
 * tells the client when libraries came or went, dlopen and dlclose too.
 * After a dlclose the engine itself drops the probes whose code went away
 * (a fork child's copies included, which its client cannot name).
 *
 * At the exec stop the dynamic linker has not run yet and r_debug is not
 * filled in: a probe at the program's entry point (AT_ENTRY, reached after
 * the initial libraries are loaded) finds it then. Everything is read from
 * the target's memory and /proc/PID/auxv; no ELF file is opened. */
#include "ptrace_internal.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* struct r_debug and struct link_map (64-bit), the fields we read */
#define R_MAP 8
#define R_BRK 16
#define R_STATE 24
#define RT_CONSISTENT 0
#define RT_DELETE 2
#define L_ADDR 0
#define L_NAME 8
#define L_NEXT 24

static int auxv(struct _stp_pt_proc *p, uint64_t type, uint64_t *val)
{
	char path[64];
	uint64_t av[2];
	int fd, rc = -ENOENT;

	snprintf(path, sizeof path, "/proc/%d/auxv", (int)(p->threads ? p->threads->tid : p->pid));
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return -errno;
	while (read(fd, av, sizeof av) == (ssize_t)sizeof av && av[0] != AT_NULL) {
		if (av[0] == type) {
			*val = av[1];
			rc = 0;
			break;
		}
	}
	close(fd);
	return rc;
}

/* The address of the program's r_debug, 0 while the dynamic linker has not
 * set it, -ENOENT for a static executable. */
static int find_r_debug(struct _stp_pt_proc *p, uint64_t *r_debug)
{
	uint64_t phdr, phnum, bias = 0, dyn = 0;
	int rc, have_bias = 0;

	if ((rc = auxv(p, AT_PHDR, &phdr)) < 0 || (rc = auxv(p, AT_PHNUM, &phnum)) < 0)
		return rc;
	for (uint64_t i = 0; i < phnum && i < 64; i++) {
		Elf64_Phdr ph;
		if ((rc = _stp_pt_proc_read(p, phdr + i * sizeof ph, &ph, sizeof ph)) < 0)
			return rc;
		if (ph.p_type == PT_PHDR) {
			bias = phdr - ph.p_vaddr;
			have_bias = 1;
		} else if (ph.p_type == PT_DYNAMIC) {
			dyn = ph.p_vaddr;
		}
	}
	if (!dyn || !have_bias)
		return -ENOENT;
	dyn += bias;
	for (int i = 0; i < 1024; i++) {
		Elf64_Dyn d;
		if ((rc = _stp_pt_proc_read(p, dyn + (uint64_t)i * sizeof d, &d, sizeof d)) < 0)
			return rc;
		if (d.d_tag == DT_NULL)
			break;
		if (d.d_tag == DT_DEBUG) {
			*r_debug = d.d_un.d_val;
			return 0;
		}
	}
	return -ENOENT;
}

static void call_client(struct _stp_pt_thread *t)
{
	struct _stp_pt_proc *p = t->proc;

	if (p->libs_fn)
		p->libs_fn(t, p->libs_data);
}

static int on_brk(struct _stp_pt_thread *t, struct _stp_pt_probe *pr, void *data)
{
	int32_t state;

	(void)pr;
	(void)data;
	if (!t->proc->r_debug ||
	    _stp_pt_proc_read(t->proc, t->proc->r_debug + R_STATE, &state, sizeof state) < 0)
		return -EFAULT;
	if (state == RT_DELETE)
		t->proc->libs_deleting = 1;
	if (state == RT_CONSISTENT) {
		if (t->proc->libs_deleting)
			_stp_pt_drop_unmapped(t);
		t->proc->libs_deleting = 0;
		call_client(t);
	}
	return 0;
}

/* Probe r_brk once r_debug is there. 1 when done, 0 when not yet. */
static int arm_brk(struct _stp_pt_proc *p)
{
	uint64_t rd = 0, brk = 0;
	int rc;

	if (p->libs_brk)
		return 1;
	if ((rc = find_r_debug(p, &rd)) < 0)
		return rc;
	if (!rd || _stp_pt_proc_read(p, rd + R_BRK, &brk, 8) < 0 || !brk)
		return 0;
	p->r_debug = rd;
	if ((rc = _stp_pt_probe_add(p, brk, on_brk, NULL, NULL, NULL)) < 0)
		return rc;
	p->libs_brk = brk;
	_stp_dbg(STP_DBG_PTRACE, 1, "%d: r_debug %#llx, r_brk %#llx", (int)p->pid,
		 (unsigned long long)rd, (unsigned long long)brk);
	return 1;
}

/* At the program's entry: the initial libraries are loaded. */
static int on_entry_point(struct _stp_pt_thread *t, struct _stp_pt_probe *pr, void *data)
{
	(void)pr;
	(void)data;
	if (t->proc->libs_brk)
		return 0;
	if (arm_brk(t->proc) <= 0)
		return -ENOENT;
	call_client(t);
	return 0;
}

int _stp_pt_watch_libraries(struct _stp_pt_proc *p, _stp_pt_libs_fn fn, void *data)
{
	uint64_t entry;
	int rc;

	p->libs_fn = fn;
	p->libs_data = data;
	if (!fn)
		return 0;
	if ((rc = arm_brk(p)) != 0)
		return rc < 0 ? rc : 0;
	/* not yet: at the exec stop */
	if ((rc = auxv(p, AT_ENTRY, &entry)) < 0)
		return rc;
	return _stp_pt_probe_add(p, entry, on_entry_point, NULL, NULL, NULL);
}

int _stp_pt_each_library(struct _stp_pt_proc *p,
			 void (*fn)(const char *name, uint64_t bias, void *data), void *data)
{
	uint64_t lm = 0;
	int n = 0;

	if (!p->r_debug) {
		uint64_t rd = 0;
		if (find_r_debug(p, &rd) < 0 || !rd)
			return -ENOENT;
		p->r_debug = rd;
	}
	if (_stp_pt_proc_read(p, p->r_debug + R_MAP, &lm, 8) < 0)
		return -EFAULT;
	for (; lm && n < 4096; n++) {
		uint64_t addr, name_at, next;
		char name[4096];
		size_t len = 0;

		if (_stp_pt_proc_read(p, lm + L_ADDR, &addr, 8) < 0 ||
		    _stp_pt_proc_read(p, lm + L_NAME, &name_at, 8) < 0 ||
		    _stp_pt_proc_read(p, lm + L_NEXT, &next, 8) < 0)
			return -EFAULT;
		/* the name, a chunk at a time (it may end near a page end) */
		while (name_at && len < sizeof name - 1) {
			size_t chunk = 64, i;
			if (chunk > sizeof name - 1 - len)
				chunk = sizeof name - 1 - len;
			if (_stp_pt_proc_read(p, name_at + len, name + len, chunk) < 0 &&
			    _stp_pt_proc_read(p, name_at + len, name + len, chunk = 1) < 0)
				break;
			for (i = 0; i < chunk && name[len + i]; i++)
				;
			len += i;
			if (i < chunk)
				break;
		}
		name[len] = 0;
		fn(name, addr, data);
		lm = next;
	}
	return n;
}
