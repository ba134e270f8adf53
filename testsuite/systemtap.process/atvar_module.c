/* atvar_module.exp: a program linked with libamod.so that dlopens
 * libamod_dl.so (next to it) between before_dlopen() and after_dlopen().
 * With an argument it prints nothing (whether it runs on after a probe's
 * error depends on timing). */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main_value = 7;
int lib_get(int x);

__attribute__((noinline)) int before_dlopen(void)
{
	return main_value;
}

__attribute__((noinline)) int after_dlopen(int (*get)(void))
{
	return get();
}

int main(int argc, char **argv)
{
	char path[4096];
	ssize_t n = readlink("/proc/self/exe", path, sizeof path - 32);
	if (n <= 0)
		return 1;
	path[n] = '\0';
	strcpy(strrchr(path, '/') + 1, "libamod_dl.so");
	main_value = 8;
	before_dlopen();
	void *h = dlopen(path, RTLD_NOW);
	if (!h) {
		fprintf(stderr, "%s\n", dlerror());
		return 1;
	}
	after_dlopen((int (*)(void))dlsym(h, "dl_get"));
	(void)argv;
	if (argc < 2)
		printf("%d\n", lib_get(1));
	return 0;
}
