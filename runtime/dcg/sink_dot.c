/* The call graph as a Graphviz picture (dot -Tsvg FILE > FILE.svg): one
 * node per function (over every traced thread and process) with its calls
 * and its total and self time, one edge per caller and callee with the
 * number of calls. Written at the end of the run, from the merged paths
 * (sink_paths.c); times as in the report (sink_report.c).
 *
 *   digraph "dynamic call graph" {
 *   node [shape=box, fontname="monospace"];
 *   edge [fontname="monospace"];
 *   f0 [label="root\n1 call\ntotal 119.230 us\nself 10.450 us"];
 *   f1 [label="rec\n3 calls\ntotal 36.120 us\nself 20.001 us"];
 *   f0 -> f1 [label="1"];
 *   f1 -> f1 [label="2"];
 *   }
 *
 * Nodes are numbered (f0, f1 ...); names appear only in labels, escaped
 * ('"', '\\'; control bytes and bytes of no valid UTF-8 as \xNN text). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "sink_out.h"
#include "sink_paths.h"
#include "sink_run.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

struct edge {
	uint32_t from, to;
	uint64_t calls;
};

static int edge_cmp(const void *a, const void *b)
{
	const struct edge *x = a, *y = b;
	if (x->from != y->from)
		return x->from < y->from ? -1 : 1;
	return x->to < y->to ? -1 : x->to > y->to;
}

static void dot_end(void)
{
	struct dcg_pfunc *f = dcg_paths_functions();
	uint32_t nn = dcg_paths_names(), np = dcg_paths_count(), ne = 0;
	struct edge *e = calloc(np ? np : 1, sizeof *e);
	struct dcg_buf b = {0};

	dcg_out_puts("digraph \"dynamic call graph\" {\n"
		     "node [shape=box, fontname=\"monospace\"];\n"
		     "edge [fontname=\"monospace\"];\n");
	for (uint32_t i = 0; f && i < nn; i++) {
		if (!f[i].calls)
			continue;
		dcg_buf_printf(&b, "f%" PRIu32 " [label=\"", i);
		dcg_esc_dot(&b, dcg_paths_name(i));
		dcg_buf_printf(&b, "\\n%" PRIu64 " call%s\\ntotal ", f[i].calls,
			       f[i].calls == 1 ? "" : "s");
		dcg_buf_us(&b, f[i].total);
		dcg_buf_puts(&b, " us\\nself ");
		dcg_buf_us(&b, f[i].self);
		dcg_buf_puts(&b, " us\"];\n");
		dcg_out_buf(&b);
	}
	/* edges: each path's calls, summed per (caller, callee) */
	for (uint32_t i = 0; e && i < np; i++) {
		const struct dcg_pnode *n = dcg_paths_node(i);
		if (n->parent == DCG_PNONE || dcg_paths_node(n->parent)->parent == DCG_PNONE)
			continue;
		e[ne++] = (struct edge){dcg_paths_node(n->parent)->name, n->name, n->calls};
	}
	if (e)
		qsort(e, ne, sizeof *e, edge_cmp);
	for (uint32_t i = 0; i < ne; i++) {
		uint64_t calls = e[i].calls;
		while (i + 1 < ne && e[i + 1].from == e[i].from && e[i + 1].to == e[i].to)
			calls += e[++i].calls;
		dcg_buf_printf(&b, "f%" PRIu32 " -> f%" PRIu32 " [label=\"%" PRIu64 "\"];\n",
			       e[i].from, e[i].to, calls);
		dcg_out_buf(&b);
	}
	dcg_out_puts("}\n");
	free(e);
	free(f);
	dcg_buf_free(&b);
	dcg_paths_free();
}

const struct dcg_sink dcg_sink_dot = {
    .name = "dot",
    .record = dcg_paths_record,
    .end = dot_end,
    .ext = "dot",
    .closes_open = 1,
};
