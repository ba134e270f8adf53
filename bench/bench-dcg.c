/* The workload of bench/dcg-bench.sh: a call-heavy region() to trace with
 * the dynamic call graph, and a bare ptrace stop to compare it with.
 *
 *   bench-dcg single N REPS [W] region(N) REPS times (after region(W),
 *                               untimed): prints region_ns (the fastest)
 *   bench-dcg two N CYCLES WHAT thread 2 runs disjoint or shared code
 *                               (WHAT) all along, counting its calls per
 *                               second while thread 1 sleeps
 *                               (t2_base_per_s; t2_first_per_s: the first
 *                               sleep, t2_after_per_s: the others) and
 *                               while it runs region(N)
 *                               (t2_region_per_s; traced under stap),
 *                               CYCLES times, alternating
 *   bench-dcg stop N            N bare ptrace stops (int3, a tracer that
 *                               only continues): prints stop_ns; and
 *                               step_ns, one PTRACE_SINGLESTEP stop (the
 *                               best of 3 rounds each)
 * region() calls leaf() N times; thread 2 calls leaf() (shared) or leaf2()
 * (disjoint, the same body). Output: "key value" lines. */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline, noipa))

/* one cache line per thread: no sharing between them but the code */
static volatile long sink __attribute__((aligned(64)));
static volatile long sink2 __attribute__((aligned(64)));

static long long now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

NOINLINE long leaf(long x)
{
	__asm__ volatile("" : "+r"(x));
	return x + 1;
}

NOINLINE long leaf2(long x)
{
	__asm__ volatile("" : "+r"(x));
	return x + 1;
}

NOINLINE long region(long n)
{
	long acc = 0;
	for (long i = 0; i < n; i++)
		acc += leaf(i);
	return acc;
}

/* the windows of thread 2, numbered by thread 1: 0 start, odd: thread 1
 * sleeps, even: thread 1 in region(); DONE at the end */
#define DONE (-1L)
static _Alignas(64) atomic_long seq;
/* per kind: 0 first sleep, 1 every sleep, 2 region, 3 later sleeps */
static long long t2_calls[4], t2_ns[4];

NOINLINE static long work_shared(void)
{
	long acc = 0;
	for (long k = 0; k < 1000; k++)
		acc += leaf(k);
	return acc;
}

NOINLINE static long work_disjoint(void)
{
	long acc = 0;
	for (long k = 0; k < 1000; k++)
		acc += leaf2(k);
	return acc;
}

static void account(long w, long long calls, long long ns)
{
	int k = w & 1 ? 1 : 2;

	if (w == 0)
		return;
	if (w & 1) {
		t2_calls[w == 1 ? 0 : 3] += calls;
		t2_ns[w == 1 ? 0 : 3] += ns;
	}
	t2_calls[k] += calls;
	t2_ns[k] += ns;
}

/* BENCH_PIN=1: thread 1 (with the tracer, started on CPU 0 by the
 * script) on CPU 0, thread 2 on CPU 1: what the mechanism costs thread 2,
 * without the competition for CPUs of a 2-core machine */
static void pin(int cpu)
{
	cpu_set_t set;
	const char *e = getenv("BENCH_PIN");

	if (!e || *e != '1')
		return;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	pthread_setaffinity_np(pthread_self(), sizeof set, &set);
}

/* thread 2: calls of its work per window */
static void *thread2(void *arg)
{
	long (*work)(void) = arg;
	long long calls = 0, t0;
	long cur = 0;

	pin(1);
	t0 = now_ns();

	for (;;) {
		long w = atomic_load(&seq);
		if (w != cur) {
			long long t = now_ns();
			account(cur, calls, t - t0);
			t0 = t;
			calls = 0;
			cur = w;
			if (w == DONE)
				break;
		}
		sink2 += work();
		calls += 1000;
	}
	return NULL;
}

static double rate(int k)
{
	return t2_ns[k] > 0 ? (double)t2_calls[k] * 1e9 / (double)t2_ns[k] : 0.0;
}

/* sleep, region, sleep, ... region, sleep: each sleep as long as the
 * region before it (the first 0.2 s), so that slow drifts of the
 * machine's speed hit both kinds of window alike */
static int two(long n, long cycles, const char *what)
{
	pthread_t t;
	long long d = 200000000, total = 0;
	void *work = strcmp(what, "shared") == 0 ? (void *)work_shared : (void *)work_disjoint;
	struct timespec ts;

	pin(0);
	if (pthread_create(&t, NULL, thread2, work) != 0)
		return 1;
	usleep(20000); /* thread 2 up and running */
	for (long c = 0; c <= cycles; c++) {
		atomic_store(&seq, 2 * c + 1);
		ts.tv_sec = d / 1000000000;
		ts.tv_nsec = d % 1000000000;
		nanosleep(&ts, NULL);
		if (c == cycles)
			break;
		atomic_store(&seq, 2 * c + 2);
		d = now_ns();
		sink += region(n);
		d = now_ns() - d;
		total += d;
	}
	atomic_store(&seq, DONE);
	pthread_join(t, NULL);
	printf("region_ns %lld\n", total);
	printf("t2_first_per_s %.0f\n", rate(0));
	printf("t2_base_per_s %.0f\n", rate(1));
	printf("t2_region_per_s %.0f\n", rate(2));
	printf("t2_after_per_s %.0f\n", rate(3));
	return 0;
}

static int single(long n, long reps, long warm)
{
	long long best = -1;

	if (warm > 0) /* untimed: the tracer's first-time costs */
		sink += region(warm);

	for (long r = 0; r < reps; r++) {
		long long t0 = now_ns();
		sink += region(n);
		t0 = now_ns() - t0;
		if (best < 0 || t0 < best)
			best = t0;
	}
	printf("region_ns %lld\n", best);
	return 0;
}

/* n int3s under a tracer that only continues; the child's own loop time */
static double bare_stops(long n)
{
	int p[2], st;
	long long t = -1;
	pid_t pid;

	if (pipe(p) < 0)
		return -1;
	if ((pid = fork()) == 0) {
		close(p[0]);
		ptrace(PTRACE_TRACEME, 0, 0, 0);
		raise(SIGSTOP);
		t = now_ns();
		for (long i = 0; i < n; i++)
			__asm__ volatile("int3");
		t = now_ns() - t;
		if (write(p[1], &t, sizeof t) != sizeof t)
			_exit(1);
		_exit(0);
	}
	close(p[1]);
	while (waitpid(pid, &st, 0) == pid && WIFSTOPPED(st)) {
		int sig = WSTOPSIG(st);
		ptrace(PTRACE_CONT, pid, 0, (sig == SIGTRAP || sig == SIGSTOP) ? 0L : (long)sig);
	}
	if (read(p[0], &t, sizeof t) != sizeof t)
		t = -1;
	close(p[0]);
	return t;
}

/* single steps over a loop of n iterations: the tracer's time per stop */
static double bare_steps(long n)
{
	long long t0 = 0, steps = 0;
	int st;
	pid_t pid;

	if ((pid = fork()) == 0) {
		ptrace(PTRACE_TRACEME, 0, 0, 0);
		raise(SIGSTOP);
		for (long i = 0; i < n; i++)
			__asm__ volatile("nop");
		_exit(0);
	}
	while (waitpid(pid, &st, 0) == pid && WIFSTOPPED(st)) {
		if (!t0)
			t0 = now_ns();
		else
			steps++;
		ptrace(PTRACE_SINGLESTEP, pid, 0, 0L);
	}
	return steps ? (double)(now_ns() - t0) / (double)steps : -1;
}

int main(int argc, char **argv)
{
	if ((argc == 4 || argc == 5) && strcmp(argv[1], "single") == 0)
		return single(atol(argv[2]), atol(argv[3]), argc == 5 ? atol(argv[4]) : 0);
	if (argc == 5 && strcmp(argv[1], "two") == 0)
		return two(atol(argv[2]), atol(argv[3]), argv[4]);
	if (argc == 3 && strcmp(argv[1], "stop") == 0) {
		long n = atol(argv[2]);
		double best = -1;
		for (int r = 0; r < 3; r++) {
			double t = bare_stops(n);
			if (t > 0 && (best < 0 || t < best))
				best = t;
		}
		if (best <= 0)
			return 1;
		printf("stop_ns %.0f\n", best / (double)n);
		best = -1;
		for (int r = 0; r < 3; r++) {
			double t = bare_steps(n / 4);
			if (t > 0 && (best < 0 || t < best))
				best = t;
		}
		printf("step_ns %.0f\n", best);
		return 0;
	}
	fprintf(stderr, "usage: %s single N REPS [W] | two N CYCLES disjoint|shared | stop N\n",
		argv[0]);
	return 2;
}
