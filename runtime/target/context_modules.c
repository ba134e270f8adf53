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

struct modbias {
	pid_t pid;
	char *path;
	uint64_t gen; /* _stp_sym_generation() when found */
	int found;
	uint64_t bias;
};

static struct modbias *biases;
static size_t nbiases;

static struct modbias *bias_slot(pid_t pid, const char *path)
{
	struct modbias *v;

	for (size_t i = 0; i < nbiases; i++)
		if (biases[i].pid == pid && !strcmp(biases[i].path, path))
			return &biases[i];
	if (!(v = realloc(biases, (nbiases + 1) * sizeof *v)))
		return NULL;
	biases = v;
	v = &biases[nbiases];
	memset(v, 0, sizeof *v);
	if (!(v->path = strdup(path)))
		return NULL;
	v->pid = pid;
	v->gen = _stp_sym_generation() - 1; /* not looked up yet */
	nbiases++;
	return v;
}

int _stp_ctx_module_bias(struct _stp_context *c, const char *path, uint64_t *bias)
{
	pid_t pid = (pid_t)_stp_ctx_pid(c);
	struct _stp_symtab *st;
	struct modbias *b;

	*bias = 0;
	if (!_stp_ctx_has_target(c)) {
		_stp_error(c, "module %s: no process in this probe", path);
		return -1;
	}
	if (!(b = bias_slot(pid, path)) || !(st = _stp_sym_of(pid))) {
		_stp_error(c, "out of memory");
		return -1;
	}
	if (b->gen != _stp_sym_generation()) {
		b->found = _stp_sym_module_bias(st, path, &b->bias) == 0;
		b->gen = _stp_sym_generation();
	}
	if (!b->found) {
		_stp_error(c, "module %s is not mapped in process %d", path, (int)pid);
		return -1;
	}
	*bias = b->bias;
	return 0;
}

void _stp_ctx_modules_free(void)
{
	for (size_t i = 0; i < nbiases; i++)
		free(biases[i].path);
	free(biases);
	biases = NULL;
	nbiases = 0;
}
