/* label_symbols.exp: a function with a label, built with and without
 * debug info. */
int g(int x)
{
	if (x)
		goto out;
	x++;
out:
	return x;
}

int main(void)
{
	return g(0) - 1;
}
