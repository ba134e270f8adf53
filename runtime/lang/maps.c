/* Associative arrays: a chained hash over up to 32 long/string keys, with
 * entries also on a list in insertion order (unsorted foreach and
 * wrap-around use it: a full `%` array reuses its oldest entry, as
 * SystemTap does). Entries are reference counted so a foreach snapshot
 * stays valid when its body deletes from the array. */
#include "stp_internal.h"

#include <stdlib.h>
#include <string.h>

#define STP_MAX_KEYS 32 /* the translator's STAP_MAX_ARITY */

struct entry {
	struct entry *hnext;	   /* hash chain */
	struct entry *prev, *next; /* insertion order */
	int refs;		   /* the map's (while linked) + iterators' */
	int linked;
	uint64_t hash;
	union {
		int64_t n;
		char *s;
		struct _stp_stat *st;
	} v;
	struct _stp_val keys[];
};

struct _stp_map {
	int nkeys;
	enum _stp_type keytypes[STP_MAX_KEYS];
	enum _stp_type vtype;
	int64_t maxentries; /* <= 0: MAXMAPENTRIES at the time */
	int wrap;
	struct _stp_hist_spec hist;
	int variance_shift;
	struct entry **table;
	size_t nbuckets; /* a power of two */
	int64_t count;
	struct entry *head, *tail;
};

struct _stp_map_iter {
	struct _stp_map *m;
	struct entry **ents;
	size_t n, pos;
	int started;
	int column, direction;
	enum _stp_stat_op op;
};

static char *dup_str(const char *s)
{
	size_t max = (size_t)(_stp_maxstringlen > 1 ? _stp_maxstringlen : 2);
	size_t n = strnlen(s ? s : "", max - 1);
	char *d = malloc(n + 1);

	if (d) {
		memcpy(d, s ? s : "", n);
		d[n] = '\0';
	}
	return d;
}

static uint64_t hash_keys(const struct _stp_map *m, const struct _stp_val *keys)
{
	uint64_t h = 1469598103934665603ull;

	for (int i = 0; i < m->nkeys; i++) {
		if (m->keytypes[i] == STP_STRING) {
			for (const unsigned char *p =
				 (const unsigned char *)(keys[i].s ? keys[i].s : "");
			     *p; p++)
				h = (h ^ *p) * 1099511628211ull;
			h = (h ^ 0xff) * 1099511628211ull;
		} else {
			uint64_t v = (uint64_t)keys[i].n;
			for (int b = 0; b < 8; b++, v >>= 8)
				h = (h ^ (v & 0xff)) * 1099511628211ull;
		}
	}
	return h;
}

/* Compares keys the way they are stored: strings truncated to MAXSTRINGLEN. */
static int keys_equal(const struct _stp_map *m, const struct entry *e, const struct _stp_val *keys)
{
	size_t max = (size_t)(_stp_maxstringlen > 1 ? _stp_maxstringlen - 1 : 1);

	for (int i = 0; i < m->nkeys; i++) {
		if (m->keytypes[i] == STP_STRING) {
			if (strncmp(e->keys[i].s, keys[i].s ? keys[i].s : "", max) != 0)
				return 0;
		} else if (e->keys[i].n != keys[i].n) {
			return 0;
		}
	}
	return 1;
}

struct _stp_map *_stp_map_new(int nkeys, const enum _stp_type *keytypes, enum _stp_type vtype,
			      int64_t maxentries, int wrap, const struct _stp_hist_spec *hist)
{
	struct _stp_map *m;

	if (nkeys < 1 || nkeys > STP_MAX_KEYS)
		return NULL;
	m = calloc(1, sizeof *m);
	if (!m)
		return NULL;
	m->nkeys = nkeys;
	memcpy(m->keytypes, keytypes, (size_t)nkeys * sizeof *keytypes);
	m->vtype = vtype;
	m->maxentries = maxentries;
	m->wrap = wrap;
	if (hist)
		m->hist = *hist;
	m->nbuckets = 64;
	m->table = calloc(m->nbuckets, sizeof *m->table);
	if (!m->table) {
		free(m);
		return NULL;
	}
	return m;
}

static void entry_unref(const struct _stp_map *m, struct entry *e)
{
	if (--e->refs > 0)
		return;
	for (int i = 0; i < m->nkeys; i++)
		if (m->keytypes[i] == STP_STRING)
			free((char *)e->keys[i].s);
	if (m->vtype == STP_STRING)
		free(e->v.s);
	else if (m->vtype == STP_STATS)
		_stp_stat_free(e->v.st);
	free(e);
}

static void unlink_entry(struct _stp_map *m, struct entry *e)
{
	struct entry **pp = &m->table[e->hash & (m->nbuckets - 1)];

	while (*pp != e)
		pp = &(*pp)->hnext;
	*pp = e->hnext;
	if (e->prev)
		e->prev->next = e->next;
	else
		m->head = e->next;
	if (e->next)
		e->next->prev = e->prev;
	else
		m->tail = e->prev;
	e->linked = 0;
	m->count--;
	entry_unref(m, e);
}

void _stp_map_clear(struct _stp_map *m)
{
	if (!m)
		return;
	while (m->head)
		unlink_entry(m, m->head);
}

void _stp_map_set_variance_shift(struct _stp_map *m, int shift)
{
	if (m)
		m->variance_shift = shift;
}

void _stp_map_free(struct _stp_map *m)
{
	if (!m)
		return;
	_stp_map_clear(m);
	free(m->table);
	free(m);
}

int64_t _stp_map_size(const struct _stp_map *m)
{
	return m ? m->count : 0;
}

static struct entry *lookup(const struct _stp_map *m, const struct _stp_val *keys)
{
	uint64_t h;

	if (!m)
		return NULL;
	h = hash_keys(m, keys);
	for (struct entry *e = m->table[h & (m->nbuckets - 1)]; e; e = e->hnext)
		if (e->hash == h && keys_equal(m, e, keys))
			return e;
	return NULL;
}

static void grow(struct _stp_map *m)
{
	size_t nb = m->nbuckets * 2;
	struct entry **t = calloc(nb, sizeof *t);

	if (!t)
		return; /* longer chains, still correct */
	for (struct entry *e = m->head; e; e = e->next) {
		e->hnext = t[e->hash & (nb - 1)];
		t[e->hash & (nb - 1)] = e;
	}
	free(m->table);
	m->table = t;
	m->nbuckets = nb;
}

/* The entry for keys, created if absent; NULL (with the error set) when
 * the array is full and does not wrap, or memory ran out. */
static struct entry *lookup_or_add(struct _stp_context *c, struct _stp_map *m,
				   const struct _stp_val *keys)
{
	struct entry *e = lookup(m, keys);
	int64_t max = m->maxentries > 0 ? m->maxentries : _stp_maxmapentries;

	if (e)
		return e;
	if (m->count >= max) {
		if (!m->wrap || !m->head) {
			if (c)
				c->last_error = "Array overflow, check MAXMAPENTRIES";
			return NULL;
		}
		unlink_entry(m, m->head);
	}
	e = calloc(1, sizeof *e + (size_t)m->nkeys * sizeof(struct _stp_val));
	if (!e)
		goto oom;
	for (int i = 0; i < m->nkeys; i++) {
		if (m->keytypes[i] == STP_STRING) {
			e->keys[i].s = dup_str(keys[i].s);
			if (!e->keys[i].s)
				goto oom_entry;
		} else {
			e->keys[i].n = keys[i].n;
		}
	}
	if (m->vtype == STP_STATS) {
		if (!(e->v.st = _stp_stat_new(&m->hist)))
			goto oom_entry;
		_stp_stat_set_variance_shift(e->v.st, m->variance_shift);
	}
	e->hash = hash_keys(m, keys);
	e->refs = 1;
	e->linked = 1;
	if ((size_t)m->count + 1 > m->nbuckets)
		grow(m); /* before linking e: grow rehashes the list */
	e->prev = m->tail;
	if (m->tail)
		m->tail->next = e;
	else
		m->head = e;
	m->tail = e;
	e->hnext = m->table[e->hash & (m->nbuckets - 1)];
	m->table[e->hash & (m->nbuckets - 1)] = e;
	m->count++;
	return e;
oom_entry:
	e->refs = 1;
	entry_unref(m, e);
oom:
	if (c)
		_stp_error(c, "out of memory");
	return NULL;
}

int _stp_map_exists(const struct _stp_map *m, const struct _stp_val *keys)
{
	return lookup(m, keys) != NULL;
}

void _stp_map_delete(struct _stp_map *m, const struct _stp_val *keys)
{
	struct entry *e = lookup(m, keys);

	if (e)
		unlink_entry(m, e);
}

int64_t _stp_map_get_long(const struct _stp_map *m, const struct _stp_val *keys)
{
	struct entry *e = lookup(m, keys);

	return e && m->vtype == STP_LONG ? e->v.n : 0;
}

void _stp_map_get_str(const struct _stp_map *m, const struct _stp_val *keys, char *dst)
{
	struct entry *e = lookup(m, keys);

	_stp_strlcpy(dst, e && m->vtype == STP_STRING && e->v.s ? e->v.s : "",
		     (size_t)_stp_maxstringlen);
}

const struct _stp_stat *_stp_map_get_stat(const struct _stp_map *m, const struct _stp_val *keys)
{
	struct entry *e = lookup(m, keys);

	return e && m->vtype == STP_STATS ? e->v.st : NULL;
}

int _stp_map_set_long(struct _stp_context *c, struct _stp_map *m, const struct _stp_val *keys,
		      int64_t v)
{
	struct entry *e = m && m->vtype == STP_LONG ? lookup_or_add(c, m, keys) : NULL;

	if (!e)
		return -1;
	e->v.n = v;
	return 0;
}

int _stp_map_set_str(struct _stp_context *c, struct _stp_map *m, const struct _stp_val *keys,
		     const char *v)
{
	struct entry *e = m && m->vtype == STP_STRING ? lookup_or_add(c, m, keys) : NULL;
	char *s;

	if (!e)
		return -1;
	s = dup_str(v);
	if (!s) {
		_stp_error(c, "out of memory");
		return -1;
	}
	free(e->v.s);
	e->v.s = s;
	return 0;
}

int _stp_map_add_stat(struct _stp_context *c, struct _stp_map *m, const struct _stp_val *keys,
		      int64_t v)
{
	struct entry *e = m && m->vtype == STP_STATS ? lookup_or_add(c, m, keys) : NULL;

	if (!e)
		return -1;
	_stp_stat_add(e->v.st, v);
	return 0;
}

/* ---- foreach ---- */

static int cmp_keys(const struct _stp_map *m, int i, const struct entry *a, const struct entry *b)
{
	if (m->keytypes[i] == STP_STRING)
		return strcmp(a->keys[i].s, b->keys[i].s);
	return (a->keys[i].n > b->keys[i].n) - (a->keys[i].n < b->keys[i].n);
}

static int cmp_values(const struct _stp_map_iter *it, const struct entry *a, const struct entry *b)
{
	int64_t x, y;

	switch (it->m->vtype) {
	case STP_STRING:
		return strcmp(a->v.s ? a->v.s : "", b->v.s ? b->v.s : "");
	case STP_STATS:
		x = _stp_stat_get(NULL, a->v.st, it->op);
		y = _stp_stat_get(NULL, b->v.st, it->op);
		break;
	default:
		x = a->v.n;
		y = b->v.n;
	}
	return (x > y) - (x < y);
}

/* Stable merge sort: equal elements keep insertion order, as SystemTap's
 * list sort does. */
static void merge_sort(struct _stp_map_iter *it, struct entry **v, struct entry **tmp, size_t n)
{
	size_t mid = n / 2, i = 0, j = mid, k = 0;

	if (n < 2)
		return;
	merge_sort(it, v, tmp, mid);
	merge_sort(it, v + mid, tmp, n - mid);
	while (i < mid && j < n) {
		int r = it->column == 0 ? cmp_values(it, v[i], v[j])
					: cmp_keys(it->m, it->column - 1, v[i], v[j]);
		tmp[k++] = r * it->direction <= 0 ? v[i++] : v[j++];
	}
	while (i < mid)
		tmp[k++] = v[i++];
	while (j < n)
		tmp[k++] = v[j++];
	memcpy(v, tmp, n * sizeof *v);
}

static int slice_match(const struct _stp_map *m, const struct entry *e,
		       const struct _stp_val *slice, unsigned mask)
{
	for (int i = 0; i < m->nkeys; i++) {
		if (!(mask & (1u << i)))
			continue;
		if (m->keytypes[i] == STP_STRING
			? strcmp(e->keys[i].s, slice[i].s ? slice[i].s : "") != 0
			: e->keys[i].n != slice[i].n)
			return 0;
	}
	return 1;
}

struct _stp_map_iter *_stp_map_iter_start(struct _stp_map *m, int sort_column, int direction,
					  enum _stp_stat_op stat_op, int64_t limit,
					  const struct _stp_val *slice, unsigned slice_mask)
{
	struct _stp_map_iter *it = calloc(1, sizeof *it);
	size_t n = 0;

	if (!it)
		return NULL;
	it->m = m;
	it->column = sort_column;
	it->direction = direction < 0 ? -1 : 1;
	it->op = stat_op;
	if (!m || m->count == 0)
		return it;
	it->ents = malloc((size_t)m->count * sizeof *it->ents);
	if (!it->ents)
		return it;
	for (struct entry *e = m->head; e; e = e->next) {
		if (slice && !slice_match(m, e, slice, slice_mask))
			continue;
		e->refs++;
		it->ents[n++] = e;
	}
	it->n = n;
	if (sort_column >= 0 && sort_column <= m->nkeys && n > 1) {
		struct entry **tmp = malloc(n * sizeof *tmp);
		if (tmp) {
			merge_sort(it, it->ents, tmp, n);
			free(tmp);
		}
	}
	if (limit > 0 && (uint64_t)limit < it->n) {
		for (size_t i = (size_t)limit; i < it->n; i++)
			entry_unref(m, it->ents[i]);
		it->n = (size_t)limit;
	}
	return it;
}

int _stp_map_iter_next(struct _stp_map_iter *it)
{
	if (!it)
		return 0;
	if (it->started)
		it->pos++;
	it->started = 1;
	return it->pos < it->n;
}

static const struct entry *cur(const struct _stp_map_iter *it)
{
	return it->ents[it->pos];
}

int64_t _stp_map_iter_key_long(const struct _stp_map_iter *it, int i)
{
	return cur(it)->keys[i].n;
}

const char *_stp_map_iter_key_str(const struct _stp_map_iter *it, int i)
{
	return cur(it)->keys[i].s;
}

int64_t _stp_map_iter_val_long(const struct _stp_map_iter *it)
{
	return it->m->vtype == STP_LONG ? cur(it)->v.n : 0;
}

const char *_stp_map_iter_val_str(const struct _stp_map_iter *it)
{
	const char *s = it->m->vtype == STP_STRING ? cur(it)->v.s : NULL;
	return s ? s : "";
}

const struct _stp_stat *_stp_map_iter_val_stat(const struct _stp_map_iter *it)
{
	return it->m->vtype == STP_STATS ? cur(it)->v.st : NULL;
}

void _stp_map_iter_end(struct _stp_map_iter *it)
{
	if (!it)
		return;
	for (size_t i = 0; i < it->n; i++)
		entry_unref(it->m, it->ents[i]);
	free(it->ents);
	free(it);
}
