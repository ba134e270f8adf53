/* Diagnostics in SystemTap's shapes; see diag.h for who prints what. */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "diag.h"
#include "escape.h"

static int n_parse, n_semantic, n_warnings;
static int n_err_suppressed, n_warn_suppressed;
static struct vec seen_errors, seen_warnings; /* keys: char * */
static const struct source_file *last_file;   /* for ":L:C" elision */

/* Has KEY been seen? Records it. Verbose runs never suppress. */
static int seen_before(struct vec *seen, const char *key)
{
	const char *k;
	vec_foreach (const char *, k, seen)
		if (!strcmp(k, key))
			return msg_verbose == 0;
	vec_push(seen, xstrdup(key));
	return 0;
}

const char *diag_loc_string(const struct srcloc *loc)
{
	static char buf[4096];
	char *name = esc_visible(loc->file && loc->file->name ? loc->file->name : "");
	snprintf(buf, sizeof(buf), "%s:%d:%d", name, loc->line, loc->col);
	free(name);
	return buf;
}

/* The text of line LINE of FILE (without newline), or NULL. */
static const char *line_start(const struct source_file *f, int line, int *len)
{
	if (!f || !f->text || line < 1)
		return NULL;
	const char *p = f->text;
	for (int l = 1; l < line; l++) {
		p = strchr(p, '\n');
		if (!p)
			return NULL;
		p++;
	}
	*len = (int)strcspn(p, "\n");
	return p;
}

void diag_print_source(FILE *f, const char *prefix, const struct srcloc *loc)
{
	int len;
	const char *s = line_start(loc->file, loc->line, &len);
	if (!s)
		return;
	fprintf(f, "%s%.*s\n", prefix, len, s);
	for (size_t i = 0; i < strlen(prefix); i++)
		fputc(' ', f);
	for (int i = 0; i < loc->col - 1 && i < len; i++)
		fputc(s[i] == '\t' ? '\t' : ' ', f);
	fputs("^\n", f);
}

/* "\tin expansion of macro: ..." lines for tokens from macro bodies. */
static void print_chain(FILE *f, const struct token *tok, const char *prefix)
{
	for (const struct token *c = tok ? tok->chain : NULL; c; c = c->chain) {
		fprintf(f, "\tin expansion of macro: %s at %s\n", token_describe(c),
			diag_loc_string(&c->loc));
		diag_print_source(f, prefix, &c->loc);
	}
}

/* A semantic error or warning may quote names from probed binaries: a
 * newline or terminal control byte in one must not forge output. */
static void print_msg(FILE *f, const char *label, const char *msg)
{
	char *v = esc_visible(msg);
	fprintf(f, "%s%s", label, v);
	free(v);
}

static void parse_error(const struct token *tok, const char *label, int check_seen, const char *fmt,
			va_list ap)
{
	char *msg = xvasprintf(fmt, ap);
	n_parse++;
	if (check_seen && seen_before(&seen_errors, msg)) {
		n_err_suppressed++;
		free(msg);
		return;
	}
	/* pass 1 reads no binary, and some of its messages are two lines */
	fprintf(stderr, "parse error: %s\n", msg);
	free(msg);
	if (tok && tok->type == TOK_EOF) {
		char *name = esc_visible(tok->loc.file ? tok->loc.file->name : "");
		fprintf(stderr, "%s%s EOF\n", label, name);
		free(name);
	} else if (tok) {
		fprintf(stderr, "%s%s at %s\n", label, token_describe(tok),
			diag_loc_string(&tok->loc));
		diag_print_source(stderr, "     source: ", &tok->loc);
		print_chain(stderr, tok, "     source: ");
	}
	fputc('\n', stderr);
}

void diag_parse_error(const struct token *tok, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	parse_error(tok, "        saw: ", 1, fmt, ap);
	va_end(ap);
}

void diag_parse_error_at(const struct token *tok, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	parse_error(tok, "         at: ", 1, fmt, ap);
	va_end(ap);
}

void diag_parse_error_full(const struct token *tok, int saw, int check_seen, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	parse_error(tok, saw ? "        saw: " : "         at: ", check_seen, fmt, ap);
	va_end(ap);
}

/* "DESC at FILE:L:C", the file elided if it is the last one printed. */
static void print_token_at(FILE *f, const struct token *tok)
{
	const struct source_file *file = tok->loc.file;
	char *name = esc_visible(file && file != last_file ? file->name : "");
	fprintf(f, "%s at %s:%d:%d\n", token_describe(tok), name, tok->loc.line, tok->loc.col);
	free(name);
	last_file = file;
}

static void semantic(const char *site, const struct token *tok, const struct token *tok2,
		     const char *fmt, va_list ap)
{
	n_semantic++;
	if (seen_before(&seen_errors, site)) {
		n_err_suppressed++;
		return;
	}
	char *msg = xvasprintf(fmt, ap);
	print_msg(stderr, "semantic error: ", msg);
	free(msg);
	if (!tok) {
		fputs("\n\n", stderr);
		return;
	}
	fputs(": ", stderr);
	print_token_at(stderr, tok);
	diag_print_source(stderr, "        source: ", &tok->loc);
	print_chain(stderr, tok, "        source: ");
	if (tok2) {
		print_token_at(stderr, tok2);
		diag_print_source(stderr, "        source: ", &tok2->loc);
	}
	fputc('\n', stderr);
}

void diag_semantic_error(const struct token *tok, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	semantic(fmt, tok, NULL, fmt, ap);
	va_end(ap);
}

void diag_semantic_error_site(const char *site, const struct token *tok, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	semantic(site, tok, NULL, fmt, ap);
	va_end(ap);
}

void diag_semantic_error2(const struct token *tok, const struct token *tok2, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	semantic(fmt, tok, tok2, fmt, ap);
	va_end(ap);
}

static void warning(const char *site, const struct token *tok, const char *fmt, va_list ap)
{
	if (msg_suppress_warnings)
		return;
	n_warnings++;
	if (seen_before(&seen_warnings, site)) {
		n_warn_suppressed++;
		return;
	}
	char *msg = xvasprintf(fmt, ap);
	print_msg(stderr, "WARNING: ", msg);
	free(msg);
	if (!tok) {
		fputc('\n', stderr);
		return;
	}
	fputs(": ", stderr);
	print_token_at(stderr, tok);
	diag_print_source(stderr, " source: ", &tok->loc);
}

void diag_warning(const struct token *tok, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	warning(fmt, tok, fmt, ap);
	va_end(ap);
}

void diag_warning_site(const char *site, const struct token *tok, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	warning(site, tok, fmt, ap);
	va_end(ap);
}

void diag_reset(void)
{
	n_parse = n_semantic = n_warnings = 0;
	n_err_suppressed = n_warn_suppressed = 0;
	seen_errors.n = seen_warnings.n = 0;
	last_file = NULL;
}

int diag_parse_errors(void)
{
	return n_parse;
}

int diag_semantic_errors(void)
{
	return n_semantic;
}

int diag_warnings(void)
{
	return n_warnings;
}

void diag_print_suppressed(void)
{
	if (n_err_suppressed)
		fprintf(stderr,
			"Number of similar error messages suppressed: %d.\n"
			"Rerun with -v to see them.\n",
			n_err_suppressed);
	if (n_warn_suppressed)
		fprintf(stderr,
			"Number of similar warning messages suppressed: %d.\n"
			"Rerun with -v to see them.\n",
			n_warn_suppressed);
	/* printed once: after a pass fails or after the last one */
	n_err_suppressed = n_warn_suppressed = 0;
}
