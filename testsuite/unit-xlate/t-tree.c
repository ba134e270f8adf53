/* Milestone 1 of the in-process engine: a call tree of plain direct calls,
 * an indirect call, a recursion and a function returning a value through
 * several levels, built at -O2. The traced function is tree(). */
#include <stdio.h>

#define NOINLINE __attribute__((noinline, noclone, noipa))

NOINLINE int leaf(int x)
{
	__asm__ volatile("" : "+r"(x));
	return x * 3 + 1;
}

NOINLINE int mid(int x)
{
	int a = leaf(x);
	int b = leaf(a);
	__asm__ volatile("" : "+r"(a));
	return a + b;
}

NOINLINE int rec(int n)
{
	if (n <= 0)
		return leaf(n);
	int r = rec(n - 1);
	__asm__ volatile("" : "+r"(r));
	return r + 1;
}

static int (*volatile fp)(int) = leaf;

NOINLINE int tree(int n)
{
	int s = 0;
	for (int i = 0; i < n; i++)
		s += mid(i);
	s += fp(s);
	s += rec(2);
	__asm__ volatile("" : "+r"(s));
	return s;
}

int main(void)
{
	printf("tree(2) = %d\n", tree(2));
	fflush(stdout);
	return 0;
}
