/* A target whose debug information is moved out of it (debuginfo.exp).
 * VARIANT makes each copy's build ID its own. */
#include <stdio.h>

static int scale(int x)
{
	int y = x * VARIANT;
	return y + 1;
}

int main(void)
{
	int s = 0;
	for (int i = 1; i <= 3; i++)
		s += scale(i);
	printf("sum %d\n", s);
	return 0;
}
