/* Target of syswide.exp: waits until the file ARGV[1] exists (so a stap
 * watching for it has attached: the window after exec does not matter),
 * says "ready", then calls tick() every millisecond until SIGUSR1, and
 * says whether its code is the file's (no breakpoint left behind by the
 * detach) and exits. Without an argument it starts at once. */
#include <fcntl.h>
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

/* The code as mapped against the file's bytes (a PIE whose segments sit
 * at their file offsets, as the default link puts them). */
static int code_is_the_file(void)
{
	size_t len = (size_t)(etext - __executable_start);
	char *file = malloc(len);
	int fd = open("/proc/self/exe", O_RDONLY);
	int same = file && fd >= 0 && pread(fd, file, len, 0) == (ssize_t)len &&
		   !memcmp(file, __executable_start, len);
	if (fd >= 0)
		close(fd);
	free(file);
	return same;
}

int main(int argc, char **argv)
{
	signal(SIGUSR1, on_usr1);
	while (argc > 1 && access(argv[1], F_OK) != 0)
		usleep(10000);
	printf("ready\n");
	fflush(stdout);
	while (!done) {
		tick(1);
		usleep(1000);
	}
	printf("code %s\n", code_is_the_file() ? "identical" : "changed");
	return 0;
}
