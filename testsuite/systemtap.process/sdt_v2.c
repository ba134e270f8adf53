/* Markers from a provider header and object made by dtrace(1) with
 * -DSTAP_SDT_V2, as QEMU builds its trace points (sdt_v2.exp): their
 * semaphores have default visibility in .probes. The second argument of
 * add says whether its semaphore was set when it fired. */
#include "sdt_v2.h"

int main(void)
{
	for (int i = 1; i <= 3; i++)
		SDTV2_ADD(i, SDTV2_ADD_ENABLED() ? 1 : 0);
	SDTV2_HELLO("world");
	return 0;
}
