struct opaque;
int peek(struct opaque *p) { return *(int *)p; }
