/* Calls into libdwtest.so (the .library and symbolization tests). */
#include <stdio.h>
int lib_entry(int v);
int main(void)
{
	printf("%d\n", lib_entry(4));
	return 0;
}
