/* The library of t-dl.c, built twice (VAL 1: libxa.so, VAL 2: libxb.so)
 * with the same layout, so the second is mapped where the first was. */
int val(int x)
{
	return x + VAL;
}
