/* A shared library with SDT markers for libmark.exp: lmark always,
 * guarded only while its semaphore is raised (by a probe on it). */
#define _SDT_HAS_SEMAPHORES 1
#include <sys/sdt.h>

#define SEMAPHORE(n) unsigned short tlib_##n##_semaphore __attribute__((unused, section(".probes")))
SEMAPHORE(lmark);
SEMAPHORE(guarded);

int lm_fire(int x)
{
	STAP_PROBE2(tlib, lmark, x, x * 3);
	if (tlib_guarded_semaphore)
		STAP_PROBE1(tlib, guarded, -x);
	return x + 1;
}
