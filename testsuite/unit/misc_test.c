/* Arithmetic with SystemTap's edge cases, bounded string copies, clocks
 * and the output transport's write loop. */
#include "unit.h"

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

int main(void)
{
	arith();
	strings();
	clocks();
	write_loop();
	return unit_done();
}
