/* timer.s/ms/us/ns/hz/jiffies probes: a binary min-heap on deadline (then
 * script order), fired by the run loop while the session runs. */
#include "lang/stp_internal.h"
#include "process.h"

#include <stdlib.h>
#include <time.h>

struct timer {
	int64_t deadline;
	const struct _stp_probe *probe;
	size_t seq; /* ties fire in script order */
};

static struct timer *heap;
static size_t ntimers;
static uint64_t rng;

static int timer_before(const struct timer *a, const struct timer *b)
{
	return a->deadline != b->deadline ? a->deadline < b->deadline : a->seq < b->seq;
}

static void heap_sift_down(struct timer *h, size_t n, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, min = i;
		struct timer t;

		if (l < n && timer_before(&h[l], &h[min]))
			min = l;
		if (r < n && timer_before(&h[r], &h[min]))
			min = r;
		if (min == i)
			return;
		t = h[i], h[i] = h[min], h[min] = t;
		i = min;
	}
}

static uint64_t next_random(void)
{
	/* xorshift64*: jitter needs no quality, just no libc state */
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return rng * 2685821657736338717ull;
}

/* One period of a timer: its interval, +- uniform jitter with .randomize. */
static int64_t period(const struct _stp_probe *p)
{
	int64_t ns = p->interval_ns > 0 ? p->interval_ns : 1000000;

	if (p->randomize_ns > 0) {
		uint64_t span = 2 * (uint64_t)p->randomize_ns + 1;
		ns += (int64_t)(next_random() % span) - p->randomize_ns;
	}
	return ns < 1000 ? 1000 : ns;
}

int _stp_timers_start(const struct _stp_module *m, int64_t now)
{
	rng = (uint64_t)now | 1;
	ntimers = 0;
	heap = calloc((size_t)m->nprobes + 1, sizeof *heap);
	if (!heap)
		return -1;
	for (int i = 0; i < m->nprobes; i++) {
		const struct _stp_probe *p = &m->probes[i];
		if (p->kind != STP_PROBE_TIMER)
			continue;
		heap[ntimers] = (struct timer){now + period(p), p, ntimers};
		ntimers++;
	}
	for (size_t i = ntimers / 2; i-- > 0;)
		heap_sift_down(heap, ntimers, i);
	return 0;
}

int64_t _stp_timers_run(int64_t now)
{
	while (ntimers && heap[0].deadline <= now && _stp_session_state == STP_SESSION_RUNNING &&
	       !_stp_exit_requested) {
		struct timer *t = &heap[0];
		int64_t next = t->deadline + period(t->probe);

		_stp_run_probe(t->probe, NULL);
		now = _stp_gettime_ns(CLOCK_MONOTONIC);
		/* A handler slower than its period skips missed ticks rather
		 * than firing in a burst. */
		t->deadline = next > now ? next : now + period(t->probe);
		heap_sift_down(heap, ntimers, 0);
	}
	return ntimers ? heap[0].deadline : INT64_MAX;
}

void _stp_timers_stop(void)
{
	free(heap);
	heap = NULL;
	ntimers = 0;
}
