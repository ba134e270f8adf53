/* unwind.exp: one function, target(), called from different callers at
 * different depths. "unwind -e" prints what the probe on target() must
 * print for each call: the caller, the caller's caller, and the brief
 * backtrace's names up to main. noipa keeps every call a real call (no
 * inlining, clones or tail calls) at -O2. */
#include <stdio.h>
#include <string.h>

#define NOINLINE __attribute__((noipa))

static volatile int sink;

NOINLINE static int target(int x)
{
	sink += x;
	return sink * 3 + x;
}

NOINLINE static int first_caller(int x)
{
	return target(x + 1) * 2 + 1;
}

NOINLINE static int second_caller(int x)
{
	return target(x + 2) * 5 + 7;
}

NOINLINE static int third_caller(int x)
{
	return second_caller(x + 3) * 11 + 13;
}

int main(int argc, char **argv)
{
	int total = 0;

	if (argc > 1 && strcmp(argv[1], "-e") == 0) {
		printf("second_caller main target second_caller main\n");
		printf("first_caller main target first_caller main\n");
		printf("second_caller third_caller target second_caller third_caller main\n");
		printf("first_caller main target first_caller main\n");
		return 0;
	}
	total += second_caller(argc);
	total += first_caller(argc);
	total += third_caller(argc);
	total += first_caller(argc);
	return total == 12345;
}
