/* Which -c commands may skip the shell (shellcmd.h). Depends on nothing of
 * stap or staprun. */
#include "shellcmd.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Anything sh treats specially somewhere in a word: quoting, expansions,
 * redirections and operators, globs, comments, tilde, braces (bash's
 * brace expansion). The command then goes to the shell, which is exact. */
static const char special[] = "|&;<>()$`\\\"'*?[#~{}\n";

/* Reserved words (sh's and bash's) and builtins (dash's and bash's): as
 * the first word they are not a program on $PATH. */
static const char *const not_programs[] = {
    "!",       "{",	    "}",	"case",	    "do",      "done",	   "elif",    "else",
    "esac",    "fi",	    "for",	"if",	    "in",      "then",	   "until",   "while",
    "[[",      "]]",	    "function", "select",   "time",    "coproc",   ".",	      ":",
    "[",       "alias",	    "bg",	"bind",	    "break",   "builtin",  "caller",  "cd",
    "chdir",   "command",   "compgen",	"complete", "compopt", "continue", "declare", "dirs",
    "disown",  "echo",	    "enable",	"eval",	    "exec",    "exit",	   "export",  "false",
    "fc",      "fg",	    "getopts",	"hash",	    "help",    "history",  "jobs",    "kill",
    "let",     "local",	    "logout",	"mapfile",  "popd",    "printf",   "pushd",   "pwd",
    "read",    "readarray", "readonly", "return",   "set",     "shift",	   "shopt",   "source",
    "suspend", "test",	    "times",	"trap",	    "true",    "type",	   "typeset", "ulimit",
    "umask",   "unalias",   "unset",	"wait",	    NULL,
};

static int is_program_file(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
}

/* Does sh's search find NAME (in $PATH, an empty entry being ".")? */
static int found_on_path(const char *name)
{
	const char *path = getenv("PATH");
	size_t nlen = strlen(name);

	if (strchr(name, '/'))
		return is_program_file(name);
	if (!path)
		return 0; /* sh and execvp default differently: let sh search */
	for (;;) {
		size_t dlen = strcspn(path, ":");
		char *p = malloc(dlen + nlen + 3);
		int ok;

		if (!p)
			return 0;
		if (dlen)
			memcpy(p, path, dlen);
		else
			p[dlen++] = '.';
		p[dlen] = '/';
		memcpy(p + dlen + 1, name, nlen + 1);
		ok = is_program_file(p);
		free(p);
		if (ok)
			return 1;
		if (!path[strcspn(path, ":")])
			return 0;
		path += strcspn(path, ":") + 1;
	}
}

static int plain_program(const char *w)
{
	for (size_t i = 0; not_programs[i]; i++)
		if (!strcmp(w, not_programs[i]))
			return 0;
	return !strchr(w, '=') && found_on_path(w); /* NAME=VALUE: an assignment */
}

void _stp_cmd_words_free(char **words)
{
	for (size_t i = 0; words && words[i]; i++)
		free(words[i]);
	free(words);
}

char **_stp_cmd_words(const char *cmd)
{
	size_t n = 0, cap = 8;
	char **v;

	if (!cmd || strpbrk(cmd, special))
		return NULL;
	if (!(v = calloc(cap, sizeof *v)))
		return NULL;
	for (;;) {
		size_t len;

		cmd += strspn(cmd, " \t");
		if (!(len = strcspn(cmd, " \t")))
			break;
		if (n + 2 > cap) {
			char **w = realloc(v, (cap *= 2) * sizeof *v);
			if (!w)
				goto fail;
			v = w;
		}
		if (!(v[n] = strndup(cmd, len)))
			goto fail;
		v[++n] = NULL;
		cmd += len;
	}
	if (n && plain_program(v[0]))
		return v;
fail:
	_stp_cmd_words_free(v);
	return NULL;
}
