/* process(...) probe points, resolved against the program's ELF/DWARF:
 *   process("PATH") | process(PID) | process      (the -c/-x target)
 *     .function("PATTERN[@FILE[:LINE]]") [.call | .return]
 *     .begin | .end
 * One derived probe per function matched, with SystemTap's pp() text
 * (process("/abs/prog").function("foo@/abs/prog.c:12")). Other process
 * points (.statement, .mark, .plt, .library, ...) are not supported yet
 * and say so. */
#include <gelf.h>
#include <fcntl.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dwarf_list.h"
#include "probes_process.h"

static const char *const process_subnames[] = {"function", "begin", "end", NULL};

/* Opened modules live for the whole run (target variables need them). */
static struct vec mods; /* struct dwq_mod * */

static struct dwq_mod *open_mod(const char *path, char *err, size_t errlen)
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

/* The page-aligned lowest PT_LOAD vaddr of an ELF file (0 if unknown). */
static uint64_t module_base(const char *path)
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

/* The first word of the -c command (its program). */
static char *command_program(const char *cmd)
{
	cmd += strspn(cmd, " \t");
	return xstrndup(cmd, strcspn(cmd, " \t"));
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
		if (!p)
			pp_fail(err, c0->tok, "%s", msg);
		return p;
	}
	if (c0->arg && c0->arg->kind == E_NUMBER) {
		char link[64], buf[4096];
		snprintf(link, sizeof link, "/proc/%lld/exe", (long long)c0->arg->num);
		ssize_t n = readlink(link, buf, sizeof buf - 1);
		if (n <= 0) {
			pp_fail(err, c0->tok, "cannot find executable for process %lld",
				(long long)c0->arg->num);
			return NULL;
		}
		buf[n] = '\0';
		return xstrdup(buf);
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

static enum pp_result resolve_functions(struct elab *c, struct probe_point *pp,
					struct derived_probe *dp, const char *exe,
					struct pp_error *err)
{
	(void)c;
	struct probe_component *c1 = pp->components.v[1];
	struct probe_component *c2 = pp->components.n > 2 ? pp->components.v[2] : NULL;
	char msg[DWQ_ERRLEN];
	int is_return = 0;
	const char *suffix = "";
	enum dwq_kind kind = DWQ_FUNCTION;

	if (!c1->arg || c1->arg->kind != E_STRING)
		return pp_fail(err, c1->tok, "expected a string");
	if (c2) {
		if (pp->components.n > 3 || c2->arg ||
		    (strcmp(c2->functor, "return") && strcmp(c2->functor, "call"))) {
			if (!strcmp(c2->functor, "inline") || !strcmp(c2->functor, "exported"))
				return pp_fail(err, c2->tok,
					       "process(...).function(...).%s probes are not "
					       "supported yet",
					       c2->functor);
			return pp_fail(err, c2->tok, "probe point mismatch");
		}
		is_return = !strcmp(c2->functor, "return");
		suffix = is_return ? ".return" : ".call";
		kind = DWQ_CALL;
	}
	struct dwq_mod *m = open_mod(exe, msg, sizeof msg);
	if (!m)
		return pp_fail(err, c1->tok, "%s", msg);
	struct dwq_funcs fs;
	if (dwq_functions(m, c1->arg->str, kind, DWQ_PROLOGUE_AUTO, 0, &fs, msg, sizeof msg) < 0)
		return pp_fail(err, c1->tok, "%s", msg);
	if (fs.n == 0) {
		dwq_funcs_free(&fs);
		return pp_fail(err, NULL, "no match");
	}
	uint64_t base = module_base(exe);
	struct derived_probe *d = dp;
	for (size_t i = 0; i < fs.n; i++) {
		const struct dwq_func *fn = &fs.v[i];
		if (i) {
			d->more = xcalloc(1, sizeof *d);
			d = d->more;
		}
		struct proc_point *p = xcalloc(1, sizeof *p);
		p->mod = m;
		p->func_die = fn->has_dwarf ? fn->die : 0;
		p->pc = is_return ? fn->entry : fn->probe;
		p->is_return = is_return;
		p->entry_pc = fn->probe;
		p->func = xstrdup(fn->name);
		d->kind = is_return ? PK_PROCESS_RETURN : PK_PROCESS_FUNCTION;
		d->pp = dwl_function_pp(exe, NULL, fn, suffix);
		d->module = exe;
		d->addr = p->pc;
		d->module_base = base;
		d->proc = p;
	}
	dwq_funcs_free(&fs);
	return PP_OK;
}

static enum pp_result resolve_process(struct elab *c, struct probe_point *pp,
				      struct derived_probe *dp, struct pp_error *err)
{
	struct probe_component *c0 = pp->components.v[0];
	struct session *s = c->s;
	if (pp->components.n < 2)
		return pp_fail(err, c0->tok,
			       "probe point truncated (follow:  begin end function)");
	struct probe_component *c1 = pp->components.v[1];
	const char *what = c1->functor;
	int is_begin = !strcmp(what, "begin"), is_end = !strcmp(what, "end");
	int is_function = !strcmp(what, "function");
	if (!is_begin && !is_end && !is_function) {
		static const char *const later[] = {
		    "statement", "mark", "provider", "plt", "library", "thread", "syscall",
		    "insn", "data", NULL};
		for (int i = 0; later[i]; i++)
			if (!strcmp(what, later[i]))
				return pp_fail(err, c1->tok,
					       "process(...).%s probe points are not supported yet",
					       what);
		struct vec names = {0};
		for (int i = 0; process_subnames[i]; i++)
			vec_push(&names, (void *)process_subnames[i]);
		return pp_fail(err, c1->tok, "probe point mismatch%s",
			       elab_suggest(what, &names));
	}
	if ((is_begin || is_end) && (c1->arg || pp->components.n > 2))
		return pp_fail(err, pp->components.n > 2
					? ((struct probe_component *)pp->components.v[2])->tok
					: c1->tok,
			       "invalid suffix for probe");
	/* ptrace can only watch processes it starts or attaches to. */
	if (s->last_pass >= 5 && !s->target_cmd && !s->target_pid)
		return pp_fail(err, c0->tok,
			       "process probes need a target process: use -c CMD or -x PID");
	int any = 0;
	char *exe = point_executable(c, c0, &any, err);
	if (!exe && !any)
		return PP_ERROR;
	if (is_function) {
		if (any)
			return pp_fail(err, c0->tok,
				       "process.function probes need a path, -c CMD or -x PID");
		return resolve_functions(c, pp, dp, exe, err);
	}
	dp->kind = is_begin ? PK_PROCESS_BEGIN : PK_PROCESS_END;
	if (exe)
		dp->pp = xasprintf("process(\"%s\").%s", exe, what);
	dp->module = exe;
	dp->module_base = exe ? module_base(exe) : 0;
	return PP_OK;
}

const struct probe_kind_ops probes_process_ops = {"process", resolve_process, process_subnames};
