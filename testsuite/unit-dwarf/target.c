/* A small target for the DWARF/ELF unit tests. Comments of the form
 * "@L name" mark lines the tests look up by name; keep them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#define _SDT_HAS_SEMAPHORES 1
#include <sys/sdt.h>

struct point {
	int x, y;
	const char *label;
	struct point *next;
	unsigned char tag[4];
};

typedef struct point point_t;

enum color { RED, GREEN = 5, BLUE };

struct shape {
	unsigned int kind : 3;
	unsigned int big : 1;
	int delta : 12;
	union {
		int i;
		float f;
	} u;
	enum color color;
	_Bool on;
	struct point pts[2];
};

/* SDT semaphores, as dtrace -G would define them. */
unsigned short target_three_semaphore __attribute__((section(".probes"))) = 0;
unsigned short target_guarded_semaphore __attribute__((section(".probes"))) = 0;
unsigned short target_zero_semaphore __attribute__((section(".probes"))) = 0;

int global_counter = 7;
static const char *greeting = "hello";

static inline __attribute__((always_inline)) int twice(int v)
{
	return v * 2; /* @L twice_body */
}

__attribute__((noinline)) int add(int a, int b) /* @L add_decl */
{
	int sum = a + b; /* @L add_body */
	return twice(sum);
}

__attribute__((noinline)) long walk(point_t *p, unsigned long limit) /* @L walk_decl */
{
	long total = 0; /* @L walk_body */
	char c = 'w';

	for (unsigned long i = 0; p && i < limit; i++, p = p->next)
		total += p->x + p->y + c + p->label[0] + p->tag[2]; /* @L walk_loop */
	return total;
}

__attribute__((noinline)) size_t say(const char *s) /* @L say_decl */
{
	puts(s);
	return strlen(s);
}

__attribute__((noinline)) void marks(int n, long big, const char *s)
{
	DTRACE_PROBE3(target, three, n, big, s);
	if (target_guarded_semaphore)
		DTRACE_PROBE1(target, guarded, n);
	DTRACE_PROBE(target, zero);
}

__attribute__((noinline)) int shapes(struct shape *s, int n)
{
	/* reads every member, so -O2 stores them all */
	return (int)s->kind + (int)s->big + s->delta + s->u.i + (int)s->color + s->on + s->pts[1].y +
	       s->pts[0].x + n;
}

int main(int argc, char **argv) /* @L main_decl */
{
	point_t b = {3, 4, "b", NULL, {1, 2, 3, 4}}; /* @L main_body */
	point_t a = {1, 2, "a", &b, {5, 6, 7, 8}};
	long r;

	r = walk(&a, 10) + add(argc, 2);
	say(argc > 1 ? argv[1] : greeting);
	marks(argc, r, greeting);
	{
		struct shape sh = {.kind = 5, .big = 1, .delta = -7, .u.i = 42, .color = BLUE, .on = 1,
				   .pts = {{10, 20, "p0", NULL, {0}}, {30, 40, "p1", NULL, {0}}}};

		global_counter += shapes(&sh, 1);
	}
	global_counter += (int)r;
	return (int)(r & 0) + (global_counter == 0);
}
