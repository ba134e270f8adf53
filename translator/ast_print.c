/* The -p1 (and -p2) text of the AST, byte for byte as SystemTap 4.8 prints
 * it: every operand of an operator in parentheses, each statement of a
 * block followed by ";" and a newline, a file's declarations grouped as
 * embedded code, globals, aliases, probes, functions. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "ast.h"
#include "escape.h"
#include "lexer.h"

static void print_list(struct strbuf *out, const struct vec *v)
{
	for (int i = 0; i < v->n; i++) {
		if (i)
			sb_puts(out, ", ");
		const struct expr *e = vec_at(v, i);
		if (e)
			print_expr(out, e);
		else
			sb_putc(out, '*');
	}
}

static void paren(struct strbuf *out, const struct expr *e)
{
	sb_putc(out, '(');
	print_expr(out, e);
	sb_putc(out, ')');
}

/* A string literal as written, or re-escaped if it was synthesized. */
static void print_string(struct strbuf *out, const struct expr *e, int fmt)
{
	if (e->tok && e->tok->type == TOK_STRING && e->tok->raw &&
	    !strcmp(e->tok->content, e->str)) {
		lexer_quote_raw(out, e->tok->raw, fmt);
		return;
	}
	/* a made-up string (a name from a binary): its escapes are the
	 * lexer's own, so the text reads back as the same string */
	char *raw = esc_visible(e->str);
	lexer_quote_raw(out, raw, fmt);
	free(raw);
}

static void print_components(struct strbuf *out, const struct expr *e)
{
	const struct tcomp *c;
	vec_foreach (const struct tcomp *, c, &e->comps) {
		if (c->kind == TC_MEMBER) {
			sb_printf(out, "->%s", c->member);
		} else if (c->kind == TC_INDEX_NUM) {
			sb_printf(out, "[%" PRId64 "]", c->num);
		} else {
			sb_putc(out, '[');
			print_expr(out, c->index);
			sb_putc(out, ']');
		}
	}
	if (e->pretty)
		sb_puts(out, e->pretty == 2 ? "->$$" : "->$");
}

static void print_print(struct strbuf *out, const struct expr *e)
{
	sb_printf(out, "%s(", e->str);
	for (int i = 0; i < e->args.n; i++) {
		const struct expr *a = vec_at(&e->args, i);
		if (i)
			sb_puts(out, ", ");
		if (i == 0 && e->print_has_fmt && a->kind == E_STRING)
			print_string(out, a, 1);
		else
			print_expr(out, a);
	}
	sb_putc(out, ')');
}

void print_expr(struct strbuf *out, const struct expr *e)
{
	switch (e->kind) {
	case E_NUMBER:
		if (e->num_hex)
			sb_printf(out, "0x%" PRIx64, (uint64_t)e->num);
		else
			sb_printf(out, "%" PRId64, e->num);
		break;
	case E_STRING:
		print_string(out, e, 0);
		break;
	case E_SYMBOL:
		sb_puts(out, e->str);
		break;
	case E_TARGET:
		if (e->addressof)
			sb_putc(out, '&');
		if (e->str)
			sb_puts(out, e->str);
		else
			paren(out, e->left);
		print_components(out, e);
		break;
	case E_ENTRY:
		sb_puts(out, "@entry(");
		print_expr(out, e->left);
		sb_putc(out, ')');
		break;
	case E_DEFINED:
		sb_puts(out, "@defined(");
		print_expr(out, e->left);
		sb_putc(out, ')');
		break;
	case E_CAST:
		if (e->addressof)
			sb_putc(out, '&');
		sb_puts(out, "@cast(");
		print_expr(out, e->left);
		sb_puts(out, ", ");
		print_list(out, &e->args);
		sb_putc(out, ')');
		print_components(out, e);
		break;
	case E_ATVAR:
		if (e->addressof)
			sb_putc(out, '&');
		sb_puts(out, "@var(");
		print_list(out, &e->args);
		sb_putc(out, ')');
		print_components(out, e);
		break;
	case E_EMBEDDED:
		sb_printf(out, "%%{ %s %%}", e->str);
		break;
	case E_BINARY:
	case E_LOGICAL:
	case E_COMPARE:
	case E_CONCAT:
	case E_ASSIGN:
		paren(out, e->left);
		sb_printf(out, " %s ", e->op);
		paren(out, e->right);
		break;
	case E_UNARY:
	case E_PRE_INC:
		sb_puts(out, e->op);
		paren(out, e->left);
		break;
	case E_POST_INC:
		paren(out, e->left);
		sb_puts(out, e->op);
		break;
	case E_TERNARY:
		paren(out, e->cond);
		sb_putc(out, '?');
		paren(out, e->left);
		sb_putc(out, ':');
		paren(out, e->right);
		break;
	case E_IN:
		sb_putc(out, '[');
		print_list(out, &e->args);
		sb_puts(out, "] in ");
		print_expr(out, e->base);
		break;
	case E_REGEX:
		paren(out, e->left);
		sb_printf(out, " %s ", e->op);
		print_expr(out, e->right);
		break;
	case E_CALL:
		sb_printf(out, "%s(", e->str);
		print_list(out, &e->args);
		sb_putc(out, ')');
		break;
	case E_PRINT:
		print_print(out, e);
		break;
	case E_STAT:
		sb_printf(out, "%s(", e->op);
		print_expr(out, e->left);
		if (e->args.n) {
			sb_puts(out, ", ");
			print_list(out, &e->args);
		}
		sb_putc(out, ')');
		break;
	case E_HIST:
		sb_puts(out, e->hist_linear ? "@hist_linear(" : "@hist_log(");
		print_expr(out, e->left);
		if (e->args.n) {
			sb_puts(out, ", ");
			print_list(out, &e->args);
		}
		sb_putc(out, ')');
		break;
	case E_INDEX:
		print_expr(out, e->base);
		sb_putc(out, '[');
		print_list(out, &e->args);
		sb_putc(out, ']');
		break;
	}
}

static void print_foreach(struct strbuf *out, const struct stmt *s, unsigned flags)
{
	sb_puts(out, "foreach (");
	if (s->value_var)
		sb_printf(out, "%s = ", s->value_var->str);
	sb_putc(out, '[');
	for (int i = 0; i < s->indexes.n; i++) {
		const struct expr *k = vec_at(&s->indexes, i);
		if (i)
			sb_puts(out, ", ");
		sb_puts(out, k->str);
		if (s->sort_direction && s->sort_column == i + 1)
			sb_putc(out, s->sort_direction > 0 ? '+' : '-');
	}
	sb_puts(out, "] in ");
	print_expr(out, s->array);
	if (s->array_slice.n) {
		sb_putc(out, '[');
		print_list(out, &s->array_slice);
		sb_putc(out, ']');
	}
	if (s->sort_aggr)
		sb_printf(out, " %s", s->sort_aggr);
	if (s->sort_direction && s->sort_column == 0)
		sb_putc(out, s->sort_direction > 0 ? '+' : '-');
	if (s->limit) {
		sb_puts(out, " limit ");
		print_expr(out, s->limit);
	}
	sb_puts(out, ") ");
	print_stmt_flags(out, s->body, flags);
}

void print_block(struct strbuf *out, const struct stmt *s, unsigned flags)
{
	const struct stmt *c;
	sb_puts(out, "{\n");
	vec_foreach (const struct stmt *, c, &s->stmts) {
		print_stmt_flags(out, c, flags);
		sb_puts(out, ";\n");
	}
	sb_putc(out, '}');
}

void print_stmt(struct strbuf *out, const struct stmt *s)
{
	print_stmt_flags(out, s, 0);
}

void print_stmt_flags(struct strbuf *out, const struct stmt *s, unsigned flags)
{
	switch (s->kind) {
	case S_BLOCK:
		/* pass 2 prints the optimized tree, where such blocks are gone */
		if ((flags & PRINT_FLAT_BLOCKS) && s->stmts.n == 1)
			print_stmt_flags(out, s->stmts.v[0], flags);
		else if ((flags & PRINT_FLAT_BLOCKS) && !s->stmts.n)
			sb_putc(out, ';');
		else
			print_block(out, s, flags);
		break;
	case S_TRY:
		sb_puts(out, "try {\n");
		print_stmt_flags(out, s->body, flags);
		sb_puts(out, "\n} catch");
		if (s->catch_var)
			sb_printf(out, " (%s)", s->catch_var->str);
		sb_puts(out, " {\n");
		print_stmt_flags(out, s->catch_body, flags);
		sb_puts(out, "\n}\n");
		break;
	case S_EMBEDDED:
		sb_printf(out, "%%{%s%%}", s->code);
		break;
	case S_NULL:
		sb_putc(out, ';');
		break;
	case S_EXPR:
		print_expr(out, s->value);
		break;
	case S_IF:
		sb_puts(out, "if (");
		print_expr(out, s->cond);
		sb_puts(out, ") ");
		print_stmt_flags(out, s->then, flags);
		sb_putc(out, '\n');
		if (s->els) {
			sb_puts(out, "else ");
			print_stmt_flags(out, s->els, flags);
			sb_putc(out, '\n');
		}
		break;
	case S_FOR:
		sb_puts(out, "for (");
		if (s->init)
			print_expr(out, s->init);
		sb_puts(out, "; ");
		if (s->cond)
			print_expr(out, s->cond);
		else
			sb_putc(out, '1');
		sb_puts(out, "; ");
		if (s->incr)
			print_expr(out, s->incr);
		sb_puts(out, ") ");
		print_stmt_flags(out, s->body, flags);
		break;
	case S_FOREACH:
		print_foreach(out, s, flags);
		break;
	case S_RETURN:
		sb_puts(out, "return");
		if (s->value) {
			sb_putc(out, ' ');
			print_expr(out, s->value);
		}
		break;
	case S_DELETE:
		sb_puts(out, "delete ");
		print_expr(out, s->value);
		break;
	case S_NEXT:
		sb_puts(out, "next");
		break;
	case S_BREAK:
		sb_puts(out, "break");
		break;
	case S_CONTINUE:
		sb_puts(out, "continue");
		break;
	}
}

void print_probe_point(struct strbuf *out, const struct probe_point *pp)
{
	for (int i = 0; i < pp->components.n; i++) {
		const struct probe_component *c = vec_at(&pp->components, i);
		if (i)
			sb_putc(out, '.');
		sb_puts(out, c->functor);
		if (c->arg) {
			sb_putc(out, '(');
			print_expr(out, c->arg);
			sb_putc(out, ')');
		}
	}
	if (pp->sufficient)
		sb_putc(out, '!');
	else if (pp->optional)
		sb_putc(out, '?');
	if (pp->condition) {
		sb_puts(out, " if (");
		print_expr(out, pp->condition);
		sb_putc(out, ')');
	}
}

static void print_points(struct strbuf *out, const struct vec *v, const char *sep)
{
	for (int i = 0; i < v->n; i++) {
		if (i)
			sb_puts(out, sep);
		print_probe_point(out, vec_at(v, i));
	}
}

static void print_global(struct strbuf *out, const struct vardecl *v)
{
	sb_printf(out, "global %s", v->name);
	if (v->wrap)
		sb_putc(out, '%');
	if (v->maxsize)
		sb_printf(out, "[%d]", v->maxsize);
	if (v->init) {
		sb_puts(out, " = ");
		print_expr(out, v->init);
	}
	sb_putc(out, '\n');
}

static void print_function(struct strbuf *out, const struct functiondecl *f)
{
	sb_printf(out, "function %s (", f->name);
	for (int i = 0; i < f->formals.n; i++) {
		const struct vardecl *v = vec_at(&f->formals, i);
		sb_printf(out, "%s%s", i ? ", " : "", v->name);
	}
	sb_puts(out, ")\n");
	print_stmt(out, f->body);
	sb_putc(out, '\n');
}

void print_stapfile(struct strbuf *out, const struct stapfile *f)
{
	const struct embedded_block *eb;
	const struct vardecl *v;
	const struct probe_alias *a;
	const struct probe *p;
	const struct functiondecl *fn;

	sb_printf(out, "# file %s\n", f->src->name);
	vec_foreach (const struct embedded_block *, eb, &f->embeds)
		sb_printf(out, "%%{%s%%}", eb->code);
	vec_foreach (const struct vardecl *, v, &f->globals)
		print_global(out, v);
	vec_foreach (const struct probe_alias *, a, &f->aliases) {
		sb_puts(out, "probe ");
		print_points(out, &a->alias_names, ", ");
		sb_puts(out, a->epilogue ? " += " : " = ");
		print_points(out, &a->points, ", ");
		print_stmt(out, a->body);
		sb_putc(out, '\n');
	}
	vec_foreach (const struct probe *, p, &f->probes) {
		sb_puts(out, "probe ");
		print_points(out, &p->points, ",");
		print_stmt(out, p->body);
		sb_putc(out, '\n');
	}
	vec_foreach (const struct functiondecl *, fn, &f->functions)
		print_function(out, fn);
}
