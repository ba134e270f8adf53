/* sdtregs.exp: SDT operands with an index register and with the 8-bit
 * high registers. idx's operands are gcc's (at -O2: "-8@(%rdi,%rsi,8)",
 * "1@1(%rsi,%rdx)"); high's note is written by hand, since gcc does not
 * pick %ah or %bh for an "r" operand, and so is disp's, whose
 * displacements are sums as an assembler may leave them ("-12+4(%rbp)"). */
#include <sys/sdt.h>

long arr[4] = {10, 20, 30, 40};
unsigned char bytes[8] = {1, 2, 3, 4, 5, 6, 7, 8};

__attribute__((noinline)) long idx(long *a, long i, unsigned char *b)
{
	STAP_PROBE3(sdtx, idx, a[i], b[i + 1], i);
	return i;
}

/* ah = 0x12, bh = 0xfe, rdx = 2 at the marker; arr(,%rdx,8) is arr[2]. */
long highregs(void);
__asm__(".text\n"
	".globl highregs\n"
	".type highregs, @function\n"
	"highregs:\n"
	"	push %rbx\n"
	"	mov $0x1234, %eax\n"
	"	mov $0xfe00, %ebx\n"
	"	mov $2, %edx\n"
	"990:	nop\n"
	"	pop %rbx\n"
	"	ret\n"
	".size highregs, .-highregs\n"
	".pushsection .note.stapsdt,\"?\",\"note\"\n"
	".balign 4\n"
	".4byte 992f-991f, 994f-993f, 3\n"
	"991:	.asciz \"stapsdt\"\n"
	"992:	.balign 4\n"
	"993:	.8byte 990b, _.stapsdt.base, 0\n"
	".asciz \"sdtx\"\n"
	".asciz \"high\"\n"
	".asciz \"1@%ah -1@%bh 8@arr(,%rdx,8) 2@%dx\"\n"
	"994:	.balign 4\n"
	".popsection\n"
	".ifndef _.stapsdt.base\n"
	".pushsection .stapsdt.base,\"aG\",\"progbits\",.stapsdt.base,comdat\n"
	".weak _.stapsdt.base\n"
	".hidden _.stapsdt.base\n"
	"_.stapsdt.base: .space 1\n"
	".size _.stapsdt.base, 1\n"
	".popsection\n"
	".endif\n");

/* -8(%rbp) = 77, -12(%rbp) = -5 at the marker. */
long dispsum(void);
__asm__(".text\n"
	".globl dispsum\n"
	".type dispsum, @function\n"
	"dispsum:\n"
	"	push %rbp\n"
	"	mov %rsp, %rbp\n"
	"	sub $16, %rsp\n"
	"	movl $77, -8(%rbp)\n"
	"	movl $-5, -12(%rbp)\n"
	"990:	nop\n"
	"	xor %eax, %eax\n"
	"	leave\n"
	"	ret\n"
	".size dispsum, .-dispsum\n"
	".pushsection .note.stapsdt,\"?\",\"note\"\n"
	".balign 4\n"
	".4byte 992f-991f, 994f-993f, 3\n"
	"991:	.asciz \"stapsdt\"\n"
	"992:	.balign 4\n"
	"993:	.8byte 990b, _.stapsdt.base, 0\n"
	".asciz \"sdtx\"\n"
	".asciz \"disp\"\n"
	".asciz \"4@-12+4(%rbp) -4@-8-4(%rbp) 8@arr+16-8(%rip)\"\n"
	"994:	.balign 4\n"
	".popsection\n");

int main(int argc, char **argv)
{
	(void)argv;
	return idx(arr, argc + 1, bytes) + highregs() + dispsum() == 0;
}
