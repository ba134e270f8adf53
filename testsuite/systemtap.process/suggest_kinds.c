/* suggest.exp's second program: which names SystemTap 4.8 suggests for a
 * function that matches nothing. From the symbol table every FUNC entry,
 * the undefined import by its versioned name, never the IFUNC (chosen)
 * or the label without a type (bare_label); from the debug info only the
 * inline functions (inline_only), of the CUs with a matching file
 * (inline_elsewhere is in suggest_kinds2.c). No libc, no start files:
 * it is resolved, never run. */
int suggest_lib_value(void);
int kinds2_user(int x);
int cxx_entry(int x);

static inline __attribute__((always_inline)) int inline_only(int x)
{
	return x + 1;
}

static int chosen_impl(void)
{
	return 2;
}

static void *chosen_pick(void)
{
	return (void *)chosen_impl;
}

int chosen(void) __attribute__((ifunc("chosen_pick")));

__asm__(".text\n.globl bare_label\nbare_label:\n\tret\n");

void _start(void)
{
	inline_only(chosen() + kinds2_user(suggest_lib_value()) + cxx_entry(3));
	for (;;)
		;
}
