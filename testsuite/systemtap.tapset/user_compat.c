/* The traced program of user_compat.exp. Built -no-pie, so its strings
 * are at the same addresses in every run: "user_compat expect-strings"
 * prints what user_compat.stp prints of them. Run with "run" it calls
 * the probed functions; "child" is the exec'd child of the target set. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <uchar.h>
#include <unistd.h>

static const char16_t s16[] = u"h\u00e9\u20ac\U0001F600!";
static const char32_t s32[] = U"w\u00e9\U0001F600";
static const char16_t bad16[] = { 'a', 0xD800, 'b', 0 };
static const char32_t bad32[] = { 'a', 0x110000, 0 };

__attribute__((noinline)) void strings(const char16_t *a, const char32_t *b, const char16_t *c,
				       const char32_t *d)
{
	__asm__ volatile("" ::"r"(a), "r"(b), "r"(c), "r"(d));
}

__attribute__((noinline)) void regs(long a, long b)
{
	__asm__ volatile("" ::"r"(a), "r"(b));
}

__attribute__((noinline)) void in_child(void)
{
	__asm__ volatile("");
}

__attribute__((noinline)) void report(void)
{
	__asm__ volatile("");
}

__attribute__((noinline)) void mem(long size, long rss, long shr, long txt, long data)
{
	__asm__ volatile("" ::"r"(size), "r"(rss), "r"(shr), "r"(txt), "r"(data));
}

static long rss_file_pages(void)
{
	char line[256];
	long kb = 0;
	FILE *f = fopen("/proc/self/status", "r");

	while (f && fgets(line, sizeof line, f))
		if (sscanf(line, "RssFile: %ld", &kb) == 1)
			break;
	if (f)
		fclose(f);
	return kb * 1024 / sysconf(_SC_PAGESIZE);
}

static void expect_strings(void)
{
	printf("h\u00e9\u20ac\U0001F600!\nw\u00e9\U0001F600\n");
	printf("\"h\\u00E9\\u20AC\\U0001F600!\"\n\"w\\u00E9\\U0001F600\"\n");
	printf("invalid UTF-16 character U+D800 at %p\n", (void *)&bad16[1]);
	printf("invalid UTF-32 character U+110000 at %p\n", (void *)&bad32[1]);
	printf("fallback\nuser string copy fault at 0x8 [man error::fault]\n0x8\n");
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";

	if (!strcmp(mode, "expect-strings")) {
		expect_strings();
		return 0;
	}
	if (!strcmp(mode, "child")) {
		in_child();
		return 0;
	}
	strings(s16, s32, bad16, bad32);
	regs(0x1111222233334444, 0x5555666677778888);
	long f[6] = { 0 }, shr = rss_file_pages();
	FILE *st = fopen("/proc/self/statm", "r");
	if (!st || fscanf(st, "%ld %ld %ld %ld %ld %ld", &f[0], &f[1], &f[2], &f[3], &f[4], &f[5]) != 6)
		return 1;
	fclose(st);
	mem(f[0], f[1], shr, f[3], f[5]);
	/* the target set: a child that execs this program again */
	pid_t c = fork();
	if (c == 0) {
		execl("/proc/self/exe", argv[0], "child", (char *)NULL);
		_exit(127);
	}
	waitpid(c, NULL, 0);
	printf("target set:\n%d begat %d\n", (int)getppid(), (int)getpid());
	fflush(stdout);
	report();
	return 0;
}
