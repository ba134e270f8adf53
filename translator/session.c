/* Session helpers owned by the driver: -D lookup, where the tapset, runtime
 * and staprun are (the build tree when stap runs from it, else the installed
 * paths; never SystemTap's own directories), and the temporary directory. */
#include "session.h"
#include "driver.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

const char *session_define(const struct session *s, const char *name)
{
	const char *value = NULL;
	struct define *d;
	/* the last -D NAME wins, as with the C compiler */
	vec_foreach (struct define *, d, &s->defines)
		if (strcmp(d->name, name) == 0)
			value = d->value ? d->value : "";
	return value;
}

const char *const session_string_defines[] = {"STP_DCG_FORMAT", "STP_DCG_OUTPUT", NULL};

int session_define_is_string(const char *name)
{
	for (int i = 0; session_string_defines[i]; i++)
		if (strcmp(name, session_string_defines[i]) == 0)
			return 1;
	return 0;
}

/* Is this binary the one in the build tree's translator/ directory? */
static int running_in_tree(void)
{
	char self[PATH_MAX], tree[PATH_MAX];
	if (!realpath("/proc/self/exe", self))
		return 0;
	if (!realpath(STAP_BUILD_TREE "/translator", tree))
		return 0;
	char *slash = strrchr(self, '/');
	if (!slash)
		return 0;
	*slash = '\0';
	return strcmp(self, tree) == 0;
}

void driver_locate(struct session *s)
{
	if (running_in_tree()) {
		s->tapset_dir = STAP_SRC_TREE "/tapset";
		s->runtime_include_dir = STAP_SRC_TREE "/runtime";
		s->runtime_lib_dir = STAP_BUILD_TREE "/runtime";
		s->staprun_path = STAP_BUILD_TREE "/runtime/staprun";
	} else {
		s->tapset_dir = STAP_INSTALLED_TAPSET;
		s->runtime_include_dir = STAP_INSTALLED_INCLUDE;
		s->runtime_lib_dir = STAP_INSTALLED_LIB;
		s->staprun_path = STAP_INSTALLED_STAPRUN;
	}
	debug(DBG_COMPILE, "tapset %s, runtime %s and %s, staprun %s", s->tapset_dir,
	      s->runtime_include_dir, s->runtime_lib_dir, s->staprun_path);
}

int driver_make_tmpdir(struct session *s)
{
	const char *base = getenv("TMPDIR");
	if (!base || !*base)
		base = "/tmp";
	char *tmpl = xasprintf("%s/stapXXXXXX", base);
	if (!mkdtemp(tmpl)) {
		fprintf(stderr, "ERROR: cannot create temporary directory \"%s\": %s\n", tmpl,
			strerror(errno));
		free(tmpl);
		return -1;
	}
	s->tmpdir = tmpl;
	if (s->verbose >= 2)
		fprintf(stderr, "Created temporary directory \"%s\"\n", s->tmpdir);
	return 0;
}

/* Remove NAME (in directory DIRFD) and everything under it, with system
 * calls only: a signal handler does it too, so no malloc, no stdio (a
 * signal may come inside them, as it may in any pass). */
static void remove_tree_at(int dirfd, const char *name, int depth)
{
	int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd >= 0) {
		char buf[4096] __attribute__((aligned(8)));
		int removed;
		do {
			long n;
			removed = 0;
			lseek(fd, 0, SEEK_SET);
			while ((n = syscall(SYS_getdents64, fd, buf, sizeof buf)) > 0) {
				for (long off = 0; off < n;) {
					struct dirent64 *d = (struct dirent64 *)(buf + off);
					const char *e = d->d_name;
					off += d->d_reclen;
					if (e[0] == '.' && (!e[1] || (e[1] == '.' && !e[2])))
						continue;
					if (unlinkat(fd, e, 0) == 0)
						removed = 1;
					else if (errno == EISDIR && depth < 8)
						remove_tree_at(fd, e, depth + 1), removed = 1;
				}
			}
		} while (removed);
		close(fd);
	}
	unlinkat(dirfd, name, AT_REMOVEDIR);
}

void driver_remove_tmpdir_now(struct session *s)
{
	if (s->tmpdir && !s->keep_tmp)
		remove_tree_at(AT_FDCWD, s->tmpdir, 0);
}

void driver_remove_tmpdir(struct session *s)
{
	if (!s->tmpdir)
		return;
	if (s->keep_tmp)
		fprintf(stderr, "Keeping temporary directory \"%s\"\n", s->tmpdir);
	else
		driver_remove_tmpdir_now(s);
	s->tmpdir = NULL;
}
