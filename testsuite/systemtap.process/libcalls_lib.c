/* A shared library for library.exp: linked by libcalls (tlib_*) and
 * opened by dlopen (tdl_*), built twice from this file. */
#ifdef DL
int tdl_twice(int x)
{
	return 2 * x;
}
#else
int tlib_add(int a, int b)
{
	return a + b;
}
#endif
