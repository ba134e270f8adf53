/* =~ and !~ with POSIX extended regular expressions, and matched(N).
 * Scripts use a handful of literal patterns, so compiled patterns are kept
 * in a small most-recently-used list instead of being compiled per match. */
#include "stp_internal.h"

#include <regex.h>
#include <stdlib.h>
#include <string.h>

#define REGEX_CACHE_MAX 64
#define REGEX_MAX_GROUPS 10

struct cached_re {
	struct cached_re *next;
	char *pattern;
	regex_t re;
	int ok;
	char err[128];
};

static struct cached_re *cache;
static int cache_len;

/* The last match of the current handler, for matched(N). */
static struct {
	int result; /* 1 after a successful match */
	int ngroups;
	regmatch_t m[REGEX_MAX_GROUPS];
	char *str;
} last;

/* PATTERN for regcomp with "\\1".."\\9" as plain digits: SystemTap's
 * regexes (matched by a DFA) have no back-references, and glibc's
 * back-tracking on them can take exponential time. */
static char *without_backrefs(const char *pattern)
{
	char *out = malloc(strlen(pattern) + 1), *o = out;
	if (!out)
		return NULL;
	for (const char *p = pattern; *p; p++) {
		if (*p == '\\' && p[1] >= '1' && p[1] <= '9')
			continue; /* the digit follows, unescaped */
		if (*p == '\\' && p[1])
			*o++ = *p++;
		*o++ = *p;
	}
	*o = 0;
	return out;
}

static struct cached_re *compile(const char *pattern)
{
	struct cached_re **pp, *r;
	int rc;

	for (pp = &cache; *pp; pp = &(*pp)->next) {
		if (strcmp((*pp)->pattern, pattern) == 0) {
			r = *pp;
			*pp = r->next; /* move to front */
			r->next = cache;
			cache = r;
			return r;
		}
	}
	if (cache_len >= REGEX_CACHE_MAX) {
		/* Drop the least recently used: the tail. */
		for (pp = &cache; (*pp)->next; pp = &(*pp)->next)
			;
		r = *pp;
		*pp = NULL;
		if (r->ok)
			regfree(&r->re);
		free(r->pattern);
		free(r);
		cache_len--;
	}
	r = calloc(1, sizeof *r);
	if (!r)
		return NULL;
	r->pattern = strdup(pattern);
	if (!r->pattern) {
		free(r);
		return NULL;
	}
	char *plain = without_backrefs(pattern);
	rc = plain ? regcomp(&r->re, plain, REG_EXTENDED) : REG_ESPACE;
	free(plain);
	r->ok = rc == 0;
	if (!r->ok) {
		regerror(rc, &r->re, r->err, sizeof r->err);
		regfree(&r->re);
	}
	r->next = cache;
	cache = r;
	cache_len++;
	return r;
}

int64_t _stp_regex_match(struct _stp_context *c, const char *str, const char *re)
{
	struct cached_re *r = compile(re ? re : "");
	regmatch_t m[REGEX_MAX_GROUPS];

	last.result = 0;
	if (!r) {
		_stp_error(c, "out of memory");
		return 0;
	}
	if (!r->ok) {
		_stp_error(c, "regex compilation error: %s", r->err);
		return 0;
	}
	if (regexec(&r->re, str ? str : "", REGEX_MAX_GROUPS, m, 0) != 0)
		return 0;
	free(last.str);
	last.str = strdup(str ? str : "");
	if (!last.str) {
		_stp_error(c, "out of memory");
		return 0;
	}
	memcpy(last.m, m, sizeof m);
	last.ngroups = (int)r->re.re_nsub + 1;
	if (last.ngroups > REGEX_MAX_GROUPS)
		last.ngroups = REGEX_MAX_GROUPS;
	last.result = 1;
	return 1;
}

void _stp_regex_matched(struct _stp_context *c, int64_t n, char *dst)
{
	regoff_t so, eo;
	size_t len;

	dst[0] = '\0';
	if (!last.result) {
		_stp_error(c, "Attempted to get subexpression %lld from failed match",
			   (long long)n);
		return;
	}
	if (n < 0 || n >= last.ngroups) {
		_stp_error(c, "Attempted to get nonexistent subexpression %lld", (long long)n);
		return;
	}
	so = last.m[n].rm_so;
	eo = last.m[n].rm_eo;
	if (so < 0 || eo < so)
		return; /* the group took no part in the match: "" */
	len = (size_t)(eo - so);
	if (len > (size_t)_stp_maxstringlen - 1)
		len = (size_t)_stp_maxstringlen - 1;
	memcpy(dst, last.str + so, len);
	dst[len] = '\0';
}

int64_t _stp_regex_ngroups(struct _stp_context *c)
{
	if (!last.result) {
		_stp_error(c, "Attempted to get subexpression count from failed match");
		return 0;
	}
	return last.ngroups;
}

void _stp_regex_reset(void)
{
	last.result = 0;
}

void _stp_regex_cleanup(void)
{
	while (cache) {
		struct cached_re *r = cache;
		cache = r->next;
		if (r->ok)
			regfree(&r->re);
		free(r->pattern);
		free(r);
	}
	cache_len = 0;
	free(last.str);
	last.str = NULL;
	last.result = 0;
}
