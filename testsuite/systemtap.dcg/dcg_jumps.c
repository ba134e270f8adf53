/* Jumps the dynamic call graph must classify as callgrind does
 * (systemtap.dcg/jumps.exp): a jump is a call when it goes to a function's
 * first instruction (its own too), to a PLT stub, or into another module.
 * Built at -O2, also stripped; asm where the shape matters. Each mode runs
 * one root function:
 *   xmod     libdcgj.so's lib_jump() tail-jumps through a register
 *            (`jmp *%rax`, as ld.so's _dl_call_fini into _fini) to xtarget
 *            here: a call, with or without a symbol at xtarget
 *   jmponly  functions whose whole body is `jmp *ptr(%rip)` (a PLT stub's
 *            shape, in .text): one to code with no symbol (no call),
 *            one to a function (a tail call)
 *   selftail a function jumping back to its own first instruction
 *   rep      rep stos / rep movs (no branch, whatever the mechanism)
 *   names    two functions whose 600-character names differ at the end,
 *            and a recursion 1100 deep
 *   got      a tail call through the GOT (`jmp *f@GOTPCREL(%rip)`)
 *            after other code, a tail call to a PLT stub, and calls
 *            through .plt.sec stubs (endbr64; jmp) when built with
 *            -z ibtplt
 *   nosize   a function whose symbol has no size: a loop inside it is no
 *            call, a jump to its start is
 *   vdso     a tail jump through a register into the vDSO
 * With -fcf-protection the asm functions start with endbr64 too. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <string.h>
#include <time.h>

#ifdef __CET__
#define ENDBR "\tendbr64\n"
#else
#define ENDBR ""
#endif

#define NI __attribute__((noipa))

volatile int sink;

NI int leaf(int x)
{
	sink = x;
	return x + 1;
}

/* ---- xmod ---- */
void lib_jump(void (*f)(void));
int lib_leaf(int);

/* no tail calls where the test wants calls: sink = leaf(...), noipa */
NI void xtarget(void)
{
	sink = leaf(1);
}

NI void root_xmod(void)
{
	lib_jump(xtarget);
	sink = leaf(2);
}

/* ---- jmponly: nosym_code has no symbol (a local label right after a
 * function with a size) ---- */
int jmp_nosym(void);
int jmp_sym(void);
NI int jmp_target(void)
{
	sink = leaf(3);
	return 3;
}
__asm__(".text\n"
	".globl jmp_nosym\n.type jmp_nosym,@function\njmp_nosym:\n" ENDBR
	"\tjmp *nosym_ptr(%rip)\n.size jmp_nosym, .-jmp_nosym\n"
	".globl jmp_sym\n.type jmp_sym,@function\njmp_sym:\n" ENDBR
	"\tjmp *sym_ptr(%rip)\n.size jmp_sym, .-jmp_sym\n"
	".Lnosym_code:\n"
	"\tsub $8, %rsp\n\tmov $4, %edi\n\tcall leaf\n\tadd $8, %rsp\n\tret\n"
	".data\n.balign 8\n"
	"nosym_ptr:\n\t.quad .Lnosym_code\n"
	"sym_ptr:\n\t.quad jmp_target\n"
	".text\n");

NI void root_jmponly(void)
{
	sink = jmp_nosym();
	sink = jmp_sym();
}

/* ---- selftail(n): n calls of leaf, looping by jumping to its start ---- */
int selftail(int n);
__asm__(".text\n"
	".globl selftail\n.type selftail,@function\nselftail:\n" ENDBR
	"\ttest %edi, %edi\n\tjle 1f\n"
	"\tpush %rdi\n\tcall leaf\n\tpop %rdi\n"
	"\tdec %edi\n\tjmp selftail\n"
	"1:\tmov %edi, %eax\n\tret\n.size selftail, .-selftail\n");

NI void root_selftail(void)
{
	sink = selftail(3);
}

/* ---- rep: rep stosb, rep movsb of n bytes, each followed by a call
 * (a step trap in the middle of a rep must not make it a call) ---- */
static char rep_a[64], rep_b[64];
void rep_fill(char *dst, int n);
void rep_copy(char *dst, const char *src, int n);
__asm__(".text\n"
	".globl rep_fill\n.type rep_fill,@function\nrep_fill:\n" ENDBR
	"\tpush %rbx\n\tmov %esi, %ecx\n\tmov $0x5a, %eax\n\trep stosb\n"
	"\tmov $5, %edi\n\tcall leaf\n\tpop %rbx\n\tret\n.size rep_fill, .-rep_fill\n"
	".globl rep_copy\n.type rep_copy,@function\nrep_copy:\n" ENDBR
	"\tpush %rbx\n\tmov %edx, %ecx\n\trep movsb\n"
	"\tmov $6, %edi\n\tcall leaf\n\tpop %rbx\n\tret\n.size rep_copy, .-rep_copy\n");

NI void root_rep(void)
{
	rep_fill(rep_a, 7);
	rep_copy(rep_b, rep_a, 9);
	sink = rep_b[8];
}

/* ---- names: LONG is 600 characters ---- */
#define S10 "nnnnnnnnnn"
#define S100 S10 S10 S10 S10 S10 S10 S10 S10 S10 S10
#define LONG S100 S100 S100 S100 S100 S100
NI void long_one(void) __asm__(LONG "_one");
NI void long_two(void) __asm__(LONG "_two");
NI void long_one(void)
{
	sink = leaf(6);
}
NI void long_two(void)
{
	sink = leaf(7);
}
NI int deep(int n)
{
	if (n <= 0) {
		sink = leaf(8);
		return 0;
	}
	int r = deep(n - 1);
	sink = r;
	return r;
}

NI void root_names(void)
{
	long_one();
	long_two();
	sink = deep(1100);
}

/* ---- got: lib_leaf through the GOT at the end of got_tail, through
 * its PLT stub at the end of plt_tail ---- */
NI int got_tail(int x) __attribute__((optimize("no-plt")));
NI int got_tail(int x)
{
	sink = x;
	return lib_leaf(x + 1);
}
NI int plt_tail(int x)
{
	sink = x;
	return lib_leaf(x + 2);
}

NI void root_got(void)
{
	sink = got_tail(9);
	sink = lib_leaf(10);
	sink = plt_tail(11);
}

/* ---- nosize(n): its symbol has no .size; leaf twice in a loop, then
 * once more by jumping back to its start with n = 0 ---- */
int nosize(int n);
__asm__(".text\n"
	".globl nosize\n.type nosize,@function\nnosize:\n" ENDBR
	"\tpush %rbx\n\tmov %edi, %ebx\n"
	"2:\tmov %ebx, %edi\n\tcall leaf\n\tsub $1, %ebx\n\tjg 2b\n"
	"\tpop %rbx\n\ttest %edi, %edi\n\tmov $0, %edi\n\tjne nosize\n\tret\n");

NI void root_nosize(void)
{
	sink = nosize(2);
}

/* ---- vdso: vdso_tail(f, a, b) jumps to f(a, b), here the vDSO's
 * clock_gettime (leaf() where there is no vDSO: valgrind) ---- */
int vdso_tail(void *f, long a, void *b);
__asm__(".text\n"
	".globl vdso_tail\n.type vdso_tail,@function\nvdso_tail:\n" ENDBR
	"\tmov %rdi, %rax\n\tmov %rsi, %rdi\n\tmov %rdx, %rsi\n\tjmp *%rax\n"
	".size vdso_tail, .-vdso_tail\n");

NI void root_vdso(void)
{
	void *h = dlopen("linux-vdso.so.1", RTLD_LAZY | RTLD_NOLOAD);
	void *f = h ? dlsym(h, "__vdso_clock_gettime") : NULL;
	struct timespec ts;

	sink = vdso_tail(f ? f : (void *)leaf, CLOCK_MONOTONIC, &ts);
}

int main(int argc, char **argv)
{
	const char *w = argc > 1 ? argv[1] : "";

	if (!strcmp(w, "xmod"))
		root_xmod();
	else if (!strcmp(w, "jmponly"))
		root_jmponly();
	else if (!strcmp(w, "selftail"))
		root_selftail();
	else if (!strcmp(w, "rep"))
		root_rep();
	else if (!strcmp(w, "names"))
		root_names();
	else if (!strcmp(w, "got"))
		root_got();
	else if (!strcmp(w, "nosize"))
		root_nosize();
	else if (!strcmp(w, "vdso"))
		root_vdso();
	return 0;
}
