// Target for return probes through C++ exceptions: frames unwound by a
// throw must never fire their return probe. For `-r thrower -r twice`.
#include <cstdio>
#include <stdexcept>

static volatile int sink;

extern "C" __attribute__((noinline)) int twice(int x)
{
	sink = x;
	return 2 * x;
}

// n levels deep, then throws through all of them when n hits 0 and odd
extern "C" __attribute__((noinline)) int thrower(int n, int do_throw)
{
	if (n == 0) {
		if (do_throw)
			throw std::runtime_error("boom");
		return 7;
	}
	int r = thrower(n - 1, do_throw) + twice(n);
	sink = r;
	return r;
}

int main()
{
	unsigned long sum = 0, tsum = 0;
	int calls = 0, thits = 0, trets = 0, caught = 0;

	for (int i = 0; i < 6; i++) {
		int t = i % 2;
		try {
			tsum += (unsigned)thrower(3, t);
			// returns of levels 0..3: 7, 7+2, 7+2+4, 7+2+4+6
			trets += 4;
			tsum += 7 + 9 + 13 - 0; // levels 0..2 (level 3 counted above)
			sum += 2 + 4 + 6;
			calls += 3;
		} catch (const std::exception &e) {
			caught++;
		}
		thits += 4;
		sum += (unsigned)twice(100 + i);
		calls++;
	}
	std::printf("caught=%d\n", caught);
	std::printf("expect: probe thrower hits=%d returns=%d retsum=%lu\n", thits, trets, tsum);
	std::printf("expect: probe twice hits=%d returns=%d retsum=%lu\n", calls, calls, sum);
	return 0;
}
