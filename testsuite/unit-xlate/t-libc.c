/* Library code in a traced region: calls through the PLT (built with
 * -z now: bound at start), an indirect call into libc through a function
 * pointer, and callbacks from libc into the program (qsort). The traced
 * function is work(); after it, the program prints what the driver's
 * tree (-L: libraries as leaves) must be, as "expect: LINE". */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NOINLINE __attribute__((noinline, noclone, noipa))

static int ncmp;

NOINLINE static int cmp(const void *a, const void *b)
{
	ncmp++;
	return *(const int *)a - *(const int *)b;
}

static size_t (*volatile len_fn)(const char *) = strlen;

NOINLINE static void put(const char *s)
{
	fputs(s, stdout);
}

/* qsort (calling back cmp), snprintf, strlen through a pointer, malloc,
 * strcpy, put (a tail call of fputs through its PLT stub), then a tail
 * call of free */
NOINLINE void work(void)
{
	int v[7] = { 3, 1, 2, 7, 5, 6, 4 };
	char buf[64];

	qsort(v, 7, sizeof *v, cmp);
	snprintf(buf, sizeof buf, "%d%d%d%d%d%d%d\n", v[0], v[1], v[2], v[3], v[4], v[5], v[6]);
	char *p = malloc(len_fn(buf) + 1);
	strcpy(p, buf);
	put(p);
	free(p);
}

int main(void)
{
	work();
	fflush(stdout);
	printf("expect: -> work\n");
	printf("expect:  -> @libc.so.6\n");
	for (int i = 0; i < ncmp; i++)
		printf("expect:   -> cmp\nexpect:   <- cmp\n");
	printf("expect:  <- @libc.so.6\n");
	for (int i = 0; i < 4; i++) /* snprintf, strlen, malloc, strcpy */
		printf("expect:  -> @libc.so.6\nexpect:  <- @libc.so.6\n");
	printf("expect:  -> put\nexpect:  => @libc.so.6\nexpect:  <- @libc.so.6\n");
	printf("expect: => @libc.so.6\nexpect: <- @libc.so.6\n");
	return 0;
}
