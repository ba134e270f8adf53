/* stap: the command-line driver. Parses the options into a session, runs
 * passes 1 to 5 in order (stopping after -p), prints SystemTap's per-pass
 * lines at -v and its "Pass N: ... failed" line when a pass fails, and
 * cleans up the temporary directory. Exit status 0 on success, 1 on any
 * failure, as SystemTap. */
#include "session.h"
#include "driver.h"
#include "options.h"
#include "diag.h"
#include "emit.h"
#include "ast.h"
#include "util.h"
#include "probe_kinds.h"
#include "run/sigstate.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <sys/times.h>
#include <unistd.h>

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

/* Global so that leak checkers see everything the passes hang off it: the
 * translator frees nothing, on purpose. */
static struct session the_session;

#ifdef STAP_SANITIZERS
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
	return "detect_leaks=0";
}
#endif

/* ---- per-pass measurements, in SystemTap's -v shape ---- */

struct pass_clock {
	struct tms tms;
	struct timeval tv;
};

static void clock_start(struct pass_clock *c)
{
	times(&c->tms);
	gettimeofday(&c->tv, NULL);
}

/* "in 10usr/0sys/12real ms.": CPU time includes children (the compiler). */
static void print_time_since(const struct pass_clock *c)
{
	struct pass_clock now;
	clock_start(&now);
	long hz = sysconf(_SC_CLK_TCK);
	clock_t u = now.tms.tms_utime + now.tms.tms_cutime - c->tms.tms_utime - c->tms.tms_cutime;
	clock_t k = now.tms.tms_stime + now.tms.tms_cstime - c->tms.tms_stime - c->tms.tms_cstime;
	long real = (now.tv.tv_sec - c->tv.tv_sec) * 1000 + (now.tv.tv_usec - c->tv.tv_usec) / 1000;
	fprintf(stderr, "in %ldusr/%ldsys/%ldreal ms.\n", (long)u * 1000 / hz, (long)k * 1000 / hz,
		real);
}

/* "using 1234virt/567res/89shr/12data kb, in 10usr/0sys/12real ms." */
static void print_usage_since(const struct pass_clock *c)
{
	long page_kb = sysconf(_SC_PAGESIZE) / 1024;
	long virt = 0, res = 0, shr = 0, text = 0, lib = 0, data = 0;
	FILE *f = fopen("/proc/self/statm", "r");
	if (f) {
		if (fscanf(f, "%ld %ld %ld %ld %ld %ld", &virt, &res, &shr, &text, &lib, &data) !=
		    6)
			virt = res = shr = data = 0;
		fclose(f);
	}
	fprintf(stderr, "using %ldvirt/%ldres/%ldshr/%lddata kb, ", virt * page_kb, res * page_kb,
		shr * page_kb, data * page_kb);
	print_time_since(c);
}

static const char *plural(int n, const char *one, const char *many)
{
	return n == 1 ? one : many;
}

/* ---- cleanup on signals during passes 1-4 ---- */

/* Only async-signal-safe calls: the signal may come inside malloc or
 * stdio, in any pass (pass 2 can run for minutes on a big binary). The
 * compiler of pass 4 goes too. */
static void cleanup_and_die(int sig)
{
	if (driver_child_pid > 0)
		kill(driver_child_pid, sig);
	the_session.keep_tmp = 0;
	driver_remove_tmpdir_now(&the_session);
	signal(sig, SIG_DFL);
	raise(sig);
}

/* As SystemTap, stap ends on these even where its caller ignores them
 * (a background job's SIGINT); what it runs still gets the caller's
 * dispositions (runtime/run/sigstate.h). SIGPIPE ignored stays ignored: a
 * write to a closed pipe is then an error like another. */
static void set_cleanup_signals(void)
{
	static const int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE};
	for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
		if (sigs[i] != SIGPIPE || !_stp_signal_caller_ignored(SIGPIPE))
			signal(sigs[i], cleanup_and_die);
}

/* ---- the passes ---- */

/* Passes print their own diagnostics; the driver adds the summary line. */
static int listing_mode; /* -l/-L: SystemTap prints no "Pass N: failed" */

static void pass_failed(int n, const char *what, const struct session *s)
{
	if (s->pass_aborted)
		return;
	if (listing_mode) {
		diag_print_suppressed();
		return;
	}
	fprintf(stderr, "Pass %d: %s failed.  [man error::pass%d]\n", n, what, n);
	diag_print_suppressed();
}

static int run_pass1(struct session *s)
{
	struct pass_clock c;
	clock_start(&c);
	int rc = pass1_parse(s);
	/* SystemTap prints a pass's line at -v whether it failed or not */
	if (s->verbose >= 1) {
		fprintf(stderr, "Pass 1: parsed user script and %d library scripts ",
			s->library_files.n);
		print_usage_since(&c);
	}
	if (rc)
		pass_failed(1, "parse", s);
	return rc;
}

static int run_pass2(struct session *s)
{
	struct pass_clock c;
	clock_start(&c);
	int rc = pass2_elaborate(s);
	if (s->verbose >= 1) {
		int np = s->probes.n, nf = s->functions.n, ne = s->embeds.n, ng = s->globals.n;
		fprintf(stderr, "Pass 2: analyzed script: %d %s, %d %s, %d %s, %d %s ", np,
			plural(np, "probe", "probes"), nf, plural(nf, "function", "functions"), ne,
			plural(ne, "embed", "embeds"), ng, plural(ng, "global", "globals"));
		print_usage_since(&c);
	}
	if (rc)
		pass_failed(2, "analysis", s);
	return rc;
}

static int run_pass3(struct session *s)
{
	struct pass_clock c;
	clock_start(&c);
	int rc = pass3_translate(s);
	if (s->verbose >= 1) {
		fprintf(stderr, "Pass 3: translated to C into \"%s\" ", s->c_file ? s->c_file : "");
		print_usage_since(&c);
	}
	if (rc)
		pass_failed(3, "translation", s);
	return rc;
}

static int run_pass4(struct session *s)
{
	struct pass_clock c;
	clock_start(&c);
	int rc = pass4_compile(s);
	if (rc) {
		pass_failed(4, "compilation", s);
		return rc;
	}
	if (s->verbose >= 1) {
		fprintf(stderr, "Pass 4: compiled C into \"%s\" ",
			s->object_file ? s->object_file : "");
		print_usage_since(&c);
	}
	return 0;
}

static int run_pass5(struct session *s)
{
	struct pass_clock c;
	if (s->verbose >= 1)
		fputs("Pass 5: starting run.\n", stderr);
	clock_start(&c);
	int rc = pass5_run(s);
	if (rc) {
		pass_failed(5, "run", s);
		return rc;
	}
	if (s->verbose >= 1) {
		fputs("Pass 5: run completed ", stderr);
		print_time_since(&c);
	}
	return 0;
}

static int run_passes_1_4(struct session *s)
{
	if (run_pass1(s))
		return 1;
	if (s->last_pass == 1)
		return 0;
	if (run_pass2(s))
		return 1;
	if (s->last_pass == 2)
		return 0;
	fflush(stdout);
	/* A cache hit skips passes 3 and 4 (and prints what they would). */
	if (!cache_lookup(s)) {
		if (run_pass3(s))
			return 1;
		if (s->last_pass == 3)
			return 0;
		fflush(stdout);
		if (run_pass4(s))
			return 1;
		cache_store(s);
	}
	return 0;
}

static int run_passes(struct session *s)
{
	if (run_passes_1_4(s))
		return 1;
	/* as SystemTap: the count of suppressed messages follows the
	 * translator's output, failed or not */
	fflush(stdout);
	diag_print_suppressed();
	if (s->last_pass <= 4)
		return 0;
	return run_pass5(s) ? 1 : 0;
}

/* ---- -l / -L ---- */

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* -L's variables of a resolved point (malloc'd, or NULL: none). */
static char *listing_vars(const struct derived_probe *dp)
{
	return pk_of(dp)->listing_vars ? pk_of(dp)->listing_vars(dp) : NULL;
}

/* As SystemTap: the pattern becomes the script "probe PATTERN {}", passes
 * 1 and 2 run with every point optional (nothing matched: no output, exit
 * 1, no message), and the resolved points' pn() texts (an alias's name,
 * else pp()) are printed sorted and without duplicates; -L adds each
 * point's variables. */
static int run_listing(struct session *s)
{
	s->script_text = xasprintf("probe %s {}", s->listing_pattern);
	s->script_file = NULL;
	s->last_pass = 3;   /* passes 1 and 2 print nothing; only they run */
	s->unoptimized = 1; /* keep the empty probes */
	listing_mode = 1;
	if (run_pass1(s))
		return 1;
	/* -E scripts may define what the pattern names (aliases,
	 * functions); their own probes are not listed */
	struct stapfile *ef;
	vec_foreach (struct stapfile *, ef, &s->extra_files)
		ef->probes.n = 0;
	struct probe *p;
	vec_foreach (struct probe *, p, &s->user_file->probes) {
		struct probe_point *pt;
		vec_foreach (struct probe_point *, pt, &p->points)
			pt->optional = 1;
	}
	if (run_pass2(s))
		return 1;
	struct vec lines = {0};
	for (int i = 0; i < s->probes.n; i++) {
		struct derived_probe *dp = s->probes.v[i];
		if (!dp->probe || dp->probe->id == -1 || !dp->pp)
			continue;
		/* internal kinds (the call graph's events) by their tapset
		 * aliases' names only */
		if ((pk_of(dp)->flags & PKF_INTERNAL) && !dp->pn)
			continue;
		char *vars = NULL;
		if (s->listing == 2) {
			/* an alias's locals come first, as SystemTap lists them */
			struct strbuf b = {0};
			const struct vardecl *v;
			if (dp->pn)
				vec_foreach (const struct vardecl *, v, &dp->probe->locals)
					sb_printf(&b, " %s:%s", v->name, exp_type_name(v->type));
			char *tv = listing_vars(dp);
			sb_puts(&b, tv ? tv : "");
			free(tv);
			vars = sb_take(&b);
		}
		/* SystemTap lists the script-level point: an alias by its name */
		vec_push(&lines,
			 xasprintf("%s%s",
				   dp->pn	      ? dp->pn
				       : dp->point_pn ? dp->point_pn
						      : dp->pp,
				   vars ? vars : ""));
		free(vars);
	}
	if (!lines.n)
		return 1;
	qsort(lines.v, lines.n, sizeof *lines.v, cmp_str);
	for (int i = 0; i < lines.n; i++)
		if (!i || strcmp(lines.v[i], lines.v[i - 1]))
			puts(esc_visible(lines.v[i]));
	fflush(stdout);
	return 0;
}

/* ---- stdout: a write error is an error, with its cause ---- */

static int stdout_errno; /* the first write error */

static ssize_t stdout_write(void *cookie, const char *buf, size_t len)
{
	size_t done = 0;
	(void)cookie;
	while (done < len) {
		ssize_t n = write(STDOUT_FILENO, buf + done, len - done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (!stdout_errno)
				stdout_errno = n < 0 ? errno : EIO;
			return -1;
		}
		done += (size_t)n;
	}
	return (ssize_t)len;
}

/* stdio forgets why a write failed; this stream remembers. */
static void watch_stdout(void)
{
	static const cookie_io_functions_t io = {.write = stdout_write};
	FILE *f = fopencookie(NULL, "w", io);
	if (f) {
		setvbuf(f, NULL, isatty(STDOUT_FILENO) ? _IOLBF : _IOFBF, BUFSIZ);
		stdout = f;
	}
}

/* Output that could not be written (a full disk, /dev/full) is an error,
 * whatever else went well; a reader gone away (EPIPE) ends stap by SIGPIPE
 * before this, unless the caller ignores SIGPIPE. */
static int finish_stdout(int rc)
{
	if (fflush(stdout) == 0 && !ferror(stdout) && !stdout_errno)
		return rc;
	fprintf(stderr, "ERROR: couldn't write output: %s\n",
		strerror(stdout_errno ? stdout_errno : EIO));
	return 1;
}

int main(int argc, char **argv)
{
	struct session *s = &the_session;

	_stp_signals_save();
	watch_stdout();
	switch (options_parse(s, argc, argv)) {
	case OPTIONS_EXIT0:
		return finish_stdout(0);
	case OPTIONS_EXIT1:
		return 1;
	case OPTIONS_RUN:
		break;
	}
	msg_verbose = s->verbose;
	msg_suppress_warnings = s->suppress_warnings;
	driver_locate(s);
	if (s->runtime_dir_opt) /* -R DIR: where stap_runtime.h is */
		s->runtime_include_dir = s->runtime_dir_opt;
	s->cache_dir = options_disable_cache ? NULL : cache_default_dir();
	if (s->clean_cache)
		return cache_clean(s);
	if (s->user_module) { /* -m NAME names the object: no cache entry */
		s->cache_dir = NULL;
		s->module_name = s->user_module;
	}

	set_cleanup_signals();
	if (driver_make_tmpdir(s))
		return 1;
	int rc = s->dump ? driver_dump(s) : s->listing ? run_listing(s) : run_passes(s);
	rc = finish_stdout(rc);
	driver_remove_tmpdir(s);
	return rc;
}
