/* systemtap.context/symcache.exp: a library dlclosed and another one
 * dlopened at its address. run() reports (report(), probed) and calls
 * (call_fn()) the first library's function, dlcloses it, dlopens the
 * second, then calls and reports the same address, now the second's.
 *   symcache DIR reuse    DIR/libsca.so (fn_alpha), then DIR/libscb.so
 *                         (fn_bravo)
 *   symcache DIR replace  DIR/libsca.so (fn_alpha), then DIR/libscc.so
 *                         (fn_gamma) renamed over DIR/libsca.so and
 *                         dlopened by that same path
 * Prints the results and whether the second function got the first's
 * address; exits 3 (a status to compare traced and untraced), 2 when a
 * dlopen, dlsym or rename failed. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#define NI __attribute__((noinline, noclone))

typedef int (*fn_t)(int);

volatile unsigned long sink;

NI void report(unsigned long addr)
{
	sink = addr;
}

NI int call_fn(fn_t f, int x)
{
	return f(x);
}

static char path_a[4096], path_b[4096], path_c[4096];

NI int run(int replace)
{
	void *h = dlopen(path_a, RTLD_NOW | RTLD_LOCAL);
	fn_t f = h ? (fn_t)dlsym(h, "fn_alpha") : NULL, g;
	int r1, r2;

	if (!f)
		return -1;
	report((unsigned long)f);
	r1 = call_fn(f, 1);
	dlclose(h);
	if (replace && rename(path_c, path_a) != 0)
		return -1;
	h = dlopen(replace ? path_a : path_b, RTLD_NOW | RTLD_LOCAL);
	g = h ? (fn_t)dlsym(h, replace ? "fn_gamma" : "fn_bravo") : NULL;
	if (!g)
		return -1;
	/* the old address first: it is the new library's function */
	r2 = call_fn(g == f ? f : g, 2);
	report((unsigned long)f);
	printf("%d %d %s address\n", r1, r2, g == f ? "same" : "different");
	return 0;
}

int main(int argc, char **argv)
{
	const char *dir = argc > 1 ? argv[1] : ".";

	snprintf(path_a, sizeof path_a, "%s/libsca.so", dir);
	snprintf(path_b, sizeof path_b, "%s/libscb.so", dir);
	snprintf(path_c, sizeof path_c, "%s/libscc.so", dir);
	if (run(argc > 2 && !strcmp(argv[2], "replace")) < 0)
		return 2;
	fflush(stdout);
	return 3;
}
