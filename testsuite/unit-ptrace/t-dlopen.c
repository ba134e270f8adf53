/* Target for library probes: dlopen ./libt-plug.so, call plug_fn, dlclose,
 * dlopen it again (often at the same address) and call it again. The
 * driver (-l libt-plug.so:plug_fn) places the probe each time the library
 * appears, so both rounds are counted. */
#include <dlfcn.h>
#include <stdio.h>

static int one_round(int calls)
{
	void *h = dlopen("./libt-plug.so", RTLD_NOW);
	int (*fn)(int), sum = 0;

	if (!h) {
		printf("dlopen: %s\n", dlerror());
		return -1;
	}
	fn = (int (*)(int))dlsym(h, "plug_fn");
	for (int i = 0; i < calls; i++)
		sum += fn(i);
	dlclose(h);
	return sum;
}

int main(void)
{
	int a = one_round(5), b = one_round(3);

	printf("sums %d %d\n", a, b);
	printf("expect: probe plug_fn hits=8\n");
	return 0;
}
