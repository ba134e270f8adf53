/* The abstract syntax tree: the contract between the parser (pass 1), the
 * elaborator (pass 2) and the C emitter (pass 3). Every node points at the
 * token it came from, for messages in SystemTap's shapes. Nodes are never
 * freed: the translator is a short-lived process. */
#ifndef STAP_AST_H
#define STAP_AST_H

#include <stdint.h>

#include "util.h"

/* ---- source files and tokens ---- */

struct source_file {
	const char *name; /* as printed in messages: "<input>", "t.stp", path */
	const char *text; /* whole contents, NUL-terminated */
	int is_tapset;	  /* from the tapset library (embedded C allowed) */
	int is_guru;	  /* user file under -g */
};

struct srcloc {
	const struct source_file *file;
	int line, col; /* 1-based */
};

enum token_type {
	TOK_IDENT,    /* identifier; also $name, @name, $$name (content keeps sigil) */
	TOK_KEYWORD,  /* probe global function if else for foreach ... */
	TOK_NUMBER,   /* content is the literal text; parser converts */
	TOK_STRING,   /* content is the unescaped value */
	TOK_OPERATOR, /* content is the operator text */
	TOK_EMBEDDED, /* %{ ... %}: content is the C text between */
	TOK_EOF,
	TOK_JUNK, /* pass 1 internal: see token.junk */
};

struct token {
	enum token_type type;
	const char *content;
	struct srcloc loc;
	/* Where a macro expansion or @define produced this token. */
	const struct token *chain;
	/* TOK_STRING: the literal as SystemTap's lexer keeps it (escapes other
	 * than \" left as written); -p1 prints this. NULL if synthesized. */
	const char *raw;
	/* TOK_JUNK: JUNK_ERROR (content: the lexer's message), JUNK_ARG (a
	 * missing $N: content is the message, reported only if the token
	 * survives the preprocessor), JUNK_CHAR (a stray byte, content
	 * "\\xNN"). */
	enum { JUNK_ERROR = 1, JUNK_ARG, JUNK_CHAR } junk;
};

/* "identifier 'x'", "operator '+'", "number '5'", "string \"s\"",
 * "keyword 'probe'", "embedded-code", "end of file" as SystemTap prints. */
const char *token_describe(const struct token *t);

/* ---- types ---- */

enum exp_type { T_UNKNOWN, T_LONG, T_STRING, T_STATS };
const char *exp_type_name(enum exp_type t); /* unknown long string stats */

/* ---- expressions ---- */

enum expr_kind {
	E_NUMBER,   /* num */
	E_STRING,   /* str */
	E_SYMBOL,   /* name; resolved to .var by pass 2 */
	E_TARGET,   /* $x / $$vars / $x->y[i] / $x$ : target_* fields.
		       With str NULL: EXPR->y (left = EXPR, comps), SystemTap's
		       "autocast" of a typed value; pass 1 only parses it */
	E_ENTRY,    /* @entry(operand) */
	E_CAST,	    /* @cast(operand, type_name [, module]) components */
	E_ATVAR,    /* @var("name[@file]" [, module]) components */
	E_DEFINED,  /* @defined(operand) */
	E_EMBEDDED, /* %{ code %} in expression context */
	E_BINARY,   /* op: + - * / % << >> >>> & | ^ */
	E_LOGICAL,  /* op: && || */
	E_COMPARE,  /* op: < > <= >= == != */
	E_CONCAT,   /* op: . */
	E_UNARY,    /* op: - + ! ~ */
	E_PRE_INC,  /* op: ++ -- ; operand is an lvalue */
	E_POST_INC, /* op: ++ -- */
	E_TERNARY,  /* cond ? left : right */
	E_ASSIGN,   /* op: = += -= *= /= %= <<= >>= &= ^= |= .= <<< */
	E_IN,	    /* [indexes] in base  (base: symbol) */
	E_REGEX,    /* left =~ / !~ right(string literal) : op */
	E_CALL,	    /* name(args) ; resolved to .func */
	E_PRINT,    /* print family: name, args, fmt (printf/sprintf) */
	E_STAT,	    /* @count @sum @min @max @avg @variance(operand) : op */
	E_HIST,	    /* @hist_linear(operand, a, b, c) / @hist_log(operand) */
	E_INDEX,    /* base[indexes]: base is a symbol or an E_HIST */
};

/* One component of a target-variable chain: ->name, [index], or [expr]. */
enum tcomp_kind { TC_MEMBER, TC_INDEX_NUM, TC_INDEX_EXPR };
struct tcomp {
	enum tcomp_kind kind;
	const struct token *tok;
	const char *member; /* TC_MEMBER */
	int64_t num;	    /* TC_INDEX_NUM */
	struct expr *index; /* TC_INDEX_EXPR */
};

struct vardecl;
struct functiondecl;

struct expr {
	enum expr_kind kind;
	const struct token *tok;	  /* the operator / first token, for messages */
	enum exp_type type;		  /* set by pass 2 */
	const char *op;			  /* operator text where relevant */
	int64_t num;			  /* E_NUMBER */
	int num_hex;			  /* E_NUMBER: -p2 prints it in hex (an address) */
	const char *str;		  /* E_STRING value; E_SYMBOL/E_CALL/E_PRINT name;
					     E_TARGET base name incl. '$'; E_EMBEDDED code;
					     E_REGEX the regex (right side literal) */
	struct expr *left, *right, *cond; /* operands; E_UNARY/E_STAT: left */
	struct vec args;		  /* E_CALL/E_PRINT args, E_IN/E_INDEX indexes,
					     E_HIST params after the operand, E_CAST/E_ATVAR
					     string params, E_STAT: @variance's optional
					     shift. In E_IN/E_INDEX (and S_FOREACH's
					     array_slice) a NULL entry is '*' (a slice). */
	struct expr *base;		  /* E_IN/E_INDEX: the array (E_SYMBOL or E_HIST) */
	struct vec comps;		  /* E_TARGET/E_CAST/E_ATVAR: struct tcomp * */
	int addressof;			  /* &$x, &@cast(...), &@var(...) */
	int pretty;			  /* 1 for $x$, 2 for $x$$ */
	int hist_linear;		  /* E_HIST: 1 linear, 0 log */

	/* E_PRINT details */
	int print_newline;   /* println, sprintln, printdln */
	int print_delim;     /* printd, printdln: first arg is the delimiter */
	int print_to_string; /* sprint, sprintf, sprintln, sprintd */
	int print_has_fmt;   /* printf, sprintf: first arg is the format */
	int print_char;	     /* print_char: the first arg's character code */

	/* set by pass 2 */
	struct vardecl *var;	   /* E_SYMBOL and array bases */
	struct functiondecl *func; /* E_CALL: the first of referents */
	struct vec referents;	   /* E_CALL: struct functiondecl *, the
				      overloads in the order they run
				      (`next` passes to the following) */
	int lowered_id;		   /* free for pass 2/3 use */
	/* a target expression that failed to resolve: the message already
	 * reported (types.c repeats it as SystemTap does) */
	const char *saved_error;
	const struct token *saved_tok;
};

/* ---- statements ---- */

enum stmt_kind {
	S_BLOCK,    /* stmts */
	S_TRY,	    /* body, catch_var (may be NULL), catch_body */
	S_EMBEDDED, /* code */
	S_NULL,	    /* ; */
	S_EXPR,	    /* value */
	S_IF,	    /* cond, then, els (may be NULL) */
	S_FOR,	    /* init, cond, incr (each may be NULL), body; while too */
	S_FOREACH,  /* see fields */
	S_RETURN,   /* value (may be NULL) */
	S_DELETE,   /* value: symbol, or E_INDEX */
	S_NEXT,
	S_BREAK,
	S_CONTINUE,
};

struct stmt {
	enum stmt_kind kind;
	const struct token *tok;
	struct vec stmts;	  /* S_BLOCK */
	struct stmt *body;	  /* S_TRY, S_FOR, S_FOREACH */
	struct stmt *catch_body;  /* S_TRY */
	struct expr *catch_var;	  /* S_TRY: E_SYMBOL or NULL */
	const char *code;	  /* S_EMBEDDED */
	struct expr *value;	  /* S_EXPR, S_RETURN, S_DELETE */
	struct expr *cond;	  /* S_IF, S_FOR */
	struct stmt *then, *els;  /* S_IF */
	struct expr *init, *incr; /* S_FOR */
	int is_while;		  /* S_FOR written as while (for -p1 output) */

	/* S_FOREACH: foreach ([k1, k2] in base) or foreach (v = [k] in base) */
	struct vec indexes;	/* E_SYMBOL each */
	struct expr *value_var; /* E_SYMBOL or NULL */
	struct expr *array;	/* E_SYMBOL, or E_HIST over a stats value */
	struct vec array_slice; /* optional  base[k1, *] slicing; NULL = '*' */
	int sort_direction;	/* 0 none, 1 '+', -1 '-' */
	int sort_column;	/* 0 value, 1..N key number */
	const char *sort_aggr;	/* "@sum" etc. in 'in a @sum-' (value sort
				   by that statistic), else NULL */
	struct expr *limit;	/* or NULL */
};

/* ---- declarations ---- */

/* Most indexes an array may have (pass 2 reports more as an error). */
#define STAP_MAX_ARITY 32

struct vardecl {
	const char *name;
	const struct token *tok;
	enum exp_type type; /* value type; T_UNKNOWN until pass 2 */
	int arity;	    /* 0 scalar, >0 array key count; -1 unknown */
	enum exp_type index_types[STAP_MAX_ARITY];
	int maxsize;	   /* global name[N]: N, else 0 */
	int wrap;	   /* global name% */
	struct expr *init; /* literal initializer or NULL */
	int is_global, is_private;
	const struct source_file *file;
	/* pass 2 */
	int used, written, read;
	int hist_linear, hist_lo, hist_hi, hist_step, hist_log; /* stats: hist use */
	int id;
	/* pass 2: where the type / arity / index types were first inferred */
	const struct token *type_tok, *arity_tok, *index_tok[STAP_MAX_ARITY];
	const struct token *hist_tok;
};

struct functiondecl {
	const char *name;
	const struct token *tok;
	enum exp_type type; /* declared (:long/:string) or inferred */
	struct vec formals; /* struct vardecl * */
	struct vec locals;  /* struct vardecl * (pass 2) */
	struct stmt *body;  /* S_BLOCK, or S_EMBEDDED for %{ %} */
	int is_private;
	const struct source_file *file;
	int priority; /* function f() :N, else 0; overloads run
			 in order of priority (user script
			 functions default to 0, tapset ones to
			 1), then of overload */
	/* pass 2: SystemTap's overload number (__overload_N), counted per
	 * name over the tapset files, then the user script */
	int overload;
	/* "pure" and "unprivileged" comment markers are left in the code */
	int id, used;
	const struct token *type_tok; /* pass 2: where the type was inferred */
};

/* One probe point: component(arg).component(arg)...? ! if (cond) */
struct probe_component {
	const char *functor; /* may contain wildcards */
	const struct token *tok;
	struct expr *arg; /* E_NUMBER or E_STRING, or NULL */
};

struct probe_point {
	struct vec components; /* struct probe_component * */
	const struct token *tok;
	int optional;		/* ? */
	int sufficient;		/* ! */
	struct expr *condition; /* if (...) or NULL */
	int named_alias;	/* pass 2: it matched a probe alias */
};

struct probe {
	const struct token *tok; /* the 'probe' keyword */
	struct vec points;	 /* struct probe_point * */
	struct stmt *body;	 /* S_BLOCK */
	struct vec locals;	 /* struct vardecl * (pass 2) */
	const struct source_file *file;
	int is_private;
	/* pass 2: derived from which alias / which point */
	const struct probe_point *derived_from;
	int id;
	/* pass 2 scratch (elab_count_derived): listed in the elaborator's
	 * bodies; how many derived probes have this body, the first's pp */
	int in_bodies, nderived;
	const char *first_pp;
};

struct probe_alias {
	const struct token *tok;
	struct vec alias_names; /* struct probe_point *: the new names */
	struct vec points;	/* struct probe_point *: what it stands for */
	struct stmt *body;
	int epilogue;		    /* += (body runs after the user's) */
	struct stmt *epilogue_body; /* probe a = b { ... }, { EPILOGUE }: a
				       second block, run after the user's
				       body (SystemTap tapsets use it); or
				       NULL. Not printed by -p1. */
	const struct source_file *file;
	int is_private;
};

struct embedded_block { /* top-level %{ %} */
	const struct token *tok;
	const char *code;
	const struct source_file *file;
};

/* Everything one file declares, in source order. */
struct stapfile {
	const struct source_file *src;
	struct vec globals;   /* struct vardecl * */
	struct vec functions; /* struct functiondecl * */
	struct vec probes;    /* struct probe * */
	struct vec aliases;   /* struct probe_alias * */
	struct vec embeds;    /* struct embedded_block * */
	int privileged;	      /* tapset or -g: embedded C allowed */
};

/* ---- constructors (ast.c) ---- */
struct expr *expr_new(enum expr_kind k, const struct token *tok);
struct stmt *stmt_new(enum stmt_kind k, const struct token *tok);

/* ---- printers (ast_print.c): the -p1 / -p2 text, as SystemTap prints it */
void print_expr(struct strbuf *out, const struct expr *e);
void print_stmt(struct strbuf *out, const struct stmt *s);
/* -p2 -v: a block of one statement prints as that statement, an empty
 * one as ";" */
#define PRINT_FLAT_BLOCKS 1u
void print_stmt_flags(struct strbuf *out, const struct stmt *s, unsigned flags);
/* "{", each statement and ";", "}": a block never flattened itself */
void print_block(struct strbuf *out, const struct stmt *s, unsigned flags);
void print_probe_point(struct strbuf *out, const struct probe_point *pp);
void print_stapfile(struct strbuf *out, const struct stapfile *f); /* -p1 */

#endif
