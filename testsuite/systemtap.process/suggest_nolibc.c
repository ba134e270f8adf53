/* suggest.exp's program: functions, SDT markers and a library of its own
 * whose misspelled names the messages suggest. It needs nothing else (no
 * libc, no start files), so the names it has are only these and their
 * distances to the misspellings all differ; it is resolved, never run. */
#include <sys/sdt.h>

int suggest_lib_value(void);

__attribute__((noinline)) int compute_total(int n)
{
	STAP_PROBE1(app, request__start, n);
	return n * 2;
}

__attribute__((noinline)) int compute_averages(int n)
{
	STAP_PROBE1(app, request__done, n);
	return n / 2;
}

__attribute__((noinline)) void report(void)
{
	__asm__ volatile("");
}

__attribute__((noinline)) void print_report(void)
{
	report();
}

void _start(void)
{
	print_report();
	compute_total(compute_averages(4) + suggest_lib_value());
	for (;;)
		;
}
