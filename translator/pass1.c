/* Pass 1: parse the user script and every tapset file into ASTs. Which
 * tapset declarations are used is pass 2's business. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <pthread.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "diag.h"
#include "lexer.h"
#include "parser.h"
#include "preproc.h"
#include "session.h"

static struct source_file *load(const char *path, const char *name)
{
	size_t len;
	char *text = read_file(path, &len);
	if (!text)
		return NULL;
	if (strlen(text) != len) {
		/* NUL bytes: the text ends at the first one, as for C strings. */
	}
	struct source_file *sf = xcalloc(1, sizeof(*sf));
	sf->name = xstrdup(name);
	sf->text = text;
	return sf;
}

static char *read_stdin(void)
{
	struct strbuf b = {0};
	char buf[4096];
	size_t n;
	while ((n = fread(buf, 1, sizeof(buf), stdin)) > 0)
		sb_putn(&b, buf, n);
	return sb_take(&b);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* All files under DIR ending in SUFFIX, recursively, sorted by path. */
static void find_files(const char *dir, const char *suffix, struct vec *out)
{
	DIR *d = opendir(dir);
	if (!d)
		return;
	struct vec names = {0};
	struct dirent *de;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		vec_push(&names, xasprintf("%s/%s", dir, de->d_name));
	}
	closedir(d);
	qsort(names.v, names.n, sizeof(void *), cmp_str);
	char *path;
	vec_foreach (char *, path, &names) {
		struct stat st;
		if (stat(path, &st) != 0)
			continue;
		size_t n = strlen(path), sl = strlen(suffix);
		if (S_ISDIR(st.st_mode))
			find_files(path, suffix, out);
		else if (n > sl && !strcmp(path + n - sl, suffix))
			vec_push(out, path);
	}
}

/* Load the public macros (.stpm) of a library directory. A file with
 * errors is skipped whole, with a warning; the errors still fail pass 1
 * but, as in SystemTap, are not counted in the "N parse errors." line. */
static int load_library_macros(struct session *s, const char *dir)
{
	struct vec macros = {0};
	int errors = 0;
	char *path;
	find_files(dir, ".stpm", &macros);
	vec_foreach (char *, path, &macros) {
		struct source_file *sf = load(path, path);
		if (!sf)
			continue;
		sf->is_tapset = 1;
		int n = parse_stpm(s, sf);
		if (n && !s->suppress_warnings)
			fprintf(stderr,
				"WARNING: macro tapset \"%s\" has errors, and will be skipped.\n",
				path);
		errors += n;
	}
	return errors;
}

/* Parse the .stp files of a library directory into s->library_files. */
static int parse_library(struct session *s, const char *dir)
{
	struct vec files = {0};
	int errors = 0;
	char *path;
	find_files(dir, ".stp", &files);
	vec_foreach (char *, path, &files) {
		struct source_file *sf = load(path, path);
		if (!sf)
			continue;
		sf->is_tapset = 1;
		int n = 0;
		struct stapfile *f = parse_file(s, sf, 1, &n, NULL);
		errors += n;
		vec_push(&s->library_files, f);
	}
	return errors;
}

static struct source_file *user_source(struct session *s)
{
	if (!s->script_file) {
		struct source_file *sf = xcalloc(1, sizeof(*sf));
		sf->name = "<input>";
		sf->text = s->script_text ? s->script_text : "";
		return sf;
	}
	if (!strcmp(s->script_file, "-")) {
		struct source_file *sf = xcalloc(1, sizeof(*sf));
		sf->name = "<input>";
		sf->text = read_stdin();
		return sf;
	}
	struct source_file *sf = load(s->script_file, s->script_file);
	if (!sf)
		fprintf(stderr, "Input file '%s' is missing.\n", s->script_file);
	return sf;
}

/* -E SCRIPT: more user scripts, named <input1>, <input2>, ... as
 * SystemTap names them. */
static int parse_extra_scripts(struct session *s)
{
	int errors = 0;
	for (int i = 0; i < s->extra_scripts.n; i++) {
		struct source_file *sf = xcalloc(1, sizeof(*sf));
		sf->name = xasprintf("<input%d>", i + 1);
		sf->text = s->extra_scripts.v[i];
		sf->is_guru = s->guru;
		int n = 0;
		vec_push(&s->extra_files, parse_file(s, sf, s->guru, &n, NULL));
		errors += n;
	}
	return errors;
}

static int parse_all(struct session *s)
{
	int errors = 0, n = 0;
	pp_reset();
	diag_reset();
	struct source_file *user = user_source(s);
	if (!user)
		return 1;
	user->is_guru = s->guru;

	/* Library macros (.stpm) must be known before the user script. */
	char *dir;
	int macro_errors = 0;
	if (s->tapset_dir)
		macro_errors += load_library_macros(s, s->tapset_dir);
	vec_foreach (char *, dir, &s->include_dirs)
		macro_errors += load_library_macros(s, dir);

	/* SystemTap's two messages for a script with nothing in it. */
	struct lexer *lx = lexer_new(user, NULL);
	if (lexer_next(lx)->type == TOK_EOF) {
		fprintf(stderr, "Input file '%s' is empty.\n", user->name);
		return 1;
	}
	int empty = 0;
	s->user_file = parse_file(s, user, s->guru, &n, &empty);
	if (empty) {
		fprintf(stderr, "Input file '%s' is empty after preprocessing.\n", user->name);
		return 1;
	}
	errors += n;
	errors += parse_extra_scripts(s);

	if (s->tapset_dir)
		errors += parse_library(s, s->tapset_dir);
	vec_foreach (char *, dir, &s->include_dirs)
		errors += parse_library(s, dir);

	if (errors)
		fprintf(stderr, "%d parse error%s.\n", errors, errors == 1 ? "" : "s");
	if (errors || macro_errors)
		return 1;
	if (s->last_pass == 1) {
		struct strbuf out = {0};
		sb_puts(&out, "# parse tree dump\n");
		print_stapfile(&out, s->user_file);
		struct stapfile *ef;
		vec_foreach (struct stapfile *, ef, &s->extra_files)
			print_stapfile(&out, ef);
		sb_putc(&out, '\n');
		fputs(sb_str(&out), stdout);
		fflush(stdout);
	}
	return 0;
}

static void *parse_thread(void *arg)
{
	struct session *s = arg;
	return (void *)(intptr_t)parse_all(s);
}

/* Parsing and printing recurse as deep as the script nests: run them on
 * a thread with a large stack, so the nesting limit (parser.h), not the
 * stack, decides what is too deep. */
int pass1_parse(struct session *s)
{
	pthread_attr_t attr;
	pthread_t th;
	void *ret;
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, (size_t)256 << 20);
	if (pthread_create(&th, &attr, parse_thread, s) != 0) {
		pthread_attr_destroy(&attr);
		return parse_all(s);
	}
	pthread_join(th, &ret);
	pthread_attr_destroy(&attr);
	return (int)(intptr_t)ret;
}
