/* Pass 3 driver: lays out the one C file a script becomes.
 *
 *   runtime include, limit defaults, top-level %{ %} blocks,
 *   globals (g_*), function frames and bodies (f_*), probe handlers (p_*),
 *   the probe table and _stp_module_info.
 *
 * Every handler and function gets its own frame struct of locals and
 * string temporaries. Probe frames are static (handlers never nest);
 * function frames are static arrays indexed by call depth (MAXNESTING of
 * them), so recursion works and big strings never sit on the C stack. */
#include "emit.h"
#include "diag.h"
#include "probe_kinds.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct session *cur_session;

/* ---- small helpers shared by emit*.c ---- */

void emit_raw(struct emitter *E, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	sb_vprintf(E->o, fmt, ap);
	va_end(ap);
}

void emit_line(struct emitter *E, const char *fmt, ...)
{
	va_list ap;
	for (int i = 0; i < E->indent; i++)
		sb_putc(E->o, '\t');
	va_start(ap, fmt);
	sb_vprintf(E->o, fmt, ap);
	va_end(ap);
	sb_putc(E->o, '\n');
}

int emit_id(struct emitter *E)
{
	return E->next_id++;
}

const char *emit_strtmp(struct emitter *E)
{
	int id = emit_id(E);
	sb_printf(E->tmps, "\tchar t_%d[MAXSTRINGLEN];\n", id);
	return xasprintf("l->t_%d", id);
}

const char *emit_label(struct emitter *E, const char *prefix)
{
	return xasprintf("%s_%d", prefix, emit_id(E));
}

const char *emit_tokloc(const struct token *t)
{
	if (!t)
		return "0";
	const char *file = t->loc.file ? t->loc.file->name : "<input>";
	char *s = xasprintf("%s at %s:%d:%d", token_describe(t), file, t->loc.line, t->loc.col);
	/* only ever printed (run-time error messages): the display form */
	return emit_cstr(esc_visible(s));
}

void emit_fail(struct emitter *E, const char *msg_literal, const struct token *t)
{
	emit_raw(E, "{ c->last_error = %s; c->last_stmt = %s; goto %s; }", msg_literal,
		 emit_tokloc(t), E->err_label);
}

static int emit_stopped;

void emit_error(struct emitter *E, const struct token *t, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *msg = xvasprintf(fmt, ap);
	va_end(ap);
	/* After a fatal error SystemTap's translator stops: nothing more is
	 * reported, but the pass still fails. */
	if (!emit_stopped) {
		if (t && t->loc.file)
			diag_semantic_error_site(msg, t, "%s", msg);
		else
			fprintf(stderr, "ERROR: %s\n", esc_visible(msg));
	}
	free(msg);
	E->errors++;
}

void emit_fatal(struct emitter *E, const struct token *t, const char *msg)
{
	emit_error(E, t, "%s", msg);
	emit_stopped = 1;
}

const char *emit_ctype(enum exp_type t)
{
	switch (t) {
	case T_STRING:
		return "const char *";
	case T_STATS:
		return "const struct _stp_stat *";
	default:
		return "int64_t";
	}
}

const char *emit_var(const struct vardecl *v)
{
	if (v->is_global)
		return emit_ident("g", v->name);
	return xasprintf("l->%s", emit_ident("l", v->name));
}

/* f_NAME, or fN_NAME when overloads share a name (N: its index). */
const char *emit_fname(const struct functiondecl *f)
{
	int dup = 0, idx = 0;
	struct functiondecl *g;
	vec_foreach (struct functiondecl *, g, &cur_session->functions) {
		if (g == f)
			idx = g_i;
		else if (strcmp(g->name, f->name) == 0)
			dup = 1;
	}
	return emit_ident(dup ? xasprintf("f%d", idx) : "f", f->name);
}

/* The frames of function F: "x" and its C name (a suffix could meet
 * another function's name, and F_ names are libc's macros). */
const char *emit_frames(const struct functiondecl *f)
{
	return xasprintf("x%s", emit_fname(f));
}

/* ---- globals ---- */

static const char *stp_type(enum exp_type t)
{
	return t == T_STRING ? "STP_STRING" : t == T_STATS ? "STP_STATS" : "STP_LONG";
}

static void hist_spec(struct strbuf *o, const struct vardecl *v)
{
	if (v->hist_linear)
		sb_printf(o, "{ STP_HIST_LINEAR, %d, %d, %d }", v->hist_lo, v->hist_hi,
			  v->hist_step);
	else if (v->hist_log)
		sb_puts(o, "{ STP_HIST_LOG, 0, 0, 0 }");
	else
		sb_puts(o, "{ STP_HIST_NONE, 0, 0, 0 }");
}

static const struct gset *find_gset(struct session *s, const char *name)
{
	const struct gset *g, *found = NULL;
	vec_foreach (const struct gset *, g, &s->gsets)
		if (strcmp(g->name, name) == 0)
			found = g;
	return found;
}

/* -G NAME=VALUE for a long: a decimal, hex or octal integer, maybe negative. */
static int parse_long(const char *s, int64_t *out)
{
	char *end;
	errno = 0;
	long long v = strtoll(s, &end, 0);
	if (*s == 0 || *end || errno)
		return -1;
	*out = v;
	return 0;
}

static void emit_global_decls(struct emitter *E, struct strbuf *o)
{
	struct vardecl *v;
	sb_puts(o, "/* ---- globals ---- */\n");
	vec_foreach (struct vardecl *, v, &E->s->globals) {
		const char *n = emit_var(v);
		if (v->arity > 0)
			sb_printf(o, "static struct _stp_map *%s;\n", n);
		else if (v->type == T_STATS)
			sb_printf(o, "static struct _stp_stat *%s;\n", n);
		else if (v->type == T_STRING)
			sb_printf(o, "static char %s[MAXSTRINGLEN];\n", n);
		else
			sb_printf(o, "static int64_t %s;\n", n);
	}
	sb_puts(o, "static int x_next; /* `next` in a function: run the next overload */\n\n");
}

static int variance_shift(struct emitter *E, const struct vardecl *v)
{
	struct emit_variance *ev;
	int shift = 0;
	vec_foreach (struct emit_variance *, ev, &E->variance)
		if (ev->var == v)
			shift = ev->shift;
	return shift;
}

static void emit_init_globals(struct emitter *E, struct strbuf *o)
{
	struct session *s = E->s;
	struct vardecl *v;
	const struct gset *gs;

	vec_foreach (const struct gset *, gs, &s->gsets) {
		int ok = 0;
		vec_foreach (struct vardecl *, v, &s->globals) {
			if (strcmp(v->name, gs->name) != 0)
				continue;
			int64_t n;
			if (v->arity != 0 || v->type == T_STATS)
				emit_error(E, NULL, "-G %s: '%s' is not a scalar global", gs->name,
					   gs->name);
			else if (v->type != T_STRING && parse_long(gs->value, &n) < 0)
				emit_error(E, NULL, "-G %s=%s: '%s' is not a number", gs->name,
					   gs->value, gs->value);
			ok = 1;
		}
		if (!ok)
			emit_error(E, NULL, "-G %s: no global variable '%s' in the script",
				   gs->name, gs->name);
	}

	sb_puts(o, "static int x_init_globals(struct _stp_context *c)\n{\n\t(void)c;\n");
	vec_foreach (struct vardecl *, v, &s->globals) {
		const char *n = emit_var(v);
		gs = find_gset(s, v->name);
		if (v->arity > 0) {
			sb_printf(o, "\t{\n\t\tstatic const enum _stp_type kt[] = { ");
			for (int i = 0; i < v->arity && i < STAP_MAX_ARITY; i++)
				sb_printf(o, "%s%s", i ? ", " : "", stp_type(v->index_types[i]));
			sb_printf(o, " };\n\t\tstatic const struct _stp_hist_spec hs = ");
			hist_spec(o, v);
			sb_printf(o, ";\n\t\t%s = _stp_map_new(%d, kt, %s, %s, %d, &hs);\n", n,
				  v->arity, stp_type(v->type),
				  v->maxsize > 0 ? xasprintf("%d", v->maxsize) : "MAXMAPENTRIES",
				  v->wrap ? 1 : 0);
			sb_printf(o, "\t\tif (!%s)\n\t\t\treturn -1;\n", n);
			if (v->type == T_STATS && variance_shift(E, v))
				sb_printf(o, "\t\t_stp_map_set_variance_shift(%s, %d);\n", n,
					  variance_shift(E, v));
			sb_puts(o, "\t}\n");
		} else if (v->type == T_STATS) {
			sb_printf(o, "\t{\n\t\tstatic const struct _stp_hist_spec hs = ");
			hist_spec(o, v);
			sb_printf(o, ";\n\t\t%s = _stp_stat_new(&hs);\n", n);
			sb_printf(o, "\t\tif (!%s)\n\t\t\treturn -1;\n", n);
			if (variance_shift(E, v))
				sb_printf(o, "\t\t_stp_stat_set_variance_shift(%s, %d);\n", n,
					  variance_shift(E, v));
			sb_puts(o, "\t}\n");
		} else if (v->type == T_STRING) {
			const char *val = gs			   ? gs->value
			    : v->init && v->init->kind == E_STRING ? v->init->str
								   : "";
			sb_printf(o, "\t_stp_strlcpy(%s, %s, MAXSTRINGLEN);\n", n, emit_cstr(val));
		} else {
			int64_t val = 0;
			if (gs)
				parse_long(gs->value, &val);
			else if (v->init && v->init->kind == E_NUMBER)
				val = v->init->num;
			sb_printf(o, "\t%s = (int64_t)%lluULL;\n", n, (unsigned long long)val);
		}
	}
	sb_puts(o, "\tx_next = 0;\n\treturn 0;\n}\n\n");

	sb_puts(o, "static void x_free_globals(void)\n{\n");
	if (s->timing)
		sb_printf(o, "\t_stp_timing_report(%d, x_timing, x_timing_text);\n", s->probes.n);
	vec_foreach (struct vardecl *, v, &s->globals) {
		const char *n = emit_var(v);
		if (v->arity > 0)
			sb_printf(o, "\t_stp_map_free(%s);\n\t%s = 0;\n", n, n);
		else if (v->type == T_STATS)
			sb_printf(o, "\t_stp_stat_free(%s);\n\t%s = 0;\n", n, n);
	}
	sb_puts(o, "}\n\n");
}

/* ---- frames ---- */

static void frame_var(struct strbuf *o, const struct vardecl *v)
{
	const char *n = emit_ident("l", v->name);
	if (v->type == T_STRING)
		sb_printf(o, "\tchar %s[MAXSTRINGLEN];\n", n);
	else if (v->type == T_STATS)
		sb_printf(o, "\tconst struct _stp_stat *%s;\n", n);
	else
		sb_printf(o, "\tint64_t %s;\n", n);
}

static void zero_var(struct strbuf *o, const struct vardecl *v)
{
	const char *n = emit_var(v);
	if (v->type == T_STRING)
		sb_printf(o, "\t%s[0] = 0;\n", n);
	else
		sb_printf(o, "\t%s = 0;\n", n);
}

/* Generate BODY with the labels of a fresh frame; returns the code. */
static char *gen_body(struct emitter *E, const struct stmt *body, struct strbuf *tmps)
{
	struct strbuf code = {0};
	E->o = &code;
	E->tmps = tmps;
	E->indent = 1;
	E->err_label = "out";
	E->ret_label = "out";
	E->next_label = E->in_function ? "x_do_next" : "out";
	E->brk_label = E->cont_label = NULL;
	emit_stmt(E, body);
	return sb_take(&code);
}

static void emit_function(struct emitter *E, const struct functiondecl *f, struct strbuf *decls,
			  struct strbuf *defs)
{
	const char *fn = emit_fname(f);
	struct strbuf tmps = {0};
	struct vardecl *v;

	E->in_function = 1;
	E->func = f;
	char *code = NULL;
	int embedded = f->body && f->body->kind == S_EMBEDDED;
	if (!embedded)
		code = gen_body(E, f->body, &tmps);

	sb_printf(decls, "struct %s_locals {\n", fn);
	vec_foreach (struct vardecl *, v, &f->formals)
		frame_var(decls, v);
	vec_foreach (struct vardecl *, v, &f->locals)
		frame_var(decls, v);
	if (f->type == T_STRING)
		sb_puts(decls, "\tchar *__retvalue;\n");
	else
		sb_puts(decls, "\tint64_t __retvalue;\n");
	sb_puts(decls, sb_str(&tmps));
	sb_puts(decls, "\tchar x_unused;\n};\n");
	sb_printf(decls, "static struct %s_locals %s[MAXNESTING];\n", fn, emit_frames(f));
	sb_printf(decls, "static void %s(struct _stp_context *c, struct %s_locals *l);\n\n", fn,
		  fn);

	struct emitter sub = *E;
	struct strbuf body = {0};
	sub.o = &body;
	if (embedded)
		emit_embedded_body(&sub, f);

	sb_printf(defs, "/* function %s */\n", emit_comment(f->name));
	sb_printf(defs, "static void %s(struct _stp_context *c, struct %s_locals *l)\n{\n", fn, fn);
	sb_printf(defs,
		  "\tif (c->nesting >= MAXNESTING) {\n"
		  "\t\tc->last_error = \"MAXNESTING exceeded\";\n"
		  "\t\tc->last_stmt = %s;\n\t\treturn;\n\t}\n\tc->nesting++;\n\tx_next = 0;\n",
		  emit_tokloc(f->tok));
	vec_foreach (struct vardecl *, v, &f->locals)
		zero_var(defs, v);
	if (f->type != T_STRING)
		sb_puts(defs, "\tl->__retvalue = 0;\n");
	else
		sb_puts(defs, "\tl->__retvalue[0] = 0;\n");
	if (embedded) {
		sb_puts(defs, sb_str(&body));
	} else {
		sb_puts(defs,
			"\tif (c->actionremaining <= c->actionfloor) {\n"
			"\t\tc->last_error = \"MAXACTION exceeded\";\n\t\tgoto out;\n\t}\n");
		sb_puts(defs, code);
		sb_puts(defs, "\tgoto out;\nx_do_next: __attribute__((unused));\n\tx_next = 1;\n");
	}
	sb_puts(defs, "out: __attribute__((unused));\n\tc->nesting--;\n}\n\n");
	E->next_id = sub.next_id;
	E->errors = sub.errors;
	E->in_function = 0;
	E->func = NULL;
}

static void emit_probe(struct emitter *E, const struct derived_probe *dp, int idx,
		       struct strbuf *decls, struct strbuf *defs)
{
	struct strbuf tmps = {0}, frame = {0}, key = {0};
	struct vardecl *v;
	const struct probe *p = dp->probe;
	int saved_id = E->next_id, same;
	const char *budget =
	    pk_of(dp)->flags & PKF_INTERRUPTIBLE ? "MAXACTION_INTERRUPTIBLE" : "MAXACTION";

	E->in_function = 0;
	/* numbered from 1 in each handler, so that identical bodies give
	 * identical code (temps and labels are local to the handler) */
	E->next_id = 1;
	char *code = gen_body(E, p->body, &tmps);
	if (E->next_id < saved_id)
		E->next_id = saved_id;

	/* A probe point's condition needs nothing here: pass 2 has put
	 * "if (!(COND)) next" at the start of the body. */

	vec_foreach (struct vardecl *, v, &p->locals)
		frame_var(&frame, v);
	sb_puts(&frame, sb_str(&tmps));
	/* -t times each probe apart: no sharing then */
	sb_printf(&key, "%s\n%s\n%s", budget, sb_str(&frame), code);
	same = E->s->timing ? -1 : emit_share_find(&E->share, sb_str(&key));
	if (same >= 0) {
		E->handler_of[idx] = same;
		free(code);
		free(sb_take(&tmps));
		free(sb_take(&frame));
		free(sb_take(&key));
		return;
	}
	E->handler_of[idx] = idx;
	emit_share_add(&E->share, sb_str(&key), idx);
	free(sb_take(&key));
	sb_printf(decls, "struct p_%d_locals {\n", idx);
	sb_puts(decls, sb_str(&frame));
	free(sb_take(&frame));
	sb_puts(decls, "\tchar x_unused;\n};\n");

	sb_printf(defs, "/* probe %s */\n", emit_comment(dp->pp));
	sb_printf(defs, "static void p_%d(struct _stp_context *c)\n{\n", idx);
	if (E->s->timing)
		sb_puts(defs, "\tint64_t x_t0 = _stp_gettime_ns(1 /* CLOCK_MONOTONIC */);\n");
	sb_printf(
	    defs,
	    "\tstatic struct p_%d_locals frame;\n\tstruct p_%d_locals *l = &frame;\n\t(void)l;\n",
	    idx, idx);
	vec_foreach (struct vardecl *, v, &p->locals)
		zero_var(defs, v);
	/* begin/end/error probes run "with interrupts enabled" in SystemTap's
	 * terms and get the larger budget. */
	sb_printf(defs, "\tc->nesting = 0;\n\tc->actionremaining = %s;\n\tx_next = 0;\n", budget);
	sb_puts(defs, code);
	sb_puts(defs, "out: __attribute__((unused));\n");
	/* --suppress-handler-errors: the error is counted, not printed, and
	 * does not count towards MAXERRORS (SystemTap's probe epilogue) */
	if (E->s->suppress_handler_errors)
		sb_puts(defs, "\tif (c->last_error)\n\t\t_stp_error_suppress(c);\n");
	if (E->s->timing)
		sb_printf(defs, "\tx_timing_add(%d, x_t0);\n", idx);
	sb_puts(defs, "\t_stp_print_flush(c);\n}\n\n");
}

/* -t: each probe's run times, reported after the end probes in SystemTap's
 * "probe hit report" (runtime/lang/tapset_compat.c). */
static void emit_timing(struct emitter *E, struct strbuf *o)
{
	struct session *s = E->s;
	struct derived_probe *dp;
	if (!s->timing)
		return;
	int n = s->probes.n ? s->probes.n : 1;
	sb_printf(o, "static struct _stp_stat *x_timing[%d];\n", n);
	sb_printf(o, "static const char *const x_timing_text[%d][3] = {\n", n);
	vec_foreach (struct derived_probe *, dp, &s->probes) {
		const struct token *t = dp_timing_tok(dp);
		char *pp = dp_full_pp(dp), *from = dp_derivation(dp);
		char *loc = t && t->loc.file
		    ? xasprintf("%s:%d:%d", t->loc.file->name, t->loc.line, t->loc.col)
		    : xstrdup("");
		sb_printf(o, "\t{ %s, %s, %s },\n", emit_cstr(pp), emit_cstr(loc), emit_cstr(from));
		free(pp);
		free(from);
		free(loc);
	}
	sb_puts(o,
		"};\n"
		"static void x_timing_add(int i, int64_t t0)\n{\n"
		"\tif (!x_timing[i])\n\t\tx_timing[i] = _stp_stat_new(0);\n"
		"\tif (x_timing[i])\n"
		"\t\t_stp_stat_add(x_timing[i], _stp_gettime_ns(1) - t0);\n}\n\n");
}

/* ---- MAXNESTING: the deepest call chain (at least 1), +10 when recursive,
 * which is SystemTap's default ---- */

static void collect_calls_expr(const struct expr *e, struct vec *out);

static void collect_calls_stmt(const struct stmt *st, struct vec *out)
{
	if (!st)
		return;
	struct stmt *c;
	struct expr *x;
	vec_foreach (struct stmt *, c, &st->stmts)
		collect_calls_stmt(c, out);
	collect_calls_stmt(st->body, out);
	collect_calls_stmt(st->catch_body, out);
	collect_calls_stmt(st->then, out);
	collect_calls_stmt(st->els, out);
	collect_calls_expr(st->value, out);
	collect_calls_expr(st->cond, out);
	collect_calls_expr(st->init, out);
	collect_calls_expr(st->incr, out);
	collect_calls_expr(st->limit, out);
	vec_foreach (struct expr *, x, &st->array_slice)
		collect_calls_expr(x, out);
}

static void collect_calls_expr(const struct expr *e, struct vec *out)
{
	if (!e)
		return;
	struct expr *x;
	struct functiondecl *fd;
	if (e->kind == E_CALL)
		vec_foreach (struct functiondecl *, fd, &e->referents)
			vec_push(out, fd);
	collect_calls_expr(e->left, out);
	collect_calls_expr(e->right, out);
	collect_calls_expr(e->cond, out);
	collect_calls_expr(e->base, out);
	vec_foreach (struct expr *, x, &e->args)
		collect_calls_expr(x, out);
}

/* depth[] per function: 0 unknown, -1 on the stack (recursion). */
static int call_depth(struct session *s, const struct functiondecl *f, int *depth, int *recursive)
{
	int i = 0;
	struct functiondecl *g;
	vec_foreach (struct functiondecl *, g, &s->functions)
		if (g == f)
			i = g_i;
	if (depth[i] == -1) {
		/* A call back into the chain: SystemTap counts it as two
		 * levels, and recursion earns 10 more at the end. */
		*recursive = 1;
		return 2;
	}
	if (depth[i] > 0)
		return depth[i];
	depth[i] = -1;
	struct vec calls = {0};
	collect_calls_stmt(f->body, &calls);
	int best = 0;
	vec_foreach (struct functiondecl *, g, &calls) {
		int d = call_depth(s, g, depth, recursive);
		if (d > best)
			best = d;
	}
	depth[i] = best + 1;
	return depth[i];
}

static int max_nesting(struct session *s)
{
	int *depth = xcalloc((size_t)s->functions.n + 1, sizeof(int));
	int recursive = 0, best = 0;
	struct functiondecl *f;
	vec_foreach (struct functiondecl *, f, &s->functions) {
		int d = call_depth(s, f, depth, &recursive);
		if (d > best)
			best = d;
	}
	free(depth);
	if (best < 1)
		best = 1;
	return best + (recursive ? 10 : 0);
}

/* ---- the file ---- */

static void emit_prologue(struct emitter *E, struct strbuf *o)
{
	sb_puts(o, "/* Generated by the stap translator: do not edit. */\n");
	sb_puts(o, "#include \"stap_runtime.h\"\n\n");
	/* --suppress-time-limits: no statement budget, -D MAXACTION or not */
	if (E->s->suppress_time_limits)
		sb_puts(
		    o,
		    "#undef MAXACTION\n#define MAXACTION (INT64_MAX / 16)\n"
		    "#undef MAXACTION_INTERRUPTIBLE\n#define MAXACTION_INTERRUPTIBLE MAXACTION\n");
	sb_puts(o,
		"#ifndef MAXSTRINGLEN\n#define MAXSTRINGLEN 512\n#endif\n"
		"#ifndef MAXACTION\n#define MAXACTION 1000\n#endif\n"
		"#ifndef MAXACTION_INTERRUPTIBLE\n#define MAXACTION_INTERRUPTIBLE (MAXACTION * "
		"10)\n#endif\n"
		"#ifndef MAXMAPENTRIES\n#define MAXMAPENTRIES 2048\n#endif\n"
		"#ifndef MAXERRORS\n#define MAXERRORS 0\n#endif\n"
		"#ifndef MAXSKIPPED\n#define MAXSKIPPED 100\n#endif\n"
		"#ifndef MAXTRYCATCH\n#define MAXTRYCATCH 1000\n#endif\n"
		"#ifndef HIST_WIDTH\n#define HIST_WIDTH 50\n#endif\n"
		"#ifndef HIST_ELISION\n#define HIST_ELISION 2\n#endif\n"
		"#ifndef STP_CPU_AFFINITY\n#define STP_CPU_AFFINITY -1\n#endif\n"
		"#ifndef MAXATTACH\n#define MAXATTACH 64\n#endif\n");
	sb_printf(o, "#ifndef MAXNESTING\n#define MAXNESTING %d\n#endif\n", max_nesting(E->s));
	/* a .plt probe's $$name, from its table entry (emit_plt_names) */
	sb_puts(o,
		"static const char *x_plt_name(const struct _stp_context *c) "
		"__attribute__((unused));\n");
	/* -D values that are text: string literals, whatever their bytes */
	for (int i = 0; session_string_defines[i]; i++) {
		const char *v = session_define(E->s, session_string_defines[i]);
		if (v)
			sb_printf(o, "#define %s %s\n", session_string_defines[i], emit_cstr(v));
	}
	/* what the call graph's handlers need of the thread (pass 2) */
	if (E->s->dcg_capture)
		sb_printf(o, "#define _STP_DCG_CAPTURE %d\n", E->s->dcg_capture);
	if (E->s->dcg_stop)
		sb_printf(o, "#define _STP_DCG_STOP %s\n", emit_cstr(E->s->dcg_stop));
	sb_puts(o,
		"#if MAXSTRINGLEN < 2 || MAXNESTING < 1\n"
		"#error \"MAXSTRINGLEN and MAXNESTING must be positive\"\n#endif\n\n");
}

static int write_c(struct session *s, const char *text)
{
	if (!s->c_file) {
		const char *dir = s->tmpdir ? s->tmpdir : ".";
		s->c_file = xasprintf("%s/%s.c", dir, s->module_name ? s->module_name : "stap");
	}
	FILE *f = fopen(s->c_file, "w");
	if (!f) {
		fprintf(stderr, "ERROR: cannot write %s: %s\n", s->c_file, strerror(errno));
		return 1;
	}
	fputs(text, f);
	if (fclose(f) != 0) {
		fprintf(stderr, "ERROR: cannot write %s: %s\n", s->c_file, strerror(errno));
		return 1;
	}
	return 0;
}

static const char *script_name(const struct session *s)
{
	return s->script_file ? s->script_file : "<input>";
}

/* $$name of the .plt probes, by their index in x_probes: read at run time,
 * so that their handlers can be one (emit_share.c). */
static void emit_plt_names(struct session *s, struct strbuf *o)
{
	struct derived_probe *dp;
	int any = 0;

	vec_foreach (struct derived_probe *, dp, &s->probes)
		any |= dp->plt_name != NULL;
	if (!any) {
		sb_puts(o,
			"static const char *x_plt_name(const struct _stp_context *c)\n"
			"{\n\t(void)c;\n\treturn \"\";\n}\n\n");
		return;
	}
	sb_printf(o, "static const char *const x_plt_names[%d] = {\n", s->probes.n);
	vec_foreach (struct derived_probe *, dp, &s->probes)
		sb_printf(o, "\t%s,\n", dp->plt_name ? emit_cstr(dp->plt_name) : "0");
	sb_printf(o,
		  "};\n"
		  "static const char *x_plt_name(const struct _stp_context *c)\n{\n"
		  "\tlong i = c->probe ? (long)(c->probe - x_probes) : -1;\n"
		  "\treturn i >= 0 && i < %d && x_plt_names[i] ? x_plt_names[i] : \"\";\n}\n\n",
		  s->probes.n);
}

int pass3_translate(struct session *s)
{
	struct emitter E = {0};
	struct strbuf out = {0}, gl = {0}, decls = {0}, defs = {0}, init = {0};
	struct embedded_block *eb;
	struct functiondecl *f;
	struct derived_probe *dp;

	cur_session = s;
	E.s = s;
	if (!s->module_name)
		cache_hash(s);

	E.o = &out;
	emit_prologue(&E, &out);
	vec_foreach (struct embedded_block *, eb, &s->embeds) {
		sb_printf(&out, "/* %%{ from %s */\n",
			  emit_comment(eb->file ? eb->file->name : "?"));
		sb_puts(&out, eb->code);
		sb_puts(&out, "\n");
	}
	/* Embedded C names the context and the frame this way. */
	sb_puts(&out, "#define CONTEXT c\n#define THIS l\n\n");
	emit_global_decls(&E, &gl);
	emit_timing(&E, &gl);
	vec_foreach (struct functiondecl *, f, &s->functions)
		emit_function(&E, f, &decls, &defs);
	E.handler_of = xcalloc(s->probes.n ? s->probes.n : 1, sizeof *E.handler_of);
	vec_foreach (struct derived_probe *, dp, &s->probes)
		emit_probe(&E, dp, dp_i, &decls, &defs);
	emit_share_free(&E.share);
	emit_init_globals(&E, &init);

	sb_puts(&out, sb_str(&gl));
	sb_puts(&out, "/* ---- frames ---- */\n");
	sb_puts(&out, sb_str(&decls));
	sb_puts(&out, "\n");
	sb_puts(&out, sb_str(&defs));
	sb_puts(&out, sb_str(&init));

	if (s->probes.n > 0) {
		sb_puts(&out, "static const struct _stp_probe x_probes[] = {\n");
		vec_foreach (struct derived_probe *, dp, &s->probes) {
			const struct token *t = dp->probe ? dp->probe->tok : NULL;
			char *loc = t && t->loc.file
			    ? xasprintf("%s:%d:%d", t->loc.file->name, t->loc.line, t->loc.col)
			    : xstrdup("");
			char *pp = dp_full_pp(dp);
			int64_t seq = dp->entry_of ? dp->entry_of->id : dp->sequence;
			/* begin(-9223372036854775808) (probe init): no literal
			 * of C is INT64_MIN */
			char *seqs = seq == INT64_MIN ? xstrdup("INT64_MIN")
						      : xasprintf("%lldLL", (long long)seq);
			sb_printf(&out, "\t{ %s, p_%d, %s, %s, %s, %lld, %lld",
				  pk_of(dp)->runtime_kind, E.handler_of[dp_i], emit_cstr(pp),
				  emit_cstr(loc), seqs, (long long)dp->interval_ns,
				  (long long)dp->randomize_ns);
			free(seqs);
			if (dp->module || dp->addr)
				sb_printf(&out, ", %s, 0x%llxull, 0x%llxull",
					  dp->module ? emit_cstr(dp->module) : "0",
					  (unsigned long long)dp->addr,
					  (unsigned long long)dp->module_base);
			if (dp->library || dp->semaphore)
				sb_printf(&out, ", %s, 0x%llxull",
					  dp->library ? emit_cstr(dp->library) : "0",
					  (unsigned long long)dp->semaphore);
			char *pn = dp_full_pn(dp);
			if (pn && strcmp(pn, pp))
				sb_printf(&out, ", .pn = %s", emit_cstr(pn));
			if (dp->optional)
				sb_puts(&out, ", .optional = 1");
			if (dp->pid)
				sb_printf(&out, ", .pid = %ld", dp->pid);
			sb_puts(&out, " },\n");
			free(pp);
			free(pn);
		}
		sb_puts(&out, "};\n\n");
	}
	emit_plt_names(s, &out);
	sb_printf(&out,
		  "const struct _stp_module _stp_module_info = {\n"
		  "\t.abi_version = STP_ABI_VERSION,\n"
		  "\t.script_name = %s,\n"
		  "\t.probes = %s,\n"
		  "\t.nprobes = %d,\n"
		  "\t.init_globals = x_init_globals,\n"
		  "\t.free_globals = x_free_globals,\n"
		  "\t.maxstringlen = MAXSTRINGLEN,\n"
		  "\t.maxaction = MAXACTION,\n"
		  "\t.maxmapentries = MAXMAPENTRIES,\n"
		  "\t.maxnesting = MAXNESTING,\n"
		  "\t.maxerrors = MAXERRORS,\n"
		  "\t.maxskipped = MAXSKIPPED,\n"
		  "\t.maxtrycatch = MAXTRYCATCH,\n"
		  "\t.hist_width = HIST_WIDTH,\n"
		  "\t.hist_elision = HIST_ELISION,\n"
		  "\t.maxattach = MAXATTACH,\n"
		  "};\n"
		  "const int _stp_module_cpu_affinity = STP_CPU_AFFINITY;\n",
		  emit_cstr(script_name(s)), s->probes.n ? "x_probes" : "0", s->probes.n);
	free(E.handler_of);

	if (E.errors) {
		/* named all the same: -v's "Pass 3:" line shows it */
		if (!s->c_file)
			s->c_file = xasprintf("%s/%s.c", s->tmpdir ? s->tmpdir : ".",
					      s->module_name ? s->module_name : "stap");
		return 1;
	}
	if (write_c(s, sb_str(&out)))
		return 1;
	if (s->last_pass == 3)
		fputs(sb_str(&out), stdout);
	return 0;
}
