/* Tests of translator/dwarf_query.c, dwarf_lines.c, dwarf_plt.c,
 * dwarf_library.c and dwarf_list.c against nm, objdump and ldd.
 * Usage: dwarf_query_test SRCDIR OBJDIR (OBJDIR holds the targets that
 * unit-dwarf.exp built: t_O0 t_O2 t_nopie t_nodebug t_dyn libdwtest.so
 * uselib sym_target). */
#include "dwunit.h"

#include "dwarf_list.h"
#include "dwarf_query.h"

#include <limits.h>
#include <unistd.h>

static const char *srcdir, *objdir;
static char src_target[PATH_MAX], src_lib[PATH_MAX];

static const char *obj(const char *name)
{
	static char buf[4][PATH_MAX];
	static int k;
	char *b = buf[k++ & 3];

	snprintf(b, PATH_MAX, "%s/%s", objdir, name);
	return b;
}

static uint64_t nm_addr(const char *bin, const char *opts, const char *sym)
{
	return dw_cmd_hex("nm %s '%s' 2>/dev/null | sed 's/@.*//' | awk '$3==\"%s\" {print $1; exit}'",
			  opts, bin, sym);
}

/* Lowest address of LINE of target.c in the decoded line table. */
static uint64_t line_addr(const char *bin, int line)
{
	return dw_cmd_hex("objdump --dwarf=decodedline '%s' | awk '$1==\"target.c\" && $2==%d "
			  "{print $3}' | sort | head -1",
			  bin, line);
}

static const struct dwq_func *find(const struct dwq_funcs *fs, const char *name, int inlined)
{
	for (size_t i = 0; i < fs->n; i++)
		if (!strcmp(fs->v[i].name, name) && fs->v[i].inlined == inlined)
			return &fs->v[i];
	return NULL;
}

static struct dwq_mod *open_or_fail(const char *path)
{
	char err[DWQ_ERRLEN];
	struct dwq_mod *m = dwq_open(path, err, sizeof err);

	if (!m)
		dw_check("open", 0, "%s: %s", path, err);
	return m;
}

static void test_entries(const char *bin, int optimized)
{
	static const char *const names[] = {"add", "walk", "say", "marks", "main"};
	struct dwq_mod *m = open_or_fail(obj(bin));
	struct dwq_funcs fs;
	char name[128], err[DWQ_ERRLEN];

	if (!m)
		return;
	snprintf(name, sizeof name, "%s: has dwarf", bin);
	dw_check(name, dwq_has_dwarf(m), NULL);
	dwq_functions(m, "*", DWQ_FUNCTION, DWQ_PROLOGUE_AUTO, 0, &fs, err, sizeof err);
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
		const struct dwq_func *f = find(&fs, names[i], 0);

		snprintf(name, sizeof name, "%s: %s entry = nm", bin, names[i]);
		if (!f) {
			dw_check(name, 0, "not found");
			continue;
		}
		dw_check_u64(name, f->entry, nm_addr(obj(bin), "", names[i]));
		snprintf(name, sizeof name, "%s: %s decl_file", bin, names[i]);
		dw_check_str(name, f->decl_file, src_target);
		if (optimized) {
			snprintf(name, sizeof name, "%s: %s probe at entry (optimized CU)", bin,
				 names[i]);
			dw_check_u64(name, f->probe, f->entry);
		}
	}
	{
		const struct dwq_func *add = find(&fs, "add", 0);
		int decl = dw_marker_line(src_target, "add_decl");

		snprintf(name, sizeof name, "%s: add decl_line", bin);
		dw_check(name, add && add->decl_line == decl, "got %d want %d",
			 add ? add->decl_line : -1, decl);
	}
	if (!optimized) {
		static const struct {
			const char *fn, *marker;
		} body[] = {{"add", "add_body"}, {"walk", "walk_body"}, {"main", "main_body"}};

		for (size_t i = 0; i < sizeof body / sizeof body[0]; i++) {
			const struct dwq_func *f = find(&fs, body[i].fn, 0);
			uint64_t want = line_addr(obj(bin), dw_marker_line(src_target, body[i].marker));

			snprintf(name, sizeof name, "%s: %s probe after prologue = first row of body",
				 bin, body[i].fn);
			dw_check_u64(name, f ? f->probe : 0, want);
		}
	}
	{
		const struct dwq_func *tw = find(&fs, "twice", 1);
		const struct dwq_func *add = find(&fs, "add", 0);

		snprintf(name, sizeof name, "%s: inline instance of twice inside add", bin);
		dw_check(name, tw && add && tw->entry >= add->entry && tw->entry < add->entry + add->size,
			 "twice %#" PRIx64, tw ? tw->entry : 0);
	}
	snprintf(name, sizeof name, "%s: crt _start from the symbol table", bin);
	{
		const struct dwq_func *st = find(&fs, "_start", 0);

		dw_check(name, st && !st->has_dwarf && st->entry == nm_addr(obj(bin), "", "_start"),
			 NULL);
	}
	dwq_funcs_free(&fs);
	dwq_close(m);
}

static size_t count(struct dwq_mod *m, const char *spec, enum dwq_kind kind, int exported)
{
	struct dwq_funcs fs;
	char err[DWQ_ERRLEN];
	size_t n;

	if (dwq_functions(m, spec, kind, DWQ_PROLOGUE_AUTO, exported, &fs, err, sizeof err) < 0)
		return (size_t)-1;
	n = fs.n;
	dwq_funcs_free(&fs);
	return n;
}

static void test_patterns(void)
{
	struct dwq_mod *m = open_or_fail(obj("t_O0"));
	char spec[512];
	int decl;

	if (!m)
		return;
	dw_check("pattern wa?k", count(m, "wa?k", DWQ_FUNCTION, 0) == 1, NULL);
	dw_check("pattern [am]* (add main marks)", count(m, "[am]*", DWQ_CALL, 0) == 3, "%zu",
		 count(m, "[am]*", DWQ_CALL, 0));
	dw_check("pattern *@target.c (6 + inline twice)", count(m, "*@target.c", DWQ_FUNCTION, 0) == 7,
		 "%zu", count(m, "*@target.c", DWQ_FUNCTION, 0));
	dw_check("pattern *@*/unit-dwarf/target.c", count(m, "*@*/unit-dwarf/target.c", DWQ_CALL, 0) == 6,
		 NULL);
	decl = dw_marker_line(src_target, "add_decl");
	snprintf(spec, sizeof spec, "add@target.c:%d", decl);
	dw_check("pattern add@target.c:DECL", count(m, spec, DWQ_FUNCTION, 0) == 1, NULL);
	snprintf(spec, sizeof spec, "*@target.c:%d-%d", decl - 1, decl + 1);
	/* the line selects nothing: SystemTap 4.8 matches F@FILE:N as F@FILE */
	dw_check("pattern *@target.c:RANGE is *@target.c",
		 count(m, spec, DWQ_FUNCTION, 0) == count(m, "*@target.c", DWQ_FUNCTION, 0), NULL);
	dw_check("pattern add@target.c:9999 is add@target.c",
		 count(m, "add@target.c:9999", DWQ_FUNCTION, 0) == 1, NULL);
	dw_check("pattern *@nosuch.c matches nothing", count(m, "*@nosuch.c", DWQ_FUNCTION, 0) == 0, NULL);
	dw_check("pattern nosuch matches nothing", count(m, "nosuch", DWQ_FUNCTION, 0) == 0, NULL);
	dw_check(".inline twice", count(m, "twice", DWQ_INLINE, 0) == 1, NULL);
	dw_check(".call twice (inline only: none)", count(m, "twice", DWQ_CALL, 0) == 0, NULL);
	dw_check(".inline add (not inlined: none)", count(m, "add", DWQ_INLINE, 0) == 0, NULL);
	dw_check(".exported in a PIE without -rdynamic: none",
		 count(m, "*", DWQ_FUNCTION, 1) == 0, "%zu", count(m, "*", DWQ_FUNCTION, 1));
	{
		struct dwq_funcs fs;
		char err[DWQ_ERRLEN];

		dw_check("malformed spec is an error",
			 dwq_functions(m, "add@target.c:x", DWQ_FUNCTION, DWQ_PROLOGUE_AUTO, 0, &fs, err,
				       sizeof err) < 0,
			 NULL);
		dw_check("prologue NEVER: probe = entry",
			 dwq_functions(m, "walk", DWQ_CALL, DWQ_PROLOGUE_NEVER, 0, &fs, err, sizeof err) == 0 &&
				 fs.n == 1 && fs.v[0].probe == fs.v[0].entry,
			 NULL);
		dwq_funcs_free(&fs);
	}
	dwq_close(m);
}

static void test_nodebug(void)
{
	struct dwq_mod *m = open_or_fail(obj("t_nodebug"));
	struct dwq_funcs fs;
	char err[DWQ_ERRLEN];

	if (!m)
		return;
	dw_check("nodebug: no dwarf", !dwq_has_dwarf(m), NULL);
	dwq_functions(m, "walk", DWQ_FUNCTION, DWQ_PROLOGUE_AUTO, 0, &fs, err, sizeof err);
	dw_check("nodebug: walk from .symtab", fs.n == 1 && !fs.v[0].has_dwarf && !fs.v[0].decl_file,
		 NULL);
	if (fs.n == 1) {
		dw_check_u64("nodebug: walk entry = nm", fs.v[0].entry, nm_addr(obj("t_nodebug"), "", "walk"));
		dw_check_u64("nodebug: walk probe = entry", fs.v[0].probe, fs.v[0].entry);
	}
	dwq_funcs_free(&fs);
	dw_check("nodebug: .inline finds nothing", count(m, "*", DWQ_INLINE, 0) == 0, NULL);
	dwq_close(m);

	/* -rdynamic then strip -s: only .dynsym is left */
	m = open_or_fail(obj("t_dyn"));
	if (!m)
		return;
	dwq_functions(m, "add", DWQ_FUNCTION, DWQ_PROLOGUE_AUTO, 1, &fs, err, sizeof err);
	dw_check("stripped -rdynamic: add is exported", fs.n == 1 && fs.v[0].exported, NULL);
	if (fs.n == 1)
		dw_check_u64("stripped -rdynamic: add entry = nm -D", fs.v[0].entry,
			     nm_addr(obj("t_dyn"), "-D", "add"));
	dwq_funcs_free(&fs);
	{
		char *want = dw_cmd("nm -D --defined-only '%s' | awk '$2==\"T\"' | wc -l", obj("t_dyn"));

		dw_check(".exported * = nm -D T symbols", count(m, "*", DWQ_FUNCTION, 1) == strtoul(want, NULL, 10),
			 "%zu vs %s", count(m, "*", DWQ_FUNCTION, 1), want);
		free(want);
	}
	dwq_close(m);
}

static void test_library_module(void)
{
	struct dwq_mod *m = open_or_fail(obj("libdwtest.so"));
	struct dwq_funcs fs;
	char err[DWQ_ERRLEN];
	const struct dwq_func *f;

	if (!m)
		return;
	dw_check("libdwtest.so is ET_DYN", dwq_is_dyn(m), NULL);
	dwq_functions(m, "lib_*", DWQ_CALL, DWQ_PROLOGUE_AUTO, 0, &fs, err, sizeof err);
	f = find(&fs, "lib_entry", 0);
	dw_check("lib: lib_entry exported", f && f->exported, NULL);
	if (f)
		dw_check_u64("lib: lib_entry entry = nm", f->entry,
			     nm_addr(obj("libdwtest.so"), "", "lib_entry"));
	f = find(&fs, "lib_hidden", 0);
	dw_check("lib: static lib_hidden not exported", f && !f->exported, NULL);
	dwq_funcs_free(&fs);
	dwq_close(m);
}

/* Debug info in a separate file found through .gnu_debuglink (next to
 * the binary), as for distribution -dbg packages. */
static void test_debuglink(void)
{
	struct dwq_mod *m = open_or_fail(obj("t_sep"));
	struct dwq_funcs fs;
	char err[DWQ_ERRLEN];

	if (!m)
		return;
	dw_check("debuglink: has dwarf from t_sep.debug", dwq_has_dwarf(m), NULL);
	dwq_functions(m, "walk", DWQ_CALL, DWQ_PROLOGUE_AUTO, 0, &fs, err, sizeof err);
	dw_check("debuglink: walk with its source file", fs.n == 1 && fs.v[0].decl_file &&
							       !strcmp(fs.v[0].decl_file, src_target),
		 NULL);
	if (fs.n == 1)
		dw_check_u64("debuglink: walk entry = nm", fs.v[0].entry, nm_addr(obj("t_sep"), "", "walk"));
	dwq_funcs_free(&fs);
	dwq_close(m);
}

static void test_nopie(void)
{
	struct dwq_mod *m = open_or_fail(obj("t_nopie"));

	if (!m)
		return;
	dw_check("non-PIE is ET_EXEC", !dwq_is_dyn(m), NULL);
	dwq_close(m);
	test_entries("t_nopie", 0);
}

static void test_statements(void)
{
	struct dwq_mod *m = open_or_fail(obj("t_O0"));
	struct dwq_stmts st;
	char spec[256], err[DWQ_ERRLEN];
	int line = dw_marker_line(src_target, "walk_loop");

	if (!m)
		return;
	snprintf(spec, sizeof spec, "walk@target.c:%d", line);
	dw_check("statement walk@target.c:LOOP resolves",
		 dwq_statements(m, spec, &st, err, sizeof err) == 0 && st.n >= 1, "%s", err);
	if (st.n)
		dw_check_u64("statement walk@target.c:LOOP = first row of the line", st.v[0].addr,
			     line_addr(obj("t_O0"), line));
	dwq_stmts_free(&st);
	snprintf(spec, sizeof spec, "main@target.c:%d", dw_marker_line(src_target, "main_body"));
	dw_check("statement main@target.c:BODY", dwq_statements(m, spec, &st, err, sizeof err) == 0 &&
		 st.n == 1 && st.v[0].addr == line_addr(obj("t_O0"), dw_marker_line(src_target, "main_body")),
		 NULL);
	dwq_stmts_free(&st);
	dw_check("statement on a line without code: none",
		 dwq_statements(m, "main@target.c:1", &st, err, sizeof err) == 0 && st.n == 0, NULL);
	dwq_stmts_free(&st);
	dw_check("statement without a line: the function's entry",
		 dwq_statements(m, "main", &st, err, sizeof err) == 0 && st.n == 1 &&
		     !strcmp(st.v[0].func, "main"),
		 NULL);
	dwq_stmts_free(&st);
	snprintf(spec, sizeof spec, "*@target.c:%d", dw_marker_line(src_target, "twice_body"));
	{
		int inl = 0;

		if (dwq_statements(m, spec, &st, err, sizeof err) == 0)
			for (size_t i = 0; i < st.n; i++)
				inl |= !strcmp(st.v[i].func, "twice");
		dw_check("statement in an inline function: listed for twice (and its caller)", inl,
			 NULL);
	}
	dwq_stmts_free(&st);
	dwq_close(m);
}

static void test_plt(const char *bin)
{
	static const char *const names[] = {"puts", "strlen"};
	struct dwq_mod *m = open_or_fail(obj(bin));
	struct dwq_plts ps;
	char name[128], err[DWQ_ERRLEN];

	if (!m)
		return;
	for (size_t i = 0; i < 2; i++) {
		uint64_t want = dw_cmd_hex("objdump -d '%s' | awk '/<%s@plt>:$/ {print $1; exit}'",
					   obj(bin), names[i]);

		snprintf(name, sizeof name, "%s: plt(%s) = objdump", bin, names[i]);
		if (dwq_plt_entries(m, names[i], &ps, err, sizeof err) < 0 || ps.n != 1)
			dw_check(name, 0, "n=%zu %s", ps.n, err);
		else
			dw_check_u64(name, ps.v[0].addr, want);
		dwq_plts_free(&ps);
	}
	dwq_plt_entries(m, "nosuch*", &ps, err, sizeof err);
	snprintf(name, sizeof name, "%s: plt(nosuch*) none", bin);
	dw_check(name, ps.n == 0, NULL);
	dwq_plts_free(&ps);
	dwq_close(m);
}

static void test_find_library(void)
{
	char err[DWQ_ERRLEN], real[PATH_MAX];
	char *p, *ldd;

	realpath(obj("libdwtest.so"), real);
	p = dwq_find_library(obj("uselib"), "libdwtest.so", err, sizeof err);
	dw_check_str("library libdwtest.so via DT_RUNPATH $ORIGIN", p, real);
	free(p);
	/* a prefix of the file name is no match (SystemTap: none either) */
	p = dwq_find_library(obj("uselib"), "libdwtest", err, sizeof err);
	dw_check("library libdwtest (no suffix): no match", p == NULL, "got \"%s\"", p);
	free(p);
	p = dwq_find_library(obj("uselib"), real, err, sizeof err);
	dw_check_str("library by absolute path", p, real);
	free(p);
	ldd = dw_cmd("ldd '%s' | awk '$1==\"libc.so.6\" {print $3}' | xargs readlink -f",
		     obj("uselib"));
	ldd[strcspn(ldd, "\n")] = '\0';
	p = dwq_find_library(obj("uselib"), "libc.so.6", err, sizeof err);
	dw_check_str("library libc.so.6 = ldd", p, ldd);
	free(p);
	p = dwq_find_library(obj("uselib"), "libc*", err, sizeof err);
	dw_check_str("library libc* pattern = ldd", p, ldd);
	free(p);
	p = dwq_find_library(NULL, "libc.so.6", err, sizeof err);
	dw_check_str("library libc.so.6 from ld.so.cache alone", p, ldd);
	free(p);
	free(ldd);
	p = dwq_find_library(obj("uselib"), "libnosuch.so.9", err, sizeof err);
	dw_check("library libnosuch.so.9: error", !p && strstr(err, "cannot find library"), "%s", err);
	free(p);
}

static void test_find_executable(void)
{
	char err[DWQ_ERRLEN], real[PATH_MAX];
	char *p, *ls = dw_cmd("command -v ls | xargs readlink -f");

	ls[strcspn(ls, "\n")] = '\0';
	p = dwq_find_executable("ls", err, sizeof err);
	dw_check_str("process(\"ls\") found on $PATH", p, ls);
	free(p);
	free(ls);
	realpath(obj("t_O0"), real);
	p = dwq_find_executable(obj("t_O0"), err, sizeof err);
	dw_check_str("process(\"/path/t_O0\")", p, real);
	free(p);
	p = dwq_find_executable("nosuch-exe-h8", err, sizeof err);
	dw_check("process(\"nosuch\"): error", !p && strstr(err, "cannot find executable"), "%s", err);
	free(p);
}

static void test_debuginfo_by_build_id(void)
{
	const char *libc = "/lib/x86_64-linux-gnu/libc.so.6";
	char *bid = dw_cmd("readelf -n %s | awk '/Build ID/ {print $3}'", libc);
	char path[512];
	struct dwq_mod *m;
	struct dwq_funcs fs;
	char err[DWQ_ERRLEN];

	bid[strcspn(bid, "\n")] = '\0';
	snprintf(path, sizeof path, "/usr/lib/debug/.build-id/%.2s/%s.debug", bid, bid + 2);
	if (strlen(bid) < 4 || access(path, R_OK) != 0) {
		printf("UNSUPPORTED: separate debuginfo by build-id (no %s)\n", path);
		free(bid);
		return;
	}
	free(bid);
	m = open_or_fail(libc);
	if (!m)
		return;
	dw_check("libc + libc6-dbg: has dwarf", dwq_has_dwarf(m), NULL);
	dwq_functions(m, "malloc", DWQ_CALL, DWQ_PROLOGUE_AUTO, 0, &fs, err, sizeof err);
	dw_check("libc + libc6-dbg: malloc has a source file", fs.n == 1 && fs.v[0].decl_file, NULL);
	if (fs.n == 1)
		dw_check_u64("libc + libc6-dbg: malloc entry = nm -D", fs.v[0].entry,
			     nm_addr(libc, "-D", "malloc"));
	dwq_funcs_free(&fs);
	dwq_close(m);
}

static void test_cxx(void)
{
	struct dwq_mod *m = open_or_fail(obj("sym_target"));
	struct dwq_funcs fs;
	char err[DWQ_ERRLEN];

	if (!m)
		return;
	dwq_functions(m, "demo::level2", DWQ_CALL, DWQ_PROLOGUE_AUTO, 0, &fs, err, sizeof err);
	dw_check("c++: demo::level2 by qualified name",
		 fs.n == 1 && !strcmp(fs.v[0].name, "level2") && !strcmp(fs.v[0].qualname, "demo::level2") &&
			 fs.v[0].linkage && !strcmp(fs.v[0].linkage, "_ZN4demo6level2Ei"),
		 NULL);
	if (fs.n == 1)
		dw_check_u64("c++: level2 entry = nm", fs.v[0].entry,
			     nm_addr(obj("sym_target"), "", "_ZN4demo6level2Ei"));
	dwq_funcs_free(&fs);
	dw_check("c++: level2 by plain name", count(m, "level2", DWQ_CALL, 0) == 1, NULL);
	dwq_close(m);
}

/* Specs: what parses, what does not (never a crash). */
static void test_specs(void)
{
	static const struct {
		const char *spec;
		int ok;
		const char *func, *file;
		int l0, l1, any;
	} cases[] = {
		{"main", 1, "main", NULL, 0, 0, 0},
		{"main@a.c", 1, "main", "a.c", 0, 0, 0},
		{"main@a.c:12", 1, "main", "a.c", 12, 12, 0},
		{"*@src/a.c:3-9", 1, "*", "src/a.c", 3, 9, 0},
		{"f@a.c:*", 1, "f", "a.c", 0, 0, 1},
		{"ns::f@a.cc:4", 1, "ns::f", "a.cc", 4, 4, 0},
		{"@", 1, "", "", 0, 0, 0},
		{"f@a.c:", 0, NULL, NULL, 0, 0, 0},
		{"f@a.c:x", 0, NULL, NULL, 0, 0, 0},
		{"f@a.c:9-3", 1, "f", "a.c", 9, 3, 0}, /* no line: "no match" */
		{"f@a.c:5,7-9", 1, "f", "a.c", 5, 9, 0},
		{"f@a.c+3", 1, "f", "a.c", 3, 0, 0},
		{"f@a.c:4,x", 0, NULL, NULL, 0, 0, 0},
		/* empty items skipped, as SystemTap 4.8 does (stap-oracle -l) */
		{"f@a.c:4,", 1, "f", "a.c", 4, 4, 0},
		{"f@a.c:,4", 1, "f", "a.c", 4, 4, 0},
		{"f@a.c+1,30", 1, "f", "a.c", 1, 30, 0},
		{"f@a+b.c", 0, NULL, NULL, 0, 0, 0},
		{"", 0, NULL, NULL, 0, 0, 0},
		{"f@a.c:-1", 1, "f", "a.c", 1, 1, 0},
		{"f@a.c:-", 0, NULL, NULL, 0, 0, 0},
		{"f@a.c:99999999999", 0, NULL, NULL, 0, 0, 0},
		{"f@a.c:3x", 0, NULL, NULL, 0, 0, 0},
	};
	char name[128], err[DWQ_ERRLEN];

	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct dwq_spec sp;
		int rc = dwq_parse_spec(cases[i].spec, &sp, err, sizeof err);

		snprintf(name, sizeof name, "spec '%s' %s", cases[i].spec, cases[i].ok ? "parses" : "is malformed");
		if (!cases[i].ok) {
			dw_check(name, rc < 0 && strstr(err, "malformed specification"), "%s", err);
			continue;
		}
		dw_check(name, rc == 0 && !strcmp(sp.func, cases[i].func) &&
				       (cases[i].file ? sp.file && !strcmp(sp.file, cases[i].file) : !sp.file) &&
				       sp.line0 == cases[i].l0 && sp.line1 == cases[i].l1 &&
				       sp.line_any == cases[i].any,
			 NULL);
		dwq_spec_free(&sp);
	}
}

static void test_bad_files(void)
{
	char err[DWQ_ERRLEN];
	struct dwq_mod *m = dwq_open("/nonexistent/a.out", err, sizeof err);

	dw_check("open a missing file: error", !m && strstr(err, "/nonexistent/a.out"), "%s", err);
	m = dwq_open("/etc/passwd", err, sizeof err);
	dw_check("open a text file: error", !m && strstr(err, "cannot read ELF file /etc/passwd"), "%s",
		 err);
	dwq_close(m);
	m = dwq_open("/etc", err, sizeof err);
	dw_check("open a directory: error", !m, NULL);
	dwq_close(m);
}

static void test_python(void)
{
	const char *py = "/usr/bin/python3.11";
	struct dwq_mod *m;
	struct dwq_funcs fs;
	char err[DWQ_ERRLEN];

	if (access(py, X_OK) != 0) {
		printf("UNSUPPORTED: %s not installed\n", py);
		return;
	}
	m = open_or_fail(py);
	if (!m)
		return;
	dwq_functions(m, "PyObject_Call", DWQ_FUNCTION, DWQ_PROLOGUE_AUTO, 0, &fs, err, sizeof err);
	dw_check("python3.11 (stripped): PyObject_Call from .dynsym", fs.n == 1 && fs.v[0].exported, NULL);
	if (fs.n == 1)
		dw_check_u64("python3.11: PyObject_Call entry = nm -D", fs.v[0].entry,
			     nm_addr(py, "-D", "PyObject_Call"));
	dwq_funcs_free(&fs);
	dwq_close(m);
}

static int has_line(const struct dwl_lines *l, const char *want)
{
	for (size_t i = 0; i < l->n; i++)
		if (!strcmp(l->v[i], want))
			return 1;
	return 0;
}

static void test_listing(void)
{
	struct dwq_mod *m = open_or_fail(obj("t_O0"));
	struct dwl_lines l;
	char want[3 * PATH_MAX + 512], err[DWQ_ERRLEN], real[PATH_MAX];
	int sorted = 1;

	if (!m)
		return;
	realpath(obj("t_O0"), real);
	dwl_functions(m, real, NULL, "*", DWQ_FUNCTION, 0, "", 0, &l, err, sizeof err);
	snprintf(want, sizeof want, "process(\"%s\").function(\"main@%s:%d\")", real, src_target,
		 dw_marker_line(src_target, "main_decl"));
	dw_check("-l main line", has_line(&l, want), "missing %s", want);
	snprintf(want, sizeof want, "process(\"%s\").function(\"_start\")", real);
	dw_check("-l _start (no debuginfo) line", has_line(&l, want), "missing %s", want);
	for (size_t i = 1; i < l.n; i++)
		sorted &= strcmp(l.v[i - 1], l.v[i]) < 0;
	dw_check("-l lines sorted and unique", sorted && l.n == 14, "n=%zu", l.n);
	dwl_lines_free(&l);

	dwl_functions(m, real, NULL, "main", DWQ_CALL, 0, "", 1, &l, err, sizeof err);
	snprintf(want, sizeof want,
		 "process(\"%s\").function(\"main@%s:%d\") $argc:int $argv:char** $b:point_t $a:point_t $r:long int",
		 real, src_target, dw_marker_line(src_target, "main_decl"));
	dw_check("-L main with variables", l.n == 1 && !strcmp(l.v[0], want), "got %s want %s",
		 l.n ? l.v[0] : "", want);
	dwl_lines_free(&l);

	{
		struct dwq_funcs fs;
		char *pp;

		dwq_functions(m, "walk", DWQ_CALL, DWQ_PROLOGUE_AUTO, 0, &fs, err, sizeof err);
		pp = fs.n == 1 ? dwl_function_pp(real, NULL, &fs.v[0], ".call") : NULL;
		snprintf(want, sizeof want, "process(\"%s\").function(\"walk@%s:%d\").call", real,
			 src_target, dw_marker_line(src_target, "walk_decl"));
		dw_check_str("pp() of a function probe", pp, want);
		free(pp);
		dwq_funcs_free(&fs);
	}
	dwl_functions(m, real, NULL, "say", DWQ_CALL, 0, ".return", 1, &l, err, sizeof err);
	snprintf(want, sizeof want,
		 "process(\"%s\").function(\"say@%s:%d\").return $return:size_t $s:char const*", real,
		 src_target, dw_marker_line(src_target, "say_decl"));
	dw_check("-L say.return with $return", l.n == 1 && !strcmp(l.v[0], want), "got %s want %s",
		 l.n ? l.v[0] : "", want);
	dwl_lines_free(&l);

	dwl_marks(real, real, NULL, NULL, "*", 1, &l, err, sizeof err);
	snprintf(want, sizeof want, "process(\"%s\").mark(\"three\") $arg1:long $arg2:long $arg3:long",
		 real);
	dw_check("-L mark three", l.n == 3 && has_line(&l, want), "n=%zu", l.n);
	dwl_lines_free(&l);
	dwl_marks(real, real, NULL, "targ*", "g*", 0, &l, err, sizeof err);
	snprintf(want, sizeof want, "process(\"%s\").provider(\"target\").mark(\"guarded\")", real);
	dw_check("-l provider(\"targ*\").mark(\"g*\")", l.n == 1 && !strcmp(l.v[0], want), "got %s",
		 l.n ? l.v[0] : "");
	dwl_lines_free(&l);

	dwl_plts(m, real, NULL, "*", &l, err, sizeof err);
	snprintf(want, sizeof want, "process(\"%s\").plt(\"puts\")", real);
	dw_check("-l plt puts", has_line(&l, want), NULL);
	dwl_lines_free(&l);

	snprintf(want, sizeof want, "main@target.c:%d", dw_marker_line(src_target, "main_body"));
	dwl_statements(m, real, NULL, want, 0, &l, err, sizeof err);
	snprintf(want, sizeof want, "process(\"%s\").statement(\"main@%s:%d\")", real, src_target,
		 dw_marker_line(src_target, "main_body"));
	dw_check("-l statement", l.n == 1 && !strcmp(l.v[0], want), "got %s", l.n ? l.v[0] : "");
	dwl_lines_free(&l);
	dwq_close(m);

	m = open_or_fail(obj("libdwtest.so"));
	if (m) {
		char lib[PATH_MAX], exe[PATH_MAX];

		realpath(obj("libdwtest.so"), lib);
		realpath(obj("uselib"), exe);
		dwl_functions(m, exe, lib, "lib_entry", DWQ_CALL, 0, "", 0, &l, err, sizeof err);
		snprintf(want, sizeof want,
			 "process(\"%s\").library(\"%s\").function(\"lib_entry@%s:%d\")", exe,
			 lib, src_lib, dw_marker_line(src_lib, "lib_entry_decl"));
		dw_check("-l .library().function()", l.n == 1 && !strcmp(l.v[0], want), "got %s want %s",
			 l.n ? l.v[0] : "", want);
		dwl_lines_free(&l);
		dwq_close(m);
	}
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: %s SRCDIR OBJDIR\n", argv[0]);
		return 2;
	}
	srcdir = argv[1];
	objdir = argv[2];
	if (!realpath(argv[1], src_target))
		return 2;
	memcpy(src_lib, src_target, sizeof src_lib);
	strncat(src_target, "/target.c", sizeof src_target - strlen(src_target) - 1);
	strncat(src_lib, "/libdwtest.c", sizeof src_lib - strlen(src_lib) - 1);
	test_entries("t_O0", 0);
	test_entries("t_O2", 1);
	test_nopie();
	test_entries("t_dw4", 0);
	test_debuglink();
	test_patterns();
	test_nodebug();
	test_library_module();
	test_statements();
	test_plt("t_O0");
	test_plt("t_nopie");
	test_plt("t_ibt");
	test_find_library();
	test_find_executable();
	test_debuginfo_by_build_id();
	test_cxx();
	test_python();
	test_bad_files();
	test_specs();
	test_listing();
	return dw_failures ? 1 : 0;
}
