/* struct opaque is only declared in this CU and in declared_peek.c; its
 * body is in declared_make.c (members.exp). */
struct opaque;
int peek(struct opaque *p);
struct opaque *make(void);
int main(void) { return peek(make()) == 42 ? 0 : 1; }
