/* A small request handler for the dynamic call graph examples.
 *
 *   gcc -O2 -g -o app app.c
 *   ./app            handles 3 requests and prints a checksum
 *   ./app serve      handles 12 requests, the 9th of them slow (its reply
 *                    waits 100 ms), for slow_request.stp
 *
 * handle_request() parses a request (calling strlen and memchr, a
 * validation callback through a function pointer and a recursive
 * checksum), then dispatches it to do_get() or do_post(), which both
 * call reply(). Kept small, so that the tree reads at a glance.
 * noipa keeps each function a real call at -O2 (no inlining or clones).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NOINLINE __attribute__((noipa))

struct request {
	const char *method;
	const char *path;
	long sum;
};

typedef int (*validator)(const char *);

static volatile int sink;
static volatile int slow_us; /* ./app serve: how long "/slow" waits */

NOINLINE static int valid_path(const char *p)
{
	sink++;
	return p[0] == '/';
}

/* recursive: checksum of s[0..n) by halves */
NOINLINE static long checksum(const char *s, size_t n)
{
	sink++;
	if (n <= 2) {
		long v = 0;
		for (size_t i = 0; i < n; i++)
			v += (unsigned char)s[i];
		return v;
	}
	return checksum(s, n / 2) + checksum(s + n / 2, n - n / 2);
}

NOINLINE static int parse(const char *line, struct request *r, validator check)
{
	size_t n = strlen(line);
	const char *sp = memchr(line, ' ', n);

	if (!sp)
		return -1;
	r->method = strncmp(line, "GET", 3) == 0 ? "GET" : "POST";
	r->path = sp + 1;
	if (!check(r->path))
		return -1;
	r->sum = checksum(r->path, strlen(r->path));
	return 0;
}

/* called from both do_get and do_post */
NOINLINE static long reply(struct request *r, int code)
{
	if (slow_us && r->path[1] == 's')
		usleep(slow_us);
	return code + checksum(r->method, strlen(r->method));
}

NOINLINE static long do_get(struct request *r)
{
	return reply(r, 200) + r->sum;
}

NOINLINE static long do_post(struct request *r)
{
	return reply(r, 201) + r->sum * 2;
}

NOINLINE long handle_request(const char *line)
{
	struct request r;

	if (parse(line, &r, valid_path) < 0)
		return 0;
	if (strcmp(r.method, "GET") == 0)
		return do_get(&r);
	return do_post(&r);
}

int main(int argc, char **argv)
{
	static const char *reqs[] = { "GET /index", "POST /form", "GET /a" };
	long total = 0;

	if (argc > 1 && strcmp(argv[1], "serve") == 0) {
		slow_us = 100000;
		for (int i = 1; i <= 12; i++)
			total += handle_request(i == 9 ? "GET /slow" : "GET /page");
		printf("checksum %ld\n", total);
		return 0;
	}
	for (size_t i = 0; i < sizeof reqs / sizeof reqs[0]; i++)
		total += handle_request(reqs[i]);
	printf("checksum %ld\n", total);
	return 0;
}
