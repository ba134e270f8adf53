/* Target of attach.exp: keeps calling tick() until SIGUSR1, then says
 * whether its code bytes are what they were at start (no breakpoint left
 * behind by an attach and detach) and exits. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern char __executable_start[], etext[];
static volatile sig_atomic_t done;
static volatile long ticks;

__attribute__((noinline)) void tick(int n)
{
	ticks += n;
}

static void on_usr1(int sig)
{
	(void)sig;
	done = 1;
}

int main(void)
{
	size_t len = (size_t)(etext - __executable_start);
	char *copy = malloc(len);

	if (!copy)
		return 1;
	memcpy(copy, __executable_start, len);
	signal(SIGUSR1, on_usr1);
	printf("ready\n");
	fflush(stdout);
	while (!done) {
		tick(1);
		usleep(2000);
	}
	printf("%s\n", memcmp(copy, __executable_start, len) ? "code changed" : "code identical");
	return 0;
}
