/* printf/sprintf with SystemTap's conversions. SystemTap's runtime has
 * its own number formatter (kernel vsprintf heritage), which differs from
 * glibc in ways scripts can see, so this is written out rather than
 * passed to snprintf:
 *  - '#' always prefixes "0x"/"0" (so %#x of 0 is "0x0", %#o of 8 "010");
 *  - '0' pads with zeros even when a precision is given;
 *  - precision 0 still prints "0" for zero;
 *  - %p is %#x of a 64-bit value (since SystemTap 1.3);
 *  - width and precision are clamped to the buffer size, '*' takes an
 *    argument, a negative '*' width means '-', a negative precision is 0;
 *  - %b writes the value's bytes (native order), %m the bytes at an
 *    address, %M them in hex; '0' on %s/%m/%M appends a NUL byte. */
#include "stp_internal.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

enum {
	F_LEFT = 1,
	F_PLUS = 2,
	F_SPACE = 4,
	F_SPECIAL = 8,
	F_ZEROPAD = 16,
	F_SIGN = 32,
	F_LARGE = 64,
};

/* printf's bound on width and precision (sprintf's is MAXSTRINGLEN). */
#define STP_PRINT_CLAMP 8192

void _stp_strbuf_put(struct _stp_strbuf *b, const char *s, size_t n)
{
	if (b->limit) {
		size_t room = b->len + 1 < b->limit ? b->limit - 1 - b->len : 0;
		if (n > room)
			n = room;
	}
	if (n == 0)
		return;
	if (b->len + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 256;
		char *nb;
		while (cap < b->len + n + 1)
			cap *= 2;
		nb = realloc(b->buf, cap);
		if (!nb) {
			b->oom = 1;
			return;
		}
		b->buf = nb;
		b->cap = cap;
	}
	memcpy(b->buf + b->len, s, n);
	b->len += n;
	b->buf[b->len] = '\0';
}

static void put_rep(struct _stp_strbuf *b, char ch, int count)
{
	char chunk[64];

	memset(chunk, ch, sizeof chunk);
	while (count > 0) {
		int n = count < (int)sizeof chunk ? count : (int)sizeof chunk;
		_stp_strbuf_put(b, chunk, (size_t)n);
		count -= n;
	}
}

static void fmt_number(struct _stp_strbuf *b, uint64_t num, int base, int width, int precision,
		       int flags)
{
	const char *digits = (flags & F_LARGE) ? "0123456789ABCDEF" : "0123456789abcdef";
	char tmp[66];
	char sign = 0;
	int i = 0;

	if (flags & F_LEFT)
		flags &= ~F_ZEROPAD;
	if (flags & F_SIGN) {
		if ((int64_t)num < 0) {
			sign = '-';
			num = 0 - num;
			width--;
		} else if (flags & F_PLUS) {
			sign = '+';
			width--;
		} else if (flags & F_SPACE) {
			sign = ' ';
			width--;
		}
	}
	if (flags & F_SPECIAL)
		width -= base == 16 ? 2 : base == 8 ? 1 : 0;
	if (num == 0)
		tmp[i++] = '0';
	while (num) {
		tmp[i++] = digits[num % (unsigned)base];
		num /= (unsigned)base;
	}
	if (i > precision)
		precision = i;
	width -= precision;
	if (!(flags & (F_ZEROPAD | F_LEFT)))
		put_rep(b, ' ', width), width = 0;
	if (sign)
		_stp_strbuf_put(b, &sign, 1);
	if ((flags & F_SPECIAL) && base == 8)
		_stp_strbuf_put(b, "0", 1);
	if ((flags & F_SPECIAL) && base == 16)
		_stp_strbuf_put(b, (flags & F_LARGE) ? "0X" : "0x", 2);
	if (!(flags & F_LEFT))
		put_rep(b, (flags & F_ZEROPAD) ? '0' : ' ', width), width = 0;
	put_rep(b, '0', precision - i);
	while (i > 0)
		_stp_strbuf_put(b, &tmp[--i], 1);
	put_rep(b, ' ', width);
}

/* %c; with '#', non-printing characters as C escapes or octal. */
static void fmt_char(struct _stp_strbuf *b, unsigned char ch, int width, int flags)
{
	char out[4];
	int size = 1;
	const char *esc = strchr("\a\b\f\n\r\t\v'\\", ch);

	out[0] = (char)ch;
	if ((flags & F_SPECIAL) && ch &&
	    (!(isascii(ch) && isprint(ch)) || ch == '\'' || ch == '\\')) {
		out[0] = '\\';
		if (esc) {
			out[1] = "abfnrtv'\\"[esc - "\a\b\f\n\r\t\v'\\"];
			size = 2;
		} else {
			out[1] = (char)('0' + ((ch >> 6) & 3));
			out[2] = (char)('0' + ((ch >> 3) & 7));
			out[3] = (char)('0' + (ch & 7));
			size = 4;
		}
	} else if ((flags & F_SPECIAL) && ch == 0) {
		memcpy(out, "\\000", 4);
		size = 4;
	}
	if (!(flags & F_LEFT))
		put_rep(b, ' ', width - size);
	_stp_strbuf_put(b, out, (size_t)size);
	if (flags & F_LEFT)
		put_rep(b, ' ', width - size);
}

/* %s, %m and %M: text or memory, space padded. */
static void fmt_memory(struct _stp_context *c, struct _stp_strbuf *b, const char *s, uint64_t addr,
		       int width, int precision, char conv, int flags)
{
	size_t len;
	int shown;
	unsigned char *mem = NULL;

	if (conv == 's') {
		if (!s)
			s = "";
		len = precision < 0 ? strlen(s) : strnlen(s, (size_t)precision);
	} else {
		len = precision > 0 ? (size_t)precision : 1;
		mem = malloc(len);
		if (!mem || _stp_read_memory(c, addr, mem, len) < 0) {
			free(mem);
			return;
		}
		s = (const char *)mem;
	}
	shown = (int)(conv == 'M' ? len * 2 : len);
	if (!(flags & F_LEFT))
		put_rep(b, ' ', width - shown);
	if (conv == 'M') {
		for (size_t i = 0; i < len; i++) {
			char hex[2] = {"0123456789abcdef"[mem[i] >> 4],
				       "0123456789abcdef"[mem[i] & 15]};
			_stp_strbuf_put(b, hex, 2);
		}
	} else {
		_stp_strbuf_put(b, s, len);
	}
	if (flags & F_LEFT)
		put_rep(b, ' ', width - shown);
	if (flags & F_ZEROPAD)
		_stp_strbuf_put(b, "", 1);
	free(mem);
}

static int binary_precision(int p)
{
	return (p == 1 || p == 2 || p == 4 || p == 8) ? p : -1;
}

/* %b: the value's low `precision` bytes, NUL padded to width. Unset width
 * and precision default to each other, both to 8. */
static void fmt_binary(struct _stp_strbuf *b, int64_t num, int width, int precision, int flags)
{
	unsigned char bytes[8];

	precision = binary_precision(precision);
	if (width < 0) {
		if (precision < 0)
			precision = 8;
		width = precision;
	} else if (precision < 0) {
		precision = binary_precision(width);
		if (precision < 0)
			precision = 8;
	}
	if (!(flags & F_LEFT))
		put_rep(b, '\0', width - precision), width = precision;
	for (int i = 0; i < 8; i++)
		bytes[i] = (unsigned char)((uint64_t)num >> (8 * i)); /* x86-64: little endian */
	_stp_strbuf_put(b, (const char *)bytes, (size_t)precision);
	put_rep(b, '\0', width - precision);
}

static int clampi(int64_t v, int lo, int hi)
{
	return v < lo ? lo : v > hi ? hi : (int)v;
}

static int skip_atoi(const char **s)
{
	int64_t i = 0;

	while (isdigit((unsigned char)**s)) {
		if (i < 100000000)
			i = i * 10 + (*(*s)++ - '0');
		else
			(*s)++;
	}
	return (int)i;
}

void _stp_format_buf(struct _stp_context *c, struct _stp_strbuf *b, const char *fmt,
		     const struct _stp_val *args, int nargs)
{
	int argi = 0;
	int size = b->limit			  ? (int)b->limit
	    : _stp_maxstringlen > STP_PRINT_CLAMP ? (int)_stp_maxstringlen
						  : STP_PRINT_CLAMP;
#define NEXT_ARG() (argi < nargs ? &args[argi++] : &zero)
	static const struct _stp_val zero = {0, ""};

	for (; *fmt; ++fmt) {
		const char *lit = fmt;
		int flags = 0, width = -1, precision = -1, base = 10;
		const struct _stp_val *a;

		if (*fmt != '%') {
			while (fmt[1] && fmt[1] != '%')
				fmt++;
			_stp_strbuf_put(b, lit, (size_t)(fmt - lit + 1));
			continue;
		}
		for (;;) {
			switch (*++fmt) {
			case '-':
				flags |= F_LEFT;
				continue;
			case '+':
				flags |= F_PLUS;
				continue;
			case ' ':
				flags |= F_SPACE;
				continue;
			case '#':
				flags |= F_SPECIAL;
				continue;
			case '0':
				flags |= F_ZEROPAD;
				continue;
			}
			break;
		}
		if (isdigit((unsigned char)*fmt)) {
			width = clampi(skip_atoi(&fmt), 0, size);
		} else if (*fmt == '*') {
			int64_t w = NEXT_ARG()->n;
			++fmt;
			if (w < 0) {
				w = w == INT64_MIN ? INT64_MAX : -w;
				flags |= F_LEFT;
			}
			width = clampi(w, 0, size);
		}
		if (*fmt == '.') {
			++fmt;
			precision = -1;
			if (isdigit((unsigned char)*fmt))
				precision = skip_atoi(&fmt);
			else if (*fmt == '*') {
				++fmt;
				precision = clampi(NEXT_ARG()->n, -1, size);
			}
			precision = clampi(precision, 0, size);
		}
		while (*fmt == 'h' || *fmt == 'l' || *fmt == 'L' || *fmt == 'z' || *fmt == 'j')
			++fmt; /* every integer is 64-bit */

		switch (*fmt) {
		case 'b':
			fmt_binary(b, NEXT_ARG()->n, width, precision, flags);
			continue;
		case 's':
			a = NEXT_ARG();
			fmt_memory(c, b, a->s, 0, width, precision, 's', flags);
			continue;
		case 'm':
		case 'M':
			a = NEXT_ARG();
			fmt_memory(c, b, NULL, (uint64_t)a->n, width, precision, *fmt, flags);
			continue;
		case 'c':
			fmt_char(b, (unsigned char)NEXT_ARG()->n, width, flags);
			continue;
		case '%':
			_stp_strbuf_put(b, "%", 1);
			continue;
		case 'X':
			flags |= F_LARGE;
			base = 16;
			break;
		case 'x':
			base = 16;
			break;
		case 'p':
			flags |= F_SPECIAL;
			base = 16;
			break;
		case 'o':
			base = 8;
			break;
		case 'd':
		case 'i':
			flags |= F_SIGN;
			break;
		case 'u':
			break;
		default:
			_stp_strbuf_put(b, "%", 1);
			if (*fmt)
				_stp_strbuf_put(b, fmt, 1);
			else
				--fmt;
			continue;
		}
		fmt_number(b, (uint64_t)NEXT_ARG()->n, base, width, precision, flags);
	}
#undef NEXT_ARG
}

void _stp_format(struct _stp_context *c, char *dst, const char *fmt, const struct _stp_val *args,
		 int nargs)
{
	if (!dst) {
		_stp_format_buf(c, &_stp_outbuf, fmt, args, nargs);
		_stp_print_n(c, "", 0); /* lets the transport write a large buffer early */
		return;
	}
	/* Format aside, so dst may also be one of the arguments. */
	struct _stp_strbuf b = {0};
	b.limit = (size_t)_stp_maxstringlen;
	_stp_format_buf(c, &b, fmt, args, nargs);
	if (b.buf) {
		memcpy(dst, b.buf, b.len + 1);
	} else {
		dst[0] = '\0';
	}
	free(b.buf);
}
