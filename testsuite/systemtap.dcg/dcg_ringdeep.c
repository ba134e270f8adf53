/* Frames open long before the flight recorder's window (ring.exp):
 * region() enters rec() 11 levels deep, and the innermost calls many(),
 * which calls leaf() N times and then mark(), where the snapshot is
 * taken (or in after(), which region() calls when rec() has returned:
 * the frames open at the window's start return in it). With "twice",
 * region() then calls other(), which calls many() again: its frames
 * take the slots of the first rec() and many(). With "tail", the
 * innermost rec() calls jumper() instead, whose leaves are followed by a
 * tail call of tailee(). With "sig", the innermost rec() calls poke() instead, whose
 * kill system call brings a SIGUSR1, and its handler calls many(). With
 * "thread", a second thread runs region() while the first calls tick()
 * every 5 ms until it is done. Built at -O2: the stack is unwound by its
 * CFI. */
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NOINL __attribute__((noinline, noclone))

static volatile int sink;
static long n = 1000;
static int with_signal, twice, tail;
static long pid;

NOINL void leaf(void)
{
	sink++;
}

NOINL void mark(void)
{
	__asm__ volatile("");
}

NOINL void after(void)
{
	__asm__ volatile("");
}

NOINL void many(void)
{
	for (long i = 0; i < n; i++)
		leaf();
	mark();
	sink++;
}

NOINL int tailee(int x)
{
	sink += x;
	return sink;
}

/* many()'s leaves, then a tail call (a jmp at -O2) */
NOINL int jumper(int x)
{
	for (long i = 0; i < n; i++)
		leaf();
	return tailee(x + 1);
}

/* kill(pid, SIGUSR1) without libc: the signal comes at its return */
NOINL void poke(void)
{
	long ret;

	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "a"(62L), "D"(pid), "S"((long)SIGUSR1)
			 : "rcx", "r11", "memory");
	sink += (int)ret;
}

NOINL void on_usr1(int sig)
{
	(void)sig;
	many();
	sink++;
}

NOINL void rec(int depth)
{
	if (depth)
		rec(depth - 1);
	else if (with_signal)
		poke();
	else if (tail)
		sink += jumper(depth);
	else
		many();
	sink++;
}

NOINL void other(void)
{
	many();
	sink++;
}

NOINL void region(void)
{
	rec(10);
	after();
	if (twice)
		other();
	sink++;
}

static volatile int done;

NOINL void tick(void)
{
	__asm__ volatile("");
}

static void *runner(void *arg)
{
	(void)arg;
	region();
	done = 1;
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t th;

	if (argc > 1)
		n = atol(argv[1]);
	with_signal = argc > 2 && !strcmp(argv[2], "sig");
	twice = argc > 2 && !strcmp(argv[2], "twice");
	tail = argc > 2 && !strcmp(argv[2], "tail");
	signal(SIGUSR1, on_usr1);
	pid = getpid();
	if (argc > 2 && !strcmp(argv[2], "thread")) {
		if (pthread_create(&th, NULL, runner, NULL))
			return 1;
		while (!done) {
			tick();
			usleep(5000);
		}
		return pthread_join(th, NULL);
	}
	region();
	return 0;
}
