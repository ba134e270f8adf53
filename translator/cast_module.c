/* The module argument of @cast(ADDR, "TYPE", "MODULE"): where the type's
 * DWARF is. As SystemTap: a list of modules separated by ':', each one
 * tried in turn; a module is a binary (found as process("NAME") finds
 * it) or C headers in angle brackets
 * ("<sys/time.h>", "<a.h><b.h>"), compiled here with debug info into an
 * object of their own. "kernel" and "kernel<...>" need the kernel. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "cast_module.h"
#include "probes_process.h"
#include "session.h"
#include "dwarf_vars.h"
#include "util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Header sets compiled so far (one object each, for the whole run). */
struct header_mod {
	char *spec;
	struct dwq_mod *mod; /* NULL: it did not compile */
};
static struct vec headers;
/* Every file those compilations read (from gcc's -MD list): part of the
 * compiled-script cache key, so a changed header is compiled again. */
static struct vec header_files;

const struct vec *cast_module_files(void)
{
	return &header_files;
}

/* The files of a make rule written by gcc -MD ("h.o: h.c a.h \\\n b.h"),
 * without the object and the generated h.c. */
static void read_deps(const char *path, const char *own_src)
{
	FILE *f = fopen(path, "re");
	char word[4096];
	int first = 1;
	while (f && fscanf(f, " %4095s", word) == 1) {
		if (first || !strcmp(word, "\\") || !strcmp(word, own_src)) {
			first = 0;
			continue;
		}
		vec_push(&header_files, xstrdup(word));
	}
	if (f)
		fclose(f);
}

/* A header name goes into generated C (#include <NAME>): only the
 * characters of ordinary paths, never '>' or a newline. */
static int header_name_ok(const char *s, size_t n)
{
	if (!n)
		return 0;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      strchr("/._+-", c)))
			return 0;
	}
	return 1;
}

/* "<a.h><b.h>" as the lines of a C file, or NULL if it is not one. */
static char *header_source(const char *spec)
{
	struct strbuf b = {0};
	const char *p = spec;

	while (*p) {
		const char *end = *p == '<' ? strchr(p, '>') : NULL;
		if (!end || !header_name_ok(p + 1, (size_t)(end - p - 1))) {
			free(sb_take(&b));
			return NULL;
		}
		sb_printf(&b, "#include %.*s\n", (int)(end - p + 1), p);
		p = end + 1;
	}
	return sb_take(&b);
}

/* The headers of SPEC compiled with debug info (all their types kept). */
static struct dwq_mod *header_module(const char *spec, char *msg, size_t len)
{
	struct header_mod *h;
	vec_foreach (struct header_mod *, h, &headers)
		if (!strcmp(h->spec, spec))
			goto found;
	h = xmalloc(sizeof *h);
	h->spec = xstrdup(spec);
	h->mod = NULL;
	vec_push(&headers, h);
	char *src = header_source(spec);
	char dir[] = "/tmp/stapcastXXXXXX";
	if (src && mkdtemp(dir)) {
		char *c = xasprintf("%s/h.c", dir), *o = xasprintf("%s/h.o", dir);
		char *e = xasprintf("%s/cc.err", dir), *d = xasprintf("%s/h.d", dir);
		FILE *f = fopen(c, "w");
		if (f && fputs(src, f) >= 0 && fclose(f) == 0) {
			char *argv[] = {(char *)pass4_compiler(),
					"-g",
					"-c",
					"-fno-eliminate-unused-debug-types",
					"-MD",
					"-MF",
					d,
					"-o",
					o,
					c,
					NULL};
			if (pass4_run(argv, e) == 0) {
				h->mod = dwq_open(o, msg, len);
				read_deps(d, c);
			}
		} else if (f) {
			fclose(f);
		}
		unlink(c);
		unlink(o);
		unlink(e);
		unlink(d);
		rmdir(dir);
		free(c);
		free(o);
		free(e);
		free(d);
	}
	free(src);
found:
	if (!h->mod)
		snprintf(msg, len, "cannot compile the header module '%s'", spec);
	return h->mod;
}

/* One element of the list: its module, or NULL. A binary is found as
 * process("NAME") finds it (a path, else through $PATH, else in the
 * current directory). */
static struct dwq_mod *one_module(const char *name, struct dwq_mod *probe_mod, char *msg,
				  size_t len)
{
	if (name[0] == '<')
		return header_module(name, msg, len);
	char *path = dwq_find_executable(name, msg, len);
	struct dwq_mod *m = NULL;
	if (path)
		m = probe_mod && !strcmp(path, dwq_path(probe_mod)) ? probe_mod
								    : proc_open_mod(path, msg, len);
	free(path);
	return m;
}

struct dwq_mod *cast_module_find(const char *spec, const char *type, struct dwq_mod *probe_mod,
				 Dwarf_Die *out, char *msg, size_t len)
{
	char *list = xstrdup(spec), *save = NULL;
	struct dwq_mod *found = NULL;
	int kernel = 0;

	for (char *name = strtok_r(list, ":", &save); name && !found;
	     name = strtok_r(NULL, ":", &save)) {
		if (!strncmp(name, "kernel", 6) && (!name[6] || name[6] == '<')) {
			kernel = 1;
			continue;
		}
		char why[DWQ_ERRLEN] = "";
		struct dwq_mod *m = one_module(name, probe_mod, why, sizeof why);
		if (m && dwv_find_type(m, type, out, why, sizeof why) == 0)
			found = m;
	}
	free(list);
	if (!found) {
		if (kernel)
			snprintf(msg, len,
				 "type definition '%s' not found in '%s': the kernel's types need "
				 "the kernel, which this implementation does not trace",
				 type, spec);
		else
			snprintf(msg, len, "type definition '%s' not found in '%s'", type, spec);
	}
	return found;
}
