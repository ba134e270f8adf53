/* Handlers that need the thread stopped (systemtap.dcg/stop.exp): the
 * same backtraces, registers and user memory under breakpoint and
 * translate. Built at -O2; the test checks with objdump that each case
 * is in the code. root_stop() makes:
 *   greet("direct", 1)            a direct call, a string argument
 *   via_ptr(greet, "pointer")     an indirect call (call *%reg)
 *   tail_greet("tail")            a tail call (jmp greet)
 *   raise(SIGUSR1)                the handler on_usr1, entered by the kernel
 *                                 inside libc, calls greet("signal", 4)
 * and prints the sum of what they returned. */
#include <signal.h>
#include <stdio.h>
#include <string.h>

#define NI __attribute__((noinline))

volatile long sink;

NI long greet(const char *who, long n)
{
	sink = n;
	return (long)strlen(who) * 10 + n;
}

NI long via_ptr(long (*f)(const char *, long), const char *s)
{
	return f(s, 2) + 1;
}

NI long tail_greet(const char *s)
{
	return greet(s, 3);
}

static void on_usr1(int sig)
{
	sink = greet("signal", 4) + sig;
}

/* the pointer through a volatile: the compiler cannot make the call direct */
static long (*volatile fp)(const char *, long) = greet;

NI long root_stop(void)
{
	long sum = greet("direct", 1);
	sum += via_ptr(fp, "pointer");
	sum += tail_greet("tail");
	raise(SIGUSR1);
	return sum + sink;
}

int main(void)
{
	signal(SIGUSR1, on_usr1);
	printf("sum %ld\n", root_stop());
	return 0;
}
