/* A deterministic program for SystemTap's para-callgraph.stp example.
 * trigger() calls a small tree of functions with int, char and pointer
 * parameters; the calls before and after trigger() (outside, and leaf
 * through it) must not be traced.  With a file name argument, the program
 * writes there what the example prints for trigger(), without the time and
 * "prog(tid):" columns: "->func parms" and "<-func return=..." lines
 * indented one space per nesting level, as thread_indent does. */
#include <stdio.h>
#include <string.h>

static FILE *expect;
static int level;

/* Inline, so that only libc (not traced) runs: "->" lines go in one level,
 * "<-" lines come back out. */
#define ENTER(...)                                                      \
    do {                                                                \
        if (expect) {                                                   \
            fprintf(expect, "%*s->", level++, "");                      \
            fprintf(expect, __VA_ARGS__);                               \
            fputc('\n', expect);                                        \
        }                                                               \
    } while (0)
#define LEAVE(...)                                                      \
    do {                                                                \
        if (expect) {                                                   \
            fprintf(expect, "%*s<-", --level, "");                      \
            fprintf(expect, __VA_ARGS__);                               \
            fputc('\n', expect);                                        \
        }                                                               \
    } while (0)

/* The value as $$parms and $$return show it: %#x of the sign-extended
 * 64-bit value. */
#define HEX(v) ((unsigned long long)(long long)(v))

static int counter;

__attribute__((noinline)) int leaf(int x)
{
    ENTER("leaf x=%#llx", HEX(x));
    counter += x;
    LEAVE("leaf return=%#llx", HEX(x * 2));
    return x * 2;
}

__attribute__((noinline)) long add(long a, long b)
{
    ENTER("add a=%#llx b=%#llx", HEX(a), HEX(b));
    long r = leaf((int)a) + b;
    LEAVE("add return=%#llx", HEX(r));
    return r;
}

__attribute__((noinline)) void store(int *p, int v)
{
    ENTER("store p=%#llx v=%#llx", HEX((unsigned long)p), HEX(v));
    *p = v;
    LEAVE("store ");
}

__attribute__((noinline)) int scale(int v, char c)
{
    ENTER("scale v=%#llx c=%#llx", HEX(v), HEX(c));
    int r = v * (c - '0');
    LEAVE("scale return=%#llx", HEX(r));
    return r;
}

__attribute__((noinline)) int sum(const int *arr, int n)
{
    ENTER("sum arr=%#llx n=%#llx", HEX((unsigned long)arr), HEX(n));
    int s = 0;
    for (int i = 0; i < n; i++)
        s += arr[i];
    LEAVE("sum return=%#llx", HEX(s));
    return s;
}

__attribute__((noinline)) int trigger(int depth)
{
    int buf[4];

    ENTER("trigger depth=%#llx", HEX(depth));
    store(&buf[0], 1);
    store(&buf[1], (int)add(2, 3));
    store(&buf[2], leaf(depth));
    store(&buf[3], scale(-2, '3'));
    int r = sum(buf, 4);
    LEAVE("trigger return=%#llx", HEX(r));
    return r;
}

__attribute__((noinline)) int outside(int x)
{
    return leaf(x) + 1;
}

int main(int argc, char **argv)
{
    int quiet = argc > 1 && !strcmp(argv[1], "-q");
    FILE *f = argc > 1 && !quiet ? fopen(argv[1], "w") : NULL;
    int r = outside(7);

    expect = f;
    r += trigger(4);
    expect = NULL;
    r += outside(9);
    if (f)
        fclose(f);
    if (!quiet)
        printf("%d\n", r);
    return 0;
}
