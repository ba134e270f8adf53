/* Target for clone(CLONE_VM) without CLONE_THREAD: a child process that
 * shares the parent's memory, and with it the breakpoints. Both call
 * work() at once; the parent calls it again after the child has ended.
 *   t-clonevm follow     the child is followed (-F): all calls counted
 *   t-clonevm nofollow   it is not: the parent's only, and the child must
 *                        not take the parent's breakpoints away with it
 *   t-clonevm follow|nofollow exec   the child then execs this program
 *                        ("exec-child": 30 more calls, followed or not)
 *   t-clonevm spin       both call work() until killed ("ready" on fd 3,
 *                        attach tests: the child is made 50 calls later,
 *                        traced then; spin-early: before, the tracer
 *                        must find it); exits 100+SIG when the child dies
 *                        of a signal (a stale int3 after detaching)
 * Run with -r work: returns are counted as well. */
#define _GNU_SOURCE
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile int sink;

__attribute__((noinline)) int work(int x)
{
	sink = x;
	return x;
}

static int calls(int from, int n)
{
	int sum = 0;

	for (int i = from; i < from + n; i++)
		sum += work(i);
	return sum;
}

static volatile int child_sum;
static char *self;

static int spinner(void *arg)
{
	(void)arg;
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	for (int i = 0;; i++) {
		work(i);
		usleep(1000);
	}
	return 0;
}

static int child(void *arg)
{
	child_sum = calls(100, 20); /* little libc here: it shares our TLS */
	if (arg) {
		char *args[] = {self, "exec-child", NULL};
		execv("/proc/self/exe", args);
		return 127;
	}
	return 5;
}

int main(int argc, char **argv)
{
	size_t size = 256 * 1024;
	char *stack = malloc(size);
	int st, follow, sum;
	pid_t pid;

	if (argc == 2 && strcmp(argv[1], "exec-child") == 0) {
		calls(0, 30);
		return 6;
	}
	if ((argc != 2 && argc != 3) || !stack)
		return 2;
	if (strcmp(argv[1], "spin") == 0 || strcmp(argv[1], "spin-early") == 0) {
		int early = argv[1][4] == '-';
		if (early)
			pid = clone(spinner, stack + size, CLONE_VM | SIGCHLD, NULL);
		/* else the child comes once the tracer is there */
		if (write(3, "r", 1) != 1)
			return 1;
		for (int i = 0; i < 50 && !early; i++) {
			work(i);
			usleep(1000);
		}
		if (!early)
			pid = clone(spinner, stack + size, CLONE_VM | SIGCHLD, NULL);
		if (pid < 0)
			return 1;
		for (int i = 0;; i++) {
			work(i);
			usleep(1000);
			if (waitpid(pid, &st, WNOHANG) == pid)
				return WIFSIGNALED(st) ? 100 + WTERMSIG(st) : 99;
		}
	}
	follow = strcmp(argv[1], "follow") == 0;
	self = argv[0];
	sum = calls(0, 5);
	pid = clone(child, stack + size, CLONE_VM | SIGCHLD, argc == 3 ? "" : NULL);
	if (pid < 0) {
		perror("clone");
		return 1;
	}
	sum += calls(10, 5);
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st)) {
		printf("child did not exit (status %#x)\n", st);
		return 1;
	}
	printf("child exited %d\n", WEXITSTATUS(st));
	sum += calls(20, 5);
	if (follow && argc == 3)
		printf("expect: probe work hits=65 returns=65 retsum=%d\n", sum + child_sum + 435);
	else if (follow)
		printf("expect: probe work hits=35 returns=35 retsum=%d\n", sum + child_sum);
	else
		printf("expect: probe work hits=15 returns=15 retsum=%d\n", sum);
	free(stack);
	return 0;
}
