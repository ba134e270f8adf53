/* Arithmetic with SystemTap's edge cases, bounded string copies, clocks,
 * the output transport's write loop, and the context API over the record
 * backend (a handler fired from a record: registers, no memory). */
#include "unit.h"
#include "target/backend.h"

#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static struct _stp_context ctx;

static void arith(void)
{
	unit_check_long("div", _stp_div64(&ctx, 7, 2), 3);
	unit_check_long("div truncates toward 0", _stp_div64(&ctx, -7, 2), -3);
	unit_check_long("mod sign follows dividend", _stp_mod64(&ctx, -7, 3), -1);
	unit_check_long("INT64_MIN / -1 wraps", _stp_div64(&ctx, INT64_MIN, -1), INT64_MIN);
	unit_check_long("INT64_MIN % -1", _stp_mod64(&ctx, INT64_MIN, -1), 0);
	unit_result("no error so far", ctx.last_error == NULL, NULL);
	unit_check_long("div by 0 gives 0", _stp_div64(&ctx, 1, 0), 0);
	unit_check_str("div by 0 message", ctx.last_error, "division by 0");
	ctx.last_error = NULL;
	_stp_mod64(&ctx, 1, 0);
	unit_check_str("mod by 0 message", ctx.last_error, "division by 0");
	ctx.last_error = NULL;
	unit_check_long("shl", _stp_shl64(1, 62), (int64_t)1 << 62);
	unit_check_long("shl into the sign bit", _stp_shl64(1, 63), INT64_MIN);
	unit_check_long("shift count masked", _stp_shl64(1, 65), 2);
	unit_check_long("shr is arithmetic", _stp_shr64(-8, 1), -4);
	unit_check_long("lshr is logical", _stp_lshr64(-1, 60), 15);
	unit_check_long("negative count masked", _stp_shr64(1024, -1), 0);
}

static void strings(void)
{
	char buf[8];

	unit_check_long("strlcpy returns the source length",
			(int64_t)_stp_strlcpy(buf, "abcdefghij", sizeof buf), 10);
	unit_check_str("strlcpy truncates", buf, "abcdefg");
	_stp_strlcpy(buf, "ab", sizeof buf);
	unit_check_long("strlcat returns the full length",
			(int64_t)_stp_strlcat(buf, "cdefghij", sizeof buf), 10);
	unit_check_str("strlcat truncates", buf, "abcdefg");
	_stp_strlcpy(buf, "xy", sizeof buf);
	_stp_strlcat(buf, "z", sizeof buf);
	unit_check_str("strlcat appends", buf, "xyz");
}

static void clocks(void)
{
	int64_t a = _stp_gettime_ns(CLOCK_MONOTONIC), b = _stp_gettime_ns(CLOCK_MONOTONIC);
	int64_t rt = _stp_gettime_ns(CLOCK_REALTIME);

	unit_result("monotonic clock advances", b >= a && a > 0, NULL);
	unit_result("realtime clock is after 2020", rt > 1577836800LL * 1000000000LL, NULL);
}

/* Drain a pipe slowly, so the writer sees partial writes. */
static void *reader(void *arg)
{
	int fd = *(int *)arg;
	char buf[3000];
	size_t *total = malloc(sizeof *total);
	ssize_t n;

	*total = 0;
	while ((n = read(fd, buf, sizeof buf)) > 0)
		*total += (size_t)n;
	return total;
}

static void write_loop(void)
{
	int p[2];
	pthread_t th;
	size_t len = 4 << 20, *got;
	char *data = malloc(len);

	memset(data, 'q', len);
	if (pipe(p) < 0 || !data) {
		unit_result("write loop setup", 0, "pipe");
		free(data);
		return;
	}
	pthread_create(&th, NULL, reader, &p[0]);
	unit_check_long("write_all sends everything", _stp_write_all(p[1], data, len), 0);
	close(p[1]);
	pthread_join(th, (void **)&got);
	unit_check_long("reader got every byte", (int64_t)*got, (int64_t)len);
	close(p[0]);
	free(got);
	free(data);
}

/* A handler fired from a record: the record's registers through every
 * register accessor, and each memory access failing with the "not
 * available at this event" error (not a fault at the address). */
static void record_backend(void)
{
	struct user_regs_struct r;
	struct _stp_tctx tc;
	struct _stp_context c;
	char out[2048], str[512];
	unsigned char b[8];
	uint64_t v = 0;
	size_t n;

	memset(&r, 0, sizeof r);
	r.rax = 0x1111;
	r.rdi = 0xffffffff80000007ull;
	r.rsi = 42;
	r.rsp = 0x7ffc0000;
	r.rip = 0x401000;
	memset(&tc, 0, sizeof tc);
	memset(&c, 0, sizeof c);
	_stp_tctx_record(&tc, 4242, 4243, &r);
	c.target = &tc;

	unit_result("record: a target", _stp_ctx_has_target(&c), NULL);
	unit_check_long("record: pid", _stp_ctx_pid(&c), 4242);
	unit_check_long("record: tid", _stp_ctx_tid(&c), 4243);
	unit_check_long("record: DWARF reg 0 (rax)", _stp_ctx_reg(&c, 0, &v), 0);
	unit_check_long("record: rax's value", (int64_t)v, 0x1111);
	_stp_ctx_reg(&c, 16, &v);
	unit_check_long("record: DWARF reg 16 (rip)", (int64_t)v, 0x401000);
	unit_check_long("record: register(\"rsp\")", _stp_ctx_register(&c, "rsp", 0), 0x7ffc0000);
	unit_check_long("record: register(\"edi\") sign-extended", _stp_ctx_register(&c, "edi", 1),
			-2147483641);
	unit_check_long("record: arg 2 (rsi)", _stp_ctx_arg(&c, 2, 0, 0), 42);
	unit_result("record: no error from registers", c.last_error == NULL, c.last_error);
	_stp_ctx_print_regs(&c);
	n = unit_take_output(out, sizeof out - 1);
	out[n] = '\0';
	unit_result("record: print_regs",
		    !strncmp(out, "RIP: 0000000000401000\nRSP: 000000007ffc0000 ", 44), out);

	unit_check_long("record: read fails", _stp_read_memory(&c, 0x1000, b, sizeof b), -1);
	unit_check_str("record: read error", c.last_error,
		       "cannot read user memory at 0x1000: not available at this event");
	c.last_error = NULL;
	unit_check_long("record: read_int gives 0", _stp_ctx_read_int(&c, 0x2000, 4, 0), 0);
	unit_check_str("record: read_int error", c.last_error,
		       "cannot read user memory at 0x2000: not available at this event");
	c.last_error = NULL;
	unit_check_long("record: quiet read fails", _stp_ctx_read_target_quiet(&c, 0x1000, b, 1),
			-1);
	unit_result("record: quiet read sets no error", c.last_error == NULL, c.last_error);
	unit_check_long("record: write fails", _stp_ctx_write_int(&c, 0x3000, 8, 1), -1);
	unit_check_str("record: write error", c.last_error,
		       "cannot write user memory at 0x3000: not available at this event");
	c.last_error = NULL;
	unit_check_long("record: set_reg fails", _stp_ctx_set_reg(&c, 0, 5), -1);
	unit_check_str("record: set_reg error", c.last_error,
		       "cannot write register 0: not available at this event");
	c.last_error = NULL;
	_stp_ctx_reg(&c, 0, &v);
	unit_check_long("record: rax unchanged by the failed write", (int64_t)v, 0x1111);
	unit_check_long("record: user_string fails",
			_stp_ctx_user_string_n(&c, 0x4000, 10, str, 0, NULL), -1);
	unit_check_str("record: user_string error", c.last_error,
		       "cannot read user memory at 0x4000: not available at this event");
	unit_check_str("record: user_string text", str, "<unknown>");
	c.last_error = NULL;
	unit_check_long("record: ustack gives 0", _stp_ctx_ustack(&c, 0), 0);
	unit_check_str("record: ustack error", c.last_error,
		       "cannot unwind the user stack: its memory is not available at this event");
	c.last_error = NULL;
}

int main(void)
{
	arith();
	strings();
	clocks();
	write_loop();
	record_backend();
	return unit_done();
}
