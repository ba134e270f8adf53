/* How process("PATH") paths are taken (proc_paths.h): a shared library
 * named as the process, and wildcards in the path. */
#include "proc_paths.h"
#include "dwarf_query.h"
#include "probe_kinds.h"
#include "util.h"
#include "run/buildid.h"

#include <glob.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

void proc_as_library(struct derived_probe *dp)
{
	for (struct derived_probe *d = dp; d; d = d->more) {
		if (!(pk_of(d)->flags & PKF_AT_ADDRESS) || d->library || !d->module)
			continue;
		d->library = d->module;
		d->module = NULL;
	}
}

int proc_path_has_glob(const char *path)
{
	return strpbrk(path, "*?[") != NULL;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int proc_glob(const char *pattern, struct vec *out)
{
	glob_t g;
	int rc = glob(pattern, 0, NULL, &g);

	if (rc != 0) {
		if (rc != GLOB_NOMATCH)
			globfree(&g);
		return rc;
	}
	for (size_t i = 0; i < g.gl_pathc; i++) {
		char real[PATH_MAX];
		struct stat st;
		int dup = 0;
		if (!realpath(g.gl_pathv[i], real) || stat(real, &st) < 0 || !S_ISREG(st.st_mode))
			continue;
		for (int j = 0; j < out->n && !dup; j++)
			dup = !strcmp(out->v[j], real);
		if (!dup)
			vec_push(out, xstrdup(real));
	}
	globfree(&g);
	qsort(out->v, (size_t)out->n, sizeof *out->v, cmp_str);
	return 0;
}

/* The files process PID maps (its program first), pushed to OUT. */
static void mapped_files(long pid, struct vec *out)
{
	char path[64], line[PATH_MAX + 128];
	snprintf(path, sizeof path, "/proc/%ld/maps", pid);
	FILE *f = fopen(path, "re");
	while (f && fgets(line, sizeof line, f)) {
		char *name = strchr(line, '/');
		int dup = 0;
		if (!name)
			continue;
		name[strcspn(name, "\n")] = '\0';
		size_t n = strlen(name), d = strlen(" (deleted)");
		if (n > d && !strcmp(name + n - d, " (deleted)"))
			name[n - d] = '\0'; /* an older image: proc_image.c's */
		for (int i = 0; i < out->n && !dup; i++)
			dup = !strcmp(out->v[i], name);
		if (!dup)
			vec_push(out, xstrdup(name));
	}
	if (f)
		fclose(f);
}

char *proc_target_file(const char *path, const char *prog, long pid, int *maps)
{
	struct vec files = {0};
	char real[PATH_MAX], *same = NULL;
	unsigned char want[64], have[64];
	size_t wl = 0;

	*maps = 0;
	if (pid) {
		mapped_files(pid, &files);
	} else if (prog) {
		char msg[256], **libs;
		int n = dwq_needed_closure(prog, &libs, msg, sizeof msg);
		vec_push(&files, xstrdup(prog));
		for (int i = 0; i < n; i++)
			vec_push(&files, libs[i]);
		if (n > 0)
			free(libs);
	}
	if (!files.n || !realpath(path, real)) {
		*maps = 1; /* nothing to compare with */
		goto out;
	}
	for (int i = 0; i < files.n && !*maps; i++) {
		char r[PATH_MAX];
		*maps = realpath(files.v[i], r) && !strcmp(r, real);
	}
	if (!*maps && (wl = _stp_build_id(real, want, sizeof want)) > 0)
		for (int i = 0; i < files.n && !same; i++)
			if (_stp_build_id(files.v[i], have, sizeof have) == wl &&
			    !memcmp(want, have, wl) && realpath(files.v[i], real))
				same = xstrdup(real);
out:
	for (int i = 0; i < files.n; i++)
		free(files.v[i]);
	free(files.v);
	return same;
}
