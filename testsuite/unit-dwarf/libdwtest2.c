/* A second library, loaded where libdwtest.so was (the unmap test). */
int lib2_entry(int v)
{
	return v * 5;
}
