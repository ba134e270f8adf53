/* Target for a return probe on code entered by a jump (as a .cold part
 * is): at its entry [rsp] holds no return address but data, here a
 * pointer to a heap buffer. The engine must not take it for one and put
 * an int3 there (it did: the heap's byte became 0xcc and malloc aborted).
 * `-r jumped_into`: its hits counted, no return (it has no frame of its
 * own), the buffer unchanged. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void trampoline(unsigned char *p);
/* trampoline: push the pointer, jump into jumped_into, which pops it and
 * returns for trampoline */
__asm__(".text\n"
	".globl trampoline\n"
	".type trampoline, @function\n"
	"trampoline:\n"
	"	push %rdi\n"
	"	jmp jumped_into\n"
	".size trampoline, .-trampoline\n"
	".globl jumped_into\n"
	".type jumped_into, @function\n"
	"jumped_into:\n"
	"	pop %rax\n"
	"	ret\n"
	".size jumped_into, .-jumped_into\n");

int main(void)
{
	unsigned char *buf = malloc(64);
	int bad = 0;

	if (!buf)
		return 1;
	memset(buf, 0x5a, 64);
	for (int i = 0; i < 3; i++)
		trampoline(buf);
	for (int i = 0; i < 64; i++)
		bad += buf[i] != 0x5a;
	printf("buf[0]=%02x, %d bytes changed\n", buf[0], bad);
	free(buf);
	printf("expect: probe jumped_into hits=3 returns=0 retsum=0\n");
	return 0;
}
