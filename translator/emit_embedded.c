/* Pass 3: embedded C. A function whose body is %{ %} is pasted into the
 * generated function between the macros of doc/embedded-c.md (STAP_ARG_*,
 * STAP_RETVALUE, STAP_RETURN, STAP_ERROR, STAP_NEXT, CONTEXT, THIS); `return` inside
 * it leaves through the function's cleanup, as in SystemTap. Embedded
 * expressions (%{ %} in expression context, guru mode) are pasted as a C
 * expression of the inferred type. */
#include "emit.h"

static void paste(struct emitter *E, const char *code)
{
	emit_raw(E, "%s\n", code ? code : "");
}

void emit_embedded_body(struct emitter *E, const struct functiondecl *f)
{
	struct vardecl *p;
	int str = f->type == T_STRING;
	emit_raw(E, "#define STAP_RETVALUE (l->__retvalue)\n");
	vec_foreach (struct vardecl *, p, &f->formals)
		emit_raw(E, "#define STAP_ARG_%s (%s)\n", p->name, emit_var(p));
	if (str)
		emit_raw(E,
			 "#define STAP_RETURN(v) do { _stp_strlcpy(STAP_RETVALUE, (v), "
			 "MAXSTRINGLEN); goto out; } while (0)\n");
	else
		emit_raw(E,
			 "#define STAP_RETURN(v) do { STAP_RETVALUE = (int64_t)(v); goto out; } "
			 "while (0)\n");
	emit_raw(E,
		 "#define STAP_ERROR(...) do { _stp_error(CONTEXT, __VA_ARGS__); goto out; } "
		 "while (0)\n");
	emit_raw(E, "#define STAP_NEXT do { x_next = 1; goto out; } while (0)\n");
	emit_raw(E, "#define return goto out\n\t{\n");
	paste(E, f->body->code);
	emit_raw(E,
		 "\t}\n#undef return\n#undef STAP_NEXT\n#undef STAP_ERROR\n#undef STAP_RETURN\n");
	vec_foreach (struct vardecl *, p, &f->formals)
		emit_raw(E, "#undef STAP_ARG_%s\n", p->name);
	emit_raw(E, "#undef STAP_RETVALUE\n");
}

void emit_embedded_expr(struct emitter *E, const struct expr *e)
{
	if (e->type == T_STRING)
		emit_raw(E, "((const char *)(\n");
	else
		emit_raw(E, "((int64_t)(\n");
	emit_raw(E, "%s\n))", e->str ? e->str : "0");
}
