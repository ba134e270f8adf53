/* liba of systemtap.dcg/dlreuse.exp: dlopened, called, dlclosed. */
#define NI __attribute__((noinline))

volatile int a_sink;

/* run by ld.so in dlopen and dlclose */
NI __attribute__((constructor)) void alpha_ctor(void)
{
	a_sink = 1;
}

NI __attribute__((destructor)) void alpha_dtor(void)
{
	a_sink = 2;
}

NI int alpha_inner(int x)
{
	a_sink = x;
	return x * 3;
}

NI int alpha_outer(int x)
{
	int r = alpha_inner(x);
	a_sink = r;
	return r + alpha_inner(x + 1);
}

NI int alpha_entry(int x)
{
	return alpha_outer(x) + 1;
}
