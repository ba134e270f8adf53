/* The program of cast.exp: f() gets a pointer to a struct point. */
#include <stdio.h>

struct point {
	int x, y;
	char name[16];
};

struct point pts[2] = {{1, 2, "first"}, {3, 4, "second"}};

__attribute__((noinline)) int f(struct point *p)
{
	return p->x + p->y;
}

int main(void)
{
	printf("%d\n", f(pts));
	return 0;
}
