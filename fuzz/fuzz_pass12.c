/* libFuzzer harness for passes 1 and 2: any input must give diagnostics
 * and a failure code, or success, and never a crash, a hang, an abort or
 * an exit() from inside the translator. Built by `make fuzz` with
 * clang -fsanitize=fuzzer,address,undefined from the translator's sources
 * (without main.c). The translator frees nothing, so run it in libFuzzer's
 * fork mode with -ignore_ooms=1 (fuzz/run.sh does). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "session.h"

#ifndef FUZZ_TAPSET_DIR
#error "FUZZ_TAPSET_DIR must name the tapset directory"
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
const char *__asan_default_options(void);

/* The translator frees nothing on purpose: leaks are not findings. */
const char *__asan_default_options(void)
{
	return "detect_leaks=0";
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct session *s = xcalloc(1, sizeof(*s));

	/* The first byte picks options, so guru mode (embedded C) and -u
	 * are explored too; the rest is the script. */
	if (size > 0) {
		s->guru = data[0] & 1;
		s->unoptimized = (data[0] >> 1) & 1;
		data++;
		size--;
	}
	s->script_text = xstrndup((const char *)data, size);
	s->last_pass = 5; /* print no pass results */
	s->suppress_warnings = 1;
	s->tapset_dir = FUZZ_TAPSET_DIR;
	s->tmpdir = "/tmp";
	msg_suppress_warnings = 1;

	if (pass1_parse(s) == 0)
		pass2_elaborate(s);
	return 0;
}
