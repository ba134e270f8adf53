/* The dynamic call graph's test program (systemtap.dcg/calls.exp). Built
 * at -O2; every function is noinline so the calls stay calls; the test
 * checks with objdump that each case really is in the code.
 *   dcg_calls own     root(): direct and indirect calls, recursion, a
 *                     tail call (tail -> leaf), nothing else
 *   dcg_calls libc    root_libc(): strlen through the PLT, qsort calling
 *                     cmp back; prints the number of cmp calls
 *   dcg_calls thread  another thread runs other() (untraced, same leaf
 *                     code) while the main thread runs root()
 *   dcg_calls loop    root() forever (for Ctrl-C) */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NI __attribute__((noinline))

volatile int sink;
static volatile int stop_other, ncmp;

NI int leaf(int x)
{
	sink = x;
	return x + 1;
}

/* a tail call: jmp leaf */
NI int tail(int x)
{
	return leaf(x * 3);
}

/* recursion: rec(2) calls rec(1) calls rec(0); each n > 0 calls leaf */
NI int rec(int n)
{
	if (n <= 0)
		return 0;
	int r = rec(n - 1);
	sink = r;
	return r + leaf(n);
}

/* two indirect calls */
NI int twice(int (*f)(int), int x)
{
	int a = f(x);
	sink = a;
	return a + f(x + 1);
}

int (*volatile fp)(int) = leaf;

NI void root(void)
{
	sink = rec(2);
	sink = twice(fp, 1);
	sink = tail(2);
}

NI int cmp(const void *a, const void *b)
{
	ncmp++;
	return *(const int *)a - *(const int *)b;
}

char text[] = "hello";

NI void root_libc(void)
{
	int v[4] = {4, 1, 3, 2};
	sink = (int)strlen(text);
	qsort(v, 4, sizeof v[0], cmp);
	sink = v[0];
}

/* a program variable named like the pseudo-variable (which wins) */
NI int named(int dynamic_call_graph)
{
	return leaf(dynamic_call_graph);
}

NI void other(void)
{
	while (!stop_other)
		sink = leaf(7) + tail(1);
}

static void *other_thread(void *arg)
{
	(void)arg;
	other();
	return NULL;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "own";

	if (!strcmp(mode, "own")) {
		root();
	} else if (!strcmp(mode, "libc")) {
		root_libc();
		printf("cmp calls: %d\n", ncmp);
	} else if (!strcmp(mode, "thread")) {
		pthread_t th;
		pthread_create(&th, NULL, other_thread, NULL);
		usleep(20000);
		root();
		usleep(20000);
		stop_other = 1;
		pthread_join(th, NULL);
	} else if (!strcmp(mode, "named")) {
		sink = named(5);
	} else if (!strcmp(mode, "loop")) {
		for (;;)
			root();
	}
	return 0;
}
