/* Target for fork/vfork/exec: the parent, a fork child and a vfork child
 * that execs this program again all call work(). Every process prints
 * what it did; the parent prints the driver's expected counts:
 *   t-fork follow    children are followed (-F): all calls counted
 *   t-fork nofollow  children are not followed: the parent's only
 *   t-fork fork-in-probe[-follow]  fork inside forker(), which has a
 *                    return probe (-r forker): the child returns through
 *                    the same frame; followed, its return fires too
 *   t-fork thread-exec  a second thread execs this program (exec-child):
 *                    the exec'd image gets its probes again
 * A child that kept an int3 it cannot handle would die of SIGTRAP; the
 * parent reports how each child ended. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile int sink;

__attribute__((noinline)) int work(int x)
{
	sink = x;
	return x + 1;
}

static void calls(int n)
{
	for (int i = 0; i < n; i++)
		work(i);
}

static const char *self_path;

static void *exec_thread(void *arg)
{
	(void)arg;
	execl("/proc/self/exe", self_path, "exec-child", (char *)NULL);
	return NULL;
}

/* returns 7 in the child, 9 in the parent once the child has ended */
__attribute__((noinline)) int forker(void)
{
	pid_t pid = fork();
	int st;

	if (pid == 0)
		return 7;
	waitpid(pid, &st, 0);
	sink = st;
	return 9;
}

static void report(const char *what, int st)
{
	if (WIFEXITED(st))
		printf("%s exited %d\n", what, WEXITSTATUS(st));
	else
		printf("%s killed by signal %d\n", what, WTERMSIG(st));
}

int main(int argc, char **argv)
{
	int st;
	pid_t pid;

	if (argc == 2 && strcmp(argv[1], "exec-child") == 0) {
		calls(30);
		printf("exec child: 30 calls\n");
		return 3;
	}
	if (argc != 2)
		return 2;
	if (strncmp(argv[1], "fork-in-probe", 13) == 0) {
		int follow = strcmp(argv[1], "fork-in-probe-follow") == 0;
		if (forker() == 7) {
			printf("child returned\n");
			fflush(stdout);
			_exit(0);
		}
		if (follow)
			printf("expect: probe forker hits=1 returns=2 retsum=16\n");
		else
			printf("expect: probe forker hits=1 returns=1 retsum=9\n");
		return 0;
	}
	if (strcmp(argv[1], "thread-exec") == 0) {
		pthread_t th;
		calls(10);
		printf("expect: probe work hits=%d\n", 10 + 30);
		fflush(stdout);
		self_path = argv[0];
		pthread_create(&th, NULL, exec_thread, NULL);
		pthread_join(th, NULL); /* until the exec replaces us */
		return 1;
	}
	calls(10);
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		calls(20);
		printf("fork child: 20 calls\n");
		exit(4);
	}
	waitpid(pid, &st, 0);
	report("fork child", st);
	fflush(stdout);
	pid = vfork();
	if (pid == 0) {
		execl("/proc/self/exe", argv[0], "exec-child", (char *)NULL);
		_exit(127);
	}
	waitpid(pid, &st, 0);
	report("vfork child", st);
	calls(5);
	if (strcmp(argv[1], "follow") == 0)
		printf("expect: probe work hits=%d\n", 10 + 20 + 30 + 5);
	else
		printf("expect: probe work hits=%d\n", 10 + 5);
	return 0;
}
