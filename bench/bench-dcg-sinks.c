/* The call graph's output formats alone (bench/dcg-sinks-bench.sh): N
 * calls of a small function under a root, with a mid() every 1000 (as
 * testsuite/systemtap.dcg/dcg_scale.c makes them), given as records to
 * each format through the sinks' layer (dcg/sink_run.h), written to a
 * file: the time per record and the peak RSS, for tree, chrome, folded,
 * report, dot and graph. No tracing: what a format adds to a trace.
 *   bench-dcg-sinks N DIR   prints "FORMAT ns_per_record N bytes N rss_kb N" */
#define _GNU_SOURCE
#include "dcg/sink_run.h"
#include "lang/stp_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>

/* What the sinks use of the rest of the runtime. */
void _stp_print_n(struct _stp_context *c, const char *s, size_t n)
{
	(void)c;
	fwrite(s, 1, n, stdout);
}
void _stp_print_unit(const char *s, size_t n)
{
	fwrite(s, 1, n, stdout);
}
static void vmsg(const char *what, const char *fmt, va_list ap)
{
	fprintf(stderr, "%s: ", what);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}
void _stp_msg_error(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vmsg("ERROR", fmt, ap);
	va_end(ap);
	exit(1);
}
void _stp_msg_warn(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vmsg("WARNING", fmt, ap);
	va_end(ap);
}
int64_t _stp_error(struct _stp_context *c, const char *fmt, ...)
{
	(void)c;
	(void)fmt;
	return 0;
}
int64_t _stp_ctx_pid(struct _stp_context *c)
{
	(void)c;
	return 1;
}
int64_t _stp_ctx_tid(struct _stp_context *c)
{
	(void)c;
	return 1;
}

/* The overhead correction runs as in a trace, with a made-up figure. */
int64_t dcg_run_calibrate(char *how, size_t len)
{
	snprintf(how, len, "bench");
	return 10;
}

extern const struct dcg_sink dcg_sink_tree, dcg_sink_chrome, dcg_sink_folded, dcg_sink_dot,
    dcg_sink_report, dcg_sink_graph;
const struct dcg_sink *const dcg_sink_table[] = {
    &dcg_sink_tree, &dcg_sink_chrome, &dcg_sink_folded,
    &dcg_sink_dot,  &dcg_sink_report, &dcg_sink_graph,
};
const unsigned dcg_sink_count = sizeof dcg_sink_table / sizeof *dcg_sink_table;

#define SMALL \
	"small_callee_with_a_long_name_so_that_the_whole_trace_is_bigger_than_the_memory_bound"

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static struct dcg_sink_thread th = {4242, 4242, "dcg_scale"};
static uint64_t ns;

static void rec(enum dcg_rec_kind kind, uint32_t depth, const char *name)
{
	struct dcg_sink_rec r = {
	    .kind = kind,
	    .thread = &th,
	    .depth = depth,
	    .ns = ns,
	    .mono_ns = 1000000000u + ns,
	    .addr = 0x401000,
	    .name = name,
	    .func = name,
	    .module = "dcg_scale",
	    .is_main = 1,
	};
	ns += 37; /* any increasing time */
	dcg_run_record(&r);
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 500000;
	const char *dir = argc > 2 ? argv[2] : ".";
	const char *fmt = getenv("BENCH_FORMAT");
	char path[4096];

	if (!fmt || n < 1) {
		fprintf(stderr, "usage: BENCH_FORMAT=NAME %s N DIR\n", argv[0]);
		return 2;
	}
	snprintf(path, sizeof path, "%s/out.%s", dir, fmt);
	_stp_dcg_format(NULL, fmt);
	_stp_dcg_output(NULL, path);
	if (dcg_run_open() < 0)
		return 1;
	uint64_t t0 = now_ns(), records = 0;
	for (long batch = 0; batch * 4096 < 2 * n + 4096; batch++) {
		/* the core gives a thread's records in batches */
		dcg_run_thread(&th);
		for (long i = batch * 2048; i < n && i < (batch + 1) * 2048; i++) {
			if (i == 0) {
				rec(DCG_REC_CALL, 0, "root");
				records++;
			}
			rec(DCG_REC_CALL, 1, SMALL);
			rec(DCG_REC_RETURN, 1, SMALL);
			records += 2;
			if (i % 1000 == 999) {
				rec(DCG_REC_CALL, 1, "mid");
				rec(DCG_REC_CALL, 2, SMALL);
				rec(DCG_REC_RETURN, 2, SMALL);
				rec(DCG_REC_RETURN, 1, "mid");
				records += 4;
			}
		}
	}
	rec(DCG_REC_RETURN, 0, "root");
	records++;
	dcg_run_stop(&th, ns, 1000000000u + ns);
	dcg_run_finish();
	uint64_t t1 = now_ns();
	struct rusage ru;
	struct stat st;
	getrusage(RUSAGE_SELF, &ru);
	printf("%s ns_per_record %.1f bytes %lld rss_kb %ld records %llu\n", fmt,
	       (double)(t1 - t0) / (double)records,
	       stat(path, &st) == 0 ? (long long)st.st_size : -1LL, ru.ru_maxrss,
	       (unsigned long long)records);
	return 0;
}
