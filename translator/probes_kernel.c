/* Probe points that need the kernel (kprobes, tracepoints, perf, ...) or
 * SystemTap's language helpers (python, java). They parse, and resolve to a clear error: this
 * implementation traces user space only. process(...) points are in
 * probes_process.c. */
#include "probe_kinds.h"

#include <string.h>

static enum pp_result kernel_only(const struct pp_at *at, struct derived_probe *dp,
				  struct pp_error *err)
{
	(void)dp;
	struct probe_component *c0 = at->pp->components.v[0];
	if (!strcmp(c0->functor, "json_data")) /* an alias of SystemTap's json.stp */
		return pp_fail(err, c0->tok,
			       "probe point 'json_data' is a procfs probe (SystemTap's JSON "
			       "tapset), which needs the kernel: this implementation traces "
			       "user space only");
	return pp_fail(err, c0->tok,
		       "probe point '%s' needs the kernel: this implementation "
		       "traces user space only",
		       c0->functor);
}

/* python2/python3 probes are SystemTap's translation of SDT markers that
 * its HelperSDT python module fires; java probes need Byteman. Say what
 * is missing, and what works instead. */
static enum pp_result helper_only(const struct pp_at *at, struct derived_probe *dp,
				  struct pp_error *err)
{
	(void)dp;
	struct probe_component *c0 = at->pp->components.v[0];
	if (!strcmp(c0->functor, "java"))
		return pp_fail(err, c0->tok,
			       "probe point 'java' needs Byteman and SystemTap's java "
			       "helper agent, which this implementation does not have");
	return pp_fail(err, c0->tok,
		       "probe point '%s' needs SystemTap's HelperSDT python module (the "
		       "script run as %s -m HelperSDT SCRIPT) and the interpreter's debug "
		       "info, which this implementation does not have; the interpreter's "
		       "own SDT markers can be probed: process(\"/usr/bin/python3\")"
		       ".mark(\"function__entry\")",
		       c0->functor, strcmp(c0->functor, "python2") ? "python3" : "python2");
}

static const struct {
	const char *name;
	pp_resolve_fn resolve;
} points[] = {
    {"kernel", kernel_only},	 {"module", kernel_only},     {"kprobe", kernel_only},
    {"syscall", kernel_only},	 {"nd_syscall", kernel_only}, {"netfilter", kernel_only},
    {"perf", kernel_only},	 {"procfs", kernel_only},     {"hrtimer", kernel_only},
    {"java", helper_only},	 {"python2", helper_only},    {"python3", helper_only},
    {"tracepoint", kernel_only}, {"json_data", kernel_only},
};

pp_resolve_fn probes_kernel_resolver(const char *name)
{
	for (size_t i = 0; i < sizeof points / sizeof points[0]; i++)
		if (!strcmp(points[i].name, name))
			return points[i].resolve;
	return NULL;
}
