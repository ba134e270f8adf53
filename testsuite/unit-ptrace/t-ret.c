/* Target for return probes: normal returns, recursion, and frames left by
 * longjmp (their return probes must never fire). Prints what the driver
 * must print ("expect: ...") for `-r twice -r deep -r work2`. */
#include <setjmp.h>
#include <stdio.h>

static jmp_buf env;
static volatile int sink;

__attribute__((noinline)) int twice(int x)
{
	sink = x;
	return 2 * x;
}

/* recurses n levels, then longjmps out of all of them */
__attribute__((noinline)) int deep(int n)
{
	if (n == 0)
		longjmp(env, 1);
	sink = deep(n - 1) + twice(n); /* never reached */
	return sink;
}

/* a frame-pointer prologue (push %rbp; mov %rsp,%rbp) and recursion */
__attribute__((noinline)) int work2(int n)
{
	if (n <= 0)
		return 1;
	return work2(n - 1) + twice(n) + 1;
}

int main(void)
{
	unsigned long sum = 0;
	int calls = 0, w2 = 0;

	for (int i = 0; i < 100; i++) {
		sum += (unsigned)twice(i);
		calls++;
	}
	for (int i = 0; i < 5; i++) {
		if (setjmp(env) == 0)
			deep(3);
		/* after the longjmp, normal calls again */
		sum += (unsigned)twice(1000 + i);
		calls++;
	}
	unsigned long w2sum = 0;
	for (int i = 0; i < 3; i++) {
		w2sum += (unsigned)work2(4);
		/* work2(4) calls work2 5 times (4..0) and twice 4 times */
		for (int n = 4; n >= 0; n--) {
			if (n > 0) {
				sum += 2u * n;
				calls++;
			}
		}
	}
	/* work2(n) = work2(n-1) + 2n + 1, work2(0) = 1: returns of all levels */
	unsigned long w2all = 0;
	for (int n = 0; n <= 4; n++) {
		int v = 1;
		for (int k = 1; k <= n; k++)
			v += 2 * k + 1;
		w2all += (unsigned)v;
	}
	w2 = 3 * 5;
	printf("result=%lu\n", sum + w2sum);
	printf("expect: probe twice hits=%d returns=%d retsum=%lu\n", calls, calls, sum);
	printf("expect: probe deep hits=20 returns=0 retsum=0\n");
	printf("expect: probe work2 hits=%d returns=%d retsum=%lu\n", w2, w2, 3 * w2all);
	return 0;
}
