/* The table of probe kinds (probe_kinds.h): one line per kind. A new kind
 * is a line here, its resolver (probes_KIND.c) and, if the runtime does
 * something new for it, its hooks in runtime/probes/ (see
 * doc/adding-a-probe-kind.md). */
#include <string.h>

#include "probe_kinds.h"
#include "probes_process.h"

/* Process kinds: all run in the traced process but the .end ones (it,
 * or the thread, is gone); those at an address of a file need the
 * program's path and may be in a .library(...). */
#define IN_PROGRAM (PKF_PROCESS | PKF_IN_TARGET)
#define AT_ADDRESS (IN_PROGRAM | PKF_NEEDS_PATH | PKF_AT_ADDRESS | PKF_LIBRARY)

static const struct probe_kind_def kinds[PK_COUNT] = {
    [PK_BEGIN] = {.name = "begin",
		  .points = {"begin"},
		  .resolve = probes_resolve_begin,
		  .flags = PKF_INTERRUPTIBLE,
		  .runtime_kind = "STP_PROBE_BEGIN",
		  .what = "a begin probe"},
    [PK_END] = {.name = "end",
		.points = {"end"},
		.resolve = probes_resolve_end,
		.flags = PKF_INTERRUPTIBLE,
		.runtime_kind = "STP_PROBE_END",
		.what = "an end probe"},
    [PK_ERROR] = {.name = "error",
		  .points = {"error"},
		  .resolve = probes_resolve_error,
		  .flags = PKF_INTERRUPTIBLE,
		  .runtime_kind = "STP_PROBE_ERROR",
		  .what = "an error probe"},
    [PK_NEVER] = {.name = "never",
		  .points = {"never"},
		  .resolve = probes_resolve_never,
		  .flags = PKF_INTERRUPTIBLE,
		  .runtime_kind = "STP_PROBE_NEVER"},
    [PK_TIMER] = {.name = "timer",
		  .points = {"timer"},
		  .resolve = probes_resolve_timer,
		  .runtime_kind = "STP_PROBE_TIMER",
		  .what = "a timer probe"},
    [PK_PROCESS_FUNCTION] = {.name = "process.function",
			     .points = {"function"},
			     .resolve = proc_resolve_function,
			     .flags = AT_ADDRESS,
			     .runtime_kind = "STP_PROBE_PROCESS_FUNCTION",
			     .lower_dwarf = proc_lower_dwarf,
			     .listing_vars = proc_function_vars},
    [PK_PROCESS_RETURN] = {.name = "process.function.return",
			   .flags = AT_ADDRESS,
			   .runtime_kind = "STP_PROBE_PROCESS_RETURN",
			   .lower_dwarf = proc_lower_dwarf,
			   .listing_vars = proc_function_vars},
    [PK_PROCESS_CALLEE] = {.name = "process.function.callee",
			   .points = {"callee", "callees"},
			   .resolve = proc_resolve_callee,
			   .flags = AT_ADDRESS | PKF_AFTER_FUNCTION,
			   .runtime_kind = "STP_PROBE_PROCESS_FUNCTION",
			   .lower_args = proc_lower_callee,
			   .lower_dwarf = proc_lower_dwarf,
			   .listing_vars = proc_function_vars},
    [PK_PROCESS_STATEMENT] = {.name = "process.statement",
			      .points = {"statement"},
			      .resolve = proc_resolve_statement,
			      .flags = AT_ADDRESS,
			      .runtime_kind = "STP_PROBE_PROCESS_FUNCTION",
			      .lower_dwarf = proc_lower_dwarf,
			      .listing_vars = proc_function_vars},
    [PK_PROCESS_MARK] = {.name = "process.mark",
			 .points = {"mark", "provider"},
			 .resolve = proc_resolve_mark,
			 .flags = AT_ADDRESS,
			 .runtime_kind = "STP_PROBE_PROCESS_FUNCTION",
			 .lower_args = proc_lower_mark,
			 .lower_dwarf = proc_lower_dwarf,
			 .listing_vars = proc_mark_vars},
    [PK_PROCESS_PLT] = {.name = "process.plt",
			.points = {"plt"},
			.resolve = proc_resolve_plt,
			.flags = AT_ADDRESS,
			.runtime_kind = "STP_PROBE_PROCESS_FUNCTION",
			.lower_args = proc_lower_plt},
    [PK_PROCESS_PLT_RETURN] = {.name = "process.plt.return",
			       .flags = AT_ADDRESS,
			       .runtime_kind = "STP_PROBE_PROCESS_RETURN",
			       .lower_args = proc_lower_plt},
    [PK_PROCESS_BEGIN] = {.name = "process.begin",
			  .points = {"begin"},
			  .resolve = probes_resolve_begin_end,
			  .check = probes_check_begin_end,
			  .flags = IN_PROGRAM,
			  .runtime_kind = "STP_PROBE_PROCESS_BEGIN",
			  .listing_vars = probes_event_vars},
    [PK_PROCESS_END] = {.name = "process.end",
			.points = {"end"},
			.resolve = probes_resolve_begin_end,
			.check = probes_check_begin_end,
			.flags = PKF_PROCESS,
			.runtime_kind = "STP_PROBE_PROCESS_END",
			.what = "a process.end probe (the process is gone)",
			.listing_vars = probes_event_vars},
    [PK_PROCESS_THREAD_BEGIN] = {.name = "process.thread.begin",
				 .points = {"thread"},
				 .resolve = proc_resolve_thread,
				 .check = proc_check_thread,
				 .flags = IN_PROGRAM,
				 .runtime_kind = "STP_PROBE_PROCESS_THREAD_BEGIN",
				 .listing_vars = probes_event_vars},
    [PK_PROCESS_THREAD_END] = {.name = "process.thread.end",
			       .flags = PKF_PROCESS,
			       .runtime_kind = "STP_PROBE_PROCESS_THREAD_END",
			       .what = "a thread.end probe (the thread is gone)",
			       .listing_vars = probes_event_vars},
    [PK_PROCESS_SYSCALL] = {.name = "process.syscall",
			    .points = {"syscall"},
			    .resolve = proc_resolve_syscall,
			    .check = proc_check_syscall,
			    .flags = IN_PROGRAM,
			    .runtime_kind = "STP_PROBE_PROCESS_SYSCALL",
			    .lower_args = proc_lower_syscall,
			    .listing_vars = probes_event_vars},
    [PK_PROCESS_SYSCALL_RETURN] = {.name = "process.syscall.return",
				   .flags = IN_PROGRAM,
				   .runtime_kind = "STP_PROBE_PROCESS_SYSCALL_RETURN",
				   .lower_args = proc_lower_syscall,
				   .listing_vars = probes_event_vars},
    [PK_DCG_CALL] = {.name = "__dynamic_call_graph.call",
		     .points = {"__dynamic_call_graph"},
		     .resolve = probes_resolve_dcg,
		     .flags = PKF_IN_TARGET | PKF_INTERNAL,
		     .runtime_kind = "STP_PROBE_DCG_CALL"},
    [PK_DCG_RETURN] = {.name = "__dynamic_call_graph.return",
		       .flags = PKF_IN_TARGET | PKF_INTERNAL,
		       .runtime_kind = "STP_PROBE_DCG_RETURN"},
    [PK_STDIN] = {.name = "procfs(\"__stdin\").write",
		  .points = {"procfs"},
		  .resolve = probes_resolve_stdin,
		  .flags = PKF_INTERNAL,
		  .runtime_kind = "STP_PROBE_STDIN",
		  .what = "an input probe",
		  .lower_args = probes_lower_stdin},
    [PK_PROCESS_LABEL] = {.name = "process.function.label",
			  .points = {"label"},
			  .resolve = proc_resolve_label,
			  .flags = AT_ADDRESS | PKF_AFTER_FUNCTION,
			  .runtime_kind = "STP_PROBE_PROCESS_FUNCTION",
			  .lower_dwarf = proc_lower_dwarf,
			  .listing_vars = proc_function_vars},
};

const struct probe_kind_def *pk_def(enum probe_kind k)
{
	return &kinds[k];
}

/* Is NAME one of the components that select k's resolver? */
static int names_point(const struct probe_kind_def *k, const char *name)
{
	for (size_t i = 0; i < sizeof k->points / sizeof k->points[0]; i++)
		if (k->points[i] && !strcmp(k->points[i], name))
			return 1;
	return 0;
}

static int in_family(const struct probe_kind_def *k, unsigned family)
{
	unsigned same = PKF_PROCESS | PKF_AFTER_FUNCTION;
	return k->points[0] && (k->flags & same) == (family & same) &&
	    (!(family & PKF_LIBRARY) || (k->flags & PKF_LIBRARY));
}

const struct probe_kind_def *pk_find(const char *name, unsigned family_flags)
{
	for (int i = 0; i < PK_COUNT; i++)
		if (in_family(&kinds[i], family_flags) && names_point(&kinds[i], name))
			return &kinds[i];
	return NULL;
}

pp_resolve_fn pk_top_resolver(const char *name)
{
	const struct probe_kind_def *k = pk_find(name, 0);
	if (k)
		return k->resolve;
	if (!strcmp(name, "process"))
		return probes_resolve_process;
	return probes_kernel_resolver(name);
}

void pk_point_names(struct vec *names, unsigned family_flags, unsigned skip_flags)
{
	for (int i = 0; i < PK_COUNT; i++) {
		const struct probe_kind_def *k = &kinds[i];
		if (!in_family(k, family_flags) || (k->flags & skip_flags))
			continue;
		for (size_t j = 0; j < sizeof k->points / sizeof k->points[0]; j++)
			if (k->points[j])
				vec_push(names, (void *)k->points[j]);
	}
}

void pk_lower(struct elab *c, int from)
{
	elab_lower_dcg(c, from);
	int to = c->s->probes.n;
	for (int i = from; i < to; i++) {
		struct derived_probe *dp = c->s->probes.v[i];
		if (pk_of(dp)->lower_args)
			pk_of(dp)->lower_args(c, dp);
	}
	/* a .return probe's @entry values add a probe, lowered in turn */
	for (int i = from; i < c->s->probes.n; i++) {
		struct derived_probe *dp = c->s->probes.v[i];
		if (pk_of(dp)->lower_dwarf)
			pk_of(dp)->lower_dwarf(c, dp);
		else if (dp->probe)
			proc_lower_casts(c, dp->probe->body);
	}
}
