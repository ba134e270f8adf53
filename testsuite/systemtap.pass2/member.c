/* A struct to reach through target variables (member.exp) and functions
 * and a PLT entry to probe (process_dump.exp). */
#include <stdio.h>

struct node {
	int val;
	struct node *next;
};

int visit(struct node *p)
{
	return p->val;
}

int main(void)
{
	struct node n = {1, 0};
	puts("member");
	return visit(&n) - 1;
}
