/* Pass 4: compile the generated C into a shared object with the system
 * compiler. The object leaves the runtime's _stp_* symbols undefined;
 * staprun resolves them when it dlopens the object. */
#include "emit.h"
#include "run/sigstate.h"
#include "driver.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* Run ARGV, waiting for it, its stderr into ERRFILE (NULL: ours); returns
 * its exit status or -1. */
int pass4_run(char *const argv[], const char *errfile)
{
	pid_t pid = fork();
	if (pid < 0) {
		fprintf(stderr, "ERROR: fork: %s\n", strerror(errno));
		return -1;
	}
	if (pid == 0) {
		_stp_signals_restore_caller();
		int fd =
		    errfile ? open(errfile, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600) : -1;
		if (fd >= 0)
			dup2(fd, STDERR_FILENO);
		execvp(argv[0], argv);
		fprintf(stderr, "ERROR: cannot run %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	int st, rc;
	driver_child_pid = pid; /* a signal to stap ends it too (main.c) */
	while ((rc = waitpid(pid, &st, 0)) < 0 && errno == EINTR)
		;
	driver_child_pid = 0;
	if (rc < 0)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* The compiler: $CC when it is one word, else gcc. */
const char *pass4_compiler(void)
{
	const char *cc = getenv("CC");
	if (cc && *cc && !strpbrk(cc, " \t"))
		return cc;
	return "gcc";
}

static int copy_file(const char *from, const char *to, mode_t mode)
{
	size_t len;
	char *data = read_file(from, &len);
	if (!data)
		return -1;
	int fd = open(to, O_WRONLY | O_CREAT | O_TRUNC, mode);
	if (fd < 0) {
		free(data);
		return -1;
	}
	size_t off = 0;
	while (off < len) {
		ssize_t w = write(fd, data + off, len - off);
		if (w <= 0) {
			close(fd);
			free(data);
			return -1;
		}
		off += (size_t)w;
	}
	free(data);
	return close(fd);
}

int pass4_compile(struct session *s)
{
	struct vec argv = {0};
	struct define *d;

	if (!s->object_file)
		s->object_file = xasprintf("%s/%s.so", s->tmpdir ? s->tmpdir : ".",
					   s->module_name ? s->module_name : "stap");
	vec_push(&argv, (void *)pass4_compiler());
	vec_push(&argv, "-shared");
	vec_push(&argv, "-fPIC");
	vec_push(&argv, "-O2");
	vec_push(&argv, "-std=gnu11");
	/* Our own code is warning-free; debugging the emitter wants proof. */
	if (msg_debug_mask & (1u << DBG_COMPILE)) {
		vec_push(&argv, "-Wall");
		vec_push(&argv, "-Wextra");
	}
	if (s->runtime_include_dir)
		vec_push(&argv, xasprintf("-I%s", s->runtime_include_dir));
	vec_foreach (struct define *, d, &s->defines)
		if (!session_define_is_string(d->name)) /* pass 3 wrote those in the C */
			vec_push(&argv,
				 d->value ? xasprintf("-D%s=%s", d->name, d->value)
					  : xasprintf("-D%s", d->name));
	const char *flag;
	vec_foreach (const char *, flag, &s->cflags) /* -B FLAG, as SystemTap's dyninst mode */
		vec_push(&argv, (void *)flag);
	vec_push(&argv, "-o");
	vec_push(&argv, (void *)s->object_file);
	vec_push(&argv, (void *)s->c_file);
	vec_push(&argv, NULL);

	if (s->verbose >= 3) {
		fputs("Running", stderr);
		for (int i = 0; i < argv.n - 1; i++)
			fprintf(stderr, " %s", (char *)vec_at(&argv, i));
		fputs("\n", stderr);
	}
	fflush(stdout);
	fflush(stderr);
	/* The compiler's messages are for us, not the user: shown when it
	 * fails, at -vvv and with --debug=compile (warnings are a bug in the
	 * emitter or in embedded C, never the user's script). */
	char *errfile = s->tmpdir ? xasprintf("%s/cc.err", s->tmpdir) : NULL;
	int rc = pass4_run((char *const *)argv.v, errfile);
	free(argv.v);
	if (errfile) {
		char *msgs = read_file(errfile, NULL);
		if (msgs && *msgs &&
		    (rc != 0 || s->verbose >= 3 || (msg_debug_mask & (1u << DBG_COMPILE))))
			fputs(msgs, stderr);
		free(msgs);
		unlink(errfile);
		free(errfile);
	}
	if (rc != 0)
		return 1;

	cache_store(s);
	/* -m NAME: the object is NAME.so, copied to the current directory */
	if (s->user_module) {
		char *here = xasprintf("%s.so", s->user_module);
		if (copy_file(s->object_file, here, 0755) != 0) {
			fprintf(stderr, "ERROR: cannot write %s: %s\n", here, strerror(errno));
			return 1;
		}
		s->object_file = here;
	}
	if (s->last_pass == 4) {
		/* Without a cache the temporary directory goes away: keep the
		 * object in the current directory, as SystemTap does. */
		if (!s->cache_hit && !s->keep_tmp && !s->user_module &&
		    (!s->cache_dir ||
		     strncmp(s->object_file, s->cache_dir, strlen(s->cache_dir)) != 0)) {
			char *here = xasprintf("%s.so", s->module_name ? s->module_name : "stap");
			if (copy_file(s->object_file, here, 0755) == 0)
				s->object_file = here;
		}
		printf("%s\n", s->object_file);
	}
	return 0;
}
