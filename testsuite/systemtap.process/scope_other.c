/* The second CU of scope.c: its own static "shared". */
static int shared = 22;
int other_total = 3;

int other_get(int x)
{
	int y = x + shared;
	return y + other_total;
}
