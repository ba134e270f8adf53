/* A -c command runs as `/bin/sh -c CMD` does. Running its words directly
 * (so that the traced program is the command itself, not a shell) is an
 * optimisation only where that is exactly what sh would do: a single
 * command of plain words, with no quoting, expansion, redirection,
 * operator, reserved word, assignment, comment or glob anywhere, whose
 * first word is no builtin of sh (exec, echo, cd, ...) and names a program
 * sh would find (on $PATH, or a path). Used by stap and staprun alike. */
#ifndef STP_SHELLCMD_H
#define STP_SHELLCMD_H

/* The words (NULL-terminated, malloc'd) to execvp in place of sh -c CMD,
 * or NULL when the shell must run it. */
char **_stp_cmd_words(const char *cmd);
void _stp_cmd_words_free(char **words);

#endif
