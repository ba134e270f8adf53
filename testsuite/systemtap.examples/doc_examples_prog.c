/* A target for the systemtap-doc examples that take a program and a
 * function (profiling/graphcall.stp): work() is called three times. */
#include <stdio.h>

__attribute__((noinline)) int work(int i)
{
	return i * 2 + 1;
}

int main(void)
{
	int s = 0;
	for (int i = 0; i < 3; i++)
		s += work(i);
	printf("%d\n", s);
	return 0;
}
