/* timer.s/ms/us/ns(N), their long spellings, timer.hz(N) and
 * timer.jiffies(N), each optionally .randomize(R), with SystemTap's range
 * checks and messages. */
#include <string.h>

#include "probe_kinds.h"

/* A jiffy, as on the usual x86-64 distribution kernels (CONFIG_HZ=250). */
#define JIFFY_NS 4000000LL

struct timer_unit {
	const char *name;
	int64_t ns;	/* nanoseconds per unit; 0: hz, -1: jiffies */
	int64_t lo, hi; /* allowed interval in units */
};

static const struct timer_unit units[] = {
    {"s", 1000000000LL, 1, 86400LL},	   {"sec", 1000000000LL, 1, 86400LL},
    {"ms", 1000000LL, 1, 86400000LL},	   {"msec", 1000000LL, 1, 86400000LL},
    {"us", 1000LL, 100, 86400000000LL},	   {"usec", 1000LL, 100, 86400000000LL},
    {"ns", 1LL, 100000, 86400000000000LL}, {"nsec", 1LL, 100000, 86400000000000LL},
    {"hz", 0, 100000, 86400000000000LL},   {"jiffies", -1, 1, 1000000LL},
};

static const char *const timer_subnames[] = {"s",  "sec",  "ms", "msec",    "us", "usec",
					     "ns", "nsec", "hz", "jiffies", NULL};

static enum pp_result mismatch(struct pp_error *err, const struct probe_component *c)
{
	struct vec names = {0};
	for (int i = 0; timer_subnames[i]; i++)
		vec_push(&names, (void *)timer_subnames[i]);
	return pp_fail(err, c->tok, "probe point mismatch%s", elab_suggest(c->functor, &names));
}

enum pp_result probes_resolve_timer(const struct pp_at *at, struct derived_probe *dp,
				    struct pp_error *err)
{
	struct probe_point *pp = at->pp;
	struct probe_component *c0 = pp->components.v[0];
	if (c0->arg)
		return PP_NOMATCH;
	if (pp->components.n < 2)
		return pp_fail(err, c0->tok,
			       "probe point truncated (follow:  hz(number) "
			       "jiffies(number) ms(number) msec(number) "
			       "ns(number) nsec(number) s(number) sec(number) "
			       "us(number) usec(number))");
	struct probe_component *c1 = pp->components.v[1];
	if (!strcmp(c1->functor, "profile"))
		return pp_fail(err, c1->tok,
			       "probe point 'timer.profile' needs the kernel: this "
			       "implementation traces user space only");
	const struct timer_unit *u = NULL;
	for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
		if (!strcmp(units[i].name, c1->functor))
			u = &units[i];
	if (!u || !c1->arg || c1->arg->kind != E_NUMBER)
		return mismatch(err, c1);
	int64_t n = c1->arg->num, rnd = 0;
	if (pp->components.n > 2) {
		struct probe_component *c2 = pp->components.v[2];
		if (u->ns == 0 || strcmp(c2->functor, "randomize") || !c2->arg ||
		    c2->arg->kind != E_NUMBER || pp->components.n > 3) {
			struct probe_component *bad = c2;
			if (u->ns != 0 && !strcmp(c2->functor, "randomize") && c2->arg &&
			    pp->components.n > 3)
				bad = pp->components.v[3];
			return pp_fail(err, bad->tok, "invalid suffix for probe");
		}
		rnd = c2->arg->num;
	}
	int64_t interval;
	if (u->ns == 0) {
		if (n <= 0)
			return pp_fail(err, NULL, "frequency must be greater than 0");
		interval = 1000000000LL / n;
	} else if (u->ns < 0) {
		if (n <= 0 || n > u->hi)
			return pp_fail(err, NULL, "invalid interval for jiffies timer");
		interval = n;
	} else {
		interval = n;
	}
	if (u->ns >= 0 && (interval < u->lo || interval > u->hi))
		return pp_fail(err, NULL, "interval value out of range (%lld, %lld)",
			       (long long)u->lo, (long long)u->hi);
	if (rnd < 0 || rnd > n)
		return pp_fail(err, NULL, "randomization value out of range");
	int64_t scale = u->ns > 0 ? u->ns : u->ns < 0 ? JIFFY_NS : 1;
	dp->kind = PK_TIMER;
	dp->interval_ns = interval * scale;
	dp->randomize_ns = rnd * scale;
	return PP_OK;
}
