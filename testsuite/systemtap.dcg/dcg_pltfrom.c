/* Calls through PLT stubs (systemtap.dcg/pltfrom.exp): a call to getpid,
 * then a tail call (a jmp to the stub at -O2) of getppid. */
#include <unistd.h>

__attribute__((noinline)) pid_t work(int n)
{
	if (getpid() < n)
		return -1;
	return getppid();
}

int main(int argc, char **argv)
{
	(void)argv;
	return work(argc) > 0 ? 0 : 1;
}
