/* The image a -x process really runs (proc_image.h). A program or library
 * rebuilt and moved over the old file while the process runs it: the
 * process still maps the old one ("PATH (deleted)" in /proc/PID/maps), and
 * probes resolved against the new file would be at the wrong addresses.
 * The old image stays readable through /proc/PID/exe and
 * /proc/PID/map_files/START-END; the runtime tells images apart by device
 * and inode (runtime/probes/process_probes.c). */
#include "proc_image.h"
#include "diag.h"
#include "util.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

static const char deleted[] = " (deleted)";

static void strip_deleted(char *path)
{
	size_t n = strlen(path), d = sizeof deleted - 1;
	if (n > d && !strcmp(path + n - d, deleted))
		path[n - d] = '\0';
}

char *proc_exe_path(long pid)
{
	char link[64], buf[PATH_MAX];
	snprintf(link, sizeof link, "/proc/%ld/exe", pid);
	ssize_t n = readlink(link, buf, sizeof buf - 1);
	if (n <= 0)
		return NULL;
	buf[n] = '\0';
	strip_deleted(buf);
	return xstrdup(buf);
}

/* A mapping of the file named path, from /proc/PID/maps: its range (the
 * first one), device and inode. 0 if the process maps no such file. */
struct mapping {
	unsigned long lo, hi, ino;
	unsigned dev_major, dev_minor;
};

static int find_mapping(long pid, const char *path, struct mapping *m)
{
	char file[64], line[PATH_MAX + 128];
	int found = 0;
	snprintf(file, sizeof file, "/proc/%ld/maps", pid);
	FILE *f = fopen(file, "re");
	while (f && !found && fgets(line, sizeof line, f)) {
		int pos = 0;
		if (sscanf(line, "%lx-%lx %*s %*x %x:%x %lu %n", &m->lo, &m->hi, &m->dev_major,
			   &m->dev_minor, &m->ino, &pos) < 5 ||
		    !pos)
			continue;
		char *name = line + pos;
		name[strcspn(name, "\n")] = '\0';
		strip_deleted(name);
		found = !strcmp(name, path);
	}
	if (f)
		fclose(f);
	return found;
}

struct image {
	const char *path, *image;
};
static struct vec images; /* struct image *: each path is looked at once */

static const char *find_image(long pid, const char *path)
{
	char real[PATH_MAX];
	const char *name = realpath(path, real) ? real : path;
	struct stat now, old;
	struct mapping m;
	int have = stat(path, &now) == 0;

	if (!find_mapping(pid, name, &m))
		return path; /* not the process's: nothing to compare */
	if (have && major(now.st_dev) == m.dev_major && minor(now.st_dev) == m.dev_minor &&
	    now.st_ino == m.ino)
		return path; /* the file there is what it runs */
	char *exe = proc_exe_path(pid);
	char *img = exe && !strcmp(exe, name)
	    ? xasprintf("/proc/%ld/exe", pid)
	    : xasprintf("/proc/%ld/map_files/%lx-%lx", pid, m.lo, m.hi);
	free(exe);
	if (stat(img, &old) == 0 && access(img, R_OK) == 0)
		return img;
	diag_warning(NULL,
		     "process %ld runs an older '%s' than the file there now, and that image "
		     "cannot be read (%s): its probes will not be placed in it",
		     pid, path, img);
	free(img);
	return path;
}

const char *proc_image(const struct session *s, const char *path)
{
	struct image *im;

	if (!s->target_pid || !path || !*path)
		return path;
	vec_foreach (struct image *, im, &images)
		if (!strcmp(im->path, path))
			return im->image;
	im = xcalloc(1, sizeof *im);
	im->path = xstrdup(path);
	im->image = find_image(s->target_pid, path);
	vec_push(&images, im);
	return im->image;
}
