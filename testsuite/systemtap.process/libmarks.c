/* libmark.exp: with -DLINKED calls lm_fire of the linked libmarks.so
 * (1 and 2); else dlopens the library ARGV[1] after start, calls lm_fire
 * (1 and 2), closes it, opens it again and calls lm_fire(3). */
#include <dlfcn.h>
#include <stdio.h>

int lm_fire(int x);

int main(int argc, char **argv)
{
	int sum = 0;
#ifdef LINKED
	(void)argc;
	(void)argv;
	sum = lm_fire(1) + lm_fire(2);
	return sum == 5 ? 0 : 1;
#else
	if (argc < 2)
		return 2;
	for (int round = 0; round < 2; round++) {
		void *h = dlopen(argv[1], RTLD_NOW);
		if (!h) {
			fprintf(stderr, "%s\n", dlerror());
			return 1;
		}
		int (*fire)(int) = (int (*)(int))dlsym(h, "lm_fire");
		if (round == 0)
			sum += fire(1) + fire(2);
		else
			sum += fire(3);
		dlclose(h);
	}
	return sum == 9 ? 0 : 1;
#endif
}
