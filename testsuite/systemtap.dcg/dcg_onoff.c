/* A server's loop for systemtap.dcg/onoff.exp: region() forever, which
 * the script traces at each call (switched on at its entry, off at its
 * return). region() does not start with a call. */
#include <stdio.h>

#define NI __attribute__((noinline))

volatile int sink;

NI int leaf(int x)
{
	sink = x;
	return x + 1;
}

NI int region(int x)
{
	sink = x;
	return leaf(x) * 3;
}

int main(void)
{
	printf("ready\n");
	fflush(stdout);
	for (unsigned i = 0;; i++)
		sink = region((int)i);
}
