/* Helpers of the tapsets that complete SystemTap's user-space surface
 * (issue 13): errno names, the floating-point tapset (doubles carried in
 * longs), the time zone, proc_mem_* from /proc, system(), UTF-16/32
 * strings of the target, print_regs() and pexecname(). Declared in the
 * "compatibility tapsets" section of stap_runtime.h. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "stp_internal.h"
#include "target/backend.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* ---- errno ---- */

/* SystemTap's table ends at ENOTRECOVERABLE (131); glibc knows the same
 * names for 1..131 on x86-64 (and none for 41 and 58). */
#define STP_ERRNO_MAX 131

int _stp_errno_name(int64_t err, char *dst, size_t len)
{
	const char *name = NULL;

	if (err < 0)
		err = -err;
	if (err > 0 && err <= STP_ERRNO_MAX)
		name = strerrorname_np((int)err);
	if (!name)
		return 0;
	snprintf(dst, len, "%s", name);
	return 1;
}

/* ---- floating point: IEEE doubles in the bits of a long ---- */

static double as_double(int64_t v)
{
	double d;

	memcpy(&d, &v, sizeof d);
	return d;
}

static int64_t as_bits(double d)
{
	int64_t v;

	memcpy(&v, &d, sizeof v);
	return v;
}

#define FP_DEFAULT_NAN INT64_C(0x7FF8000000000000)
#define FP_QUIET_BIT INT64_C(0x0008000000000000)

static int is_signaling(int64_t v)
{
	return (v & FP_DEFAULT_NAN) == INT64_C(0x7FF0000000000000) &&
	    (v & INT64_C(0x0007FFFFFFFFFFFF));
}

/* NaNs as SystemTap's softfloat gives them: a NaN operand comes through
 * quieted (a signaling one first, else the first NaN), a NaN made from
 * numbers is 0x7FF8000000000000 (the hardware's has the sign bit set). */
static int64_t nan_result(int64_t a, int64_t b, int binary, double r)
{
	int a_nan = isnan(as_double(a)), b_nan = binary && isnan(as_double(b));

	if (a_nan || b_nan) {
		if (is_signaling(a) || (binary && is_signaling(b)))
			return (is_signaling(a) ? a : b) | FP_QUIET_BIT;
		return a_nan ? a : b;
	}
	return isnan(r) ? FP_DEFAULT_NAN : as_bits(r);
}

int64_t _stp_fp_arith(int op, int64_t a, int64_t b)
{
	double x = as_double(a), y = as_double(b), r;

	switch (op) {
	case STP_FP_ADD:
		r = x + y;
		break;
	case STP_FP_SUB:
		r = x - y;
		break;
	case STP_FP_MUL:
		r = x * y;
		break;
	case STP_FP_DIV:
		r = x / y;
		break;
	case STP_FP_REM:
		r = remainder(x, y); /* IEEE remainder, as softfloat's f64_rem */
		break;
	default:
		return nan_result(a, 0, 0, sqrt(x));
	}
	return nan_result(a, b, 1, r);
}

int64_t _stp_fp_compare(int op, int64_t a, int64_t b)
{
	double x = as_double(a), y = as_double(b);

	if (op == STP_FP_EQ)
		return x == y;
	if (op == STP_FP_LE)
		return x <= y;
	return x < y;
}

int64_t _stp_fp_from_long(int64_t v)
{
	return as_bits((double)v);
}

int64_t _stp_fp32_to_fp64(int64_t v)
{
	uint32_t bits = (uint32_t)v;
	float f;

	memcpy(&f, &bits, sizeof f);
	return as_bits((double)f);
}

/* softfloat's rounding modes: 0 nearest-even, 1 toward zero, 2 down, 3
 * up, 4 nearest with ties away, 6 to odd (others: toward zero). */
static double round_mode(double x, int mode)
{
	double t = trunc(x);

	switch (mode) {
	case 0:
		return nearbyint(x); /* the default mode: ties to even */
	case 2:
		return floor(x);
	case 3:
		return ceil(x);
	case 4:
		return round(x);
	case 6:
		if (t != x && fmod(t, 2.0) == 0.0)
			t += x > 0 ? 1.0 : -1.0;
		return t;
	default:
		return t;
	}
}

int64_t _stp_fp_to_long(int64_t fp, int64_t mode)
{
	double x = as_double(fp), r;

	if (isnan(x))
		return 0;
	r = round_mode(x, (int)mode);
	if (r >= 9223372036854775808.0)
		return INT64_MAX;
	if (r < -9223372036854775808.0)
		return INT64_MIN;
	return (int64_t)r;
}

/* The grammar SystemTap's string_to_fp reads: [+-] digits [. digits]
 * [(e|E) [+-] digits], any part empty. 0, or -1 for anything else. */
int _stp_fp_from_string(const char *s, int64_t *out)
{
	char buf[64];
	const char *p = s, *int_digits, *frac_digits = "", *exp_digits = "";
	size_t n_int, n_frac = 0, n_exp = 0;
	int neg = 0, exp_neg = 0;

	if (*p == '-' || *p == '+')
		neg = *p++ == '-';
	int_digits = p;
	n_int = strspn(p, "0123456789");
	p += n_int;
	if (*p == '.') {
		frac_digits = ++p;
		n_frac = strspn(p, "0123456789");
		p += n_frac;
	}
	if (*p == 'e' || *p == 'E') {
		p++;
		if (*p == '-' || *p == '+')
			exp_neg = *p++ == '-';
		exp_digits = p;
		n_exp = strspn(p, "0123456789");
		p += n_exp;
	}
	if (*p)
		return -1;
	/* strtod rounds once; the digits beyond what a double holds only
	 * move the last bit, so the long tail is cut with the exponent
	 * adjusted (and the exponent clamped far beyond any double's). */
	struct _stp_strbuf b = {0};
	long long e = 0;
	for (size_t i = 0; i < n_exp && e < 100000; i++)
		e = e * 10 + (exp_digits[i] - '0');
	if (exp_neg)
		e = -e;
	_stp_strbuf_put(&b, neg ? "-0" : "0", neg ? 2 : 1);
	_stp_strbuf_put(&b, int_digits, n_int);
	_stp_strbuf_put(&b, ".", 1);
	_stp_strbuf_put(&b, frac_digits, n_frac);
	snprintf(buf, sizeof buf, "e%lld", e);
	_stp_strbuf_put(&b, buf, strlen(buf));
	*out = as_bits(b.buf && !b.oom ? strtod(b.buf, NULL) : 0.0);
	free(b.buf);
	return 0;
}

/* fp_to_string: PRECISION digits after the point (at least one), the
 * last one rounded up when the exact expansion's next digit is 5 or
 * more. */
void _stp_fp_to_string(int64_t fp, int64_t precision, char *dst, size_t len)
{
	double x = as_double(fp);
	static char exact[1400]; /* every digit of any double's expansion */
	int digits = precision < 1 ? 1 : precision > 300 ? 300 : (int)precision;

	if (isnan(x) || isinf(x)) {
		snprintf(dst, len, "%s", isnan(x) ? "nan" : x < 0 ? "-inf" : "inf");
		return;
	}
	snprintf(exact, sizeof exact, "%.1100f", fabs(x));
	char *dot = strchr(exact, '.');
	size_t keep = (size_t)(dot - exact) + 1 + (size_t)digits;
	int up = exact[keep] >= '5';
	exact[keep] = '\0';
	for (char *q = exact + keep - 1; up && q >= exact; q--) {
		if (*q == '.')
			continue;
		up = *q == '9';
		*q = up ? '0' : *q + 1;
	}
	snprintf(dst, len, "%s%s%s", signbit(x) ? "-" : "", up ? "1" : "", exact);
}

/* ---- the time zone, as it was when the run started ---- */

static struct {
	int done;
	long gmtoff;
	char name[64];
} tz;

static void tz_load(void)
{
	time_t now = time(NULL);
	struct tm tm;

	if (tz.done)
		return;
	tz.done = 1;
	tzset();
	if (localtime_r(&now, &tm)) {
		tz.gmtoff = -tm.tm_gmtoff;
		snprintf(tz.name, sizeof tz.name, "%s", tm.tm_zone ? tm.tm_zone : "");
	}
}

int64_t _stp_tz_gmtoff(void)
{
	tz_load();
	return tz.gmtoff;
}

void _stp_tz_name(char *dst, size_t len)
{
	tz_load();
	snprintf(dst, len, "%s", tz.name);
}

/* ---- proc_mem_*: pages, from /proc/PID/statm and status ---- */

int64_t _stp_proc_mem(struct _stp_context *c, int64_t pid, int what)
{
	long long f[7] = {0};
	char path[64];
	FILE *fp;

	if (pid <= 0)
		pid = _stp_ctx_pid(c);
	if (what == STP_PROC_MEM_SHR) { /* file-backed resident pages */
		int64_t kb = _stp_proc_status_field((pid_t)pid, "RssFile:", 0);
		return kb > 0 ? kb * 1024 / sysconf(_SC_PAGESIZE) : 0;
	}
	snprintf(path, sizeof path, "/proc/%lld/statm", (long long)pid);
	if (!(fp = fopen(path, "re")))
		return 0;
	if (fscanf(fp, "%lld %lld %lld %lld %lld %lld", &f[0], &f[1], &f[2], &f[3], &f[4], &f[5]) !=
	    6)
		memset(f, 0, sizeof f);
	fclose(fp);
	switch (what) {
	case STP_PROC_MEM_SIZE:
		return f[0];
	case STP_PROC_MEM_RSS:
		return f[1];
	case STP_PROC_MEM_TXT:
		return f[3];
	default: /* STP_PROC_MEM_DATA: data + stack */
		return f[5];
	}
}

int64_t _stp_page_size(void)
{
	return sysconf(_SC_PAGESIZE);
}

/* ---- system(): commands started after the handler that asked ---- */

static struct _stp_strbuf *pending;
static size_t npending;

void _stp_system(struct _stp_context *c, const char *cmd)
{
	struct _stp_strbuf *p = realloc(pending, (npending + 1) * sizeof *p);

	if (!p) {
		_stp_error(c, "out of memory for system()");
		return;
	}
	pending = p;
	memset(&pending[npending], 0, sizeof *pending);
	_stp_strbuf_put(&pending[npending], cmd, strlen(cmd) + 1);
	npending++;
}

/* Started by /bin/sh from a grandchild, so the command is never a child
 * of ours that the ptrace engine's waitpid(-1) could take for a tracee;
 * its output goes where stap's own stdout and stderr go. */
static void spawn(const char *cmd)
{
	pid_t pid = fork(), w;
	int st;

	if (pid < 0) {
		_stp_msg_warn("system(): fork: %s", strerror(errno));
		return;
	}
	if (pid == 0) {
		sigset_t none;

		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		if (fork() == 0) {
			execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
			_exit(127);
		}
		_exit(0);
	}
	while ((w = waitpid(pid, &st, 0)) < 0 && errno == EINTR)
		;
}

void _stp_system_run_pending(void)
{
	for (size_t i = 0; i < npending; i++) {
		if (pending[i].buf && !pending[i].oom)
			spawn(pending[i].buf);
		free(pending[i].buf);
	}
	npending = 0;
}

/* ---- strings of the target in UTF-16 and UTF-32 ---- */

/* code point c as UTF-8 at dst (room bytes, NUL included): its length,
 * 0 when it does not fit, -1 when it is no character. */
static int put_utf8(char *dst, int64_t room, uint32_t c)
{
	int n = c < 0x80 ? 1 : c < 0x800 ? 2 : c < 0x10000 ? 3 : 4;

	if ((c >= 0xD800 && c <= 0xDFFF) || c > 0x10FFFF)
		return -1;
	if (room < n + 1)
		return 0;
	if (n == 1) {
		dst[0] = (char)c;
	} else {
		for (int i = n - 1; i > 0; i--, c >>= 6)
			dst[i] = (char)(0x80 | (c & 0x3F));
		dst[0] = (char)((0xF00 >> n) | c);
	}
	dst[n] = '\0';
	return n;
}

static int read_unit(struct _stp_context *c, uint64_t addr, int width, uint32_t *out)
{
	uint16_t u16;
	int rc =
	    width == 2 ? _stp_read_memory(c, addr, &u16, 2) : _stp_read_memory(c, addr, out, 4);

	if (width == 2)
		*out = u16;
	return rc;
}

void _stp_ctx_user_string_utf(struct _stp_context *c, uint64_t addr, int width, char *dst)
{
	int64_t room = _stp_maxstringlen;
	uint64_t at = addr;
	uint32_t ch, low;
	char *out = dst;

	*out = '\0';
	while (room > 1) {
		if (read_unit(c, at, width, &ch) < 0)
			goto fault;
		if (!ch)
			return;
		/* a high surrogate and its low half make one character; a
		 * lone half is an error below */
		if (width == 2 && ch >= 0xD800 && ch <= 0xDBFF) {
			if (read_unit(c, at + 2, 2, &low) < 0)
				goto fault;
			if (low >= 0xDC00 && low <= 0xDFFF) {
				ch = 0x10000 + ((ch & 0x3FF) << 10) + (low & 0x3FF);
				at += 2;
			}
		}
		int n = put_utf8(out, room, ch);
		if (n < 0) {
			_stp_error(c, "invalid UTF-%d character U+%X at 0x%llx", width * 8, ch,
				   (unsigned long long)at);
			return;
		}
		if (n == 0)
			return;
		out += n;
		room -= n;
		at += (uint64_t)width;
	}
	return;
fault:
	_stp_error(c, "user string copy fault at 0x%llx [man error::fault]",
		   (unsigned long long)at);
}

/* ---- print_regs(), pexecname() ---- */

void _stp_ctx_print_regs(struct _stp_context *c)
{
	struct _stp_tctx *tc = c ? c->target : NULL;
	uint64_t rip;
	char buf[1024];

	if (!tc || !tc->ops || _stp_ctx_reg(c, 16, &rip) < 0) {
		if (c)
			c->last_error = NULL; /* no registers: nothing to print */
		return;
	}
	const struct user_regs_struct *r = &tc->regs;
	snprintf(buf, sizeof buf,
		 "RIP: %016llx\nRSP: %016llx  EFLAGS: %08llx\n"
		 "RAX: %016llx RBX: %016llx RCX: %016llx\n"
		 "RDX: %016llx RSI: %016llx RDI: %016llx\n"
		 "RBP: %016llx R08: %016llx R09: %016llx\n"
		 "R10: %016llx R11: %016llx R12: %016llx\n"
		 "R13: %016llx R14: %016llx R15: %016llx\n"
		 "FS:  %016llx(%04llx) GS:%016llx(%04llx)\n"
		 "CS:  %04llx DS: %04llx ES: %04llx SS: %04llx\n",
		 r->rip, r->rsp, r->eflags, r->rax, r->rbx, r->rcx, r->rdx, r->rsi, r->rdi, r->rbp,
		 r->r8, r->r9, r->r10, r->r11, r->r12, r->r13, r->r14, r->r15, r->fs_base, r->fs,
		 r->gs_base, r->gs, r->cs, r->ds, r->es, r->ss);
	_stp_print(c, buf);
}

void _stp_ctx_pexecname(struct _stp_context *c, char *dst, size_t len)
{
	char path[64];
	FILE *f;

	dst[0] = '\0';
	snprintf(path, sizeof path, "/proc/%lld/comm", (long long)_stp_ctx_ppid(c));
	if (!(f = fopen(path, "re")))
		return;
	if (fgets(dst, (int)len, f))
		dst[strcspn(dst, "\n")] = '\0';
	fclose(f);
}

/* ---- stap -t and --suppress-handler-errors ---- */

void _stp_error_suppress(struct _stp_context *c)
{
	if (!c || !c->last_error)
		return;
	c->last_error = NULL;
	c->last_stmt = NULL;
	_stp_error_count++;
}

/* SystemTap's "probe hit report", after the end probes: for each probe
 * that ran, "PP, (LOCATION), hits: N, nsecs: MINmin/AVGavg/MAXmax,
 * variance: V, from: ..., index: I" (nsecs, as its user-space runtime
 * says, where the kernel's counts cycles), then "----- refresh report:"
 * (no probes are refreshed here). The stats are freed. */
void _stp_timing_report(int n, struct _stp_stat **stats, const char *const (*text)[3])
{
	struct _stp_context c;
	char line[4096];

	memset(&c, 0, sizeof c);
	_stp_print(&c, "----- probe hit report: \n");
	for (int i = 0; i < n; i++) {
		if (!stats[i])
			continue;
		int64_t count = _stp_stat_get(&c, stats[i], STP_COUNT);
		if (count > 0) {
			snprintf(line, sizeof line,
				 "%s, (%s), hits: %lld, nsecs: %lldmin/%lldavg/%lldmax, variance: "
				 "%lld,%s, index: %d\n",
				 text[i][0], text[i][1], (long long)count,
				 (long long)_stp_stat_get(&c, stats[i], STP_MIN),
				 (long long)_stp_stat_get(&c, stats[i], STP_AVG),
				 (long long)_stp_stat_get(&c, stats[i], STP_MAX),
				 (long long)_stp_stat_get(&c, stats[i], STP_VARIANCE), text[i][2],
				 i);
			_stp_print(&c, line);
		}
		_stp_stat_free(stats[i]);
		stats[i] = NULL;
	}
	_stp_print(&c, "----- refresh report:\n");
	_stp_print_flush(&c);
}
