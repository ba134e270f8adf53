/* The target of the staprun-killed tests: waits for "go" on stdin (the
 * driver attaches first), then calls work() 300 times (each 20000 calls
 * of leaf(), then 2 ms of sleep), printing "round N" every 50; round 100
 * prints "busy" and goes on calling leaf() for 500 ms more (the test
 * kills the driver then: the thread is running, in no stop). The driver, SIGKILLed
 * while it
 * traces, must leave it running correctly: the sum is right, and at the
 * end its code is the original again (each int3 of ours gets its byte
 * back when a thread meets it). */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline, noclone, noipa))

NOINLINE long leaf(long x)
{
	__asm__ volatile("" : "+r"(x));
	return x + 1;
}

static long now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

NOINLINE long work(long r)
{
	long s = r;
	for (int i = 0; i < 20000; i++)
		s = leaf(s);
	if (r == 100) {
		long end = now_ms() + 500, waste = 0;
		puts("busy");
		while (now_ms() < end)
			for (int i = 0; i < 1000; i++)
				waste = leaf(waste);
		__asm__ volatile("" : "+r"(waste));
	}
	return s;
}

extern char __executable_start[];

/* Is the code at fn as in the executable file (as before anyone
 * attached)? (The default PIE layout: file offset = link address.) */
static int original(void *fn, size_t n)
{
	unsigned char file[256], *mem = fn;
	int fd = open("/proc/self/exe", O_RDONLY);
	off_t off = (off_t)((uintptr_t)fn - (uintptr_t)__executable_start);
	int same = fd >= 0 && n <= sizeof file && pread(fd, file, n, off) == (ssize_t)n;

	for (size_t i = 0; same && i < n; i++)
		if (file[i] != mem[i]) {
			fprintf(stderr, "%p+%zu: %02x now %02x\n", fn, i, file[i], mem[i]);
			same = 0;
		}
	if (fd >= 0)
		close(fd);
	return same;
}

int main(void)
{
	char go[8];
	long sum = 0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!fgets(go, sizeof go, stdin))
		return 1;
	for (long r = 0; r < 300; r++) {
		sum += work(r);
		usleep(2000);
		if (r % 50 == 0)
			printf("round %ld\n", r);
	}
	printf("kill: done %ld\n", sum);
	printf("code: %s\n",
	       original((void *)work, 64) && original((void *)main, 256) ? "original" : "changed");
	return 0;
}
