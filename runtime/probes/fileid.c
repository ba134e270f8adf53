/* Which file an image is, by device and inode (process.h). A program or
 * library rebuilt and moved over its path while a process runs it is
 * another file than the one there now: a probe resolved against one must
 * never be placed in the other, whatever their paths say. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "process.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

void _stp_fileid_of(const char *path, struct _stp_fileid *id)
{
	struct stat st;

	id->ok = path && *path && stat(path, &st) == 0;
	id->dev = id->ok ? st.st_dev : 0;
	id->ino = id->ok ? st.st_ino : 0;
}

void _stp_fileid_mapped(pid_t pid, const char *name, struct _stp_fileid *id)
{
	static const char deleted[] = " (deleted)";
	char path[64], line[PATH_MAX + 128];
	FILE *f;

	id->ok = 0;
	snprintf(path, sizeof path, "/proc/%d/maps", (int)pid);
	if (!name || !*name || !(f = fopen(path, "re")))
		return;
	while (!id->ok && fgets(line, sizeof line, f)) {
		unsigned maj, min;
		unsigned long long ino;
		int pos = 0;
		size_t n, d = sizeof deleted - 1;
		char *file;

		if (sscanf(line, "%*x-%*x %*s %*x %x:%x %llu %n", &maj, &min, &ino, &pos) < 3 ||
		    !pos || !ino)
			continue;
		file = line + pos;
		file[strcspn(file, "\n")] = '\0';
		n = strlen(file);
		if (n > d && !strcmp(file + n - d, deleted))
			file[n - d] = '\0';
		if (strcmp(file, name))
			continue;
		id->ok = 1;
		id->dev = makedev(maj, min);
		id->ino = ino;
	}
	fclose(f);
}

int _stp_fileid_same(const struct _stp_fileid *a, const struct _stp_fileid *b)
{
	return a->ok && b->ok && a->dev == b->dev && a->ino == b->ino;
}
