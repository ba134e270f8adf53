// Target for the run-time symbolization test: prints the addresses the
// test checks ("NAME ADDR" lines), then stops itself with SIGSTOP inside
// stop_here <- demo::level2 <- level1 <- main for the unwinder.
#include <dlfcn.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>

extern "C" __attribute__((noinline)) void stop_here(void)
{
	fflush(stdout);
	raise(SIGSTOP);
	asm volatile("" ::: "memory");
}

namespace demo {
__attribute__((noinline)) int level2(int v)
{
	stop_here();
	return v + 1;
}
} // namespace demo

extern "C" __attribute__((noinline)) int level1(int v)
{
	return demo::level2(v) * 2;
}

// At -O2 gcc moves the branch that calls a cold function into
// hot_cold.cold.
extern "C" __attribute__((cold, noinline)) void report_bad(int v)
{
	fprintf(stderr, "bad %d\n", v);
}

extern "C" __attribute__((noinline)) int hot_cold(int n, const int *p)
{
	int s = 0;

	for (int i = 0; i < n; i++) {
		if (p[i] < 0) {
			report_bad(p[i]);
			s -= p[i] * 3;
			continue;
		}
		s += p[i];
	}
	return s;
}

int main(int argc, char **argv)
{
	void *h = dlopen(argc > 1 ? argv[1] : "./libdwtest.so", RTLD_NOW);
	void *heap = malloc(64);

	printf("main %p\n", (void *)&main);
	printf("level1 %p\n", (void *)&level1);
	printf("level2 %p\n", (void *)&demo::level2);
	printf("hot_cold %p\n", (void *)&hot_cold);
	printf("heap %p\n", heap);
	if (h)
		printf("lib_entry %p\n", dlsym(h, "lib_entry"));
	static const int vals[] = {1, 2, 3};

	level1(hot_cold(argc, vals));
	/* Replace the library with another (usually at the same address),
	 * then stop again. */
	if (h && argc > 2) {
		dlclose(h);
		h = dlopen(argv[2], RTLD_NOW);
		if (h)
			printf("lib2_entry %p\n", dlsym(h, "lib2_entry"));
		stop_here();
	}
	free(heap);
	return 0;
}
