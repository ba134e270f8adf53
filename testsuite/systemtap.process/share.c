/* Several functions and PLT calls, for share.exp: probes of a wildcard
 * whose handlers are identical share one C function. */
#include <stdio.h>
#include <stdlib.h>

__attribute__((noinline)) int leaf(int x) { return x + 1; }
__attribute__((noinline)) int mid(int x) { return leaf(x) * 2; }
__attribute__((noinline)) int top(int x) { return mid(x) + leaf(x); }

int main(void)
{
	char *p = malloc(16);
	int v = top(1);
	free(p);
	return v == 6 ? 0 : 1;
}
