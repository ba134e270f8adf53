#include "util.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int msg_verbose;
int msg_suppress_warnings;
unsigned msg_debug_mask;
int msg_debug_level[DBG_NDOMAINS];

static const char *const domain_names[DBG_NDOMAINS] = {
    "lexer",  "parse", "elaborate", "translate", "compile",   "cache",
    "ptrace", "bkpt",  "dcg",	    "sym",	 "transport",
};

const char *debug_domain_name(enum debug_domain d)
{
	return domain_names[d];
}

static void oom(void)
{
	fputs("ERROR: out of memory\n", stderr);
	exit(1);
}

void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p)
		oom();
	return p;
}

void *xcalloc(size_t n, size_t sz)
{
	void *p = calloc(n ? n : 1, sz ? sz : 1);
	if (!p)
		oom();
	return p;
}

void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (!p)
		oom();
	return p;
}

char *xstrdup(const char *s)
{
	return xstrndup(s, strlen(s));
}

char *xstrndup(const char *s, size_t n)
{
	char *p = xmalloc(n + 1);
	memcpy(p, s, n);
	p[n] = 0;
	return p;
}

char *xvasprintf(const char *fmt, va_list ap)
{
	char *s;
	if (vasprintf(&s, fmt, ap) < 0)
		oom();
	return s;
}

char *xasprintf(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *s = xvasprintf(fmt, ap);
	va_end(ap);
	return s;
}

void vec_push(struct vec *v, void *p)
{
	if (v->n == v->cap) {
		v->cap = v->cap ? v->cap * 2 : 8;
		v->v = xrealloc(v->v, v->cap * sizeof(void *));
	}
	v->v[v->n++] = p;
}

void *vec_pop(struct vec *v)
{
	return v->n ? v->v[--v->n] : NULL;
}

static void sb_grow(struct strbuf *b, size_t extra)
{
	if (b->len + extra + 1 <= b->cap)
		return;
	size_t cap = b->cap ? b->cap : 64;
	while (cap < b->len + extra + 1)
		cap *= 2;
	b->s = xrealloc(b->s, cap);
	b->cap = cap;
}

void sb_putn(struct strbuf *b, const char *s, size_t n)
{
	sb_grow(b, n);
	memcpy(b->s + b->len, s, n);
	b->len += n;
	b->s[b->len] = 0;
}

void sb_putc(struct strbuf *b, char c)
{
	sb_putn(b, &c, 1);
}

void sb_puts(struct strbuf *b, const char *s)
{
	sb_putn(b, s, strlen(s));
}

void sb_vprintf(struct strbuf *b, const char *fmt, va_list ap)
{
	va_list aq;
	va_copy(aq, ap);
	int n = vsnprintf(NULL, 0, fmt, aq);
	va_end(aq);
	if (n < 0)
		return;
	sb_grow(b, (size_t)n);
	vsnprintf(b->s + b->len, (size_t)n + 1, fmt, ap);
	b->len += (size_t)n;
}

void sb_printf(struct strbuf *b, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	sb_vprintf(b, fmt, ap);
	va_end(ap);
}

const char *sb_str(struct strbuf *b)
{
	return b->s ? b->s : "";
}

char *sb_take(struct strbuf *b)
{
	char *s = b->s ? b->s : xstrdup("");
	b->s = NULL;
	b->len = b->cap = 0;
	return s;
}

char *read_file(const char *path, size_t *lenp)
{
	FILE *f = strcmp(path, "-") ? fopen(path, "rb") : stdin;
	if (!f)
		return NULL;
	struct strbuf b = {0};
	char buf[65536];
	size_t n;
	while ((n = fread(buf, 1, sizeof buf, f)) > 0)
		sb_putn(&b, buf, n);
	int err = ferror(f);
	if (f != stdin)
		fclose(f);
	if (err) {
		free(b.s);
		errno = EIO;
		return NULL;
	}
	if (lenp)
		*lenp = b.len;
	return sb_take(&b);
}

void fatal(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("ERROR: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	exit(1);
}

void warn(const char *fmt, ...)
{
	if (msg_suppress_warnings)
		return;
	va_list ap;
	va_start(ap, fmt);
	fputs("WARNING: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

void debug(enum debug_domain d, const char *fmt, ...)
{
	if (!(msg_debug_mask & (1u << d)))
		return;
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "[%s] ", domain_names[d]);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

int debug_enable(const char *list)
{
	char *copy = xstrdup(list), *save = NULL;
	int rc = 0;
	for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		char *colon = strchr(t, ':');
		int found = 0, level = 1;
		if (colon) {
			if (colon[1] < '1' || colon[1] > '9' || colon[2]) {
				rc = -1;
				continue;
			}
			level = colon[1] - '0';
			*colon = '\0';
		}
		for (int i = 0; i < DBG_NDOMAINS; i++)
			if (!strcmp(t, domain_names[i]) || !strcmp(t, "all")) {
				msg_debug_mask |= 1u << i;
				if (msg_debug_level[i] < level)
					msg_debug_level[i] = level;
				found = 1;
			}
		if (!found)
			rc = -1;
	}
	free(copy);
	return rc;
}

/* SystemTap's Levenshtein score: an insertion, a deletion or a
 * substitution costs 2, a substitution of a letter by itself in the other
 * case 1; the leading characters of one string, before any of the other's,
 * cost 1 each (its table's borders). Its lists of suggestions are ordered
 * by this score. */
int stap_edit_distance(const char *a, const char *b)
{
	int la = strlen(a), lb = strlen(b);
	int *row = xcalloc(lb + 1, sizeof *row);
	for (int j = 0; j <= lb; j++)
		row[j] = j;
	for (int i = 1; i <= la; i++) {
		int diag = row[0];
		row[0] = i;
		for (int j = 1; j <= lb; j++) {
			int up = row[j], best;
			if (a[i - 1] == b[j - 1])
				best = diag;
			else {
				int same = tolower((unsigned char)a[i - 1]) ==
				    tolower((unsigned char)b[j - 1]);
				best = diag + (same ? 1 : 2);
				if (up + 2 < best)
					best = up + 2;
				if (row[j - 1] + 2 < best)
					best = row[j - 1] + 2;
			}
			row[j] = best;
			diag = up;
		}
	}
	int d = row[lb];
	free(row);
	return d;
}
