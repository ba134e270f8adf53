/* What the dynamic call graph's handlers need of the thread at an event
 * (issue 10), decided from what they call:
 *   - the events' registers (arg1..arg6, retval): the translate mechanism
 *     records them only for a script that uses them;
 *   - the thread stopped at the event: a handler that reads or writes the
 *     thread's registers or memory (backtraces, register(), user_*()
 *     reads, target variables). translate then stops the thread at each
 *     event of that kind (_STP_DCG_CAPTURE bits 4: calls, 8: returns),
 *     in the state a breakpoint there gives.
 * Pass 3 writes the result into the C (_STP_DCG_CAPTURE, _STP_DCG_STOP),
 * which the tapset's __dcg_set hands to the runtime. */
#include "elaborate.h"
#include "diag.h"
#include "probe_kinds.h"

#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Every function that reads or writes the thread's registers or memory
 * (shell patterns), found in a handler or in what it calls. */
static const char *const needs_stop[] = {
    /* backtraces: the thread's stack and registers */
    "ubacktrace", "sprint_ubacktrace", "print_ubacktrace*", "ucallers", "ustack", "print_ustack",
    "sprint_ustack", "__ustack_raw",
    /* registers */
    "register", "u_register", "__stp_register", "print_regs", "__stp_arg", "*int_arg", "*long_arg",
    "longlong_arg", "pointer_arg", "[su]32_arg", "[su]64_arg", "returnval", "returnstr",
    /* memory */
    "user_*", "__user_*",
    /* target variables, @cast, @var (lowered to these) */
    "__tvar_*"};

static const char *stop_entry(const char *name)
{
	for (size_t i = 0; name && i < sizeof needs_stop / sizeof *needs_stop; i++)
		if (!fnmatch(needs_stop[i], name, 0))
			return name;
	return NULL;
}

struct needs_walk {
	struct vec seen;  /* struct functiondecl *: walked already */
	const char *stop; /* the first thing found that needs the thread */
	const char *via;  /* the handler's call that led there (NULL: direct) */
	const char *top;  /* the handler's call being walked */
	int capture;	  /* _STP_DCG_CAPTURE bits: 1 args, 2 retval */
};

static void walk_function(struct needs_walk *w, struct functiondecl *fd);

static int needs_expr(struct expr *e, void *arg)
{
	struct needs_walk *w = arg;
	const char *why = NULL;

	switch (e->kind) {
	case E_TARGET:
		why = e->str ? e->str : "a target expression";
		break;
	case E_CAST:
		why = "@cast";
		break;
	case E_ATVAR:
		why = "@var";
		break;
	case E_ENTRY:
		why = "@entry";
		break;
	case E_CALL:
		if (!e->str)
			break;
		if (!strcmp(e->str, "__dcg_arg"))
			w->capture |= 1;
		else if (!strcmp(e->str, "__dcg_retval"))
			w->capture |= 2;
		why = stop_entry(e->str);
		if (!why) {
			int outer = !w->top;
			if (outer)
				w->top = e->str;
			for (int i = 0; i < e->referents.n; i++)
				walk_function(w, e->referents.v[i]);
			if (!e->referents.n && e->func)
				walk_function(w, e->func);
			if (outer)
				w->top = NULL;
		}
		break;
	default:
		break;
	}
	if (why && !w->stop) {
		w->stop = why;
		w->via = w->top;
	}
	return 0;
}

static void walk_function(struct needs_walk *w, struct functiondecl *fd)
{
	if (!fd || !fd->body)
		return;
	for (int i = 0; i < w->seen.n; i++)
		if (w->seen.v[i] == fd)
			return;
	vec_push(&w->seen, fd);
	walk_stmt(fd->body, NULL, needs_expr, w);
}

static int is_dcg_probe(const struct derived_probe *dp)
{
	return dp->kind == PK_DCG_CALL || dp->kind == PK_DCG_RETURN;
}

void elab_dcg_needs(struct elab *c)
{
	struct session *s = c->s;
	s->dcg_capture = 0;
	s->dcg_stop = NULL;
	for (int i = 0; i < s->probes.n; i++) {
		struct derived_probe *dp = s->probes.v[i];
		if (!is_dcg_probe(dp) || !dp->probe || !dp->probe->body)
			continue;
		struct needs_walk w = {0};
		walk_stmt(dp->probe->body, NULL, needs_expr, &w);
		free(w.seen.v);
		s->dcg_capture |= w.capture;
		if (!w.stop)
			continue;
		const struct token *tok = dp->probe->tok;
		char *pn = dp_full_pn(dp);
		char *why = w.via ? xasprintf("%s via %s", w.stop, w.via) : xstrdup(w.stop);
		char *loc = xstrdup(tok ? diag_loc_string(&tok->loc) : "?");
		char *what = xasprintf("%s at probe %s (%s)", why, pn ? pn : "?", loc);
		if (s->verbose >= 1)
			fprintf(stderr,
				"dynamic call graph: handlers at probe %s (%s) need the thread "
				"stopped (%s): under translate each such event stops it\n",
				pn ? pn : "?", loc, why);
		free(loc);
		s->dcg_capture |= dp->kind == PK_DCG_CALL ? 4 : 8;
		if (!s->dcg_stop)
			s->dcg_stop = what;
		else
			free(what);
		free(why);
		free(pn);
	}
}
