/* Probe-point resolution in ELF/DWARF binaries (user space): functions,
 * statements, PLT entries, shared-library lookup. Pass 2 calls this for
 * process("PATH").function(...), .statement(...), .plt(...) and
 * .library(...).
 *
 * Addresses are ELF virtual addresses as nm/objdump print them: for an
 * ET_EXEC binary that is where the code runs; for a PIE or a shared
 * library (ET_DYN) it is relative to the load base, and the runtime adds
 * the base when the module is mapped.
 *
 * Self-contained (libdw, libdwfl, libelf, libc only): functions return 0
 * on success and -1 with a message in ERR (SystemTap's wording where it
 * has one) on failure. Nothing here exits. */
#ifndef STAP_DWARF_QUERY_H
#define STAP_DWARF_QUERY_H

#include <stddef.h>
#include <stdint.h>

#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>

#define DWQ_ERRLEN 4096 /* names from binaries can be long */

struct dwq_mod; /* one opened binary or library */

/* Open PATH (made absolute and canonical); debug info is looked for in the
 * file itself, then by build-id and debuglink under /usr/lib/debug (libdwfl's
 * standard search). A binary without debug info still opens: its functions
 * come from .symtab/.dynsym. */
struct dwq_mod *dwq_open(const char *path, char *err, size_t errlen);
void dwq_close(struct dwq_mod *m);

const char *dwq_path(const struct dwq_mod *m); /* absolute path */
int dwq_is_dyn(const struct dwq_mod *m);       /* ET_DYN: PIE or library */
int dwq_has_dwarf(const struct dwq_mod *m);    /* has DWARF with CUs */
/* The DWARF handle and the bias to add to a DWARF address to get a dwfl
 * address; dwq_dwarf_to_vaddr turns a DWARF address into the module's
 * ELF vaddr (the form every address here takes). */
Dwarf *dwq_dwarf(const struct dwq_mod *m);
Dwfl_Module *dwq_dwfl_module(const struct dwq_mod *m);
uint64_t dwq_dwarf_to_vaddr(const struct dwq_mod *m, Dwarf_Addr a);
uint64_t dwq_vaddr_to_dwarf(const struct dwq_mod *m, uint64_t v);

/* Where .function probes go in code with DWARF (SystemTap's
 * --prologue-searching): AUTO skips the prologue only in CUs compiled
 * without optimisation (DW_AT_producer has no -O, or -O0), ALWAYS and
 * NEVER as named. The place after the prologue is libdw's
 * dwarf_entry_breakpoints (a prologue_end row of the line table, else the
 * first row of the next source line). */
enum dwq_prologue { DWQ_PROLOGUE_AUTO, DWQ_PROLOGUE_ALWAYS, DWQ_PROLOGUE_NEVER };
/* What .function probes use (-P, --prologue-searching=WHEN). */
extern enum dwq_prologue dwq_prologue_default;

/* What kind of function probe is being resolved. */
enum dwq_kind {
	DWQ_FUNCTION, /* .function: out-of-line functions and inline instances */
	DWQ_CALL,     /* .call / .return: out-of-line functions only */
	DWQ_INLINE,   /* .inline: inline instances only */
};

struct dwq_func {
	char *name;	 /* DW_AT_name or the symbol's name */
	char *qualname;	 /* with C++ scopes (ns::Class::name), else = name */
	char *linkage;	 /* DW_AT_linkage_name (mangled) or NULL */
	uint64_t entry;	 /* vaddr of the first instruction */
	uint64_t probe;	 /* vaddr where a .function probe goes */
	uint64_t size;	 /* bytes of the entry range (0 if unknown) */
	char *decl_file; /* absolute source file, NULL without DWARF */
	int decl_line;	 /* 0 if unknown */
	int inlined;	 /* an inline instance (entry = its entry pc) */
	int exported;	 /* named in .dynsym, defined, global or weak */
	int has_dwarf;	 /* 0: from the ELF symbol tables */
	Dwarf_Off die;	 /* DIE offset in dwq_dwarf() (0 without DWARF) */
};

struct dwq_funcs {
	struct dwq_func *v;
	size_t n;
};

/* A parsed "PATTERN[@FILE[:LINES|+N]]", LINES "*" or "N[-M][,...]":
 * ranges (nranges 0: no line given; line0/line1 their lowest and highest
 * line); line_any: LINES was "*"; relative: "+N", line0 = N lines after
 * the function's declaration line. */
struct dwq_spec {
	char *func;
	char *file; /* NULL if absent */
	int line0, line1;
	int line_any;
	int relative;
	int (*ranges)[2];
	int nranges;
	int single_line; /* ":N" (a "no line records" message names it) */
};
int dwq_parse_spec(const char *spec, struct dwq_spec *out, char *err, size_t errlen);
void dwq_spec_free(struct dwq_spec *s);
/* Is LINE one of the spec's lines (ranges, or "*")? */
int dwq_spec_has_line(const struct dwq_spec *s, int line);

/* Does the file pattern of a spec match FILE (a path, or NULL)? */
int dwq_file_matches(const char *pattern, const char *file);

/* Functions matching SPEC (SystemTap wildcards * ? [...] through
 * fnmatch; a line in SPEC is not looked at: SystemTap 4.8 matches
 * FUNC@FILE:N as FUNC@FILE, with a warning), sorted by entry address then
 * name. exported_only keeps those
 * in .dynsym (.exported). A match of nothing is not an error here: OUT is
 * empty. */
int dwq_functions(struct dwq_mod *m, const char *spec, enum dwq_kind kind, enum dwq_prologue pmode,
		  int exported_only, struct dwq_funcs *out, char *err, size_t errlen);
void dwq_funcs_free(struct dwq_funcs *f);

/* .statement("FUNC[@FILE[:LINES|+N]]"): for each matching function and
 * each of its lines the spec names, the lowest address of a row of that
 * line (SystemTap's one probe per line); without a line, the function's
 * entry, named by its declaration line. */
struct dwq_stmt {
	uint64_t addr;
	char *func;
	char *file;
	int line;
	int req_line; /* .nearest of one line without rows: that line, else 0 */
};
struct dwq_stmts {
	struct dwq_stmt *v;
	size_t n;
	/* none found for a single line (":N", "+N"): SystemTap's "no line
	 * records for FILE:N [man error::dwarf] (try :A or :B)", else NULL */
	char *hint;
};
int dwq_statements(struct dwq_mod *m, const char *spec, struct dwq_stmts *out, char *err,
		   size_t errlen);
/* The same with .nearest (NEAREST 1): a line without rows names the
 * closest line with rows, at most 5 lines away, as SystemTap 4.8's. */
int dwq_statements_nearest(struct dwq_mod *m, const char *spec, int nearest, struct dwq_stmts *out,
			   char *err, size_t errlen);
void dwq_stmts_free(struct dwq_stmts *s);

/* .plt("PATTERN"): PLT entries (.plt, .plt.sec; not .plt.got) of the
 * functions whose names match. An entry's addr is that of the stub a call
 * goes through (in .plt.sec when the binary has one). */
struct dwq_plt {
	char *name;
	uint64_t addr;
};
struct dwq_plts {
	struct dwq_plt *v;
	size_t n;
};
int dwq_plt_entries(struct dwq_mod *m, const char *pattern, struct dwq_plts *out, char *err,
		    size_t errlen);
void dwq_plts_free(struct dwq_plts *p);

/* .library("LIB") for the executable EXE: a path is taken as it is
 * (made absolute); a bare name (or pattern) is matched against the
 * basenames of EXE's DT_NEEDED closure, each found as the dynamic loader
 * would (DT_RPATH, LD_LIBRARY_PATH, DT_RUNPATH, /etc/ld.so.cache, the
 * default directories), then looked up on its own in those places.
 * Returns a malloc'd absolute path, or NULL with ERR set. */
char *dwq_find_library(const char *exe, const char *lib, char *err, size_t errlen);
/* Is the ELF file at PATH a shared library rather than a program? */
int dwq_is_shared_library(const char *path);
/* How SystemTap's pn() names a library written LIB and found at FOUND
 * (malloc'ed). */
char *dwq_library_pn(const char *lib, const char *found);

/* process("NAME"): NAME with a '/' is made absolute; a bare name is
 * looked up on $PATH as SystemTap does. malloc'd, or NULL with ERR. */
char *dwq_find_executable(const char *name, char *err, size_t errlen);

/* The resolved DT_NEEDED closure of EXE (absolute paths, breadth-first,
 * no duplicates); returns the count, -1 on error. *out is malloc'd. */
int dwq_needed_closure(const char *exe, char ***out, char *err, size_t errlen);
/* The same libraries named as ldd (and SystemTap's "similar libraries")
 * names them: the path where the search found each, the interpreter (when
 * a library needs it) by EXE's PT_INTERP. */
int dwq_needed_names(const char *exe, char ***out, char *err, size_t errlen);
void dwq_free_strv(char **v, int n);

/* What SystemTap 4.8 suggests when a probe point of M matches nothing
 * (its "no match (similar functions: ...)"): for .function, the names of
 * the FUNC entries of the symbol table libdwfl reads (local and undefined
 * ones too, spelled as its string table has them: "puts@GLIBC_2.2.5" in a
 * .symtab) and of the inline functions of the CUs that have a source file
 * matching FILE (every CU when FILE is NULL); for .plt, the functions of
 * the JUMP_SLOT relocations. Return the count of malloc'd names in *out
 * (dwq_free_strv), with repeats. */
int dwq_function_candidates(struct dwq_mod *m, const char *file, char ***out);
int dwq_plt_candidates(struct dwq_mod *m, char ***out);
/* Does SystemTap take .library(LIB) as a file of its own (a path, or a
 * name found in a $LD_LIBRARY_PATH directory or the current directory;
 * no wildcards), rather than looking among the executable's libraries
 * (where a probe point matching nothing there gives a plain "no match")? */
int dwq_library_named_directly(const char *lib);

/* Format an error message into ERR (ERRLEN bytes); no-op when ERR is NULL.
 * Shared by the dwarf_*.c modules. */
void dwq_seterr(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
