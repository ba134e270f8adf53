/* The options of SystemTap's stap beyond the common ones: each either does
 * what it means for user-space tracing or is refused with its reason,
 * never accepted and ignored; values are checked as SystemTap 4.8 checks
 * them, with its messages. doc/options.md has the table. */
#include "options.h"
#include "dwarf_query.h"

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

/* Why an option is refused. */
static const struct {
	const char *opt, *why;
} refusals[] = {
    {"-b", "bulk mode writes the kernel's per-CPU relay buffers; use -o FILE"},
    {"-i", "there is no interactive mode; write the script to a file"},
    {"-F", "flight-recorder mode leaves a kernel module loaded"},
    {"-q", "tapset coverage is not recorded"},
    {"--all-modules", "it adds the symbols of kernel modules"},
    {"--check-version", "version-dependent constructs are not reported"},
    {"--save-uprobes", "no uprobes kernel module is built"},
    {"--modinfo", "it adds MODULE_INFO to a kernel module"},
    {"--privilege", "scripts run with the privileges of the user running stap"},
    {"--unprivileged", "scripts run with the privileges of the user running stap"},
    {"--sign-module", "no kernel module is built"},
    {"--remote-prefix", "scripts run on this host only"},
    {"--sysroot", "probed programs are found in this host's file system"},
    {"--sysenv", "probed programs are found in this host's file system"},
    {"--target-namespaces", "namespace-aware tapset functions are not implemented"},
    {"--monitor", "there is no monitor interface"},
    {"--example", "give the example script's path"},
    {"--tmpdir", "the temporary directory is made under $TMPDIR"},
    {NULL, NULL},
};

static int refuse(const char *optname)
{
	for (int i = 0; refusals[i].opt; i++)
		if (!strcmp(refusals[i].opt, optname)) {
			fprintf(stderr,
				"ERROR: option %s is not supported by this implementation "
				"(user-space tracing only): %s.\n",
				optname, refusals[i].why);
			return 1;
		}
	fprintf(stderr,
		"ERROR: option %s is not supported by this implementation (user-space "
		"tracing only).\n",
		optname);
	return 1;
}

/* A version's numbers compared one by one ("4.10" > "4.8"). */
static int version_cmp(const char *a, const char *b)
{
	while (*a || *b) {
		if (isdigit((unsigned char)*a) && isdigit((unsigned char)*b)) {
			char *ea, *eb;
			unsigned long x = strtoul(a, &ea, 10), y = strtoul(b, &eb, 10);
			if (x != y)
				return x < y ? -1 : 1;
			a = ea, b = eb;
		} else if (*a != *b) {
			return (unsigned char)*a < (unsigned char)*b ? -1 : 1;
		} else {
			a++, b++;
		}
	}
	return 0;
}

/* ^[0-9]+(,[0-9]+)?$ */
static int switch_spec_ok(const char *p)
{
	size_t n = strspn(p, "0123456789");
	if (!n)
		return 0;
	p += n;
	if (*p == ',') {
		n = strspn(++p, "0123456789");
		if (!n)
			return 0;
		p += n;
	}
	return !*p;
}

/* -m: ^[a-z0-9_]+$ (any case), cut to 55 characters as SystemTap's
 * module names are. */
static int set_module_name(struct session *s, const char *arg)
{
	const char *p = arg;
	while (isalnum((unsigned char)*p) || *p == '_')
		p++;
	if (!*arg || *p) {
		fprintf(stderr,
			"ERROR: Safety pattern mismatch for -m parameter ('%s' vs. "
			"'^[a-z0-9_]+$')\n",
			arg);
		return 1;
	}
	if (strlen(arg) > 55) {
		s->user_module = xstrndup(arg, 55);
		fprintf(stderr, "Truncating module name to '%s'\n", s->user_module);
	} else {
		s->user_module = arg;
	}
	return 0;
}

/* -r RELEASE, or -r DIR: a kernel build tree's include/config/kernel.release */
static int set_release(struct session *s, const char *arg)
{
	if (arg[0] != '/') {
		s->kernel_release = arg;
		return 0;
	}
	char *path = xasprintf("%s/include/config/kernel.release", arg);
	char *text = read_file(path, NULL);
	free(path);
	if (text)
		text[strcspn(text, "\n")] = '\0';
	if (!text || !*text) {
		fprintf(stderr, "ERROR: kernel release isn't found in \"%s\"\n", arg);
		return 1;
	}
	s->kernel_release = text;
	return 0;
}

static const struct {
	int code, resource;
	const char *name;
} rlimits[] = {
    {OPT_RLIMIT_AS, RLIMIT_AS, "rlimit-as"},
    {OPT_RLIMIT_CPU, RLIMIT_CPU, "rlimit-cpu"},
    {OPT_RLIMIT_NPROC, RLIMIT_NPROC, "rlimit-nproc"},
    {OPT_RLIMIT_STACK, RLIMIT_STACK, "rlimit-stack"},
    {OPT_RLIMIT_FSIZE, RLIMIT_FSIZE, "rlimit-fsize"},
};

/* --rlimit-X=NUM: strtoul's number (so "-1" is unlimited), set as the
 * soft and hard limit of stap, which the compiler, staprun and the -c
 * command inherit. */
static int set_rlimit(int code, const char *arg)
{
	size_t i = 0;
	while (rlimits[i].code != code)
		i++;
	if (!*arg) {
		fprintf(stderr, "An --%s option value must be specified.\n", rlimits[i].name);
		return 1;
	}
	char *end;
	errno = 0;
	unsigned long v = strtoul(arg, &end, 10);
	if (*end || end == arg) {
		if (code == OPT_RLIMIT_AS) /* SystemTap's one message of its own */
			fprintf(stderr, "Unable to convert rlimit-as resource limit '%s'.\n", arg);
		else
			fprintf(stderr, "Unable to convert resource limit '%s' for %s\n", arg,
				rlimits[i].name);
		return 1;
	}
	struct rlimit rl = {(rlim_t)v, (rlim_t)v};
	if (setrlimit(rlimits[i].resource, &rl) != 0) {
		fprintf(stderr, "Unable to set resource limits for %s : %s\n", rlimits[i].name,
			strerror(errno));
		return 1;
	}
	return 0;
}

/* --remote URL: direct:// is SystemTap's loopback, the local host. */
static int set_remote(const char *arg)
{
	if (!strcmp(arg, "direct://"))
		return 0;
	fprintf(stderr,
		"ERROR: --remote %s: scripts run on this host only (--remote direct:// is "
		"the local host)\n",
		arg);
	return 1;
}

static int one_of(const char *arg, const char *const *words)
{
	for (int i = 0; words[i]; i++)
		if (!strcmp(arg, words[i]))
			return i;
	return -1;
}

static int set_prologue(const char *arg)
{
	static const char *const modes[] = {"auto", "always", "never", NULL};
	int k = arg ? one_of(arg, modes) : 1;
	if (k < 0) {
		fprintf(stderr, "Invalid argument '%s' for --prologue-searching.\n", arg);
		return 1;
	}
	dwq_prologue_default = k == 0 ? DWQ_PROLOGUE_AUTO
	    : k == 1		      ? DWQ_PROLOGUE_ALWAYS
				      : DWQ_PROLOGUE_NEVER;
	return 0;
}

/* Messages have no colours: "never" and "auto" (never a terminal's
 * colour codes here) are what they say; "always" cannot be kept. */
static int set_color(const char *arg, const char *optname)
{
	static const char *const whens[] = {"never", "auto", "always", NULL};
	int k = arg ? one_of(arg, whens) : 2;
	if (k < 0) {
		fprintf(stderr, "Invalid argument '%s' for --color.\n", arg);
		return 1;
	}
	if (k == 2) {
		fprintf(stderr,
			"ERROR: option %s=always is not supported by this implementation "
			"(user-space tracing only): messages have no colours.\n",
			optname);
		return 1;
	}
	return 0;
}

/* Debug info is found on this host; there is no ABRT to fetch it. */
static int set_download(const char *arg)
{
	char *end;
	if (arg && strcmp(arg, "yes") && strcmp(arg, "no") && strcmp(arg, "ask") &&
	    (strtol(arg, &end, 10) <= 0 || *end)) {
		fprintf(stderr,
			"ERROR: %s is not a valid value. Use 'yes', 'no', 'ask' or a timeout "
			"value.\n",
			arg);
		return 1;
	}
	if (arg && !strcmp(arg, "no"))
		return 0;
	fputs("ERROR: option --download-debuginfo is not supported by this implementation "
	      "(user-space tracing only): debug info is read from this host's files.\n",
	      stderr);
	return 1;
}

int options_compat(struct session *s, int c, const char *arg, const char *optname)
{
	long v;
	char *end;

	switch (c) {
	case 't':
		s->timing = 1;
		return 0;
	case OPT_SUPPRESS_HANDLER_ERRORS:
		s->suppress_handler_errors = 1;
		return 0;
	case OPT_NO_GLOBAL_VAR_DISPLAY:
		s->no_global_var_display = 1;
		return 0;
	case OPT_POISON_CACHE:
		s->poison_cache = 1;
		return 0;
	case OPT_CLEAN_CACHE:
		s->clean_cache = 1;
		return 0;
	case 's':
		errno = 0;
		v = strtol(arg, &end, 10);
		if (errno || end == arg || *end || v < 1 || v > 4095) {
			fputs("Invalid buffer size (should be 1-4095).\n", stderr);
			return 1;
		}
		s->bufsize_mb = (int)v;
		return 0;
	case 'S':
		if (!switch_spec_ok(arg)) {
			fprintf(stderr,
				"ERROR: Safety pattern mismatch for -S parameter ('%s' vs. "
				"'^[0-9]+(,[0-9]+)?$')\n",
				arg);
			return 1;
		}
		s->switch_spec = arg;
		return 0;
	case 'm':
		return set_module_name(s, arg);
	case 'r':
		return set_release(s, arg);
	case 'R':
		s->runtime_dir_opt = arg;
		return 0;
	case 'B':
		vec_push(&s->cflags, (void *)arg);
		return 0;
	case 'd': /* symbols come from every module mapped in the target */
	case OPT_SYMBOLS:
		return 0;
	case 'P':
		return set_prologue(NULL);
	case OPT_PROLOGUE:
		return set_prologue(arg);
	case OPT_COMPATIBLE:
		if (version_cmp(arg, "4.8") > 0) {
			fprintf(stderr,
				"ERROR: systemtap version 4.8 cannot be compatible with future "
				"version %s\n",
				arg);
			return 1;
		}
		s->compat_version = arg;
		return 0;
	case OPT_SUPPRESS_TIME_LIMITS:
		if (!s->guru) {
			fputs("ERROR --suppress-time-limits requires guru mode (-g)\n", stderr);
			return 1;
		}
		s->suppress_time_limits = 1;
		return 0;
	case OPT_RUNTIME:
		if (strcmp(arg, "kernel") && strcmp(arg, "dyninst") && strcmp(arg, "bpf")) {
			fprintf(stderr, "ERROR: %s is an invalid argument for --runtime\n", arg);
			return 1;
		}
		if (strcmp(arg, "dyninst") != 0) {
			fprintf(stderr,
				"ERROR: --runtime=%s is not available: this stap has one "
				"runtime, for user-space processes.\n",
				arg);
			return 1;
		}
		return 0;
	case OPT_DYNINST: /* the user-space runtime: this one */
		return 0;
	case OPT_COLOR:
		return set_color(arg, optname);
	case OPT_REMOTE:
		return set_remote(arg);
	case OPT_DOWNLOAD_DEBUGINFO:
		return set_download(arg);
	case OPT_RLIMIT_AS:
	case OPT_RLIMIT_CPU:
	case OPT_RLIMIT_NPROC:
	case OPT_RLIMIT_STACK:
	case OPT_RLIMIT_FSIZE:
		return set_rlimit(c, arg);
	case OPT_DUMP_FUNCTIONS:
		s->dump = DUMP_FUNCTIONS;
		return 0;
	case OPT_DUMP_PROBE_TYPES:
		s->dump = DUMP_PROBE_TYPES;
		return 0;
	case OPT_DUMP_PROBE_ALIASES:
		s->dump = DUMP_PROBE_ALIASES;
		return 0;
	case 'b':
	case 'i':
	case 'F':
	case 'C':
	case 'q':
	case OPT_UNSUPPORTED:
	case OPT_UNSUPPORTED_ARG:
		return refuse(optname);
	default:
		return -1;
	}
}
