/* The preprocessor: script arguments, @define macros, %( %? %: %)
 * conditionals. See preproc.h for the order of the layers.
 *
 * Conditions answer as this implementation is: arch "x86_64"; runtime
 * "kernel" (SystemTap's default runtime, so that existing scripts and
 * tapsets take their usual branch even though we trace user space);
 * systemtap_v "4.8" (--compatible's version); kernel_v/kernel_vr from
 * uname -r of the running kernel (or -r RELEASE); CONFIG_64BIT "y" (true of every x86_64 kernel),
 * every other CONFIG_* option unset (""); systemtap_privilege "stapdev"; guru_mode from -g. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <ctype.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>

#include "lexer.h"
#include "parser.h"
#include "preproc.h"

#define MAX_EXPANSION_DEPTH 100
/* Tokens all macro expansions of one file may produce: macros that use
 * another twice double at each level (@a30 -> 2^30 tokens). */
#define MAX_EXPANDED_TOKENS 1000000

struct macro {
	const char *name;
	const struct token *name_tok;
	struct vec params; /* char * */
	struct vec body;   /* struct token * */
	struct macro *next;
};

struct macro_table {
	struct macro *first;
};

/* A source of tokens: a lexer, or a list (macro body, argument). */
struct frame {
	struct lexer *lx; /* or NULL: list */
	struct vec *list;
	int pos;
	const struct token *chain; /* the invocation, for list tokens */
	struct macro *macro;	   /* whose parameters are bound here */
	struct vec *args;	   /* struct vec * per parameter */
	struct frame *scope;	   /* argument tokens: where they were written */
	struct frame *up;
	int depth;
};

/* One open %( conditional. */
struct cond {
	const struct token *tok;
	int taking_else; /* in the %: part */
	struct cond *up;
};

struct pp {
	struct session *s;
	const struct source_file *src;
	struct frame *top;
	struct macro_table local;
	struct cond *conds;
	int stpm;      /* a .stpm file: definitions are public */
	long expanded; /* tokens taken from macro bodies and arguments */
	int skipping;  /* inside a false %( branch */
};

static struct macro_table global_macros;

void pp_reset(void)
{
	global_macros.first = NULL;
}

struct pp *pp_new(struct session *s, const struct source_file *src)
{
	struct pp *pp = xcalloc(1, sizeof(*pp));
	pp->s = s;
	pp->src = src;
	pp->top = xcalloc(1, sizeof(*pp->top));
	pp->top->lx = lexer_new(src, NULL);
	return pp;
}

/* ---- layer 1: input frames and script arguments ---- */

static struct token *copy_tok(const struct token *t, const struct token *chain)
{
	struct token *c = xmalloc(sizeof(*c));
	*c = *t;
	if (chain)
		c->chain = chain;
	return c;
}

static void push_frame(struct pp *pp, struct frame *f)
{
	f->up = pp->top;
	f->depth = pp->top ? pp->top->depth + 1 : 0;
	if (f->depth > MAX_EXPANSION_DEPTH) {
		/* Drop the whole expansion (a macro that uses itself would
		 * otherwise fail again at every following token). */
		while (pp->top->up)
			pp->top = pp->top->up;
		pass1_throw(f->chain, 0, "macro expansion nested too deeply");
	}
	pp->top = f;
}

/* Script argument $N / @N / $# / @#, or NULL if T is not one. */
static int arg_number(const char *w, long *n)
{
	if ((w[0] != '$' && w[0] != '@') || !isdigit((unsigned char)w[1]))
		return 0;
	char *end;
	*n = strtol(w + 1, &end, 10);
	return *end == '\0';
}

static const struct token *substitute_arg(struct pp *pp, struct token *t)
{
	const char *w = t->content;
	int nargs = pp->s->args.n;
	long n;
	if (!strcmp(w, "$#") || !strcmp(w, "@#")) {
		t->type = w[0] == '$' ? TOK_NUMBER : TOK_STRING;
		t->content = xasprintf("%d", nargs);
		t->raw = t->content;
		return t;
	}
	if (!arg_number(w, &n))
		return t;
	if (n < 1 || n > nargs) {
		/* An error only if it survives the conditionals. */
		struct token *j = copy_tok(t, NULL);
		j->type = TOK_JUNK;
		j->content = xasprintf("command line argument out of range [1-%d]", nargs);
		j->junk = JUNK_ARG;
		return j;
	}
	const char *arg = vec_at(&pp->s->args, n - 1);
	if (!t->loc.file || !t->loc.file->is_tapset) { /* for pass 2's "unused" warning */
		if (!pp->s->args_used)
			pp->s->args_used = xcalloc(nargs, 1);
		pp->s->args_used[n - 1] = 1;
	}
	if (w[0] == '@') {
		t->type = TOK_STRING;
		t->content = arg;
		t->raw = arg;
		return t;
	}
	/* $N: the argument's text is lexed where $N stands. */
	struct source_file *sf = xcalloc(1, sizeof(*sf));
	sf->name = t->loc.file ? t->loc.file->name : "<input>";
	sf->text = arg;
	struct srcloc *loc = xmalloc(sizeof(*loc));
	*loc = t->loc;
	struct frame *f = xcalloc(1, sizeof(*f));
	f->lx = lexer_new(sf, loc);
	f->chain = t->chain;
	push_frame(pp, f);
	return NULL;
}

static const struct token *raw_next(struct pp *pp)
{
	for (;;) {
		struct frame *f = pp->top;
		struct token *t;
		if (f->lx) {
			t = lexer_next(f->lx);
			if (t->type == TOK_EOF && f->up) {
				pp->top = f->up;
				continue;
			}
			if (f->chain && t->type != TOK_EOF)
				t->chain = f->chain;
		} else {
			if (f->pos >= f->list->n) {
				pp->top = f->up;
				continue;
			}
			if (++pp->expanded > MAX_EXPANDED_TOKENS) {
				const struct token *at = f->chain;
				while (pp->top->up)
					pp->top = pp->top->up;
				/* the budget stays spent: later expansions fail at once */
				pass1_throw(at, 0,
					    "macro expansion too large (more than %d tokens)",
					    MAX_EXPANDED_TOKENS);
			}
			t = copy_tok(vec_at(f->list, f->pos++), f->chain);
		}
		if (t->type == TOK_JUNK && t->junk == JUNK_ERROR)
			pass1_throw(t, 0, "%s", t->content);
		if (t->type == TOK_IDENT || t->type == TOK_OPERATOR) {
			const struct token *r = substitute_arg(pp, t);
			if (!r)
				continue;
			return r;
		}
		return t;
	}
}

/* ---- layer 2: macros ---- */

static struct macro *find_macro(struct macro_table *mt, const char *name)
{
	for (struct macro *m = mt->first; m; m = m->next)
		if (!strcmp(m->name, name))
			return m;
	return NULL;
}

static int is_op(const struct token *t, const char *op)
{
	return t->type == TOK_OPERATOR && !strcmp(t->content, op);
}

/* @define NAME [(PARAM, ...)] %( BODY %) */
static void define_macro(struct pp *pp, struct macro_table *mt)
{
	const struct token *name = raw_next(pp);
	if (name->type != TOK_IDENT && name->type != TOK_KEYWORD)
		pass1_throw(name, 0, "expected identifier");
	struct macro *old = find_macro(mt, name->content);
	if (old) {
		pass1_report(name, 0, "attempt to redefine macro '@%s' in the same file",
			     name->content);
		pass1_throw(old->name_tok, 0, "macro '@%s' first defined here", name->content);
	}
	/* Library macros share one namespace: another .stpm file (one
	 * loaded earlier) may not define the same name (in a branch taken). */
	old = pp->stpm && !pp->skipping ? find_macro(&global_macros, name->content) : NULL;
	if (old) {
		pass1_report(name, 0, "duplicate definition of library macro '@%s'", name->content);
		pass1_throw(old->name_tok, 0, "macro '@%s' first defined here", name->content);
	}
	struct macro *m = xcalloc(1, sizeof(*m));
	m->name = name->content;
	m->name_tok = name;
	const struct token *t = raw_next(pp);
	if (is_op(t, "(")) {
		for (;;) {
			t = raw_next(pp);
			if (t->type != TOK_IDENT && t->type != TOK_KEYWORD)
				pass1_throw(t, 0, "expected identifier");
			vec_push(&m->params, (void *)t->content);
			t = raw_next(pp);
			if (is_op(t, ")"))
				break;
			if (!is_op(t, ","))
				pass1_throw(t, 0, "expected ',' or ')'");
		}
		t = raw_next(pp);
	}
	if (!is_op(t, "%("))
		pass1_throw(t, 0, "expected '%%('");
	int depth = 0;
	for (;;) {
		t = raw_next(pp);
		if (t->type == TOK_EOF)
			pass1_throw(name, 0, "incomplete macro definition - missing '%%)'");
		if (is_op(t, "%("))
			depth++;
		if (is_op(t, "%)") && depth-- == 0)
			break;
		vec_push(&m->body, (void *)t);
	}
	m->next = mt->first;
	mt->first = m;
}

/* The parameter named NAME of the expansion being read, if any. The
 * tokens of an argument are read in the scope they were written in. */
static struct vec *find_param(struct pp *pp, const char *name, struct frame **owner)
{
	for (struct frame *f = pp->top; f; f = f->scope ? f->scope : f->up) {
		if (!f->macro)
			continue;
		*owner = f;
		for (int i = f->macro->params.n - 1; i >= 0; i--)
			if (!strcmp(vec_at(&f->macro->params, i), name))
				return vec_at(f->args, i);
		return NULL; /* only the innermost expansion's parameters */
	}
	return NULL;
}

/* @NAME(ARG, ...) : collect the arguments, split at top-level commas. */
static struct vec *macro_args(struct pp *pp, struct macro *m, const struct token *inv)
{
	struct vec *args = xcalloc(1, sizeof(*args));
	int n = m->params.n;
	if (n == 0)
		return args;
	const struct token *t = raw_next(pp);
	if (!is_op(t, "("))
		pass1_throw(t, 0, "expected '(' in invocation of macro '@%s' taking %d parameter%s",
			    m->name, n, n == 1 ? "" : "s");
	struct vec *cur = xcalloc(1, sizeof(*cur));
	int depth = 0;
	for (;;) {
		t = raw_next(pp);
		if (t->type == TOK_EOF)
			pass1_throw(inv, 0, "could not find end of macro invocation");
		if (depth == 0 && (is_op(t, ",") || is_op(t, ")"))) {
			vec_push(args, cur);
			if (is_op(t, ")"))
				break;
			if (args->n >= n)
				pass1_throw(t, 0,
					    "too many parameters for macro '@%s' (expected %d)",
					    m->name, n);
			cur = xcalloc(1, sizeof(*cur));
			continue;
		}
		if (is_op(t, "(") || is_op(t, "[") || is_op(t, "{"))
			depth++;
		else if (is_op(t, ")") || is_op(t, "]") || is_op(t, "}"))
			depth--;
		vec_push(cur, (void *)t);
	}
	if (args->n < n)
		pass1_throw(t, 0, "too few parameters for macro '@%s' (expected %d)", m->name, n);
	return args;
}

static const struct token *macro_next(struct pp *pp)
{
	for (;;) {
		const struct token *t = raw_next(pp);
		if (t->type != TOK_OPERATOR || t->content[0] != '@' || !t->content[1])
			return t;
		const char *name = t->content + 1;
		if (!strcmp(name, "define")) {
			/* A .stpm file's definitions are public, and only those
			 * of the branches taken count. They are gathered in
			 * pp->local and made public once the whole file is
			 * read without error (pp_collect_macros). */
			static struct macro_table discard;
			define_macro(pp, pp->stpm && pp->skipping ? &discard : &pp->local);
			discard.first = NULL;
			continue;
		}
		struct frame *owner = NULL;
		struct vec *param = find_param(pp, name, &owner);
		if (param) {
			struct frame *f = xcalloc(1, sizeof(*f));
			f->list = param;
			f->chain = t;
			f->scope = owner->up;
			push_frame(pp, f);
			continue;
		}
		struct macro *m = find_macro(&pp->local, name);
		if (!m)
			m = find_macro(&global_macros, name);
		if (!m)
			return t;
		struct vec *args = macro_args(pp, m, t);
		struct frame *f = xcalloc(1, sizeof(*f));
		f->list = &m->body;
		f->chain = t;
		f->macro = m;
		f->args = args;
		push_frame(pp, f);
	}
}

void pp_collect_macros(struct pp *pp)
{
	pp->stpm = 1;
	/* Only @define's (maybe inside conditionals) may be there. */
	const struct token *t = pp_next(pp);
	if (t->type != TOK_EOF)
		pass1_throw(t, 0, "unexpected token in library macro file '%s'", pp->src->name);
	/* No error: the file's macros become public (an error unwinds past
	 * here, and the whole file is skipped, as SystemTap does). */
	struct macro *m = pp->local.first;
	while (m) {
		struct macro *next = m->next;
		m->next = global_macros.first;
		global_macros.first = m;
		m = next;
	}
	pp->local.first = NULL;
}

/* ---- layer 3: conditionals ---- */

/* uname -r, or -r RELEASE; kernel_v is the part before the first '-'. */
static const char *kernel_release(const struct session *s, int with_release)
{
	static struct utsname u;
	static int done;
	if (!done) {
		if (uname(&u) != 0)
			strcpy(u.release, "0.0.0");
		done = 1;
	}
	const char *r = s && s->kernel_release ? s->kernel_release : u.release;
	if (with_release)
		return r;
	static char v[sizeof(u.release) + 256];
	snprintf(v, sizeof v, "%.*s", (int)strcspn(r, "-"), r);
	return v;
}

static int has_wildcard(const char *s)
{
	return strpbrk(s, "*?[") != NULL;
}

static int compare_result(int cmp, const char *op)
{
	if (!strcmp(op, "<"))
		return cmp < 0;
	if (!strcmp(op, "<="))
		return cmp <= 0;
	if (!strcmp(op, ">"))
		return cmp > 0;
	if (!strcmp(op, ">="))
		return cmp >= 0;
	if (!strcmp(op, "=="))
		return cmp == 0;
	return cmp != 0;
}

static int is_compare_op(const struct token *t)
{
	static const char *const ops[] = {"<", "<=", ">", ">=", "==", "!=", NULL};
	if (t->type != TOK_OPERATOR)
		return 0;
	for (int i = 0; ops[i]; i++)
		if (!strcmp(ops[i], t->content))
			return 1;
	return 0;
}

static const char *cond_expected =
    "expected 'arch', 'kernel_v', 'kernel_vr', 'systemtap_v',\n"
    "             'runtime', 'systemtap_privilege', 'CONFIG_...', or\n"
    "             comparison between strings or integers";

/* A version or wildcard comparison of VALUE against a string literal. */
static int eval_version(const struct token *lhs, const struct token *op, const struct token *rhs,
			const char *value, int versions)
{
	if (!is_compare_op(op))
		pass1_throw(lhs, 0, "%s", cond_expected);
	if (!versions && strcmp(op->content, "==") && strcmp(op->content, "!="))
		pass1_throw(op, 0, "expected '==' or '!='");
	if (rhs->type != TOK_STRING)
		pass1_throw(rhs, 0, "expected string literal");
	int eq = !strcmp(op->content, "==");
	if (!versions || ((eq || !strcmp(op->content, "!=")) && has_wildcard(rhs->content))) {
		int m = fnmatch(rhs->content, value, 0) == 0;
		return eq ? m : !m;
	}
	return compare_result(strverscmp(value, rhs->content), op->content);
}

static const char *config_value(const char *name)
{
	return !strcmp(name, "CONFIG_64BIT") ? "y" : "";
}

/* CONFIG_X op (STRING | NUMBER | CONFIG_Y) */
static int eval_config(const struct token *lhs, const struct token *op, const struct token *rhs)
{
	const char *value = config_value(lhs->content);
	if (rhs->type == TOK_IDENT && !strncmp(rhs->content, "CONFIG_", 7)) {
		if (!is_compare_op(op))
			pass1_throw(lhs, 0, "%s", cond_expected);
		return compare_result(strcmp(value, config_value(rhs->content)), op->content);
	}
	if (rhs->type == TOK_NUMBER) {
		int64_t a = 0, b = 0;
		if (!is_compare_op(op))
			pass1_throw(lhs, 0, "%s", cond_expected);
		if (lexer_number_value(rhs->content, &b))
			pass1_throw(rhs, 1, "number invalid or out of range");
		if (!*value || lexer_number_value(value, &a))
			return !strcmp(op->content, "!="); /* unset: no number */
		return compare_result(a < b ? -1 : a > b, op->content);
	}
	if (rhs->type != TOK_STRING)
		pass1_throw(rhs, 0,
			    "expected string, number literal or other "
			    "CONFIG_... as right side operand");
	return eval_version(lhs, op, rhs, value, 0);
}

/* term -> IDENT op STRING | literal op literal : SystemTap reads all
 * three tokens before looking at them. */
static int eval_term(struct pp *pp, const struct token *open)
{
	const struct token *lhs = macro_next(pp);
	const struct token *op = lhs->type == TOK_EOF ? lhs : macro_next(pp);
	const struct token *rhs = op->type == TOK_EOF ? op : macro_next(pp);
	if (rhs->type == TOK_EOF)
		pass1_throw(open, 0, "incomplete condition after '%%('");
	const struct token *three[] = {lhs, op, rhs};
	for (int i = 0; i < 3; i++)
		if (three[i]->type == TOK_JUNK && three[i]->junk == JUNK_ARG)
			pass1_throw(three[i], 0, "%s", three[i]->content);
	if (lhs->type == TOK_IDENT) {
		const char *n = lhs->content;
		if (!strcmp(n, "arch"))
			return eval_version(lhs, op, rhs, "x86_64", 0);
		if (!strcmp(n, "runtime"))
			return eval_version(lhs, op, rhs, "kernel", 0);
		if (!strcmp(n, "systemtap_privilege"))
			return eval_version(lhs, op, rhs, "stapdev", 0);
		if (!strncmp(n, "CONFIG_", 7))
			return eval_config(lhs, op, rhs);
		if (!strcmp(n, "kernel_v"))
			return eval_version(lhs, op, rhs, kernel_release(pp->s, 0), 1);
		if (!strcmp(n, "kernel_vr"))
			return eval_version(lhs, op, rhs, kernel_release(pp->s, 1), 1);
		if (!strcmp(n, "systemtap_v"))
			return eval_version(
			    lhs, op, rhs,
			    pp->s && pp->s->compat_version ? pp->s->compat_version : "4.8", 1);
		if (!strcmp(n, "guru_mode")) {
			int64_t v = 0;
			if (rhs->type != TOK_NUMBER || lexer_number_value(rhs->content, &v))
				pass1_throw(rhs, 0, "expected number literal");
			int cmp = (pp->s->guru ? 1 : 0) - (int)v;
			return compare_result(cmp, op->content);
		}
	}
	if ((lhs->type != TOK_NUMBER && lhs->type != TOK_STRING) || !is_compare_op(op))
		pass1_throw(lhs, 0, "%s", cond_expected);
	if (lhs->type == TOK_NUMBER) {
		int64_t a, b;
		if (rhs->type != TOK_NUMBER)
			pass1_throw(rhs, 0, "expected number literal as right value");
		if (lexer_number_value(lhs->content, &a))
			pass1_throw(lhs, 1, "number invalid or out of range");
		if (lexer_number_value(rhs->content, &b))
			pass1_throw(rhs, 1, "number invalid or out of range");
		return compare_result(a < b ? -1 : a > b, op->content);
	}
	if (rhs->type != TOK_STRING)
		pass1_throw(rhs, 0, "expected string literal as right value");
	return compare_result(strcmp(lhs->content, rhs->content), op->content);
}

/* COND -> term ('&&' term)* ('||' ...)* ; returns the token after it. */
static int eval_condition(struct pp *pp, const struct token *open, const struct token **after)
{
	int result = 0, conj = 1;
	for (;;) {
		conj = eval_term(pp, open) && conj;
		const struct token *t = macro_next(pp);
		if (is_op(t, "&&"))
			continue;
		result = result || conj;
		conj = 1;
		if (is_op(t, "||"))
			continue;
		*after = t;
		return result;
	}
}

/* Skip a branch up to its %: (if STOP_AT_ELSE) or %) at this level.
 * Returns the token that ended it. */
static const struct token *skip_branch(struct pp *pp, const struct cond *c, int stop_at_else)
{
	int depth = 0;
	pp->skipping++;
	for (;;) {
		const struct token *t = macro_next(pp);
		if (t->type == TOK_EOF) {
			pp->skipping = 0;
			pp->conds = NULL; /* reported once */
			pass1_throw(c->tok, 0, "incomplete conditional at end of file");
		}
		if (is_op(t, "%("))
			depth++;
		else if (is_op(t, "%)")) {
			if (depth-- == 0) {
				pp->skipping--;
				return t;
			}
		} else if (is_op(t, "%:") && depth == 0 && stop_at_else) {
			pp->skipping--;
			return t;
		}
	}
}

static void open_conditional(struct pp *pp, const struct token *open)
{
	const struct token *after;
	int taken = eval_condition(pp, open, &after);
	if (!is_op(after, "%?"))
		pass1_throw(open, 0, "expected '%%?' marker for conditional");
	struct cond *c = xcalloc(1, sizeof(*c));
	c->tok = open;
	c->up = pp->conds;
	pp->conds = c;
	if (taken)
		return;
	const struct token *end = skip_branch(pp, c, 1);
	if (is_op(end, "%:"))
		c->taking_else = 1;
	else
		pp->conds = c->up;
}

const struct token *pp_next(struct pp *pp)
{
	for (;;) {
		const struct token *t = macro_next(pp);
		if (t->type == TOK_OPERATOR && t->content[0] == '%') {
			const char *o = t->content;
			if (!strcmp(o, "%(")) {
				open_conditional(pp, t);
				continue;
			}
			if (!strcmp(o, "%?") || !strcmp(o, "%:") || !strcmp(o, "%)")) {
				struct cond *c = pp->conds;
				if (!c || !strcmp(o, "%?") || (!strcmp(o, "%:") && c->taking_else))
					pass1_throw(t, 0, "incomplete conditional - missing '%%('");
				if (!strcmp(o, "%:"))
					skip_branch(pp, c, 0);
				pp->conds = c->up;
				continue;
			}
		}
		if (t->type == TOK_JUNK && t->junk == JUNK_ARG)
			pass1_throw(t, 0, "%s", t->content);
		if (t->type == TOK_EOF && pp->conds) {
			const struct token *open = pp->conds->tok;
			pp->conds = NULL;
			pass1_throw(open, 0, "incomplete conditional at end of file");
		}
		return t;
	}
}
