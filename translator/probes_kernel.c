/* Probe points that need the kernel (kprobes, tracepoints, perf, ...) or
 * SystemTap's language helpers (python, java). They parse, and resolve to a clear error: this
 * implementation traces user space only. process(...) points are in
 * probes_process.c. */
#include "elaborate.h"

#include <string.h>

static enum pp_result kernel_only(struct elab *c, struct probe_point *pp, struct derived_probe *dp,
				  struct pp_error *err)
{
	(void)c;
	(void)dp;
	struct probe_component *c0 = pp->components.v[0];
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
static enum pp_result helper_only(struct elab *c, struct probe_point *pp, struct derived_probe *dp,
				  struct pp_error *err)
{
	(void)c;
	(void)dp;
	struct probe_component *c0 = pp->components.v[0];
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

#define KERNEL_KIND(n) static const struct probe_kind_ops kind_##n = {#n, kernel_only, NULL};
#define HELPER_KIND(n) static const struct probe_kind_ops kind_##n = {#n, helper_only, NULL};
KERNEL_KIND(kernel)
KERNEL_KIND(module)
KERNEL_KIND(kprobe)
KERNEL_KIND(syscall)
KERNEL_KIND(nd_syscall)
KERNEL_KIND(netfilter)
KERNEL_KIND(perf)
KERNEL_KIND(procfs)
KERNEL_KIND(hrtimer)
HELPER_KIND(java)
HELPER_KIND(python2)
HELPER_KIND(python3)
KERNEL_KIND(tracepoint)
KERNEL_KIND(json_data)

const struct probe_kind_ops *const probes_kernel_ops[] = {
    &kind_kernel,    &kind_module,  &kind_kprobe,     &kind_syscall,   &kind_nd_syscall,
    &kind_netfilter, &kind_perf,    &kind_procfs,     &kind_hrtimer,   &kind_java,
    &kind_python2,   &kind_python3, &kind_tracepoint, &kind_json_data, NULL,
};
