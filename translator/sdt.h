/* SDT markers (<sys/sdt.h>, DTrace-style static probes): the
 * .note.stapsdt notes of an ELF file, and their argument strings parsed
 * into a form pass 3 can turn into reads of registers and memory for
 * $arg1..$argN.
 *
 * Addresses (pc, semaphore, absolute memory operands) are ELF vaddrs after
 * the .stapsdt.base fix-up (the note's base field against the section's
 * actual address, which differs after prelinking); for ET_DYN files the
 * runtime adds the load base. Self-contained (libelf, libc). */
#ifndef STAP_SDT_H
#define STAP_SDT_H

#include <stddef.h>
#include <stdint.h>

/* x86-64 DWARF register numbers (as in the ABI), used for operands. */
enum sdt_reg {
	SDT_REG_NONE = -1,
	SDT_REG_RAX = 0,
	SDT_REG_RDX,
	SDT_REG_RCX,
	SDT_REG_RBX,
	SDT_REG_RSI,
	SDT_REG_RDI,
	SDT_REG_RBP,
	SDT_REG_RSP,
	SDT_REG_R8,
	SDT_REG_R9,
	SDT_REG_R10,
	SDT_REG_R11,
	SDT_REG_R12,
	SDT_REG_R13,
	SDT_REG_R14,
	SDT_REG_R15,
	SDT_REG_RIP = 16,
};

enum sdt_arg_kind {
	SDT_ARG_REG,   /* the value is (part of) register reg */
	SDT_ARG_MEM,   /* memory at reg + index*scale + offset; with no base
			* reg, offset is a vaddr (as for ABS) */
	SDT_ARG_ABS,   /* memory at the vaddr offset (a %rip-relative symbol) */
	SDT_ARG_CONST, /* the value is offset ($N) */
};

struct sdt_arg {
	enum sdt_arg_kind kind;
	int size;      /* bytes read: 1, 2, 4 or 8 (8 when the string gave none) */
	int is_signed; /* "-4@": sign-extend */
	int reg;       /* enum sdt_reg: the register, or the base of MEM */
	int reg_bits;  /* width of the named register: 64, 32, 16 or 8 */
	int reg_high;  /* %ah %bh %ch %dh: bits 8..15 */
	int index;     /* MEM index register or SDT_REG_NONE */
	int scale;     /* 1, 2, 4, 8 */
	int64_t offset;
	char *symbol; /* ABS: the symbol named in the operand (may be NULL) */
	char *text;   /* the operand as written, e.g. "-4@-4(%rbp)" */
};

struct sdt_probe {
	char *provider;
	char *name;
	uint64_t pc;	    /* the nop at the marker */
	uint64_t semaphore; /* 0 if none: a 16-bit counter to increment */
	char *args_text;    /* e.g. "-4@%edi 8@-16(%rbp)" */
	int nargs;
	struct sdt_arg *args;
};

struct sdt_probes {
	struct sdt_probe *v;
	size_t n;
};

/* Read every marker of PATH (in note order). A file without markers gives
 * an empty list, not an error. An argument string this parser does not
 * understand leaves nargs = -1 for that probe (its args_text stays), so
 * the caller can report it when the script uses $argN. */
int sdt_read(const char *path, struct sdt_probes *out, char *err, size_t errlen);
void sdt_free(struct sdt_probes *p);

/* Parse one argument string. Symbols in %rip-relative operands are looked
 * up with LOOKUP (may be NULL: such operands then fail). 0 or -1. */
typedef int (*sdt_symbol_lookup)(void *arg, const char *name, uint64_t *vaddr);
int sdt_parse_args(const char *text, sdt_symbol_lookup lookup, void *lookup_arg,
		   struct sdt_arg **args, int *nargs, char *err, size_t errlen);
void sdt_args_free(struct sdt_arg *args, int nargs);

/* Does a script's mark name or provider match the marker's? Patterns use
 * fnmatch wildcards; "-" in the pattern stands for "__" in the name, as
 * dtrace spells probe names (function-entry = function__entry). */
int sdt_name_matches(const char *pattern, const char *name);

/* The x86-64 register name for a DWARF number and width ("rdi", "edi"). */
const char *sdt_reg_name(int reg, int bits, int high);

#endif
