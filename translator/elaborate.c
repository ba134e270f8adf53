/* Pass 2 driver: runs the steps of semantic analysis in SystemTap's order
 * (derive probes, resolve symbols and pull in the tapset, elide unused
 * code, infer types, check, auto-print write-only globals) and prints the
 * -p2 result. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "diag.h"
#include <stdlib.h>

#include "probe_kinds.h"

/* diag.c tells repeated messages apart by their format string. SystemTap
 * keys errors by the place in the translator that raised them (so errors
 * go to diag with their format: see elab_error in elaborate.h) but
 * warnings by their text: pass the finished text, '%' doubled. */
static char *as_format(const char *fmt, va_list ap)
{
	char *m = xvasprintf(fmt, ap);
	struct strbuf b = {0};
	for (const char *p = m; *p; p++) {
		if (*p == '%')
			sb_putc(&b, '%');
		sb_putc(&b, *p);
	}
	free(m);
	return sb_take(&b);
}

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-security"
#pragma GCC diagnostic ignored "-Wformat-nonliteral"

void elab_count_error(struct elab *c)
{
	c->errors++;
	c->s->num_errors++;
}

void elab_error_text(struct elab *c, const struct token *tok, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *m = as_format(fmt, ap);
	va_end(ap);
	diag_semantic_error_site(m, tok, "%s", m);
	elab_count_error(c);
}

void elab_warning(struct elab *c, const struct token *tok, const char *fmt, ...)
{
	if (c->s->suppress_warnings)
		return;
	va_list ap;
	va_start(ap, fmt);
	char *m = as_format(fmt, ap);
	va_end(ap);
	diag_warning_site(m, tok, "%s", m);
	if (c->s->warnings_as_errors)
		elab_count_error(c);
}

#pragma GCC diagnostic pop

int elab_file_index(struct elab *c, const struct source_file *f)
{
	for (int i = 0; i < c->files.n; i++)
		if (((struct stapfile *)c->files.v[i])->src == f)
			return i;
	return -1;
}

/* A file joins the program: its top-level %{ %} and its probes. */
void elab_pull_file(struct elab *c, int i)
{
	if (i < 0 || c->pulled[i])
		return;
	c->pulled[i] = 1;
	struct stapfile *f = c->files.v[i];
	struct embedded_block *eb;
	vec_foreach (struct embedded_block *, eb, &f->embeds)
		vec_push(&c->s->embeds, eb);
	struct probe *p;
	vec_foreach (struct probe *, p, &f->probes)
		vec_push(&c->user_probes, p);
}

/* Distinct probe bodies of the derived probes, in order. */
static void collect_bodies(struct elab *c)
{
	struct derived_probe *dp;
	vec_foreach (struct derived_probe *, dp, &c->s->probes)
		if (!dp->probe->in_bodies) {
			dp->probe->in_bodies = 1;
			vec_push(&c->bodies, dp->probe);
		}
}

/* In one pass, not per body: alias expansion can make many thousands. */
void elab_count_derived(struct elab *c)
{
	struct probe *p;
	vec_foreach (struct probe *, p, &c->bodies) {
		p->nderived = 0;
		p->first_pp = NULL;
	}
	struct derived_probe *dp;
	vec_foreach (struct derived_probe *, dp, &c->s->probes) {
		if (!dp->probe->nderived++)
			dp->probe->first_pp = dp->pp;
	}
}

struct named_fn {
	struct functiondecl *fd;
	int order;
};

static int named_fn_cmp(const void *a, const void *b)
{
	const struct named_fn *x = a, *y = b;
	int r = strcmp(x->fd->name, y->fd->name);
	return r ? r : x->order - y->order;
}

/* SystemTap's overload numbers: per name, counting the tapset files'
 * functions first, then the user script's. */
static void number_overloads(struct elab *c)
{
	struct vec all = {0};
	for (int i = 1; i <= c->files.n; i++) {
		struct stapfile *f = c->files.v[i % c->files.n];
		struct functiondecl *fd;
		vec_foreach (struct functiondecl *, fd, &f->functions) {
			if (!fd->file)
				fd->file = f->src;
			vec_push(&all, fd);
		}
	}
	struct named_fn *v = xcalloc((size_t)all.n + 1, sizeof *v);
	for (int i = 0; i < all.n; i++)
		v[i] = (struct named_fn){all.v[i], i};
	qsort(v, (size_t)all.n, sizeof *v, named_fn_cmp);
	for (int i = 0; i < all.n; i++)
		v[i].fd->overload =
		    i && !strcmp(v[i - 1].fd->name, v[i].fd->name) ? v[i - 1].fd->overload + 1 : 0;
	free(v);
	free(all.v);
}

static void setup(struct elab *c, struct session *s)
{
	memset(c, 0, sizeof *c);
	c->s = s;
	elab_alias_reset();
	vec_push(&c->files, s->user_file);
	struct stapfile *f;
	vec_foreach (struct stapfile *, f, &s->extra_files)
		vec_push(&c->files, f);
	vec_foreach (struct stapfile *, f, &s->library_files)
		vec_push(&c->files, f);
	c->pulled = xcalloc(c->files.n + 1, 1);
	number_overloads(c);
	/* The user files (the script and the -E ones) are always in; their
	 * embeds are only there under -g, which the parser has checked. */
	for (int i = 0; i <= s->extra_files.n; i++)
		elab_pull_file(c, i);
	vec_foreach (struct stapfile *, f, &c->files) {
		struct vardecl *v;
		vec_foreach (struct vardecl *, v, &f->globals) {
			v->is_global = 1;
			if (!v->file)
				v->file = f->src;
			v->arity = v->init ? 0 : -1;
			if (v->init && v->type == T_UNKNOWN)
				v->type = v->init->kind == E_STRING ? T_STRING : T_LONG;
			if (v->init)
				v->init->type = v->type;
			if (v->type != T_UNKNOWN && !v->type_tok)
				v->type_tok = v->tok;
			if (v->init && !v->arity_tok)
				v->arity_tok = v->tok;
		}
	}
}

static int is_global_cb(struct expr *e, void *arg)
{
	if (e->kind == E_SYMBOL && e->var && e->var->is_global)
		*(int *)arg = 1;
	return 0;
}

static int uses_globals(struct expr *e)
{
	int found = 0;
	if (e)
		walk_expr(e, is_global_cb, &found);
	return found;
}

/* With a probe condition on globals SystemTap adds an empty begin probe
 * (where it first evaluates the conditions); so does this, for the same
 * -p2 text. */
static void condition_probe(struct elab *c)
{
	struct derived_probe *dp, *first = NULL;
	vec_foreach (struct derived_probe *, dp, &c->s->probes)
		if (!first && uses_globals(dp->point->condition))
			first = dp;
	if (!first)
		return;
	struct probe *p = xcalloc(1, sizeof *p);
	p->tok = first->probe->tok;
	p->file = first->probe->file;
	p->id = -1;
	p->body = stmt_new(S_BLOCK, p->tok);
	struct probe_component *pc = xcalloc(1, sizeof *pc);
	pc->functor = "begin";
	pc->tok = p->tok;
	struct probe_point *pp = xcalloc(1, sizeof *pp);
	vec_push(&pp->components, pc);
	pp->tok = p->tok;
	vec_push(&p->points, pp);
	dp = xcalloc(1, sizeof *dp);
	dp->kind = PK_BEGIN;
	dp->probe = p;
	dp->point = pp;
	dp->pp = "begin";
	dp->alias_pp = "begin";
	dp->tok = p->tok;
	vec_push(&c->s->probes, dp);
	vec_push(&c->bodies, p);
}

/* SystemTap's warning for each script argument no $N or @N of the user's
 * files used; none when the argv tapset's globals are used (they take
 * them all). */
static void warn_unused_args(struct session *s)
{
	struct vardecl *v;
	vec_foreach (struct vardecl *, v, &s->globals)
		if (!strcmp(v->name, "argc") || !strcmp(v->name, "argv") ||
		    !strncmp(v->name, "argv_", 5))
			return;
	for (int i = 0; i < s->args.n && !s->listing && !s->dump; i++)
		if (!s->args_used || !s->args_used[i])
			warn("unused command line option $%d/@%d", i + 1, i + 1);
}

/* --dump-functions: every public tapset function is used, so types are
 * inferred for all of them (SystemTap's "unknown" where none is). */
static void use_library_functions(struct elab *c)
{
	for (int i = 1 + c->s->extra_files.n; i < c->files.n; i++) {
		struct stapfile *f = c->files.v[i];
		struct functiondecl *fd;
		vec_foreach (struct functiondecl *, fd, &f->functions) {
			if (!fd->file)
				fd->file = f->src;
			if (fd->is_private || fd->name[0] == '_' || fd->used)
				continue;
			fd->used = 1;
			vec_push(&c->s->functions, fd);
		}
	}
}

int pass2_elaborate(struct session *s)
{
	struct elab c;
	setup(&c, s);
	if (s->dump == DUMP_FUNCTIONS)
		use_library_functions(&c);

	/* Deriving probes and resolving symbols feed each other: a pulled
	 * tapset file may bring probes, whose bodies call functions. */
	int before, lowered = 0;
	do {
		before = c.user_probes.n + s->functions.n + s->globals.n;
		elab_derive_probes(&c);
		pk_lower(&c, lowered);
		lowered = s->probes.n;
		collect_bodies(&c);
		elab_resolve(&c);
	} while (before != c.user_probes.n + s->functions.n + s->globals.n ||
		 c.probes_derived < c.user_probes.n);
	if (c.probewrite) {
		/* as 4.8's uncaught exception: its text, no "Pass 2: failed" */
		fputs("unexpected @probewrite\n", stderr);
		s->pass_aborted = 1;
		return 1;
	}
	/* As SystemTap, failed target expressions stay in the program until
	 * types are checked, which reports them again (types.c). */
	if (c.errors > c.tvar_errors)
		return 1;

	elab_fold_defined(&c);
	if (!s->unoptimized)
		elab_elide(&c, 0);
	for (int n = elab_fold_errors(); n > 0; n--)
		elab_count_error(&c);
	if (c.errors == c.tvar_errors)
		elab_infer_types(&c);
	if (!c.errors)
		elab_check(&c);
	if (!c.errors && s->unoptimized)
		elab_fold_unoptimized(&c);
	else if (!c.errors)
		elab_elide(&c, 1);
	if (!c.errors)
		elab_check_variance(&c);
	for (int n = elab_fold_errors(); n > 0; n--)
		elab_count_error(&c);
	if (!c.errors)
		elab_autoprint(&c);
	if (!c.errors)
		condition_probe(&c);
	if (!c.errors)
		elab_dcg_needs(&c);
	if (!c.errors && !s->probes.n && !s->listing && !s->dump) /* -l: no output, exit 1 */
		elab_error(&c, NULL, "no probes found");
	if (c.errors)
		return 1;

	for (int i = 0; i < s->globals.n; i++)
		((struct vardecl *)s->globals.v[i])->id = i;
	for (int i = 0; i < s->functions.n; i++) {
		struct functiondecl *fd = s->functions.v[i];
		fd->id = i;
		for (int j = 0; j < fd->formals.n; j++)
			((struct vardecl *)fd->formals.v[j])->id = j;
		for (int j = 0; j < fd->locals.n; j++)
			((struct vardecl *)fd->locals.v[j])->id = j;
	}
	struct probe *bp;
	vec_foreach (struct probe *, bp, &c.bodies)
		for (int j = 0; j < bp->locals.n; j++)
			((struct vardecl *)bp->locals.v[j])->id = j;
	for (int i = 0; i < s->probes.n; i++) {
		struct derived_probe *dp = s->probes.v[i];
		dp->id = i;
		if (dp->point->condition) /* used as "resolved" mark */
			dp->point->condition->lowered_id = 0;
	}

	elab_render_chains();
	warn_unused_args(s);
	if (s->last_pass == 2 && !s->dump) {
		struct strbuf out = {0};
		pass2_print(s, &out);
		fputs(sb_str(&out), stdout);
		fflush(stdout);
	}
	return 0;
}
