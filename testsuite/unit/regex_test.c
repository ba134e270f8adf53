/* =~ with POSIX extended regular expressions, matched(N), ngroups(). */
#include "unit.h"

static struct _stp_context ctx;

static const char *matched(int64_t n)
{
	static char buf[512];

	ctx.last_error = NULL;
	_stp_regex_matched(&ctx, n, buf);
	return buf;
}

int main(void)
{
	char name[64];

	unit_check_long("match", _stp_regex_match(&ctx, "hello world", "wor"), 1);
	unit_check_long("no match", _stp_regex_match(&ctx, "hello world", "^world"), 0);
	unit_check_long("anchors", _stp_regex_match(&ctx, "abc", "^a.c$"), 1);
	unit_check_long("extended syntax", _stp_regex_match(&ctx, "aaa", "^a+$"), 1);
	unit_check_long("alternation", _stp_regex_match(&ctx, "dog", "cat|dog"), 1);
	unit_check_long("classes", _stp_regex_match(&ctx, "x9", "^[[:alpha:]][[:digit:]]$"), 1);
	unit_check_long("empty pattern", _stp_regex_match(&ctx, "x", ""), 1);

	unit_check_long("groups match",
			_stp_regex_match(&ctx, "key=value;", "([a-z]+)=([a-z]+)(x)?"), 1);
	unit_check_str("matched(0)", matched(0), "key=value");
	unit_check_str("matched(1)", matched(1), "key");
	unit_check_str("matched(2)", matched(2), "value");
	unit_check_str("unmatched group is empty", matched(3), "");
	unit_result("unmatched group is no error", ctx.last_error == NULL, NULL);
	unit_check_long("ngroups", _stp_regex_ngroups(&ctx), 4);
	matched(4);
	unit_check_str("nonexistent group", ctx.last_error,
		       "Attempted to get nonexistent subexpression 4");
	ctx.last_error = NULL;

	_stp_regex_match(&ctx, "abc", "x");
	matched(0);
	unit_check_str("after a failed match", ctx.last_error,
		       "Attempted to get subexpression 0 from failed match");
	ctx.last_error = NULL;

	_stp_regex_match(&ctx, "abc", "(");
	unit_result("bad pattern is an error",
		    ctx.last_error && strncmp(ctx.last_error, "regex compilation error: ", 25) == 0,
		    ctx.last_error);
	ctx.last_error = NULL;

	/* More patterns than the cache holds, then the first again. */
	for (int i = 0; i < 100; i++) {
		char re[32], s[32];
		snprintf(re, sizeof re, "^p%d$", i);
		snprintf(s, sizeof s, "p%d", i);
		if (!_stp_regex_match(&ctx, s, re)) {
			snprintf(name, sizeof name, "pattern %d", i);
			unit_result(name, 0, "no match");
		}
	}
	unit_check_long("cache eviction keeps working", _stp_regex_match(&ctx, "p0", "^p0$"), 1);
	_stp_regex_reset();
	matched(0);
	unit_result("reset forgets the match", ctx.last_error != NULL, NULL);
	_stp_regex_cleanup();
	return unit_done();
}
