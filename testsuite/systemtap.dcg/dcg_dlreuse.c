/* systemtap.dcg/dlreuse.exp: in root(), dlopen liba, call into it,
 * dlclose it, dlopen libb (normally mapped where liba was), call into
 * it. Prints the results and whether libb got liba's base address.
 *   dcg_dlreuse DIR   the libraries are DIR/libdcga.so, DIR/libdcgb.so
 * Exits 3 (a status to compare traced and untraced), 2 if a dlopen failed. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>

#define NI __attribute__((noinline, noclone))

static char path_a[4096], path_b[4096];
static unsigned long base_a, base_b;
static int res_a, res_b, failed;

NI static unsigned long base_of(void *h)
{
	struct link_map *lm = NULL;
	if (dlinfo(h, RTLD_DI_LINKMAP, &lm) != 0 || !lm)
		return 0;
	return (unsigned long)lm->l_addr;
}

/* open, call ENTRY(x), close (or keep open); the base and result out */
NI int use_lib(const char *path, const char *entry, int x, int close_it,
	       unsigned long *base)
{
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		failed = 1;
		return -1;
	}
	int (*f)(int) = (int (*)(int))dlsym(h, entry);
	*base = base_of(h);
	int r = f ? f(x) : -1;
	if (close_it)
		dlclose(h);
	return r;
}

NI void root(void)
{
	res_a = use_lib(path_a, "alpha_entry", 5, 1, &base_a);
	res_b = use_lib(path_b, "beta_entry", 9, 0, &base_b);
}

int main(int argc, char **argv)
{
	const char *dir = argc > 1 ? argv[1] : ".";
	snprintf(path_a, sizeof path_a, "%s/libdcga.so", dir);
	snprintf(path_b, sizeof path_b, "%s/libdcgb.so", dir);
	root();
	printf("alpha %d beta %d %s base\n", res_a, res_b,
	       base_a && base_a == base_b ? "same" : "different");
	fflush(stdout);
	return failed ? 2 : 3;
}
