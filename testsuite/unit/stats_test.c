/* Statistics: SystemTap's integer @avg/@variance and its histogram
 * layout. The expected tables and the variance of the over/underflow
 * data set are SystemTap's own results for the same values. */
#include "unit.h"

static struct _stp_context ctx;

static const char ou_want[] = "value |-------------------------------------------------- count\n"
			      " <250 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@   680\n"
			      "  250 |@@@@@@                                              94\n"
			      "  300 |@@@@@                                               79\n"
			      "  350 |@@@@@                                               79\n"
			      "  400 |@@@@                                                65\n"
			      "  450 |@@@@                                                67\n"
			      "  500 |@@@                                                 55\n"
			      "  550 |@@@                                                 54\n"
			      "  600 |@@@                                                 51\n"
			      "  650 |@@@                                                 45\n"
			      "  700 |@@                                                  41\n"
			      "  750 |@@                                                  40\n"
			      "  800 |@@                                                  34\n"
			      "  850 |@@                                                  33\n"
			      "  900 |@@                                                  31\n"
			      "  950 |@                                                   27\n"
			      " 1000 |@                                                   23\n"
			      ">1000 |@@@@@@@                                            102\n"
			      "\n";

static const char nearly_want[] =
    "value |-------------------------------------------------- count\n"
    "  300 |                                                   0\n"
    "  350 |                                                   0\n"
    "  400 |@                                                  1\n"
    "  450 |                                                   0\n"
    "  500 |                                                   0\n"
    "      ~\n"
    "  850 |                                                   0\n"
    "  900 |                                                   0\n"
    "  950 |@                                                  1\n"
    " 1000 |                                                   0\n"
    " 1050 |                                                   0\n"
    "\n";

static const char negstart_want[] =
    "value |-------------------------------------------------- count\n"
    "  -20 |@                                                  1\n"
    "  -15 |@                                                  1\n"
    "  -10 |                                                   0\n"
    "   -5 |@                                                  1\n"
    "    0 |@                                                  1\n"
    "    5 |@                                                  1\n"
    "   10 |                                                   0\n"
    "   15 |                                                   0\n"
    "\n";

static const char under_want[] = "value |-------------------------------------------------- count\n"
				 "   <0 |@                                                  1\n"
				 "    0 |@@@@@                                              5\n"
				 "   10 |                                                   0\n"
				 "   20 |                                                   0\n"
				 "   30 |                                                   0\n"
				 "   40 |                                                   0\n"
				 "   50 |@@@                                                3\n"
				 "   60 |                                                   0\n"
				 "   70 |                                                   0\n"
				 "      ~\n"
				 "   90 |                                                   0\n"
				 "  100 |                                                   0\n"
				 " >100 |@                                                  1\n"
				 "\n";

static const char logmix_want[] =
    "value |-------------------------------------------------- count\n"
    "    0 |                                                     1\n"
    "    1 |                                                     0\n"
    "    2 |                                                     1\n"
    "    4 |                                                     1\n"
    "    8 |@                                                    3\n"
    "   16 |@                                                    5\n"
    "   32 |@@@                                                 11\n"
    "   64 |@@@@@@@                                             21\n"
    "  128 |@@@@@@@@                                            24\n"
    "  256 |                                                     0\n"
    "  512 |                                                     0\n"
    " 1024 |                                                     0\n"
    " 2048 |                                                     0\n"
    " 4096 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@           120\n"
    " 8192 |                                                     0\n"
    "16384 |                                                     0\n"
    "\n";

static const char logneg_want[] =
    " value |-------------------------------------------------- count\n"
    "-16384 |                                                   0\n"
    " -8192 |                                                   0\n"
    " -4096 |@                                                  1\n"
    " -2048 |                                                   0\n"
    " -1024 |                                                   0\n"
    "       ~\n"
    "    -8 |                                                   0\n"
    "    -4 |                                                   0\n"
    "    -2 |@                                                  1\n"
    "    -1 |                                                   0\n"
    "     0 |                                                   0\n"
    "\n";

static const char logpm_want[] = "value |-------------------------------------------------- count\n"
				 "   -4 |                                                   0\n"
				 "   -2 |                                                   0\n"
				 "   -1 |@                                                  1\n"
				 "    0 |                                                   0\n"
				 "    1 |@                                                  1\n"
				 "    2 |                                                   0\n"
				 "    4 |                                                   0\n"
				 "\n";

static const char logzero_want[] =
    "value |-------------------------------------------------- count\n"
    "    0 |@                                                  1\n"
    "    1 |                                                   0\n"
    "    2 |                                                   0\n"
    "\n";

static const char logmax_want[] =
    "              value |-------------------------------------------------- count\n"
    "1152921504606846976 |                                                   0\n"
    "2305843009213693952 |                                                   0\n"
    "4611686018427387904 |@                                                  1\n"
    "\n";

static const char logscale_want[] =
    "value |-------------------------------------------------- count\n"
    "    0 |                                                      0\n"
    "    1 |                                                      3\n"
    "    2 |                                                      0\n"
    "    4 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@  1234\n"
    "    8 |                                                      0\n"
    "   16 |                                                      0\n"
    "\n";

static struct _stp_stat *make(enum _stp_hist_kind kind, int64_t start, int64_t stop,
			      int64_t interval, int shift, const int64_t *v, size_t n)
{
	struct _stp_hist_spec h = {kind, start, stop, interval};
	struct _stp_stat *st = _stp_stat_new(&h);

	_stp_stat_set_variance_shift(st, shift);
	for (size_t i = 0; i < n; i++)
		_stp_stat_add(st, v[i]);
	return st;
}

#define MAKE(kind, start, stop, interval, shift, ...)                            \
	make(kind, start, stop, interval, shift, (const int64_t[]){__VA_ARGS__}, \
	     sizeof((const int64_t[]){__VA_ARGS__}) / sizeof(int64_t))

static void check_hist(const char *name, struct _stp_stat *st, const char *want)
{
	char got[16384];
	size_t n;

	_stp_stat_print_hist(&ctx, st);
	n = unit_take_output(got, sizeof got);
	unit_check_mem(name, got, n, want, strlen(want));
	_stp_stat_free(st);
}

/* k * m for k < 100 and m in 1..15, 12 twice: 1600 values. */
static struct _stp_stat *over_under(enum _stp_hist_kind kind)
{
	static const int mult[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 12, 13, 14, 15};
	struct _stp_hist_spec h = {kind, 250, 1000, 50};
	struct _stp_stat *st = _stp_stat_new(&h);

	for (int k = 0; k < 100; k++)
		for (int m = 0; m < 16; m++)
			_stp_stat_add(st, k * mult[m]);
	return st;
}

static void check_stats(const char *name, struct _stp_stat *st, int64_t count, int64_t sum,
			int64_t min, int64_t max, int64_t avg, int64_t var)
{
	char n[256];

	snprintf(n, sizeof n, "%s @count", name);
	unit_check_long(n, _stp_stat_get(&ctx, st, STP_COUNT), count);
	snprintf(n, sizeof n, "%s @sum", name);
	unit_check_long(n, _stp_stat_get(&ctx, st, STP_SUM), sum);
	snprintf(n, sizeof n, "%s @min", name);
	unit_check_long(n, _stp_stat_get(&ctx, st, STP_MIN), min);
	snprintf(n, sizeof n, "%s @max", name);
	unit_check_long(n, _stp_stat_get(&ctx, st, STP_MAX), max);
	snprintf(n, sizeof n, "%s @avg", name);
	unit_check_long(n, _stp_stat_get(&ctx, st, STP_AVG), avg);
	snprintf(n, sizeof n, "%s @variance", name);
	unit_check_long(n, _stp_stat_get(&ctx, st, STP_VARIANCE), var);
	_stp_stat_free(st);
}

static void aggregates(void)
{
	check_stats("1600 values", over_under(STP_HIST_NONE), 1600, 653400, 0, 1485, 408, 450768);
	check_stats("two values", MAKE(STP_HIST_NONE, 0, 0, 0, 0, 1, 4), 2, 5, 1, 4, 2, 6);
	/* integer rounding of the running mean shows: not 2 */
	check_stats("1..5", MAKE(STP_HIST_NONE, 0, 0, 0, 0, 1, 2, 3, 4, 5), 5, 15, 1, 5, 3, 12);
	check_stats("1..5 shift 4", MAKE(STP_HIST_NONE, 0, 0, 0, 4, 1, 2, 3, 4, 5), 5, 15, 1, 5, 3,
		    2);
	check_stats("shift 7", MAKE(STP_HIST_LINEAR, 0, 1500, 50, 7, 444, 999), 2, 1443, 444, 999,
		    721, 154012);
	check_stats("negative values", MAKE(STP_HIST_NONE, 0, 0, 0, 0, -5, 7, 100, -3, 2, 9), 6,
		    110, -5, 100, 18, 1640);
	check_stats("avg truncates toward 0", MAKE(STP_HIST_NONE, 0, 0, 0, 0, -1, -2), 2, -3, -2,
		    -1, -1, 1);
	check_stats("one value", MAKE(STP_HIST_NONE, 0, 0, 0, 0, 5), 1, 5, 5, 5, 5, 0);
	check_stats("large values",
		    MAKE(STP_HIST_NONE, 0, 0, 0, 0, 100000, -100000, 3, 7000000000LL), 4,
		    7000000003LL, -100000, 7000000000LL, 1750000000, 2228409641670860590LL);
}

static void empty(void)
{
	struct _stp_stat *st = _stp_stat_new(NULL);

	unit_check_long("empty @count", _stp_stat_get(&ctx, st, STP_COUNT), 0);
	unit_check_long("empty @sum", _stp_stat_get(&ctx, st, STP_SUM), 0);
	unit_result("empty @count is no error", ctx.last_error == NULL, NULL);
	_stp_stat_get(&ctx, st, STP_MIN);
	unit_check_str("empty @min", ctx.last_error, "empty aggregate");
	ctx.last_error = NULL;
	_stp_stat_get(&ctx, NULL, STP_AVG);
	unit_check_str("absent @avg", ctx.last_error, "empty aggregate");
	ctx.last_error = NULL;
	_stp_stat_print_hist(&ctx, st);
	unit_check_str("empty histogram", ctx.last_error, "empty aggregate");
	ctx.last_error = NULL;
	_stp_stat_add(st, 3);
	_stp_stat_clear(st);
	unit_check_long("cleared", _stp_stat_get(&ctx, st, STP_COUNT), 0);
	_stp_stat_free(st);
}

static void buckets(void)
{
	struct _stp_stat *st = MAKE(STP_HIST_LOG, 0, 0, 0, 0, 1, 2, 3, 4, -1, 0);

	unit_check_long("log buckets", _stp_stat_hist_nbuckets(st), 128);
	unit_check_long("log bucket of 0", _stp_stat_hist_bucket(&ctx, st, 64), 1);
	unit_check_long("log bucket of 1", _stp_stat_hist_bucket(&ctx, st, 65), 1);
	unit_check_long("log bucket of 2..3", _stp_stat_hist_bucket(&ctx, st, 66), 2);
	unit_check_long("log bucket of 4..7", _stp_stat_hist_bucket(&ctx, st, 67), 1);
	unit_check_long("log bucket of -1", _stp_stat_hist_bucket(&ctx, st, 63), 1);
	_stp_stat_hist_bucket(&ctx, st, 128);
	unit_check_str("bucket out of range", ctx.last_error, "histogram index out of range");
	ctx.last_error = NULL;
	_stp_stat_free(st);
	st = MAKE(STP_HIST_LINEAR, 0, 100, 10, 0, -1, 0, 9, 10, 100, 1000);
	unit_check_long("linear buckets", _stp_stat_hist_nbuckets(st), 13);
	unit_check_long("no histogram, no buckets", _stp_stat_hist_nbuckets(NULL), 0);
	unit_check_long("linear underflow bucket", _stp_stat_hist_bucket(&ctx, st, 0), 1);
	unit_check_long("linear first bucket", _stp_stat_hist_bucket(&ctx, st, 1), 2);
	unit_check_long("linear second bucket", _stp_stat_hist_bucket(&ctx, st, 2), 1);
	unit_check_long("linear bucket of stop", _stp_stat_hist_bucket(&ctx, st, 11), 1);
	unit_check_long("linear overflow bucket", _stp_stat_hist_bucket(&ctx, st, 12), 1);
	_stp_stat_free(st);
}

static void histograms(void)
{
	check_hist("linear over and underflow", over_under(STP_HIST_LINEAR), ou_want);
	check_hist("linear elision", MAKE(STP_HIST_LINEAR, 0, 1500, 50, 0, 444, 999), nearly_want);
	check_hist("linear negative start",
		   MAKE(STP_HIST_LINEAR, -20, 20, 5, 0, -20, -15, -1, 0, 7), negstart_want);
	check_hist("linear below start",
		   MAKE(STP_HIST_LINEAR, 0, 100, 10, 0, -7, 1, 2, 3, 3, 3, 50, 51, 52, 200),
		   under_want);
	{
		struct _stp_hist_spec h = {STP_HIST_LOG, 0, 0, 0};
		struct _stp_stat *st = _stp_stat_new(&h);
		for (int v = 0; v < 200; v += 3)
			_stp_stat_add(st, v);
		for (int i = 0; i < 120; i++)
			_stp_stat_add(st, 5000);
		check_hist("log", st, logmix_want);
		st = _stp_stat_new(&h);
		for (int i = 0; i < 1234; i++)
			_stp_stat_add(st, 7);
		for (int i = 0; i < 3; i++)
			_stp_stat_add(st, 1);
		check_hist("log scaled bars", st, logscale_want);
	}
	check_hist("log negative", MAKE(STP_HIST_LOG, 0, 0, 0, 0, -4096, -2), logneg_want);
	check_hist("log both signs", MAKE(STP_HIST_LOG, 0, 0, 0, 0, -1, 1), logpm_want);
	check_hist("log zero", MAKE(STP_HIST_LOG, 0, 0, 0, 0, 0), logzero_want);
	{
		struct _stp_stat *st = MAKE(STP_HIST_LINEAR, 0, 1500, 50, 0, 444, 999);
		char dst[512];
		_stp_stat_sprint_hist(&ctx, st, dst);
		unit_check_mem("sprint histogram, cut at MAXSTRINGLEN-1", dst, strlen(dst),
			       nearly_want, 511);
		_stp_stat_free(st);
		st = MAKE(STP_HIST_LOG, 0, 0, 0, 0, 0);
		_stp_stat_sprint_hist(&ctx, st, dst);
		unit_check_str("sprint small histogram", dst, logzero_want);
		_stp_stat_free(st);
	}
	check_hist("log largest", MAKE(STP_HIST_LOG, 0, 0, 0, 0, INT64_MAX), logmax_want);
}

int main(void)
{
	aggregates();
	empty();
	buckets();
	histograms();
	return unit_done();
}
