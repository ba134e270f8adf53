/* Code replaced under translation (systemtap.xlate/code.exp): work()
 * loads DIR/libxa.so, calls its val(), unloads it, loads DIR/libxb.so
 * (same layout, another constant: mapped where the first one was) and
 * calls its val(). Translated code of the first library must not run for
 * the second: "dl: a=11 b=12 same address". "moved" when the second is
 * mapped elsewhere (the case does not arise). */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>

#define NOINLINE __attribute__((noinline, noclone, noipa))

static int (*load(const char *dir, const char *name, void **h))(int)
{
	char path[4096];

	snprintf(path, sizeof path, "%s/%s", dir, name);
	if (!(*h = dlopen(path, RTLD_NOW))) {
		fprintf(stderr, "dlopen: %s\n", dlerror());
		return NULL;
	}
	return (int (*)(int))dlsym(*h, "val");
}

NOINLINE int work(const char *dir)
{
	void *h;
	int (*f)(int) = load(dir, "libxa.so", &h);
	if (!f)
		return 1;
	int a = f(10);
	uintptr_t fa = (uintptr_t)f;
	dlclose(h);
	if (!(f = load(dir, "libxb.so", &h)))
		return 1;
	int b = f(10);
	printf("dl: a=%d b=%d %s\n", a, b, fa == (uintptr_t)f ? "same address" : "moved");
	dlclose(h);
	return 0;
}

int main(int argc, char **argv)
{
	return argc > 1 ? work(argv[1]) : 2;
}
