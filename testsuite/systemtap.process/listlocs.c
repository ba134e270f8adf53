/* entryval.exp: at -O2, k is a constant (DW_AT_const_value), unused has
 * no location at all, and a lives in rdi. */
volatile int sink;

__attribute__((noinline)) int g(int a)
{
	int k = 5;
	int unused;
	sink = k + a;
	return a;
}

int main(int argc, char **argv)
{
	(void)argv;
	return g(argc) > 100;
}
