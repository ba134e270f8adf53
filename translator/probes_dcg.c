/* __dynamic_call_graph.call / .return: the dynamic call graph's events
 * (issue 4), run in the traced thread for each call and return while
 * $dynamic_call_graph is on in it. Scripts use the tapset aliases
 * dynamic_call_graph.call / .return (tapset/dynamic_call_graph.stp),
 * which set the event's variables. */
#include "probe_kinds.h"

#include <string.h>

enum pp_result probes_resolve_dcg(const struct pp_at *at, struct derived_probe *dp,
				  struct pp_error *err)
{
	struct probe_point *pp = at->pp;
	struct probe_component *c0 = pp->components.v[0];

	if (c0->arg)
		return pp_fail(err, c0->tok, "invalid suffix for probe");
	if (pp->components.n < 2)
		return pp_fail(err, c0->tok, "probe point truncated (follow:  call return)");
	struct probe_component *c1 = pp->components.v[1];
	int is_call = !strcmp(c1->functor, "call");
	if ((!is_call && strcmp(c1->functor, "return")) || c1->arg)
		return pp_fail(err, c1->tok, "probe point mismatch (similar: call return)");
	if (pp->components.n > 2)
		return pp_fail(err, ((struct probe_component *)pp->components.v[2])->tok,
			       "invalid suffix for probe");
	dp->kind = is_call ? PK_DCG_CALL : PK_DCG_RETURN;
	return PP_OK;
}
