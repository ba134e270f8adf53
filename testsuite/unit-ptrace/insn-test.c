/* Unit test of runtime/arch/x86_64/insn.c: decoding into kinds, emulation
 * (checked against the CPU itself for add/sub flags, by hand elsewhere)
 * and out-of-line copies. Prints "PASS: name" / "FAIL: name ..." lines.
 * Build with -mno-red-zone: the flag checks push below %rsp. */
#include "arch/x86_64/insn.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures;

static void check(const char *name, int ok, const char *detail)
{
	if (ok) {
		printf("PASS: %s\n", name);
	} else {
		printf("FAIL: %s: %s\n", name, detail);
		failures++;
	}
}

/* A fake target memory: 4 KiB at 0x10000. */
static uint8_t mem[4096];
#define MEMBASE 0x10000ULL

static int rd(void *ctx, uint64_t a, void *buf, size_t n)
{
	(void)ctx;
	if (a < MEMBASE || a + n > MEMBASE + sizeof mem)
		return -EFAULT;
	memcpy(buf, mem + (a - MEMBASE), n);
	return 0;
}

static int wr(void *ctx, uint64_t a, const void *buf, size_t n)
{
	(void)ctx;
	if (a < MEMBASE || a + n > MEMBASE + sizeof mem)
		return -EFAULT;
	memcpy(mem + (a - MEMBASE), buf, n);
	return 0;
}

static const struct _stp_x86_mem_ops ops = {rd, wr, NULL};

static int emu(const uint8_t *b, size_t n, uint64_t addr, struct user_regs_struct *r,
	       struct _stp_x86_insn *in)
{
	if (_stp_x86_decode(b, n, addr, in) < 0)
		return -100;
	return _stp_x86_emulate(in, addr, r, &ops);
}

#define FLAGS 0x8d5ULL /* CF PF AF ZF SF OF */

static void flags_vs_cpu(void)
{
	unsigned seed = 12345;
	int bad = 0;
	char detail[256] = "";

	for (int i = 0; i < 20000 && !bad; i++) {
		uint64_t a = ((uint64_t)rand_r(&seed) << 33) ^ ((uint64_t)rand_r(&seed) << 2) ^
			     (uint64_t)rand_r(&seed);
		int32_t imm = (int32_t)((unsigned)rand_r(&seed) * 2654435761u);
		if (i % 7 == 0)
			imm = (int32_t)(i % 3 - 1);
		if (i % 11 == 0)
			a = (uint64_t)imm;
		for (int op = 0; op < 4; op++) {
			/* 48 05 / 48 2d: add/sub rax, imm32; 05 / 2d: eax */
			uint8_t b[6];
			int k = 0;
			if (op < 2)
				b[k++] = 0x48;
			b[k++] = (op & 1) ? 0x2d : 0x05;
			memcpy(b + k, &imm, 4);
			k += 4;
			struct user_regs_struct r = {0};
			struct _stp_x86_insn in;
			uint64_t res = a, fl;
			r.rax = a;
			r.eflags = 0x202;
			if (emu(b, (size_t)k, 0x1000, &r, &in) != 1) {
				bad = 1;
				snprintf(detail, sizeof detail, "not emulated");
				break;
			}
			switch (op) {
			case 0:
				__asm__("addq %2,%0; pushfq; popq %1"
					: "+r"(res), "=r"(fl)
					: "r"((int64_t)imm)
					: "cc");
				break;
			case 1:
				__asm__("subq %2,%0; pushfq; popq %1"
					: "+r"(res), "=r"(fl)
					: "r"((int64_t)imm)
					: "cc");
				break;
			case 2: {
				uint32_t v = (uint32_t)a;
				__asm__("addl %2,%0; pushfq; popq %1"
					: "+r"(v), "=r"(fl)
					: "ir"(imm)
					: "cc");
				res = v;
				break;
			}
			default: {
				uint32_t v = (uint32_t)a;
				__asm__("subl %2,%0; pushfq; popq %1"
					: "+r"(v), "=r"(fl)
					: "ir"(imm)
					: "cc");
				res = v;
				break;
			}
			}
			if (r.rax != res || (r.eflags & FLAGS) != (fl & FLAGS) ||
			    r.rip != 0x1000 + (uint64_t)k) {
				bad = 1;
				snprintf(
				    detail, sizeof detail,
				    "op %d a=%#llx imm=%d: got %#llx fl %#llx, cpu %#llx fl %#llx",
				    op, (unsigned long long)a, imm, r.rax, r.eflags & FLAGS,
				    (unsigned long long)res, (unsigned long long)(fl & FLAGS));
				break;
			}
		}
	}
	check("add/sub flags as the CPU computes them", !bad, detail);
}

static void kinds(void)
{
	static const struct {
		const char *name;
		uint8_t b[15];
		size_t n;
		int kind;
	} t[] = {
	    {"endbr64", {0xf3, 0x0f, 0x1e, 0xfa}, 4, STP_X86_NOP},
	    {"nopw", {0x66, 0x0f, 0x1f, 0x44, 0, 0}, 6, STP_X86_NOP},
	    {"push %rbp", {0x55}, 1, STP_X86_PUSH},
	    {"push %r12", {0x41, 0x54}, 2, STP_X86_PUSH},
	    {"pop %rbx", {0x5b}, 1, STP_X86_POP},
	    {"mov %rsp,%rbp", {0x48, 0x89, 0xe5}, 3, STP_X86_MOV_RR},
	    {"mov %edi,%eax", {0x89, 0xf8}, 2, STP_X86_MOV_RR},
	    {"mov $1,%eax", {0xb8, 1, 0, 0, 0}, 5, STP_X86_MOV_RI},
	    {"lea 0x1(%rdi,%rdi,2),%eax", {0x8d, 0x44, 0x7f, 0x01}, 4, STP_X86_LEA},
	    {"lea 0x10(%rip),%rdi", {0x48, 0x8d, 0x3d, 0x10, 0, 0, 0}, 7, STP_X86_LEA},
	    {"sub $0x18,%rsp", {0x48, 0x83, 0xec, 0x18}, 4, STP_X86_ADDSUB_RI},
	    {"xor %eax,%eax", {0x31, 0xc0}, 2, STP_X86_XOR_SELF},
	    {"call rel32", {0xe8, 0x10, 0, 0, 0}, 5, STP_X86_CALL},
	    {"call *%rax", {0xff, 0xd0}, 2, STP_X86_CALL_IND},
	    {"call *0x8(%rip)", {0xff, 0x15, 8, 0, 0, 0}, 6, STP_X86_CALL_IND},
	    {"jmp rel8", {0xeb, 0x05}, 2, STP_X86_JMP},
	    {"jmp *(%rax,%rcx,8)", {0xff, 0x24, 0xc8}, 3, STP_X86_JMP_IND},
	    {"jne rel8", {0x75, 0x05}, 2, STP_X86_JCC},
	    {"jle rel32", {0x0f, 0x8e, 0x10, 0, 0, 0}, 6, STP_X86_JCC},
	    {"ret", {0xc3}, 1, STP_X86_RET},
	    {"ret $8", {0xc2, 8, 0}, 3, STP_X86_RET},
	    {"pushfq", {0x9c}, 1, STP_X86_PUSHF},
	    {"popfq", {0x9d}, 1, STP_X86_POPF},
	    {"mov %edi,0x10(%rip)", {0x89, 0x3d, 0x10, 0, 0, 0}, 6, STP_X86_OOL},
	    {"imul %esi,%edi", {0x0f, 0xaf, 0xfe}, 3, STP_X86_OOL},
	    {"loop rel8", {0xe2, 0xfe}, 2, STP_X86_REJECT},
	};
	for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
		struct _stp_x86_insn in;
		char name[96], d[96];
		int rc = _stp_x86_decode(t[i].b, t[i].n, 0x1000, &in);
		snprintf(name, sizeof name, "kind: %s", t[i].name);
		snprintf(d, sizeof d, "rc %d kind %d len %d, want kind %d len %zu", rc, in.kind,
			 in.len, t[i].kind, t[i].n);
		check(name, rc == 0 && in.kind == t[i].kind && in.len == t[i].n, d);
	}
}

static void emulation(void)
{
	struct user_regs_struct r;
	struct _stp_x86_insn in;
	uint64_t v;
	char d[128];

	memset(&r, 0, sizeof r);
	r.rsp = MEMBASE + 0x800;
	r.rbp = 0x1122334455667788ULL;
	int rc = emu((const uint8_t[]){0x55}, 1, 0x1000, &r, &in);
	memcpy(&v, mem + 0x7f8, 8);
	check("emulate push %rbp",
	      rc == 1 && r.rsp == MEMBASE + 0x7f8 && v == r.rbp && r.rip == 0x1001, "wrong");

	r.rbx = 0;
	rc = emu((const uint8_t[]){0x5b}, 1, 0x2000, &r, &in);
	check("emulate pop %rbx",
	      rc == 1 && r.rbx == 0x1122334455667788ULL && r.rsp == MEMBASE + 0x800, "wrong");

	/* pushfq stores RF as 0; popfq changes the arithmetic flags, TF,
	 * DF, AC and ID, never IF or IOPL, and clears RF */
	r.rsp = MEMBASE + 0x800;
	r.eflags = 0x10202 | 0x8c1; /* RF IF, CF ZF SF OF */
	rc = emu((const uint8_t[]){0x9c}, 1, 0x1000, &r, &in);
	memcpy(&v, mem + 0x7f8, 8);
	snprintf(d, sizeof d, "rsp %#llx stored %#llx", r.rsp, (unsigned long long)v);
	check("emulate pushfq",
	      rc == 1 && r.rsp == MEMBASE + 0x7f8 && v == 0xac3 && r.rip == 0x1001, d);
	v = 0x1d4 | 0x3000 | 0x40000; /* PF AF ZF SF TF, not IF; IOPL 3; AC */
	memcpy(mem + 0x7f8, &v, 8);
	r.eflags = 0x10202 | 0x801; /* RF IF, CF OF */
	rc = emu((const uint8_t[]){0x9d}, 1, 0x1000, &r, &in);
	snprintf(d, sizeof d, "rsp %#llx eflags %#llx", r.rsp, r.eflags);
	check("emulate popfq",
	      rc == 1 && r.rsp == MEMBASE + 0x800 && r.eflags == (0x202 | 0x1d4 | 0x40000) &&
		  r.rip == 0x1001,
	      d);

	r.rdi = 5;
	rc = emu((const uint8_t[]){0x8d, 0x44, 0x7f, 0x01}, 4, 0x1000, &r, &in);
	check("emulate lea 0x1(%rdi,%rdi,2),%eax", rc == 1 && r.rax == 16 && r.rip == 0x1004,
	      "wrong");

	r.rax = ~0ULL;
	rc = emu((const uint8_t[]){0x89, 0xf8}, 2, 0x1000, &r, &in);
	check("emulate mov %edi,%eax zero-extends", rc == 1 && r.rax == 5, "wrong");

	r.rax = 77;
	rc = emu((const uint8_t[]){0x31, 0xc0}, 2, 0x1000, &r, &in);
	check("emulate xor %eax,%eax", rc == 1 && r.rax == 0 && (r.eflags & 0x40), "wrong");

	r.rsp = MEMBASE + 0x800;
	rc = emu((const uint8_t[]){0xe8, 0x10, 0, 0, 0}, 5, 0x3000, &r, &in);
	memcpy(&v, mem + 0x7f8, 8);
	snprintf(d, sizeof d, "rip %#llx rsp %#llx ret %#llx", r.rip, r.rsp, (unsigned long long)v);
	check("emulate call rel32",
	      rc == 1 && r.rip == 0x3015 && r.rsp == MEMBASE + 0x7f8 && v == 0x3005, d);

	rc = emu((const uint8_t[]){0xc2, 8, 0}, 3, 0x3015, &r, &in);
	check("emulate ret $8", rc == 1 && r.rip == 0x3005 && r.rsp == MEMBASE + 0x808, "wrong");

	v = 0xabcdef;
	memcpy(mem + 0x100, &v, 8);
	r.rax = MEMBASE + 0x100 - 0x8 * 2;
	r.rcx = 2;
	r.rsp = MEMBASE + 0x800;
	rc = emu((const uint8_t[]){0xff, 0x24, 0xc8}, 3, 0x1000, &r, &in);
	check("emulate jmp *(%rax,%rcx,8)", rc == 1 && r.rip == 0xabcdef, "wrong");

	r.eflags = 0x40; /* ZF */
	rc = emu((const uint8_t[]){0x75, 0x05}, 2, 0x1000, &r, &in);
	check("emulate jne not taken", rc == 1 && r.rip == 0x1002, "wrong");
	r.eflags = 0x80; /* SF, OF clear: less */
	rc = emu((const uint8_t[]){0x0f, 0x8e, 0x10, 0, 0, 0}, 6, 0x1000, &r, &in);
	check("emulate jle taken", rc == 1 && r.rip == 0x1016, "wrong");

	r.rsp = 0x10; /* unmapped: the fault is reported, nothing changed */
	r.rip = 0x1000;
	rc = emu((const uint8_t[]){0x55}, 1, 0x1000, &r, &in);
	check("emulate push faulting", rc == -EFAULT && r.rsp == 0x10 && r.rip == 0x1000, "wrong");
}

static void out_of_line(void)
{
	struct _stp_x86_insn in;
	uint8_t out[16];
	int32_t d;
	int n;

	/* mov %edi,0x10(%rip) at 0x400000, copied to 0x401000: the target
	 * 0x400016 is now -0xfea from the copy's end */
	_stp_x86_decode((const uint8_t[]){0x89, 0x3d, 0x10, 0, 0, 0}, 6, 0x400000, &in);
	n = _stp_x86_ool_bytes(&in, 0x400000, 0x401000, out);
	memcpy(&d, out + 2, 4);
	check("out of line: RIP-relative displacement adjusted",
	      n == 6 && out[0] == 0x89 && 0x401000 + 6 + (int64_t)d == 0x400016, "wrong");
	n = _stp_x86_ool_bytes(&in, 0x400000, 0x7f0000000000ULL, out);
	check("out of line: out of reach refused", n == -ERANGE, "wrong");
}

int main(void)
{
	kinds();
	emulation();
	flags_vs_cpu();
	out_of_line();
	return failures ? 1 : 0;
}
