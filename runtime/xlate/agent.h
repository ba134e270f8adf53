/* The agent blob, embedded into libstaprt at build time (agent_blob.c is
 * generated from runtime/xlate/agent/ by mkblob.sh). Offsets are from the
 * blob's start, which is the thread region's start (layout.h). */
#ifndef STP_XL_AGENT_H
#define STP_XL_AGENT_H

#include "xlate/layout.h"

#include <stddef.h>

struct _stp_xl_agent_syms {
	const unsigned char *code;
	size_t size;
	uint32_t entry[XL_E_N];	       /* enum xl_entry */
	uint32_t entry_end;	       /* end of the entry stubs (step out of them) */
	uint32_t exit;		       /* the exit stub */
	uint32_t doorbell_after;       /* pc of a thread stopped at the doorbell */
	uint32_t sigtrap, restorer;    /* the SIGTRAP handler of attached processes */
	uint32_t body_start, body_end; /* the C body: the native state is saved */
};

extern const struct _stp_xl_agent_syms _stp_xl_agent;

#endif
