/* Scopes for scope.exp: a block that shadows a parameter, a marker in
 * main, globals of the same name in two CUs (scope_other.c). */
#include <sys/sdt.h>

int counter = 5;
static int shared = 11;
extern int other_get(int);

int f(int a, int b)
{
	int s = a + b;
	{
		int inner = s * 2;
		int a = inner + 1;
		s += a;
	}
	return s;
}

int many(int p1, int p2)
{
	int l1 = p1, l2 = p2, l3 = l1 + l2, l4 = l3 * 2, l5 = l4 - 1;
	return l1 + l2 + l3 + l4 + l5;
}

int main(int argc, char **argv)
{
	int r = f(argc, 2);
	(void)argv;
	STAP_PROBE1(scope, tick, r);
	counter += other_get(r) + many(1, 2);
	return shared + counter > 1000;
}
