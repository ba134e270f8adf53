/* Issue 4: tiny programs whose call counts are compared with
   callgrind's (callgrind.exp) and whose trees are compared with
   para-callgraph.stp's (para_equiv.exp). argv[1] picks the root. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NI __attribute__((noinline))
volatile int sink;

NI int fact(int n)
{
    if (n <= 1)
        return 1;
    int r = fact(n - 1);
    sink = r;
    return n * r;
}
NI int root_rec(void) { return fact(6) + fact(3); }

NI int cmp(const void *a, const void *b)
{
    return *(const int *)a - *(const int *)b;
}
NI int root_qsort(void)
{
    int v[6] = {5, 2, 9, 1, 7, 3};
    qsort(v, 6, sizeof v[0], cmp);
    return v[0];
}

NI int twice(int x) { return 2 * x; }
NI int inc(int x) { return x + 1; }
int (*volatile fps[2])(int) = {twice, inc};
NI int apply(int (*f)(int), int x) { return f(x); }
NI int root_fp(void)
{
    int s = 0;
    for (int i = 0; i < 4; i++)
        s += apply(fps[i & 1], i);
    return s;
}

NI int tail_b(int x) { sink = x; return x + 3; }
NI int tail_a(int x) { sink = x; return tail_b(x * 2); }
NI int root_tail(void) { return tail_a(1) + tail_a(2); }

__attribute__((noipa)) void tiny(void) { }
NI int root_tiny(void)
{
    for (int i = 0; i < 5; i++)
        tiny();
    return 0;
}

NI size_t root_libc(void)
{
    char buf[32];
    size_t n = 0;
    for (int i = 0; i < 3; i++) {
        snprintf(buf, sizeof buf, "%d", i * 11);
        n += strlen(buf);
    }
    return n;
}

int main(int argc, char **argv)
{
    const char *w = argc > 1 ? argv[1] : "";
    long r = 0;
    if (!strcmp(w, "rec")) r = root_rec();
    else if (!strcmp(w, "qsort")) r = root_qsort();
    else if (!strcmp(w, "fp")) r = root_fp();
    else if (!strcmp(w, "tail")) r = root_tail();
    else if (!strcmp(w, "tiny")) r = root_tiny();
    else if (!strcmp(w, "libc")) r = (long)root_libc();
    sink = (int)r;
    return 0;
}
