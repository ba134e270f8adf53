/* process(...) probe points, resolved against the program's ELF/DWARF:
 *   process("PATH") | process(PID) | process      (the -c/-x target)
 *     .function("PATTERN[@FILE[:LINE]]") [.call | .return | .inline | .exported]
 *     .statement("FUNC@FILE:LINE") | .statement(ADDRESS)[.absolute]
 *     .plt["(PATTERN)"] [.return]        ($$name: the PLT entry's symbol)
 *     .library("LIB").function("PATTERN...") [.call | .return]
 *     [.library("LIB")] [.provider("P")].mark("NAME")  (SDT markers)
 *     .begin | .end | .thread.begin | .thread.end | .syscall[.return]
 * One derived probe per function matched, with SystemTap's pp() text
 * (process("/abs/prog").function("foo@/abs/prog.c:12")). Other process
 * points (.insn, .data, ...) are not supported yet and say so. */
#include <gelf.h>
#include <fcntl.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dwarf_list.h"
#include "sdt.h"
#include "probes_process.h"
#include "shellcmd.h"
#include "proc_image.h"

static const char *const process_subnames[] = {"function",  "library", "mark",	"provider",
					       "statement", "plt",     "begin", "end",
					       "thread",    "syscall", NULL};

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

const struct vec *proc_opened_modules(void)
{
	return &mods;
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

/* The program of the -c command: the one it runs when it needs no shell
 * (runtime/shellcmd.h), else a guess: its first word, after any leading
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

/* The .library("...") argument as written (lib != NULL: it is v[1]). */
static const char *lib_arg(const struct probe_point *pp)
{
	return ((struct probe_component *)pp->components.v[1])->arg->str;
}

/* process("EXE")[.library("LIB")] as SystemTap's pn() has it. */
static char *pn_prefix(const struct probe_point *pp, const char *exe, const char *lib)
{
	if (!lib)
		return xasprintf("process(\"%s\")", exe);
	char *l = dwq_library_pn(lib_arg(pp), lib);
	char *s = xasprintf("process(\"%s\").library(\"%s\")", exe, l);
	free(l);
	return s;
}

/* SystemTap's "no match (similar functions: a, b, ...)" for SPEC, a
 * .function (or, with plt, a .plt) argument matching nothing in M: the
 * candidates of dwq_function_candidates (dwq_plt_candidates); none in a
 * .library(...) that SystemTap looks up among the executable's libraries. */
static enum pp_result no_match(struct dwq_mod *m, const struct probe_point *pp, const char *lib,
			       const char *spec, int plt, struct pp_error *err)
{
	struct dwq_spec sp;
	char msg[DWQ_ERRLEN], **v;

	if ((lib && !dwq_library_named_directly(lib_arg(pp))) ||
	    dwq_parse_spec(spec, &sp, msg, sizeof msg) < 0)
		return pp_fail(err, NULL, "no match");
	int n = plt ? dwq_plt_candidates(m, &v) : dwq_function_candidates(m, sp.file, &v);
	struct vec names = {0};
	for (int i = 0; i < n; i++)
		vec_push(&names, v[i]);
	enum pp_result r =
	    pp_fail(err, NULL, "no match%s", elab_suggest_what(sp.func, &names, "functions"));
	free(names.v);
	dwq_free_strv(v, n);
	dwq_spec_free(&sp);
	return r;
}

/* The .function(...) component is pp->components.v[fi]; lib: the
 * .library(...) module (absolute path) or NULL for the executable. */
static enum pp_result resolve_functions(struct elab *c, struct probe_point *pp,
					struct derived_probe *dp, const char *exe, const char *lib,
					int fi, struct pp_error *err)
{
	struct probe_component *c1 = pp->components.v[fi];
	struct probe_component *c2 = pp->components.n > fi + 1 ? pp->components.v[fi + 1] : NULL;
	const char *file = lib ? lib : exe, *img = proc_image(c->s, file);
	char msg[DWQ_ERRLEN];
	int is_return = 0;
	const char *suffix = "";
	enum dwq_kind kind = DWQ_FUNCTION;

	if (!c1->arg || c1->arg->kind != E_STRING)
		return pp_fail(err, c1->tok, "expected a string");
	int exported = 0;
	if (c2) {
		if (pp->components.n > fi + 2 || c2->arg ||
		    (strcmp(c2->functor, "return") && strcmp(c2->functor, "call") &&
		     strcmp(c2->functor, "inline") && strcmp(c2->functor, "exported"))) {
			struct vec names = {0};
			vec_push(&names, (void *)"call");
			vec_push(&names, (void *)"exported");
			vec_push(&names, (void *)"inline");
			vec_push(&names, (void *)"return");
			return pp_fail(err, c2->tok, "probe point mismatch%s",
				       elab_suggest(c2->functor, &names));
		}
		if (!strcmp(c2->functor, "inline")) {
			suffix = ".inline";
			kind = DWQ_INLINE;
		} else if (!strcmp(c2->functor, "exported")) {
			suffix = ".exported";
			exported = 1;
		} else {
			is_return = !strcmp(c2->functor, "return");
			suffix = is_return ? ".return" : ".call";
			kind = DWQ_CALL;
		}
	}
	struct dwq_mod *m = open_mod(img, msg, sizeof msg);
	if (!m)
		return pp_fail(err, c1->tok, "%s", msg);
	struct dwq_funcs fs;
	if (dwq_functions(m, c1->arg->str, kind, dwq_prologue_default, exported, &fs, msg,
			  sizeof msg) < 0)
		return pp_fail(err, c1->tok, "%s", msg);
	if (fs.n == 0) {
		dwq_funcs_free(&fs);
		return no_match(m, pp, lib, c1->arg->str, 0, err);
	}
	uint64_t base = module_base(img);
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
		if (lib) {
			/* SystemTap's pp() names the library as a process;
			 * pn() and -p2's "<-" keep the .library form */
			char *l = dwq_library_pn(lib_arg(pp), lib);
			d->pp = dwl_function_pp(lib, NULL, fn, suffix);
			d->point_pn = dwl_function_pp(exe, l, fn, suffix);
			d->point_from = d->point_pn;
			free(l);
		} else {
			d->pp = dwl_function_pp(exe, NULL, fn, suffix);
		}
		d->module = proc_image(c->s, exe);
		d->library = lib ? proc_image(c->s, lib) : NULL;
		d->addr = p->pc;
		d->module_base = base;
		d->proc = p;
	}
	dwq_funcs_free(&fs);
	return PP_OK;
}

/* The DIE of the function named fname that holds vaddr pc (0: none). */
static Dwarf_Off function_die_at(struct dwq_mod *m, const char *fname, uint64_t pc)
{
	struct dwq_funcs fs;
	Dwarf_Off die = 0;
	char msg[DWQ_ERRLEN];

	if (!fname ||
	    dwq_functions(m, fname, DWQ_CALL, DWQ_PROLOGUE_NEVER, 0, &fs, msg, sizeof msg) < 0)
		return 0;
	for (size_t i = 0; i < fs.n && !die; i++)
		if (fs.v[i].has_dwarf && fs.v[i].entry <= pc &&
		    (pc < fs.v[i].entry + fs.v[i].size || !fs.v[i].size))
			die = fs.v[i].die;
	dwq_funcs_free(&fs);
	return die;
}

/* A .library point: pp() (D->pp, already set) names the library as a
 * process; pn() and -p2's "<-" keep the written form with the same tail. */
static void lib_pn(const struct probe_point *pp, struct derived_probe *d, const char *exe,
		   const char *lib)
{
	if (!lib)
		return;
	char *pre = pn_prefix(pp, exe, lib);
	const char *tail = d->pp + strlen("process(\"\")") + strlen(lib);
	d->point_pn = xasprintf("%s%s", pre, tail);
	d->point_from = d->point_pn;
	free(pre);
}

static const char *prefix_of(const char *exe, const char *lib, char *buf, size_t len)
{
	if (lib)
		snprintf(buf, len, "process(\"%s\").library(\"%s\")", exe, lib);
	else
		snprintf(buf, len, "process(\"%s\")", exe);
	return buf;
}

/* .statement("FUNC@FILE:LINE"), .statement(ADDRESS)[.absolute] at
 * pp->components.v[si]. An absolute address is where the code runs (no
 * load bias); a plain one is an ELF vaddr of the module. */
static enum pp_result resolve_statements(struct elab *c, struct probe_point *pp,
					 struct derived_probe *dp, const char *exe, const char *lib,
					 int si, struct pp_error *err)
{
	struct probe_component *cs = pp->components.v[si];
	struct probe_component *cn = pp->components.n > si + 1 ? pp->components.v[si + 1] : NULL;
	const char *file = lib ? lib : exe, *img = proc_image(c->s, file);
	char msg[DWQ_ERRLEN], pre[2 * 4096 + 64];
	int absolute = 0;

	if (cn) {
		if (pp->components.n > si + 2 || cn->arg || strcmp(cn->functor, "absolute") ||
		    !cs->arg || cs->arg->kind != E_NUMBER)
			return pp_fail(err, cn->tok, "invalid suffix for probe");
		absolute = 1;
	}
	if (!cs->arg || (cs->arg->kind != E_STRING && cs->arg->kind != E_NUMBER))
		return pp_fail(err, cs->tok, "expected a string or a number");
	struct dwq_mod *m = open_mod(img, msg, sizeof msg);
	if (!m)
		return pp_fail(err, cs->tok, "%s", msg);
	/* SystemTap's pp() names a library as a process (lib_pn) */
	prefix_of(lib ? lib : exe, NULL, pre, sizeof pre);
	if (cs->arg->kind == E_NUMBER) {
		uint64_t a = (uint64_t)cs->arg->num;
		struct proc_point *p = xcalloc(1, sizeof *p);
		p->mod = m;
		p->pc = a;
		p->entry_pc = a;
		p->func = "";
		dp->kind = PK_PROCESS_FUNCTION;
		dp->pp = xasprintf("%s.statement(0x%llx)%s", pre, (unsigned long long)a,
				   absolute ? ".absolute" : "");
		lib_pn(pp, dp, exe, lib);
		dp->module = proc_image(c->s, exe);
		dp->library = lib ? proc_image(c->s, lib) : NULL;
		dp->addr = a;
		/* absolute: no bias (the runtime's bias is base - module_base,
		 * 0 when the base is below module_base) */
		dp->module_base = absolute ? UINT64_MAX : module_base(img);
		if (!absolute)
			dp->proc = p;
		else
			free(p);
		return PP_OK;
	}
	struct dwq_stmts st;
	if (dwq_statements(m, cs->arg->str, &st, msg, sizeof msg) < 0)
		return pp_fail(err, cs->tok, "%s", msg);
	if (st.n == 0) {
		dwq_stmts_free(&st);
		return pp_fail(err, NULL, "no match");
	}
	uint64_t base = module_base(img);
	struct derived_probe *d = dp;
	for (size_t i = 0; i < st.n; i++) {
		if (i) {
			d->more = xcalloc(1, sizeof *d);
			d = d->more;
		}
		struct proc_point *p = xcalloc(1, sizeof *p);
		p->mod = m;
		p->pc = st.v[i].addr;
		p->entry_pc = st.v[i].addr;
		p->func = xstrdup(st.v[i].func ? st.v[i].func : "");
		p->func_die = function_die_at(m, st.v[i].func, st.v[i].addr);
		d->kind = PK_PROCESS_FUNCTION;
		d->pp = xasprintf("%s.statement(\"%s@%s:%d\")", pre, st.v[i].func, st.v[i].file,
				  st.v[i].line);
		lib_pn(pp, d, exe, lib);
		d->module = proc_image(c->s, exe);
		d->library = lib ? proc_image(c->s, lib) : NULL;
		d->addr = st.v[i].addr;
		d->module_base = base;
		d->proc = p;
	}
	dwq_stmts_free(&st);
	return PP_OK;
}

/* .plt("PATTERN") at pp->components.v[pi]: one probe per PLT stub. */
static enum pp_result resolve_plts(struct elab *c, struct probe_point *pp, struct derived_probe *dp,
				   const char *exe, const char *lib, int pi, struct pp_error *err)
{
	struct probe_component *cp = pp->components.v[pi];
	const char *file = lib ? lib : exe, *img = proc_image(c->s, file);
	char msg[DWQ_ERRLEN], pre[2 * 4096 + 64];

	int is_return = 0;
	if (pp->components.n > pi + 1) {
		struct probe_component *cn = pp->components.v[pi + 1];
		if (strcmp(cn->functor, "return") || cn->arg || pp->components.n > pi + 2)
			return pp_fail(err, cn->tok, "invalid suffix for probe");
		/* the stub is entered by a call: its return is the function's */
		is_return = 1;
	}
	const char *pat = "*";
	if (cp->arg && cp->arg->kind != E_STRING)
		return pp_fail(err, cp->tok, "expected a string");
	if (cp->arg)
		pat = cp->arg->str;
	struct dwq_mod *m = open_mod(img, msg, sizeof msg);
	if (!m)
		return pp_fail(err, cp->tok, "%s", msg);
	struct dwq_plts ps;
	if (dwq_plt_entries(m, pat, &ps, msg, sizeof msg) < 0)
		return pp_fail(err, cp->tok, "%s", msg);
	if (ps.n == 0) {
		dwq_plts_free(&ps);
		return no_match(m, pp, lib, pat, 1, err);
	}
	prefix_of(exe, lib, pre, sizeof pre);
	uint64_t base = module_base(img);
	struct derived_probe *d = dp;
	for (size_t i = 0; i < ps.n; i++) {
		if (i) {
			d->more = xcalloc(1, sizeof *d);
			d = d->more;
		}
		d->kind = is_return ? PK_PROCESS_RETURN : PK_PROCESS_FUNCTION;
		/* SystemTap's pp() is the stub's address; pn() names it */
		d->pp = xasprintf("process(\"%s\").statement(0x%llx)%s", file,
				  (unsigned long long)ps.v[i].addr, is_return ? ".return" : "");
		d->point_pn =
		    xasprintf("%s.plt(\"%s\")%s", pre, ps.v[i].name, is_return ? ".return" : "");
		d->plt_name = xstrdup(ps.v[i].name);
		d->module = proc_image(c->s, exe);
		d->library = lib ? proc_image(c->s, lib) : NULL;
		d->addr = ps.v[i].addr;
		d->module_base = base;
	}
	dwq_plts_free(&ps);
	return PP_OK;
}

/* .mark("NAME") / .provider("P").mark("NAME") at pp->components.v[mi]:
 * one probe per SDT marker of FILE (the executable or lib) that matches,
 * firing at the marker's nop, with its semaphore (if any) raised while
 * probed; $argN, $$name and $$provider are lowered by proc_lower_marks. */
static enum pp_result resolve_marks(struct elab *c, struct probe_point *pp,
				    struct derived_probe *dp, const char *exe, const char *lib,
				    int mi, struct pp_error *err)
{
	struct probe_component *cm = pp->components.v[mi];
	const char *provider = NULL;
	char msg[DWQ_ERRLEN];
	const char *file = lib ? lib : exe, *img = proc_image(c->s, file);

	if (!strcmp(cm->functor, "provider")) {
		if (!cm->arg || cm->arg->kind != E_STRING)
			return pp_fail(err, cm->tok, "expected a string");
		provider = cm->arg->str;
		if (pp->components.n <= mi + 1)
			return pp_fail(err, cm->tok, "probe point truncated (follow:  mark)");
		cm = pp->components.v[++mi];
		if (strcmp(cm->functor, "mark")) {
			struct vec names = {0};
			vec_push(&names, (void *)"mark");
			return pp_fail(err, cm->tok, "probe point mismatch%s",
				       elab_suggest(cm->functor, &names));
		}
	}
	if (!cm->arg || cm->arg->kind != E_STRING)
		return pp_fail(err, cm->tok, "expected a string");
	if (pp->components.n > mi + 1)
		return pp_fail(err, ((struct probe_component *)pp->components.v[mi + 1])->tok,
			       "invalid suffix for probe");
	/* Kept for the whole run (the probes point into it). */
	struct sdt_probes *ps = xcalloc(1, sizeof *ps);
	if (sdt_read(img, ps, msg, sizeof msg) < 0)
		return pp_fail(err, cm->tok, "%s", msg);
	uint64_t base = module_base(img);
	struct derived_probe *d = NULL;
	char *pre = pn_prefix(pp, exe, lib);
	for (size_t i = 0; i < ps->n; i++) {
		struct sdt_probe *m = &ps->v[i];
		if ((provider && !sdt_name_matches(provider, m->provider)) ||
		    !sdt_name_matches(cm->arg->str, m->name))
			continue;
		if (d) {
			d->more = xcalloc(1, sizeof *d);
			d = d->more;
		} else {
			d = dp;
		}
		d->kind = PK_PROCESS_FUNCTION;
		/* SystemTap's pp() is the marker's address; pn() names it as
		 * written, the provider only if one was given */
		d->pp =
		    xasprintf("process(\"%s\").statement(0x%llx)", file, (unsigned long long)m->pc);
		char *prov = provider ? xasprintf(".provider(\"%s\")", m->provider) : NULL;
		d->point_pn = xasprintf("%s%s.mark(\"%s\")", pre, prov ? prov : "", m->name);
		free(prov);
		if (lib)
			d->point_from =
			    xasprintf("process(\"%s\").library(\"%s\").statement(0x%llx)", exe,
				      lib_arg(pp), (unsigned long long)m->pc);
		d->module = proc_image(c->s, exe);
		d->library = lib ? proc_image(c->s, lib) : NULL;
		d->addr = m->pc;
		d->module_base = base;
		d->semaphore = m->semaphore;
		d->mark = m;
	}
	free(pre);
	/* SystemTap's "(similar marks: ...)"; none in a library it looks up
	 * among the executable's */
	if (!d && (!lib || dwq_library_named_directly(lib_arg(pp)))) {
		struct vec names = {0};
		for (size_t i = 0; i < ps->n; i++)
			vec_push(&names, ps->v[i].name);
		pp_fail(err, NULL, "no match%s", elab_suggest_what(cm->arg->str, &names, "marks"));
		free(names.v);
		return PP_ERROR;
	}
	if (!d)
		return pp_fail(err, NULL, "no match");
	return PP_OK;
}

/* ---- $argN, $$name, $$provider in .mark probes ---- */

struct mark_lower {
	struct elab *c;
	const struct sdt_probe *m;
	int is_return; /* .syscall.return */
	const char *plt_name;
};

static struct expr *num_expr(const struct token *tok, int64_t n)
{
	struct expr *e = expr_new(E_NUMBER, tok);
	e->num = n;
	return e;
}

static void to_call(struct expr *e, const char *name, int n, const int64_t *args)
{
	const struct token *tok = e->tok;
	memset(e, 0, sizeof *e);
	e->kind = E_CALL;
	e->tok = tok;
	e->str = name;
	for (int i = 0; i < n; i++)
		vec_push(&e->args, num_expr(tok, args[i]));
}

/* --skip-badvars: a variable that cannot be found reads as 0. */
static int badvar_zero(struct mark_lower *L, struct expr *e)
{
	const struct token *tok = e->tok;

	if (!L->c->s->skip_badvars)
		return 0;
	memset(e, 0, sizeof *e);
	e->kind = E_NUMBER;
	e->tok = tok;
	return 1;
}

/* One argument as a __tvar_* call in place of e; -1 with msg if the
 * operand is of a form not handled. */
static int lower_mark_arg(struct expr *e, const struct sdt_arg *a, char *msg, size_t len)
{
	int64_t size = a->size > 0 && a->size <= 8 ? a->size : 8;
	switch (a->kind) {
	case SDT_ARG_CONST: {
		const struct token *tok = e->tok;
		memset(e, 0, sizeof *e);
		e->kind = E_NUMBER;
		e->tok = tok;
		e->num = a->offset;
		return 0;
	}
	case SDT_ARG_REG:
		if (a->reg_high) /* %ah %bh %ch %dh */
			to_call(e, "__tvar_reg_high", 3, (int64_t[]){a->reg, size, a->is_signed});
		else
			to_call(e, "__tvar_reg", 3, (int64_t[]){a->reg, size, a->is_signed});
		return 0;
	case SDT_ARG_MEM:
		if (a->index != SDT_REG_NONE || a->reg == SDT_REG_NONE)
			to_call(
			    e, "__tvar_memx", 6,
			    (int64_t[]){a->reg, a->index, a->scale, a->offset, size, a->is_signed});
		else
			to_call(e, "__tvar_mem", 4,
				(int64_t[]){a->reg, a->offset, size, a->is_signed});
		return 0;
	case SDT_ARG_ABS:
		to_call(e, "__tvar_addr", 3, (int64_t[]){a->offset, size, a->is_signed});
		return 0;
	}
	snprintf(msg, len, "unsupported SDT argument operand '%s'", a->text ? a->text : "");
	return -1;
}

static int lower_mark_expr(struct expr *e, void *arg)
{
	struct mark_lower *L = arg;
	const struct sdt_probe *m = L->m;
	char msg[DWQ_ERRLEN];
	const struct token *tok = e->tok;
	int n = 0, end = 0;

	if (e->kind != E_TARGET || !e->str)
		return 0;
	if (e->comps.n || e->addressof || e->pretty)
		return 0; /* type checking reports it */
	if (!strcmp(e->str, "$$name") || !strcmp(e->str, "$$provider")) {
		const char *v = e->str[2] == 'n' ? m->name : m->provider;
		memset(e, 0, sizeof *e);
		e->kind = E_STRING;
		e->tok = tok;
		e->str = v;
		return 1;
	}
	msg[0] = '\0';
	if ((!strcmp(e->str, "$$vars") || !strcmp(e->str, "$$parms")) && m->nargs >= 0) {
		/* sprintf("arg1=%#x arg2=%#x", $arg1, $arg2) */
		struct expr *out = expr_new(E_PRINT, tok);
		struct expr *fmt = expr_new(E_STRING, tok);
		char *f = xstrdup("");
		out->str = "sprintf";
		out->print_to_string = 1;
		out->print_has_fmt = 1;
		vec_push(&out->args, fmt);
		for (int k = 0; k < m->nargs; k++) {
			char *g = xasprintf("%s%sarg%d=%%#x", f, k ? " " : "", k + 1);
			free(f);
			f = g;
			struct expr *a = expr_new(E_NUMBER, tok);
			if (lower_mark_arg(a, &m->args[k], msg, sizeof msg) < 0)
				break;
			vec_push(&out->args, a);
		}
		fmt->str = f;
		if (!msg[0]) {
			if (m->nargs == 0) {
				out = expr_new(E_STRING, tok);
				out->str = "";
			}
			*e = *out;
			return 1;
		}
	} else if (sscanf(e->str, "$arg%d%n", &n, &end) == 1 && !e->str[end] && n >= 1) {
		if (m->nargs < 0)
			snprintf(msg, sizeof msg, "cannot parse the arguments of marker '%s': '%s'",
				 m->name, m->args_text ? m->args_text : "");
		else if (n > m->nargs)
			snprintf(msg, sizeof msg,
				 "invalid target variable '%s': marker '%s' has %d argument%s",
				 e->str, m->name, m->nargs, m->nargs == 1 ? "" : "s");
		else if (lower_mark_arg(e, &m->args[n - 1], msg, sizeof msg) == 0)
			return 1;
	} else if (!msg[0]) {
		snprintf(msg, sizeof msg,
			 "unable to find local '%s' in marker '%s' (alternatives: $arg1..$arg%d, "
			 "$$name, $$provider)",
			 e->str + 1, m->name, m->nargs > 0 ? m->nargs : 0);
	}
	if (badvar_zero(L, e))
		return 1;
	elab_error(L->c, tok, "%s", msg);
	return 1;
}

/* .plt probes have no debug info: $$name, and $$parms / $$vars empty. */
static int lower_plt_expr(struct expr *e, void *arg)
{
	struct mark_lower *L = arg;
	const struct token *tok = e->tok;

	if (e->kind != E_TARGET || !e->str)
		return 0;
	if (e->comps.n || e->addressof || e->pretty)
		return 0;
	int is_name = !strcmp(e->str, "$$name");
	if (is_name || !strcmp(e->str, "$$parms") || !strcmp(e->str, "$$vars")) {
		memset(e, 0, sizeof *e);
		e->kind = E_STRING;
		e->tok = tok;
		e->str = is_name ? L->plt_name : "";
		return 1;
	}
	if (badvar_zero(L, e))
		return 1;
	elab_error(L->c, tok, "unable to find plt variable '%s' (alternatives: $$name)", e->str);
	return 1;
}

/* $syscall, $arg1..$arg6 and (in .return) $return of .syscall probes. */
static int lower_syscall_expr(struct expr *e, void *arg)
{
	struct mark_lower *L = arg;
	static const int argregs[] = {5, 4, 1, 10, 8, 9}; /* rdi rsi rdx r10 r8 r9 */
	const struct token *tok = e->tok;
	int n = 0, end = 0;

	if (e->kind != E_TARGET || !e->str)
		return 0;
	if (e->comps.n || e->addressof || e->pretty)
		return 0;
	if (!strcmp(e->str, "$syscall")) {
		memset(e, 0, sizeof *e);
		e->kind = E_CALL;
		e->tok = tok;
		e->str = "register";
		struct expr *name = expr_new(E_STRING, tok);
		name->str = "orig_rax";
		vec_push(&e->args, name);
		return 1;
	}
	if (!strcmp(e->str, "$return") && L->is_return) {
		to_call(e, "__tvar_reg", 3, (int64_t[]){0, 8, 1});
		return 1;
	}
	if (sscanf(e->str, "$arg%d%n", &n, &end) == 1 && !e->str[end] && n >= 1 && n <= 6) {
		to_call(e, "__tvar_reg", 3, (int64_t[]){argregs[n - 1], 8, 1});
		return 1;
	}
	if (badvar_zero(L, e))
		return 1;
	elab_error(L->c, tok,
		   "unable to find local '%s' in a .syscall%s probe (alternatives: $syscall, "
		   "$arg1..$arg6%s)",
		   e->str + 1, L->is_return ? ".return" : "", L->is_return ? ", $return" : "");
	return 1;
}

static int has_target_expr(struct expr *e, void *arg)
{
	if (e->kind == E_TARGET)
		*(int *)arg = 1;
	return 0;
}

void proc_lower_marks(struct elab *c, int from)
{
	for (int i = from; i < c->s->probes.n; i++) {
		struct derived_probe *dp = c->s->probes.v[i];
		int sys = dp->kind == PK_PROCESS_SYSCALL || dp->kind == PK_PROCESS_SYSCALL_RETURN;
		if ((!dp->mark && !sys && !dp->plt_name) || !dp->probe || !dp->probe->body)
			continue;
		int any = 0;
		walk_stmt(dp->probe->body, NULL, has_target_expr, &any);
		if (!any)
			continue;
		/* Each marker has its own operands: its own body. */
		struct probe *p = elab_copy_probe(dp->probe, elab_copy_stmt(dp->probe->body));
		dp->probe = p;
		struct mark_lower L = {c, dp->mark, dp->kind == PK_PROCESS_SYSCALL_RETURN,
				       dp->plt_name};
		walk_stmt(p->body, NULL,
			  sys		     ? lower_syscall_expr
			      : dp->plt_name ? lower_plt_expr
					     : lower_mark_expr,
			  &L);
	}
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
	int is_mark = !strcmp(c2->functor, "mark") || !strcmp(c2->functor, "provider");
	int is_stmt = !strcmp(c2->functor, "statement"), is_plt = !strcmp(c2->functor, "plt");
	if (strcmp(c2->functor, "function") && !is_mark && !is_stmt && !is_plt) {
		struct vec names = {0};
		vec_push(&names, (void *)"function");
		vec_push(&names, (void *)"mark");
		vec_push(&names, (void *)"plt");
		vec_push(&names, (void *)"provider");
		vec_push(&names, (void *)"statement");
		return pp_fail(err, c2->tok, "probe point mismatch%s",
			       elab_suggest(c2->functor, &names));
	}
	if (any)
		return pp_fail(err, c0->tok,
			       "process.library probes need a path, -c CMD or -x PID");
	char *lib = dwq_find_library(exe, c1->arg->str, msg, sizeof msg);
	if (!lib && !strchr(c1->arg->str, '/')) {
		/* SystemTap's "no match (similar libraries: ...)", the libraries
		 * the executable needs */
		char **libs;
		int n = dwq_needed_closure(exe, &libs, msg, sizeof msg);
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
	if (is_mark)
		return resolve_marks(c, pp, dp, exe, lib, 2, err);
	if (is_stmt)
		return resolve_statements(c, pp, dp, exe, lib, 2, err);
	if (is_plt)
		return resolve_plts(c, pp, dp, exe, lib, 2, err);
	return resolve_functions(c, pp, dp, exe, lib, 2, err);
}

static enum pp_result resolve_process(struct elab *c, struct probe_point *pp,
				      struct derived_probe *dp, struct pp_error *err)
{
	struct probe_component *c0 = pp->components.v[0];
	struct session *s = c->s;
	if (pp->components.n < 2)
		return pp_fail(err, c0->tok, "probe point truncated (follow:  begin end function)");
	struct probe_component *c1 = pp->components.v[1];
	const char *what = c1->functor;
	int is_begin = !strcmp(what, "begin"), is_end = !strcmp(what, "end");
	int is_function = !strcmp(what, "function");
	int is_library = !strcmp(what, "library");
	int is_mark = !strcmp(what, "mark") || !strcmp(what, "provider");
	int is_stmt = !strcmp(what, "statement"), is_plt = !strcmp(what, "plt");
	int is_thread = !strcmp(what, "thread"), is_syscall = !strcmp(what, "syscall");
	if (!is_begin && !is_end && !is_function && !is_library && !is_mark && !is_stmt &&
	    !is_plt && !is_thread && !is_syscall) {
		static const char *const later[] = {"insn", "data", NULL};
		for (int i = 0; later[i]; i++)
			if (!strcmp(what, later[i]))
				return pp_fail(err, c1->tok,
					       "process(...).%s probe points are not supported yet",
					       what);
		struct vec names = {0};
		for (int i = 0; process_subnames[i]; i++)
			vec_push(&names, (void *)process_subnames[i]);
		return pp_fail(err, c1->tok, "probe point mismatch%s", elab_suggest(what, &names));
	}
	enum probe_kind kind = is_begin ? PK_PROCESS_BEGIN : PK_PROCESS_END;
	if (is_thread || is_syscall) {
		struct probe_component *c2 = pp->components.n > 2 ? pp->components.v[2] : NULL;
		if (c1->arg)
			return pp_fail(err, c1->tok, "invalid suffix for probe");
		if (is_thread && !c2)
			return pp_fail(err, c1->tok, "probe point truncated (follow:  begin end)");
		if (c2 &&
		    (pp->components.n > 3 || c2->arg ||
		     (is_thread && strcmp(c2->functor, "begin") && strcmp(c2->functor, "end")) ||
		     (is_syscall && strcmp(c2->functor, "return"))))
			return pp_fail(err, c2->tok, "probe point mismatch%s",
				       is_thread ? " (similar: begin end)" : " (similar: return)");
		if (is_thread)
			kind = !strcmp(c2->functor, "begin") ? PK_PROCESS_THREAD_BEGIN
							     : PK_PROCESS_THREAD_END;
		else
			kind = c2 ? PK_PROCESS_SYSCALL_RETURN : PK_PROCESS_SYSCALL;
	} else if ((is_begin || is_end) && (c1->arg || pp->components.n > 2))
		return pp_fail(err,
			       pp->components.n > 2
				   ? ((struct probe_component *)pp->components.v[2])->tok
				   : c1->tok,
			       "invalid suffix for probe");
	/* ptrace can only watch processes it starts or attaches to. */
	if (s->last_pass >= 5 && !s->target_cmd && !s->target_pid)
		return pp_fail(err, c0->tok,
			       "process probes need a target process: use -c CMD or -x PID");
	int any = 0;
	char *exe = NULL;
	/* Bare process.begin/.end/.thread/.syscall with -c or -x: the target
	 * and every process it starts, whatever they run (a script's
	 * interpreter, the commands of a shell; the runtime leaves out the
	 * shell of a -c command in shell syntax). */
	if (!c0->arg && (s->target_cmd || s->target_pid) && !is_function && !is_library &&
	    !is_mark && !is_stmt && !is_plt)
		any = 1;
	else
		exe = point_executable(c, c0, &any, err);
	if (!exe && !any && c0->arg && c0->arg->kind == E_STRING && !is_function && !is_library &&
	    !is_mark && !is_stmt && !is_plt) {
		/* SystemTap keeps begin/end/syscall/thread points on a program
		 * it cannot find, as written (here they never fire) */
		free(err->msg);
		memset(err, 0, sizeof *err);
		exe = xstrdup(c0->arg->str);
	}
	if (!exe && !any)
		return PP_ERROR;
	if (is_function) {
		if (any)
			return pp_fail(err, c0->tok,
				       "process.function probes need a path, -c CMD or -x PID");
		return resolve_functions(c, pp, dp, exe, NULL, 1, err);
	}
	if (is_library)
		return resolve_library(c, pp, dp, exe, any, err);
	if (is_mark || is_stmt || is_plt) {
		if (any)
			return pp_fail(err, c0->tok,
				       "process.%s probes need a path, -c CMD or -x PID", what);
		if (is_stmt)
			return resolve_statements(c, pp, dp, exe, NULL, 1, err);
		if (is_plt)
			return resolve_plts(c, pp, dp, exe, NULL, 1, err);
		return resolve_marks(c, pp, dp, exe, NULL, 1, err);
	}
	dp->kind = kind;
	/* SystemTap's pp() keeps a bare process.begin as written */
	if (exe && c0->arg) {
		const char *tail = kind == PK_PROCESS_THREAD_BEGIN ? "thread.begin"
		    : kind == PK_PROCESS_THREAD_END		   ? "thread.end"
		    : kind == PK_PROCESS_SYSCALL		   ? "syscall"
		    : kind == PK_PROCESS_SYSCALL_RETURN		   ? "syscall.return"
								   : what;
		dp->pp = xasprintf("process(\"%s\").%s", exe, tail);
	}
	dp->module = proc_image(c->s, exe);
	dp->module_base = exe ? module_base(dp->module) : 0;
	return PP_OK;
}

const struct probe_kind_ops probes_process_ops = {"process", resolve_process, process_subnames};
