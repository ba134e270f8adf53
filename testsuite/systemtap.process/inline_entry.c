/* malloc(12345): libc's _int_malloc, whose first instruction belongs to
 * an inlined instance (checked_request2size), gets bytes = 12345
 * (inline_entry.exp). */
#include <stdio.h>
#include <stdlib.h>

int main(void)
{
	char *p = malloc(12345);
	printf("%s\n", p ? "allocated" : "failed");
	free(p);
	return 0;
}
