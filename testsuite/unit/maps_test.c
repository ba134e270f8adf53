/* Maps: set/get/delete, limits and wrap-around, foreach sorting,
 * limits and slices, stats values. */
#include "unit.h"

#include <stdlib.h>

static struct _stp_context ctx;
static const enum _stp_type LONG1[] = {STP_LONG};
static const enum _stp_type STR1[] = {STP_STRING};
static const enum _stp_type LS[] = {STP_LONG, STP_STRING};

#define K1(n) ((struct _stp_val[]){{(n), NULL}})
#define KS(s) ((struct _stp_val[]){{0, (s)}})
#define KLS(n, s) ((struct _stp_val[]){{(n), NULL}, {0, (s)}})

/* The keys (key 0) of a foreach, as "k1 k2 ...". */
static const char *walk(struct _stp_map *m, int col, int dir, enum _stp_stat_op op, int64_t limit,
			const struct _stp_val *slice, unsigned mask)
{
	static char out[1024];
	struct _stp_map_iter *it = _stp_map_iter_start(m, col, dir, op, limit, slice, mask);
	size_t o = 0;

	out[0] = '\0';
	while (_stp_map_iter_next(it))
		o += (size_t)snprintf(out + o, sizeof out - o, "%s%lld", o ? " " : "",
				      (long long)_stp_map_iter_key_long(it, 0));
	_stp_map_iter_end(it);
	return out;
}

static void basics(void)
{
	struct _stp_map *m = _stp_map_new(1, LONG1, STP_LONG, 0, 0, NULL);
	char buf[512];

	unit_check_long("absent reads 0", _stp_map_get_long(m, K1(1)), 0);
	unit_check_long("absent does not exist", _stp_map_exists(m, K1(1)), 0);
	_stp_map_set_long(&ctx, m, K1(1), 10);
	_stp_map_set_long(&ctx, m, K1(2), 0);
	unit_check_long("get", _stp_map_get_long(m, K1(1)), 10);
	unit_check_long("a stored 0 exists", _stp_map_exists(m, K1(2)), 1);
	unit_check_long("size", _stp_map_size(m), 2);
	_stp_map_delete(m, K1(1));
	unit_check_long("deleted", _stp_map_exists(m, K1(1)), 0);
	unit_check_long("size after delete", _stp_map_size(m), 1);
	_stp_map_delete(m, K1(99));
	_stp_map_clear(m);
	unit_check_long("clear", _stp_map_size(m), 0);
	_stp_map_free(m);

	m = _stp_map_new(1, STR1, STP_STRING, 0, 0, NULL);
	_stp_map_set_str(&ctx, m, KS("k"), "v1");
	_stp_map_set_str(&ctx, m, KS("k"), "v2");
	_stp_map_get_str(m, KS("k"), buf);
	unit_check_str("string value overwritten", buf, "v2");
	_stp_map_get_str(m, KS("nope"), buf);
	unit_check_str("absent string reads empty", buf, "");
	_stp_map_free(m);

	m = _stp_map_new(2, LS, STP_LONG, 0, 0, NULL);
	_stp_map_set_long(&ctx, m, KLS(1, "a"), 1);
	_stp_map_set_long(&ctx, m, KLS(1, "b"), 2);
	unit_check_long("tuple keys distinct", _stp_map_get_long(m, KLS(1, "b")), 2);
	unit_check_long("tuple absent", _stp_map_exists(m, KLS(2, "a")), 0);
	_stp_map_free(m);
}

static void many(void)
{
	struct _stp_map *m = _stp_map_new(1, LONG1, STP_LONG, 100000, 0, NULL);
	int ok = 1;

	for (int64_t i = 0; i < 50000; i++)
		_stp_map_set_long(&ctx, m, K1(i * 7919), i);
	for (int64_t i = 0; i < 50000; i++)
		ok &= _stp_map_get_long(m, K1(i * 7919)) == i;
	unit_result("50000 entries", ok && _stp_map_size(m) == 50000, NULL);
	_stp_map_free(m);
}

static void overflow(void)
{
	struct _stp_map *m = _stp_map_new(1, LONG1, STP_LONG, 3, 0, NULL);
	int rc;

	for (int i = 1; i <= 3; i++)
		_stp_map_set_long(&ctx, m, K1(i), i);
	ctx.last_error = NULL;
	rc = _stp_map_set_long(&ctx, m, K1(4), 4);
	unit_check_long("full map refuses a new key", rc, -1);
	unit_check_str("overflow message", ctx.last_error, "Array overflow, check MAXMAPENTRIES");
	ctx.last_error = NULL;
	rc = _stp_map_set_long(&ctx, m, K1(2), 20);
	unit_result("full map updates an existing key", rc == 0 && !ctx.last_error, NULL);
	_stp_map_free(m);

	/* maxentries 0: MAXMAPENTRIES at the time of the write */
	_stp_maxmapentries = 2;
	m = _stp_map_new(1, LONG1, STP_LONG, 0, 0, NULL);
	_stp_map_set_long(&ctx, m, K1(1), 1);
	_stp_map_set_long(&ctx, m, K1(2), 1);
	rc = _stp_map_set_long(&ctx, m, K1(3), 1);
	unit_check_long("MAXMAPENTRIES applies", rc, -1);
	ctx.last_error = NULL;
	_stp_maxmapentries = 2048;
	_stp_map_free(m);

	m = _stp_map_new(1, LONG1, STP_LONG, 3, 1, NULL);
	for (int i = 1; i <= 5; i++)
		_stp_map_set_long(&ctx, m, K1(i), i);
	unit_result("wrap keeps no error", ctx.last_error == NULL, NULL);
	unit_check_str("wrap drops the oldest", walk(m, -1, 1, STP_COUNT, 0, NULL, 0), "3 4 5");
	_stp_map_free(m);
}

static void sorting(void)
{
	struct _stp_map *m = _stp_map_new(1, LONG1, STP_LONG, 0, 0, NULL);
	static const int64_t keys[] = {5, 1, 4, 2, 3};
	static const int64_t vals[] = {10, 30, 10, 20, 30};

	for (int i = 0; i < 5; i++)
		_stp_map_set_long(&ctx, m, K1(keys[i]), vals[i]);
	unit_check_str("unsorted is insertion order", walk(m, -1, 1, STP_COUNT, 0, NULL, 0),
		       "5 1 4 2 3");
	unit_check_str("by key ascending", walk(m, 1, 1, STP_COUNT, 0, NULL, 0), "1 2 3 4 5");
	unit_check_str("by key descending", walk(m, 1, -1, STP_COUNT, 0, NULL, 0), "5 4 3 2 1");
	unit_check_str("by value ascending, ties stable", walk(m, 0, 1, STP_COUNT, 0, NULL, 0),
		       "5 4 2 1 3");
	unit_check_str("by value descending, ties stable", walk(m, 0, -1, STP_COUNT, 0, NULL, 0),
		       "1 3 2 5 4");
	unit_check_str("limit", walk(m, 0, -1, STP_COUNT, 2, NULL, 0), "1 3");
	unit_check_str("limit beyond size", walk(m, 1, 1, STP_COUNT, 10, NULL, 0), "1 2 3 4 5");
	_stp_map_free(m);

	m = _stp_map_new(2, LS, STP_STRING, 0, 0, NULL);
	_stp_map_set_str(&ctx, m, KLS(2, "b"), "x");
	_stp_map_set_str(&ctx, m, KLS(1, "c"), "z");
	_stp_map_set_str(&ctx, m, KLS(3, "a"), "y");
	_stp_map_set_str(&ctx, m, KLS(1, "a"), "w");
	unit_check_str("by string key 2", walk(m, 2, 1, STP_COUNT, 0, NULL, 0), "3 1 2 1");
	unit_check_str("by string value", walk(m, 0, 1, STP_COUNT, 0, NULL, 0), "1 2 3 1");
	unit_check_str("slice on key 1", walk(m, 2, 1, STP_COUNT, 0, KLS(1, NULL), 1), "1 1");
	unit_check_str("slice on key 2", walk(m, 1, 1, STP_COUNT, 0, KLS(0, "a"), 2), "1 3");
	unit_check_str("slice on both", walk(m, -1, 1, STP_COUNT, 0, KLS(1, "c"), 3), "1");
	unit_check_str("slice matching nothing", walk(m, -1, 1, STP_COUNT, 0, KLS(9, "a"), 1), "");
	{
		struct _stp_map_iter *it = _stp_map_iter_start(m, 1, 1, STP_COUNT, 1, NULL, 0);
		_stp_map_iter_next(it);
		unit_check_str("iterator string key", _stp_map_iter_key_str(it, 1), "c");
		unit_check_str("iterator string value", _stp_map_iter_val_str(it), "z");
		_stp_map_iter_end(it);
	}
	_stp_map_free(m);
}

static void delete_while_iterating(void)
{
	struct _stp_map *m = _stp_map_new(1, STR1, STP_STRING, 0, 0, NULL);
	struct _stp_map_iter *it;
	char seen[256] = "";

	_stp_map_set_str(&ctx, m, KS("a"), "1");
	_stp_map_set_str(&ctx, m, KS("b"), "2");
	_stp_map_set_str(&ctx, m, KS("c"), "3");
	it = _stp_map_iter_start(m, -1, 1, STP_COUNT, 0, NULL, 0);
	while (_stp_map_iter_next(it)) {
		strcat(seen, _stp_map_iter_key_str(it, 0));
		strcat(seen, _stp_map_iter_val_str(it));
		_stp_map_clear(m);
	}
	_stp_map_iter_end(it);
	unit_check_str("snapshot survives deletion", seen, "a1b2c3");
	unit_check_long("map emptied", _stp_map_size(m), 0);
	_stp_map_free(m);
}

static void stats_values(void)
{
	struct _stp_hist_spec h = {STP_HIST_LINEAR, 0, 100, 10};
	struct _stp_map *m = _stp_map_new(1, LONG1, STP_STATS, 0, 0, &h);

	/* key 1: count 3 sum 30 max 20; key 2: count 1 sum 100 max 100;
	 * key 3: count 2 sum 2 max 1 */
	_stp_map_add_stat(&ctx, m, K1(1), 5);
	_stp_map_add_stat(&ctx, m, K1(1), 5);
	_stp_map_add_stat(&ctx, m, K1(1), 20);
	_stp_map_add_stat(&ctx, m, K1(2), 100);
	_stp_map_add_stat(&ctx, m, K1(3), 1);
	_stp_map_add_stat(&ctx, m, K1(3), 1);
	unit_check_long("stat count", _stp_stat_get(&ctx, _stp_map_get_stat(m, K1(1)), STP_COUNT),
			3);
	unit_check_long("absent stat count",
			_stp_stat_get(&ctx, _stp_map_get_stat(m, K1(9)), STP_COUNT), 0);
	unit_check_str("sorted by @count", walk(m, 0, -1, STP_COUNT, 0, NULL, 0), "1 3 2");
	unit_check_str("sorted by @sum", walk(m, 0, -1, STP_SUM, 0, NULL, 0), "2 1 3");
	unit_check_str("sorted by @max ascending", walk(m, 0, 1, STP_MAX, 0, NULL, 0), "3 1 2");
	unit_check_str("sorted by @avg", walk(m, 0, 1, STP_AVG, 0, NULL, 0), "3 1 2");
	unit_check_long("histogram bucket of a map entry",
			_stp_stat_hist_bucket(&ctx, _stp_map_get_stat(m, K1(1)), 1), 2);
	_stp_map_free(m);
}

static void string_limits(void)
{
	struct _stp_map *m = _stp_map_new(1, STR1, STP_STRING, 0, 0, NULL);
	char big[1000], buf[512];

	memset(big, 'k', sizeof big - 1);
	big[sizeof big - 1] = '\0';
	_stp_map_set_str(&ctx, m, KS(big), big);
	_stp_map_get_str(m, KS(big), buf);
	unit_check_long("string value truncated to MAXSTRINGLEN-1", (int64_t)strlen(buf), 511);
	{
		struct _stp_map_iter *it = _stp_map_iter_start(m, -1, 1, STP_COUNT, 0, NULL, 0);
		_stp_map_iter_next(it);
		unit_check_long("string key truncated",
				(int64_t)strlen(_stp_map_iter_key_str(it, 0)), 511);
		_stp_map_iter_end(it);
	}
	_stp_map_free(m);
}

int main(void)
{
	basics();
	many();
	overflow();
	sorting();
	delete_while_iterating();
	stats_values();
	string_limits();
	return unit_done();
}
