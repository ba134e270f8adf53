/* stackargs.exp: arguments past the sixth are passed on the stack; the
 * probes (after the prologue) must read each from its own slot. pushy()
 * saves registers in its prologue, so the stack pointer there is not the
 * one at entry. */
#include <stdio.h>

__attribute__((noinline)) long sink(long x)
{
	__asm__ volatile("" : "+r"(x));
	return x;
}

__attribute__((noinline)) long many(long a1, long a2, long a3, long a4, long a5, long a6,
				    long a7, long a8, long a9, long a10)
{
	return a1 + a2 + a3 + a4 + a5 + a6 + a7 + a8 + a9 + a10;
}

__attribute__((noinline)) long pushy(int b1, char b2, long b3, short b4, long b5, long b6,
				     int b7, short b8, long b9)
{
	char buf[32];
	long s = sink(b1) + sink(b2) + sink(b3) + sink(b4) + sink(b5) + sink(b6);

	snprintf(buf, sizeof buf, "%ld", s);
	return s + sink(b7) + sink(b8) + sink(b9) + buf[0];
}

int main(void)
{
	long r = many(1, 2, 3, 4, 5, 6, 7, 8, 9, 10);

	r += pushy(-1, 'A', 3, -4, 5, 6, -7000, 800, 9000000000L);
	return r == 0;
}
