/* The GNU build ID of an ELF file (buildid.h). */
#include "buildid.h"

#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <string.h>
#include <unistd.h>

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
