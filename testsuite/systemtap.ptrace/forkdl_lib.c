/* The library of forkdl.c. */
static volatile int sink;

__attribute__((noinline)) int plug_fn(int x)
{
	sink = x;
	return x * 2;
}
