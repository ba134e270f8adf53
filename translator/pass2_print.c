/* The -p2 output, as SystemTap 4.8 prints it: "# globals", "# functions"
 * (sorted by name) and "# probes" with each derived probe's locals; with
 * -v also the bodies, where globals print as __global_NAME and calls as
 * __global_NAME__overload_N (N: the overload that runs first) and
 * single-statement blocks print as their statement. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "probe_kinds.h"
#include "escape.h"

static void put_type(struct strbuf *b, enum exp_type t)
{
	sb_puts(b, exp_type_name(t));
}

static void put_var(struct strbuf *b, const struct vardecl *v)
{
	sb_puts(b, v->name);
	if (v->wrap)
		sb_putc(b, '%');
	if (v->maxsize)
		sb_printf(b, "[%d]", v->maxsize);
	sb_putc(b, ':');
	put_type(b, v->type);
	if (v->arity > 0) {
		sb_puts(b, " [");
		for (int i = 0; i < v->arity && i < STAP_MAX_ARITY; i++) {
			if (i)
				sb_puts(b, ", ");
			put_type(b, v->index_types[i]);
		}
		sb_putc(b, ']');
	}
}

/* "__global_" or, for a private symbol, "__private_FILE_" with the file
 * name's other characters than letters and digits as '_'. */
static char *mangle(const char *name, int is_private, const struct source_file *f)
{
	if (!is_private || !f || !f->name)
		return xasprintf("__global_%s", name);
	struct strbuf b = {0};
	sb_puts(&b, "__private_");
	for (const char *p = f->name; *p; p++)
		sb_putc(&b,
			(*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
				(*p >= '0' && *p <= '9')
			    ? *p
			    : '_');
	sb_printf(&b, "_%s", name);
	return sb_take(&b);
}

/* Names as pass 2 prints them; restored after printing. */
struct rename {
	struct vec exprs;
	struct vec names;
	const struct expr *skip;
};

static int rename_expr(struct expr *e, void *arg)
{
	struct rename *r = arg;
	if (e == r->skip)
		return 0;
	const char *nn = NULL;
	if (e->kind == E_SYMBOL && e->var && e->var->is_global)
		nn = mangle(e->str, e->var->is_private, e->var->file);
	else if (e->kind == E_CALL && e->func)
		nn =
		    xasprintf("%s__overload_%d", mangle(e->str, e->func->is_private, e->func->file),
			      e->func->overload);
	if (nn) {
		vec_push(&r->exprs, e);
		vec_push(&r->names, (void *)e->str);
		e->str = nn;
	}
	return 0;
}

static int rename_stmt(struct stmt *s, void *arg)
{
	struct rename *r = arg;
	if (s->kind == S_DELETE && s->value && s->value->kind == E_SYMBOL)
		r->skip = s->value; /* SystemTap prints "delete g" plainly */
	return 0;
}

/* flags: the nested blocks' (PRINT_FLAT_BLOCKS unless -u); flat: whether
 * the body's own block may flatten too. */
static void print_body(struct strbuf *out, struct stmt *body, unsigned flags, int flat)
{
	struct rename r = {0};
	walk_stmt(body, rename_stmt, rename_expr, &r);
	sb_puts(out, "{ ");
	if (body->kind == S_BLOCK && !body->stmts.n && (flags & PRINT_FLAT_BLOCKS))
		sb_putc(out, ';');
	else if (flat || body->kind != S_BLOCK)
		print_stmt_flags(out, body, flags);
	else
		print_block(out, body, flags);
	sb_puts(out, " }\n");
	for (int i = 0; i < r.exprs.n; i++)
		((struct expr *)r.exprs.v[i])->str = r.names.v[i];
	free(r.exprs.v);
	free(r.names.v);
}

/* ---- sections ---- */

static unsigned body_flags(const struct session *s)
{
	return s->unoptimized ? 0 : PRINT_FLAT_BLOCKS;
}

static int fn_cmp(const void *a, const void *b)
{
	const struct functiondecl *x = *(void *const *)a, *y = *(void *const *)b;
	char *mx = mangle(x->name, x->is_private, x->file);
	char *my = mangle(y->name, y->is_private, y->file);
	int r = strcmp(mx, my);
	free(mx);
	free(my);
	if (r)
		return r;
	/* SystemTap's order is that of __overload_N as text */
	char nx[16], ny[16];
	snprintf(nx, sizeof nx, "%d", x->overload);
	snprintf(ny, sizeof ny, "%d", y->overload);
	return strcmp(nx, ny);
}

static void print_functions(struct session *s, struct strbuf *out)
{
	if (!s->functions.n)
		return;
	sb_puts(out, "# functions\n");
	int n = s->functions.n;
	struct functiondecl **fs = xcalloc(n, sizeof *fs);
	memcpy(fs, s->functions.v, n * sizeof *fs);
	qsort(fs, n, sizeof *fs, fn_cmp);
	for (int i = 0; i < n; i++) {
		struct functiondecl *fd = fs[i];
		sb_printf(out, "%s:", fd->name);
		put_type(out, fd->type);
		sb_puts(out, " (");
		for (int j = 0; j < fd->formals.n; j++) {
			if (j)
				sb_puts(out, ", ");
			put_var(out, fd->formals.v[j]);
		}
		sb_puts(out, ")\n");
		if (fd->locals.n) {
			sb_puts(out, "  # locals\n");
			struct vardecl *v;
			vec_foreach (struct vardecl *, v, &fd->locals) {
				sb_puts(out, "  ");
				put_var(out, v);
				sb_putc(out, '\n');
			}
		}
		if (s->verbose && fd->body)
			print_body(out, fd->body, body_flags(s), !s->unoptimized);
	}
	free(fs);
}

static void print_probe(struct session *s, struct strbuf *out, struct derived_probe *dp)
{
	/* names from probed binaries: shown, control bytes escaped */
	char *raw = dp_full_pp(dp), *pp = esc_visible(raw);
	free(raw);
	sb_puts(out, pp);
	if (pk_of(dp)->flags & PKF_AT_ADDRESS) {
		/* SystemTap's probes at an address: where in the file (a
		 * fixed-address executable's offset from its start), and the
		 * resolved point in place of the alias chain */
		raw = dp_full_from(dp);
		char *from = esc_visible(raw);
		free(raw);
		sb_printf(out, " /* pc=%s+0x%llx */ /* <- %s */\n",
			  dp->module_base ? ".absolute" : ".dynamic",
			  (unsigned long long)(dp->addr - dp->module_base), from);
		free(from);
	} else {
		char *from = esc_visible(dp->alias_pp ? dp->alias_pp : dp->pp);
		sb_printf(out, " /* <- %s */\n", from);
		free(from);
	}
	free(pp);
	if (dp->probe->locals.n) {
		sb_puts(out, "  # locals\n");
		struct vardecl *v;
		vec_foreach (struct vardecl *, v, &dp->probe->locals) {
			sb_puts(out, "  ");
			put_var(out, v);
			sb_putc(out, '\n');
		}
	}
	if (s->verbose && dp->probe->body)
		print_body(out, dp->probe->body, body_flags(s),
			   !s->unoptimized && dp->probe->id != -1);
}

void pass2_print(struct session *s, struct strbuf *out)
{
	if (s->embeds.n) {
		sb_puts(out, "# global embedded code\n");
		struct embedded_block *eb;
		vec_foreach (struct embedded_block *, eb, &s->embeds)
			sb_printf(out, "%%{%s%%}\n", eb->code);
	}
	if (s->globals.n) {
		sb_puts(out, "# globals\n");
		struct vardecl *v;
		vec_foreach (struct vardecl *, v, &s->globals) {
			put_var(out, v);
			if (s->verbose && v->init) {
				sb_puts(out, " = ");
				print_expr(out, v->init);
			}
			sb_putc(out, '\n');
		}
	}
	print_functions(s, out);
	sb_puts(out, "# probes\n");
	struct derived_probe *dp;
	vec_foreach (struct derived_probe *, dp, &s->probes)
		print_probe(s, out, dp);
}
