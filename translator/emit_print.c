/* Pass 3: the print family. Every form becomes one _stp_format call with
 * a format string built here: print/println concatenate their arguments
 * (%d for longs, %s for strings), printd/printdln put the delimiter
 * between them, the *ln forms end with a newline, printf/sprintf use the
 * script's format. The s* forms format into a frame temporary and yield
 * it; the others print into the handler's output buffer. print of a
 * histogram (@hist_log/@hist_linear) goes to _stp_stat_print_hist. */
#include "emit.h"

#include <string.h>

static void put_escaped_pct(struct strbuf *b, const char *s)
{
	for (; *s; s++) {
		if (*s == '%')
			sb_putc(b, '%');
		sb_putc(b, *s);
	}
}

static int first_value(const struct expr *e)
{
	return (e->print_has_fmt || e->print_delim) ? 1 : 0;
}

static void print_hist(struct emitter *E, const struct expr *e, const struct expr *h)
{
	emit_raw(E, "({ c->last_stmt = %s; _stp_stat_print_hist(c, ", emit_tokloc(e->tok));
	emit_stat_ref(E, h->left);
	emit_raw(E, "); if (__builtin_expect(c->last_error != 0, 0)) goto %s; ", E->err_label);
	if (e->print_newline)
		emit_raw(E, "_stp_print(c, \"\\n\"); ");
	emit_raw(E, "(int64_t)0; })");
}

/* print_char(N): the byte N (SystemTap's translator passes the first
 * argument to _stp_print_char and ignores the rest). */
static void print_char(struct emitter *E, const struct expr *e)
{
	const struct expr *a = vec_at(&e->args, 0);
	if (a->type != T_LONG) {
		/* SystemTap's pass 4 fails on it (a pointer as a char) */
		emit_error(E, a->tok, "print_char takes a character code (a number)");
		emit_raw(E, "0");
		return;
	}
	char *v = emit_to_string(E, a);
	emit_raw(E, "({ char __pc = (char)(%s); _stp_print_n(c, &__pc, 1); (int64_t)0; })", v);
}

void emit_print(struct emitter *E, const struct expr *e)
{
	int first = first_value(e), n = e->args.n - first;
	if (e->print_char && e->args.n) {
		print_char(E, e);
		return;
	}
	/* SystemTap's limit; the s* forms are reported twice there (the
	 * second as a similar message), as they are translated twice. */
	if (n > 32)
		for (int k = 0; k < (e->print_to_string ? 2 : 1); k++)
			emit_error(E, e->tok, "too many arguments to print (%d)", n);
	if (n == 1 && !e->print_to_string && !e->print_has_fmt) {
		const struct expr *a = vec_at(&e->args, first);
		if (a->kind == E_HIST) {
			print_hist(E, e, a);
			return;
		}
	}

	struct strbuf fmt = {0};
	const struct expr *delim = e->print_delim && e->args.n ? vec_at(&e->args, 0) : NULL;
	int delim_arg = delim && delim->kind != E_STRING;
	if (e->print_has_fmt) {
		const struct expr *f = e->args.n ? vec_at(&e->args, 0) : NULL;
		if (!f || f->kind != E_STRING) {
			emit_error(E, e->tok, "the format must be a literal string");
			emit_raw(E, "0");
			return;
		}
		sb_puts(&fmt, f->str);
	} else {
		for (int i = 0; i < n; i++) {
			const struct expr *a = vec_at(&e->args, first + i);
			if (i && delim) {
				if (delim_arg)
					sb_puts(&fmt, "%s");
				else
					put_escaped_pct(&fmt, delim->str);
			}
			/* SystemTap reports this once when it sizes the
			 * handler's temporaries and again when it translates
			 * it: the second is counted as a similar message. */
			if (a->type == T_STATS || a->kind == E_HIST)
				for (int k = 0; k < 2; k++)
					emit_error(E, a->tok,
						   "print format actual argument evaluation type "
						   "unsupported");
			sb_puts(&fmt, a->type == T_STRING ? "%s" : "%d");
		}
	}
	if (e->print_newline)
		sb_puts(&fmt, "\n");

	int id = emit_id(E), nv = 0;
	int total = n + (delim_arg && n > 1 ? n - 1 : 0);
	emit_raw(E, "({ ");
	if (total)
		emit_raw(E, "struct _stp_val v%d[%d]; ", id, total);
	const char *dname = NULL;
	if (delim_arg) {
		const char *t = emit_strtmp(E);
		emit_raw(E, "_stp_strlcpy(%s, %s, MAXSTRINGLEN); ", t, emit_to_string(E, delim));
		dname = t;
	}
	for (int i = 0; i < n; i++) {
		const struct expr *a = vec_at(&e->args, first + i);
		if (i && dname) {
			emit_raw(E, "v%d[%d].n = 0; v%d[%d].s = %s; ", id, nv, id, nv, dname);
			nv++;
		}
		char *v = emit_to_string(E, a);
		if (a->type == T_STRING) {
			int later = 0;
			for (int j = first + i + 1; j < e->args.n; j++)
				later |= emit_has_side_effects(vec_at(&e->args, j));
			if (later && a->kind != E_STRING && a->kind != E_CONCAT &&
			    a->kind != E_CALL && a->kind != E_PRINT) {
				const char *t = emit_strtmp(E);
				emit_raw(E, "_stp_strlcpy(%s, %s, MAXSTRINGLEN); ", t, v);
				v = xstrdup(t);
			}
			emit_raw(E, "v%d[%d].n = 0; v%d[%d].s = %s; ", id, nv, id, nv, v);
		} else {
			emit_raw(E, "v%d[%d].n = %s; v%d[%d].s = 0; ", id, nv, v, id, nv);
		}
		nv++;
	}
	emit_raw(E, "c->last_stmt = %s; ", emit_tokloc(e->tok));
	const char *dst = e->print_to_string ? emit_strtmp(E) : "0";
	emit_raw(E, "_stp_format(c, %s, %s, %s, %d); ", dst, emit_cstr(sb_str(&fmt)),
		 nv ? xasprintf("v%d", id) : "0", nv);
	emit_raw(E, "if (__builtin_expect(c->last_error != 0, 0)) goto %s; ", E->err_label);
	if (e->print_to_string)
		emit_raw(E, "(const char *)%s; })", dst);
	else
		emit_raw(E, "(int64_t)0; })");
}
