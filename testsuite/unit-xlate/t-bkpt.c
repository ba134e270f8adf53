/* Breakpoints placed and removed while the code under them is already
 * translated: work() calls g() six times and marker() after the second
 * and the fourth call; the driver (-a marker:g -a marker:g_mid) places
 * probes at g's entry and at a label inside g's first block at the first
 * marker() and removes them at the second: each must fire exactly for the
 * third and fourth calls. The program prints the tree (-L) and the probe
 * counts the driver must show, as "expect:". */
#include <stdio.h>

#define NOINLINE __attribute__((noinline, noclone, noipa))

NOINLINE int g(int x)
{
	int y = x * 3;
	__asm__ volatile(".globl g_mid\ng_mid:" : "+r"(y));
	return y + 1;
}

NOINLINE void marker(void)
{
	__asm__ volatile("");
}

NOINLINE int work(void)
{
	int s = 0;
	for (int i = 0; i < 6; i++) {
		s += g(i);
		if (i == 1 || i == 3)
			marker();
	}
	return s;
}

int main(void)
{
	printf("work: %d\n", work());
	printf("expect: -> work\n");
	for (int i = 0; i < 6; i++) {
		printf("expect:  -> g\nexpect:  <- g\n");
		if (i == 1 || i == 3)
			printf("expect:  -> marker\nexpect:  <- marker\n");
	}
	printf("expect: <- work\nexpect: probe g hits=2\nexpect: probe g_mid hits=2\n");
	return 0;
}
