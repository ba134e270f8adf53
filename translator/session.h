/* The state of one stap run, handed from pass to pass: options from the
 * command line (main.c), the parsed files (pass 1), the elaborated program
 * (pass 2), the generated C and the compiled object (passes 3 and 4). */
#ifndef STAP_SESSION_H
#define STAP_SESSION_H

#include "ast.h"

/* What a derived probe is; each has one line in probe_kinds.c, which
 * says what the passes do with it. */
enum probe_kind {
	PK_BEGIN,
	PK_END,
	PK_ERROR,
	PK_NEVER,
	PK_TIMER,		   /* timer.s/ms/us/ns/hz/jiffies, with .randomize */
	PK_PROCESS_FUNCTION,	   /* process(...).function(...)[.call|.inline|.exported] */
	PK_PROCESS_RETURN,	   /* process(...).function(...).return */
	PK_PROCESS_CALLEE,	   /* process(...).function(...).callee(...), .callees[(N)] */
	PK_PROCESS_STATEMENT,	   /* process(...).statement(...)[.absolute] */
	PK_PROCESS_MARK,	   /* process(...)[.provider(...)].mark(...) */
	PK_PROCESS_PLT,		   /* process(...).plt[(...)] */
	PK_PROCESS_PLT_RETURN,	   /* process(...).plt[(...)].return */
	PK_PROCESS_BEGIN,	   /* process[(...)].begin */
	PK_PROCESS_END,		   /* process[(...)].end */
	PK_PROCESS_THREAD_BEGIN,   /* process[(...)].thread.begin */
	PK_PROCESS_THREAD_END,	   /* process[(...)].thread.end */
	PK_PROCESS_SYSCALL,	   /* process[(...)].syscall */
	PK_PROCESS_SYSCALL_RETURN, /* process[(...)].syscall.return */
	PK_DCG_CALL,	  /* __dynamic_call_graph.call (tapset alias dynamic_call_graph.call) */
	PK_DCG_RETURN,	  /* __dynamic_call_graph.return */
	PK_STDIN,	  /* procfs("__stdin").write: stdin, the input.* aliases */
	PK_PROCESS_LABEL, /* process(...).function(...).label(...) */
	PK_COUNT
};

/* One concrete probe point a probe body is attached to, after aliases and
 * wildcards are expanded (SystemTap's "derived probe"). */
struct derived_probe {
	enum probe_kind kind;
	struct probe *probe;		   /* body (alias bodies already merged) */
	struct probe_point *point;	   /* the concrete point */
	const char *pp;			   /* pp() text, e.g. "begin", "timer.ms(100)" */
	const char *alias_pp;		   /* what the user wrote, for -p2 comments */
	const char *pn;			   /* pn(): the outermost alias as matched
					    * (wildcards expanded); NULL: pp */
	int64_t sequence;		   /* begin(N)/end(N)/error(N) */
	int64_t interval_ns, randomize_ns; /* timers */
	int id;
	/* pass 2: where messages about this probe point: the 'probe' keyword,
	 * or for an alias expansion the point that named the alias */
	const struct token *tok;
	/* process probes (probes_process.c): the executable's absolute path
	 * (NULL: any traced process), the ELF vaddr probed, the page-aligned
	 * lowest PT_LOAD vaddr, and the resolver's own data (struct
	 * proc_point *, for target variables). more: further probes the same
	 * point resolved to (one per matched function). */
	const char *module;
	uint64_t addr, module_base;
	/* .library("LIB") probes: the library's absolute path (addr is then
	 * an ELF vaddr of the library, placed at its load bias) */
	const char *library;
	/* .mark probes: the marker (struct sdt_probe *) and its semaphore's
	 * ELF vaddr (0: none), raised while the probe is placed */
	void *mark;
	uint64_t semaphore;
	/* .plt probes: the PLT entry's symbol name ($$name) */
	const char *plt_name;
	void *proc;
	struct derived_probe *more;
	/* a hidden probe that saves @entry values for this .return probe
	 * (its table entry's sequence is that probe's index) */
	struct derived_probe *entry_of;
	/* pn() where it is not pp() and no alias names it (.plt: the
	 * .plt("NAME") form), before the point's ? ! and condition */
	const char *point_pn;
	/* the -p2 "<- ..." text where it is neither pp() nor pn() (a
	 * .library mark: the library as written, at the marker's address) */
	const char *point_from;
	/* the point, or an alias point that led to it, is optional (?): the
	 * run does not fail if it cannot be placed (runtime/probes/) */
	int optional;
	/* .callee probes: the return addresses the calls that lead to it
	 * leave, as ELF vaddrs of the module: [0] in its caller (level 1),
	 * [1] in the caller's caller, ... */
	uint64_t *callers;
	int ncallers;
	/* process(PID) without -c/-x: only that process */
	long pid;
};

struct define {
	const char *name, *value;
}; /* -D NAME[=VALUE] */
struct gset {
	const char *name, *value;
}; /* -G NAME=VALUE */

struct session {
	/* command line */
	const char *script_file;  /* NULL with -e */
	const char *script_text;  /* -e */
	struct vec extra_scripts; /* -E: char *, run with the main script */
	struct vec args;	  /* script arguments: char * ($1...) */
	char *args_used;	  /* pass 1: args.n flags, $N/@N in a user file */
	int last_pass;		  /* -p, default 5 */
	int verbose;		  /* -v count */
	int verbose_pass5;	  /* pass 5's: -v count, or --vp's fifth digit */
	struct vec include_dirs;  /* -I: char * */
	struct vec defines;	  /* -D: struct define * */
	struct vec gsets;	  /* -G: struct gset * */
	int guru;		  /* -g */
	int unoptimized;	  /* -u */
	int suppress_warnings;	  /* -w */
	int warnings_as_errors;	  /* -W */
	int keep_tmp;		  /* -k */
	const char *output_file;  /* -o */
	int timeout_s;		  /* -T, 0 none */
	const char *target_cmd;	  /* -c */
	long target_pid;	  /* -x, 0 none */
	int listing;		  /* -l / -L: 1 or 2 */
	const char *listing_pattern;
	int skip_badvars; /* --skip-badvars */
	/* see doc/options.md for these */
	int timing;		     /* -t: per-probe hits and times at the end */
	int suppress_handler_errors; /* --suppress-handler-errors */
	int no_global_var_display;   /* --no-global-var-display */
	int poison_cache;	     /* --poison-cache: read no cache entry */
	int clean_cache;	     /* --clean-cache: empty the cache, exit */
	int suppress_time_limits;    /* --suppress-time-limits (-g): no MAXACTION */
	const char *runtime_dir_opt; /* -R DIR: stap_runtime.h is there */
	int bufsize_mb;		     /* -s MB, 0: the default */
	const char *switch_spec;     /* -S SIZE[,N] for staprun */
	const char *user_module;     /* -m NAME: the object is NAME.so, kept in . */
	const char *kernel_release;  /* -r RELEASE: kernel_v, kernel_vr */
	const char *compat_version;  /* --compatible: systemtap_v */
	struct vec cflags;	     /* -B FLAG: for the compiler at pass 4 */
	enum { DUMP_NONE, DUMP_FUNCTIONS, DUMP_PROBE_TYPES, DUMP_PROBE_ALIASES } dump;

	/* where things are (set by main.c: in-tree after make, else installed) */
	const char *tapset_dir;
	const char *runtime_include_dir;
	const char *runtime_lib_dir;
	const char *staprun_path;
	const char *cache_dir; /* NULL: caching off */
	const char *tmpdir;    /* created by main.c; removed unless -k */

	/* pass 1 */
	struct stapfile *user_file;
	struct vec extra_files;	  /* struct stapfile *: the -E scripts */
	struct vec library_files; /* struct stapfile *: the tapset */

	/* pass 2 */
	struct vec probes;    /* struct derived_probe *, in output order */
	struct vec globals;   /* struct vardecl *: used globals */
	struct vec functions; /* struct functiondecl *: used functions */
	struct vec embeds;    /* struct embedded_block *: top-level %{ %} */
	int num_errors;	      /* semantic errors reported */
	int pass_aborted;     /* a pass stopped as SystemTap's exceptions stop
				 it: no "Pass N: failed" line */
	/* the dynamic call graph's handlers (elaborate_dcg_needs.c): the
	 * events' registers they use (1 args, 2 retval), the events that stop
	 * the thread (4 calls, 8 returns), and what needs the
	 * thread stopped at the event (NULL: nothing) */
	int dcg_capture;
	char *dcg_stop;

	/* pass 3 and 4 */
	const char *c_file;	 /* generated C path */
	const char *module_name; /* stap_<hash> */
	const char *object_file; /* compiled .so path */
	int cache_hit;
};

/* The passes. Each returns 0 on success, non-zero after printing its
 * errors. Pass N prints its result when it is the last pass. */
int pass1_parse(struct session *s);
int pass2_elaborate(struct session *s);
int pass3_translate(struct session *s);
int pass4_compile(struct session *s);
/* The C compiler pass 4 runs ($CC when it is one word, else gcc), and
 * running a tool as pass 4 runs it: waited for, its stderr into ERRFILE
 * (NULL: ours), a signal to stap ending it too; its exit status or -1. */
const char *pass4_compiler(void);
int pass4_run(char *const argv[], const char *errfile);
int pass5_run(struct session *s);

/* Value of -D NAME, or NULL. */
const char *session_define(const struct session *s, const char *name);
/* A -D whose value is text of any bytes (STP_DCG_FORMAT, STP_DCG_OUTPUT):
 * never pasted into the C as a macro body (nor given to the compiler),
 * but written by pass 3 as a C string literal (emit_cstr). */
int session_define_is_string(const char *name);
extern const char *const session_string_defines[]; /* NULL-terminated */

#endif
