/* The translate mechanism's frames after lost records (overwrite mode). */
#ifndef STP_DCG_MECH_TRANSLATE_GAP_H
#define STP_DCG_MECH_TRANSLATE_GAP_H

#include "dcg_internal.h"
#include "xlate/xlate.h"

#pragma GCC visibility push(hidden)

/* Records were lost in d's thread, then r[0..n) were written, the last
 * of them just before the thread stopped (it is stopped now): the core's
 * stack is put as it was before r[0], from the thread's real stack (its
 * CFI) and the returns in r of frames r does not enter. 0, or -1 when
 * the stack cannot be found (the core's stays as it is). */
int dcg_xl_place(struct dthread *d, const struct xl_rec *r, size_t n);

#pragma GCC visibility pop

#endif
