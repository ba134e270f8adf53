/* Target for library probes in a fork child: the parent dlopens
 * ./libt-plug.so and calls plug_fn, then forks; the child (followed, -F)
 * calls it, dlcloses it, loads it again (often at the same place: a
 * probe left from the first load would fire twice) and calls it again;
 * the parent calls it once more after the child has ended. */
#include <dlfcn.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

static void *load(int (**fn)(int))
{
	void *h = dlopen("./libt-plug.so", RTLD_NOW);

	if (!h) {
		printf("dlopen: %s\n", dlerror());
		_exit(1);
	}
	*fn = (int (*)(int))dlsym(h, "plug_fn");
	return h;
}

int main(void)
{
	int (*fn)(int), sum = 0, st;
	void *h = load(&fn);
	pid_t pid;

	sum += fn(1) + fn(2);
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		for (int i = 0; i < 3; i++)
			sum += fn(i);
		dlclose(h);
		h = load(&fn);
		for (int i = 0; i < 4; i++)
			sum += fn(i);
		dlclose(h);
		printf("child sum %d\n", sum);
		fflush(stdout);
		_exit(0);
	}
	waitpid(pid, &st, 0);
	printf("child %s %d\n", WIFEXITED(st) ? "exited" : "killed by", WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
	sum += fn(3);
	dlclose(h);
	printf("parent sum %d\n", sum);
	printf("expect: probe plug_fn hits=10\n");
	return 0;
}
