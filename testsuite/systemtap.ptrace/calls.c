/* Target for stap.exp: work() called 20 times. */
static volatile int sink;

__attribute__((noinline)) int work(int x)
{
	sink = x;
	return x + 1;
}

int main(void)
{
	for (int i = 0; i < 20; i++)
		work(i);
	return 0;
}
