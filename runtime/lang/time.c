/* Clocks for the time tapset and the event loop. */
#include "stp_internal.h"

#include <time.h>

int64_t _stp_gettime_ns(int clock_id)
{
	struct timespec ts;

	if (clock_gettime((clockid_t)clock_id, &ts) != 0)
		return 0;
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}
