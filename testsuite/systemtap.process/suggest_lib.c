/* suggest.exp's library */
int suggest_lib_value(void) { return 1; }
