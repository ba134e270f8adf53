/* Target of syswide_dlopen.exp: says "ready", waits until the file
 * ARGV[2] exists, then dlopens the library ARGV[1] and waits (up to 10 s)
 * until it is traced, so the window between the dlopen and the attach
 * does not matter; calls tdl_twice(1..3), says "called", and waits for
 * SIGUSR1 to exit. */
#include <dlfcn.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static volatile sig_atomic_t done;

static void on_usr1(int sig)
{
	(void)sig;
	done = 1;
}

static int traced(void)
{
	char line[256];
	int tracer = 0;
	FILE *f = fopen("/proc/self/status", "r");

	while (f && fgets(line, sizeof line, f))
		if (sscanf(line, "TracerPid: %d", &tracer) == 1)
			break;
	if (f)
		fclose(f);
	return tracer != 0;
}

int main(int argc, char **argv)
{
	if (argc < 3)
		return 2;
	signal(SIGUSR1, on_usr1);
	printf("ready\n");
	fflush(stdout);
	while (access(argv[2], F_OK) != 0)
		usleep(10000);
	void *h = dlopen(argv[1], RTLD_NOW);
	if (!h) {
		fprintf(stderr, "%s\n", dlerror());
		return 1;
	}
	for (int i = 0; i < 1000 && !traced(); i++)
		usleep(10000);
	int (*twice)(int) = (int (*)(int))dlsym(h, "tdl_twice");
	int sum = 0;
	for (int x = 1; x <= 3; x++)
		sum += twice(x);
	printf("called %d\n", sum);
	fflush(stdout);
	while (!done)
		usleep(10000);
	return 0;
}
