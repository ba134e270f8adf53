/* For listing.exp: -L names array variables as SystemTap does, the
 * element type and [] whatever the bounds (one [] for two dimensions). */
#include <string.h>

struct la_s {
	int v[4];
};
typedef int la_row[5];

int la_f(char *p, int n)
{
	char buf[4096];
	int two[2][3];
	const char *av[4];
	struct la_s sa[2];
	la_row rows[2];

	memset(buf, n, sizeof buf);
	two[0][0] = n;
	av[0] = p;
	sa[0].v[0] = n;
	rows[0][0] = n;
	return buf[1] + two[0][0] + av[0][0] + sa[0].v[0] + rows[0][0];
}

int main(void)
{
	return la_f("x", 1) == 124 + 4 ? 0 : 1;
}
