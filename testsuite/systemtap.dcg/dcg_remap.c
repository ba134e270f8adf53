/* Code replaced under the dynamic call graph's breakpoints: root() runs
 * code in an anonymous executable page (its ret gets an int3 while
 * traced), unmaps the page and maps other code at the same address. When
 * tracing ends the int3 is removed; the engine must not write the old
 * byte over the new code, whose byte at that offset differs (ff, not the
 * old ret's c3). The program prints what the new code returns after
 * tracing: 43 when intact, 42 when the old ret was written back. */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#define NI __attribute__((noinline))

static const unsigned char old_code[] = {0xb8, 1, 0, 0, 0, 0xc3};		 /* mov $1,%eax; ret */
static const unsigned char new_code[] = {0xb8, 42, 0, 0, 0, 0xff, 0xc0, 0xc3}; /* mov $42; inc; ret */
static void *page;

NI int call_code(void *p)
{
	return ((int (*)(void))p)();
}

NI int root(void)
{
	void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS,
		       -1, 0);
	if (p == MAP_FAILED)
		return -1;
	memcpy(p, old_code, sizeof old_code);
	int a = call_code(p);
	munmap(p, 4096);
	page = mmap(p, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
		    MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	if (page != p)
		return -2;
	memcpy(page, new_code, sizeof new_code);
	return a * 1000 + call_code(page);
}

int main(void)
{
	printf("traced: %d\n", root());
	printf("after: %d\n", call_code(page));
	return 0;
}
