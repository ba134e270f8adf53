/* A function to probe, for pp.exp. */

int pp_leaf(int x)
{
	return x + 1;
}

int main(void)
{
	return pp_leaf(-1);
}
