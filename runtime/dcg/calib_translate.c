/* The translate mechanism's cost per event, for the overhead-corrected
 * times (calib_ptrace.c does the ptrace mechanisms). What the traced
 * thread pays per event is its translated code writing a record into its
 * ring (runtime/xlate/block.c): an rdtsc and a 32-byte record stored at
 * the ring's write index, then the index committed. staprun runs that
 * work here, on a ring of the engine's default size (1 MiB, so cache
 * reach is as in a thread), in samples of a batch of call and return
 * records timed with rdtsc; the median sample over the batch is the cost
 * of one event. Not measured: the rest of the translated code (the
 * reservation's checks, a return's look-up), so it is a lower bound, as
 * for the ptrace mechanisms; nor the wait at a full ring's doorbell, paid
 * once per ring (32768 records) and set by staprun's speed, not per
 * event. */
#include "dcg_internal.h"
#include "xlate/layout.h"

#include <stdio.h>
#include <stdlib.h>
#include <x86intrin.h>

#define SAMPLES 201
#define BATCH 256
#define RING_BYTES (1u << 20)

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* One batch of records, as the translated code writes them: ticks. */
static uint64_t batch(struct xl_rec *ring, size_t n, volatile uint64_t *wp)
{
	uint64_t w = *wp;
	uint64_t t0 = __rdtsc();
	for (unsigned i = 0; i < BATCH; i++) {
		struct xl_rec *r = &ring[w % n];
		r->tsc = __rdtsc();
		r->from_kind = (uint64_t)(uintptr_t)r | (uint64_t)(1 + (i & 1)) << XL_KIND_SHIFT;
		r->to = w;
		r->sp = (uint64_t)(uintptr_t)&r;
		*wp = ++w; /* the commit */
	}
	return __rdtsc() - t0;
}

int64_t dcg_calibrate_translate(char *how, size_t len)
{
	size_t n = RING_BYTES / sizeof(struct xl_rec);
	struct xl_rec *ring = calloc(n, sizeof *ring); /* touched: no page faults in the samples */
	uint64_t s[SAMPLES];
	volatile uint64_t wp = 0;

	if (!ring) {
		snprintf(how, len,
			 "translate: the calibration failed (out of memory), nothing subtracted");
		return 0;
	}
	for (size_t i = 0; i < n; i += 64)
		ring[i].tsc = 1;
	/* the TSC's rate: the pairs (ns, tsc) around the samples */
	int64_t ns0 = dcg_now_ns();
	uint64_t tsc0 = __rdtsc();
	for (int i = 0; i < SAMPLES; i++)
		s[i] = batch(ring, n, &wp);
	int64_t ns1 = dcg_now_ns();
	uint64_t tsc1 = __rdtsc();
	free(ring);
	qsort(s, SAMPLES, sizeof *s, cmp_u64);
	if (ns1 <= ns0 || tsc1 <= tsc0) {
		snprintf(how, len,
			 "translate: the calibration failed (no clock), nothing subtracted");
		return 0;
	}
	double ns_per_tick = (double)(ns1 - ns0) / (double)(tsc1 - tsc0);
	snprintf(how, len, "translate: the median of %d batches of %d records written in staprun",
		 SAMPLES, BATCH);
	return (int64_t)((double)s[SAMPLES / 2] * ns_per_tick / BATCH + 0.5);
}
