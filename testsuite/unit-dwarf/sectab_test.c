/* Tests of runtime/sym/sectab.c: in a few real modules (libc.so.6,
 * libsqlite3, python3.11, the stripped sqlite3, this test, and the test
 * targets built with an IBT PLT and without PIE), at every symbol's start,
 * middle, last byte, end and just past it, and around every section's
 * start and end (and past the module's end), the table must give the
 * section dwfl_module_address_section gives and the PLT answer of the
 * in_plt that symbols.c used before it.
 * Usage: sectab_test [DIR]   (DIR: where the targets were built) */
#include "dwunit.h"

#include "sym/sectab.h"

#include <elfutils/libdwfl.h>
#include <unistd.h>

static char *debuginfo_path;
static const Dwfl_Callbacks offline = {
    .find_elf = dwfl_build_id_find_elf,
    .find_debuginfo = dwfl_standard_find_debuginfo,
    .section_address = dwfl_offline_section_address,
    .debuginfo_path = &debuginfo_path,
};

/* symbols.c's former in_plt, the reference */
static int old_in_plt(Dwfl_Module *mod, GElf_Addr addr, Elf_Scn **found)
{
	GElf_Addr bias = 0, a = addr;
	Elf *elf = dwfl_module_getelf(mod, &bias);
	Elf_Scn *scn = dwfl_module_address_section(mod, &a, &bias);
	size_t strndx;
	GElf_Shdr sh;
	const char *n;

	*found = scn;
	if (!elf || !scn || elf_getshdrstrndx(elf, &strndx) < 0 || !gelf_getshdr(scn, &sh) ||
	    !(n = elf_strptr(elf, strndx, sh.sh_name)))
		return 0;
	return !strncmp(n, ".plt", 4) || !strcmp(n, ".iplt");
}

struct tally {
	long checked, bad, plt, outside;
	char why[256];
};

static void check(struct tally *c, Dwfl_Module *mod, const struct _stp_sectab *t, GElf_Addr a)
{
	Elf_Scn *want;
	int p1 = old_in_plt(mod, a, &want), p2 = _stp_sectab_in_plt(t, a);
	Elf_Scn *got = _stp_sectab_section(t, a);

	c->checked++;
	c->plt += p1;
	c->outside += !want;
	if (p1 == p2 && want == got)
		return;
	if (!c->bad++)
		snprintf(c->why, sizeof c->why,
			 "at %#" PRIx64 ": plt %d, section %zu; table: plt %d, section %zu", a, p1,
			 want ? elf_ndxscn(want) : 0, p2, got ? elf_ndxscn(got) : 0);
}

static void around(struct tally *c, Dwfl_Module *mod, const struct _stp_sectab *t, GElf_Addr a)
{
	for (int d = -1; d <= 1; d++)
		check(c, mod, t, a + d);
}

static void test_module(const char *label, const char *path, int want_plt)
{
	char name[128];
	Dwfl *dwfl = dwfl_begin(&offline);
	Dwfl_Module *mod;
	struct _stp_sectab *t;
	struct tally c = {0};
	GElf_Addr bias = 0;
	Dwarf_Addr lo = 0, hi = 0;
	Elf *elf;
	Elf_Scn *scn = NULL;
	int n;

	snprintf(name, sizeof name, "sectab %s", label);
	if (access(path, R_OK) != 0) {
		printf("UNSUPPORTED: %s (no %s)\n", name, path);
		dwfl_end(dwfl);
		return;
	}
	dwfl_report_begin(dwfl);
	mod = dwfl_report_offline(dwfl, path, path, -1);
	dwfl_report_end(dwfl, NULL, NULL);
	elf = mod ? dwfl_module_getelf(mod, &bias) : NULL;
	t = elf ? _stp_sectab_build(mod) : NULL;
	if (!t) {
		dw_check(name, 0, "no table for %s", path);
		dwfl_end(dwfl);
		return;
	}
	n = dwfl_module_getsymtab(mod);
	for (int i = 1; i < n; i++) {
		GElf_Sym s;
		GElf_Addr a;
		const char *nm = dwfl_module_getsym_info(mod, i, &s, &a, NULL, NULL, NULL);

		if (!nm || s.st_shndx == SHN_UNDEF)
			continue;
		check(&c, mod, t, a);
		check(&c, mod, t, a + s.st_size / 2);
		if (s.st_size)
			check(&c, mod, t, a + s.st_size - 1);
		around(&c, mod, t, a + s.st_size + 1);
	}
	/* every section, allocated or not (their addresses are 0 or real) */
	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr sh;

		size_t strndx;
		const char *sn;

		if (!gelf_getshdr(scn, &sh))
			continue;
		around(&c, mod, t, sh.sh_addr + bias);
		around(&c, mod, t, sh.sh_addr + bias + sh.sh_size);
		/* and all through the PLTs */
		if (elf_getshdrstrndx(elf, &strndx) == 0 &&
		    (sn = elf_strptr(elf, strndx, sh.sh_name)) && strstr(sn, "plt"))
			for (GElf_Addr a = 0; a < sh.sh_size; a += 4)
				check(&c, mod, t, sh.sh_addr + bias + a);
	}
	dwfl_module_info(mod, NULL, &lo, &hi, NULL, NULL, NULL, NULL);
	around(&c, mod, t, lo);
	around(&c, mod, t, hi);
	check(&c, mod, t, hi + 0x1000);
	check(&c, mod, t, 0);
	check(&c, mod, t, UINT64_MAX);
	dw_check(name, c.bad == 0 && c.checked > 50, "%ld of %ld addresses differ (first %s)",
		 c.bad, c.checked, c.why);
	snprintf(name, sizeof name, "sectab %s has PLT addresses", label);
	if (want_plt)
		dw_check(name, c.plt > 0 && c.outside > 0, "%ld in a PLT, %ld in no section", c.plt,
			 c.outside);
	printf("NOTE: %s: %ld addresses, %ld in a PLT, %ld in no section\n", label, c.checked,
	       c.plt, c.outside);
	_stp_sectab_free(t);
	dwfl_end(dwfl);
}

int main(int argc, char **argv)
{
	char self[4096], p[4096];
	ssize_t k = readlink("/proc/self/exe", self, sizeof self - 1);
	const char *dir = argc > 1 ? argv[1] : ".";

	if (k > 0)
		self[k] = '\0';
	test_module("test binary", k > 0 ? self : "/proc/self/exe", 1);
	snprintf(p, sizeof p, "%s/t_ibt", dir);
	test_module("IBT PLT target", p, 1);
	snprintf(p, sizeof p, "%s/t_nopie", dir);
	test_module("non-PIE target", p, 1);
	test_module("libc.so.6", "/lib/x86_64-linux-gnu/libc.so.6", 1);
	test_module("libsqlite3.so.0", "/usr/lib/x86_64-linux-gnu/libsqlite3.so.0", 1);
	test_module("python3.11", "/usr/bin/python3.11", 1);
	test_module("sqlite3 (stripped)", "/usr/bin/sqlite3", 1);
	return dw_failures != 0;
}
