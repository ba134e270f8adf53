/* atvar_tls.exp: thread-local variables of a library linked with the
 * program (static TLS), or (-DDL) of one it dlopens (dynamic TLS). */
#ifdef DL
__thread int dl_tls = 5;

int dl_touch(void)
{
	return ++dl_tls;
}
#else
__thread int lib_tls = 100;
__thread char lib_name[8] = "lib";

int lib_tls_add(int v)
{
	lib_tls += v;
	return lib_tls;
}
#endif
