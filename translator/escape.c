/* Escaping by context; see escape.h for which function is for what. */
#include "escape.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct out {
	char *s;
	size_t len, cap;
};

static void put(struct out *o, const char *s, size_t n)
{
	if (o->len + n + 1 > o->cap) {
		o->cap = (o->len + n + 1) * 2;
		o->s = realloc(o->s, o->cap);
		if (!o->s)
			abort();
	}
	memcpy(o->s + o->len, s, n);
	o->len += n;
	o->s[o->len] = 0;
}

static void putc_(struct out *o, unsigned char c)
{
	char ch = (char)c;
	put(o, &ch, 1);
}

static void put_fmt(struct out *o, const char *fmt, unsigned c)
{
	char b[8];
	int n = snprintf(b, sizeof b, fmt, c);
	put(o, b, (size_t)n);
}

static char *take(struct out *o)
{
	if (!o->s)
		put(o, "", 0);
	return o->s;
}

static int plain_ascii(unsigned char c)
{
	return c >= 0x20 && c < 0x7f;
}

/* The C escape of a control byte, or NULL. */
static const char *c_escape(unsigned char c)
{
	switch (c) {
	case '\a':
		return "\\a";
	case '\b':
		return "\\b";
	case '\t':
		return "\\t";
	case '\n':
		return "\\n";
	case '\v':
		return "\\v";
	case '\f':
		return "\\f";
	case '\r':
		return "\\r";
	default:
		return NULL;
	}
}

const char *emit_cstr(const char *s)
{
	struct out o = {0};
	putc_(&o, '"');
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		const char *e = c_escape(*p);
		if (*p == '"' || *p == '\\')
			put_fmt(&o, "\\%c", *p);
		else if (e)
			put(&o, e, 2);
		else if (!plain_ascii(*p) || *p == '?')
			put_fmt(&o, "\\%03o", *p); /* always 3 digits: never joins the next */
		else
			putc_(&o, *p);
	}
	putc_(&o, '"');
	return take(&o);
}

const char *emit_comment(const char *s)
{
	struct out o = {0};
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == '\\')
			put(&o, "\\\\", 2);
		else if ((*p == '*' && p[1] == '/') || (*p == '/' && p[1] == '*') ||
			 (*p == '?' && p[1] == '?'))
			put_fmt(&o, "%c\\", *p);
		else if (!plain_ascii(*p))
			put_fmt(&o, "\\x%02x", *p);
		else
			putc_(&o, *p);
	}
	return take(&o);
}

static int ident_char(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	    c == '_';
}

const char *emit_ident(const char *prefix, const char *name)
{
	struct out o = {0};
	const unsigned char *p = (const unsigned char *)name;
	int plain = *p != 0;
	for (; *p; p++)
		plain &= ident_char(*p);
	put(&o, prefix, strlen(prefix));
	put(&o, plain ? "_" : "x_", plain ? 1 : 2);
	for (p = (const unsigned char *)name; *p; p++) {
		if (plain || (ident_char(*p) && *p != '_'))
			putc_(&o, *p);
		else if (*p == '_')
			put(&o, "__", 2);
		else
			put_fmt(&o, "_%02x", *p);
	}
	return take(&o);
}

char *esc_format_text(const char *s)
{
	struct out o = {0};
	for (const char *p = s; *p; p++)
		put(&o, *p == '%' ? "%%" : p, *p == '%' ? 2 : 1);
	return take(&o);
}

char *esc_visible(const char *s)
{
	struct out o = {0};
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		const char *e = c_escape(*p);
		if (e)
			put(&o, e, 2);
		else if (*p == '\\')
			put(&o, "\\\\", 2);
		else if (*p < 0x20 || *p == 0x7f)
			put_fmt(&o, "\\x%02x", *p);
		else
			putc_(&o, *p);
	}
	return take(&o);
}
