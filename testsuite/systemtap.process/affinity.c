/* Target of affinity.exp: prints the CPUs it may run on (Cpus_allowed_list
 * of /proc) as "WHAT LIST" lines, before, while and after it is traced.
 *   affinity cg       region() is where the script traces the call graph:
 *                     "before", then in region() "during" (this thread),
 *                     "other" (a thread running all along, untraced),
 *                     "child" (a thread region() creates), "tracer" (the
 *                     parent: staprun), then after it "after" and "tracer"
 *   affinity own      the same, but region() sets its mask to one CPU
 *                     other than the one it is on ("set N"), which "after"
 *                     must show
 *   affinity fork     in region(), a fork child prints "forked LIST"; then
 *                     region() execs "affinity execd", which prints
 *                     "execd LIST" (the image after an exec is not traced)
 *   affinity gone     a thread traced in region() exits there: the main
 *                     thread prints "tracer" before and after it
 *   affinity hits     tiny() (an ordinary probe) until this thread is on
 *                     one CPU ("pinned LIST", at most 200000 calls), then
 *                     "after" once it has its own CPUs back (at most 10 s)
 *   affinity loop     "ready", then region() for ever (attach tests read
 *                     /proc from outside) */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *mode;
static volatile int stop_other;

static void cpus(pid_t pid, pid_t tid, char *buf, size_t len) /* len >= 256 */
{
	char path[64], line[512];
	FILE *f;

	snprintf(path, sizeof path, "/proc/%d/task/%d/status", (int)pid, (int)tid);
	if (len < 256)
		abort();
	buf[0] = '\0';
	if (!(f = fopen(path, "re")))
		return;
	while (fgets(line, sizeof line, f))
		if (sscanf(line, "Cpus_allowed_list: %255s", buf) == 1)
			break;
	fclose(f);
}

static void say(const char *what, pid_t pid, pid_t tid)
{
	char b[256];

	cpus(pid, tid, b, sizeof b);
	printf("%s %s\n", what, b);
	fflush(stdout);
}

static pid_t gettid_(void)
{
	return (pid_t)syscall(SYS_gettid);
}

__attribute__((noinline)) long tiny(long x)
{
	__asm__ volatile("" : "+r"(x));
	return x + 1;
}

static void *other(void *arg)
{
	__atomic_store_n((pid_t *)arg, gettid_(), __ATOMIC_SEQ_CST);
	while (!stop_other)
		usleep(1000);
	return NULL;
}

static void *child(void *arg)
{
	(void)arg;
	say("child", getpid(), gettid_());
	return NULL;
}

static void own_mask(void)
{
	cpu_set_t cur, one;
	int on = -1;

	sched_getaffinity(0, sizeof cur, &cur);
	for (int c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, &cur))
			on = c;
	CPU_ZERO(&one);
	CPU_SET(on == 0 ? 1 : 0, &one);
	if (sched_setaffinity(0, sizeof one, &one) == 0)
		printf("set %d\n", on == 0 ? 1 : 0);
}

__attribute__((noinline)) void region(pid_t other_tid)
{
	pthread_t th;

	tiny(1);
	if (!strcmp(mode, "loop")) {
		usleep(2000);
		return;
	}
	say("during", getpid(), gettid_());
	say("other", getpid(), other_tid);
	say("tracer", getppid(), getppid());
	pthread_create(&th, NULL, child, NULL);
	pthread_join(th, NULL);
	if (!strcmp(mode, "own"))
		own_mask();
	if (!strcmp(mode, "fork")) {
		pid_t pid = fork();
		if (pid == 0) {
			say("forked", getpid(), getpid());
			_exit(0);
		}
		waitpid(pid, NULL, 0);
		execl("/proc/self/exe", "affinity", "execd", (char *)NULL);
		printf("exec failed\n");
	}
}

static void *traced_thread(void *arg)
{
	(void)arg;
	region(gettid_());
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t th;
	pid_t other_tid = 0;

	mode = argc > 1 ? argv[1] : "cg";
	if (!strcmp(mode, "execd")) {
		say("execd", getpid(), gettid_());
		say("tracer", getppid(), getppid());
		return 0;
	}
	if (!strcmp(mode, "loop")) {
		printf("ready\n");
		fflush(stdout);
		for (;;)
			region(0);
	}
	if (!strcmp(mode, "hits")) {
		char b[256], orig[256];
		long i;
		cpus(getpid(), gettid_(), orig, sizeof orig);
		for (i = 0; i < 200000; i++) {
			tiny(i);
			if (i % 256 == 0) {
				cpus(getpid(), gettid_(), b, sizeof b);
				if (strcmp(b, orig) && !strchr(b, '-') && !strchr(b, ','))
					break;
			}
		}
		printf("pinned %s\n", i < 200000 ? b : "never");
		for (i = 0; i < 1000; i++) {
			cpus(getpid(), gettid_(), b, sizeof b);
			if (!strcmp(b, orig))
				break;
			usleep(10000);
		}
		say("after", getpid(), gettid_());
		return 0;
	}
	say("before", getpid(), gettid_());
	say("tracer", getppid(), getppid());
	if (!strcmp(mode, "gone")) {
		pthread_create(&th, NULL, traced_thread, NULL);
		pthread_join(th, NULL);
		say("tracer", getppid(), getppid());
		return 0;
	}
	pthread_create(&th, NULL, other, &other_tid);
	while (!__atomic_load_n(&other_tid, __ATOMIC_SEQ_CST))
		usleep(1000);
	region(other_tid);
	say("after", getpid(), gettid_());
	say("tracer", getppid(), getppid());
	stop_other = 1;
	pthread_join(th, NULL);
	return 0;
}
