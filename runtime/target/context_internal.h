/* Shared by the context functions of target/ (context_target.c,
 * context_user.c, context_modules.c, context_tls.c); nothing outside
 * target/ uses it. */
#ifndef STP_TARGET_CONTEXT_INTERNAL_H
#define STP_TARGET_CONTEXT_INTERNAL_H

#include "backend.h"

/* TC's memory through its backend: 0, or -errno (-EFAULT without a
 * thread); no error is set. */
int _stp_tctx_read(struct _stp_tctx *tc, uint64_t addr, void *buf, size_t len);
/* The error of a read the backend cannot do at this event (-ENODATA),
 * with the address. */
#define STP_NOT_AVAILABLE_READ "cannot read user memory at 0x%llx: not available at this event"

/* A NUL-terminated string of at most MAX-1 bytes at ADDR into DST (MAX
 * bytes), in reads that stop at page ends; 0, or -EFAULT (-ENODATA: no
 * memory at this event) with what was read before the fault. No error is
 * set. */
int _stp_ctx_read_cstr(struct _stp_context *c, uint64_t addr, char *dst, size_t max);

/* A fact found per process and module path (a load bias, a TLS module
 * ID), kept while the symbol cache's generation stays the same (it
 * changes when a mapping does: dlopen, dlclose, exec, exit). */
struct _stp_ctx_modfact {
	pid_t pid;
	char *path;
	uint64_t gen; /* _stp_sym_generation() when found */
	int found;
	uint64_t value;
};
struct _stp_ctx_modfacts {
	struct _stp_ctx_modfact *v;
	size_t n;
};
/* T's entry of (PID, PATH), made if new; NULL when out of memory. */
struct _stp_ctx_modfact *_stp_ctx_modfact(struct _stp_ctx_modfacts *t, pid_t pid, const char *path);
/* Whether F was found in the symbol cache's current generation. */
int _stp_ctx_modfact_fresh(const struct _stp_ctx_modfact *f);
void _stp_ctx_modfact_set(struct _stp_ctx_modfact *f, int found, uint64_t value);
void _stp_ctx_modfacts_free(struct _stp_ctx_modfacts *t);

#endif
