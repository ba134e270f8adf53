/* pushfq/popfq in traced code (popf.exp): region() calls flagger()
 * twice, which saves and restores its flags. */
#include <stdio.h>

__attribute__((noinline)) void flagger(void)
{
	__asm__ volatile("pushfq\n\tpopfq" ::: "memory", "cc");
}

__attribute__((noinline)) void region(void)
{
	flagger();
	flagger();
}

int main(void)
{
	region();
	for (volatile int i = 0; i < 1000; i++)
		;
	printf("done\n");
	return 0;
}
