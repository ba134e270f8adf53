/* libdcgj.so for dcg_jumps.c: lib_jump(f) calls lib_leaf, then jumps to
 * f through a register (the shape of ld.so's _dl_call_fini tail-calling a
 * module's _fini). */
volatile int lib_sink;

__attribute__((noinline)) int lib_leaf(int x)
{
	lib_sink = x;
	return x + 1;
}

__asm__(".text\n"
	".globl lib_jump\n.type lib_jump,@function\nlib_jump:\n"
	"\tpush %rbx\n\tmov %rdi, %rbx\n\tmov $1, %edi\n\tcall lib_leaf\n"
	"\tmov %rbx, %rax\n\tpop %rbx\n\tjmp *%rax\n.size lib_jump, .-lib_jump\n");
