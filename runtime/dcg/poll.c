/* While a thread runs translated (a "late" mechanism: records, no stops),
 * staprun reads its ring now and then from its event loop. The consumer's
 * work then overlaps the thread's (on another CPU) instead of starting
 * only at the full ring's doorbell, while the thread waits in the stop.
 * STAP_DCG_POLL_US sets the period (0: never; default 50: measured on
 * bench-dcg, 10^6 calls, idle machine, median of 6 runs per setting: 75 ns
 * per call without, 64 at 200 us, 58 at 50 us). A read frees room in the
 * ring: a thread waiting for it at a full ring goes on (runtime/xlate/
 * ring.c), so that it stops at its doorbell only when no read came. */
#include "dcg_internal.h"
#include "dcg.h"
#include "mech.h"

#include <stdint.h>
#include <stdlib.h>

/* A read that finds no new event doubles the wait, up to MAX_WAIT_NS (a
 * thread on but blocked, sleeping or in a long system call costs staprun
 * little: 1 s asleep, 0.02 s of CPU, at 2 ms as at 10 ms); one that finds
 * some goes back to the period. At most 2 ms: a thread that fills its
 * ring meanwhile waits for the next read (runtime/xlate/ring.c). */
#define MAX_WAIT_NS 2000000
static int64_t period_ns = -1, wait_ns, due;

int64_t _stp_dcg_poll_period(void)
{
	if (period_ns < 0) {
		const char *e = getenv("STAP_DCG_POLL_US");
		period_ns = e && *e ? strtoll(e, NULL, 10) * 1000 : 50000;
		if (period_ns < 0)
			period_ns = 0;
	}
	return period_ns;
}

int64_t _stp_dcg_poll(int64_t now)
{
	int any = 0;

	if (!_stp_dcg_poll_period())
		return INT64_MAX;
	for (size_t i = 0; i < dcg_nthreads && !any; i++)
		any = dcg_threads[i]->on && dcg_threads[i]->mech->late;
	if (!any)
		return INT64_MAX;
	if (now >= due) {
		uint64_t seen = dcg_n_calls + dcg_n_rets;

		_stp_dcg_flush_all();
		if (dcg_n_calls + dcg_n_rets != seen || wait_ns < period_ns)
			wait_ns = period_ns;
		else if (wait_ns < MAX_WAIT_NS)
			wait_ns *= 2;
		due = now + wait_ns;
	}
	return due;
}
