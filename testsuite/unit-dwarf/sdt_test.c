/* Tests of translator/sdt.c: every marker as `readelf -n` shows it, and
 * the argument parser on real and synthetic operands.
 * Usage: sdt_test OBJDIR */
#include "dwunit.h"

#include "dwtrace.h"
#include "sdt.h"

#include <unistd.h>

struct rnote {
	char provider[128], name[128], args[512];
	uint64_t pc, base, sem;
};

/* The markers of BIN as readelf prints them. */
static int readelf_notes(const char *bin, struct rnote **out)
{
	char *txt = dw_cmd("readelf -n '%s'", bin), *save = NULL;
	struct rnote *v = NULL;
	int n = 0;

	for (char *l = strtok_r(txt, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		while (*l == ' ')
			l++;
		if (!strncmp(l, "Provider: ", 10)) {
			v = realloc(v, (size_t)(n + 1) * sizeof *v);
			memset(&v[n], 0, sizeof v[n]);
			snprintf(v[n].provider, sizeof v[n].provider, "%s", l + 10);
			n++;
		} else if (n && !strncmp(l, "Name: ", 6)) {
			snprintf(v[n - 1].name, sizeof v[n - 1].name, "%s", l + 6);
		} else if (n && !strncmp(l, "Location: ", 10)) {
			sscanf(l, "Location: %" SCNx64 ", Base: %" SCNx64 ", Semaphore: %" SCNx64,
			       &v[n - 1].pc, &v[n - 1].base, &v[n - 1].sem);
		} else if (n && !strncmp(l, "Arguments:", 10)) {
			const char *a = l + 10;

			while (*a == ' ')
				a++;
			snprintf(v[n - 1].args, sizeof v[n - 1].args, "%s", a);
		}
	}
	free(txt);
	*out = v;
	return n;
}

static void compare_with_readelf(const char *bin, const char *label)
{
	struct sdt_probes ps;
	struct rnote *rn;
	char err[256], name[256];
	int n = readelf_notes(bin, &rn), same = 1, parsed = 1;

	snprintf(name, sizeof name, "%s: sdt_read", label);
	dw_check(name, sdt_read(bin, &ps, err, sizeof err) == 0, "%s", err);
	snprintf(name, sizeof name, "%s: %d markers as readelf -n", label, n);
	dw_check(name, (int)ps.n == n && n > 0, "got %zu", ps.n);
	for (size_t i = 0; i < ps.n && (int)i < n; i++) {
		const struct sdt_probe *p = &ps.v[i];
		const struct rnote *r = &rn[i];

		if (strcmp(p->provider, r->provider) || strcmp(p->name, r->name) || p->pc != r->pc ||
		    p->semaphore != r->sem || strcmp(p->args_text, r->args)) {
			printf("  mismatch %s:%s pc %#" PRIx64 "/%#" PRIx64 " sem %#" PRIx64 "/%#" PRIx64
			       " args '%s'/'%s'\n",
			       p->provider, p->name, p->pc, r->pc, p->semaphore, r->sem, p->args_text,
			       r->args);
			same = 0;
		}
		if (p->nargs < 0) {
			printf("  unparsed %s:%s '%s'\n", p->provider, p->name, p->args_text);
			parsed = 0;
		}
	}
	snprintf(name, sizeof name, "%s: provider, name, pc, semaphore, arguments = readelf", label);
	dw_check(name, same, NULL);
	snprintf(name, sizeof name, "%s: every argument string parsed", label);
	dw_check(name, parsed, NULL);
	sdt_free(&ps);
	free(rn);
}

static const struct sdt_probe *find(const struct sdt_probes *ps, const char *name)
{
	for (size_t i = 0; i < ps->n; i++)
		if (!strcmp(ps->v[i].name, name))
			return &ps->v[i];
	return NULL;
}

static void test_target(const char *objdir)
{
	char bin[1024], name[128], err[256];
	struct sdt_probes ps;
	const struct sdt_probe *p;

	snprintf(bin, sizeof bin, "%s/t_O0", objdir);
	compare_with_readelf(bin, "t_O0");
	sdt_read(bin, &ps, err, sizeof err);
	p = find(&ps, "three");
	dw_check("t_O0 three: 3 args", p && p->nargs == 3, NULL);
	if (p && p->nargs == 3) {
		const struct sdt_arg *a = p->args;

		dw_check("t_O0 three $arg1 = -4@-4(%rbp)",
			 a[0].kind == SDT_ARG_MEM && a[0].reg == SDT_REG_RBP && a[0].offset == -4 &&
				 a[0].size == 4 && a[0].is_signed,
			 NULL);
		dw_check("t_O0 three $arg3 = 8@-24(%rbp) unsigned",
			 a[2].kind == SDT_ARG_MEM && a[2].offset == -24 && a[2].size == 8 && !a[2].is_signed,
			 NULL);
	}
	dw_check_u64("t_O0 three semaphore = nm target_three_semaphore", p ? p->semaphore : 0,
		     dw_cmd_hex("nm '%s' | awk '$3==\"target_three_semaphore\" {print $1}'", bin));
	p = find(&ps, "zero");
	dw_check("t_O0 zero: no args", p && p->nargs == 0, NULL);
	snprintf(name, sizeof name, "name matching");
	dw_check(name, sdt_name_matches("thr*", "three") && sdt_name_matches("a-b", "a__b") &&
			       !sdt_name_matches("four", "three"),
		 NULL);
	sdt_free(&ps);

	snprintf(bin, sizeof bin, "%s/t_O2", objdir);
	compare_with_readelf(bin, "t_O2");
	sdt_read(bin, &ps, err, sizeof err);
	p = find(&ps, "three");
	if (p && p->nargs == 3)
		dw_check("t_O2 three $arg1 = -4@%edi",
			 p->args[0].kind == SDT_ARG_REG && p->args[0].reg == SDT_REG_RDI &&
				 p->args[0].reg_bits == 32 && p->args[0].size == 4,
			 NULL);
	else
		dw_check("t_O2 three $arg1 = -4@%edi", 0, NULL);
	sdt_free(&ps);

	snprintf(bin, sizeof bin, "%s/libdwtest.so", objdir);
	compare_with_readelf(bin, "libdwtest.so");
	snprintf(bin, sizeof bin, "%s/uselib", objdir);
	dw_check("no markers: empty list", sdt_read(bin, &ps, err, sizeof err) == 0 && ps.n == 0, NULL);
	sdt_free(&ps);
	dw_check("not a file: error", sdt_read("/nonexistent/x", &ps, err, sizeof err) < 0, NULL);
}

static int fake_lookup(void *arg, const char *name, uint64_t *vaddr)
{
	(void)arg;
	if (strcmp(name, "counter") != 0)
		return -1;
	*vaddr = 0x4000;
	return 0;
}

static void test_parser(void)
{
	struct sdt_arg *a;
	int n;
	char err[256];

	dw_check("parse '$5 -2@$-1 1@%ah 4@%r9d 8@%r12'",
		 sdt_parse_args("$5 -2@$-1 1@%ah 4@%r9d 8@%r12", NULL, NULL, &a, &n, err, sizeof err) ==
				 0 &&
			 n == 5 && a[0].kind == SDT_ARG_CONST && a[0].offset == 5 && a[0].size == 8 &&
			 a[1].kind == SDT_ARG_CONST && a[1].offset == -1 && a[1].size == 2 &&
			 a[1].is_signed && a[2].kind == SDT_ARG_REG && a[2].reg == SDT_REG_RAX &&
			 a[2].reg_high && a[3].reg == SDT_REG_R9 && a[3].reg_bits == 32 &&
			 a[4].reg == SDT_REG_R12 && a[4].reg_bits == 64,
		 "%s", err);
	sdt_args_free(a, n);
	dw_check("parse '8@16(%rsp,%rax,8) 4@(%rdi)'",
		 sdt_parse_args("8@16(%rsp,%rax,8) 4@(%rdi)", NULL, NULL, &a, &n, err, sizeof err) == 0 &&
			 n == 2 && a[0].kind == SDT_ARG_MEM && a[0].reg == SDT_REG_RSP &&
			 a[0].index == SDT_REG_RAX && a[0].scale == 8 && a[0].offset == 16 &&
			 a[1].kind == SDT_ARG_MEM && a[1].reg == SDT_REG_RDI && a[1].offset == 0 &&
			 a[1].index == SDT_REG_NONE,
		 "%s", err);
	sdt_args_free(a, n);
	dw_check("parse '-4@counter+8(%rip)' with a symbol table",
		 sdt_parse_args("-4@counter+8(%rip)", fake_lookup, NULL, &a, &n, err, sizeof err) == 0 &&
			 n == 1 && a[0].kind == SDT_ARG_ABS && a[0].offset == 0x4008 &&
			 !strcmp(a[0].symbol, "counter"),
		 "%s", err);
	sdt_args_free(a, n);
	dw_check("parse '8@%xyz' fails", sdt_parse_args("8@%xyz", NULL, NULL, &a, &n, err, sizeof err) < 0 &&
						 strstr(err, "argument 1"),
		 NULL);
	dw_check("parse '3@%eax' (bad size) fails",
		 sdt_parse_args("3@%eax", NULL, NULL, &a, &n, err, sizeof err) < 0, NULL);
	dw_check("parse 'x@%eax' fails", sdt_parse_args("x@%eax", NULL, NULL, &a, &n, err, sizeof err) < 0,
		 NULL);
	dw_check("parse '8@-8(%rbp' fails", sdt_parse_args("8@-8(%rbp", NULL, NULL, &a, &n, err, sizeof err) < 0,
		 NULL);
	dw_check("parse '' = no args", sdt_parse_args("", NULL, NULL, &a, &n, err, sizeof err) == 0 && n == 0,
		 NULL);
	sdt_args_free(a, n);
	{
		/* garbage never crashes and never parses */
		static const char *const bad[] = {"@", "8@", "8@(", "8@()", "8@(%rax,", "8@(%rax,%rbx,3)",
						  "8@$", "8@%", "-0@%rax", "99999999999999999999@%rax",
						  "8@sym(%rip)", "8@12(%rip", "\x01\x02"};
		int all = 1;

		for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
			if (sdt_parse_args(bad[i], NULL, NULL, &a, &n, err, sizeof err) == 0) {
				printf("  parsed '%s'\n", bad[i]);
				sdt_args_free(a, n);
				all = 0;
			}
		dw_check("malformed operands are rejected", all, NULL);
	}
	dw_check("register names", !strcmp(sdt_reg_name(5, 32, 0), "edi") &&
					   !strcmp(sdt_reg_name(12, 64, 0), "r12") &&
					   !strcmp(sdt_reg_name(0, 8, 1), "ah"),
		 NULL);
}

static void test_python(void)
{
	const char *py = "/usr/bin/python3.11";
	struct sdt_probes ps;
	const struct sdt_probe *p;
	char err[256];

	if (access(py, R_OK) != 0) {
		printf("UNSUPPORTED: %s not installed\n", py);
		return;
	}
	compare_with_readelf(py, "python3.11");
	sdt_read(py, &ps, err, sizeof err);
	p = find(&ps, "function__entry");
	dw_check("python3.11 function__entry: 3 args and a semaphore",
		 p && p->nargs == 3 && p->semaphore && !strcmp(p->provider, "python"), NULL);
	dw_check("python3.11 function-entry spelling matches",
		 p && sdt_name_matches("function-entry", p->name), NULL);
	sdt_free(&ps);
}

/* Fetch one SDT argument from the stopped thread. */
static int64_t sdt_value(pid_t pid, uint64_t base, const struct sdt_arg *x)
{
	uint64_t r = 0;

	switch (x->kind) {
	case SDT_ARG_REG:
		r = dwt_reg(pid, x->reg) >> (x->reg_high ? 8 : 0);
		break;
	case SDT_ARG_MEM:
		dwt_read(pid,
			 dwt_reg(pid, x->reg) + (uint64_t)x->offset +
				 (x->index >= 0 ? dwt_reg(pid, x->index) * (uint64_t)x->scale : 0),
			 &r, (size_t)x->size);
		break;
	case SDT_ARG_CONST:
		r = (uint64_t)x->offset;
		break;
	case SDT_ARG_ABS:
		dwt_read(pid, base + (uint64_t)x->offset, &r, (size_t)x->size);
		break;
	}
	return dwt_extend(r, x->size, x->is_signed);
}

/* Run python3.11 -S -c "import json" stopping at marker NAME (with its
 * semaphore raised when SEM): count the hits until $arg1 (a string)
 * equals WANT1 (NULL: stop at the first hit). Returns the hits, -1 when
 * the program ended first; the marker's $arg2, $arg3 (as strings when
 * STR2) go to ARG2 / *ARG3. */
static int python_run(const struct sdt_probe *p, int sem, const char *want1, char *arg1,
		      char *arg2, int64_t *arg3)
{
	char *args[] = {"/usr/bin/python3.11", "-S", "-c", "import json", NULL};
	pid_t pid = dwt_start(args, NULL);
	int hits = 0, found = 0;

	if (pid <= 0)
		return -1;
	if (sem && dwt_add16(pid, p->semaphore, 1) < 0) {
		dwt_kill(pid);
		return -1;
	}
	while (hits < 5000 && dwt_run_to(pid, p->pc) == 0) {
		hits++;
		dwt_read_str(pid, (uint64_t)sdt_value(pid, 0, &p->args[0]), arg1, 256);
		if (p->nargs > 1)
			dwt_read_str(pid, (uint64_t)sdt_value(pid, 0, &p->args[1]), arg2, 256);
		if (p->nargs > 2)
			*arg3 = sdt_value(pid, 0, &p->args[2]);
		if (!want1 || !strcmp(arg1, want1)) {
			found = 1;
			break;
		}
		if (dwt_step(pid) < 0)
			break;
	}
	dwt_kill(pid);
	return found ? hits : -1;
}

/* Live markers in the Debian interpreter (ET_EXEC: vaddrs are absolute).
 * Its markers are guarded by their semaphores: without the semaphore
 * raised they never run. Note: in CPython 3.11 function__entry only runs
 * on some paths (generator frames entered from C; CPython gh-98894), so
 * the import marker is the reliable one. */
static void test_python_live(void)
{
	struct sdt_probes ps;
	const struct sdt_probe *imp, *fe;
	char err[256], a1[256] = "", a2[256] = "";
	int64_t a3 = -1;
	int n;

	if (access("/usr/bin/python3.11", X_OK) != 0 ||
	    sdt_read("/usr/bin/python3.11", &ps, err, sizeof err) < 0)
		return;
	imp = find(&ps, "import__find__load__start");
	fe = find(&ps, "function__entry");
	if (!imp || imp->nargs != 1 || !fe || fe->nargs != 3) {
		dw_check("python3.11 live: markers present", 0, NULL);
		sdt_free(&ps);
		return;
	}
	n = python_run(imp, 0, NULL, a1, a2, &a3);
	dw_check("python3.11 live: without its semaphore import__find__load__start never runs", n < 0,
		 "%d hits", n);
	n = python_run(imp, 1, "json", a1, a2, &a3);
	dw_check("python3.11 live: with its semaphore, import__find__load__start $arg1 = \"json\"", n > 0,
		 "last $arg1 %s", a1);
	n = python_run(fe, 1, NULL, a1, a2, &a3);
	dw_check("python3.11 live: function__entry $arg1 file, $arg2 function, $arg3 line",
		 n > 0 && a1[0] && a2[0] && a3 > 0, "%s %s %" PRId64, a1, a2, a3);
	sdt_free(&ps);
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: %s OBJDIR\n", argv[0]);
		return 2;
	}
	test_target(argv[1]);
	test_parser();
	test_python();
	test_python_live();
	return dw_failures ? 1 : 0;
}
