/* Threads and processes made by a traced thread. t-proc MODE; the traced
 * function is work() (a thread's or the main one's):
 *   thread  work() starts a thread that calls leaf() 1000 times (it must
 *           run untraced: none of its calls in the tree) and joins it
 *   fork    work() forks; the child calls leaf() 1000 times and exits
 *           (it runs natively, never writes the parent's records)
 *   vfork   work() vforks; the child execs /bin/true
 *   exec    work() calls leaf(), then execs this program ("t-proc
 *           done"): the tree ends there
 *   exit    three threads one after the other call work(); the first two
 *           end inside it (the exit system call), the third returns
 *           (their trees; translated threads that end give their memory
 *           back to the next)
 * The program prints the trees the driver (-L) must show as "expect:". */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline, noclone, noipa))

enum { THREAD, FORK, VFORK, EXEC, EXIT, DONE };
static int mode;
static const char *self;
static volatile int counter;

NOINLINE int leaf(int x)
{
	__asm__ volatile("" : "+r"(x));
	counter++;
	return x + 1;
}

static void *child(void *arg)
{
	int s = 0;
	for (int i = 0; i < 1000; i++)
		s = leaf(s);
	return arg;
}

static int round_no, child_status = -1;

NOINLINE int work(void)
{
	int s = 0;
	pthread_t th;
	pid_t pid;

	switch (mode) {
	case THREAD:
		pthread_create(&th, NULL, child, NULL);
		pthread_join(th, NULL);
		break;
	case FORK:
		if ((pid = fork()) == 0) {
			child(NULL);
			_exit(counter == 1000 ? 0 : 1);
		}
		waitpid(pid, &child_status, 0);
		break;
	case VFORK:
		if ((pid = vfork()) == 0) {
			execl("/bin/true", "true", (char *)NULL);
			_exit(127);
		}
		waitpid(pid, &child_status, 0);
		break;
	case EXEC:
		leaf(0);
		execl(self, self, "done", (char *)NULL);
		return -1;
	case EXIT:
		s = leaf(round_no);
		if (round_no < 2)
			syscall(SYS_exit, 0);
		break;
	}
	s = leaf(s);
	__asm__ volatile("" : "+r"(s));
	return s;
}

static void *exit_thread(void *arg)
{
	work();
	return arg;
}

static void expect(const char *lines)
{
	for (const char *l = lines; *l;) {
		const char *e = strchr(l, '\n');
		printf("expect: %.*s\n", (int)(e - l), l);
		l = e + 1;
	}
}

int main(int argc, char **argv)
{
	static const char *modes[] = { "thread", "fork", "vfork", "exec", "exit", "done" };
	const char *m = argc > 1 ? argv[1] : "thread";

	self = argv[0];
	for (mode = 0; mode < DONE && strcmp(m, modes[mode]); mode++)
		;
	if (mode == DONE) { /* the tree of the image before */
		printf("exec'd\n");
		expect("-> work\n -> leaf\n <- leaf\n -> @libc.so.6\n");
		return 0;
	}
	if (mode == EXIT) {
		for (round_no = 0; round_no < 3; round_no++) {
			pthread_t th;
			pthread_create(&th, NULL, exit_thread, NULL);
			pthread_join(th, NULL);
		}
	} else {
		printf("work: %d\n", work());
	}
	printf("%s: leaf called %d times\n", m, counter);
	if (child_status != -1)
		printf("child status %#x\n", child_status);
	fflush(stdout);
	switch (mode) {
	case THREAD:
		expect("-> work\n -> @libc.so.6\n <- @libc.so.6\n -> @libc.so.6\n <- @libc.so.6\n"
		       " -> leaf\n <- leaf\n<- work\n");
		break;
	case FORK:
	case VFORK:
		expect("-> work\n -> @libc.so.6\n <- @libc.so.6\n -> @libc.so.6\n <- @libc.so.6\n"
		       " -> leaf\n <- leaf\n<- work\n");
		break;
	case EXIT:
		for (int i = 0; i < 2; i++)
			expect("-> work\n -> leaf\n <- leaf\n -> @libc.so.6\n");
		expect("-> work\n -> leaf\n <- leaf\n -> leaf\n <- leaf\n<- work\n");
		break;
	}
	return 0;
}
