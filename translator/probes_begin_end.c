/* begin, end, error and never probe points: no target, no hardware; the
 * optional argument of begin/end/error is a sequence number ordering
 * probes of the same kind. */
#include "elaborate.h"

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

static enum pp_result resolve_begin(struct elab *c, struct probe_point *pp,
				    struct derived_probe *dp, struct pp_error *err)
{
	(void)c;
	return resolve_seq(pp, dp, err, PK_BEGIN, 1);
}

static enum pp_result resolve_end(struct elab *c, struct probe_point *pp, struct derived_probe *dp,
				  struct pp_error *err)
{
	(void)c;
	return resolve_seq(pp, dp, err, PK_END, 1);
}

static enum pp_result resolve_error(struct elab *c, struct probe_point *pp,
				    struct derived_probe *dp, struct pp_error *err)
{
	(void)c;
	return resolve_seq(pp, dp, err, PK_ERROR, 1);
}

static enum pp_result resolve_never(struct elab *c, struct probe_point *pp,
				    struct derived_probe *dp, struct pp_error *err)
{
	(void)c;
	return resolve_seq(pp, dp, err, PK_NEVER, 0);
}

const struct probe_kind_ops probes_begin_ops = {"begin", resolve_begin, NULL};
const struct probe_kind_ops probes_end_ops = {"end", resolve_end, NULL};
const struct probe_kind_ops probes_error_ops = {"error", resolve_error, NULL};
const struct probe_kind_ops probes_never_ops = {"never", resolve_never, NULL};
