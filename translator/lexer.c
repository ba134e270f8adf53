/* The lexer. Tokens are produced on demand; errors become TOK_JUNK tokens
 * so that they are reported at the point the parser reaches them. */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lexer.h"

struct lexer {
	const struct source_file *src;
	const char *p; /* next character */
	int line, col; /* of *p */
	const struct srcloc *fixed_loc;
	int at_eof;
};

static const char *const keywords[] = {
    "probe", "global", "function", "if",     "else",  "for",	 "foreach",
    "in",    "limit",  "return",   "delete", "while", "break",	 "continue",
    "next",  "string", "long",	   "try",    "catch", "private", NULL,
};

/* Longest first within each length class, so the first match wins. */
static const char *const operators[] = {
    "<<<", ">>>", "<<=", ">>=", "==", "!=", "<=", ">=", "+=", "-=", "*=",
    "/=",  "%=",  "&=",	 "^=",	"|=", ".=", "&&", "||", "++", "--", "->",
    "<<",  ">>",  "=~",	 "!~",	"%(", "%?", "%:", "%)", NULL,
};

int lexer_is_keyword(const char *name)
{
	for (int i = 0; keywords[i]; i++)
		if (!strcmp(keywords[i], name))
			return 1;
	return 0;
}

struct lexer *lexer_new(const struct source_file *src, const struct srcloc *fixed_loc)
{
	struct lexer *lx = xcalloc(1, sizeof(*lx));
	lx->src = src;
	lx->p = src->text ? src->text : "";
	lx->line = 1;
	lx->col = 1;
	lx->fixed_loc = fixed_loc;
	return lx;
}

static void advance(struct lexer *lx)
{
	if (!*lx->p)
		return;
	if (*lx->p == '\n') {
		lx->line++;
		lx->col = 1;
	} else {
		lx->col++;
	}
	lx->p++;
}

static void advance_n(struct lexer *lx, int n)
{
	while (n-- > 0)
		advance(lx);
}

static struct token *tok_new(struct lexer *lx, enum token_type type, int line, int col)
{
	struct token *t = xcalloc(1, sizeof(*t));
	t->type = type;
	if (lx->fixed_loc) {
		t->loc = *lx->fixed_loc;
	} else {
		t->loc.file = lx->src;
		t->loc.line = line;
		t->loc.col = col;
	}
	return t;
}

static struct token *junk(struct lexer *lx, int line, int col, const char *msg)
{
	struct token *t = tok_new(lx, TOK_JUNK, line, col);
	t->content = msg;
	t->junk = JUNK_ERROR;
	/* Nothing after a lexical error is trustworthy: stop here. */
	lx->at_eof = 1;
	return t;
}

/* Skip blanks and comments. An unterminated comment runs to EOF. */
static void skip_space(struct lexer *lx)
{
	for (;;) {
		const char *p = lx->p;
		if (isspace((unsigned char)*p)) {
			advance(lx);
		} else if (*p == '#' || (p[0] == '/' && p[1] == '/')) {
			while (*lx->p && *lx->p != '\n')
				advance(lx);
		} else if (p[0] == '/' && p[1] == '*') {
			advance_n(lx, 2);
			while (*lx->p && !(lx->p[0] == '*' && lx->p[1] == '/'))
				advance(lx);
			advance_n(lx, 2);
		} else {
			return;
		}
	}
}

static int is_ident_start(int c)
{
	return isalpha(c) || c == '_' || c == '$' || c == '@';
}

static int is_ident_char(int c)
{
	return isalnum(c) || c == '_' || c == '$' || c == '@';
}

static const char *kept_escapes = "abfnrtv\\x01234567";

/* Value of the escape at P (after the backslash); advances *LEN. */
static int unescape_one(const char *p, int *len)
{
	int v = 0, n = 0;
	*len = 1;
	switch (*p) {
	case 'a':
		return '\a';
	case 'b':
		return '\b';
	case 'f':
		return '\f';
	case 'n':
		return '\n';
	case 'r':
		return '\r';
	case 't':
		return '\t';
	case 'v':
		return '\v';
	case 'x':
		while (n < 2 && isxdigit((unsigned char)p[1 + n])) {
			int c = p[1 + n];
			v = v * 16 + (isdigit(c) ? c - '0' : tolower(c) - 'a' + 10);
			n++;
		}
		*len = 1 + n;
		return n ? v : 'x';
	default:
		if (*p >= '0' && *p <= '7') {
			while (n < 3 && p[n] >= '0' && p[n] <= '7')
				v = v * 8 + (p[n++] - '0');
			*len = n;
			return v & 0xff;
		}
		return *p;
	}
}

/* "..." : content is the value, raw keeps C escapes as written. */
static struct token *lex_string(struct lexer *lx, int line, int col)
{
	struct strbuf val = {0}, raw = {0};
	advance(lx);
	for (;;) {
		char c = *lx->p;
		if (!c || c == '\n')
			return junk(lx, line, col, "Could not find matching closing quote");
		if (c == '"') {
			advance(lx);
			break;
		}
		if (c == '\\' && lx->p[1] && lx->p[1] != '\n') {
			char e = lx->p[1];
			int len;
			int v = unescape_one(lx->p + 1, &len);
			if (strchr(kept_escapes, e)) {
				sb_putn(&raw, lx->p, len + 1);
			} else {
				sb_putc(&raw, e);
			}
			sb_putc(&val, (char)v);
			advance_n(lx, len + 1);
			continue;
		}
		sb_putc(&val, c);
		sb_putc(&raw, c);
		advance(lx);
	}
	struct token *t = tok_new(lx, TOK_STRING, line, col);
	t->content = sb_take(&val);
	t->raw = sb_take(&raw);
	return t;
}

/* %{ ... %} : content is the text between the markers. */
static struct token *lex_embedded(struct lexer *lx, int line, int col)
{
	const char *end = strstr(lx->p + 2, "%}");
	if (!end)
		return junk(lx, line, col,
			    "Could not find matching '%}' to close embedded function block");
	struct token *t = tok_new(lx, TOK_EMBEDDED, line, col);
	t->content = xstrndup(lx->p + 2, end - (lx->p + 2));
	advance_n(lx, (int)(end + 2 - lx->p));
	return t;
}

static struct token *lex_word(struct lexer *lx, int line, int col)
{
	const char *start = lx->p;
	/* $# and @# : the script argument count; $N and @N end at the
	 * digits. */
	if ((*start == '$' || *start == '@') && start[1] == '#') {
		advance_n(lx, 2);
	} else if ((*start == '$' || *start == '@') && isdigit((unsigned char)start[1])) {
		advance(lx);
		while (isdigit((unsigned char)*lx->p))
			advance(lx);
	} else {
		while (is_ident_char((unsigned char)*lx->p))
			advance(lx);
	}
	char *w = xstrndup(start, lx->p - start);
	enum token_type type = TOK_IDENT;
	if (lexer_is_keyword(w))
		type = TOK_KEYWORD;
	/* SystemTap lexes @name as an operator, except @N arguments. */
	else if (w[0] == '@' && !isdigit((unsigned char)w[1]) && w[1] != '#')
		type = TOK_OPERATOR;
	struct token *t = tok_new(lx, type, line, col);
	t->content = w;
	return t;
}

static struct token *lex_operator(struct lexer *lx, int line, int col)
{
	int len = 1;
	for (int i = 0; operators[i]; i++) {
		size_t n = strlen(operators[i]);
		if (!strncmp(lx->p, operators[i], n)) {
			len = (int)n;
			break;
		}
	}
	struct token *t = tok_new(lx, TOK_OPERATOR, line, col);
	t->content = xstrndup(lx->p, len);
	advance_n(lx, len);
	return t;
}

struct token *lexer_next(struct lexer *lx)
{
	if (!lx->at_eof)
		skip_space(lx);
	int line = lx->line, col = lx->col;
	char c = *lx->p;
	if (lx->at_eof || !c) {
		lx->at_eof = 1;
		struct token *t = tok_new(lx, TOK_EOF, line, col);
		t->content = "";
		return t;
	}
	if (c == '"')
		return lex_string(lx, line, col);
	if (c == '%' && lx->p[1] == '{')
		return lex_embedded(lx, line, col);
	if (isdigit((unsigned char)c)) {
		const char *start = lx->p;
		while (isalnum((unsigned char)*lx->p) || *lx->p == '_')
			advance(lx);
		struct token *t = tok_new(lx, TOK_NUMBER, line, col);
		t->content = xstrndup(start, lx->p - start);
		return t;
	}
	if (is_ident_start((unsigned char)c))
		return lex_word(lx, line, col);
	if ((unsigned char)c < 0x20 || (unsigned char)c >= 0x7f) {
		/* A stray control or non-ASCII byte: junk the parser rejects. */
		struct token *t = tok_new(lx, TOK_JUNK, line, col);
		t->content = xasprintf("\\x%02x", (unsigned char)c);
		t->junk = JUNK_CHAR;
		advance(lx);
		return t;
	}
	return lex_operator(lx, line, col);
}

int lexer_number_value(const char *text, int64_t *out)
{
	int base = 10;
	const char *digits = text;
	if (text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) {
		base = 16;
		digits = text + 2;
	} else if (text[0] == '0' && text[1]) {
		base = 8;
		digits = text + 1;
	}
	if (!*digits)
		return -1;
	uint64_t v = 0;
	for (const char *p = digits; *p; p++) {
		int d;
		if (isdigit((unsigned char)*p))
			d = *p - '0';
		else if (isalpha((unsigned char)*p))
			d = tolower((unsigned char)*p) - 'a' + 10;
		else
			return -1;
		if (d >= base)
			return -1;
		if (v > (UINT64_MAX - (uint64_t)d) / (uint64_t)base)
			return -1;
		v = v * base + d;
	}
	*out = (int64_t)v;
	return 0;
}

void lexer_quote_raw(struct strbuf *out, const char *raw, int escape_backslash)
{
	sb_putc(out, '"');
	for (const char *p = raw; *p; p++) {
		if (*p == '"')
			sb_puts(out, "\\\"");
		else if (*p == '\\' && escape_backslash)
			sb_puts(out, "\\\\");
		else
			sb_putc(out, *p);
	}
	sb_putc(out, '"');
}
