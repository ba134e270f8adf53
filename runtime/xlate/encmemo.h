/* Emitting through a memo of Zydis's encodings: the translator emits the
 * same few instrumentation instructions (slot moves, record stores) in
 * every block, and an encoding that does not depend on where it lands
 * (no rip-relative operand, no relative branch) is made once and copied
 * after. The bytes are those xl_emit_seg would write. */
#ifndef STP_XL_ENCMEMO_H
#define STP_XL_ENCMEMO_H

#include "xlate/emit.h"

/* As xl_emit_seg / xl_emit0 / xl_emit1 / xl_emit2. */
int xl_memo_seg(struct xl_emit *e, uint64_t prefixes, ZydisMnemonic mn, int nops,
		const ZydisEncoderOperand *ops);
int xl_memo0(struct xl_emit *e, ZydisMnemonic mn);
int xl_memo1(struct xl_emit *e, ZydisMnemonic mn, ZydisEncoderOperand a);
int xl_memo2(struct xl_emit *e, ZydisMnemonic mn, ZydisEncoderOperand a, ZydisEncoderOperand b);

/* Encodings made and copied so far (for the tests). */
extern unsigned long xl_memo_made, xl_memo_copied;

#endif
