/* C helpers for tapset functions that are too long for an embedded-C
 * block. Declared in the "tapset helpers" section of stap_runtime.h. */
#include "stap_runtime.h"

#include <string.h>

/* Decode one character at p (avail bytes readable). A well-formed UTF-8
 * sequence of 2-4 bytes gives its code point; anything else (ASCII,
 * malformed, overlong, surrogates, beyond U+10FFFF, cut short) gives the
 * single byte. Returns the number of bytes used. */
static int decode_char(const unsigned char *p, int64_t avail, unsigned *cp)
{
	unsigned b = p[0], v;
	int n, i;

	if ((b & 0xE0) == 0xC0 && avail >= 2)
		n = 2, v = b & 0x1F;
	else if ((b & 0xF0) == 0xE0 && avail >= 3)
		n = 3, v = b & 0x0F;
	else if ((b & 0xF8) == 0xF0 && avail >= 4)
		n = 4, v = b & 0x07;
	else
		goto single;
	for (i = 1; i < n; i++) {
		if ((p[i] & 0xC0) != 0x80)
			goto single;
		v = (v << 6) | (p[i] & 0x3F);
	}
	if ((v >= 0xD800 && v <= 0xDFFF) || v > 0x10FFFF || v < 0x80 || (n == 3 && v < 0x800) ||
	    (n == 4 && v < 0x10000))
		goto single;
	*cp = v;
	return n;
single:
	*cp = b;
	return 1;
}

/* The escaped form of one decoded character into piece; returns its
 * length (1 to 10). */
static int escape_char(unsigned c, int nbytes, char *piece)
{
	static const char hex[] = "0123456789ABCDEF";
	static const char shorts[] = "\aa\bb\ff\nn\rr\tt\vv\"\"\\\\";
	const char *s;
	int len, i;

	if (nbytes > 1) {
		len = c <= 0xFFFF ? 6 : 10;
		piece[0] = '\\';
		piece[1] = c <= 0xFFFF ? 'u' : 'U';
		for (i = len - 1; i >= 2; i--, c >>= 4)
			piece[i] = hex[c & 0xF];
		return len;
	}
	if (c >= 0x20 && c < 0x7F && c != '"' && c != '\\') {
		piece[0] = (char)c;
		return 1;
	}
	for (s = shorts; *s; s += 2) {
		if ((unsigned char)s[0] == c) {
			piece[0] = '\\';
			piece[1] = s[1];
			return 2;
		}
	}
	/* Three octal digits always, so a following digit cannot join in. */
	piece[0] = '\\';
	piece[1] = (char)('0' + ((c >> 6) & 3));
	piece[2] = (char)('0' + ((c >> 3) & 7));
	piece[3] = (char)('0' + (c & 7));
	return 4;
}

void _stp_text_str(char *dst, size_t dstsize, const char *in, int64_t outlen, int quoted)
{
	const unsigned char *p = (const unsigned char *)in;
	int64_t max = (int64_t)dstsize - 1;
	int64_t inlen = max, room;
	char *out = dst, *risky = NULL;
	int risky_len = 0, truncated = 0;

	if (outlen <= 0 || outlen > max)
		outlen = max;
	if (max < 5)
		quoted = 0; /* no room for quotes and "..." */
	room = outlen;
	if (quoted) {
		room = (outlen > 5 ? outlen : 5) - 2;
		*out++ = '"';
	}
	while (inlen > 0) {
		char piece[10];
		unsigned c;
		int n = decode_char(p, inlen, &c), k;

		if (c == 0)
			break;
		if (room <= 0) {
			truncated = 1;
			break;
		}
		p += n;
		inlen -= n;
		k = escape_char(c, n, piece);
		/* The first piece that may straddle the place where "..."
		 * goes: cut before it rather than through it. */
		if (!risky && room - 3 < k)
			risky = out, risky_len = k;
		if (room < k) {
			truncated = inlen > 0;
			break;
		}
		memcpy(out, piece, (size_t)k);
		out += k;
		room -= k;
	}
	if (quoted) {
		if (truncated) {
			char *cut = out - 3 + room;

			if (risky && risky < cut && cut < risky + risky_len)
				cut = risky;
			out = cut;
			memcpy(out, "\"...", 4);
			out += 4;
		} else {
			*out++ = '"';
		}
	}
	*out = '\0';
}
