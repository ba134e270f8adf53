/* Probe points that need the kernel (kprobes, tracepoints, perf, ...) or
 * a traced process. They parse, and resolve to a clear error: this
 * implementation traces user space only. process(...) points are in
 * probes_process.c. */
#include "elaborate.h"

static enum pp_result kernel_only(struct elab *c, struct probe_point *pp, struct derived_probe *dp,
				  struct pp_error *err)
{
	(void)c;
	(void)dp;
	struct probe_component *c0 = pp->components.v[0];
	return pp_fail(err, c0->tok,
		       "probe point '%s' needs the kernel: this implementation "
		       "traces user space only",
		       c0->functor);
}

#define KERNEL_KIND(n) static const struct probe_kind_ops kind_##n = {#n, kernel_only, NULL};
KERNEL_KIND(kernel)
KERNEL_KIND(module)
KERNEL_KIND(kprobe)
KERNEL_KIND(syscall)
KERNEL_KIND(nd_syscall)
KERNEL_KIND(netfilter)
KERNEL_KIND(perf)
KERNEL_KIND(procfs)
KERNEL_KIND(hrtimer)
KERNEL_KIND(java)
KERNEL_KIND(python2)
KERNEL_KIND(python3)
KERNEL_KIND(tracepoint)

const struct probe_kind_ops *const probes_kernel_ops[] = {
    &kind_kernel,    &kind_module,  &kind_kprobe,     &kind_syscall, &kind_nd_syscall,
    &kind_netfilter, &kind_perf,    &kind_procfs,     &kind_hrtimer, &kind_java,
    &kind_python2,   &kind_python3, &kind_tracepoint, NULL,
};
