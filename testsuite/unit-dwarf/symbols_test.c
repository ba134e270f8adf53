/* Tests of runtime/sym/symbols.c on a live process: sym_target stops itself
 * with SIGSTOP after printing the addresses to check; names, modules and
 * sizes are compared with nm, module offsets with /proc/PID/maps, and the
 * unwound stack with the call chain the program makes.
 * Usage: symbols_test SRCDIR OBJDIR */
#include "dwunit.h"

#include "dwtrace.h"
#include "sym/symbols.h"

static const char *objdir, *srcdir;

struct printed {
	char name[64];
	uint64_t addr;
};

static uint64_t printed_addr(const struct printed *p, int n, const char *name)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(p[i].name, name))
			return p[i].addr;
	return 0;
}

/* Read "NAME 0xADDR" lines up to the lib_entry one (the last before the
 * first stop; unbuffered so later lines stay in the pipe). */
static int read_printed(int fd, struct printed *p, int max)
{
	char line[256];
	int n = 0;

	while (n < max) {
		size_t o = 0;
		char ch;

		while (o + 1 < sizeof line && read(fd, &ch, 1) == 1 && ch != '\n')
			line[o++] = ch;
		line[o] = '\0';
		if (!o)
			break;
		if (sscanf(line, "%63s %" SCNx64, p[n].name, &p[n].addr) == 2 &&
		    !strcmp(p[n++].name, "lib_entry"))
			break;
	}
	return n;
}

static int read_printed_one(int fd, struct printed *p)
{
	char line[256];
	size_t o = 0;
	char ch;

	while (o + 1 < sizeof line && read(fd, &ch, 1) == 1 && ch != '\n')
		line[o++] = ch;
	line[o] = '\0';
	return sscanf(line, "%63s %" SCNx64, p->name, &p->addr) == 2;
}

static uint64_t nm_value(const char *bin, const char *sym, int field)
{
	return dw_cmd_hex("nm -S '%s' | awk '$4==\"%s\" {print $%d; exit}'", bin, sym, field);
}

int main(int argc, char **argv)
{
	char target[PATH_MAX], lib[PATH_MAX], buf[512], want[512];
	char lib2[PATH_MAX];
	char *args[4];
	struct printed pr[16];
	int fd, n, status;
	pid_t pid;
	struct _stp_symtab *st;
	uint64_t level1, level2, lib_entry, heap, main_rt, bias, lib_base;

	if (argc != 3) {
		fprintf(stderr, "usage: %s SRCDIR OBJDIR\n", argv[0]);
		return 2;
	}
	srcdir = argv[1];
	objdir = argv[2];
	snprintf(target, sizeof target, "%s/sym_target", objdir);
	snprintf(lib, sizeof lib, "%s/libdwtest.so", objdir);
	snprintf(lib2, sizeof lib2, "%s/libdwtest2.so", objdir);
	args[0] = target;
	args[1] = lib;
	args[2] = lib2;
	args[3] = NULL;
	pid = dwt_start(args, &fd);
	dw_check("start sym_target under ptrace", pid > 0, NULL);
	if (pid <= 0)
		return 1;
	/* Run to its SIGSTOP (a signal-delivery stop: the thread stays stopped). */
	do {
		ptrace(PTRACE_CONT, pid, NULL, NULL);
		waitpid(pid, &status, 0);
	} while (WIFSTOPPED(status) && WSTOPSIG(status) != SIGSTOP);
	dw_check("sym_target stopped itself", WIFSTOPPED(status), NULL);
	n = read_printed(fd, pr, 16);
	level1 = printed_addr(pr, n, "level1");
	level2 = printed_addr(pr, n, "level2");
	lib_entry = printed_addr(pr, n, "lib_entry");
	heap = printed_addr(pr, n, "heap");
	main_rt = printed_addr(pr, n, "main");
	dw_check("sym_target printed its addresses", level1 && level2 && lib_entry && heap && main_rt,
		 "n=%d", n);
	bias = main_rt - nm_value(target, "main", 1);

	st = _stp_sym_open(pid);
	dw_check("_stp_sym_open", st != NULL, NULL);
	if (!st) {
		dwt_kill(pid);
		return 1;
	}

	_stp_sym_usymname(st, level1, buf, sizeof buf);
	dw_check_str("usymname(level1)", buf, "level1");
	/* usymdata names the module by its path as mapped, as SystemTap does */
	char *real = realpath(target, NULL);
	snprintf(want, sizeof want, "level1+0x0/%#" PRIx64 " [%.400s]", nm_value(target, "level1", 2),
		 real ? real : target);
	_stp_sym_usymdata(st, level1, buf, sizeof buf);
	dw_check_str("usymdata(level1) = nm -S size", buf, want);
	snprintf(want, sizeof want, "level1+0x3/%#" PRIx64 " [%.400s]", nm_value(target, "level1", 2),
		 real ? real : target);
	free(real);
	_stp_sym_usymdata(st, level1 + 3, buf, sizeof buf);
	dw_check_str("usymdata(level1+3)", buf, want);
	_stp_sym_umodname(st, level1, buf, sizeof buf);
	dw_check_str("umodname(level1)", buf, "sym_target");
	_stp_sym_cgname(st, level1, buf, sizeof buf);
	dw_check_str("call-graph name in the main executable", buf, "level1");
	_stp_sym_cgname(st, level1 + 3, buf, sizeof buf);
	dw_check_str("call-graph name with an offset", buf, "level1+0x3");
	_stp_sym_usymname(st, level2, buf, sizeof buf);
	dw_check_str("usymname demangles C++", buf, "demo::level2(int)");

	_stp_sym_cgname(st, lib_entry, buf, sizeof buf);
	dw_check_str("call-graph name in a library", buf, "lib_entry [libdwtest.so]");
	_stp_sym_umodname(st, lib_entry, buf, sizeof buf);
	dw_check_str("umodname(lib_entry)", buf, "libdwtest.so");
	lib_base = dwt_base(pid, lib);
	_stp_sym_fileline(st, lib_entry, buf, sizeof buf);
	{
		char *a2l = dw_cmd("addr2line -e '%s' 0x%" PRIx64, lib, lib_entry - lib_base);

		a2l[strcspn(a2l, "\n")] = '\0';
		dw_check_str("usymfile:usymline(lib_entry) = addr2line", buf, a2l);
		free(a2l);
	}
	_stp_sym_cgname(st, lib_base + 1, buf, sizeof buf);
	dw_check_str("call-graph name without a symbol: libdwtest.so+0x1", buf, "libdwtest.so+0x1");

	snprintf(want, sizeof want, "0x%" PRIx64, heap);
	_stp_sym_usymname(st, heap, buf, sizeof buf);
	dw_check_str("usymname(heap) = hex", buf, want);
	_stp_sym_cgname(st, heap, buf, sizeof buf);
	dw_check_str("call-graph name in no module = hex", buf, want);
	_stp_sym_usymdata(st, heap, buf, sizeof buf);
	dw_check_str("usymdata(heap) = hex", buf, want);
	_stp_sym_umodname(st, heap, buf, sizeof buf);
	dw_check_str("umodname(heap)", buf, "<unknown>");

	{
		uint64_t cold = dw_cmd_hex("nm '%s' | awk '$3==\"hot_cold.cold\" {print $1}'", target);

		if (!cold) {
			printf("UNSUPPORTED: no hot_cold.cold in this build\n");
		} else {
			_stp_sym_usymname(st, cold + bias + 1, buf, sizeof buf);
			dw_check_str(".cold part named as its function", buf, "hot_cold");
		}
	}
	{
		uint64_t b1 = 1, b2 = 1;

		dw_check("module bias of the PIE = main - nm main",
			 _stp_sym_module_bias(st, target, &b1) == 0 && b1 == bias, "%#" PRIx64, b1);
		dw_check("module bias of libdwtest.so = its load base",
			 _stp_sym_module_bias(st, lib, &b2) == 0 && b2 == lib_base, "%#" PRIx64, b2);
		dw_check("module bias of an unmapped file: -1",
			 _stp_sym_module_bias(st, "/etc/passwd", &b2) < 0, NULL);
	}
	{
		const struct _stp_syminfo *a = _stp_sym_lookup(st, level1 + 5);
		const struct _stp_syminfo *b = _stp_sym_lookup(st, level1 + 5);

		dw_check("lookups are cached", a && a == b, NULL);
		_stp_sym_unmapped(st, lib_base, lib_base + 0x100000);
		b = _stp_sym_lookup(st, lib_entry);
		dw_check("after an unmap the range is looked up again",
			 b && b->name && !strcmp(b->name, "lib_entry"), NULL);
		b = _stp_sym_lookup(st, level1 + 5);
		dw_check("entries outside the unmapped range stay cached", a == b, NULL);
		/* 12288 entries more: the buckets double twice, every entry
		 * is found again */
		const struct _stp_syminfo **v = calloc(0x3000, sizeof *v);
		int kept = v != NULL, again = v != NULL;
		for (uint64_t i = 0; v && i < 0x3000; i++)
			kept &= (v[i] = _stp_sym_lookup(st, bias + i)) && v[i]->addr == bias + i;
		for (uint64_t i = 0; v && i < 0x3000; i++)
			again &= _stp_sym_lookup(st, bias + i) == v[i];
		free(v);
		dw_check("12288 more entries made", kept, NULL);
		dw_check("each found again after the buckets grew", again, NULL);
		dw_check("an entry made before they grew stays",
			 _stp_sym_lookup(st, level1 + 5) == a && a->name && !strcmp(a->name, "level1"),
			 NULL);
	}
	{
		uint64_t pcs[64];
		int np = _stp_sym_unwind(st, pid, NULL, pcs, 64);
		const char *chain[] = {"stop_here", "demo::level2(int)", "level1", "main"};
		size_t k = 0;
		char got[1024] = "";

		dw_check("unwind the stopped thread", np >= 5, "np=%d", np);
		for (int i = 0; i < np && k < 4; i++) {
			_stp_sym_usymname(st, i ? pcs[i] - 1 : pcs[i], buf, sizeof buf);
			strncat(got, buf, sizeof got - strlen(got) - 2);
			strncat(got, " ", sizeof got - strlen(got) - 1);
			if (!strcmp(buf, chain[k]))
				k++;
		}
		dw_check("backtrace: stop_here <- demo::level2 <- level1 <- main", k == 4, "%s", got);
		dw_check("unwinding twice gives the same frames", _stp_sym_unwind(st, pid, NULL, pcs, 64) == np,
			 NULL);
	}
	{
		/* dlclose + dlopen of another library: after the engine reports
		 * the unmap, the new library's names are found. */
		uint64_t old_base = lib_base, lib2_entry = 0;
		struct printed more[1];

		do {
			ptrace(PTRACE_CONT, pid, NULL, NULL);
			waitpid(pid, &status, 0);
		} while (WIFSTOPPED(status) && WSTOPSIG(status) != SIGSTOP);
		if (read_printed_one(fd, more) && !strcmp(more[0].name, "lib2_entry"))
			lib2_entry = more[0].addr;
		dw_check("second stop after dlclose/dlopen", WIFSTOPPED(status) && lib2_entry, NULL);
		_stp_sym_unmapped(st, old_base, old_base + 0x100000);
		_stp_sym_cgname(st, lib2_entry, buf, sizeof buf);
		dw_check_str("after unmap + dlopen: the new library's name", buf, "lib2_entry [libdwtest2.so]");
		_stp_sym_cgname(st, level1, buf, sizeof buf);
		dw_check_str("after unmap + dlopen: the executable still named", buf, "level1");
	}
	_stp_sym_close(st);
	dwt_kill(pid);
	close(fd);
	return dw_failures ? 1 : 0;
}
