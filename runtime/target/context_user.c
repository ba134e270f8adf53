/* The rest of the user-space context tapset (issue 3): backtraces of the
 * target thread, file and line of an address, registers and function
 * arguments by the x86-64 calling convention, strings and integers read
 * from the target, its ids, CPU, command line and environment.
 *
 * Formats follow SystemTap's: %p is "0x" and 16 hex digits; a full
 * backtrace line is " 0x... : name+0xOFF/0xSIZE [/path/of/module]". With
 * no target thread (begin/end/timer probes, process.end) the functions
 * behave as SystemTap does without user registers. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "lang/stp_internal.h"
#include "context_internal.h"
#include "sym/symbols.h"

#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define UBT_MAX 64

static struct _stp_tctx *tctx(struct _stp_context *c)
{
	return c ? (struct _stp_tctx *)c->target : NULL;
}

/* A thread whose registers can be read (stopped, or in a record). */
static int have_thread(struct _stp_context *c)
{
	return tctx(c) && tctx(c)->ops;
}

/* The unwound pcs of the current handler run's stop (thread, pc, sp, bp);
 * _stp_ctx_ubt_forget() drops them when a new handler run begins: two calls
 * of a function from different callers can have the same pc, sp and bp. */
static struct {
	pid_t tid;
	uint64_t uaddr, ip, sp, bp;
	int valid, n;
	uint64_t pcs[UBT_MAX];
} ubt;

void _stp_ctx_ubt_forget(void)
{
	ubt.valid = 0;
}

/* The symbol table of the traced process (the symbol cache's). */
static struct _stp_symtab *symtab(struct _stp_context *c)
{
	return tctx(c) ? _stp_sym_of(tctx(c)->pid) : NULL;
}

/* ---- backtraces ---- */

/* The unwinder reads the stack through the backend. */
static int unwind_read(void *arg, uint64_t addr, void *buf, size_t len)
{
	return _stp_tctx_read(arg, addr, buf, len);
}

static int unwind(struct _stp_context *c, const uint64_t **pcs)
{
	struct _stp_tctx *tc = tctx(c);
	struct _stp_symtab *st;
	uint64_t v;

	*pcs = ubt.pcs;
	if (!have_thread(c) || _stp_ctx_reg(c, 16, &v) < 0)
		return 0;
	/* the same stop of the same thread (ucallers asks once per level) */
	if (ubt.valid && ubt.tid == tc->tid && ubt.uaddr == tc->uaddr && ubt.ip == tc->regs.rip &&
	    ubt.sp == tc->regs.rsp && ubt.bp == tc->regs.rbp)
		return ubt.n;
	/* no stack to read (a record's registers only): say so, not one frame */
	if (_stp_tctx_read(tc, tc->regs.rsp, &v, sizeof v) == -ENODATA) {
		_stp_error(c,
			   "cannot unwind the user stack: its memory is not available at "
			   "this event");
		return 0;
	}
	st = symtab(c);
	{
		const struct user_regs_struct *r = &tc->regs;
		/* DWARF x86_64 register order; rip is the probe's pc */
		const uint64_t dregs[17] = {r->rax, r->rdx, r->rcx, r->rbx, r->rsi, r->rdi,
					    r->rbp, r->rsp, r->r8,  r->r9,  r->r10, r->r11,
					    r->r12, r->r13, r->r14, r->r15, r->rip};

		ubt.n = st
		    ? _stp_sym_unwind_with(st, tc->tid, dregs, unwind_read, tc, ubt.pcs, UBT_MAX)
		    : -1;
	}
	if (ubt.n < 0)
		ubt.n = 0;
	/* the thread may still be past the breakpoint's int3: its pc is the
	 * probe's, as register("rip") gives it */
	if (ubt.n > 0)
		ubt.pcs[0] = tc->regs.rip;
	ubt.valid = 1;
	ubt.tid = tc->tid;
	ubt.uaddr = tc->uaddr;
	ubt.ip = tc->regs.rip;
	ubt.sp = tc->regs.rsp;
	ubt.bp = tc->regs.rbp;
	return ubt.n;
}

int64_t _stp_ctx_ustack(struct _stp_context *c, int64_t n)
{
	const uint64_t *pcs;
	int cnt = unwind(c, &pcs);

	return n >= 0 && n < cnt ? (int64_t)pcs[n] : 0;
}

/* One address, as SystemTap's symbol printer with the given STP_USYM_*
 * flags, appended to dst (NULL: printed). */
static void fmt_addr(struct _stp_context *c, uint64_t addr, int style, char *dst, size_t len)
{
	struct _stp_symtab *st = symtab(c);
	const struct _stp_syminfo *si = NULL;
	const char *mod = NULL;
	char buf[1024], at[600] = "";

	if (style == STP_USYM_FULLER) { /* FULL with " at FILE[:LINE]" */
		si = st ? _stp_sym_lookup_line(st, addr) : NULL;
		if (si && si->file && si->line > 0)
			snprintf(at, sizeof at, " at %s:%d", si->file, si->line);
		else if (si && si->file)
			snprintf(at, sizeof at, " at %s", si->file);
		style = STP_USYM_FULL;
	} else if (st) {
		si = _stp_sym_lookup(st, addr);
	}
	if (si && si->module)
		mod = style == STP_USYM_SIMPLE ? si->module
					       : (si->modpath ? si->modpath : si->module);
	if (style == STP_USYM_HEX)
		snprintf(buf, sizeof buf, "0x%016llx ", (unsigned long long)addr);
	else if (si && si->name) {
		if (style == STP_USYM_FULL && mod)
			snprintf(buf, sizeof buf, " 0x%016llx : %s+0x%llx/0x%llx%s [%s]\n",
				 (unsigned long long)addr, si->name, (unsigned long long)si->offset,
				 (unsigned long long)si->size, at, mod);
		else if (style == STP_USYM_FULL)
			snprintf(buf, sizeof buf, " 0x%016llx : %s+0x%llx/0x%llx%s\n",
				 (unsigned long long)addr, si->name, (unsigned long long)si->offset,
				 (unsigned long long)si->size, at);
		else if (style == STP_USYM_SIMPLE && mod)
			snprintf(buf, sizeof buf, "%s+0x%llx [%s]\n", si->name,
				 (unsigned long long)si->offset, mod);
		else
			snprintf(buf, sizeof buf, "%s+0x%llx\n", si->name,
				 (unsigned long long)si->offset);
	} else if (mod && style == STP_USYM_FULL)
		snprintf(buf, sizeof buf, " 0x%016llx [%s+0x%llx/0x%llx]%s\n",
			 (unsigned long long)addr, mod, (unsigned long long)(addr - si->modstart),
			 (unsigned long long)(si->modend - si->modstart), at);
	else if (mod && style == STP_USYM_SIMPLE)
		snprintf(buf, sizeof buf, "0x%016llx [%s+0x%llx]\n", (unsigned long long)addr, mod,
			 (unsigned long long)(addr - si->modstart));
	else
		snprintf(buf, sizeof buf, "%s0x%016llx\n", style == STP_USYM_FULL ? " " : "",
			 (unsigned long long)addr);
	if (dst)
		_stp_strlcat(dst, buf, len);
	else
		_stp_print(c, buf);
}

static void ustack_out(struct _stp_context *c, int style, char *dst, size_t len)
{
	const uint64_t *pcs;
	int n = unwind(c, &pcs);

	if (dst && len)
		dst[0] = '\0';
	if (!have_thread(c)) {
		char buf[512];

		if (style == STP_USYM_HEX)
			snprintf(buf, sizeof buf, "\n");
		else
			snprintf(buf, sizeof buf, "<no user backtrace at %s>\n",
				 c && c->probe && c->probe->pp ? c->probe->pp : "");
		if (dst)
			_stp_strlcat(dst, buf, len);
		else
			_stp_print(c, buf);
		return;
	}
	for (int i = 0; i < n; i++)
		fmt_addr(c, pcs[i], style, dst, len);
}

void _stp_ctx_ubacktrace_print(struct _stp_context *c, int style)
{
	ustack_out(c, style, NULL, 0);
}

void _stp_ctx_ubacktrace_sprint(struct _stp_context *c, int style, char *dst, size_t len)
{
	size_t n;

	if (!len)
		return;
	ustack_out(c, style, dst, len);
	/* as SystemTap's: the last separator (space, newline) goes */
	n = strlen(dst);
	if (n)
		dst[n - 1] = '\0';
}

/* ---- file and line ---- */

void _stp_ctx_usymfileline(struct _stp_context *c, int what, uint64_t addr, char *dst, size_t len)
{
	struct _stp_symtab *st = symtab(c);
	const struct _stp_syminfo *si = st ? _stp_sym_lookup_line(st, addr) : NULL;

	if (si && si->line > 0 && what != 1) {
		if (what == 0)
			snprintf(dst, len, "%s:%d", si->file ? si->file : "??", si->line);
		else
			snprintf(dst, len, "%d", si->line);
	} else if (si && si->file && what != 2)
		snprintf(dst, len, "%s", si->file);
	else
		snprintf(dst, len, "0x%016llx", (unsigned long long)addr);
}

/* ---- ids and cpu ---- */

int64_t _stp_ctx_gid(struct _stp_context *c)
{
	return tctx(c) ? _stp_proc_status_field(tctx(c)->pid, "Gid:", 0) : getgid();
}

int64_t _stp_ctx_euid(struct _stp_context *c)
{
	return tctx(c) ? _stp_proc_status_field(tctx(c)->pid, "Uid:", 1) : geteuid();
}

int64_t _stp_ctx_cpu(struct _stp_context *c)
{
	struct _stp_tctx *tc = tctx(c);
	char path[96], buf[1024];
	int64_t cpu = -1;
	FILE *f;

	if (!tc)
		return sched_getcpu();
	/* field 39 (processor) of the thread's stat, after "(comm)" */
	snprintf(path, sizeof path, "/proc/%d/task/%d/stat", (int)tc->pid, (int)tc->tid);
	f = fopen(path, "re");
	if (f) {
		if (fgets(buf, sizeof buf, f)) {
			char *p = strrchr(buf, ')');
			int field = 2;

			while (p && *p && field < 39) {
				p = strchr(p + 1, ' ');
				if (p)
					field++;
			}
			if (p && field == 39)
				cpu = strtoll(p + 1, NULL, 10);
		}
		fclose(f);
	}
	return cpu >= 0 ? cpu : sched_getcpu();
}

/* ---- registers and arguments ---- */

static const struct {
	const char *name;
	size_t off;
	int bits;
} regnames[] = {
#define R(n, f, b)                                         \
	{                                                  \
		n, offsetof(struct user_regs_struct, f), b \
	}
    R("r15", r15, 64),
    R("r14", r14, 64),
    R("r13", r13, 64),
    R("r12", r12, 64),
    R("rbp", rbp, 64),
    R("rbx", rbx, 64),
    R("r11", r11, 64),
    R("r10", r10, 64),
    R("r9", r9, 64),
    R("r8", r8, 64),
    R("rax", rax, 64),
    R("rcx", rcx, 64),
    R("rdx", rdx, 64),
    R("rsi", rsi, 64),
    R("rdi", rdi, 64),
    R("orig_rax", orig_rax, 64),
    R("rip", rip, 64),
    R("xcs", cs, 64),
    R("eflags", eflags, 64),
    R("rsp", rsp, 64),
    R("xss", ss, 64),
    R("ebp", rbp, 32),
    R("ebx", rbx, 32),
    R("eax", rax, 32),
    R("ecx", rcx, 32),
    R("edx", rdx, 32),
    R("esi", rsi, 32),
    R("edi", rdi, 32),
    R("orig_eax", orig_rax, 32),
    R("eip", rip, 32),
    R("esp", rsp, 32),
    R("bp", rbp, 16),
    R("bx", rbx, 16),
    R("ax", rax, 16),
    R("cx", rcx, 16),
    R("dx", rdx, 16),
    R("si", rsi, 16),
    R("di", rdi, 16),
    R("orig_ax", orig_rax, 16),
    R("ip", rip, 16),
    R("cs", cs, 16),
    R("flags", eflags, 16),
    R("sp", rsp, 16),
    R("ss", ss, 16),
    {"al", offsetof(struct user_regs_struct, rax), 8},
    {"ah", offsetof(struct user_regs_struct, rax) + 1, 8},
    {"bl", offsetof(struct user_regs_struct, rbx), 8},
    {"bh", offsetof(struct user_regs_struct, rbx) + 1, 8},
    {"cl", offsetof(struct user_regs_struct, rcx), 8},
    {"ch", offsetof(struct user_regs_struct, rcx) + 1, 8},
    {"dl", offsetof(struct user_regs_struct, rdx), 8},
    {"dh", offsetof(struct user_regs_struct, rdx) + 1, 8},
#undef R
};

static int64_t fit(uint64_t v, int bits, int sign_extend)
{
	if (bits < 64) {
		v &= (1ull << bits) - 1;
		if (sign_extend && (v >> (bits - 1)) & 1)
			v |= ~0ull << bits;
	}
	return (int64_t)v;
}

/* All registers of the target thread, or NULL with msg set as the error. */
static const struct user_regs_struct *regs(struct _stp_context *c, const char *msg)
{
	uint64_t v;

	if (!have_thread(c)) {
		_stp_error(c, "%s", msg);
		return NULL;
	}
	if (_stp_ctx_reg(c, 16, &v) < 0)
		return NULL;
	return &tctx(c)->regs;
}

int64_t _stp_ctx_register(struct _stp_context *c, const char *name, int sign_extend)
{
	const struct user_regs_struct *r = regs(c, "cannot access CPU registers in this context");
	uint64_t v = 0;

	if (!r)
		return 0;
	for (size_t i = 0; i < sizeof regnames / sizeof regnames[0]; i++)
		if (!strcmp(name, regnames[i].name)) {
			memcpy(&v, (const char *)r + regnames[i].off,
			       regnames[i].bits == 8 ? 1 : sizeof v);
			return fit(v, regnames[i].bits, sign_extend);
		}
	_stp_error(c, "Unknown register: %s", name);
	return 0;
}

int64_t _stp_ctx_arg(struct _stp_context *c, int64_t n, int sign_extend, int truncate)
{
	const struct user_regs_struct *r = regs(c, "cannot access function args in this context");
	uint64_t v;

	if (!r)
		return 0;
	switch (n) {
	case 1:
		v = r->rdi;
		break;
	case 2:
		v = r->rsi;
		break;
	case 3:
		v = r->rdx;
		break;
	case 4:
		v = r->rcx;
		break;
	case 5:
		v = r->r8;
		break;
	case 6:
		v = r->r9;
		break;
	default:
		if (n < 1) {
			_stp_error(c, "cannot access arg(%lld)", (long long)n);
			return 0;
		} else {
			/* on the stack, above the return address */
			uint64_t a = r->rsp + 8 * (uint64_t)(n - 6);

			int rc = _stp_tctx_read(tctx(c), a, &v, sizeof v);

			if (rc < 0) {
				char msg[160];

				snprintf(
				    msg, sizeof msg,
				    "cannot access arg(%lld) at user stack address 0x%016llx%s\n",
				    (long long)n, (unsigned long long)a,
				    rc == -ENODATA ? ": not available at this event" : "");
				_stp_warn(c, msg);
				return 0;
			}
		}
	}
	return truncate ? fit(v, 32, sign_extend) : (int64_t)v;
}

/* ---- strings and integers of the target ---- */

int _stp_ctx_read_cstr(struct _stp_context *c, uint64_t addr, char *dst, size_t max)
{
	size_t got = 0;

	if (!max)
		return 0;
	while (got + 1 < max) {
		/* up to the end of the page, so a string near an unmapped page reads */
		size_t chunk = 4096 - ((addr + got) & 4095);
		const char *saved = c->last_error;
		char *nul;
		int rc;

		if (chunk > max - 1 - got)
			chunk = max - 1 - got;
		if (tctx(c))
			rc = _stp_tctx_read(tctx(c), addr + got, dst + got, chunk);
		else
			rc = _stp_read_memory(c, addr + got, dst + got, chunk) < 0 ? -EFAULT : 0;
		if (rc < 0) {
			c->last_error = saved;
			dst[got] = '\0';
			return rc == -ENODATA ? rc : -EFAULT;
		}
		nul = memchr(dst + got, '\0', chunk);
		if (nul)
			return 0;
		got += chunk;
	}
	dst[got] = '\0';
	return 0;
}

int _stp_ctx_user_string_n(struct _stp_context *c, uint64_t addr, int64_t n, char *dst, int mode,
			   const char *msg)
{
	int64_t len = n + 1;
	char w[160];
	int rc;

	if (len < 1)
		len = 1;
	if (len > _stp_maxstringlen - 1)
		len = _stp_maxstringlen - 1;
	if (len < 1)
		len = 1;
	rc = _stp_ctx_read_cstr(c, addr, dst, (size_t)len);
	if (rc == 0)
		return 0;
	if (rc == -ENODATA)
		snprintf(w, sizeof w, STP_NOT_AVAILABLE_READ, (unsigned long long)addr);
	else
		snprintf(w, sizeof w, "user string copy fault %d at 0x%llx [man error::fault]", rc,
			 (unsigned long long)addr);
	if (mode == 0) { /* error */
		_stp_strlcpy(dst, "<unknown>", (size_t)_stp_maxstringlen);
		_stp_error(c, "%s", w);
	} else if (mode == 1) { /* warn */
		_stp_warn(c, w);
		_stp_strlcpy(dst, msg ? msg : "", (size_t)_stp_maxstringlen);
	} else /* quiet, with a replacement */
		_stp_strlcpy(dst, msg ? msg : "", (size_t)_stp_maxstringlen);
	return -1;
}

int64_t _stp_ctx_user_int(struct _stp_context *c, uint64_t addr, int size, int is_signed)
{
	unsigned char b[8] = {0};
	uint64_t v = 0;

	if (_stp_read_memory(c, addr, b, (size_t)size) < 0)
		return 0;
	for (int i = size - 1; i >= 0; i--)
		v = v << 8 | b[i];
	return fit(v, size * 8, is_signed);
}

/* ---- command line and environment ---- */

/* The whole of /proc/PID/FILE (malloc'd, *len bytes), NULL on failure. */
static char *proc_file(struct _stp_context *c, const char *file, size_t *len)
{
	char path[64], *buf = NULL;
	size_t cap = 0, n = 0;
	FILE *f;

	snprintf(path, sizeof path, "/proc/%lld/%s", (long long)_stp_ctx_pid(c), file);
	f = fopen(path, "re");
	if (!f)
		return NULL;
	for (;;) {
		size_t r;

		if (n == cap) {
			char *p = realloc(buf, cap ? 2 * cap : 4096);
			if (!p) {
				free(buf);
				fclose(f);
				return NULL;
			}
			buf = p;
			cap = cap ? 2 * cap : 4096;
		}
		r = fread(buf + n, 1, cap - n, f);
		if (!r)
			break;
		n += r;
	}
	fclose(f);
	*len = n;
	return buf;
}

void _stp_ctx_cmdline_args(struct _stp_context *c, int64_t n, int64_t m, const char *delim,
			   char *dst)
{
	size_t len = 0, size = (size_t)_stp_maxstringlen;
	char *buf = proc_file(c, "cmdline", &len);
	size_t pos = 0;

	dst[0] = '\0';
	if (!buf)
		return;
	for (int64_t nr = 0; pos < len && (m < 0 || nr <= m); nr++) {
		const char *arg = buf + pos;
		size_t alen = strnlen(arg, len - pos);
		char one[4096];

		snprintf(one, sizeof one, "%.*s", (int)alen, arg);
		pos += alen + 1;
		if (nr == n)
			_stp_strlcpy(dst, one, size);
		else if (nr > n) {
			_stp_strlcat(dst, delim, size);
			_stp_strlcat(dst, one[0] ? one : "\"\"", size);
		}
	}
	free(buf);
}

void _stp_ctx_env_var(struct _stp_context *c, const char *name, char *dst)
{
	size_t len = 0, nlen = strlen(name), pos = 0;
	char *buf;

	dst[0] = '\0';
	if (!nlen || !tctx(c)) {
		const char *v = nlen ? getenv(name) : NULL;

		_stp_strlcpy(dst, v ? v : "", (size_t)_stp_maxstringlen);
		return;
	}
	buf = proc_file(c, "environ", &len);
	if (!buf)
		return;
	while (pos < len) {
		const char *e = buf + pos;
		size_t elen = strnlen(e, len - pos);

		if (elen > nlen && e[nlen] == '=' && !memcmp(e, name, nlen)) {
			size_t vlen = elen - nlen - 1;

			if (vlen > (size_t)_stp_maxstringlen - 1)
				vlen = (size_t)_stp_maxstringlen - 1;
			memcpy(dst, e + nlen + 1, vlen);
			dst[vlen] = '\0';
			break;
		}
		pos += elen + 1;
	}
	free(buf);
}
