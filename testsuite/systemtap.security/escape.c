/* escape.exp: a program whose names escape.exp replaces in its assembly
 * (escleaf, escparm, esctype, escmember, the provider escprov, the mark
 * escmark, and the file ESCFILE of the lines after #line) with names made
 * of hostile bytes. The line numbers under #line are part of the test. */
#include <sys/sdt.h>
struct esctype {
	int escmember;
};
extern int esclib(int);
int escleaf(struct esctype *escparm);
int main(void)
{
	struct esctype t = { esclib(1) };
	return escleaf(&t) == 3 ? 0 : 1;
}
#line 1 "ESCFILE"
int escleaf(struct esctype *escparm)
{
	STAP_PROBE1(escprov, escmark, escparm->escmember);
	return escparm->escmember + 1;
}
