/* atvar_module.exp: the library (linked, or dlopened with -DDL) whose
 * globals a probe in the program reads, and whose function reads the
 * program's global. */
#ifdef DL
int dl_value = 5;

int dl_get(void)
{
	return dl_value;
}
#else
int lib_counter = 41;
extern int main_value;

int lib_get(int x)
{
	return x + lib_counter + main_value;
}
#endif
