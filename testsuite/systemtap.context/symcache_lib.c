/* The libraries of systemtap.context/symcache.exp, built three times
 * with -DFN=fn_alpha, fn_bravo and fn_gamma: the same code at the same
 * offsets under other names (of the same length). */
volatile int lib_sink;

__attribute__((noinline)) int FN(int x)
{
	lib_sink = x;
	return x * 3 + 1;
}
