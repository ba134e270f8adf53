/* Bounded string copies: every script string lives in a MAXSTRINGLEN
 * buffer, so copies truncate instead of overflowing. */
#include "stp_internal.h"

#include <string.h>

size_t _stp_strlcpy(char *dst, const char *src, size_t size)
{
	size_t len = strlen(src);

	if (size) {
		size_t n = len < size - 1 ? len : size - 1;
		memmove(dst, src, n);
		dst[n] = '\0';
	}
	return len;
}

size_t _stp_strlcat(char *dst, const char *src, size_t size)
{
	size_t dlen = strnlen(dst, size);

	if (dlen == size)
		return size + strlen(src);
	return dlen + _stp_strlcpy(dst + dlen, src, size - dlen);
}
