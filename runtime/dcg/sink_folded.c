/* The call graph as folded stacks, for flame graphs (flamegraph.pl,
 * speedscope, inferno): one line per distinct call path, its frames from
 * the process down joined by ';', then a space and its weight:
 *
 *   app(4242);handle_request;parse;__strlen_evex [libc.so.6] 927
 *
 * The weight is the path's self time in nanoseconds (format "folded", or
 * "folded:time"), or the number of calls of the path ("folded:calls").
 * The first frame is the process, execname(pid); a signal handler is
 * "NAME (signal SIGX)"; names are escaped so that a frame never splits
 * (';', '\\', control bytes and bytes of no valid UTF-8 as \xNN).
 * Written at the end of the run, from the merged paths (sink_paths.c). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "sink_out.h"
#include "sink_paths.h"
#include "sink_run.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* The path of node i, escaped, into b. */
static void path_of(struct dcg_buf *b, uint32_t i)
{
	const struct dcg_pnode *n = dcg_paths_node(i);

	if (n->parent != DCG_PNONE) {
		path_of(b, n->parent);
		dcg_buf_puts(b, ";");
	}
	dcg_esc_folded(b, dcg_paths_name(n->name));
}

static void folded_end(void)
{
	int by_calls = !strcmp(dcg_sink_option(), "calls");
	struct dcg_buf line = {0};

	for (uint32_t i = 0; i < dcg_paths_count(); i++) {
		const struct dcg_pnode *n = dcg_paths_node(i);
		uint64_t w = by_calls ? n->calls : n->self;
		if (n->parent == DCG_PNONE || !w)
			continue;
		line.n = 0;
		path_of(&line, i);
		dcg_buf_printf(&line, " %" PRIu64 "\n", w);
		dcg_out_buf(&line);
	}
	dcg_buf_free(&line);
	dcg_paths_free();
}

static const char *const folded_options[] = {"time", "calls", NULL};

const struct dcg_sink dcg_sink_folded = {
    .name = "folded",
    .record = dcg_paths_record,
    .end = folded_end,
    .ext = "folded",
    .closes_open = 1,
    .options = folded_options,
};
