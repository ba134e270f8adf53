// The dynamic call graph's C++ case (systemtap.dcg/cases.exp): an
// exception thrown three frames below the function that catches it.
#define NI __attribute__((noinline))

volatile int sink;

extern "C" NI int leaf(int x)
{
	sink = x;
	return x + 1;
}

extern "C" NI void thrower(int n)
{
	sink = leaf(n);
	if (sink > 0)
		throw n;
}

extern "C" NI void mid2(int n)
{
	thrower(n + 1);
	sink = n;
}

extern "C" NI void mid1(int n)
{
	mid2(n + 1);
	sink = n;
}

extern "C" NI void root_exc(void)
{
	try {
		mid1(1);
	} catch (int e) {
		sink = e;
	}
	sink = leaf(5);
}

int main()
{
	root_exc();
	return 0;
}
