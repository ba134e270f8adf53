/* Tests of translator/dwarf_vars.c. Static checks of scopes, types and
 * error messages, then live ones: the target is stopped (plain ptrace) at
 * each function's probe address and at an SDT marker, every access the
 * module describes is evaluated by a small interpreter here, and the
 * values are compared with what the program is known to pass
 * (target.c's main: walk(&a, 10), add(argc, 2), say(argv[1]),
 * marks(argc, 461, "hello")).
 * Usage: dwarf_vars_test OBJDIR */
#include "dwunit.h"

#include "dwarf_vars.h"
#include "dwtrace.h"
#include "sdt.h"

#include <dwarf.h>
#include <stddef.h>

/* The same layout as target.c's struct point (offsets checked below). */
struct point {
	int x, y;
	const char *label;
	struct point *next;
	unsigned char tag[4];
};

static const char *objdir;

static const char *obj(const char *name)
{
	static char buf[2][PATH_MAX];
	static int k;
	char *b = buf[k++ & 1];

	snprintf(b, PATH_MAX, "%s/%s", objdir, name);
	return b;
}

static uint64_t probe_of(struct dwq_mod *m, const char *fn)
{
	struct dwq_funcs fs;
	char err[DWQ_ERRLEN];
	uint64_t pc = 0;

	if (dwq_functions(m, fn, DWQ_CALL, DWQ_PROLOGUE_AUTO, 0, &fs, err, sizeof err) == 0 && fs.n == 1)
		pc = fs.v[0].probe;
	dwq_funcs_free(&fs);
	return pc;
}

static void test_static(void)
{
	char err[DWQ_ERRLEN];
	struct dwq_mod *m = dwq_open(obj("t_O0"), err, sizeof err);
	struct dwv_vars vs;
	struct dwv_var v;
	struct dwv_access acc;
	uint64_t pc;

	if (!m) {
		dw_check("open t_O0", 0, "%s", err);
		return;
	}
	pc = probe_of(m, "walk");
	dw_check("walk: scope vars", dwv_scope_vars(m, pc, DWV_ALL, &vs, err, sizeof err) == 0 && vs.n == 4,
		 "n=%zu %s", vs.n, err);
	if (vs.n == 4) {
		dw_check("walk: $p:point_t* param, located in memory (fbreg via CFA)",
			 !strcmp(vs.v[0].name, "p") && !strcmp(vs.v[0].type_name, "point_t*") &&
				 vs.v[0].is_param && vs.v[0].located && vs.v[0].loc.kind == DWV_LOC_MEM,
			 NULL);
		dw_check("walk: $limit:long unsigned int", !strcmp(vs.v[1].type_name, "long unsigned int"), NULL);
		dw_check("walk: locals after params ($total $c)",
			 !strcmp(vs.v[2].name, "total") && !strcmp(vs.v[3].name, "c") && !vs.v[3].is_param,
			 NULL);
	}
	dwv_vars_free(&vs);
	dw_check("walk: $$parms has only params",
		 dwv_scope_vars(m, pc, DWV_PARMS, &vs, err, sizeof err) == 0 && vs.n == 2, NULL);
	dwv_vars_free(&vs);
	dw_check("walk: $$locals has only locals",
		 dwv_scope_vars(m, pc, DWV_LOCALS, &vs, err, sizeof err) == 0 && vs.n == 2, NULL);
	dwv_vars_free(&vs);

	/* the order is SystemTap 4.8's (stap -p2 of $nosuch in walk) */
	dw_check("unknown variable: SystemTap's message with alternatives",
		 dwv_find_var(m, pc, "nosuch", &v, err, sizeof err) < 0 &&
			 strstr(err, "unable to find local 'nosuch', [man error::dwarf] dieoffset") &&
			 strstr(err, " in walk ") && strstr(err, "(alternatives: $c, $p, $total, $limit))"),
		 "%s", err);
	dw_check("global variable found from a function ($global_counter)",
		 dwv_find_var(m, pc, "global_counter", &v, err, sizeof err) == 0 &&
			 v.loc.kind == DWV_LOC_ADDR &&
			 (uint64_t)v.loc.offset ==
				 dw_cmd_hex("nm '%s' | awk '$3==\"global_counter\" {print $1}'", obj("t_O0")),
		 "%s", err);
	dwv_var_free(&v);

	if (dwv_find_var(m, pc, "p", &v, err, sizeof err) == 0) {
		struct dwv_step s[3] = {{DWV_STEP_MEMBER, "next", 0, 0}, {DWV_STEP_MEMBER, "y", 0, 0}};

		dw_check("$p->next->y: load p, add offsetof(next), load, add offsetof(y)",
			 dwv_access(m, &v, s, 2, &acc, err, sizeof err) == 0 && acc.nops == 4 &&
				 acc.ops[0].kind == DWV_OP_LOAD_PTR && acc.ops[1].kind == DWV_OP_ADD &&
				 acc.ops[1].n == offsetof(struct point, next) &&
				 acc.ops[2].kind == DWV_OP_LOAD_PTR && acc.ops[3].n == offsetof(struct point, y) &&
				 acc.type.kind == DWV_T_INT && acc.type.size == 4 && acc.type.is_signed,
			 "%s", err);
		dwv_access_free(&acc);
		s[0].member = "nosuch";
		dw_check("$p->nosuch: unknown member with alternatives",
			 dwv_access(m, &v, s, 1, &acc, err, sizeof err) < 0 &&
				 !strcmp(err, "unable to find member 'nosuch' for struct point (alternatives: x, y, "
					      "label, next, tag)"),
			 "%s", err);
		s[0].member = "x";
		s[1].member = "z";
		dw_check("$p->x->z: not a struct",
			 dwv_access(m, &v, s, 2, &acc, err, sizeof err) < 0 &&
				 !strcmp(err, "invalid access '->z' vs. int"),
			 "%s", err);
		s[0] = (struct dwv_step){DWV_STEP_MEMBER, "tag", 0, 0};
		s[1] = (struct dwv_step){DWV_STEP_INDEX, NULL, 2, 0};
		dw_check("$p->tag[2]: unsigned char at offsetof(tag) + 2",
			 dwv_access(m, &v, s, 2, &acc, err, sizeof err) == 0 &&
				 acc.ops[acc.nops - 1].kind == DWV_OP_ADD &&
				 acc.ops[acc.nops - 1].n == offsetof(struct point, tag) + 2 &&
				 acc.type.kind == DWV_T_CHAR && !acc.type.is_signed,
			 "%s", err);
		dwv_access_free(&acc);
		s[0] = (struct dwv_step){DWV_STEP_INDEX, NULL, 0, 0};
		s[1] = (struct dwv_step){DWV_STEP_INDEX, NULL, 2, 0};
		dw_check("$p[0][2]: a struct indexed, reported at the variable (-2)",
			 dwv_access(m, &v, s, 2, &acc, err, sizeof err) == -2 &&
				 !strcmp(err, "invalid access '[2]' for struct point"),
			 "%s", err);
		s[0] = (struct dwv_step){DWV_STEP_INDEX, NULL, 0, 1};
		dw_check("$p[i]: pointer indexed at run time by sizeof(struct point)",
			 dwv_access(m, &v, s, 1, &acc, err, sizeof err) == 0 && acc.nops == 2 &&
				 acc.ops[1].kind == DWV_OP_INDEX && acc.ops[1].n == sizeof(struct point),
			 "%s", err);
		dwv_access_free(&acc);
		s[0] = (struct dwv_step){DWV_STEP_MEMBER, "y", 0, 0};
		s[1] = (struct dwv_step){DWV_STEP_ADDROF, NULL, 0, 0};
		dw_check("&$p->y: an address, typed int*",
			 dwv_access(m, &v, s, 2, &acc, err, sizeof err) == 0 && acc.addr_of &&
				 !strcmp(acc.type_name, "int*"),
			 "%s", err);
		dwv_access_free(&acc);
		dwv_var_free(&v);
	}
	if (dwv_find_var(m, probe_of(m, "add"), "a", &v, err, sizeof err) == 0) {
		struct dwv_step s[1] = {{DWV_STEP_INDEX, NULL, 1, 0}};

		dw_check("$a[1] on an int: SystemTap's message, at the '['",
			 dwv_access(m, &v, s, 1, &acc, err, sizeof err) == -1 &&
				 !strcmp(err, "invalid access '[1]' vs. int"),
			 "%s", err);
		s[0] = (struct dwv_step){DWV_STEP_INDEX, NULL, 0, 1};
		dw_check("$a[$i] on an int: the index named by its step",
			 dwv_access(m, &v, s, 1, &acc, err, sizeof err) == -1 &&
				 !strcmp(err, "invalid access '[index0]' vs. int"),
			 "%s", err);
		dwv_var_free(&v);
	}
	{
		struct dwq_funcs fs;

		dwq_functions(m, "*", DWQ_CALL, DWQ_PROLOGUE_AUTO, 0, &fs, err, sizeof err);
		for (size_t i = 0; i < fs.n; i++) {
			if (!strcmp(fs.v[i].name, "say"))
				dw_check("$return of say: size_t in %rax",
					 dwv_return_var(m, fs.v[i].die, &v, err, sizeof err) == 0 &&
						 !strcmp(v.type_name, "size_t") && v.loc.kind == DWV_LOC_REG &&
						 v.loc.reg == 0,
					 "%s", err);
			else if (!strcmp(fs.v[i].name, "marks"))
				dw_check("$return of void marks: error",
					 dwv_return_var(m, fs.v[i].die, &v, err, sizeof err) < 0 &&
						 strstr(err, "does not return a value"),
					 "%s", err);
			else
				continue;
			dwv_var_free(&v);
		}
		dwq_funcs_free(&fs);
	}
	dw_check("@var(\"global_counter\")",
		 dwv_global_var(m, "global_counter", NULL, &v, err, sizeof err) == 0 &&
			 v.loc.kind == DWV_LOC_ADDR &&
			 (uint64_t)v.loc.offset ==
				 dw_cmd_hex("nm '%s' | awk '$3==\"global_counter\" {print $1}'", obj("t_O0")),
		 "%s", err);
	dwv_var_free(&v);
	dw_check("@var(\"greeting@target.c\") (file static)",
		 dwv_global_var(m, "greeting", "target.c", &v, err, sizeof err) == 0 &&
			 !strcmp(v.type_name, "char const*"),
		 "%s", err);
	dwv_var_free(&v);
	dw_check("@var(\"global_counter@nosuch.c\"): error",
		 dwv_global_var(m, "global_counter", "nosuch.c", &v, err, sizeof err) < 0 &&
			 strstr(err, "unable to find global 'global_counter'"),
		 "%s", err);
	{
		Dwarf_Die t;
		struct dwv_step s[2] = {{DWV_STEP_MEMBER, "next", 0, 0}, {DWV_STEP_MEMBER, "y", 0, 0}};

		dw_check("@cast(p, \"struct point\")->next->y",
			 dwv_find_type(m, "struct point", &t, err, sizeof err) == 0 &&
				 dwv_cast_access(m, &t, s, 2, &acc, err, sizeof err) == 0 &&
				 acc.loc.kind == DWV_LOC_SCRIPT_ADDR && acc.nops == 3 &&
				 acc.ops[0].kind == DWV_OP_ADD && acc.ops[0].n == offsetof(struct point, next) &&
				 acc.ops[1].kind == DWV_OP_LOAD_PTR && acc.ops[2].n == offsetof(struct point, y),
			 "%s", err);
		dwv_access_free(&acc);
		dw_check("@cast(p, \"point_t\") finds the typedef",
			 dwv_find_type(m, "point_t", &t, err, sizeof err) == 0 && dwarf_tag(&t) == DW_TAG_typedef,
			 "%s", err);
		dw_check("@cast(p, \"struct nosuch\"): error",
			 dwv_find_type(m, "struct nosuch", &t, err, sizeof err) < 0 &&
				 strstr(err, "type definition 'struct nosuch' not found"),
			 "%s", err);
	}
	dwq_close(m);
}

/* ---- the live part ---- */

struct live {
	pid_t pid;
	uint64_t base; /* load base of the target */
};

/* Evaluate an access; *addr_out gets the final address when in memory. */
static uint64_t script_addr; /* @cast's address for DWV_LOC_SCRIPT_ADDR */

static int eval(const struct live *lv, const struct dwv_access *a, int64_t index, uint64_t *val)
{
	int in_reg = 0, is_const = 0;
	uint64_t loc = 0;

	switch (a->loc.kind) {
	case DWV_LOC_REG:
		in_reg = 1;
		loc = dwt_reg(lv->pid, a->loc.reg);
		break;
	case DWV_LOC_MEM:
		loc = dwt_reg(lv->pid, a->loc.reg) + (uint64_t)a->loc.offset;
		break;
	case DWV_LOC_ADDR:
		loc = lv->base + (uint64_t)a->loc.offset;
		break;
	case DWV_LOC_CONST:
		is_const = 1;
		loc = (uint64_t)a->loc.offset;
		break;
	case DWV_LOC_VALUE:
		is_const = 1;
		loc = dwt_reg(lv->pid, a->loc.reg) + (uint64_t)a->loc.offset;
		break;
	case DWV_LOC_SCRIPT_ADDR:
		loc = script_addr;
		break;
	}
	for (int i = 0; i < a->nops; i++) {
		switch (a->ops[i].kind) {
		case DWV_OP_LOAD_PTR:
			if (!in_reg && !is_const && dwt_read(lv->pid, loc, &loc, 8) < 0)
				return -1;
			in_reg = is_const = 0;
			break;
		case DWV_OP_ADD:
			loc += (uint64_t)a->ops[i].n;
			break;
		case DWV_OP_INDEX:
			loc += (uint64_t)(a->ops[i].n * index);
			break;
		}
	}
	if (a->addr_of) {
		*val = loc;
		return 0;
	}
	if (in_reg || is_const) {
		*val = (uint64_t)dwt_extend(loc, a->type.size, a->type.is_signed);
		return 0;
	}
	{
		uint64_t v = 0;

		if (dwt_read(lv->pid, loc, &v, (size_t)(a->type.size ? a->type.size : 8)) < 0)
			return -1;
		if (a->bit_size) {
			/* the bit-field: bit_size bits from bit bit_offset (little-endian) */
			v = (v >> a->bit_offset) & ((1ull << a->bit_size) - 1);
			if (a->type.is_signed && (v >> (a->bit_size - 1)) & 1)
				v |= ~0ull << a->bit_size;
			*val = v;
			return 0;
		}
		*val = (uint64_t)dwt_extend(v, a->type.size ? a->type.size : 8, a->type.is_signed);
	}
	return 0;
}

static int64_t var_value(const struct live *lv, struct dwq_mod *m, uint64_t pc, const char *name,
			 const char *m1, const char *m2, int *ok)
{
	struct dwv_var v;
	struct dwv_access acc;
	struct dwv_step s[2];
	int n = 0;
	uint64_t val = 0;
	char err[DWQ_ERRLEN];

	*ok = 0;
	if (dwv_find_var(m, pc, name, &v, err, sizeof err) < 0) {
		printf("  %s: %s\n", name, err);
		return 0;
	}
	if (m1)
		s[n++] = (struct dwv_step){DWV_STEP_MEMBER, m1, 0, 0};
	if (m2)
		s[n++] = (struct dwv_step){DWV_STEP_MEMBER, m2, 0, 0};
	if (dwv_access(m, &v, s, n, &acc, err, sizeof err) == 0) {
		*ok = eval(lv, &acc, 0, &val) == 0;
		dwv_access_free(&acc);
	}
	dwv_var_free(&v);
	return (int64_t)val;
}

/* $s->a[i]->b... from a compact path: ".name" members, "[N]" indexes. */
static int64_t path_value(const struct live *lv, struct dwq_mod *m, uint64_t pc, const char *var,
			  const char *path, int *ok)
{
	struct dwv_var v;
	struct dwv_access acc;
	struct dwv_step s[8];
	char names[8][32];
	int n = 0;
	uint64_t val = 0;
	char err[DWQ_ERRLEN];

	*ok = 0;
	while (*path && n < 8) {
		if (*path == '.') {
			size_t len = strcspn(path + 1, ".[");

			snprintf(names[n], sizeof names[n], "%.*s", (int)len, path + 1);
			s[n] = (struct dwv_step){DWV_STEP_MEMBER, names[n], 0, 0};
			path += 1 + len;
		} else if (*path == '[') {
			char *e;

			s[n] = (struct dwv_step){DWV_STEP_INDEX, NULL, strtol(path + 1, &e, 10), 0};
			path = e + 1;
		} else {
			return 0;
		}
		n++;
	}
	if (dwv_find_var(m, pc, var, &v, err, sizeof err) < 0) {
		printf("  %s: %s\n", var, err);
		return 0;
	}
	if (dwv_access(m, &v, s, n, &acc, err, sizeof err) == 0) {
		*ok = eval(lv, &acc, 0, &val) == 0;
		dwv_access_free(&acc);
	} else {
		printf("  %s%s: %s\n", var, path, err);
	}
	dwv_var_free(&v);
	return (int64_t)val;
}

static char *string_at(const struct live *lv, uint64_t addr)
{
	static char buf[256];

	if (dwt_read_str(lv->pid, addr, buf, sizeof buf) < 0)
		return NULL;
	return buf;
}

/* Render a pretty format with this interpreter (%d %u %#x %p %s '%c'). */
static void render(const struct live *lv, const struct dwv_pretty *p, char *out, size_t len)
{
	size_t o = 0;
	int k = 0;

	for (const char *f = p->fmt; *f && o + 64 < len; f++) {
		uint64_t v = 0;
		const struct dwv_parg *a;

		if (*f != '%') {
			out[o++] = *f;
			continue;
		}
		a = k < p->nargs ? &p->args[k++] : NULL;
		if (a && a->kind == DWV_ARG_CHARS) {
			eval(lv, &(struct dwv_access){a->acc.loc, a->acc.ops, a->acc.nops, 1, a->acc.type, 0, 0, NULL}, 0, &v);
		} else if (a) {
			eval(lv, &a->acc, 0, &v);
		}
		if (f[1] == '#' && f[2] == 'c') {
			o += (size_t)snprintf(out + o, len - o, "%c", (char)v);
			f += 2;
		} else if (f[1] == '#' && f[2] == 'x') {
			o += (size_t)snprintf(out + o, len - o, "0x%" PRIx64, v);
			f += 2;
		} else if (f[1] == 'd') {
			o += (size_t)snprintf(out + o, len - o, "%" PRId64, (int64_t)v);
			f++;
		} else if (f[1] == 'u') {
			o += (size_t)snprintf(out + o, len - o, "%" PRIu64, v);
			f++;
		} else if (f[1] == 'p') {
			o += (size_t)snprintf(out + o, len - o, "0x%" PRIx64, v);
			f++;
		} else if (f[1] == 'c') {
			o += (size_t)snprintf(out + o, len - o, "%c", (char)v);
			f++;
		} else if (f[1] == 's') {
			const char *s = string_at(lv, v);

			o += (size_t)snprintf(out + o, len - o, "\"%s\"", s ? s : "?");
			f++;
		}
	}
	out[o] = '\0';
}

static void live_run(const char *bin)
{
	char err[DWQ_ERRLEN], name[256], buf[1024];
	char *args[3] = {NULL, "x", NULL};
	struct dwq_mod *m = dwq_open(obj(bin), err, sizeof err);
	struct live lv;
	uint64_t pc_walk, pc_add, pc_say, pc_marks;
	int ok;
	int64_t v;

	if (!m) {
		dw_check("open", 0, "%s", err);
		return;
	}
	pc_walk = probe_of(m, "walk");
	pc_add = probe_of(m, "add");
	pc_say = probe_of(m, "say");
	pc_marks = probe_of(m, "marks");
	args[0] = (char *)obj(bin);
	lv.pid = dwt_start(args, NULL);
	lv.base = dwq_is_dyn(m) ? dwt_base(lv.pid, obj(bin)) : 0;
	snprintf(name, sizeof name, "%s: start and stop at walk's probe", bin);
	dw_check(name, lv.pid > 0 && dwt_run_to(lv.pid, lv.base + pc_walk) == 0, NULL);

	v = var_value(&lv, m, pc_walk, "limit", NULL, NULL, &ok);
	snprintf(name, sizeof name, "%s: walk $limit == 10", bin);
	dw_check(name, ok && v == 10, "%" PRId64, v);
	v = var_value(&lv, m, pc_walk, "p", "x", NULL, &ok);
	snprintf(name, sizeof name, "%s: walk $p->x == 1", bin);
	dw_check(name, ok && v == 1, "%" PRId64, v);
	v = var_value(&lv, m, pc_walk, "p", "next", "y", &ok);
	snprintf(name, sizeof name, "%s: walk $p->next->y == 4", bin);
	dw_check(name, ok && v == 4, "%" PRId64, v);
	v = var_value(&lv, m, pc_walk, "p", "label", NULL, &ok);
	snprintf(name, sizeof name, "%s: walk $p->label is \"a\"", bin);
	dw_check(name, ok && string_at(&lv, (uint64_t)v) && !strcmp(string_at(&lv, (uint64_t)v), "a"), NULL);
	v = var_value(&lv, m, pc_walk, "global_counter", NULL, NULL, &ok);
	snprintf(name, sizeof name, "%s: $global_counter == 7", bin);
	dw_check(name, ok && v == 7, "%" PRId64, v);
	{
		struct dwv_var pv;
		struct dwv_pretty pp;

		if (dwv_find_var(m, pc_walk, "p", &pv, err, sizeof err) == 0 &&
		    dwv_pretty_var(m, &pv, NULL, 0, 0, &pp, err, sizeof err) == 0) {
			render(&lv, &pp, buf, sizeof buf);
			snprintf(name, sizeof name, "%s: $p$ follows the pointer and shows the struct", bin);
			dw_check(name, !strcmp(pp.fmt, "{.x=%d, .y=%d, .label=%s, .next=%p, .tag=%s}") &&
					       !strncmp(buf, "{.x=1, .y=2, .label=\"a\", .next=0x", 33),
				 "%s (fmt %s)", buf, pp.fmt);
			dwv_pretty_free(&pp);
		}
		if (dwv_pretty_var(m, &pv, NULL, 0, 1, &pp, err, sizeof err) == 0) {
			render(&lv, &pp, buf, sizeof buf);
			snprintf(name, sizeof name, "%s: $p$$ renders the struct", bin);
			dw_check(name, !strncmp(buf, "{.x=1, .y=2, .label=\"a\", .next=0x", 33), "%s (fmt %s)",
				 buf, pp.fmt);
			dwv_pretty_free(&pp);
		}
		dwv_var_free(&pv);
	}
	{
		struct dwv_pretty pp;

		if (dwv_pretty_scope(m, pc_walk, DWV_PARMS, 0, &pp, err, sizeof err) == 0) {
			render(&lv, &pp, buf, sizeof buf);
			snprintf(name, sizeof name, "%s: $$parms = p=0x... limit=0xa", bin);
			dw_check(name, !strncmp(buf, "p=0x", 4) && strstr(buf, " limit=0xa") &&
					       !strcmp(pp.fmt, "p=%#x limit=%#x"),
				 "%s", buf);
			dwv_pretty_free(&pp);
		}
	}

	{
		Dwarf_Die t;
		struct dwv_access ca;
		struct dwv_step st[2] = {{DWV_STEP_MEMBER, "next", 0, 0}, {DWV_STEP_MEMBER, "y", 0, 0}};
		uint64_t y = 0;

		script_addr = (uint64_t)var_value(&lv, m, pc_walk, "p", NULL, NULL, &ok);
		snprintf(name, sizeof name, "%s: @cast($p, \"struct point\")->next->y == 4", bin);
		dw_check(name, ok && dwv_find_type(m, "struct point", &t, err, sizeof err) == 0 &&
				       dwv_cast_access(m, &t, st, 2, &ca, err, sizeof err) == 0 &&
				       eval(&lv, &ca, 0, &y) == 0 && y == 4,
			 "%" PRIu64, y);
		dwv_access_free(&ca);
	}

	dw_check("run to add's probe", dwt_run_to(lv.pid, lv.base + pc_add) == 0, NULL);
	v = var_value(&lv, m, pc_add, "a", NULL, NULL, &ok);
	snprintf(name, sizeof name, "%s: add $a == argc == 2", bin);
	dw_check(name, ok && v == 2, "%" PRId64, v);
	v = var_value(&lv, m, pc_add, "b", NULL, NULL, &ok);
	snprintf(name, sizeof name, "%s: add $b == 2", bin);
	dw_check(name, ok && v == 2, "%" PRId64, v);

	dw_check("run to say's probe", dwt_run_to(lv.pid, lv.base + pc_say) == 0, NULL);
	v = var_value(&lv, m, pc_say, "s", NULL, NULL, &ok);
	snprintf(name, sizeof name, "%s: say $s is argv[1] \"x\"", bin);
	dw_check(name, ok && string_at(&lv, (uint64_t)v) && !strcmp(string_at(&lv, (uint64_t)v), "x"), NULL);

	dw_check("run to marks' probe", dwt_run_to(lv.pid, lv.base + pc_marks) == 0, NULL);
	v = var_value(&lv, m, pc_marks, "big", NULL, NULL, &ok);
	snprintf(name, sizeof name, "%s: marks $big == 461", bin);
	dw_check(name, ok && v == 461, "%" PRId64, v);

	{
		struct sdt_probes ps;
		const struct sdt_probe *p = NULL;

		sdt_read(obj(bin), &ps, err, sizeof err);
		for (size_t i = 0; i < ps.n; i++)
			if (!strcmp(ps.v[i].name, "three"))
				p = &ps.v[i];
		snprintf(name, sizeof name, "%s: run to marker three", bin);
		dw_check(name, p && dwt_run_to(lv.pid, lv.base + p->pc) == 0, NULL);
		if (p && p->nargs == 3) {
			int64_t a[3];

			for (int i = 0; i < 3; i++) {
				const struct sdt_arg *x = &p->args[i];
				uint64_t r = 0;

				if (x->kind == SDT_ARG_REG)
					r = dwt_reg(lv.pid, x->reg) >> (x->reg_high ? 8 : 0);
				else if (x->kind == SDT_ARG_MEM)
					dwt_read(lv.pid,
						 dwt_reg(lv.pid, x->reg) + (uint64_t)x->offset +
							 (x->index >= 0 ? dwt_reg(lv.pid, x->index) * (uint64_t)x->scale : 0),
						 &r, (size_t)x->size);
				else if (x->kind == SDT_ARG_CONST)
					r = (uint64_t)x->offset;
				else if (x->kind == SDT_ARG_ABS)
					dwt_read(lv.pid, lv.base + (uint64_t)x->offset, &r, (size_t)x->size);
				a[i] = dwt_extend(r, x->size, x->is_signed);
			}
			snprintf(name, sizeof name, "%s: marker three $arg1..3 = 2, 461, \"hello\"", bin);
			dw_check(name, a[0] == 2 && a[1] == 461 && string_at(&lv, (uint64_t)a[2]) &&
					       !strcmp(string_at(&lv, (uint64_t)a[2]), "hello"),
				 "%" PRId64 " %" PRId64, a[0], a[1]);
		}
		sdt_free(&ps);
	}
	{
		uint64_t pc_shapes = probe_of(m, "shapes");
		static const struct {
			const char *path;
			int64_t want;
		} cases[] = {{".kind", 5}, {".big", 1}, {".delta", -7}, {".u.i", 42}, {".color", 6},
			     {".on", 1}, {".pts[1].y", 40}, {".pts[0].x", 10}};

		snprintf(name, sizeof name, "%s: run to shapes' probe", bin);
		dw_check(name, pc_shapes && dwt_run_to(lv.pid, lv.base + pc_shapes) == 0, NULL);
		{
			struct dwv_var sv;
			struct dwv_pretty pp;

			if (dwv_find_var(m, pc_shapes, "s", &sv, err, sizeof err) == 0) {
				if (dwv_pretty_var(m, &sv, NULL, 0, 0, &pp, err, sizeof err) == 0) {
					render(&lv, &pp, buf, sizeof buf);
					snprintf(name, sizeof name, "%s: $s$ (bit-fields, union, enum, bool, array)", bin);
					dw_check_str(name, buf,
						     "{.kind=5, .big=1, .delta=-7, .u={...}, .color=6, .on=1, .pts=[...]}");
					dwv_pretty_free(&pp);
				}
				if (dwv_pretty_var(m, &sv, NULL, 0, 1, &pp, err, sizeof err) == 0) {
					render(&lv, &pp, buf, sizeof buf);
					snprintf(name, sizeof name, "%s: $s$$ expands nested members", bin);
					dw_check(name,
						 !strncmp(buf, "{.kind=5, .big=1, .delta=-7, .u={.i=42, .f=", 43) &&
							 strstr(buf, ".pts=[{.x=10, .y=") && strstr(buf, ", .next=0x0, .tag="),
						 "%s", buf);
					dwv_pretty_free(&pp);
				}
				dwv_var_free(&sv);
			}
		}
		for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
			v = path_value(&lv, m, pc_shapes, "s", cases[i].path, &ok);
			snprintf(name, sizeof name, "%s: shapes $s->%s == %" PRId64, bin, cases[i].path + 1,
				 cases[i].want);
			dw_check(name, ok && v == cases[i].want, "%" PRId64, v);
		}
	}
	if (lv.pid > 0)
		dwt_kill(lv.pid);
	dwq_close(m);
}

/* walk returns 453 (see target.c): stop at its entry, take the return
 * address from the stack, run there and read $return. */
static void live_return(const char *bin)
{
	char err[DWQ_ERRLEN], name[256];
	char *args[3] = {NULL, "x", NULL};
	struct dwq_mod *m = dwq_open(obj(bin), err, sizeof err);
	struct dwq_funcs fs;
	struct dwv_var v;
	struct dwv_access acc;
	struct live lv;
	uint64_t ret = 0, val = 0;

	if (!m)
		return;
	args[0] = (char *)obj(bin);
	dwq_functions(m, "walk", DWQ_CALL, DWQ_PROLOGUE_NEVER, 0, &fs, err, sizeof err);
	lv.pid = dwt_start(args, NULL);
	lv.base = dwq_is_dyn(m) ? dwt_base(lv.pid, obj(bin)) : 0;
	snprintf(name, sizeof name, "%s: walk.return $return == 453", bin);
	if (fs.n != 1 || lv.pid <= 0 || dwt_run_to(lv.pid, lv.base + fs.v[0].entry) < 0 ||
	    dwt_read(lv.pid, dwt_reg(lv.pid, 7), &ret, 8) < 0 || dwt_run_to(lv.pid, ret) < 0 ||
	    dwv_return_var(m, fs.v[0].die, &v, err, sizeof err) < 0) {
		dw_check(name, 0, "setup failed: %s", err);
	} else {
		dw_check(name, dwv_access(m, &v, NULL, 0, &acc, err, sizeof err) == 0 &&
				       eval(&lv, &acc, 0, &val) == 0 && val == 453,
			 "%" PRIu64, val);
		dwv_access_free(&acc);
		dwv_var_free(&v);
	}
	if (lv.pid > 0)
		dwt_kill(lv.pid);
	dwq_funcs_free(&fs);
	dwq_close(m);
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: %s OBJDIR\n", argv[0]);
		return 2;
	}
	objdir = argv[1];
	test_static();
	live_run("t_O0");
	live_run("t_O2");
	live_run("t_nopie");
	live_return("t_O0");
	live_return("t_O2");
	return dw_failures ? 1 : 0;
}
