/* Tracing switched on and off at instructions that branch
 * (systemtap.dcg/switchon.exp). Built at -O2; switchon.exp checks the
 * first instructions with objdump. Each mode runs one case:
 *   call     work() and stmt() start with a call (gcc emits that for a
 *            call needing no stack alignment); stmt's second line is a
 *            call too, and stmt ends with a tail call
 *   jmp      on_jmp: jmp leaf (a tail call)
 *   ret      on_ret: ret
 *   jcc      on_jcc: je leaf2 (a conditional tail call), taken, then not
 *   jmpreg   on_jmpreg: jmp *%rsi
 *   jmpmem   on_jmpmem: jmp *(%rsi)
 *   callind  on_callind: call *%rsi
 *   off      work() returning to a call, a jmp and a ret (off_call,
 *            off_jmp, off_ret)
 *   reton    ret_on: the return address of its first call is a call
 *   rec      rec2: starts with a call (to on_ret, which keeps %edi),
 *            calls itself once */
#include <stdio.h>
#include <string.h>

#define NI __attribute__((noinline))

volatile int sink;

NI int leaf(int x)
{
	sink = x;
	return x + 1;
}

NI int leaf2(int x)
{
	sink = x;
	return x + 2;
}

NI void lv(void)
{
	sink = 1;
}

NI void lv2(void)
{
	sink = 2;
}

NI void stmt(void)
{
	lv();
	lv2(); /* line STMT_LINE: switchon.exp probes it */
	lv();
}

NI int work(int x)
{
	lv();
	return x * 3 + sink;
}

int (*tab[1])(int) = {leaf2};

int on_jmp(int), on_ret(int), do_jcc(int), on_jmpreg(int, void *), on_jmpmem(int, void *),
	on_callind(int, void *), off_call(int), off_jmp(int), off_ret(int), ret_on(int),
	rec2(int);
#define FN(name, body) \
	".globl " #name "\n.type " #name ",@function\n" #name ":\n" body ".size " #name ", .-" #name "\n"
__asm__(".text\n"
	FN(on_jmp, "\tjmp leaf\n")
	FN(on_ret, "\tret\n")
	/* the flags on_jcc branches on come from its caller */
	FN(do_jcc, "\tcmp $1, %edi\n\tjmp on_jcc\n")
	FN(on_jcc, "\tje leaf2\n\tjmp leaf\n")
	FN(on_jmpreg, "\tjmp *%rsi\n")
	FN(on_jmpmem, "\tjmp *(%rsi)\n")
	FN(on_callind, "\tcall *%rsi\n\tret\n")
	FN(off_call, "\tcall work\n\tcall leaf\n\tret\n")
	FN(off_jmp, "\tcall work\n\tjmp leaf\n")
	FN(off_ret, "\tcall work\n\tret\n")
	FN(ret_on, "\tcall leaf\n\tcall leaf2\n\tcall leaf\n\tret\n")
	FN(rec2, "\tcall on_ret\n\ttest %edi, %edi\n\tjz 1f\n\tdec %edi\n\tcall rec2\n1:\tret\n"));

int main(int argc, char **argv)
{
	const char *m = argc > 1 ? argv[1] : "";
	int r = 0;

	if (!strcmp(m, "call")) {
		r = work(1);
		stmt();
	} else if (!strcmp(m, "jmp")) {
		r = on_jmp(1);
	} else if (!strcmp(m, "ret")) {
		r = on_ret(1);
	} else if (!strcmp(m, "jcc")) {
		r = do_jcc(1) * 10 + do_jcc(0);
	} else if (!strcmp(m, "jmpreg")) {
		r = on_jmpreg(1, (void *)leaf2);
	} else if (!strcmp(m, "jmpmem")) {
		r = on_jmpmem(1, tab);
	} else if (!strcmp(m, "callind")) {
		r = on_callind(1, (void *)leaf2);
	} else if (!strcmp(m, "off")) {
		r = off_call(1) + off_jmp(1) + off_ret(1);
	} else if (!strcmp(m, "reton")) {
		r = ret_on(1);
	} else if (!strcmp(m, "rec")) {
		r = rec2(1);
	}
	printf("r=%d\n", r);
	return 0;
}
