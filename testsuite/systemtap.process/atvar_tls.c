/* atvar_tls.exp: each thread (main, then two threads one after the other)
 * sets its own thread-local variables and errno, then calls
 * report(thread number); main then dlopens libatls_dl.so (next to the
 * program), touches its TLS and calls report(9). */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

__thread int tls_data = 1;
__thread long tls_bss;
int lib_tls_add(int v);

__attribute__((noinline)) int report(int n)
{
	return n + tls_data;
}

static void *run(void *arg)
{
	int n = (int)(long)arg;

	tls_data = 10 * n;
	tls_bss = 100 * n;
	lib_tls_add(n);
	errno = 30 + n;
	report(n);
	return NULL;
}

int main(void)
{
	char path[4096];
	ssize_t len = readlink("/proc/self/exe", path, sizeof path - 32);

	if (len <= 0)
		return 1;
	path[len] = '\0';
	strcpy(strrchr(path, '/') + 1, "libatls_dl.so");
	tls_bss = 7;
	errno = 30;
	report(0);
	for (long i = 1; i <= 2; i++) {
		pthread_t t;
		if (pthread_create(&t, NULL, run, (void *)i) || pthread_join(t, NULL))
			return 1;
	}
	void *h = dlopen(path, RTLD_NOW);
	if (!h) {
		fprintf(stderr, "%s\n", dlerror());
		return 1;
	}
	((int (*)(void))dlsym(h, "dl_touch"))();
	report(9);
	return 0;
}
