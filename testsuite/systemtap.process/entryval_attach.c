/* entryval.exp: at -O2, spin's a is an entry value in its loop (used
 * only before it); it prints "ready" once in the loop, for -x. */
#include <stdio.h>
#include <unistd.h>

volatile int sink;

__attribute__((noinline)) int use(int v)
{
	sink = v;
	return v;
}

__attribute__((noinline)) int spin(int a, int n)
{
	int r = use(a);
	printf("ready\n");
	fflush(stdout);
	for (int i = 0; i < n; i++) {
		r += use(i); /* line 21 */
		usleep(10000);
	}
	return r;
}

int main(int argc, char **argv)
{
	(void)argv;
	return spin(argc + 6, 3000) == 0;
}
