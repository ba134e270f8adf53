/* The call paths of a run, merged (sink_paths.c): the formats written at
 * the end (folded, report, graph, dot) keep one node per distinct path
 * (process, then each function on the stack), with its calls and times,
 * never the records: memory goes with the program's paths, not with the
 * length of the run.
 *
 * Fed by the sinks' record() (they are closes_open: every call given has
 * its return, made up if need be, so every node's times are complete). */
#ifndef STP_DCG_SINK_PATHS_H
#define STP_DCG_SINK_PATHS_H

#include <stdint.h>

#include "sink.h"

#define DCG_PNONE ((uint32_t)-1)

struct dcg_pnode {
	uint32_t parent;      /* DCG_PNONE for a process's node */
	uint32_t name;	      /* dcg_paths_name(): the function, or "execname(pid)" */
	uint32_t child, next; /* first child, next sibling (in order of first call) */
	uint32_t last;	      /* last child */
	uint32_t depth;	      /* 0 for a process */
	uint64_t calls;
	uint64_t total, self, max; /* ns, over the calls returned */
};

void dcg_paths_record(const struct dcg_sink_rec *r);
/* The nodes, parents before children; processes in order of appearance. */
uint32_t dcg_paths_count(void);
const struct dcg_pnode *dcg_paths_node(uint32_t i);
const char *dcg_paths_name(uint32_t name);
uint32_t dcg_paths_names(void);
void dcg_paths_free(void);

/* Per function (by name, over every process): calls, self and maximum
 * summed; total counts only the outermost of nested calls of the same
 * function (recursion is not counted twice). */
struct dcg_pfunc {
	uint32_t name;
	uint64_t calls, total, self, max;
};
/* An array of dcg_paths_names() entries by name (functions not called:
 * calls 0; process names too), or NULL. Freed by the caller. */
struct dcg_pfunc *dcg_paths_functions(void);

#endif
