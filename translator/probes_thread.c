/* process[(...)].thread.begin and .thread.end: a thread of the process
 * starts, or one (not the main one) ends. */
#include <string.h>

#include "probes_process.h"

enum pp_result proc_check_thread(const struct probe_point *pp, int i, struct pp_error *err)
{
	struct probe_component *c1 = pp->components.v[i];
	struct probe_component *c2 = pp->components.n > i + 1 ? pp->components.v[i + 1] : NULL;
	if (c1->arg)
		return pp_fail(err, c1->tok, "invalid suffix for probe");
	if (!c2)
		return pp_fail(err, c1->tok, "probe point truncated (follow:  begin end)");
	if (pp->components.n > i + 2 || c2->arg ||
	    (strcmp(c2->functor, "begin") && strcmp(c2->functor, "end")))
		return pp_fail(err, c2->tok, "probe point mismatch%s", " (similar: begin end)");
	return PP_OK;
}

enum pp_result proc_resolve_thread(const struct pp_at *at, struct derived_probe *dp,
				   struct pp_error *err)
{
	struct probe_component *c2 = at->pp->components.v[at->i + 1];
	(void)err;
	if (!strcmp(c2->functor, "begin"))
		return proc_event(at, dp, PK_PROCESS_THREAD_BEGIN, "thread.begin");
	return proc_event(at, dp, PK_PROCESS_THREAD_END, "thread.end");
}
