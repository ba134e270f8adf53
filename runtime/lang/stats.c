/* Statistics (<<< and @count/@sum/@min/@max/@avg/@variance) and
 * histograms, with SystemTap's integer arithmetic: @avg truncates
 * sum/count; @variance is Welford's online algorithm on integers as
 * SystemTap keeps it per CPU (with its 32-bit delta), then combined by the
 * "total variance" formula it uses across CPUs (here one CPU), so rounding
 * matches SystemTap's results exactly. */
#include "stp_internal.h"

#include <stdlib.h>
#include <string.h>

#define STP_MAX_BUCKETS 128 /* linear histograms, incl. under/overflow */
#define HIST_LOG_BUCKETS 128
#define HIST_LOG_BUCKET0 64 /* the bucket of value 0 */

/* HIST_WIDTH and HIST_ELISION as the module was compiled with them. */
int64_t _stp_hist_width = 50;  /* '@' columns */
int64_t _stp_hist_elision = 2; /* zero rows kept around data; < 0: all */
#define HIST_WIDTH ((int)_stp_hist_width)

struct _stp_stat {
	int64_t count, sum, min, max;
	int64_t avg_s, m2, variance_s; /* Welford state, scaled by shift */
	int shift;
	struct _stp_hist_spec hist;
	int buckets;
	int64_t histogram[];
};

static int linear_buckets(const struct _stp_hist_spec *h)
{
	int64_t n;

	if (h->interval <= 0) {
		_stp_msg_warn("histogram: interval cannot be zero.");
		return 0;
	}
	n = h->stop > h->start ? (h->stop - h->start) / h->interval + 3 : 0;
	if (n < 3 || n > STP_MAX_BUCKETS) {
		_stp_msg_warn("histogram: Number of buckets must be between 1 and %d\n"
			      "Number_of_buckets = (stop - start) / interval.\n"
			      "Please adjust your start, stop, and interval values.",
			      STP_MAX_BUCKETS - 2);
		return 0;
	}
	return (int)n;
}

struct _stp_stat *_stp_stat_new(const struct _stp_hist_spec *hist)
{
	struct _stp_hist_spec h = {STP_HIST_NONE, 0, 0, 0};
	int buckets = 0;
	struct _stp_stat *st;

	if (hist)
		h = *hist;
	if (h.kind == STP_HIST_LOG)
		buckets = HIST_LOG_BUCKETS;
	else if (h.kind == STP_HIST_LINEAR)
		buckets = linear_buckets(&h);
	if (buckets == 0)
		h.kind = STP_HIST_NONE;
	st = calloc(1, sizeof *st + (size_t)buckets * sizeof(int64_t));
	if (!st)
		return NULL;
	st->hist = h;
	st->buckets = buckets;
	return st;
}

void _stp_stat_set_variance_shift(struct _stp_stat *st, int shift)
{
	if (st && st->count == 0)
		st->shift = shift > 0 && shift < 63 ? shift : 0;
}

void _stp_stat_free(struct _stp_stat *st)
{
	free(st);
}

void _stp_stat_clear(struct _stp_stat *st)
{
	if (!st)
		return;
	st->count = st->sum = st->min = st->max = 0;
	st->avg_s = st->m2 = st->variance_s = 0;
	memset(st->histogram, 0, (size_t)st->buckets * sizeof(int64_t));
}

/* log2 bucket: 64 for 0, 64+k+1 for values in [2^k, 2^(k+1)), mirrored
 * below 64 for negative values. */
static int log_bucket(int64_t val)
{
	uint64_t u;
	int res;

	if (val == 0)
		return HIST_LOG_BUCKET0;
	u = val < 0 ? 0 - (uint64_t)val : (uint64_t)val;
	res = HIST_LOG_BUCKETS - __builtin_clzll(u);
	if (val < 0)
		res = HIST_LOG_BUCKETS - res;
	return res >= HIST_LOG_BUCKETS ? HIST_LOG_BUCKETS - 1 : res;
}

static int64_t log_bucket_value(int num)
{
	if (num == HIST_LOG_BUCKET0)
		return 0;
	if (num < HIST_LOG_BUCKET0)
		return INT64_MIN >> num;
	return (int64_t)1 << (num - HIST_LOG_BUCKET0 - 1);
}

static int linear_bucket(const struct _stp_stat *st, int64_t val)
{
	uint64_t off;

	if (val < st->hist.start)
		return 0;
	off = ((uint64_t)val - (uint64_t)st->hist.start) / (uint64_t)st->hist.interval + 1;
	return off >= (uint64_t)st->buckets - 1 ? st->buckets - 1 : (int)off;
}

void _stp_stat_add(struct _stp_stat *st, int64_t val)
{
	if (!st)
		return;
	if (st->count == 0) {
		st->count = 1;
		st->sum = st->min = st->max = val;
		st->avg_s = (int64_t)((uint64_t)val << st->shift);
		st->m2 = 0;
	} else {
		int64_t scaled = (int64_t)((uint64_t)val << st->shift);
		int delta = (int)(int32_t)(uint32_t)(uint64_t)(scaled - st->avg_s);

		st->count++;
		st->sum = (int64_t)((uint64_t)st->sum + (uint64_t)val);
		if (val > st->max)
			st->max = val;
		if (val < st->min)
			st->min = val;
		st->avg_s += _stp_div64(NULL, delta, st->count);
		st->m2 =
		    (int64_t)((uint64_t)st->m2 + (uint64_t)delta * (uint64_t)(scaled - st->avg_s));
		st->variance_s = _stp_div64(NULL, st->m2, st->count - 1);
	}
	if (st->hist.kind == STP_HIST_LOG)
		st->histogram[log_bucket(val)]++;
	else if (st->hist.kind == STP_HIST_LINEAR)
		st->histogram[linear_bucket(st, val)]++;
}

static int64_t variance(const struct _stp_stat *st)
{
	int64_t avg = _stp_div64(NULL, (int64_t)((uint64_t)st->sum << st->shift), st->count);
	uint64_t d = (uint64_t)(st->avg_s - avg);
	uint64_t s1 = (uint64_t)st->count * d * d;
	uint64_t s2 = (uint64_t)(st->count - 1) * (uint64_t)st->variance_s;

	return _stp_div64(NULL, (int64_t)(s1 + s2), st->count - 1) >> (2 * st->shift);
}

int64_t _stp_stat_get(struct _stp_context *c, const struct _stp_stat *st, enum _stp_stat_op op)
{
	int64_t count = st ? st->count : 0;

	if (op == STP_COUNT)
		return count;
	if (op == STP_SUM)
		return count ? st->sum : 0;
	if (count == 0) {
		if (c)
			c->last_error = "empty aggregate";
		return 0;
	}
	switch (op) {
	case STP_MIN:
		return st->min;
	case STP_MAX:
		return st->max;
	case STP_AVG:
		return _stp_div64(NULL, st->sum, st->count);
	case STP_VARIANCE:
		return variance(st);
	default:
		return 0;
	}
}

int64_t _stp_stat_hist_bucket(struct _stp_context *c, const struct _stp_stat *st, int64_t bucket)
{
	if (!st || st->hist.kind == STP_HIST_NONE)
		return 0;
	if (bucket < 0 || bucket >= st->buckets) {
		if (c)
			c->last_error = "histogram index out of range";
		return 0;
	}
	return st->histogram[bucket];
}

int64_t _stp_stat_hist_nbuckets(const struct _stp_stat *st)
{
	return st && st->hist.kind != STP_HIST_NONE ? st->buckets : 0;
}

/* Characters needed to print v in decimal. */
static int needed_space(int64_t v)
{
	uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
	int space = v < 0;

	if (v == 0)
		return 1;
	for (; u; u /= 10)
		space++;
	return space;
}

/* printf into a buffer, for the histogram's rows. */
static void bprintf(struct _stp_context *c, struct _stp_strbuf *b, const char *fmt,
		    const struct _stp_val *args, int nargs)
{
	_stp_format_buf(c, b, fmt, args, nargs);
}

static void put_rep(struct _stp_strbuf *b, char ch, int64_t n)
{
	for (int64_t i = 0; i < n; i++)
		_stp_strbuf_put(b, &ch, 1);
}

/* Is row i to be elided: it and its neighbours within HIST_ELISION (inside
 * the printed range) all zero. */
static int elided(const struct _stp_stat *st, int i, int low, int high)
{
	int n = _stp_hist_elision < st->buckets ? (int)_stp_hist_elision : st->buckets;

	if (n < 0)
		return 0;
	int lo = i - n > low ? i - n : low;
	int hi = i + n < high ? i + n : high;

	for (int k = lo; k <= hi; k++)
		if (st->histogram[k])
			return 0;
	return 1;
}

static int64_t row_value(const struct _stp_stat *st, int i, const char **prefix)
{
	*prefix = "";
	if (st->hist.kind == STP_HIST_LOG)
		return log_bucket_value(i);
	if (i == 0) {
		*prefix = "<";
		return st->hist.start;
	}
	if (i == st->buckets - 1) {
		*prefix = ">";
		return st->hist.start + (int64_t)(i - 2) * st->hist.interval;
	}
	return st->hist.start + (int64_t)(i - 1) * st->hist.interval;
}

/* The table's shape: the rows printed, bar scale and column widths. */
struct hist_layout {
	int low, high;
	int64_t scale;
	int val_space, cnt_space;
};

static void hist_layout(const struct _stp_stat *st, struct hist_layout *l)
{
	int linear = st->hist.kind == STP_HIST_LINEAR, under = 0, over = 0, a, b;
	int64_t valmax = 0;

	l->low = -1;
	l->high = 0;
	for (int i = 0; i < st->buckets; i++) {
		if (st->histogram[i] > 0 && l->low == -1)
			l->low = i;
		if (st->histogram[i] > 0)
			l->high = i;
		if (st->histogram[i] > valmax)
			valmax = st->histogram[i];
	}
	/* Up to two empty rows either side; log histograms don't reach into
	 * the negative half without negative data. */
	for (int i = 0; i < 2; i++) {
		if (l->low > 0 && (linear || l->low != HIST_LOG_BUCKET0))
			l->low--;
		if (l->high < st->buckets - 1)
			l->high++;
	}
	if (linear) {
		/* under/overflow rows only when they hold something */
		if (l->low == 0 && st->histogram[0] == 0)
			l->low++;
		if (l->high == st->buckets - 1 && st->histogram[l->high] == 0)
			l->high--;
		under = l->low == 0;
		over = l->high == st->buckets - 1;
	}
	l->scale = valmax <= HIST_WIDTH ? 1 : (valmax + HIST_WIDTH - 1) / HIST_WIDTH;
	l->cnt_space = needed_space(valmax);
	if (linear) {
		a = needed_space(st->hist.start) + under;
		b = needed_space(st->hist.start + st->hist.interval * l->high) + over;
	} else {
		a = needed_space(log_bucket_value(l->high));
		b = needed_space(log_bucket_value(l->low));
	}
	l->val_space = a > b ? a : b;
	if (l->val_space < 5)
		l->val_space = 5;
}

static void hist_table(struct _stp_context *c, struct _stp_strbuf *b, const struct _stp_stat *st)
{
	struct hist_layout l;
	int eliding = 0;

	hist_layout(st, &l);
	bprintf(c, b, "%*s |", (struct _stp_val[]){{l.val_space, NULL}, {0, "value"}}, 2);
	put_rep(b, '-', HIST_WIDTH);
	_stp_strbuf_put(b, " count\n", 7);
	for (int i = l.low; i <= l.high; i++) {
		const char *prefix;
		int64_t val, bar;

		if (elided(st, i, l.low, l.high)) {
			eliding = 1;
			continue;
		}
		if (eliding) {
			bprintf(c, b, "%*s ~\n", (struct _stp_val[]){{l.val_space, NULL}, {0, ""}},
				2);
			eliding = 0;
		}
		val = row_value(st, i, &prefix);
		bprintf(c, b, "%*s%d |",
			(struct _stp_val[]){
			    {l.val_space - needed_space(val), NULL}, {0, prefix}, {val, NULL}},
			3);
		bar = st->histogram[i] / l.scale;
		put_rep(b, '@', bar);
		bprintf(c, b, "%*d\n",
			(struct _stp_val[]){{HIST_WIDTH - bar + 1 + l.cnt_space, NULL},
					    {st->histogram[i], NULL}},
			2);
	}
	_stp_strbuf_put(b, "\n", 1);
}

/* An empty aggregate is an error; a stat without histogram prints nothing. */
static int hist_printable(struct _stp_context *c, const struct _stp_stat *st)
{
	if (!st || st->count == 0) {
		if (c)
			c->last_error = "empty aggregate";
		return 0;
	}
	return st->hist.kind != STP_HIST_NONE;
}

void _stp_stat_print_hist(struct _stp_context *c, const struct _stp_stat *st)
{
	if (!hist_printable(c, st))
		return;
	hist_table(c, &_stp_outbuf, st);
	_stp_print_n(c, "", 0); /* lets the transport write a large table early */
}

void _stp_stat_sprint_hist(struct _stp_context *c, const struct _stp_stat *st, char *dst)
{
	struct _stp_strbuf b = {0};

	dst[0] = '\0';
	if (!hist_printable(c, st))
		return;
	b.limit = (size_t)_stp_maxstringlen;
	hist_table(c, &b, st);
	if (b.buf)
		memcpy(dst, b.buf, b.len + 1);
	free(b.buf);
}
