/* A program stap leaves while it is traced (leave.exp): it installs its
 * own SIGTRAP handler, says "ready", then makes rounds of calls until a
 * file given as argv[1] appears (the test makes it once stap is gone);
 * then it raises SIGTRAP for its own handler and prints its sums, which
 * must be what the calls compute untraced. */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static volatile long sink;
static volatile sig_atomic_t trapped;

static void on_trap(int sig)
{
	(void)sig;
	trapped++;
}

__attribute__((noinline)) void leaf(long i)
{
	sink += i & 7;
}

__attribute__((noinline)) void region(long n)
{
	for (long i = 0; i < n; i++)
		leaf(i);
}

int main(int argc, char **argv)
{
	struct sigaction sa;
	long rounds = 0;

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_trap;
	sigaction(SIGTRAP, &sa, NULL);
	printf("ready\n");
	fflush(stdout);
	while (argc < 2 || access(argv[1], F_OK) != 0) {
		region(100000);
		rounds++;
	}
	raise(SIGTRAP);
	printf("trapped %d, sums %s\n", (int)trapped,
	       sink == rounds * 350000 ? "right" : "wrong");
	return 0;
}
