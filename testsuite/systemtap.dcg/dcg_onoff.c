/* For systemtap.dcg/onoff.exp, tracing switched on and off many times:
 *   (no argument)  a server's loop: region() forever, which the script
 *                  traces at each call; region() does not start with a
 *                  call
 *   jit            code in an anonymous page rewritten between the
 *                  traced calls of jit_region(): `mov $1,%eax; ret`,
 *                  then `mov %rsi,%rax; jmp *%rsi` (a tail call to leaf),
 *                  four times (no instruction starts at the same place
 *                  in both but the first) */
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#define NI __attribute__((noinline))

volatile int sink;

NI int leaf(int x)
{
	sink = x;
	return x + 1;
}

NI int region(int x)
{
	sink = x;
	return leaf(x) * 3;
}

NI int jit_region(void *code, int (*f)(int))
{
	sink = 0;
	return ((int (*)(int, int (*)(int)))code)(5, f) + 1;
}

static int jit(void)
{
	static const unsigned char ret1[] = {0xb8, 1, 0, 0, 0, 0xc3}; /* mov $1,%eax; ret */
	static const unsigned char tail[] = {0x48, 0x89, 0xf0, 0xff, 0xe6}; /* mov %rsi,%rax; jmp *%rsi */
	unsigned char *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int s = 0;

	if (p == MAP_FAILED)
		return 1;
	for (int i = 0; i < 4; i++) {
		memset(p, 0xcc, 16);
		if (i % 2)
			memcpy(p, tail, sizeof tail);
		else
			memcpy(p, ret1, sizeof ret1);
		__builtin___clear_cache((char *)p, (char *)p + 16);
		s = s * 10 + jit_region(p, leaf);
	}
	printf("jit %d\n", s);
	return 0;
}

int main(int argc, char **argv)
{
	(void)argv;
	if (argc > 1)
		return jit();
	printf("ready\n");
	fflush(stdout);
	for (unsigned i = 0;; i++)
		sink = region((int)i);
}
