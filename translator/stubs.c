/* Weak stand-ins for the passes, so that the driver links while a part is
 * missing from the build. A real definition in another file replaces each
 * one at link time. */
#include <stdio.h>

#include "session.h"
#include "diag.h"
#include "emit.h"

#define STAP_STUB(fn, n)                                                             \
	__attribute__((weak)) int fn(struct session *s)                              \
	{                                                                            \
		(void)s;                                                             \
		fprintf(stderr, "ERROR: pass " #n " is not built into this stap\n"); \
		return 1;                                                            \
	}

STAP_STUB(pass1_parse, 1)
STAP_STUB(pass2_elaborate, 2)
STAP_STUB(pass3_translate, 3)
STAP_STUB(pass4_compile, 4)

/* The cache (cache.c) and the diagnostics summary (diag.c). */
__attribute__((weak)) const char *cache_default_dir(void)
{
	return NULL;
}

__attribute__((weak)) int cache_lookup(struct session *s)
{
	(void)s;
	return 0;
}

__attribute__((weak)) void cache_store(struct session *s)
{
	(void)s;
}

__attribute__((weak)) void diag_print_suppressed(void)
{
}
