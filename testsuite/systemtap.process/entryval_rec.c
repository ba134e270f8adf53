/* entryval.exp: rec's parameters are entry values after its first call
 * (at -O2); each level of the recursion has its own. */
volatile int sink;

__attribute__((noinline)) int use(int v)
{
	sink = v;
	return v;
}

__attribute__((noinline)) int rec(int n, int k)
{
	int r = use(k);
	if (n > 0)
		r += rec(n - 1, k + 10);
	r += use(r); /* line 16 */
	return r + 1;
}

int main(int argc, char **argv)
{
	(void)argv;
	return rec(argc + 1, argc) > 100000;
}
