/* Target of sigstate.exp. Alone: prints its ignored and blocked signal
 * sets (SigIgn/SigBlk of /proc/self/status). "-i N,N -b N,N PROG ARGS":
 * ignores and blocks those signals, then execs PROG (a caller such as
 * nohup or a background job of a script). "-w": prints, then waits for
 * its stdin to close (a -x target). */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* glibc's own signals (32 and 33: thread cancellation, setxid) are left
 * out: glibc takes them over in a program that uses threads. */
static void print_state(void)
{
	const unsigned long long glibc = 3ull << 31;
	unsigned long long set;
	char line[256];
	FILE *f = fopen("/proc/self/status", "r");

	while (f && fgets(line, sizeof line, f))
		if ((!strncmp(line, "SigIgn:", 7) || !strncmp(line, "SigBlk:", 7)) &&
		    sscanf(line + 7, "%llx", &set) == 1)
			printf("%.7s %016llx\n", line, set & ~glibc);
	if (f)
		fclose(f);
	fflush(stdout);
}

static void each(char *list, void (*fn)(int))
{
	for (char *t = strtok(list, ","); t; t = strtok(NULL, ","))
		fn(atoi(t));
}

static void ignore(int sig)
{
	signal(sig, SIG_IGN);
}

static sigset_t blocked;
static void block(int sig)
{
	sigaddset(&blocked, sig);
}

int main(int argc, char **argv)
{
	int opt;

	sigemptyset(&blocked);
	while ((opt = getopt(argc, argv, "+i:b:w")) != -1) {
		if (opt == 'i')
			each(optarg, ignore);
		else if (opt == 'b')
			each(optarg, block);
		else if (opt == 'w') {
			char c;
			print_state();
			while (read(0, &c, 1) > 0)
				;
			return 0;
		} else
			return 2;
	}
	sigprocmask(SIG_BLOCK, &blocked, NULL);
	if (optind < argc) {
		execvp(argv[optind], argv + optind);
		perror(argv[optind]);
		return 127;
	}
	print_state();
	return 0;
}
