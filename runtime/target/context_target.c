/* The context API for the target thread of a process probe: registers,
 * memory, ids, through the backend's ops (backend.h). Without a target
 * (begin/end/timer probes) the ids describe the tracer itself, as before
 * process probes existed. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "lang/stp_internal.h"
#include "context_internal.h"
#include "sym/symbols.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static struct _stp_tctx *tctx(struct _stp_context *c)
{
	return c ? (struct _stp_tctx *)c->target : NULL;
}

int _stp_ctx_has_target(struct _stp_context *c)
{
	return tctx(c) != NULL;
}

int64_t _stp_ctx_pid(struct _stp_context *c)
{
	struct _stp_tctx *tc = tctx(c);

	return tc ? tc->pid : getpid();
}

int64_t _stp_ctx_tid(struct _stp_context *c)
{
	struct _stp_tctx *tc = tctx(c);

	return tc ? tc->tid : (int64_t)syscall(SYS_gettid);
}

uint64_t _stp_ctx_uaddr(struct _stp_context *c)
{
	struct _stp_tctx *tc = tctx(c);

	return tc ? tc->uaddr : 0;
}

uint64_t _stp_ctx_bias(struct _stp_context *c)
{
	struct _stp_tctx *tc = tctx(c);

	return tc ? tc->bias : 0;
}

int _stp_ctx_is_return(struct _stp_context *c)
{
	struct _stp_tctx *tc = tctx(c);

	return tc ? tc->is_return : 0;
}

/* user_regs_struct offsets by x86-64 DWARF register number (0-16). */
static const size_t dwarf_reg_offs[] = {
    offsetof(struct user_regs_struct, rax), offsetof(struct user_regs_struct, rdx),
    offsetof(struct user_regs_struct, rcx), offsetof(struct user_regs_struct, rbx),
    offsetof(struct user_regs_struct, rsi), offsetof(struct user_regs_struct, rdi),
    offsetof(struct user_regs_struct, rbp), offsetof(struct user_regs_struct, rsp),
    offsetof(struct user_regs_struct, r8),  offsetof(struct user_regs_struct, r9),
    offsetof(struct user_regs_struct, r10), offsetof(struct user_regs_struct, r11),
    offsetof(struct user_regs_struct, r12), offsetof(struct user_regs_struct, r13),
    offsetof(struct user_regs_struct, r14), offsetof(struct user_regs_struct, r15),
    offsetof(struct user_regs_struct, rip),
};

static int reg_value(const struct user_regs_struct *r, int n, uint64_t *out)
{
	if (n < 0 || n >= (int)(sizeof dwarf_reg_offs / sizeof dwarf_reg_offs[0]))
		return -1;
	memcpy(out, (const char *)r + dwarf_reg_offs[n], sizeof *out);
	return 0;
}

int _stp_ctx_reg(struct _stp_context *c, int dwarf_regno, uint64_t *out)
{
	struct _stp_tctx *tc = tctx(c);

	*out = 0;
	if (!tc || !tc->ops) {
		_stp_error(c, "cannot access registers in this probe");
		return -1;
	}
	if (!tc->have_regs) {
		int rc = tc->ops->get_regs(tc, &tc->regs);
		if (rc < 0) {
			_stp_error(c, "couldn't read registers: %s", strerror(-rc));
			return -1;
		}
		tc->have_regs = 1;
	}
	if (reg_value(&tc->regs, dwarf_regno, out) < 0) {
		_stp_error(c, "unsupported register %d", dwarf_regno);
		return -1;
	}
	return 0;
}

int _stp_ctx_set_reg(struct _stp_context *c, int dwarf_regno, uint64_t value)
{
	struct _stp_tctx *tc = tctx(c);
	uint64_t old;
	int rc;

	if (dwarf_regno == 16 || dwarf_regno == 7) {
		_stp_error(c, "cannot write register %d", dwarf_regno);
		return -1;
	}
	if (_stp_ctx_reg(c, dwarf_regno, &old) < 0) /* fetches tc->regs */
		return -1;
	memcpy((char *)&tc->regs + dwarf_reg_offs[dwarf_regno], &value, sizeof value);
	rc = tc->ops->set_regs(tc, &tc->regs);
	if (rc < 0) {
		/* the thread's registers are as they were */
		memcpy((char *)&tc->regs + dwarf_reg_offs[dwarf_regno], &old, sizeof old);
		if (rc == -ENODATA)
			_stp_error(c, "cannot write register %d: not available at this event",
				   dwarf_regno);
		else
			_stp_error(c, "couldn't write register %d", dwarf_regno);
		return -1;
	}
	return 0;
}

int _stp_tctx_read(struct _stp_tctx *tc, uint64_t addr, void *buf, size_t len)
{
	return tc && tc->ops ? tc->ops->read(tc, addr, buf, len) : -EFAULT;
}

static void read_error(struct _stp_context *c, int rc, uint64_t addr)
{
	if (rc == -ENODATA)
		_stp_error(c, STP_NOT_AVAILABLE_READ, (unsigned long long)addr);
	else
		_stp_error(c, "read fault [man error::fault] at 0x%llx", (unsigned long long)addr);
}

int _stp_ctx_read_target(struct _stp_context *c, uint64_t addr, void *buf, size_t len)
{
	int rc = _stp_tctx_read(tctx(c), addr, buf, len);

	if (rc < 0) {
		read_error(c, rc, addr);
		return -1;
	}
	return 0;
}

int64_t _stp_ctx_read_int(struct _stp_context *c, uint64_t addr, int size, int is_signed)
{
	unsigned char b[8] = {0};
	uint64_t v = 0;

	if (size < 1 || size > 8)
		size = 8;
	if (_stp_ctx_read_target(c, addr, b, (size_t)size) < 0)
		return 0;
	for (int i = size - 1; i >= 0; i--)
		v = v << 8 | b[i];
	if (is_signed && size < 8 && (v >> (size * 8 - 1)) & 1)
		v |= ~0ull << (size * 8);
	return (int64_t)v;
}

int _stp_ctx_read_target_quiet(struct _stp_context *c, uint64_t addr, void *buf, size_t len)
{
	return _stp_tctx_read(tctx(c), addr, buf, len) < 0 ? -1 : 0;
}

int _stp_ctx_write_int(struct _stp_context *c, uint64_t addr, int size, int64_t value)
{
	struct _stp_tctx *tc = tctx(c);
	unsigned char b[8];
	uint64_t v = (uint64_t)value;
	int rc;

	if (size < 1 || size > 8)
		size = 8;
	for (int i = 0; i < size; i++, v >>= 8)
		b[i] = (unsigned char)v;
	rc = tc && tc->ops ? tc->ops->write(tc, addr, b, (size_t)size) : -EFAULT;
	if (rc == -ENODATA) {
		_stp_error(c, "cannot write user memory at 0x%llx: not available at this event",
			   (unsigned long long)addr);
		return -1;
	}
	if (rc < 0) {
		_stp_error(c, "write fault [man error::fault] at 0x%llx", (unsigned long long)addr);
		return -1;
	}
	return 0;
}

/* Number IDX (0-based) after KEY ("Uid:", "PPid:") in /proc/PID/status;
 * -1 when unreadable. */
int64_t _stp_proc_status_field(pid_t pid, const char *key, int idx)
{
	char path[64], line[256];
	size_t klen = strlen(key);
	int64_t v = -1;
	FILE *f;

	snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof line, f))
		if (!strncmp(line, key, klen)) {
			char *p = line + klen;

			for (int i = 0; i <= idx; i++)
				v = strtoll(p, &p, 10);
			break;
		}
	fclose(f);
	return v;
}

void _stp_ctx_execname(struct _stp_context *c, char *dst, size_t len)
{
	char path[64];
	FILE *f;

	if (!len)
		return;
	dst[0] = '\0';
	if (tctx(c) && tctx(c)->comm && tctx(c)->comm[0]) {
		snprintf(dst, len, "%s", tctx(c)->comm);
		return;
	}
	snprintf(path, sizeof path, "/proc/%lld/comm", (long long)_stp_ctx_pid(c));
	f = fopen(path, "re");
	if (!f)
		return;
	if (fgets(dst, (int)len, f))
		dst[strcspn(dst, "\n")] = '\0';
	fclose(f);
}

int64_t _stp_ctx_ppid(struct _stp_context *c)
{
	return tctx(c) ? _stp_proc_status_field(tctx(c)->pid, "PPid:", 0) : getppid();
}

int64_t _stp_ctx_uid(struct _stp_context *c)
{
	return tctx(c) ? _stp_proc_status_field(tctx(c)->pid, "Uid:", 0) : getuid();
}

void _stp_ctx_usym(struct _stp_context *c, int what, uint64_t addr, char *dst, size_t len)
{
	struct _stp_symtab *symtab;

	if (!tctx(c)) {
		snprintf(dst, len, "0x%llx", (unsigned long long)addr);
		return;
	}
	symtab = _stp_sym_of(tctx(c)->pid);
	if (!symtab) {
		snprintf(dst, len, "0x%llx", (unsigned long long)addr);
		return;
	}
	if (what == 0)
		_stp_sym_usymname(symtab, addr, dst, len);
	else if (what == 1)
		_stp_sym_usymdata(symtab, addr, dst, len);
	else
		_stp_sym_umodname(symtab, addr, dst, len);
}

/* ---- @entry values: per (thread, .return probe), a stack of frames
 * ordered by decreasing stack pointer (the caller's frames below) ---- */

#define ENTRY_SLOTS 16

struct entry_frame {
	uint64_t sp; /* at the save probe (inside the callee's frame) */
	int64_t v[ENTRY_SLOTS];
};

struct entry_stack {
	pid_t tid;
	const struct _stp_probe *p;
	struct entry_frame *f;
	size_t n, cap;
};

static struct entry_stack *stacks;
static size_t nstacks, capstacks;
static const struct _stp_module *entry_module;

void _stp_entry_set_module(const struct _stp_module *m)
{
	entry_module = m;
}

static struct entry_stack *entry_stack(pid_t tid, const struct _stp_probe *p, int create)
{
	for (size_t i = 0; i < nstacks; i++)
		if (stacks[i].tid == tid && stacks[i].p == p)
			return &stacks[i];
	if (!create)
		return NULL;
	if (nstacks == capstacks) {
		size_t cap = capstacks ? 2 * capstacks : 16;
		struct entry_stack *s = realloc(stacks, cap * sizeof *s);
		if (!s)
			return NULL;
		stacks = s;
		capstacks = cap;
	}
	memset(&stacks[nstacks], 0, sizeof stacks[nstacks]);
	stacks[nstacks].tid = tid;
	stacks[nstacks].p = p;
	return &stacks[nstacks++];
}

void _stp_ctx_entry_save(struct _stp_context *c, int64_t slot, int64_t value)
{
	const struct _stp_module *m = entry_module;
	struct entry_stack *st;
	uint64_t sp;

	if (!m || !c->probe || c->probe->sequence < 0 || c->probe->sequence >= m->nprobes ||
	    slot < 0 || slot >= ENTRY_SLOTS || _stp_ctx_reg(c, 7, &sp) < 0)
		return;
	st = entry_stack((pid_t)_stp_ctx_tid(c), &m->probes[c->probe->sequence], 1);
	if (!st)
		return;
	if (slot == 0) {
		/* frames at or below this one are gone (returned or unwound) */
		while (st->n && st->f[st->n - 1].sp <= sp)
			st->n--;
		if (st->n == st->cap) {
			size_t cap = st->cap ? 2 * st->cap : 8;
			struct entry_frame *f = realloc(st->f, cap * sizeof *f);
			if (!f)
				return;
			st->f = f;
			st->cap = cap;
		}
		memset(&st->f[st->n], 0, sizeof st->f[st->n]);
		st->f[st->n++].sp = sp;
	}
	if (st->n && st->f[st->n - 1].sp == sp)
		st->f[st->n - 1].v[slot] = value;
}

int64_t _stp_ctx_entry_get(struct _stp_context *c, int64_t slot)
{
	struct entry_stack *st = entry_stack((pid_t)_stp_ctx_tid(c), c->probe, 0);
	uint64_t sp;
	size_t m;

	if (!st || slot < 0 || slot >= ENTRY_SLOTS || _stp_ctx_reg(c, 7, &sp) < 0)
		return 0;
	/* the returning frame: the outermost of those below the return's sp */
	for (m = 0; m < st->n && st->f[m].sp >= sp; m++)
		;
	return m < st->n ? st->f[m].v[slot] : 0;
}

int _stp_ctx_entry_frame(struct _stp_context *c, int64_t slot, uint64_t cfa, int64_t *value)
{
	struct entry_stack *st = entry_stack((pid_t)_stp_ctx_tid(c), c->probe, 0);

	*value = 0;
	/* at the entry the call has pushed its return address below the CFA */
	for (size_t i = 0; st && slot >= 0 && slot < ENTRY_SLOTS && i < st->n; i++)
		if (st->f[i].sp == cfa - 8) {
			*value = st->f[i].v[slot];
			return 0;
		}
	_stp_error(c,
		   "the value at the function's entry (DW_OP_entry_value) was not saved for "
		   "this call: it began before the probes were placed");
	return -1;
}

void _stp_entry_done(pid_t tid, const struct _stp_probe *p, uint64_t sp)
{
	struct entry_stack *st = entry_stack(tid, p, 0);

	while (st && st->n && st->f[st->n - 1].sp < sp)
		st->n--;
}
