/* stap -l / -L for user-space probe points: SystemTap's spellings,
 *   process("/abs/a.out").function("main@/abs/src/a.c:12")
 *   process("/abs/a.out").function("main@/abs/src/a.c:12") $argc:int $argv:char**
 *   process("/abs/a.out").function("name")           (no debug info)
 *   process("/abs/a.out").library("/abs/libx.so").function("f@/src/x.c:3")
 *   process("/abs/a.out").statement("main@/abs/src/a.c:14")
 *   process("/abs/a.out").mark("name") $arg1:long $arg2:long
 *   process("/abs/a.out").provider("prov").mark("name")  (provider given)
 *   process("/abs/a.out").plt("puts")
 * Lines come back sorted and without duplicates (SystemTap prints the set
 * of matches). The driver prints them one per line. */
#ifndef STAP_DWARF_LIST_H
#define STAP_DWARF_LIST_H

#include "dwarf_query.h"

struct dwl_lines {
	char **v;
	size_t n;
};

/* PROCESS is the executable's absolute path; LIBRARY, when not NULL, the
 * library's (M is then the library). SUFFIX is appended to every probe
 * point (".call", ".return", ".inline", ".exported" or ""); WITH_VARS
 * adds -L's variables ($return too for ".return"). */
int dwl_functions(struct dwq_mod *m, const char *process, const char *library, const char *spec,
		  enum dwq_kind kind, int exported_only, const char *suffix, int with_vars,
		  struct dwl_lines *out, char *err, size_t errlen);
int dwl_statements(struct dwq_mod *m, const char *process, const char *library, const char *spec,
		   int with_vars, struct dwl_lines *out, char *err, size_t errlen);
/* Markers: PROVIDER may be NULL (any; then not printed, as SystemTap
 * prints only the components the probe point had). */
int dwl_marks(const char *path, const char *process, const char *library, const char *provider,
	      const char *name, int with_vars, struct dwl_lines *out, char *err, size_t errlen);
int dwl_plts(struct dwq_mod *m, const char *process, const char *library, const char *pattern,
	     struct dwl_lines *out, char *err, size_t errlen);

/* -L's variables of one resolved point: " $return:T" first when
 * IS_RETURN (FUNC_DIE's type), then " $name:type" for every variable in
 * scope at PC (a vaddr of M). "" without DWARF (FUNC_DIE 0). malloc'd. */
char *dwl_point_vars(struct dwq_mod *m, Dwarf_Off func_die, uint64_t pc, int is_return);

void dwl_lines_free(struct dwl_lines *l);

/* One function's probe point as pp() and -l spell it (malloc'd). */
char *dwl_function_pp(const char *process, const char *library, const struct dwq_func *fn,
		      const char *suffix);

#endif
