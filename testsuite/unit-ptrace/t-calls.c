/* Target for the ptrace engine tests: threads calling probed functions.
 *   t-calls THREADS CALLS        each thread calls work() and bump() CALLS times
 *   t-calls spin THREADS         loop until killed (attach tests); says
 *                                "ready" on fd 3 when its threads run
 *   t-calls segv CALLS           crash with SIGSEGV after CALLS calls
 *   t-calls signals CALLS        a SIGUSR1 handler counts signals raised
 *                                inside work(); SIGSTOP/SIGCONT to itself
 *   t-calls leader-exit CALLS    the main thread ends (pthread_exit) while
 *                                two threads call work() CALLS times each
 *   t-calls spin-noleader N      spin, with the main thread gone
 *   t-calls syscalls N           N getppid() system calls
 *   t-calls step                 call steps10() (10 instructions) twice
 *   t-calls churn ROUNDS         threads come and go: each round starts 4
 *                                threads calling work() 10 times each
 *                                (ROUNDS 0: forever, "ready" on fd 3)
 * It prints the lines the test driver must print ("expect: ..."). */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

long counter; /* incremented by bump(), through a RIP-relative operand */
void bump(void);
long load_counter(void);
void steps10(void);
__asm__(".text\n.globl bump\n.type bump,@function\nbump:\n"
	"\tlock incq counter(%rip)\n\tret\n.size bump,.-bump\n"
	".globl load_counter\n.type load_counter,@function\nload_counter:\n"
	"\tmovq counter(%rip), %rax\n\tret\n.size load_counter,.-load_counter\n"
	".globl steps10\n.type steps10,@function\nsteps10:\n"
	"\t.rept 9\n\tnop\n\t.endr\n\tret\n.size steps10,.-steps10\n");

static int calls;
static volatile int sink;
static volatile sig_atomic_t usr1;

__attribute__((noinline)) int work(int x)
{
	sink = x;
	return x * 3 + 1;
}

static void *thread(void *arg)
{
	long spin = (long)arg;
	for (int i = 0; spin || i < calls; i++) {
		sink = work(i);
		bump();
		if (spin)
			usleep(1000);
	}
	return NULL;
}

static void *announce_leader_gone(void *arg)
{
	char path[64], buf[256], *p;

	(void)arg;
	snprintf(path, sizeof path, "/proc/%d/task/%d/stat", (int)getpid(), (int)getpid());
	for (;;) {
		FILE *f = fopen(path, "r");
		p = f && fgets(buf, sizeof buf, f) ? strrchr(buf, ')') : NULL;
		if (f)
			fclose(f);
		if (!p || p[2] == 'Z')
			break;
		usleep(1000);
	}
	if (write(3, "r", 1) != 1)
		perror("ready");
	return NULL;
}

static void on_usr1(int sig)
{
	(void)sig;
	usr1++;
}

int main(int argc, char **argv)
{
	int nthreads = 1;
	pthread_t tids[64];

	if (argc == 3 && strcmp(argv[1], "leader-exit") == 0) {
		calls = atoi(argv[2]);
		printf("expect: probe work hits=%d\n", 2 * calls);
		fflush(stdout);
		for (int i = 0; i < 2; i++)
			pthread_create(&tids[i], NULL, thread, NULL);
		pthread_exit(NULL);
	}
	if (argc == 3 && (strcmp(argv[1], "spin") == 0 || strcmp(argv[1], "spin-noleader") == 0)) {
		nthreads = atoi(argv[2]);
		for (int i = 0; i < nthreads; i++)
			pthread_create(&tids[i], NULL, thread, (void *)1L);
		usleep(20000);
		if (strcmp(argv[1], "spin-noleader") == 0) {
			/* "ready" once the main thread is really gone */
			pthread_t a;
			pthread_create(&a, NULL, announce_leader_gone, NULL);
			pthread_exit(NULL);
		}
		if (write(3, "r", 1) != 1)
			perror("ready");
		for (;;)
			pause();
	}
	if (argc == 3 && strcmp(argv[1], "segv") == 0) {
		calls = atoi(argv[2]);
		for (int i = 0; i < calls; i++)
			work(i);
		printf("expect: probe work hits=%d\n", calls);
		fflush(stdout);
		*(volatile int *)(long)sink = 1; /* sink is small: not mapped */
		return 0;
	}
	if (argc == 3 && strcmp(argv[1], "signals") == 0) {
		signal(SIGUSR1, on_usr1);
		calls = atoi(argv[2]);
		for (int i = 0; i < calls; i++) {
			work(i);
			raise(SIGUSR1);
		}
		pid_t waker = fork();
		if (waker == 0) {
			/* let the parent stop (SIGSTOP must stop it, traced or
			 * not), then continue it */
			usleep(100000);
			kill(getppid(), SIGCONT);
			_exit(0);
		}
		raise(SIGSTOP);
		waitpid(waker, NULL, 0);
		printf("usr1=%d\n", (int)usr1);
		printf("expect: probe work hits=%d\n", calls);
		return 0;
	}
	if (argc == 3 && strcmp(argv[1], "churn") == 0) {
		int rounds = atoi(argv[2]);
		calls = 10;
		for (int r = 0; rounds == 0 || r < rounds; r++) {
			for (int i = 0; i < 4; i++)
				pthread_create(&tids[i], NULL, thread, NULL);
			for (int i = 0; i < 4; i++)
				pthread_join(tids[i], NULL);
			if (rounds == 0 && r == 10 && write(3, "r", 1) != 1)
				perror("ready");
		}
		printf("expect: probe work hits=%d\n", rounds * 4 * 10);
		printf("expect: probe bump hits=%d\n", rounds * 4 * 10);
		return 0;
	}
	if (argc == 3 && strcmp(argv[1], "syscalls") == 0) {
		int n = atoi(argv[2]);
		for (int i = 0; i < n; i++)
			syscall(SYS_getppid);
		printf("expect: syscall getppid entries=%d exits=%d\n", n, n);
		return 0;
	}
	if (argc == 2 && strcmp(argv[1], "step") == 0) {
		steps10();
		steps10();
		printf("expect: steps steps10 insn=20\n");
		return 0;
	}
	if (argc != 3)
		return 2;
	nthreads = atoi(argv[1]);
	calls = atoi(argv[2]);
	for (int i = 0; i < nthreads; i++)
		pthread_create(&tids[i], NULL, thread, NULL);
	for (int i = 0; i < nthreads; i++)
		pthread_join(tids[i], NULL);
	printf("counter=%ld load=%ld\n", counter, load_counter());
	printf("expect: probe work hits=%d\n", nthreads * calls);
	printf("expect: probe bump hits=%d\n", nthreads * calls);
	return 0;
}
