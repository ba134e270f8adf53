/* process[(...)].syscall and .syscall.return: every system call entry and
 * exit of the process, with $syscall, $arg1..$arg6 and $return read from
 * the registers. */
#include <stdio.h>
#include <string.h>

#include "probes_process.h"

enum pp_result proc_check_syscall(const struct probe_point *pp, int i, struct pp_error *err)
{
	struct probe_component *c1 = pp->components.v[i];
	struct probe_component *c2 = pp->components.n > i + 1 ? pp->components.v[i + 1] : NULL;
	if (c1->arg)
		return pp_fail(err, c1->tok, "invalid suffix for probe");
	if (c2 && (pp->components.n > i + 2 || c2->arg || strcmp(c2->functor, "return")))
		return pp_fail(err, c2->tok, "probe point mismatch%s", " (similar: return)");
	return PP_OK;
}

enum pp_result proc_resolve_syscall(const struct pp_at *at, struct derived_probe *dp,
				    struct pp_error *err)
{
	(void)err;
	if (at->pp->components.n > at->i + 1)
		return proc_event(at, dp, PK_PROCESS_SYSCALL_RETURN, "syscall.return");
	return proc_event(at, dp, PK_PROCESS_SYSCALL, "syscall");
}

/* $syscall, $arg1..$arg6 and (in .return) $return of .syscall probes. */
static int lower_syscall_expr(struct expr *e, void *arg)
{
	struct point_lower *L = arg;
	static const int argregs[] = {5, 4, 1, 10, 8, 9}; /* rdi rsi rdx r10 r8 r9 */
	const struct token *tok = e->tok;
	int n = 0, end = 0;
	int is_return = L->dp->kind == PK_PROCESS_SYSCALL_RETURN;

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
	if (!strcmp(e->str, "$return") && is_return) {
		lower_to_call(e, "__tvar_reg", 3, (int64_t[]){0, 8, 1});
		return 1;
	}
	if (sscanf(e->str, "$arg%d%n", &n, &end) == 1 && !e->str[end] && n >= 1 && n <= 6) {
		lower_to_call(e, "__tvar_reg", 3, (int64_t[]){argregs[n - 1], 8, 1});
		return 1;
	}
	if (lower_badvar_zero(L->c, e))
		return 1;
	elab_error(L->c, tok,
		   "unable to find local '%s' in a .syscall%s probe (alternatives: $syscall, "
		   "$arg1..$arg6%s)",
		   e->str + 1, is_return ? ".return" : "", is_return ? ", $return" : "");
	return 1;
}

void proc_lower_syscall(struct elab *c, struct derived_probe *dp)
{
	lower_point_vars(c, dp, lower_syscall_expr);
}
