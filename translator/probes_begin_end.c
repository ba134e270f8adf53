/* begin, end, error and never probe points: no target, no hardware; the
 * optional argument of begin/end/error is a sequence number ordering
 * probes of the same kind. */
#include "probe_kinds.h"

static enum pp_result resolve_seq(struct probe_point *pp, struct derived_probe *dp,
				  struct pp_error *err, enum probe_kind kind, int takes_seq)
{
	struct probe_component *c0 = pp->components.v[0];
	if (pp->components.n > 1) {
		struct probe_component *c1 = pp->components.v[1];
		return pp_fail(err, c1->tok, "invalid suffix for probe");
	}
	if (c0->arg && (!takes_seq || c0->arg->kind != E_NUMBER))
		return PP_NOMATCH;
	dp->kind = kind;
	dp->sequence = c0->arg ? c0->arg->num : 0;
	return PP_OK;
}

enum pp_result probes_resolve_begin(const struct pp_at *at, struct derived_probe *dp,
				    struct pp_error *err)
{
	return resolve_seq(at->pp, dp, err, PK_BEGIN, 1);
}

enum pp_result probes_resolve_end(const struct pp_at *at, struct derived_probe *dp,
				  struct pp_error *err)
{
	return resolve_seq(at->pp, dp, err, PK_END, 1);
}

enum pp_result probes_resolve_error(const struct pp_at *at, struct derived_probe *dp,
				    struct pp_error *err)
{
	return resolve_seq(at->pp, dp, err, PK_ERROR, 1);
}

enum pp_result probes_resolve_never(const struct pp_at *at, struct derived_probe *dp,
				    struct pp_error *err)
{
	return resolve_seq(at->pp, dp, err, PK_NEVER, 0);
}
