/* process(...) probe points, resolved against the program's ELF/DWARF:
 *   process("PATH") | process(PID) | process      (the -c/-x target)
 *     .function("PATTERN[@FILE[:LINE]]") [.call | .return | .inline | .exported]
 *     .statement("FUNC@FILE:LINE") | .statement(ADDRESS)[.absolute]
 *     .plt["(PATTERN)"] [.return]        ($$name: the PLT entry's symbol)
 *     .library("LIB").function("PATTERN...") [.call | .return]
 *     [.library("LIB")] [.provider("P")].mark("NAME")  (SDT markers)
 *     .begin | .end | .thread.begin | .thread.end | .syscall[.return]
 * This file is the family's front: the program process(...) names, the
 * .library(...) it may name, and the kind of the component after them,
 * whose resolver (its line in probe_kinds.c) gives the probes, one per
 * function matched, with SystemTap's pp() text
 * (process("/abs/prog").function("foo@/abs/prog.c:12")). It resolves the
 * kinds of the process itself, .begin and .end, too. Other process points
 * (.insn, .data, ...) are not supported yet and say so. */
#include <gelf.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <glob.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "probes_process.h"
#include "run/shellcmd.h"
#include "proc_image.h"
#include "proc_paths.h"

/* Opened modules live for the whole run (target variables need them). */
static struct vec mods; /* struct dwq_mod * */

struct dwq_mod *proc_open_mod(const char *path, char *err, size_t errlen)
{
	struct dwq_mod *m;
	vec_foreach (struct dwq_mod *, m, &mods)
		if (!strcmp(dwq_path(m), path))
			return m;
	m = dwq_open(path, err, errlen);
	if (m)
		vec_push(&mods, m);
	return m;
}

void proc_debuginfo_warning(struct elab *c, const struct dwq_mod *m)
{
	if (!dwq_has_dwarf(m) && !c->s->listing)
		elab_warning(c, NULL,
			     "cannot find module %s debuginfo: No DWARF information found [man "
			     "warning::debuginfo]",
			     dwq_path(m));
}

const struct vec *proc_opened_modules(void)
{
	return &mods;
}

uint64_t proc_module_base(const char *path)
{
	uint64_t lo = UINT64_MAX;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	elf_version(EV_CURRENT);
	Elf *e = elf_begin(fd, ELF_C_READ, NULL);
	size_t n = 0;
	if (e && elf_getphdrnum(e, &n) == 0) {
		for (size_t i = 0; i < n; i++) {
			GElf_Phdr ph;
			if (gelf_getphdr(e, (int)i, &ph) && ph.p_type == PT_LOAD && ph.p_vaddr < lo)
				lo = ph.p_vaddr;
		}
	}
	if (e)
		elf_end(e);
	close(fd);
	return lo == UINT64_MAX ? 0 : lo & ~(uint64_t)0xfff;
}

/* The program of the -c command: the one it runs when it needs no shell
 * (runtime/run/shellcmd.h), else a guess: its first word, after any leading
 * NAME=VALUE assignments and an `exec`. */
static char *command_program(const char *cmd)
{
	char **words = _stp_cmd_words(cmd);
	if (words) {
		char *prog = xstrdup(words[0]);
		_stp_cmd_words_free(words);
		return prog;
	}
	for (;;) {
		cmd += strspn(cmd, " \t");
		size_t n =
		    strspn(cmd, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_0123456789");
		if (n == 4 && !strncmp(cmd, "exec", 4) && (cmd[4] == ' ' || cmd[4] == '\t')) {
			cmd += 4;
			continue;
		}
		if (n == 0 || cmd[n] != '=' || (cmd[0] >= '0' && cmd[0] <= '9'))
			break;
		cmd += n + strcspn(cmd + n, " \t");
	}
	return xstrndup(cmd, strcspn(cmd, " \t;|&<>()"));
}

/* The executable a process point names, absolute; NULL with err set.
 * any: bare process.begin/.end (every traced process). */
static char *point_executable(struct elab *c, struct probe_component *c0, int *any,
			      struct pp_error *err)
{
	char msg[DWQ_ERRLEN];
	struct session *s = c->s;
	*any = 0;
	if (c0->arg && c0->arg->kind == E_STRING) {
		char *p = dwq_find_executable(c0->arg->str, msg, sizeof msg);
		/* gone from the disk, still run by the -x process */
		char *x = !p && s->target_pid ? proc_exe_path(s->target_pid) : NULL;
		if (x && !strcmp(x, c0->arg->str))
			return x;
		free(x);
		if (!p)
			pp_fail(err, NULL, "%s", msg); /* SystemTap gives no place */
		return p;
	}
	if (c0->arg && c0->arg->kind == E_NUMBER) {
		/* the path it was started from, even if replaced since */
		char *p = proc_exe_path((long)c0->arg->num);
		if (!p)
			pp_fail(err, c0->tok, "cannot find executable for process %lld",
				(long long)c0->arg->num);
		return p;
	}
	if (c0->arg) {
		pp_fail(err, c0->tok, "expected a string or a number");
		return NULL;
	}
	if (s->target_cmd) {
		char *prog = command_program(s->target_cmd);
		char *p = dwq_find_executable(prog, msg, sizeof msg);
		free(prog);
		if (!p)
			pp_fail(err, c0->tok, "%s", msg);
		return p;
	}
	if (s->target_pid) {
		struct probe_component pc = *c0;
		struct expr num = {0};
		num.kind = E_NUMBER;
		num.num = s->target_pid;
		pc.arg = &num;
		return point_executable(c, &pc, any, err);
	}
	*any = 1;
	return NULL;
}

/* Is PATH the program the -c command or the -x process runs? */
static int is_target_program(const struct session *s, const char *path)
{
	char msg[DWQ_ERRLEN], *p = NULL;
	if (s->target_cmd) {
		char *prog = command_program(s->target_cmd);
		p = dwq_find_executable(prog, msg, sizeof msg);
		free(prog);
	} else if (s->target_pid) {
		p = proc_exe_path(s->target_pid);
	}
	int same = p && !strcmp(p, path);
	free(p);
	return same;
}

/* process("PATH") with a -x process or a plain -c command: PATH as the
 * target maps it. Another copy of a file it maps (the same build ID) is
 * that file. A program a -x process neither runs nor maps gets a warning
 * (its probes fire only in a process that runs it later); a library none
 * (it may be dlopen'ed), nor a -c command's (it may run the program
 * through env, nice, a script, ...). */
static char *through_target(const struct session *s, const struct token *tok, char *exe)
{
	char msg[DWQ_ERRLEN], *prog = NULL;
	if (!s->target_pid && s->target_cmd) {
		char **words = _stp_cmd_words(s->target_cmd);
		if (!words)
			return exe; /* a shell's commands: not known here */
		prog = dwq_find_executable(words[0], msg, sizeof msg);
		_stp_cmd_words_free(words);
	}
	if (!s->target_pid && !prog)
		return exe;
	int maps;
	char *same = proc_target_file(exe, prog, s->target_pid, &maps);
	if (same) {
		free(exe);
		exe = same;
	} else if (!maps && s->target_pid && !dwq_is_shared_library(exe)) {
		diag_warning(tok,
			     "process %ld neither runs nor maps '%s': its probes fire only "
			     "in a traced process that does",
			     s->target_pid, exe);
	}
	free(prog);
	return exe;
}

struct proc_point *proc_point_at(struct dwq_mod *m, Dwarf_Off func_die, uint64_t pc,
				 const char *func)
{
	struct proc_point *p = xcalloc(1, sizeof *p);
	p->mod = m;
	p->func_die = func_die;
	p->pc = p->entry_pc = pc;
	p->func = xstrdup(func ? func : "");
	return p;
}

struct derived_probe *proc_chain_next(struct derived_probe *first, struct derived_probe **last)
{
	struct derived_probe *d = *last ? xcalloc(1, sizeof *d) : first;
	if (*last)
		(*last)->more = d;
	*last = d;
	return d;
}

const char *proc_lib_arg(const struct probe_point *pp)
{
	return ((struct probe_component *)pp->components.v[1])->arg->str;
}

char *proc_pn_prefix(const struct probe_point *pp, const char *exe, const char *lib)
{
	if (!lib)
		return xasprintf("process(\"%s\")", exe);
	char *l = dwq_library_pn(proc_lib_arg(pp), lib);
	char *s = xasprintf("process(\"%s\").library(\"%s\")", exe, l);
	free(l);
	return s;
}

const char *proc_pp_prefix(const char *exe, const char *lib, char *buf, size_t len)
{
	if (lib)
		snprintf(buf, len, "process(\"%s\").library(\"%s\")", exe, lib);
	else
		snprintf(buf, len, "process(\"%s\")", exe);
	return buf;
}

static enum pp_result resolve_library(struct elab *c, struct probe_point *pp,
				      struct derived_probe *dp, const char *exe, int any,
				      struct pp_error *err);

/* One probe point for each file FILES has (a wildcard's matches): as
 * SystemTap, those that resolve give probes, the others are left out,
 * and "no match" when none resolves. exe NULL: the files are programs
 * (process("GLOB")), else the libraries of exe (.library("GLOB")); k
 * NULL: programs whose .library(...) point is resolved. */
static enum pp_result resolve_files(struct elab *c, struct probe_point *pp,
				    struct derived_probe *dp, const struct probe_kind_def *k,
				    const char *exe, struct vec *files, struct pp_error *err)
{
	struct derived_probe *last = NULL;
	char *f;
	vec_foreach (char *, f, files) {
		struct derived_probe *d = xcalloc(1, sizeof *d);
		struct pp_error e = {0};
		struct pp_at at = {c, pp, exe ? 2 : 1, exe ? exe : f, exe ? f : NULL};
		if ((k ? k->resolve(&at, d, &e) : resolve_library(c, pp, d, f, 0, &e)) != PP_OK) {
			free(e.msg);
			free(d);
			continue;
		}
		if (k && !exe && dwq_is_shared_library(f) && !is_target_program(c->s, f))
			proc_as_library(d);
		if (!last)
			*dp = *d, free(d), d = dp;
		else
			last->more = d;
		for (last = d; last->more; last = last->more)
			;
	}
	return last ? PP_OK : pp_fail(err, NULL, "no match");
}

/* The files a wildcard in process("GLOB") or, for the program exe,
 * .library("GLOB") matches, each resolved as if written. A library
 * pattern without a '/' matches the path of any library exe needs
 * (SystemTap matches it as "* /PATTERN"). */
static enum pp_result resolve_each(struct elab *c, struct probe_point *pp, struct derived_probe *dp,
				   const struct probe_kind_def *k, const char *exe,
				   const char *pattern, struct pp_error *err)
{
	struct vec files = {0};
	int rc = 0;
	if (exe && !strchr(pattern, '/')) {
		char msg[DWQ_ERRLEN], **libs;
		int n = dwq_needed_closure(exe, &libs, msg, sizeof msg);
		char *any = xasprintf("*/%s", pattern);
		for (int i = 0; i < n; i++)
			if (!fnmatch(any, libs[i], 0))
				vec_push(&files, xstrdup(libs[i]));
		free(any);
		if (n > 0)
			dwq_free_strv(libs, n);
		rc = files.n ? 0 : GLOB_NOMATCH;
	} else {
		rc = proc_glob(pattern, &files);
	}
	enum pp_result r = rc ? pp_fail(err, NULL, "glob %s error (%d)", pattern, rc)
			      : resolve_files(c, pp, dp, k, exe, &files, err);
	free(files.v); /* the paths stay: the probes name their files by them */
	return r;
}

/* process(...).library("LIB").function(...): LIB is found from the
 * executable's needs (or taken as a path); probes are placed when the
 * library gets mapped (at start or by dlopen), at its load bias. */
static enum pp_result resolve_library(struct elab *c, struct probe_point *pp,
				      struct derived_probe *dp, const char *exe, int any,
				      struct pp_error *err)
{
	struct probe_component *c0 = pp->components.v[0];
	struct probe_component *c1 = pp->components.v[1];
	char msg[DWQ_ERRLEN];

	if (!c1->arg || c1->arg->kind != E_STRING)
		return pp_fail(err, c1->tok, "expected a string");
	if (pp->components.n < 3)
		return pp_fail(err, c1->tok, "probe point truncated (follow:  function)");
	struct probe_component *c2 = pp->components.v[2];
	const struct probe_kind_def *k = pk_find(c2->functor, PKF_PROCESS | PKF_LIBRARY);
	if (!k) {
		struct vec names = {0};
		pk_point_names(&names, PKF_PROCESS | PKF_LIBRARY, 0);
		pp_fail(err, c2->tok, "probe point mismatch%s", elab_suggest(c2->functor, &names));
		free(names.v);
		return PP_ERROR;
	}
	if (any)
		return pp_fail(err, c0->tok,
			       "process.library probes need a path, -c CMD or -x PID");
	if (proc_path_has_glob(c1->arg->str))
		return resolve_each(c, pp, dp, k, exe, c1->arg->str, err);
	char *lib = dwq_find_library(exe, c1->arg->str, msg, sizeof msg);
	if (!lib && !strchr(c1->arg->str, '/')) {
		/* SystemTap's "no match (similar libraries: ...)", the libraries
		 * the executable needs, as ldd names them */
		char **libs;
		int n = dwq_needed_names(exe, &libs, msg, sizeof msg);
		struct vec names = {0};
		for (int i = 0; i < n; i++)
			vec_push(&names, libs[i]);
		pp_fail(err, NULL, "no match%s",
			elab_suggest_what(c1->arg->str, &names, "libraries"));
		free(names.v);
		if (n > 0)
			dwq_free_strv(libs, n);
		return PP_ERROR;
	}
	if (!lib)
		return pp_fail(err, c1->tok, "%s", msg);
	struct pp_at at = {c, pp, 2, exe, lib};
	return k->resolve(&at, dp, err);
}

/* A component after process(...) that names no kind. */
static enum pp_result no_such_point(const struct probe_component *c1, struct pp_error *err)
{
	static const char *const later[] = {"insn", "data", NULL};
	for (int i = 0; later[i]; i++)
		if (!strcmp(c1->functor, later[i]))
			return pp_fail(err, c1->tok,
				       "process(...).%s probe points are not supported yet",
				       c1->functor);
	struct vec names = {0};
	pk_point_names(&names, PKF_PROCESS, 0);
	vec_push(&names, (void *)"library");
	pp_fail(err, c1->tok, "probe point mismatch%s", elab_suggest(c1->functor, &names));
	free(names.v);
	return PP_ERROR;
}

static enum pp_result resolve_point(const struct pp_at *at, struct derived_probe *dp,
				    struct pp_error *err)
{
	struct elab *c = at->c;
	struct probe_point *pp = at->pp;
	struct probe_component *c0 = pp->components.v[0];
	struct session *s = c->s;
	if (pp->components.n < 2)
		return pp_fail(err, c0->tok, "probe point truncated (follow:  begin end function)");
	struct probe_component *c1 = pp->components.v[1];
	const char *what = c1->functor;
	int is_library = !strcmp(what, "library");
	const struct probe_kind_def *k = is_library ? NULL : pk_find(what, PKF_PROCESS);
	if (!k && !is_library)
		return no_such_point(c1, err);
	if (k && k->check && k->check(pp, 1, err) != PP_OK)
		return PP_ERROR;
	int needs_path = is_library || (k->flags & PKF_NEEDS_PATH);
	if (needs_path && c0->arg && c0->arg->kind == E_STRING && proc_path_has_glob(c0->arg->str))
		return resolve_each(c, pp, dp, k, NULL, c0->arg->str, err);
	int any = 0;
	char *exe = NULL;
	/* Bare process.begin/.end/.thread/.syscall with -c or -x: the target
	 * and every process it starts, whatever they run (a script's
	 * interpreter, the commands of a shell; the runtime leaves out the
	 * shell of a -c command in shell syntax). */
	if (!c0->arg && (s->target_cmd || s->target_pid) && !needs_path)
		any = 1;
	else
		exe = point_executable(c, c0, &any, err);
	if (!exe && !any && c0->arg && c0->arg->kind == E_STRING && !needs_path) {
		/* SystemTap keeps begin/end/syscall/thread points on a program
		 * it cannot find, as written (here they never fire) */
		free(err->msg);
		memset(err, 0, sizeof *err);
		exe = xstrdup(c0->arg->str);
	}
	if (!exe && !any)
		return PP_ERROR;
	if (exe && needs_path && c0->arg && c0->arg->kind == E_STRING)
		exe = through_target(s, c0->tok, exe);
	if (is_library)
		return resolve_library(c, pp, dp, exe, any, err);
	if (needs_path && any)
		return pp_fail(err, c0->tok, "process.%s probes need a path, -c CMD or -x PID",
			       what);
	struct pp_at sub = {c, pp, 1, exe, NULL};
	enum pp_result r = k->resolve(&sub, dp, err);
	/* a library named as the process: probed in every traced process
	 * that maps it (unless it is what the target runs) */
	if (r == PP_OK && dwq_is_shared_library(exe) && !is_target_program(s, exe))
		proc_as_library(dp);
	return r;
}

enum pp_result probes_resolve_process(const struct pp_at *at, struct derived_probe *dp,
				      struct pp_error *err)
{
	const struct probe_component *c0 = at->pp->components.v[0];
	const struct session *s = at->c->s;
	enum pp_result r = resolve_point(at, dp, err);
	/* system-wide, process(PID) is that process only */
	if (r == PP_OK && c0->arg && c0->arg->kind == E_NUMBER && !s->target_cmd && !s->target_pid)
		for (struct derived_probe *d = dp; d; d = d->more)
			d->pid = (long)c0->arg->num;
	return r;
}

/* ---- the process's own kinds: .begin, .end (and the end of .thread,
 * .syscall) ---- */

enum pp_result proc_event(const struct pp_at *at, struct derived_probe *dp, enum probe_kind kind,
			  const char *tail)
{
	struct probe_component *c0 = at->pp->components.v[0];
	dp->kind = kind;
	/* SystemTap's pp() keeps a bare process.begin as written */
	if (at->exe && c0->arg)
		dp->pp = xasprintf("process(\"%s\").%s", at->exe, tail);
	dp->module = proc_image(at->c->s, at->exe);
	dp->module_base = at->exe ? proc_module_base(dp->module) : 0;
	return PP_OK;
}

enum pp_result probes_check_begin_end(const struct probe_point *pp, int i, struct pp_error *err)
{
	const struct probe_component *c1 = pp->components.v[i];
	if (c1->arg || pp->components.n > i + 1)
		return pp_fail(err,
			       pp->components.n > i + 1
				   ? ((struct probe_component *)pp->components.v[i + 1])->tok
				   : c1->tok,
			       "invalid suffix for probe");
	return PP_OK;
}

enum pp_result probes_resolve_begin_end(const struct pp_at *at, struct derived_probe *dp,
					struct pp_error *err)
{
	const struct probe_component *c1 = at->pp->components.v[at->i];
	(void)err;
	if (!strcmp(c1->functor, "begin"))
		return proc_event(at, dp, PK_PROCESS_BEGIN, "begin");
	return proc_event(at, dp, PK_PROCESS_END, "end");
}

char *probes_event_vars(const struct derived_probe *dp)
{
	(void)dp;
	/* SystemTap lists its utrace context for all of these */
	return xstrdup(" $syscall:long $arg1:long $arg2:long $arg3:long $arg4:long "
		       "$arg5:long $arg6:long");
}

const struct token *proc_msg_tok(const struct elab *c, const char *msg, const struct token *tok)
{
	if (c->probe_kw && !strncmp(msg, "malformed specification", 23))
		return c->probe_kw;
	return tok;
}
