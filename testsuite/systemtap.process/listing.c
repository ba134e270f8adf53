/* For listing.exp: stap -l / -L of this program's functions. The test
 * finds each function's line by its "LINE:" mark below. */
#include <stdio.h>

struct point {
	int x, y;
};

int lst_add(int a, int b) /* LINE:lst_add */
{
	int sum = a + b;
	return sum;
}

static long lst_scale(struct point *p, unsigned char k) /* LINE:lst_scale */
{
	return p->x * k;
}

int main(void) /* LINE:main */
{
	struct point pt = {2, 3};
	printf("%d %ld\n", lst_add(1, 2), lst_scale(&pt, 4));
	return 0;
}
