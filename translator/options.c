/* Command-line parsing for stap. Options follow `man stap`; the rest of
 * SystemTap's options (options_compat.c) do what they mean for user space
 * or are refused with the reason (doc/options.md). */
#include "options.h"

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"

int options_disable_cache;

static const char short_opts[] = "hVvp:I:D:G:guwWko:T:c:x:e:E:l:L:r:m:R:a:B:bs:tPiFS:d:Cq";

/* Every option of SystemTap 4.8's stap, with what it does here: see the
 * table in doc/options.md. */
static const struct option long_opts[] = {
    {"help", no_argument, NULL, 'h'},
    {"version", no_argument, NULL, 'V'},
    {"interactive", no_argument, NULL, 'i'},
    {"skip-badvars", no_argument, NULL, OPT_SKIP_BADVARS},
    {"vp", required_argument, NULL, OPT_VP},
    {"debug", required_argument, NULL, OPT_DEBUG},
    {"disable-cache", no_argument, NULL, OPT_DISABLE_CACHE},
    {"poison-cache", no_argument, NULL, OPT_POISON_CACHE},
    {"clean-cache", no_argument, NULL, OPT_CLEAN_CACHE},
    {"runtime", required_argument, NULL, OPT_RUNTIME},
    {"dyninst", no_argument, NULL, OPT_DYNINST},
    {"suppress-handler-errors", no_argument, NULL, OPT_SUPPRESS_HANDLER_ERRORS},
    {"suppress-time-limits", no_argument, NULL, OPT_SUPPRESS_TIME_LIMITS},
    {"no-global-var-display", no_argument, NULL, OPT_NO_GLOBAL_VAR_DISPLAY},
    {"prologue-searching", optional_argument, NULL, OPT_PROLOGUE},
    {"compatible", required_argument, NULL, OPT_COMPATIBLE},
    {"color", optional_argument, NULL, OPT_COLOR},
    {"colour", optional_argument, NULL, OPT_COLOR},
    {"remote", required_argument, NULL, OPT_REMOTE},
    {"download-debuginfo", optional_argument, NULL, OPT_DOWNLOAD_DEBUGINFO},
    {"rlimit-as", required_argument, NULL, OPT_RLIMIT_AS},
    {"rlimit-cpu", required_argument, NULL, OPT_RLIMIT_CPU},
    {"rlimit-nproc", required_argument, NULL, OPT_RLIMIT_NPROC},
    {"rlimit-stack", required_argument, NULL, OPT_RLIMIT_STACK},
    {"rlimit-fsize", required_argument, NULL, OPT_RLIMIT_FSIZE},
    {"ldd", no_argument, NULL, OPT_SYMBOLS},
    {"dump-functions", no_argument, NULL, OPT_DUMP_FUNCTIONS},
    {"dump-probe-types", no_argument, NULL, OPT_DUMP_PROBE_TYPES},
    {"dump-probe-aliases", no_argument, NULL, OPT_DUMP_PROBE_ALIASES},
    /* refused: each has its reason in refusals[] */
    {"all-modules", no_argument, NULL, OPT_UNSUPPORTED},
    {"check-version", no_argument, NULL, OPT_UNSUPPORTED},
    {"save-uprobes", no_argument, NULL, OPT_UNSUPPORTED},
    {"modinfo", required_argument, NULL, OPT_UNSUPPORTED_ARG},
    {"privilege", optional_argument, NULL, OPT_UNSUPPORTED},
    {"unprivileged", no_argument, NULL, OPT_UNSUPPORTED},
    {"use-server", optional_argument, NULL, OPT_UNSUPPORTED},
    {"use-server-on-error", optional_argument, NULL, OPT_UNSUPPORTED},
    {"list-servers", optional_argument, NULL, OPT_UNSUPPORTED},
    {"trust-servers", optional_argument, NULL, OPT_UNSUPPORTED},
    {"sign-module", optional_argument, NULL, OPT_UNSUPPORTED},
    {"remote-prefix", no_argument, NULL, OPT_UNSUPPORTED},
    {"sysroot", required_argument, NULL, OPT_UNSUPPORTED_ARG},
    {"sysenv", required_argument, NULL, OPT_UNSUPPORTED_ARG},
    {"bpf", no_argument, NULL, OPT_UNSUPPORTED},
    {"target-namespaces", required_argument, NULL, OPT_UNSUPPORTED_ARG},
    {"monitor", optional_argument, NULL, OPT_UNSUPPORTED},
    {"example", no_argument, NULL, OPT_UNSUPPORTED},
    {"tmpdir", required_argument, NULL, OPT_UNSUPPORTED_ARG},
    {NULL, 0, NULL, 0},
};

static void usage(FILE *f)
{
	fprintf(f,
		"ustap %s: a SystemTap-compatible tracer for user-space processes\n"
		"\n"
		"Usage: stap [options] FILE|-     [ARGS]   run a script from a file or stdin\n"
		"   or: stap [options] -e SCRIPT  [ARGS]   run a script given as text\n"
		"\n"
		"Options:\n"
		"   --         no more options after this\n"
		"   -p NUM     stop after pass NUM 1-5 (parse, elaborate, translate,\n"
		"              compile, run) and print that pass's result\n"
		"   -v         more verbose (per-pass times); repeat for more\n"
		"   --vp ABCDE verbosity per pass\n"
		"   -h --help  this text\n"
		"   -V --version\n"
		"   -k         keep the temporary directory\n"
		"   -g         guru mode: embedded C in the user script\n"
		"   -u         unoptimized: keep unused code, no elision warnings\n"
		"   -w         no warnings\n"
		"   -W         warnings are errors\n"
		"   -I DIR     look in DIR for more tapset scripts\n"
		"   -D NM=VAL  set a C macro of the compiled script (MAXACTION, ...)\n"
		"   -G VAR=VAL set a global variable's initial value at run time\n"
		"   -e SCRIPT  the script text itself\n"
		"   -o FILE    write the script's output to FILE\n"
		"   -T TIME    stop after TIME seconds\n"
		"   -c CMD     run CMD under the script, stop when it ends\n"
		"   -x PID     target() is PID\n"
		"   -l PROBE   list matching probe points\n"
		"   -L PROBE   list them with their variables\n"
		"   --skip-badvars  replace unresolvable target variables by 0\n"
		"   --disable-cache don't use the cache of compiled scripts\n"
		"   -E SCRIPT  one more script (repeatable)\n"
		"   -t         probe hit counts and times at the end\n"
		"   -S SIZE[,N] switch -o FILE to FILE.0, FILE.1... at SIZE MB\n"
		"   --debug=LIST    translator debug output: lexer,parse,elaborate,\n"
		"                   translate,compile,cache; the runtime's (pass 5):\n"
		"                   ptrace,bkpt,dcg,sym,transport, each with an optional\n"
		"                   :LEVEL (1-9, doc/debug-domains.md)\n"
		"\n"
		"SystemTap's other options do what they mean for user space, or are\n"
		"refused with the reason (doc/options.md has the table). See `man stap`\n"
		"for the language.\n",
		PACKAGE_VERSION);
}

static void version(void)
{
	printf("ustap translator/driver (version %s)\n"
	       "Compatible with the SystemTap language version 4.8, for user-space\n"
	       "processes (no kernel module, no kernel probes).\n"
	       "This is free software; see the source for copying conditions.\n",
	       PACKAGE_VERSION);
}

static int bad_usage(void)
{
	fputs("Try '--help' for more information. [man stap]\n", stderr);
	return OPTIONS_EXIT1;
}

/* SystemTap's safety patterns for -D and -G values, case-insensitively:
 * -D ^[a-z_][a-z_0-9]*(=-?[a-z_0-9]+)?$  -G ^[a-z_][a-z0-9_]*=[a-z0-9_.-]+$ */
static int ident_start(int c)
{
	return isalpha(c) || c == '_';
}
static int ident_char(int c)
{
	return isalnum(c) || c == '_';
}

static int define_ok(const char *p)
{
	if (!ident_start((unsigned char)*p))
		return 0;
	while (ident_char((unsigned char)*p))
		p++;
	if (!*p)
		return 1;
	if (*p++ != '=')
		return 0;
	if (*p == '-')
		p++;
	if (!*p)
		return 0;
	while (ident_char((unsigned char)*p))
		p++;
	return !*p;
}

static int gset_ok(const char *p)
{
	if (!ident_start((unsigned char)*p))
		return 0;
	while (ident_char((unsigned char)*p))
		p++;
	if (*p++ != '=' || !*p)
		return 0;
	for (; *p; p++)
		if (!ident_char((unsigned char)*p) && *p != '.' && *p != '-')
			return 0;
	return 1;
}

/* The limits the generated code and the runtime read from -D, with the
 * values they work with: MAXACTION_INTERRUPTIBLE defaults to MAXACTION * 10
 * (so it must not overflow), MAXNESTING is a C call depth (about 100
 * bytes of stack a level), MAXSTRINGLEN sizes buffers, some on the stack
 * (so at most 1 MiB), and the histogram bounds are the runtime's. */
static const struct limit {
	const char *name;
	long long lo, hi;
} limits[] = {
    {"MAXACTION", 1, LLONG_MAX / 10}, {"MAXACTION_INTERRUPTIBLE", 1, LLONG_MAX},
    {"MAXNESTING", 1, 10000},	      {"MAXSTRINGLEN", 2, 1 << 20},
    {"MAXMAPENTRIES", 1, LLONG_MAX},  {"MAXERRORS", 0, LLONG_MAX},
    {"MAXSKIPPED", 0, LLONG_MAX},     {"MAXTRYCATCH", 0, LLONG_MAX},
    {"HIST_WIDTH", 1, 100000},	      {"HIST_ELISION", -100000, 100000},
    {"STP_CPU_AFFINITY", 0, 2},	      {"MAXATTACH", 0, LLONG_MAX},
};

/* A C integer constant: -?(0x[0-9a-f]+|[0-9]+)[ul]*, any case. */
static int c_integer(const char *p)
{
	if (*p == '-')
		p++;
	const char *digits = "0123456789";
	if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) {
		p += 2;
		digits = "0123456789abcdefABCDEF";
	}
	size_t n = strspn(p, digits);
	return n > 0 && p[n + strspn(p + n, "uUlL")] == 0;
}

/* Its value as the compiler reads it (0x hex, 0 octal); -1 when it is no
 * C integer or does not fit. */
static int c_integer_value(const char *v, long long *out)
{
	errno = 0;
	*out = c_integer(v) ? strtoll(v, NULL, 0) : 0;
	return c_integer(v) && !errno ? 0 : -1;
}

/* NAME[=VALUE] within its limit (-DNAME alone is 1, as for the compiler).
 * A value that is no integer is define_allowed's business: refused, or
 * the guru's own C. */
static int limit_ok(const char *arg, const char *eq)
{
	size_t n = eq ? (size_t)(eq - arg) : strlen(arg);
	for (size_t i = 0; i < sizeof limits / sizeof limits[0]; i++) {
		const struct limit *l = &limits[i];
		long long v = 1;
		if (strlen(l->name) != n || strncmp(l->name, arg, n))
			continue;
		if (eq && !c_integer(eq + 1))
			return 1;
		if ((!eq || c_integer_value(eq + 1, &v) == 0) && v >= l->lo && v <= l->hi)
			return 1;
		fprintf(stderr,
			"ERROR: Invalid -D value '%s': %s must be an integer from %lld to %lld\n",
			arg, l->name, l->lo, l->hi);
		return 0;
	}
	return 1;
}

/* NAME=TEXT for a -D whose value is a string (session_define_is_string):
 * any bytes but none, as they only reach the C through emit_cstr. */
static int string_define_ok(const char *arg)
{
	const char *eq = strchr(arg, '=');
	if (!eq)
		return 0;
	char *name = xstrndup(arg, (size_t)(eq - arg));
	int ok = session_define_is_string(name);
	free(name);
	return ok;
}

static int add_define(struct session *s, const char *arg)
{
	if (string_define_ok(arg)) {
		const char *eq = strchr(arg, '=');
		if (!eq[1]) {
			fprintf(stderr, "ERROR: -D %.*s= needs a value\n", (int)(eq - arg), arg);
			return -1;
		}
	} else if (!define_ok(arg)) {
		fprintf(stderr,
			"ERROR: Safety pattern mismatch for -D parameter ('%s' vs. "
			"'^[a-z_][a-z_0-9]*(=-?[a-z_0-9]+)?$')\n",
			arg);
		return -1;
	}
	if (!limit_ok(arg, strchr(arg, '=')))
		return -1;
	struct define *d = xcalloc(1, sizeof(*d));
	const char *eq = strchr(arg, '=');
	d->name = eq ? xstrndup(arg, eq - arg) : xstrdup(arg);
	d->value = eq ? xstrdup(eq + 1) : NULL;
	vec_push(&s->defines, d);
	return 0;
}

/* A -D value is pasted into the C as a macro body: an identifier there
 * could rename a runtime function, an enum constant or a keyword, which
 * is embedded C by another name. So without guru mode a value is an
 * integer, except for the knobs the tapset turns into text. */
static const char *const text_defines[] = {"STP_DCG_MECHANISM", NULL};

static int define_allowed(const struct session *s, const struct define *d)
{
	if (s->guru || !d->value || c_integer(d->value) || session_define_is_string(d->name))
		return 1;
	for (int i = 0; text_defines[i]; i++)
		if (!strcmp(d->name, text_defines[i]))
			return 1;
	return 0;
}

static int defines_allowed(const struct session *s)
{
	const struct define *d;
	vec_foreach (const struct define *, d, &s->defines)
		if (!define_allowed(s, d)) {
			fprintf(stderr,
				"ERROR: -D %s=%s: only an integer value is allowed without -g "
				"(guru mode)\n",
				d->name, d->value);
			return 0;
		}
	return 1;
}

static int add_gset(struct session *s, const char *arg)
{
	if (!gset_ok(arg)) {
		fprintf(stderr,
			"ERROR: Safety pattern mismatch for -G parameter ('%s' vs. "
			"'^[a-z_][a-z0-9_]*=[a-z0-9_.-]+$')\n",
			arg);
		return -1;
	}
	struct gset *g = xcalloc(1, sizeof(*g));
	const char *eq = strchr(arg, '=');
	g->name = xstrndup(arg, eq - arg);
	g->value = xstrdup(eq + 1);
	vec_push(&s->gsets, g);
	return 0;
}

/* A whole decimal number in [lo, hi], or -1. */
static long parse_num(const char *arg, long lo, long hi)
{
	char *end;
	errno = 0;
	long v = strtol(arg, &end, 10);
	if (errno || end == arg || *end || v < lo || v > hi)
		return -1;
	return v;
}

static int set_script_text(struct session *s, const char *text)
{
	if (s->script_text || s->script_file) {
		fputs("Only one script can be given on the command line.\n", stderr);
		return -1;
	}
	s->script_text = text;
	return 0;
}

/* Read the script from stdin ("-"); SystemTap names it "<input>" too. */
static int read_stdin_script(struct session *s)
{
	struct strbuf b = {0};
	char buf[4096];
	size_t n;
	while ((n = fread(buf, 1, sizeof(buf), stdin)) > 0)
		sb_putn(&b, buf, n);
	if (ferror(stdin)) {
		fprintf(stderr, "Input file '-' could not be read: %s\n", strerror(errno));
		return -1;
	}
	s->script_text = sb_take(&b);
	return 0;
}

static int handle_option(struct session *s, int c, const char *arg, const char *optname)
{
	long v;
	switch (c) {
	case 'h':
		usage(stdout);
		return OPTIONS_EXIT0;
	case 'V':
		version();
		return OPTIONS_EXIT0;
	case 'v':
		s->verbose++;
		s->verbose_pass5++;
		break;
	case OPT_VP:
		/* one digit per pass; we keep one level: the highest */
		for (const char *p = arg; *p; p++) {
			if (!isdigit((unsigned char)*p) || p - arg >= 5) {
				fputs("Invalid --vp argument: it takes 1 to 5 digits.\n", stderr);
				return OPTIONS_EXIT1;
			}
			if (*p - '0' > s->verbose)
				s->verbose = *p - '0';
			/* staprun's verbosity: pass 5's digit only */
			if (p - arg == 4 && *p - '0' > s->verbose_pass5)
				s->verbose_pass5 = *p - '0';
		}
		break;
	case 'p':
		v = parse_num(arg, 1, 5);
		if (v < 0) {
			fputs("Invalid pass number (should be 1-5).\n", stderr);
			return OPTIONS_EXIT1;
		}
		s->last_pass = (int)v;
		break;
	case 'I':
		vec_push(&s->include_dirs, xstrdup(arg));
		break;
	case 'D':
		if (add_define(s, arg))
			return OPTIONS_EXIT1;
		break;
	case 'G':
		if (add_gset(s, arg))
			return OPTIONS_EXIT1;
		break;
	case 'g':
		s->guru = 1;
		break;
	case 'u':
		s->unoptimized = 1;
		break;
	case 'w':
		s->suppress_warnings = 1;
		break;
	case 'W':
		s->warnings_as_errors = 1;
		break;
	case 'k':
		s->keep_tmp = 1;
		break;
	case 'o':
		s->output_file = arg;
		break;
	case 'T':
		v = parse_num(arg, 1, INT_MAX);
		if (v < 0) {
			fputs("Invalid timeout interval.\n", stderr);
			return OPTIONS_EXIT1;
		}
		s->timeout_s = (int)v;
		break;
	case 'c':
		s->target_cmd = arg;
		break;
	case 'x':
		v = parse_num(arg, 1, INT_MAX);
		if (v < 0) {
			fputs("Invalid target process ID number.\n", stderr);
			return OPTIONS_EXIT1;
		}
		s->target_pid = v;
		break;
	case 'e':
		if (set_script_text(s, arg))
			return OPTIONS_EXIT1;
		break;
	case 'E':
		vec_push(&s->extra_scripts, (void *)arg);
		break;
	case 'l':
	case 'L':
		s->listing = c == 'l' ? 1 : 2;
		s->listing_pattern = arg;
		break;
	case OPT_SKIP_BADVARS:
		s->skip_badvars = 1;
		break;
	case OPT_DEBUG:
		if (debug_enable(arg)) {
			fprintf(stderr,
				"Invalid --debug list '%s': domains are lexer, parse, "
				"elaborate, translate, compile, cache, ptrace, bkpt, dcg, sym, "
				"transport, all, each with an optional :LEVEL (1-9).\n",
				arg);
			return OPTIONS_EXIT1;
		}
		break;
	case OPT_DISABLE_CACHE:
		options_disable_cache = 1;
		break;
	case 'a':
		if (strcmp(arg, "x86_64") != 0) {
			fprintf(stderr,
				"ERROR: architecture '%s' is not supported (only x86_64).\n", arg);
			return OPTIONS_EXIT1;
		}
		break;
	default:
		/* the rest of SystemTap's options (options_compat.c) */
		switch (options_compat(s, c, arg, optname)) {
		case 0:
			break;
		case 1:
			return OPTIONS_EXIT1;
		default:
			return bad_usage();
		}
	}
	return OPTIONS_RUN;
}

/* The option's spelling as the user gave it, for messages. */
static const char *option_name(int c, int long_index, char *buf, size_t n)
{
	if (long_index >= 0)
		snprintf(buf, n, "--%s", long_opts[long_index].name);
	else
		snprintf(buf, n, "-%c", c);
	return buf;
}

enum options_result options_parse(struct session *s, int argc, char **argv)
{
	int c, long_index;
	char name[64];

	s->last_pass = 5;
	argv[0] = "stap"; /* getopt names the program in its messages */
	opterr = 1;
	for (;;) {
		long_index = -1;
		c = getopt_long(argc, argv, short_opts, long_opts, &long_index);
		if (c == -1)
			break;
		if (c == '?')
			return bad_usage();
		enum options_result r =
		    handle_option(s, c, optarg, option_name(c, long_index, name, sizeof(name)));
		if (r != OPTIONS_RUN)
			return r;
	}

	int i = optind;
	if (!s->script_text && i < argc) {
		const char *f = argv[i++];
		if (strcmp(f, "-") == 0) {
			if (read_stdin_script(s))
				return OPTIONS_EXIT1;
		} else {
			s->script_file = f;
		}
	}
	for (; i < argc; i++)
		vec_push(&s->args, xstrdup(argv[i]));

	if (!s->script_text && !s->script_file && !s->listing && !s->dump && !s->clean_cache) {
		fputs("A script must be specified.\n", stderr);
		return bad_usage();
	}
	if (s->target_cmd && s->target_pid) {
		fputs("You can't specify -c and -x options together.\n", stderr);
		return bad_usage();
	}
	if (!defines_allowed(s))
		return OPTIONS_EXIT1;
	if (s->warnings_as_errors && s->suppress_warnings) {
		/* SystemTap lets -w win; so do we */
		s->warnings_as_errors = 0;
	}
	return OPTIONS_RUN;
}
