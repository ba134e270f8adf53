/* library.exp: calls tlib_add in a linked library, then dlopens
 * libtdl.so (next to the program) and calls tdl_twice, closes it and
 * opens it again (-loop: calls tlib_add for a minute, for -x). With -e, prints what the tests' scripts print. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int tlib_add(int a, int b);

int main(int argc, char **argv)
{
	int sum = 0;
	for (int i = 1; i <= 3; i++)
		sum += tlib_add(i, 10);
	if (argc > 1 && !strcmp(argv[1], "-loop")) { /* for -x */
		printf("ready\n");
		fflush(stdout);
		for (int i = 0; i < 30000; i++) {
			sum += tlib_add(i, 1);
			usleep(2000);
		}
		return 0;
	}
	if (argc > 1 && !strcmp(argv[1], "-e")) {
		printf("tlib_add 1 10\ntlib_add 2 10\ntlib_add 3 10\nreturn 13\ndl 7 14\ndl 8 16\n");
		return 0;
	}
	char path[4096];
	ssize_t n = readlink("/proc/self/exe", path, sizeof path - 32);
	if (n <= 0)
		return 1;
	path[n] = '\0';
	strcpy(strrchr(path, '/') + 1, "libtdl.so");
	for (int round = 0; round < 2; round++) {
		void *h = dlopen(path, RTLD_NOW);
		if (!h) {
			fprintf(stderr, "%s\n", dlerror());
			return 1;
		}
		int (*twice)(int) = (int (*)(int))dlsym(h, "tdl_twice");
		sum += twice(7 + round);
		dlclose(h);
	}
	return sum == 36 + 30 ? 0 : 1;
}
