/* libb of systemtap.dcg/dlreuse.exp: dlopened where liba was, with
 * other names, other code at liba's addresses and more calls. */
#define NI __attribute__((noinline))

volatile int b_sink;

NI __attribute__((constructor)) void beta_ctor(void)
{
	b_sink = 1;
}

NI int beta_leaf(int x)
{
	b_sink = x;
	return x - 1;
}

NI int beta_mid(int x)
{
	int r = beta_leaf(x) + beta_leaf(x * 2);
	b_sink = r;
	return r + beta_leaf(r);
}

NI int beta_other(int x)
{
	b_sink = x;
	return beta_leaf(x + 7) * 5;
}

NI int beta_entry(int x)
{
	int r = beta_mid(x);
	b_sink = r;
	return r + beta_other(r);
}
