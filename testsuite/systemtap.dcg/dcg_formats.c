/* The call graph's output formats (systemtap.dcg/formats.exp; longjmp
 * and exit come from dcg_cases.c). Built at -O2, functions noinline;
 * formats.exp renames odd_name() with objcopy to a symbol with a quote,
 * backslashes, a newline, a tab, \001, \377 and a ';' in it.
 *   dcg_formats names     root(): rec(2) (recursion), odd_name() through a
 *                         pointer, a SIGUSR1 handler run in the thread
 *   dcg_formats walk      walk(3) twice: a recursive function, for the
 *                         outermost-only switch-on
 *   dcg_formats requests  serve(): 12 requests, the 9th slow (it calls
 *                         slow_path()); for the flight recorder
 *   dcg_formats spin      spin() forever (Ctrl-C) */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define NI __attribute__((noinline))

volatile int sink;

NI int leaf(int x)
{
	sink = x;
	return x + 1;
}

NI int odd_name(int x)
{
	return leaf(x) + 1;
}
int (*volatile odd)(int) = odd_name;

NI int rec(int n)
{
	if (n <= 0)
		return 0;
	return rec(n - 1) + leaf(n);
}

NI void handler(int s)
{
	sink = leaf(s);
}

/* kill(getpid(), SIGUSR1) with no libc in between */
NI void kill_self(void)
{
	long pid;
	__asm__ volatile("syscall" : "=a"(pid) : "a"(39) : "rcx", "r11", "memory");
	__asm__ volatile("syscall"
			 : "=a"(sink)
			 : "a"(62), "D"(pid), "S"(SIGUSR1)
			 : "rcx", "r11", "memory");
}

NI void root(void)
{
	sink = rec(2);
	sink = odd(3);
	kill_self();
	sink = leaf(4);
}

NI int walk(int n)
{
	if (n <= 0)
		return leaf(0);
	return walk(n - 1) + leaf(n);
}

NI int fast_path(int x)
{
	return leaf(x);
}

NI int slow_path(int x)
{
	usleep(100000);
	return leaf(x) + leaf(x + 1);
}

NI int request(int i)
{
	int r = fast_path(i);
	if (i == 9)
		r += slow_path(i);
	return r;
}

NI void serve(void)
{
	for (int i = 1; i <= 12; i++)
		sink = request(i);
}

NI void spin(void)
{
	for (;;)
		sink = rec(3);
}

int main(int argc, char **argv)
{
	const char *m = argc > 1 ? argv[1] : "";
	signal(SIGUSR1, handler);
	if (!strcmp(m, "names"))
		root();
	else if (!strcmp(m, "walk"))
		sink = walk(3) + walk(3);
	else if (!strcmp(m, "requests"))
		serve();
	else if (!strcmp(m, "spin"))
		spin();
	else
		return 2;
	return 0;
}
