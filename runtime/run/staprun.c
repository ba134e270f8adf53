/* staprun: run a compiled script (a shared object) on its own.
 *
 *   staprun [-v] [-o FILE [-S SIZE[,N]]] [-s MB] [-T SECONDS] [-c CMD | -x PID] OBJECT
 *   staprun OBJECT [-c CMD | -x PID] [-o FILE] ...   (the same)
 *
 * The object resolves the runtime's _stp_* symbols from this executable,
 * which exports the API of stap_runtime.h and nothing else (a dynamic list
 * made from the header), so one runtime serves every script. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "lang/stp_internal.h"
#include "lang/debug.h"
#include "sigstate.h"

#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

static void usage(FILE *f, const char *prog)
{
	fprintf(f,
		"Usage: %s [-v] [-o FILE [-S SIZE[,N]]] [-s MB] [-T SECONDS] [-c CMD | -x PID]\n"
		"       OBJECT\n"
		"  (the options may also follow OBJECT)\n"
		"  -v          be verbose (repeatable; -vvv and more: the runtime's debug\n"
		"              messages, as STAP_DEBUG=all:1, all:2, ...)\n"
		"  -o FILE     write the script's output to FILE (strftime(3) conversions\n"
		"              allowed)\n"
		"  -S SIZE[,N] switch to the next file FILE.1, FILE.2, ... when one holds\n"
		"              SIZE megabytes; keep the last N\n"
		"  -s MB       hold up to MB megabytes of a handler's output before writing\n"
		"  -T SECONDS  end the run after SECONDS (end probes run)\n"
		"  -c CMD      run CMD (with /bin/sh -c); end when it exits\n"
		"  -x PID      end when process PID exits\n"
		"  -h          show this help\n"
		"Environment: STAP_DEBUG=DOMAIN[:LEVEL],... turns on the runtime's debug\n"
		"  messages (domains ptrace, bkpt, dcg, sym, transport, all; see\n"
		"  doc/debug-domains.md); STAP_PTRACE_DEBUG=1 is ptrace,bkpt.\n",
		prog);
}

static int parse_long(const char *s, long min, long *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < min)
		return -1;
	*out = v;
	return 0;
}

/* -S SIZE[,N]: two decimal numbers. */
static int parse_switch(const char *s, int64_t *size, int64_t *n)
{
	char *end;

	errno = 0;
	*n = 0;
	*size = strtoll(s, &end, 10);
	if (errno || end == s || *size < 0 || *size > (INT64_MAX >> 20))
		return -1;
	if (*end == ',') {
		const char *p = end + 1;
		*n = strtoll(p, &end, 10);
		if (errno || end == p || *n < 0)
			return -1;
	}
	return *end ? -1 : 0;
}

/* Is the file a whole x86-64 shared object? Every table the loader reads
 * (program headers, section headers, the segments it maps) must lie within
 * it: mapping past the end of a truncated file dies of SIGBUS. NULL or why
 * not. */
static const char *elf_damage(int fd, off_t size)
{
	Elf64_Ehdr eh;
	Elf64_Phdr ph;

	if (pread(fd, &eh, sizeof eh, 0) != (ssize_t)sizeof eh ||
	    memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0)
		return "not an ELF file";
	if (eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_ident[EI_DATA] != ELFDATA2LSB ||
	    eh.e_machine != EM_X86_64 || eh.e_type != ET_DYN)
		return "not an x86-64 shared object";
	if (eh.e_phentsize != sizeof ph || !eh.e_phnum || eh.e_phoff > (uint64_t)size ||
	    (uint64_t)eh.e_phnum * sizeof ph > (uint64_t)size - eh.e_phoff)
		return "its program headers are cut off";
	if (eh.e_shnum &&
	    (eh.e_shentsize != sizeof(Elf64_Shdr) || eh.e_shoff > (uint64_t)size ||
	     (uint64_t)eh.e_shnum * sizeof(Elf64_Shdr) > (uint64_t)size - eh.e_shoff))
		return "its section headers are cut off";
	for (unsigned i = 0; i < eh.e_phnum; i++) {
		if (pread(fd, &ph, sizeof ph, (off_t)(eh.e_phoff + i * sizeof ph)) !=
		    (ssize_t)sizeof ph)
			return "its program headers are unreadable";
		if ((ph.p_type == PT_LOAD || ph.p_type == PT_DYNAMIC) &&
		    (ph.p_offset > (uint64_t)size || ph.p_filesz > (uint64_t)size - ph.p_offset))
			return "it is cut off (a segment ends past the end of the file)";
	}
	return NULL;
}

/* A crash while loading (relocations or constructors of a damaged object)
 * is reported as such; nothing is traced yet. */
static const char *loading;

static void load_crashed(int sig)
{
	static const char a[] = "ERROR: Couldn't load '", b[] = "': the object is damaged (";
	const char *name = sig == SIGBUS ? "SIGBUS" : sig == SIGSEGV ? "SIGSEGV" : "SIGILL";
	struct iovec v[] = {{(void *)a, sizeof a - 1},
			    {(void *)loading, strlen(loading)},
			    {(void *)b, sizeof b - 1},
			    {(void *)name, strlen(name)},
			    {(void *)" while loading)\n", 16}};

	if (writev(STDERR_FILENO, v, 5) < 0)
		_exit(1);
	_exit(1);
}

static void guard_load(int on)
{
	static const int sigs[] = {SIGBUS, SIGSEGV, SIGILL};
	for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
		signal(sigs[i], on ? load_crashed : SIG_DFL);
}

/* dlopen's error, said plainly when the object needs a runtime symbol that
 * staprun does not export (embedded C calling the runtime's internals). */
static void load_failed(const char *path, const char *err)
{
	static const char undef[] = "undefined symbol: ";
	const char *sym = err ? strstr(err, undef) : NULL;

	if (sym && !strncmp(sym + sizeof undef - 1, "_stp_", 5)) {
		sym += sizeof undef - 1;
		fprintf(stderr,
			"ERROR: Couldn't load '%s': it needs %.*s, which staprun does not export: "
			"compiled scripts (embedded C too) may use only the runtime API that "
			"stap_runtime.h declares\n",
			path, (int)strcspn(sym, ", \n"), sym);
		return;
	}
	fprintf(stderr, "ERROR: Couldn't load '%s': %s\n", path, err ? err : "unknown error");
}

static const struct _stp_module *load(const char *path, void **handle)
{
	struct stat sb;
	const struct _stp_module *m;
	const char *damage;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0 || fstat(fd, &sb) < 0) {
		fprintf(stderr, "ERROR: Couldn't open '%s': %s\n", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	damage = S_ISREG(sb.st_mode) ? elf_damage(fd, sb.st_size) : "not a regular file";
	close(fd);
	if (damage) {
		fprintf(stderr, "ERROR: Couldn't load '%s': %s\n", path, damage);
		return NULL;
	}
	/* dlopen searches the library path for names without a slash. */
	char buf[PATH_MAX];
	if (!strchr(path, '/') && snprintf(buf, sizeof buf, "./%s", path) < (int)sizeof buf)
		path = buf;
	loading = path;
	guard_load(1);
	*handle = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
	guard_load(0);
	if (!*handle) {
		load_failed(path, dlerror());
		return NULL;
	}
	dlerror();
	m = dlsym(*handle, STP_MODULE_SYMBOL);
	if (!m) {
		fprintf(stderr, "ERROR: '%s' is not a compiled script (no %s symbol)\n", path,
			STP_MODULE_SYMBOL);
		return NULL;
	}
	if (m->abi_version != STP_ABI_VERSION) {
		fprintf(stderr,
			"ERROR: '%s' was compiled for runtime ABI version %d, this staprun runs "
			"version %d; recompile it with this stap\n",
			path, m->abi_version, STP_ABI_VERSION);
		return NULL;
	}
	return m;
}

int main(int argc, char **argv)
{
	struct _stp_run_options o = {0};
	const struct _stp_module *m;
	void *handle = NULL;
	long v;
	int64_t fsize = 0, fnum = 0, bufsize = 0;
	int c, rc;

	/* The -c command gets the signal state staprun was given. */
	_stp_signals_save();
	/* Options before or after OBJECT: getopt permutes (no "+"). */
	while ((c = getopt(argc, argv, "vo:S:s:T:c:x:h")) != -1) {
		switch (c) {
		case 'v':
			o.verbose++;
			break;
		case 'o':
			o.output_file = optarg;
			break;
		case 'S':
			if (parse_switch(optarg, &fsize, &fnum) < 0) {
				fprintf(stderr, "ERROR: Invalid file size option '%s'.\n", optarg);
				return 1;
			}
			break;
		case 's':
			if (parse_long(optarg, 1, &v) < 0 || v > 4095) {
				fprintf(stderr,
					"ERROR: Invalid buffer size '%s' (should be 1-4095).\n",
					optarg);
				return 1;
			}
			bufsize = v;
			break;
		case 'T':
			if (parse_long(optarg, 1, &v) < 0 || v > INT_MAX) {
				fprintf(stderr, "ERROR: Invalid timeout '%s'\n", optarg);
				return 1;
			}
			o.timeout_s = (int)v;
			break;
		case 'c':
			o.target_cmd = optarg;
			break;
		case 'x':
			if (parse_long(optarg, 1, &v) < 0) {
				fprintf(stderr, "ERROR: Invalid target process ID '%s'\n", optarg);
				return 1;
			}
			o.target_pid = v;
			break;
		case 'h':
			usage(stdout, argv[0]);
			if (fflush(stdout) != 0 || ferror(stdout)) {
				fprintf(stderr, "ERROR: couldn't write output: %s\n",
					strerror(errno));
				return 1;
			}
			return 0;
		default:
			usage(stderr, argv[0]);
			return 1;
		}
	}
	if (o.target_cmd && o.target_pid) {
		fprintf(stderr, "ERROR: You can't specify the '-c' and '-x' options together.\n");
		return 1;
	}
	if (optind != argc - 1) {
		usage(stderr, argv[0]);
		return 1;
	}
	if ((fsize || fnum) && !o.output_file) {
		fprintf(stderr, "ERROR: You have to specify output FILE with '-S' option.\n");
		return 1;
	}
	if (_stp_dbg_setup(o.verbose) < 0)
		return 1;
	_stp_transport_setup(fsize, fnum, bufsize);
	/* A closed output pipe is an error to report, not a silent death. */
	signal(SIGPIPE, SIG_IGN);
	m = load(argv[optind], &handle);
	if (!m) {
		if (handle)
			dlclose(handle);
		return 1;
	}
	if (o.verbose)
		fprintf(stderr, "staprun: running %s\n",
			m->script_name ? m->script_name : argv[optind]);
	rc = _stp_run(m, &o);
	fflush(stdout);
	dlclose(handle);
	if (_stp_transport_reader_gone()) {
		/* everything is cleaned up: now end as a writer to a closed
		 * pipe does */
		sigset_t pipe;
		sigemptyset(&pipe);
		sigaddset(&pipe, SIGPIPE);
		signal(SIGPIPE, SIG_DFL);
		sigprocmask(SIG_UNBLOCK, &pipe, NULL);
		raise(SIGPIPE);
	}
	return rc;
}
