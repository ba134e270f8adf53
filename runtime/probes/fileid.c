/* Which file an image is, by device and inode (process.h). A program or
 * library rebuilt and moved over its path while a process runs it is
 * another file than the one there now: a probe resolved against one must
 * never be placed in the other, whatever their paths say. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "process.h"

#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
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

size_t _stp_build_id(const char *path, unsigned char *id, size_t max)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t len = 0;
	Elf *e;

	if (fd < 0)
		return 0;
	elf_version(EV_CURRENT);
	e = elf_begin(fd, ELF_C_READ, NULL);
	for (Elf_Scn *scn = NULL; e && !len && (scn = elf_nextscn(e, scn)) != NULL;) {
		GElf_Shdr sh;
		GElf_Nhdr nh;
		Elf_Data *d;
		size_t off = 0, name_off, desc_off;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE ||
		    !(d = elf_getdata(scn, NULL)))
			continue;
		while (!len && (off = gelf_getnote(d, off, &nh, &name_off, &desc_off)) > 0)
			if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
			    !memcmp((char *)d->d_buf + name_off, "GNU", 4) && nh.n_descsz &&
			    nh.n_descsz <= max) {
				memcpy(id, (char *)d->d_buf + desc_off, nh.n_descsz);
				len = nh.n_descsz;
			}
	}
	if (e)
		elf_end(e);
	close(fd);
	return len;
}
