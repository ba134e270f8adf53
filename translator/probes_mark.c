/* process(...)[.library("LIB")][.provider("P")].mark("NAME"): SDT markers
 * (<sys/sdt.h>), one probe per marker matched, firing at its nop with its
 * semaphore (if any) raised while probed; $argN, $$name, $$provider and
 * $$vars / $$parms come from the marker's note, other variables ($x,
 * $$locals, @var) from the DWARF at its address, as SystemTap's. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "probes_process.h"
#include "proc_image.h"
#include "sdt.h"

/* Where the variables of the code around a marker are found, as SystemTap
 * finds them (the marker is a statement probe at its address): NULL
 * without DWARF there. */
static struct proc_point *mark_point(struct elab *c, const char *img, uint64_t pc)
{
	char msg[DWQ_ERRLEN];
	const char *fname = NULL;
	struct dwq_mod *m = c->s->listing ? NULL : proc_open_mod(img, msg, sizeof msg);
	Dwarf_Off die = m ? dwv_func_at(m, pc, &fname) : 0;

	return die ? proc_point_at(m, die, pc, fname) : NULL;
}

/* .mark("NAME") / .provider("P").mark("NAME") at pp->components.v[mi]:
 * one probe per SDT marker of FILE (the executable or lib) that matches. */
enum pp_result proc_resolve_mark(const struct pp_at *at, struct derived_probe *dp,
				 struct pp_error *err)
{
	struct elab *c = at->c;
	struct probe_point *pp = at->pp;
	const char *exe = at->exe, *lib = at->lib;
	int mi = at->i;
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
	uint64_t base = proc_module_base(img);
	struct derived_probe *d = NULL;
	char *pre = proc_pn_prefix(pp, exe, lib);
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
		d->kind = PK_PROCESS_MARK;
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
				      proc_lib_arg(pp), (unsigned long long)m->pc);
		d->module = proc_image(c->s, exe);
		d->library = lib ? proc_image(c->s, lib) : NULL;
		d->addr = m->pc;
		d->module_base = base;
		d->semaphore = m->semaphore;
		d->mark = m;
		d->proc = mark_point(c, img, m->pc);
	}
	free(pre);
	/* SystemTap's "(similar marks: ...)"; none in a library it looks up
	 * among the executable's */
	if (!d && (!lib || dwq_library_named_directly(proc_lib_arg(pp)))) {
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

/* ---- the marker's variables ---- */

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
			lower_to_call(e, "__tvar_reg_high", 3,
				      (int64_t[]){a->reg, size, a->is_signed});
		else
			lower_to_call(e, "__tvar_reg", 3, (int64_t[]){a->reg, size, a->is_signed});
		return 0;
	case SDT_ARG_MEM:
		if (a->index != SDT_REG_NONE || a->reg == SDT_REG_NONE)
			lower_to_call(
			    e, "__tvar_memx", 6,
			    (int64_t[]){a->reg, a->index, a->scale, a->offset, size, a->is_signed});
		else
			lower_to_call(e, "__tvar_mem", 4,
				      (int64_t[]){a->reg, a->offset, size, a->is_signed});
		return 0;
	case SDT_ARG_ABS:
		lower_to_call(e, "__tvar_addr", 3, (int64_t[]){a->offset, size, a->is_signed});
		return 0;
	}
	snprintf(msg, len, "unsupported SDT argument operand '%s'", a->text ? a->text : "");
	return -1;
}

static int lower_mark_expr(struct expr *e, void *arg)
{
	struct point_lower *L = arg;
	const struct sdt_probe *m = L->dp->mark;
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
		/* sprintf("$arg1=%#x $arg2=%#x", $arg1, $arg2), as SystemTap's */
		struct expr *out = expr_new(E_PRINT, tok);
		struct expr *fmt = expr_new(E_STRING, tok);
		char *f = xstrdup("");
		out->str = "sprintf";
		out->print_to_string = 1;
		out->print_has_fmt = 1;
		vec_push(&out->args, fmt);
		for (int k = 0; k < m->nargs; k++) {
			char *g = xasprintf("%s%s$arg%d=%%#x", f, k ? " " : "", k + 1);
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
	} else if (L->dp->proc) {
		return 1; /* a variable of the code around the marker: DWARF's */
	} else if (!msg[0]) {
		snprintf(msg, sizeof msg,
			 "unable to find local '%s' in marker '%s' (alternatives: $arg1..$arg%d, "
			 "$$name, $$provider)",
			 e->str + 1, m->name, m->nargs > 0 ? m->nargs : 0);
	}
	if (lower_badvar_zero(L->c, e))
		return 1;
	elab_error(L->c, tok, "%s", msg);
	return 1;
}

void proc_lower_mark(struct elab *c, struct derived_probe *dp)
{
	lower_point_vars(c, dp, lower_mark_expr);
}

/* -L: $arg1..$argN */
char *proc_mark_vars(const struct derived_probe *dp)
{
	const struct sdt_probe *m = dp->mark;
	struct strbuf b = {0};
	for (int k = 0; k < m->nargs; k++)
		sb_printf(&b, " $arg%d:long", k + 1);
	return xstrdup(sb_str(&b));
}
