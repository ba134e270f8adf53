/* 64-bit arithmetic with SystemTap's run-time checks and edge cases:
 * x / -1 is -x and x % +-1 is 0 (no INT64_MIN trap), shift counts are
 * masked to 0..63, and signed overflow wraps (computed in unsigned). */
#include "stp_internal.h"

int64_t _stp_div64(struct _stp_context *c, int64_t a, int64_t b)
{
	if (b == 0) {
		if (c)
			c->last_error = "division by 0";
		return 0;
	}
	if (b == -1)
		return (int64_t)(0 - (uint64_t)a);
	return a / b;
}

int64_t _stp_mod64(struct _stp_context *c, int64_t a, int64_t b)
{
	if (b == 0) {
		if (c)
			c->last_error = "division by 0";
		return 0;
	}
	if (b == 1 || b == -1)
		return 0;
	return a % b;
}

int64_t _stp_shl64(int64_t a, int64_t b)
{
	return (int64_t)((uint64_t)a << (b & 63));
}

/* Arithmetic shift: gcc defines >> on negative values as sign-extending. */
int64_t _stp_shr64(int64_t a, int64_t b)
{
	return a >> (b & 63);
}

int64_t _stp_lshr64(int64_t a, int64_t b)
{
	return (int64_t)((uint64_t)a >> (b & 63));
}
