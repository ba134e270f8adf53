#include <stdlib.h>
struct opaque { int x; long y; };
struct opaque *make(void)
{
	struct opaque *o = malloc(sizeof *o);
	o->x = 42;
	o->y = 7;
	return o;
}
