/* The dynamic call graph at scale (systemtap.dcg/scale.exp). Built at
 * -O2 -z now; every function is noinline so the calls stay calls.
 *   dcg_scale N        root() calls small (its long name makes a trace
 *                      line ~110 bytes: 1M lines are more than the
 *                      test's 64 MiB memory bound) N times, and every
 *                      1000th time mid(), which calls small once more
 *   dcg_scale N print  the same, and prints a line of its own to stdout
 *                      (unbuffered) every 1000 calls, inside the region
 * After root() returns it prints "count small S mid M lines L". */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NI __attribute__((noinline))
#define SMALL small_callee_with_a_long_name_so_that_the_whole_trace_is_bigger_than_the_memory_bound

volatile int sink;
static long n_small, n_mid, n_lines;
static int print_mode;

NI int SMALL(int x)
{
	n_small++;
	sink = x;
	return x + 1;
}

NI int mid(int x)
{
	n_mid++;
	return SMALL(x) * 2;
}

NI void root(long n)
{
	for (long i = 0; i < n; i++) {
		sink = SMALL((int)i);
		if (i % 1000 == 999) {
			sink = mid((int)i);
			if (print_mode) {
				printf("program line %ld\n", i);
				n_lines++;
			}
		}
	}
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000;
	print_mode = argc > 2 && !strcmp(argv[2], "print");
	setvbuf(stdout, NULL, _IONBF, 0);
	root(n);
	printf("count small %ld mid %ld lines %ld\n", n_small, n_mid, n_lines);
	return 0;
}
