/* Run-time symbolization of addresses in a traced process, and unwinding
 * of a ptrace-stopped thread, through libdwfl's linux-proc support.
 *
 * One _stp_symtab per traced process and exec image, kept by the symbol
 * cache (_stp_sym_of, cache.c). Lookups are cached per address. The
 * module list is re-read after a range is reported unmapped
 * (_stp_sym_unmapped: the cache does it, by its rule, at dlopen and
 * dlclose too), and at a miss in no module known if /proc/PID/maps
 * changed; the cached names of a range stay until it is reported
 * unmapped.
 *
 * Formats (SystemTap's, and issue 4's call-graph names):
 *   usymdata   "name+0xOFF/0xSIZE [/path/of/module]"; when only the
 *              module is known "0xADDR [/path+0xOFF/0xMODSIZE]"; else
 *              "0xADDR"
 *   usymname   "name", or "0xADDR" when no symbol covers it
 *   umodname   module basename, or "<unknown>"
 *   cg name    "name" / "name+0xOFF" in the main executable,
 *              "name [libc.so.6]" / "name+0xOFF [libc.so.6]" elsewhere,
 *              "libfoo.so+0x1a2b" (ELF vaddr) with no symbol, "0x7f12345000"
 *              in no module.
 * C++ names are demangled (when libstdc++ can be loaded); a "NAME.cold"
 * part is reported as NAME when NAME is in the same module.
 *
 * Never exits; returns -1 (or a fallback text) on failure. Not
 * thread-safe: the tracer calls it from its one handler thread. */
#ifndef STP_SYMBOLS_H
#define STP_SYMBOLS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct _stp_symtab;

struct _stp_syminfo {
	uint64_t addr;
	const char *module;	   /* basename of the module, NULL: in no module */
	const char *modpath;	   /* its path as mapped */
	uint64_t modstart, modend; /* its address range in the process */
	uint64_t modoff;	   /* addr as an ELF vaddr of the module */
	int is_main;		   /* the main executable */
	const char *name;	   /* function (demangled), NULL if unknown */
	uint64_t symaddr;	   /* start of that function */
	uint64_t offset;	   /* addr - symaddr */
	uint64_t size;		   /* the function's size (0 if unknown) */
	uint8_t cold;		   /* addr is in NAME.cold, named NAME */
	uint8_t plt;		   /* addr is in a PLT section (.plt, .plt.sec, .plt.got) */
	const char *file;	   /* source file, NULL without debug info ... */
	int line;		   /* 0 if unknown ... (both filled only by
				      _stp_sym_lookup_line: it reads DWARF) */
};

struct _stp_symtab *_stp_sym_open(pid_t pid);
void _stp_sym_close(struct _stp_symtab *st);

/* The main executable's path (for is_main); by default /proc/PID/exe. */
void _stp_sym_set_main(struct _stp_symtab *st, const char *path);

/* Forget everything about [start, end) (munmap, dlclose) and re-read the
 * process's modules on the next lookup. */
void _stp_sym_unmapped(struct _stp_symtab *st, uint64_t start, uint64_t end);

/* The load bias of the module mapped from PATH: its run-time address of
 * an ELF vaddr (as the translator's resolvers give them) is vaddr + bias
 * (0 for a non-PIE executable). 0, or -1 when PATH is not mapped (yet). */
int _stp_sym_module_bias(struct _stp_symtab *st, const char *path, uint64_t *bias);

/* Cached lookup; the pointer stays valid until the entry is invalidated.
 * Symbol and module only: names come from the symbol tables, so a call
 * graph never loads DWARF. _stp_sym_lookup_line adds file and line. */
const struct _stp_syminfo *_stp_sym_lookup(struct _stp_symtab *st, uint64_t addr);
const struct _stp_syminfo *_stp_sym_lookup_line(struct _stp_symtab *st, uint64_t addr);

/* Formatting into BUF (always NUL-terminated); return the length. */
size_t _stp_sym_usymdata(struct _stp_symtab *st, uint64_t addr, char *buf, size_t len);
size_t _stp_sym_usymname(struct _stp_symtab *st, uint64_t addr, char *buf, size_t len);
size_t _stp_sym_umodname(struct _stp_symtab *st, uint64_t addr, char *buf, size_t len);
size_t _stp_sym_cgname(struct _stp_symtab *st, uint64_t addr, char *buf, size_t len);
/* The cg name of i (a lookup's answer), made once and kept with it: valid
 * as long as i is; its length in *len. NULL when out of memory. */
const char *_stp_sym_cgname_kept(const struct _stp_syminfo *i, size_t *len);
/* Changes whenever cached entries are dropped (unmapped, a table closed):
 * a copy of a lookup's answer is good while it stays the same. */
uint64_t _stp_sym_generation(void);
extern uint64_t _stp_sym_gen; /* its value, for the hottest callers */
/* "file:line" or "" when unknown. */
size_t _stp_sym_fileline(struct _stp_symtab *st, uint64_t addr, char *buf, size_t len);

/* ---- the symbol cache (cache.c): one table per traced process, shared
 * by the context tapset and the call graph, with one invalidation rule
 * (see cache.c). The run loop and the probe hooks call the rest. ---- */

/* The table of PID, opened at its first use (NULL: out of memory). */
struct _stp_symtab *_stp_sym_of(pid_t pid);
/* What happened to PID's memory (the probe hooks): exec (a new image) and
 * the end of the process drop its table; maps_changed (the engine saw
 * dlopen or dlclose) compares its mappings now; unmap forgets a range. */
void _stp_sym_exec(pid_t pid);
void _stp_sym_gone(pid_t pid);
void _stp_sym_maps_changed(pid_t pid);
void _stp_sym_unmap(pid_t pid, uint64_t start, uint64_t end);
/* PID has a table that the engine may not keep current yet: the probe
 * hooks then ask the engine for its dlopen/dlclose (maps_changed) and say
 * so by _stp_sym_watching, which compares the mappings once (what changed
 * unseen since the table was opened). */
int _stp_sym_needs_watch(pid_t pid);
void _stp_sym_watching(pid_t pid);
/* The end of the run: every table goes. */
void _stp_sym_cache_free(void);

/* Memory of the process for the unwinder: 0, or -errno. */
typedef int (*_stp_sym_read_fn)(void *arg, uint64_t addr, void *buf, size_t len);

/* Unwind thread TID (stopped under ptrace by the calling thread) with its
 * CFI, from the registers DREGS (17, DWARF x86_64 order: rax rdx rcx rbx
 * rsi rdi rbp rsp r8..r15 rip; rip is the probe's pc; NULL: the thread's
 * own, by PTRACE_GETREGS). Every call unwinds afresh (no cached stack).
 * PCS receives up to MAX program counters, innermost first; the first is
 * the current pc, the others return addresses (symbolize pc-1 for the
 * caller's line). Returns the count, -1 on error. */
int _stp_sym_unwind(struct _stp_symtab *st, pid_t tid, const uint64_t *dregs, uint64_t *pcs,
		    int max);
/* The same, reading the stack through READ (NULL: /proc/PID/mem). */
int _stp_sym_unwind_with(struct _stp_symtab *st, pid_t tid, const uint64_t *dregs,
			 _stp_sym_read_fn read, void *arg, uint64_t *pcs, int max);

/* The same, each frame with its rsp (0: not known) and whether its pc is
 * where it was interrupted (a signal frame's caller: no pc-1). */
struct _stp_sym_frame {
	uint64_t pc, sp;
	int activation;
};
int _stp_sym_unwind_frames(struct _stp_symtab *st, pid_t tid, const uint64_t *dregs,
			   _stp_sym_read_fn read, void *arg, struct _stp_sym_frame *fr, int max);

/* Demangle a C++ name (NULL if not mangled or no demangler); malloc'd. */
char *_stp_sym_demangle(const char *name);

#endif
