/* Target variables: the parameters and locals in scope at a probe address,
 * their DWARF types, their locations translated into a small description
 * pass 3 turns into reads through the runtime's context API, member and
 * index chains ($p->next->x, $arr[2]), and SystemTap's pretty-printing
 * ($x$, $x$$, $$vars, $$parms, $$locals) as a format plus accesses.
 *
 * A "location" is where a value lives at the probe address: a register,
 * memory at register+offset (frame-base and CFA rules are folded in using
 * the CFI at that address), memory at a fixed vaddr (globals: the runtime
 * adds the load base for PIE/libraries), or a constant. */
#ifndef STAP_DWARF_VARS_H
#define STAP_DWARF_VARS_H

#include "dwarf_query.h"

#include <stdint.h>

enum dwv_loc_kind {
	DWV_LOC_REG,	     /* in register reg */
	DWV_LOC_MEM,	     /* in memory at reg + offset */
	DWV_LOC_ADDR,	     /* in memory at the module vaddr offset */
	DWV_LOC_CONST,	     /* the value is offset (DW_OP_stack_value, implicit) */
	DWV_LOC_VALUE,	     /* the value is reg + offset (breg ... stack_value) */
	DWV_LOC_SCRIPT_ADDR, /* @cast: in memory at the address the script gives */
	DWV_LOC_TLS,	     /* thread-local: at offset in the module's TLS block */
	DWV_LOC_ENTRY,	     /* the value reg had at the function's entry
				(DW_OP_entry_value): saved by a probe there, found
				again by the frame's CFA, cfa_reg + cfa_off */
};

struct dwv_loc {
	enum dwv_loc_kind kind;
	int reg; /* DWARF register number (x86-64: 0 rax ... 7 rsp, 16 rip) */
	int64_t offset;
	int cfa_reg; /* DWV_LOC_ENTRY */
	int64_t cfa_off;
};

/* What a type is, after typedefs and const/volatile are looked through. */
enum dwv_tkind {
	DWV_T_VOID,
	DWV_T_INT,
	DWV_T_CHAR, /* an integer of size 1 with a character encoding */
	DWV_T_BOOL,
	DWV_T_FLOAT,
	DWV_T_ENUM,
	DWV_T_POINTER,
	DWV_T_ARRAY,
	DWV_T_STRUCT,
	DWV_T_UNION,
	DWV_T_FUNC,
	DWV_T_OTHER,
};

struct dwv_type {
	enum dwv_tkind kind;
	Dwarf_Die die; /* the type DIE after stripping (valid if has_die) */
	int has_die;
	int size; /* bytes (pointer: 8) */
	int is_signed;
	int64_t count; /* ARRAY: elements of the outermost dimension, -1 unknown */
};

struct dwv_var {
	char *name;
	int is_param;
	Dwarf_Die die;	    /* DW_TAG_variable / DW_TAG_formal_parameter */
	Dwarf_Die type_die; /* its DW_AT_type (unstripped) */
	int has_type;
	char *type_name; /* C spelling, as -L prints it ("char**") */
	int located;	 /* 1: loc is valid at the pc */
	struct dwv_loc loc;
};

struct dwv_vars {
	struct dwv_var *v;
	size_t n;
};

enum dwv_which { DWV_PARMS = 1, DWV_LOCALS = 2, DWV_ALL = 3 };

/* The variables in scope at PC (a module vaddr) as SystemTap 4.8 lists
 * them for $$vars: innermost scope first, out to the function (or inline
 * instance), each scope's parameters and variables in DIE order; a name
 * shadowed by an inner scope appears twice. Locations are computed
 * (located = 0 when the DWARF has none for PC). */
int dwv_scope_vars(struct dwq_mod *m, uint64_t pc, enum dwv_which which, struct dwv_vars *out,
		   char *err, size_t errlen);
/* The DIE of the out-of-line function whose code holds PC, and its name
 * (NAME may be NULL); 0 when the DWARF has none there. */
Dwarf_Off dwv_func_at(struct dwq_mod *m, uint64_t pc, const char **name);
/* Has VAR a location at PC as SystemTap 4.8's -L asks: a constant value,
 * or a location expression for PC (an entry value too, although it is
 * not read)? A variable optimised away or not yet live there has none. */
int dwv_has_location(struct dwq_mod *m, Dwarf_Die *var, uint64_t pc);
/* Drop every variable whose name occurs more than once (-L lists none of
 * them, as SystemTap's). */
void dwv_vars_drop_dups(struct dwv_vars *vs);
void dwv_vars_free(struct dwv_vars *v);

/* Find one variable (innermost scope first, then the CU's globals). On
 * failure ERR holds SystemTap's message: "unable to find local 'x', [man
 * error::dwarf] dieoffset 0x2ee in /abs/a.out, near pc 0x1153 in add
 * a.c (alternatives: $a, $b))" (the innermost scope's DIE and name,
 * "<unknown>" for a block, the CU's name, its doubled parenthesis;
 * "(<no alternatives>)" when there are none); the caller appends
 * ": identifier '$x' at FILE:L:C". An unlocatable variable is an error too:
 * "not accessible at this address (pc: 0x...)". */
int dwv_find_var(struct dwq_mod *m, uint64_t pc, const char *name, struct dwv_var *out, char *err,
		 size_t errlen);
void dwv_var_free(struct dwv_var *v);

/* Resolve a type DIE (through typedefs, const, volatile, restrict). */
int dwv_resolve_type(Dwarf_Die *type, struct dwv_type *out);
/* The C spelling of a type DIE ("struct point*", "unsigned char[4]"). */
char *dwv_type_name(Dwarf_Die *type);

/* Accesses: a chain of steps from a variable to the value wanted. */
enum dwv_step_kind { DWV_STEP_MEMBER, DWV_STEP_INDEX, DWV_STEP_ADDROF };
struct dwv_step {
	enum dwv_step_kind kind;
	const char *member; /* MEMBER */
	int64_t index;	    /* INDEX: a constant index */
	int index_dynamic;  /* INDEX: the index is computed at run time */
};

/* The operations of an access, applied in order to the location. */
enum dwv_op_kind {
	DWV_OP_LOAD_PTR, /* fetch the pointer the location holds: new location = memory at it */
	DWV_OP_ADD,	 /* location (in memory) += n */
	DWV_OP_INDEX,	 /* location (in memory) += n * (the run-time index) */
};
struct dwv_op {
	enum dwv_op_kind kind;
	int64_t n;
};

struct dwv_access {
	struct dwv_loc loc; /* where to start */
	struct dwv_op *ops;
	int nops;
	int addr_of;		  /* the result is the final location's address */
	struct dwv_type type;	  /* of the final value */
	int bit_size, bit_offset; /* bit-fields (bit_size 0: not one) */
	char *type_name;
	const char *module; /* set by the caller: DWV_LOC_ADDR is in the module
			       of this path, not the probe's (NULL: the probe's);
			       DWV_LOC_TLS: the module of this path (needed) */
};

/* Build the access for VAR followed by STEPS. Errors in SystemTap's words:
 * "unable to find member 'z' for struct point (alternatives: x, y)",
 * "invalid access '->z' vs. int", "invalid access '[1]' vs. int",
 * "cannot take address of register value"; -1, or -2 when SystemTap
 * points at the variable rather than the failing component
 * ("invalid access '[2]' for struct s"). */
int dwv_access(struct dwq_mod *m, const struct dwv_var *var, const struct dwv_step *steps,
	       int nsteps, struct dwv_access *out, char *err, size_t errlen);
void dwv_access_free(struct dwv_access *a);

/* $return in a .return probe of the function whose DIE is FUNC_DIE (a
 * dwq_func's die): a variable named "return" located where the ABI puts
 * the value at the return address (libdwfl's return-value location:
 * %rax, or memory at %rax for aggregates returned in memory). Floating
 * point and register-pair returns are reported as errors. */
int dwv_return_var(struct dwq_mod *m, Dwarf_Off func_die, struct dwv_var *out, char *err,
		   size_t errlen);

/* @var("name[@file]"): a global (or file-static) variable of the module,
 * FILE (may be NULL) matching the CU's name or its trailing path. */
int dwv_global_var(struct dwq_mod *m, const char *name, const char *file, struct dwv_var *out,
		   char *err, size_t errlen);
/* The messages SystemTap 4.8 adds when @var("NAME[@FILE]") is found in no
 * CU: one per CU FILE matches, the last CU's first, each with that CU's
 * alternatives. *N of them, malloc'd. */
char **dwv_global_misses(struct dwq_mod *m, const char *name, const char *file, int *n);

/* @cast(ADDR, "TYPE")->...: find TYPE ("struct point", "union u",
 * "enum e", "point_t", "int") among the module's types, then build the
 * access with loc DWV_LOC_SCRIPT_ADDR (memory at the script's address).
 * Error: "type definition 'TYPE' not found in 'MODULE'". */
int dwv_find_type(struct dwq_mod *m, const char *type_name, Dwarf_Die *out, char *err,
		  size_t errlen);
int dwv_cast_access(struct dwq_mod *m, Dwarf_Die *type, const struct dwv_step *steps, int nsteps,
		    struct dwv_access *out, char *err, size_t errlen);

/* Pretty-printing: a format (SystemTap printf syntax) and its arguments.
 * Argument kinds tell the generated code how to fetch each value. */
enum dwv_arg_kind {
	DWV_ARG_INT,	/* read the access as an integer (size, signedness) */
	DWV_ARG_STRING, /* the access is a char*: user_string_quoted of it */
	DWV_ARG_CHARS,	/* the access is a char[N] in memory: quoted string */
};
struct dwv_parg {
	enum dwv_arg_kind kind;
	struct dwv_access acc;
};
struct dwv_pretty {
	char *fmt;
	struct dwv_parg *args;
	int nargs;
};

/* $x$ (deep = 0) and $x$$ (deep = 1) of one variable with STEPS applied,
 * as SystemTap prints them: a pointer to a struct is followed at the top
 * and the struct shown as "{.x=%d, .next=%p, .label=%s, .in={...}}";
 * integers %d/%u, chars '%#c', pointers %p (not followed below the top),
 * char pointers and char arrays quoted strings, arrays "[%d, %d]";
 * nested structs, unions and arrays are "{...}" / "[...]" with $ and
 * expanded with $$. */
int dwv_pretty_var(struct dwq_mod *m, const struct dwv_var *var, const struct dwv_step *steps,
		   int nsteps, int deep, struct dwv_pretty *out, char *err, size_t errlen);
/* $$vars, $$parms, $$locals (with suffix = 0: "a=%#x b=%#x", unlocatable
 * ones "c=?"; suffix 1 or 2 for $$vars$ and $$vars$$: each as $x$/$x$$). */
int dwv_pretty_scope(struct dwq_mod *m, uint64_t pc, enum dwv_which which, int suffix,
		     struct dwv_pretty *out, char *err, size_t errlen);
void dwv_pretty_free(struct dwv_pretty *p);

#endif
