/* The tree grouped by thread (sink_spool.c). */
#ifndef STP_DCG_SINK_SPOOL_H
#define STP_DCG_SINK_SPOOL_H

#include <stddef.h>

#include "sink.h"

/* Keep n bytes of th's lines (in memory, then in a temporary file). */
void dcg_spool_write(const struct dcg_sink_thread *th, const char *p, size_t n);
/* Write every thread's lines, thread after thread; forget them. */
void dcg_spool_end(void);

#endif
