/* suggest_kinds.c's second CU */
static inline __attribute__((always_inline)) int inline_elsewhere(int x)
{
	return x * 2;
}

int kinds2_user(int x)
{
	return inline_elsewhere(x);
}
