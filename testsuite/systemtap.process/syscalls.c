/* thread_syscall.exp: makes known system calls (getppid three times, one
 * write); with -e prints what the test's script prints. */
#include <string.h>
#include <stdio.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "-e")) {
		printf("ok\nwrite fd 1 len 3 ret 3\ngetppid 3 3\n");
		return 0;
	}
	for (int i = 0; i < 3; i++)
		getppid();
	return write(1, "ok\n", 3) != 3;
}
