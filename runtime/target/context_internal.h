/* Shared by the context functions of target/ (context_target.c,
 * context_user.c); nothing outside target/ uses it. */
#ifndef STP_TARGET_CONTEXT_INTERNAL_H
#define STP_TARGET_CONTEXT_INTERNAL_H

#include "backend.h"

/* TC's memory through its backend: 0, or -errno (-EFAULT without a
 * thread); no error is set. */
int _stp_tctx_read(struct _stp_tctx *tc, uint64_t addr, void *buf, size_t len);
/* The error of a read the backend cannot do at this event (-ENODATA),
 * with the address. */
#define STP_NOT_AVAILABLE_READ "cannot read user memory at 0x%llx: not available at this event"

#endif
