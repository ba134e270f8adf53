/* Tests of runtime/sym/addrtab.c: for every symbol of a few real modules
 * (libc.so.6, this test, libsqlite3 and python3.11 when installed), at its
 * start, middle, last byte, end and past it, the sorted table must give exactly
 * dwfl_module_addrinfo's name, offset and size; and the .cold parent
 * search must agree with a walk of the symbol table.
 * Usage: addrtab_test */
#include "dwunit.h"

#include "sym/addrtab.h"

#include <elfutils/libdwfl.h>
#include <unistd.h>

static char *debuginfo_path;
static const Dwfl_Callbacks offline = {
    .find_elf = dwfl_build_id_find_elf,
    .find_debuginfo = dwfl_standard_find_debuginfo,
    .section_address = dwfl_offline_section_address,
    .debuginfo_path = &debuginfo_path,
};

static int check_addr(struct _stp_addrtab *t, Dwfl_Module *mod, GElf_Addr a, char *why,
		      size_t whylen)
{
	GElf_Off o1 = 0, o2 = 0;
	GElf_Sym s1, s2;
	const char *n1 = dwfl_module_addrinfo(mod, a, &o1, &s1, NULL, NULL, NULL);
	const char *n2 = _stp_addrtab_addrinfo(t, mod, a, &o2, &s2);

	if (!n1 && !n2)
		return 1;
	if (n1 && n2 && !strcmp(n1, n2) && o1 == o2 && s1.st_size == s2.st_size)
		return 1;
	snprintf(why, whylen, "at %#" PRIx64 ": dwfl %s+%#" PRIx64 "/%#" PRIx64 ", table %s+%#" PRIx64
	         "/%#" PRIx64, a, n1 ? n1 : "(none)", o1, n1 ? s1.st_size : 0,
		 n2 ? n2 : "(none)", o2, n2 ? s2.st_size : 0);
	return 0;
}

/* The linear walk the table replaces (symbols.c's former find_parent). */
static int walk_func(Dwfl_Module *mod, const char *name, GElf_Addr *addr)
{
	int n = dwfl_module_getsymtab(mod);

	for (int i = 1; i < n; i++) {
		GElf_Sym s;
		GElf_Addr a;
		const char *nm = dwfl_module_getsym_info(mod, i, &s, &a, NULL, NULL, NULL);

		if (nm && !strcmp(nm, name) && s.st_shndx != SHN_UNDEF &&
		    GELF_ST_TYPE(s.st_info) == STT_FUNC) {
			*addr = a;
			return 1;
		}
	}
	return 0;
}

static void test_module(const char *label, const char *path)
{
	char name[128], why[512] = "";
	Dwfl *dwfl = dwfl_begin(&offline);
	Dwfl_Module *mod;
	struct _stp_addrtab *t;
	long checked = 0, bad = 0, funcs = 0, badf = 0;
	unsigned long asked0 = _stp_addrtab_dwfl_asked;
	int n;

	snprintf(name, sizeof name, "addrtab %s", label);
	if (access(path, R_OK) != 0) {
		printf("UNSUPPORTED: %s (no %s)\n", name, path);
		dwfl_end(dwfl);
		return;
	}
	dwfl_report_begin(dwfl);
	mod = dwfl_report_offline(dwfl, path, path, -1);
	dwfl_report_end(dwfl, NULL, NULL);
	n = mod ? dwfl_module_getsymtab(mod) : -1;
	t = mod ? _stp_addrtab_build(mod) : NULL;
	if (!t || n < 20) {
		dw_check(name, 0, "no table for %s (%d symbols)", path, n);
		_stp_addrtab_free(t);
		dwfl_end(dwfl);
		return;
	}
	for (int i = 1; i < n; i++) {
		GElf_Sym s;
		GElf_Addr a, pa = 0, ta = 0;
		GElf_Sym ts;
		const char *nm = dwfl_module_getsym_info(mod, i, &s, &a, NULL, NULL, NULL);
		/* start, middle, last byte, end, just after, and further on (gaps:
		 * the functions a stripped module has no symbol for) */
		GElf_Addr probe[6] = {a,	   a + s.st_size / 2, a + s.st_size - 1,
				      a + s.st_size, a + 1,		a + s.st_size + 0x40};

		if (!nm || s.st_shndx == SHN_UNDEF)
			continue;
		for (int k = 0; k < 6; k++) {
			if (k == 2 && !s.st_size)
				continue;
			checked++;
			if (!check_addr(t, mod, probe[k], bad ? why + strlen(why) : why,
					bad ? 0 : sizeof why))
				bad++;
		}
		if (GELF_ST_TYPE(s.st_info) == STT_FUNC && *nm) {
			int w = walk_func(mod, nm, &pa), f = _stp_addrtab_find_func(t, mod, nm, &ta, &ts);

			funcs++;
			if (w != f || pa != ta)
				badf++;
		}
	}
	dw_check(name, bad == 0 && checked > 50, "%ld of %ld addresses differ (first %s)", bad,
		 checked, why);
	/* the table itself answers most (libdwfl: labels, and the ends that
	 * fall in padding between functions) in the big modules (the test's
	 * own has more labels, crt's, than functions) */
	snprintf(name, sizeof name, "addrtab %s answered by the table", label);
	if (n > 1000)
		dw_check(name, (_stp_addrtab_dwfl_asked - asked0) * 3 < (unsigned long)checked,
			 "libdwfl asked for %lu of %ld", _stp_addrtab_dwfl_asked - asked0, checked);
	snprintf(name, sizeof name, "addrtab %s parent search", label);
	dw_check(name, badf == 0 && funcs > 10, "%ld of %ld function names differ", badf, funcs);
	printf("NOTE: %s: %ld addresses, %ld functions compared, %lu from libdwfl\n", label,
	       checked, funcs, _stp_addrtab_dwfl_asked - asked0);
	_stp_addrtab_free(t);
	dwfl_end(dwfl);
}

int main(void)
{
	char self[4096];
	ssize_t k = readlink("/proc/self/exe", self, sizeof self - 1);

	if (k > 0)
		self[k] = '\0';
	test_module("test binary", k > 0 ? self : "/proc/self/exe");
	test_module("libc.so.6", "/lib/x86_64-linux-gnu/libc.so.6");
	test_module("libsqlite3.so.0", "/usr/lib/x86_64-linux-gnu/libsqlite3.so.0");
	test_module("python3.11", "/usr/bin/python3.11");
	return dw_failures != 0;
}
