/* _stp_format against exact strings: SystemTap's conversions, flags,
 * widths and precisions, including where they differ from glibc. */
#include "unit.h"

#include <stdint.h>

#define N(x)                       \
	{                          \
		(int64_t)(x), NULL \
	}
#define S(x)           \
	{              \
		0, (x) \
	}
#define ARGS(...)                         \
	(struct _stp_val[]){__VA_ARGS__}, \
	    (int)(sizeof((struct _stp_val[]){__VA_ARGS__}) / sizeof(struct _stp_val))

static struct _stp_context ctx;

/* sprintf: into a MAXSTRINGLEN buffer. */
static void check(const char *name, const char *want, const char *fmt, const struct _stp_val *args,
		  int nargs)
{
	char dst[4096];

	memset(dst, 'X', sizeof dst);
	_stp_format(&ctx, dst, fmt, args, nargs);
	unit_check_str(name, dst, want);
}

/* printf: into the output buffer, where NUL bytes survive. */
static void check_out(const char *name, const char *want, size_t wantlen, const char *fmt,
		      const struct _stp_val *args, int nargs)
{
	char got[4096];
	size_t n;

	_stp_format(&ctx, NULL, fmt, args, nargs);
	n = unit_take_output(got, sizeof got);
	unit_check_mem(name, got, n, want, wantlen);
}

static void integers(void)
{
	check("d", "42", "%d", ARGS(N(42)));
	check("d negative", "-42", "%d", ARGS(N(-42)));
	check("d min", "-9223372036854775808", "%d", ARGS(N(INT64_MIN)));
	check("d max", "9223372036854775807", "%d", ARGS(N(INT64_MAX)));
	check("i", "7", "%i", ARGS(N(7)));
	check("u of -1", "18446744073709551615", "%u", ARGS(N(-1)));
	check("x", "ff", "%x", ARGS(N(255)));
	check("X", "FF", "%X", ARGS(N(255)));
	check("x of -1", "ffffffffffffffff", "%x", ARGS(N(-1)));
	check("#x", "0xff", "%#x", ARGS(N(255)));
	check("#x of 0", "0x0", "%#x", ARGS(N(0)));
	check("#X", "0XFF", "%#X", ARGS(N(255)));
	check("o", "10", "%o", ARGS(N(8)));
	check("#o", "010", "%#o", ARGS(N(8)));
	check("#o of 0", "00", "%#o", ARGS(N(0)));
	check("width", "   42", "%5d", ARGS(N(42)));
	check("left", "42   |", "%-5d|", ARGS(N(42)));
	check("zero pad", "00042", "%05d", ARGS(N(42)));
	check("zero pad negative", "-0042", "%05d", ARGS(N(-42)));
	check("left beats zero", "42   |", "%-05d|", ARGS(N(42)));
	check("plus", "+5", "%+d", ARGS(N(5)));
	check("plus negative", "-5", "%+d", ARGS(N(-5)));
	check("space", " 5", "% d", ARGS(N(5)));
	check("plus on u ignored", "5", "%+u", ARGS(N(5)));
	check("precision", "005", "%.3d", ARGS(N(5)));
	check("width and precision", "     005", "%8.3d", ARGS(N(5)));
	check("zero pad with precision", "00000005", "%08.3d", ARGS(N(5)));
	check("precision 0 of 0", "0", "%.0d", ARGS(N(0)));
	check("#x zero pad", "0x000000ff", "%#010x", ARGS(N(255)));
	check("star width", "   42", "%*d", ARGS(N(5), N(42)));
	check("star negative width", "42   |", "%*d|", ARGS(N(-5), N(42)));
	check("star precision", "007", "%.*d", ARGS(N(3), N(7)));
	check("star both", "  007", "%*.*d", ARGS(N(5), N(3), N(7)));
	check("length modifiers ignored", "5 6 7", "%ld %lld %hd", ARGS(N(5), N(6), N(7)));
}

static void pointers(void)
{
	check("p", "0x1234", "%p", ARGS(N(0x1234)));
	check("p of 0", "0x0", "%p", ARGS(N(0)));
	check("p 64-bit", "0xffffffffffffffff", "%p", ARGS(N(-1)));
	check("p width", "              0x1234", "%20p", ARGS(N(0x1234)));
	check("p left", "0x1234    |", "%-10p|", ARGS(N(0x1234)));
	check("p zero pad", "0x00001234", "%010p", ARGS(N(0x1234)));
}

static void strings_and_chars(void)
{
	check("s", "hi", "%s", ARGS(S("hi")));
	check("s width", "   hi", "%5s", ARGS(S("hi")));
	check("s left", "hi   |", "%-5s|", ARGS(S("hi")));
	check("s precision", "h", "%.1s", ARGS(S("hi")));
	check("s star precision", "he", "%.*s", ARGS(N(2), S("hello")));
	check("s width precision", "   he|", "%5.2s|", ARGS(S("hello")));
	check("s empty precision", "|", "%.s|", ARGS(S("hello")));
	check("c", "A", "%c", ARGS(N('A')));
	check("c width", "  A", "%3c", ARGS(N('A')));
	check("c left", "A  |", "%-3c|", ARGS(N('A')));
	check("#c newline", "\\n", "%#c", ARGS(N('\n')));
	check("#c quote", "\\'", "%#c", ARGS(N('\'')));
	check("#c octal", "\\001", "%#c", ARGS(N(1)));
	check("#c printable", "A", "%#c", ARGS(N('A')));
	check("#c high byte", "\\377", "%#c", ARGS(N(255)));
	check("c truncates to a byte", "A", "%c", ARGS(N(0x141)));
	check_out("c of 0 prints a NUL", "[\0]", 3, "[%c]", ARGS(N(0)));
	check_out("0 flag on s appends a NUL", "   ab\0|", 7, "%05s|", ARGS(S("ab")));
}

static void others(void)
{
	check("percent", "100%", "100%%", NULL, 0);
	check("percent with width", "%", "%5%", NULL, 0);
	check("unknown conversion", "%y", "%y", NULL, 0);
	check("trailing percent", "a%", "a%", NULL, 0);
	check("several", "1 a 2", "%d %s %d", ARGS(N(1), S("a"), N(2)));
	check("literal only", "hello world", "hello world", NULL, 0);
}

static void binary(void)
{
	check_out("b default 8 bytes", "\x08\x07\x06\x05\x04\x03\x02\x01", 8, "%b",
		  ARGS(N(0x0102030405060708LL)));
	check_out("1b", "A", 1, "%1b", ARGS(N(0x41)));
	check_out("2b", "BA", 2, "%2b", ARGS(N(0x4142)));
	check_out("4b", "DCBA", 4, "%4b", ARGS(N(0x41424344)));
	check_out(".2b", "BA", 2, "%.2b", ARGS(N(0x4142)));
	check_out("4.1b pads before", "\0\0\0A", 4, "%4.1b", ARGS(N(0x41)));
	check_out("-4.1b pads after", "A\0\0\0", 4, "%-4.1b", ARGS(N(0x41)));
	check_out("3b means 8 bytes", "A\0\0\0\0\0\0\0", 8, "%3b", ARGS(N(0x41)));
}

static void memory(void)
{
	static const char mem[] = "hello";
	int64_t a = (int64_t)(intptr_t)mem;

	check("m one byte", "h", "%m", ARGS(N(a)));
	check("m precision", "hel", "%.3m", ARGS(N(a)));
	check("m width", "  hel|", "%5.3m|", ARGS(N(a)));
	check("m left", "hel  |", "%-5.3m|", ARGS(N(a)));
	check("M hex", "68656c", "%.3M", ARGS(N(a)));
	check("M one byte", "68", "%M", ARGS(N(a)));
	check("M width", "    6865|", "%8.2M|", ARGS(N(a)));
	ctx.last_error = NULL;
	check("m fault prints nothing", "[]", "[%m]", ARGS(N(1)));
	unit_check_str("m fault error", ctx.last_error, "read fault [man error::fault] at 0x1");
	ctx.last_error = NULL;
}

static void limits(void)
{
	char dst[600];
	char longfmt[700];

	_stp_format(&ctx, dst, "%600d", ARGS(N(1)));
	unit_check_long("sprintf truncated to MAXSTRINGLEN-1", (int64_t)strlen(dst), 511);
	memset(longfmt, 'a', sizeof longfmt - 1);
	longfmt[sizeof longfmt - 1] = '\0';
	_stp_format(&ctx, dst, longfmt, NULL, 0);
	unit_check_long("long literal truncated", (int64_t)strlen(dst), 511);
	_stp_maxstringlen = 8;
	_stp_format(&ctx, dst, "%s", ARGS(S("abcdefghij")));
	unit_check_str("MAXSTRINGLEN 8", dst, "abcdefg");
	_stp_maxstringlen = 512;
	_stp_format(&ctx, dst, "%s-%s", ARGS(S(dst), S("x")));
	unit_check_str("argument may be the destination", dst, "abcdefg-x");
}

int main(void)
{
	integers();
	pointers();
	strings_and_chars();
	others();
	binary();
	memory();
	limits();
	return unit_done();
}
