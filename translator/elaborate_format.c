/* printf/sprintf format strings in pass 2: how many arguments a format
 * takes and of which type. The parser has already rejected malformed
 * formats; here a wrong argument count is a semantic error. */
#include <string.h>

#include "elaborate.h"

/* Append the type each conversion of FMT expects to TYPES; -1 if the
 * format is malformed. */
static int format_types(const char *fmt, struct vec *types)
{
	for (const char *p = fmt; *p; p++) {
		if (*p != '%')
			continue;
		p++;
		if (*p == '%')
			continue;
		while (*p && strchr("-+ #0", *p))
			p++;
		if (*p == '*') {
			vec_push(types, (void *)(intptr_t)T_LONG);
			p++;
		} else {
			while (*p >= '0' && *p <= '9')
				p++;
		}
		if (*p == '.') {
			p++;
			if (*p == '*') {
				vec_push(types, (void *)(intptr_t)T_LONG);
				p++;
			} else {
				while (*p >= '0' && *p <= '9')
					p++;
			}
		}
		while (*p && strchr("hlLqjzt", *p))
			p++;
		if (!*p)
			return -1;
		enum exp_type t;
		switch (*p) {
		case 's':
			t = T_STRING;
			break;
		case 'd':
		case 'i':
		case 'u':
		case 'x':
		case 'X':
		case 'o':
		case 'c':
		case 'p':
		case 'b':
		case 'm':
		case 'M':
			t = T_LONG;
			break;
		default:
			return -1;
		}
		vec_push(types, (void *)(intptr_t)t);
	}
	return 0;
}

void types_check_format(struct elab *c, struct expr *e, struct vec *types)
{
	struct expr *f = e->args.v[0];
	if (format_types(f->str, types) < 0)
		return;
	if (types->n != e->args.n - 1) {
		elab_error(c, e->tok, "Wrong number of args to formatted print operator");
		types->n = 0;
	}
}
