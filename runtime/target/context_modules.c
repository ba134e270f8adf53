/* Where another module than the probe's is loaded in the target process
 * (@var("x", "MODULE")): its load bias, found by path in the process's
 * mappings through the symbol cache (sym/), and kept per process and
 * module while the cache's generation stays the same (it changes when a
 * mapping does: dlopen, dlclose, exec, exit). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "lang/stp_internal.h"
#include "context_internal.h"
#include "sym/symbols.h"

#include <stdlib.h>
#include <string.h>

static struct _stp_ctx_modfacts biases;

struct _stp_ctx_modfact *_stp_ctx_modfact(struct _stp_ctx_modfacts *t, pid_t pid, const char *path)
{
	struct _stp_ctx_modfact *v;

	for (size_t i = 0; i < t->n; i++)
		if (t->v[i].pid == pid && !strcmp(t->v[i].path, path))
			return &t->v[i];
	if (!(v = realloc(t->v, (t->n + 1) * sizeof *v)))
		return NULL;
	t->v = v;
	v = &t->v[t->n];
	memset(v, 0, sizeof *v);
	if (!(v->path = strdup(path)))
		return NULL;
	v->pid = pid;
	v->gen = _stp_sym_generation() - 1; /* not looked up yet */
	t->n++;
	return v;
}

int _stp_ctx_modfact_fresh(const struct _stp_ctx_modfact *f)
{
	return f->gen == _stp_sym_generation();
}

void _stp_ctx_modfact_set(struct _stp_ctx_modfact *f, int found, uint64_t value)
{
	f->found = found;
	f->value = value;
	f->gen = _stp_sym_generation();
}

void _stp_ctx_modfacts_free(struct _stp_ctx_modfacts *t)
{
	for (size_t i = 0; i < t->n; i++)
		free(t->v[i].path);
	free(t->v);
	t->v = NULL;
	t->n = 0;
}

int _stp_ctx_module_bias(struct _stp_context *c, const char *path, uint64_t *bias)
{
	pid_t pid = (pid_t)_stp_ctx_pid(c);
	struct _stp_symtab *st;
	struct _stp_ctx_modfact *b;
	uint64_t v = 0;

	*bias = 0;
	if (!_stp_ctx_has_target(c)) {
		_stp_error(c, "module %s: no process in this probe", path);
		return -1;
	}
	if (!(b = _stp_ctx_modfact(&biases, pid, path)) || !(st = _stp_sym_of(pid))) {
		_stp_error(c, "out of memory");
		return -1;
	}
	if (!_stp_ctx_modfact_fresh(b)) {
		int found = _stp_sym_module_bias(st, path, &v) == 0;
		_stp_ctx_modfact_set(b, found, v);
	}
	if (!b->found) {
		_stp_error(c, "module %s is not mapped in process %d", path, (int)pid);
		return -1;
	}
	*bias = b->value;
	return 0;
}

void _stp_ctx_modules_free(void)
{
	_stp_ctx_modfacts_free(&biases);
}
