/* entryval.exp: at -O2, h's parameters live in rdi/rsi until the first
 * call; after it the DWARF knows only their values at h's entry
 * (DW_OP_entry_value). */
volatile int sink;

__attribute__((noinline)) int use(int v)
{
	sink = v;
	return v;
}

__attribute__((noinline)) int h(int a, int b)
{
	int r = use(b);
	r += use(r); /* line 15 */
	return r + 1;
}

int main(int argc, char **argv)
{
	(void)argv;
	return h(argc, argc + 1) > 100;
}
