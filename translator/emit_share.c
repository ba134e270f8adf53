/* Probe handlers with the same generated code share one C function: a
 * wildcard (function("*"), process.plt) makes hundreds of derived probes
 * whose bodies differ only in their numbers, and compiling each copy is
 * most of pass 4. A handler reads its probe point from the context
 * (c->probe), never from its own code, so sharing changes nothing the
 * script can see. */
#include "emit.h"

#include <stdlib.h>
#include <string.h>

struct shared_handler {
	uint64_t hash;
	char *key;
	int idx;
};

static uint64_t fnv1a(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
	return h;
}

int emit_share_find(struct emit_share *sh, const char *key)
{
	uint64_t h = fnv1a(key);

	for (size_t i = 0; i < sh->n; i++)
		if (sh->v[i].hash == h && !strcmp(sh->v[i].key, key))
			return sh->v[i].idx;
	return -1;
}

void emit_share_add(struct emit_share *sh, const char *key, int idx)
{
	if (sh->n == sh->cap) {
		sh->cap = sh->cap ? 2 * sh->cap : 64;
		sh->v = realloc(sh->v, sh->cap * sizeof *sh->v);
		if (!sh->v)
			abort();
	}
	sh->v[sh->n].hash = fnv1a(key);
	sh->v[sh->n].key = strdup(key);
	if (!sh->v[sh->n].key)
		abort();
	sh->v[sh->n++].idx = idx;
}

void emit_share_free(struct emit_share *sh)
{
	for (size_t i = 0; i < sh->n; i++)
		free(sh->v[i].key);
	free(sh->v);
	memset(sh, 0, sizeof *sh);
}
