/* suggest.exp's library */
#include <sys/sdt.h>

int suggest_lib_value(void)
{
	STAP_PROBE(lib, lib__point);
	return 1;
}
