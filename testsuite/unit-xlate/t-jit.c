/* Code that changes under a traced thread: work() calls a function the
 * program wrote into memory (mov $N,%eax; ret), has a second thread write
 * it anew, calls it again, writes it itself, calls it again: each call
 * must return what the code says then (1, 2, 3), not what an old
 * translation did.
 *   t-jit rwx     one anonymous rwx mapping
 *   t-jit alias   a memfd mapped twice: written through an rw- mapping,
 *                 run through an r-x one
 * It prints the tree the driver (-L) must show as "expect:". */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline, noclone, noipa))

static uint8_t *wr, *rx; /* the code, written and run */

static void put(int n)
{
	uint8_t code[] = { 0xb8, (uint8_t)n, 0, 0, 0, 0xc3 };
	memcpy(wr, code, sizeof code);
	__builtin___clear_cache((char *)rx, (char *)rx + sizeof code);
}

static void *writer(void *arg)
{
	put(2);
	return arg;
}

NOINLINE int work(void)
{
	int (*f)(void) = (int (*)(void))(uintptr_t)rx;
	pthread_t th;
	int a, b, c;

	a = f();
	pthread_create(&th, NULL, writer, NULL);
	pthread_join(th, NULL);
	b = f();
	put(3);
	c = f();
	return a * 100 + b * 10 + c;
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "alias")) {
		int fd = memfd_create("t-jit", 0);
		if (fd < 0 || ftruncate(fd, 4096) < 0)
			return 1;
		wr = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		rx = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_SHARED, fd, 0);
	} else {
		wr = rx = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	}
	if (wr == MAP_FAILED || rx == MAP_FAILED)
		return 1;
	put(1);
	printf("results: %d\n", work());
	/* the driver's names: an address, or the memfd's mapping */
	char name[64];
	snprintf(name, sizeof name, wr == rx ? "%p" : "@memfd:t-jit (deleted)", (void *)rx);
	printf("expect: -> work\nexpect:  -> %s\nexpect:  <- %s\n", name, name);
	printf("expect:  -> @libc.so.6\nexpect:  <- @libc.so.6\n"
	       "expect:  -> @libc.so.6\nexpect:  <- @libc.so.6\n");
	for (int i = 0; i < 2; i++)
		printf("expect:  -> %s\nexpect:  <- %s\n", name, name);
	printf("expect: <- work\n");
	return 0;
}
