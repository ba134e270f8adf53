/* The probe kinds: one line per kind (probe_kinds.c) saying how its point
 * is resolved and what every pass does with the probes it gives. The
 * passes consult the table; none switches on the kind.
 *
 * Resolution: the elaborator resolves a point by its first component:
 * a top-level kind's point ("begin", "timer", ...), the process(...)
 * family (probes_process.c, which resolves the component after
 * process(...)[.library(...)] through the lines of its kinds), or a point
 * that needs the kernel (probes_kernel.c). One resolver may give several
 * kinds (a function's entry and its .return); the first of their lines
 * names it. */
#ifndef STAP_PROBE_KINDS_H
#define STAP_PROBE_KINDS_H

#include "elaborate.h"

/* Where a resolver is: the point, the component naming its kind, and for
 * process(...) kinds the program and the library the point names. */
struct pp_at {
	struct elab *c;
	struct probe_point *pp;
	int i;		 /* the component naming the kind (0: a top-level kind) */
	const char *exe; /* the program's absolute path (NULL: any traced one) */
	const char *lib; /* after .library(...): the library's path, else NULL */
};

/* Fill dp (kind, pp, the kind's own fields) from the point, or say why
 * it does not resolve; several probes are chained through dp->more. */
typedef enum pp_result (*pp_resolve_fn)(const struct pp_at *at, struct derived_probe *dp,
					struct pp_error *err);

/* Flags of a kind. */
enum {
	/* how it is written: after process(...), and after .library(...) too */
	PKF_PROCESS = 1 << 0,
	PKF_LIBRARY = 1 << 1,
	/* a process kind that needs a program's path (not the bare form
	 * meaning every traced process) */
	PKF_NEEDS_PATH = 1 << 2,
	/* its handler runs with interrupts enabled, in SystemTap's terms:
	 * the larger budget MAXACTION_INTERRUPTIBLE */
	PKF_INTERRUPTIBLE = 1 << 3,
	/* its handler runs in a thread of the traced process, which
	 * $dynamic_call_graph switches */
	PKF_IN_TARGET = 1 << 4,
	/* it is placed at an address of the program: -p2 prints where, -t's
	 * derivation starts with the resolved point */
	PKF_AT_ADDRESS = 1 << 5,
	/* -l / -L list it only under the name of an alias that leads to it */
	PKF_INTERNAL = 1 << 6,
	/* how it is written: after process(...).function(...) */
	PKF_AFTER_FUNCTION = 1 << 7,
};

struct probe_kind_def {
	const char *name; /* as stapprobes names it */
	/* the names of the component whose resolver gives this kind, and
	 * the resolver; none when the line of another kind of the same
	 * resolver names it */
	const char *points[2];
	pp_resolve_fn resolve;
	/* PKF_PROCESS kinds: checks of the point made before its program is
	 * looked up (what SystemTap reports first); may be NULL */
	enum pp_result (*check)(const struct probe_point *pp, int i, struct pp_error *err);
	unsigned flags;
	const char *runtime_kind; /* its enum _stp_probe_kind in the generated C */
	const char *what;	  /* "a timer probe": messages about where it runs */
	/* pass 2 lowers a probe's variables, for derived probes of each
	 * round: $dynamic_call_graph (PKF_IN_TARGET, elaborate_dcg.c), then
	 * lower_args (what the point itself defines: a marker's $argN, the
	 * PLT entry's $$name, a system call's registers), then lower_dwarf
	 * (the debug info's target variables); NULL: nothing to do */
	void (*lower_args)(struct elab *c, struct derived_probe *dp);
	void (*lower_dwarf)(struct elab *c, struct derived_probe *dp);
	/* -L: the variables listed after the point (" $a:long ...",
	 * malloc'd); NULL, or NULL returned: none */
	char *(*listing_vars)(const struct derived_probe *dp);
};

/* The line of kind K; of a derived probe. */
const struct probe_kind_def *pk_def(enum probe_kind k);
#define pk_of(dp) pk_def((dp)->kind)
/* The first line (of PKF_PROCESS kinds or of top-level ones, and of
 * those after .function(...) or not, as FAMILY_FLAGS says) whose
 * resolver takes a component named NAME; with PKF_LIBRARY, one that may
 * follow .library(...). NULL: none. */
const struct probe_kind_def *pk_find(const char *name, unsigned family_flags);
/* The resolver of a point whose first component is NAME: a top-level
 * kind, the process(...) family or a kernel point; NULL: none. */
pp_resolve_fn pk_top_resolver(const char *name);
/* Add the component names of those lines (family as for pk_find; with
 * PKF_INTERNAL set in MASK, internal kinds left out) to NAMES (char *):
 * what "(similar: ...)" chooses from. */
void pk_point_names(struct vec *names, unsigned family_flags, unsigned skip_flags);
/* Lower the variables of derived probes [from, s->probes.n), as the lines
 * say (see lower_args). */
void pk_lower(struct elab *c, int from);

/* The resolvers and hooks the lines name (probes_*.c). */
enum pp_result probes_resolve_begin(const struct pp_at *at, struct derived_probe *dp,
				    struct pp_error *err);
enum pp_result probes_resolve_end(const struct pp_at *at, struct derived_probe *dp,
				  struct pp_error *err);
enum pp_result probes_resolve_error(const struct pp_at *at, struct derived_probe *dp,
				    struct pp_error *err);
enum pp_result probes_resolve_never(const struct pp_at *at, struct derived_probe *dp,
				    struct pp_error *err);
enum pp_result probes_resolve_timer(const struct pp_at *at, struct derived_probe *dp,
				    struct pp_error *err);
enum pp_result probes_resolve_dcg(const struct pp_at *at, struct derived_probe *dp,
				  struct pp_error *err);
/* probes_input.c: procfs("__stdin").write, what input.char and
 * input.line (tapset/input.stp) are made of */
enum pp_result probes_resolve_stdin(const struct pp_at *at, struct derived_probe *dp,
				    struct pp_error *err);
void probes_lower_stdin(struct elab *c, struct derived_probe *dp);
/* probes_process.c: the process(...) family, and its own kinds
 * (.begin, .end) */
enum pp_result probes_resolve_process(const struct pp_at *at, struct derived_probe *dp,
				      struct pp_error *err);
enum pp_result probes_check_begin_end(const struct probe_point *pp, int i, struct pp_error *err);
enum pp_result probes_resolve_begin_end(const struct pp_at *at, struct derived_probe *dp,
					struct pp_error *err);
/* -L of process(...).begin, .end, .thread.*, .syscall* */
char *probes_event_vars(const struct derived_probe *dp);
/* probes_kernel.c: points that need the kernel (NULL: NAME is not one) */
pp_resolve_fn probes_kernel_resolver(const char *name);

#endif
