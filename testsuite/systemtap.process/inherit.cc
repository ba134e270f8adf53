// C++ base classes and anonymous members for $p->member and $p$ / $p$$
// (members.exp).
#include <cstdio>
struct Base { int b1; long b2; };
struct Mid : Base { int m; };
struct Der : Mid { int d; };
struct A { int a; };
struct B { int b; };
struct C : A, B {
	int c;
	union { int u1; short u2; };
	struct { int s1; struct { int t; } in; };
};
extern "C" int use_der(Der *p) { return p->d + p->m + p->b1 + (int)p->b2; }
extern "C" int use_c(C *p) { return p->a + p->b + p->c + p->u1 + p->s1 + p->in.t; }
int main()
{
	Der x;
	C y;
	x.b1 = 1; x.b2 = 2; x.m = 3; x.d = 4;
	y.a = 1; y.b = 2; y.c = 3; y.u1 = 5; y.s1 = 6; y.in.t = 7;
	printf("%d %d\n", use_der(&x), use_c(&y));
	return 0;
}
