/* A small open-addressing map of 64-bit keys to 64-bit values. */
#include "xlate/xl_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define DEAD UINT64_MAX

static size_t slot(uint64_t k, size_t cap)
{
	return (size_t)((k * 0x9E3779B97F4A7C15ull) >> 20) & (cap - 1);
}

static int grow(struct xl_map *m)
{
	size_t cap = m->cap ? 2 * m->cap : 64;
	struct xl_map n = {calloc(cap, 8), calloc(cap, 8), cap, 0, 0};

	if (!n.k || !n.v) {
		free(n.k);
		free(n.v);
		return -ENOMEM;
	}
	for (size_t i = 0; i < m->cap; i++)
		if (m->k[i] && m->k[i] != DEAD)
			xl_map_put(&n, m->k[i], m->v[i]);
	free(m->k);
	free(m->v);
	*m = n;
	return 0;
}

int xl_map_put(struct xl_map *m, uint64_t k, uint64_t v)
{
	if ((m->n + m->dead + 1) * 2 > m->cap && grow(m) < 0)
		return -ENOMEM;
	size_t i = slot(k, m->cap), tomb = SIZE_MAX;
	while (m->k[i]) {
		if (m->k[i] == k) {
			m->v[i] = v;
			return 0;
		}
		if (m->k[i] == DEAD && tomb == SIZE_MAX)
			tomb = i;
		i = (i + 1) & (m->cap - 1);
	}
	if (tomb != SIZE_MAX) {
		i = tomb;
		m->dead--;
	}
	m->k[i] = k;
	m->v[i] = v;
	m->n++;
	return 0;
}

static size_t find(const struct xl_map *m, uint64_t k)
{
	if (!m->cap)
		return SIZE_MAX;
	for (size_t i = slot(k, m->cap); m->k[i]; i = (i + 1) & (m->cap - 1))
		if (m->k[i] == k)
			return i;
	return SIZE_MAX;
}

uint64_t xl_map_get(const struct xl_map *m, uint64_t k)
{
	size_t i = find(m, k);

	return i == SIZE_MAX ? 0 : m->v[i];
}

void xl_map_del(struct xl_map *m, uint64_t k)
{
	size_t i = find(m, k);

	if (i == SIZE_MAX)
		return;
	m->k[i] = DEAD;
	m->n--;
	m->dead++;
}

void xl_map_clear(struct xl_map *m)
{
	if (m->cap) {
		memset(m->k, 0, m->cap * 8);
		memset(m->v, 0, m->cap * 8);
	}
	m->n = m->dead = 0;
}

void xl_map_free(struct xl_map *m)
{
	free(m->k);
	free(m->v);
	memset(m, 0, sizeof *m);
}
