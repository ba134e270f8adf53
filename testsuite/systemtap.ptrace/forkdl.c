/* Target for stap.exp: forkdl LIB. The parent dlopens LIB and calls
 * plug_fn twice, then forks; the child calls it 3 times, dlcloses LIB,
 * loads it again (usually at the same place) and calls it 4 times; the
 * parent calls it once more after the child has ended. */
#include <dlfcn.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *lib;

static void *load(int (**fn)(int))
{
	void *h = dlopen(lib, RTLD_NOW);

	if (!h) {
		printf("dlopen: %s\n", dlerror());
		_exit(1);
	}
	*fn = (int (*)(int))dlsym(h, "plug_fn");
	return h;
}

int main(int argc, char **argv)
{
	int (*fn)(int), st;
	void *h;
	pid_t pid;

	if (argc != 2)
		return 2;
	lib = argv[1];
	h = load(&fn);
	fn(1);
	fn(2);
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		for (int i = 0; i < 3; i++)
			fn(i);
		dlclose(h);
		h = load(&fn);
		for (int i = 0; i < 4; i++)
			fn(i);
		dlclose(h);
		_exit(0);
	}
	waitpid(pid, &st, 0);
	fn(3);
	dlclose(h);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 100 + WTERMSIG(st);
}
