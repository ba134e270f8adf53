/* The call graph summed up at the end of the run, from the merged paths
 * (sink_paths.c). Times in microseconds with three decimals.
 *
 * "report": one line per function (over every traced thread and
 * process), sorted by total time (report:total, the default), or by
 * report:self, report:calls, report:avg or report:max, then by name:
 *
 *   # dynamic call graph report: 5 functions, 11 calls; microseconds, by total
 *        calls         total          self       average       maximum  function
 *            1       119.230        10.450       119.230       119.230  root
 *            3        36.120        20.001        12.040        25.303  rec
 *
 * total is the time from call to return, counted once for nested calls
 * of one function (the outermost); self is total less the calls shown
 * inside; average is total / calls; maximum the longest single call.
 *
 * "graph": the calls merged by path, as a tree, one line per distinct
 * path under its process, children in the order of their first call:
 *
 *   # dynamic call graph: call paths merged; microseconds
 *        calls         total          self  function
 *                                           app(4242)
 *            1       119.230        10.450   root
 *            1        36.120         2.001    rec
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "sink_out.h"
#include "sink_paths.h"
#include "sink_run.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

static void put_us(struct dcg_buf *b, uint64_t ns)
{
	struct dcg_buf t = {0};
	dcg_buf_us(&t, ns);
	dcg_buf_printf(b, " %13s", dcg_buf_str(&t));
	dcg_buf_free(&t);
}

static void put_line(struct dcg_buf *b)
{
	dcg_buf_puts(b, "\n");
	dcg_out_buf(b);
}

/* ---- report ---- */

static const char *sort_by;

static uint64_t key_of(const struct dcg_pfunc *f)
{
	if (!strcmp(sort_by, "self"))
		return f->self;
	if (!strcmp(sort_by, "calls"))
		return f->calls;
	if (!strcmp(sort_by, "avg"))
		return f->calls ? f->total / f->calls : 0;
	if (!strcmp(sort_by, "max"))
		return f->max;
	return f->total;
}

static int by_key(const void *a, const void *b)
{
	const struct dcg_pfunc *x = a, *y = b;
	uint64_t kx = key_of(x), ky = key_of(y);

	if (kx != ky)
		return kx > ky ? -1 : 1;
	return strcmp(dcg_paths_name(x->name), dcg_paths_name(y->name));
}

static void report_end(void)
{
	struct dcg_pfunc *f = dcg_paths_functions();
	uint32_t n = 0, nn = dcg_paths_names();
	uint64_t calls = 0;
	struct dcg_buf b = {0};

	sort_by = dcg_sink_option();
	for (uint32_t i = 0; f && i < nn; i++)
		if (f[i].calls) {
			calls += f[i].calls;
			f[n++] = f[i];
		}
	if (f)
		qsort(f, n, sizeof *f, by_key);
	dcg_buf_printf(&b,
		       "# dynamic call graph report: %" PRIu32 " functions, %" PRIu64
		       " calls; microseconds, by %s",
		       n, calls, sort_by);
	put_line(&b);
	dcg_buf_printf(&b, "%13s %13s %13s %13s %13s  function", "calls", "total", "self",
		       "average", "maximum");
	put_line(&b);
	for (uint32_t i = 0; i < n; i++) {
		dcg_buf_printf(&b, "%13" PRIu64, f[i].calls);
		put_us(&b, f[i].total);
		put_us(&b, f[i].self);
		put_us(&b, f[i].total / f[i].calls);
		put_us(&b, f[i].max);
		dcg_buf_puts(&b, "  ");
		dcg_esc_text(&b, dcg_paths_name(f[i].name));
		put_line(&b);
	}
	free(f);
	dcg_buf_free(&b);
	dcg_paths_free();
}

static const char *const report_options[] = {"total", "self", "calls", "avg", "max", NULL};

const struct dcg_sink dcg_sink_report = {
    .name = "report",
    .record = dcg_paths_record,
    .end = report_end,
    .ext = "txt",
    .closes_open = 1,
    .options = report_options,
};

/* ---- graph ---- */

static void graph_end(void)
{
	struct dcg_buf b = {0};

	dcg_buf_puts(&b, "# dynamic call graph: call paths merged; microseconds");
	put_line(&b);
	dcg_buf_printf(&b, "%13s %13s %13s  function", "calls", "total", "self");
	put_line(&b);
	/* nodes come parents first, but a tree is printed depth first */
	for (uint32_t root = 0; root < dcg_paths_count(); root++) {
		const struct dcg_pnode *r = dcg_paths_node(root);
		if (r->parent != DCG_PNONE)
			continue;
		dcg_buf_printf(&b, "%13s %13s %13s  ", "", "", "");
		dcg_esc_text(&b, dcg_paths_name(r->name));
		put_line(&b);
		uint32_t i = r->child;
		while (i != DCG_PNONE) {
			const struct dcg_pnode *n = dcg_paths_node(i);
			dcg_buf_printf(&b, "%13" PRIu64, n->calls);
			put_us(&b, n->total);
			put_us(&b, n->self);
			dcg_buf_printf(&b, "  %*s", (int)n->depth, "");
			dcg_esc_text(&b, dcg_paths_name(n->name));
			put_line(&b);
			if (n->child != DCG_PNONE) {
				i = n->child;
				continue;
			}
			while (i != DCG_PNONE && dcg_paths_node(i)->next == DCG_PNONE) {
				i = dcg_paths_node(i)->parent;
				if (i == root)
					i = DCG_PNONE;
			}
			if (i != DCG_PNONE)
				i = dcg_paths_node(i)->next;
		}
	}
	dcg_buf_free(&b);
	dcg_paths_free();
}

const struct dcg_sink dcg_sink_graph = {
    .name = "graph",
    .record = dcg_paths_record,
    .end = graph_end,
    .ext = "txt",
    .closes_open = 1,
};
