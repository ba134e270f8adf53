/* A shared library for the DWARF/ELF unit tests. */
#include <stdio.h>
#include <sys/sdt.h>

static __attribute__((noinline)) int lib_hidden(int v)
{
	return v + 1;
}

int lib_entry(int v) /* @L lib_entry_decl */
{
	DTRACE_PROBE1(libdwtest, entry, v);
	return lib_hidden(v) * 3;
}
