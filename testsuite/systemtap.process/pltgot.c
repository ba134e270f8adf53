/* For listing.exp: puts is called through the PLT; free is called and
 * its address taken, so the call goes through a .plt.got stub, which
 * SystemTap does not list as a .plt point. */
#include <stdio.h>
#include <stdlib.h>

void (*volatile pg_keep)(void *);

int main(void)
{
	pg_keep = free;
	void *p = malloc(8);
	puts("pltgot");
	free(p);
	return 0;
}
