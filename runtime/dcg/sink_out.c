/* What the call graph's formats share: see sink_out.h. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "sink_out.h"
#include "lang/stp_internal.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the output ---- */

static FILE *out;
static char *out_name;
static int out_err; /* a write failed: errno */

int dcg_out_open(const char *path)
{
	FILE *f = NULL;

	if (strcmp(path, "-") && !(f = fopen(path, "w")))
		return -errno;
	char *name = strdup(strcmp(path, "-") ? path : "");
	if (!name) {
		if (f)
			fclose(f);
		return -ENOMEM;
	}
	dcg_out_close();
	if (f) /* large writes: a trace of millions of events */
		setvbuf(f, NULL, _IOFBF, 1 << 16);
	out = f;
	out_name = name;
	out_err = 0;
	return 0;
}

int dcg_out_is_file(void)
{
	return out != NULL;
}

const char *dcg_out_path(void)
{
	return out_name ? out_name : "";
}

struct dcg_outq dcg_outq;

/* The queue's size: about a batch of lines (4096 records). */
#define OUTQ_CAP ((size_t)1 << 17)

static void out_raw(const void *p, size_t n)
{
	if (!out) {
		_stp_print_unit(p, n);
		return;
	}
	if (!out_err && fwrite(p, 1, n, out) != n)
		out_err = errno ? errno : EIO;
}

void dcg_out_flush(void)
{
	size_t n = dcg_outq.n;

	dcg_outq.n = 0;
	if (n)
		out_raw(dcg_outq.p, n);
}

char *dcg_out_room_slow(size_t n)
{
	dcg_out_flush();
	if (n > dcg_outq.cap) {
		size_t cap = n > OUTQ_CAP ? n : OUTQ_CAP;
		char *v = realloc(dcg_outq.p, cap);
		if (!v)
			return NULL;
		dcg_outq.p = v;
		dcg_outq.cap = cap;
	}
	return dcg_outq.p;
}

void dcg_out_write(const void *p, size_t n)
{
	if (!n)
		return;
	dcg_out_flush(); /* in order with the lines queued */
	out_raw(p, n);
}

void dcg_out_puts(const char *s)
{
	dcg_out_write(s, strlen(s));
}

void dcg_out_printf(const char *fmt, ...)
{
	char small[256];
	va_list ap;

	va_start(ap, fmt);
	int n = vsnprintf(small, sizeof small, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n < sizeof small) {
		dcg_out_write(small, (size_t)n);
		return;
	}
	char *big = malloc((size_t)n + 1);
	if (!big)
		return;
	va_start(ap, fmt);
	vsnprintf(big, (size_t)n + 1, fmt, ap);
	va_end(ap);
	dcg_out_write(big, (size_t)n);
	free(big);
}

void dcg_out_buf(struct dcg_buf *b)
{
	if (!b->oom)
		dcg_out_write(b->p, b->n);
	b->n = 0;
	b->oom = 0;
}

int dcg_out_close(void)
{
	int rc = 0;

	dcg_out_flush();
	free(dcg_outq.p);
	dcg_outq = (struct dcg_outq){0};
	if (out) {
		if (fclose(out) != 0 && !out_err)
			out_err = errno ? errno : EIO;
		if (out_err) {
			_stp_msg_error("dynamic call graph: cannot write '%s': %s", out_name,
				       strerror(out_err));
			rc = -1;
		}
	}
	out = NULL;
	free(out_name);
	out_name = NULL;
	out_err = 0;
	return rc;
}

/* ---- a growable byte buffer ---- */

static int buf_fit(struct dcg_buf *b, size_t more)
{
	size_t need = b->n + more + 1, cap = b->cap ? b->cap : 128;

	if (b->oom)
		return -1;
	if (need <= b->cap)
		return 0;
	while (cap < need)
		cap *= 2;
	char *v = realloc(b->p, cap);
	if (!v) {
		b->oom = 1;
		return -1;
	}
	b->p = v;
	b->cap = cap;
	return 0;
}

int dcg_grow(void *pp, size_t n, size_t *cap, size_t size)
{
	void *p, *v;

	if (n < *cap)
		return 0;
	size_t c = *cap ? 2 * *cap : 16;
	memcpy(&p, pp, sizeof p);
	if (!(v = realloc(p, c * size)))
		return -1;
	memcpy(pp, &v, sizeof v);
	*cap = c;
	return 0;
}

void dcg_buf_put(struct dcg_buf *b, const void *p, size_t n)
{
	if (buf_fit(b, n) < 0)
		return;
	memcpy(b->p + b->n, p, n);
	b->n += n;
	b->p[b->n] = '\0';
}

void dcg_buf_puts(struct dcg_buf *b, const char *s)
{
	dcg_buf_put(b, s, strlen(s));
}

void dcg_buf_printf(struct dcg_buf *b, const char *fmt, ...)
{
	va_list ap;
	size_t room = b->cap > b->n ? b->cap - b->n : 0;

	if (b->oom)
		return;
	/* once into the room there is, again only if it did not fit */
	va_start(ap, fmt);
	int n = vsnprintf(room ? b->p + b->n : NULL, room, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n >= room) {
		if (buf_fit(b, (size_t)n) < 0)
			return;
		va_start(ap, fmt);
		vsnprintf(b->p + b->n, (size_t)n + 1, fmt, ap);
		va_end(ap);
	}
	b->n += (size_t)n;
}

char *dcg_put_u64(char *end, uint64_t v)
{
	do
		*--end = (char)('0' + v % 10);
	while (v /= 10);
	return end;
}

void dcg_buf_u64(struct dcg_buf *b, uint64_t v)
{
	char d[20], *p = dcg_put_u64(d + sizeof d, v);

	dcg_buf_put(b, p, (size_t)(d + sizeof d - p));
}

const char *dcg_buf_str(struct dcg_buf *b)
{
	return b->p && b->n ? b->p : "";
}

void dcg_buf_free(struct dcg_buf *b)
{
	free(b->p);
	memset(b, 0, sizeof *b);
}

void dcg_buf_us(struct dcg_buf *b, uint64_t ns)
{
	char frac[4] = {'.', (char)('0' + ns % 1000 / 100), (char)('0' + ns % 100 / 10),
			(char)('0' + ns % 10)};

	dcg_buf_u64(b, ns / 1000);
	dcg_buf_put(b, frac, sizeof frac);
}

/* ---- names ---- */

const char *dcg_display_name(struct dcg_buf *b, const struct dcg_sink_rec *r)
{
	b->n = 0;
	b->oom = 0;
	dcg_buf_puts(b, r->name);
	int sig = r->kind == DCG_REC_CALL ? r->sig : r->call_sig;
	if (sig) {
		const char *abbrev = sigabbrev_np(sig);
		dcg_buf_printf(b, " (signal SIG%s)", abbrev ? abbrev : "?");
	}
	return dcg_buf_str(b);
}

/* The length of the valid UTF-8 sequence at s (1 to 4), or 0 if there is
 * none (a stray byte, an overlong form, a surrogate, past U+10FFFF). */
static size_t utf8_len(const unsigned char *s)
{
	unsigned c = s[0];
	size_t n;
	uint32_t v;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		n = 2, v = c & 0x1f;
	else if (c >= 0xe0 && c <= 0xef)
		n = 3, v = c & 0x0f;
	else if (c >= 0xf0 && c <= 0xf4)
		n = 4, v = c & 0x07;
	else
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		v = v << 6 | (s[i] & 0x3f);
	}
	if ((n == 3 && (v < 0x800 || (v >= 0xd800 && v <= 0xdfff))) ||
	    (n == 4 && (v < 0x10000 || v > 0x10ffff)))
		return 0;
	return n;
}

/* The bytes each format copies as they are (printable ASCII but its
 * specials); the others go through its esc(), but for valid UTF-8. */
struct plain {
	unsigned char ok[256];
	int made;
};

static const unsigned char *plain_of(struct plain *t, const char *specials)
{
	if (!t->made) {
		for (int c = 0x20; c < 0x7f; c++)
			t->ok[c] = !strchr(specials, c);
		t->made = 1;
	}
	return t->ok;
}

static void esc_with(struct dcg_buf *b, const char *s, const unsigned char *plain,
		     void (*esc)(struct dcg_buf *b, unsigned c))
{
	const unsigned char *p = (const unsigned char *)s;

	while (*p) {
		size_t run = 0;
		while (plain[p[run]])
			run++;
		if (run) {
			dcg_buf_put(b, p, run);
			p += run;
			continue;
		}
		size_t n = utf8_len(p);
		if (n > 1) {
			dcg_buf_put(b, p, n);
			p += n;
		} else {
			esc(b, *p++);
		}
	}
}

static struct plain json_plain, folded_plain, text_plain;

static void json_esc1(struct dcg_buf *b, unsigned c)
{
	switch (c) {
	case '"':
	case '\\':
		dcg_buf_printf(b, "\\%c", c);
		break;
	case '\b':
		dcg_buf_puts(b, "\\b");
		break;
	case '\f':
		dcg_buf_puts(b, "\\f");
		break;
	case '\n':
		dcg_buf_puts(b, "\\n");
		break;
	case '\r':
		dcg_buf_puts(b, "\\r");
		break;
	case '\t':
		dcg_buf_puts(b, "\\t");
		break;
	default: /* a control byte, or a byte of no valid UTF-8 (as U+00XX) */
		dcg_buf_printf(b, "\\u%04x", c);
	}
}

void dcg_esc_json(struct dcg_buf *b, const char *s)
{
	esc_with(b, s, plain_of(&json_plain, "\"\\"), json_esc1);
}

static void dot_esc1(struct dcg_buf *b, unsigned c)
{
	if (c == '"' || c == '\\')
		dcg_buf_printf(b, "\\%c", c);
	else /* the visible text \xNN: DOT has no byte escapes */
		dcg_buf_printf(b, "\\\\x%02x", c);
}

void dcg_esc_dot(struct dcg_buf *b, const char *s)
{
	esc_with(b, s, plain_of(&json_plain, "\"\\"), dot_esc1);
}

static void folded_esc1(struct dcg_buf *b, unsigned c)
{
	dcg_buf_printf(b, "\\x%02x", c);
}

void dcg_esc_folded(struct dcg_buf *b, const char *s)
{
	esc_with(b, s, plain_of(&folded_plain, ";\\"), folded_esc1);
}

static void text_esc1(struct dcg_buf *b, unsigned c)
{
	if (c == '\\')
		dcg_buf_puts(b, "\\\\");
	else
		dcg_buf_printf(b, "\\x%02x", c);
}

void dcg_esc_text(struct dcg_buf *b, const char *s)
{
	esc_with(b, s, plain_of(&text_plain, "\\"), text_esc1);
}

/* ---- names kept once each ---- */

static size_t str_hash(const char *s)
{
	size_t h = 1469598103934665603u;
	while (*s)
		h = (h ^ (unsigned char)*s++) * 1099511628211u;
	return h;
}

static int strtab_grow(struct dcg_strtab *t)
{
	if (dcg_grow(&t->s, t->n, &t->caps, sizeof *t->s) < 0)
		return -1;
	if (2 * (t->n + 1) <= t->caph)
		return 0;
	size_t cap = t->caph ? 2 * t->caph : 256;
	uint32_t *h = calloc(cap, sizeof *h);
	if (!h)
		return -1;
	for (size_t i = 0; i < t->n; i++) {
		size_t j = str_hash(t->s[i]) & (cap - 1);
		while (h[j])
			j = (j + 1) & (cap - 1);
		h[j] = (uint32_t)i + 1;
	}
	free(t->h);
	t->h = h;
	t->caph = cap;
	return 0;
}

uint32_t dcg_strtab_id(struct dcg_strtab *t, const char *s)
{
	if (strtab_grow(t) < 0)
		return (uint32_t)-1;
	size_t j = str_hash(s) & (t->caph - 1);
	while (t->h[j] && strcmp(t->s[t->h[j] - 1], s))
		j = (j + 1) & (t->caph - 1);
	if (t->h[j])
		return t->h[j] - 1;
	if (!(t->s[t->n] = strdup(s)))
		return (uint32_t)-1;
	t->h[j] = (uint32_t)t->n + 1;
	return (uint32_t)t->n++;
}

const char *dcg_strtab_str(const struct dcg_strtab *t, uint32_t id)
{
	return id < t->n ? t->s[id] : "?";
}

void dcg_strtab_free(struct dcg_strtab *t)
{
	for (size_t i = 0; i < t->n; i++)
		free(t->s[i]);
	free(t->s);
	free(t->h);
	memset(t, 0, sizeof *t);
}

/* ---- per-thread state ---- */

void *dcg_tmap_get(struct dcg_tmap *m, pid_t pid, pid_t tid, int create)
{
	/* few threads, looked up once per batch: a list is enough */
	for (size_t i = 0; i < m->n; i++)
		if (m->e[i].tid == tid && m->e[i].pid == pid)
			return m->e[i].v;
	if (!create)
		return NULL;
	if (dcg_grow(&m->e, m->n, &m->cap, sizeof *m->e) < 0)
		return NULL;
	void *v = calloc(1, m->size);
	if (!v)
		return NULL;
	m->e[m->n].pid = pid;
	m->e[m->n].tid = tid;
	m->e[m->n].v = v;
	m->n++;
	return v;
}

void dcg_tmap_del(struct dcg_tmap *m, pid_t pid, pid_t tid, void (*free_fn)(void *))
{
	for (size_t i = 0; i < m->n; i++)
		if (m->e[i].tid == tid && m->e[i].pid == pid) {
			if (free_fn)
				free_fn(m->e[i].v);
			free(m->e[i].v);
			m->e[i] = m->e[--m->n];
			return;
		}
}

void dcg_tmap_free(struct dcg_tmap *m, void (*free_fn)(void *))
{
	for (size_t i = 0; i < m->n; i++) {
		if (free_fn)
			free_fn(m->e[i].v);
		free(m->e[i].v);
	}
	free(m->e);
	m->e = NULL;
	m->n = m->cap = 0;
}
