/* --dump-functions, --dump-probe-types and --dump-probe-aliases: what the
 * tapset and the probe resolvers offer, one per line, as SystemTap lists
 * them (and exits 0). */
#include "driver.h"
#include "elaborate.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The probe points the resolvers take, with "(number)" or "(string)" where
 * a component has an argument, in SystemTap's order (by component name,
 * a component without an argument before one with a number, then one with
 * a string). probes_*.c resolve these; a new probe kind adds its lines. */
static const char *const probe_types[] = {
    "begin",
    "begin(number)",
    "end",
    "end(number)",
    "error",
    "error(number)",
    "never",
    "process.begin",
    "process.end",
    "process.function(string)",
    "process.function(string).call",
    "process.function(string).callee(string)",
    "process.function(string).callee(string).call",
    "process.function(string).callees",
    "process.function(string).callees(number)",
    "process.function(string).exported",
    "process.function(string).inline",
    "process.function(string).label(string)",
    "process.function(string).return",
    "process.library(string).function(string)",
    "process.library(string).function(string).call",
    "process.library(string).function(string).callee(string)",
    "process.library(string).function(string).callee(string).call",
    "process.library(string).function(string).callees",
    "process.library(string).function(string).callees(number)",
    "process.library(string).function(string).exported",
    "process.library(string).function(string).inline",
    "process.library(string).function(string).label(string)",
    "process.library(string).function(string).return",
    "process.library(string).mark(string)",
    "process.library(string).plt",
    "process.library(string).plt.return",
    "process.library(string).plt(string)",
    "process.library(string).plt(string).return",
    "process.library(string).provider(string).mark(string)",
    "process.library(string).statement(number)",
    "process.library(string).statement(string)",
    "process.mark(string)",
    "process.plt",
    "process.plt.return",
    "process.plt(string)",
    "process.plt(string).return",
    "process.provider(string).mark(string)",
    "process.statement(number)",
    "process.statement(string)",
    "process.syscall",
    "process.syscall.return",
    "process.thread.begin",
    "process.thread.end",
    "process(number).begin",
    "process(number).end",
    "process(number).function(string)",
    "process(number).function(string).call",
    "process(number).function(string).callee(string)",
    "process(number).function(string).callee(string).call",
    "process(number).function(string).callees",
    "process(number).function(string).callees(number)",
    "process(number).function(string).exported",
    "process(number).function(string).inline",
    "process(number).function(string).label(string)",
    "process(number).function(string).return",
    "process(number).library(string).function(string)",
    "process(number).library(string).function(string).call",
    "process(number).library(string).function(string).callee(string)",
    "process(number).library(string).function(string).callee(string).call",
    "process(number).library(string).function(string).callees",
    "process(number).library(string).function(string).callees(number)",
    "process(number).library(string).function(string).exported",
    "process(number).library(string).function(string).inline",
    "process(number).library(string).function(string).label(string)",
    "process(number).library(string).function(string).return",
    "process(number).library(string).mark(string)",
    "process(number).library(string).plt",
    "process(number).library(string).plt.return",
    "process(number).library(string).plt(string)",
    "process(number).library(string).plt(string).return",
    "process(number).library(string).provider(string).mark(string)",
    "process(number).library(string).statement(number)",
    "process(number).library(string).statement(string)",
    "process(number).mark(string)",
    "process(number).plt",
    "process(number).plt.return",
    "process(number).plt(string)",
    "process(number).plt(string).return",
    "process(number).provider(string).mark(string)",
    "process(number).statement(number)",
    "process(number).statement(number).absolute",
    "process(number).statement(string)",
    "process(number).syscall",
    "process(number).syscall.return",
    "process(number).thread.begin",
    "process(number).thread.end",
    "process(string).begin",
    "process(string).end",
    "process(string).function(string)",
    "process(string).function(string).call",
    "process(string).function(string).callee(string)",
    "process(string).function(string).callee(string).call",
    "process(string).function(string).callees",
    "process(string).function(string).callees(number)",
    "process(string).function(string).exported",
    "process(string).function(string).inline",
    "process(string).function(string).label(string)",
    "process(string).function(string).return",
    "process(string).library(string).function(string)",
    "process(string).library(string).function(string).call",
    "process(string).library(string).function(string).callee(string)",
    "process(string).library(string).function(string).callee(string).call",
    "process(string).library(string).function(string).callees",
    "process(string).library(string).function(string).callees(number)",
    "process(string).library(string).function(string).exported",
    "process(string).library(string).function(string).inline",
    "process(string).library(string).function(string).label(string)",
    "process(string).library(string).function(string).return",
    "process(string).library(string).mark(string)",
    "process(string).library(string).plt",
    "process(string).library(string).plt.return",
    "process(string).library(string).plt(string)",
    "process(string).library(string).plt(string).return",
    "process(string).library(string).provider(string).mark(string)",
    "process(string).library(string).statement(number)",
    "process(string).library(string).statement(string)",
    "process(string).mark(string)",
    "process(string).plt",
    "process(string).plt.return",
    "process(string).plt(string)",
    "process(string).plt(string).return",
    "process(string).provider(string).mark(string)",
    "process(string).statement(number)",
    "process(string).statement(number).absolute",
    "process(string).statement(string)",
    "process(string).syscall",
    "process(string).syscall.return",
    "process(string).thread.begin",
    "process(string).thread.end",
    "procfs(string).write", /* "__stdin" only: the input probes */
    "timer.hz(number)",
    "timer.jiffies(number)",
    "timer.jiffies(number).randomize(number)",
    "timer.ms(number)",
    "timer.ms(number).randomize(number)",
    "timer.msec(number)",
    "timer.msec(number).randomize(number)",
    "timer.ns(number)",
    "timer.ns(number).randomize(number)",
    "timer.nsec(number)",
    "timer.nsec(number).randomize(number)",
    "timer.s(number)",
    "timer.s(number).randomize(number)",
    "timer.sec(number)",
    "timer.sec(number).randomize(number)",
    "timer.us(number)",
    "timer.us(number).randomize(number)",
    "timer.usec(number)",
    "timer.usec(number).randomize(number)",
    NULL,
};

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void print_sorted(struct vec *lines)
{
	qsort(lines->v, lines->n, sizeof *lines->v, cmp_str);
	for (int i = 0; i < lines->n; i++)
		if (!i || strcmp(lines->v[i], lines->v[i - 1]))
			puts(lines->v[i]);
	fflush(stdout);
}

/* Pass 1 of the tapset alone (the user's script, if any, is ignored). */
static int parse_tapset(struct session *s)
{
	s->script_file = NULL;
	s->script_text = "probe never {}";
	s->extra_scripts.n = 0;
	s->last_pass = 2;
	s->unoptimized = 1;
	s->suppress_warnings = 1;
	return pass1_parse(s);
}

/* "NAME:TYPE (PARAM:TYPE, ...)", as -p2 prints functions */
static char *function_line(const struct functiondecl *fd)
{
	struct strbuf b = {0};
	sb_printf(&b, "%s:%s (", fd->name, exp_type_name(fd->type));
	for (int i = 0; i < fd->formals.n; i++) {
		const struct vardecl *v = fd->formals.v[i];
		sb_printf(&b, "%s%s:%s", i ? ", " : "", v->name, exp_type_name(v->type));
	}
	sb_putc(&b, ')');
	return sb_take(&b);
}

static int dump_functions(struct session *s)
{
	if (parse_tapset(s) || pass2_elaborate(s))
		return 1;
	struct vec lines = {0};
	const struct functiondecl *fd;
	vec_foreach (const struct functiondecl *, fd, &s->functions)
		if (fd->file && fd->file->is_tapset && !fd->is_private && fd->name[0] != '_')
			vec_push(&lines, function_line(fd));
	print_sorted(&lines);
	return 0;
}

static int dump_aliases(struct session *s)
{
	if (parse_tapset(s))
		return 1;
	struct vec lines = {0};
	const struct stapfile *f;
	vec_foreach (const struct stapfile *, f, &s->library_files) {
		const struct probe_alias *al;
		vec_foreach (const struct probe_alias *, al, &f->aliases) {
			const struct probe_point *name;
			vec_foreach (const struct probe_point *, name, &al->alias_names) {
				char *line = alias_dump_text(al, name);
				if (line[0] != '_' && !al->is_private)
					vec_push(&lines, line);
				else
					free(line);
			}
		}
	}
	print_sorted(&lines);
	return 0;
}

int driver_dump(struct session *s)
{
	switch (s->dump) {
	case DUMP_FUNCTIONS:
		return dump_functions(s);
	case DUMP_PROBE_ALIASES:
		return dump_aliases(s);
	case DUMP_PROBE_TYPES:
		for (int i = 0; probe_types[i]; i++)
			puts(probe_types[i]);
		fflush(stdout);
		return 0;
	default:
		return 1;
	}
}
