/* util/num.c: strict decimal integers (OpenBSD strtonum's contract): the
 * one spelling of each value in range, nothing else. Ports, epochs,
 * timeouts and Content-Length all go through it, so every lenient
 * spelling accepted here would be accepted everywhere. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "util/num.h"

#define UNTOUCHED	-777

static void
accept(const char *s, long long min, long long max, long long want)
{
	long long v = UNTOUCHED;

	if (num_parse(s, min, max, &v) != 0)
		fail_msg("\"%s\" in [%lld, %lld] refused", s, min, max);
	assert_int_equal(v, want);
}

static void
refuse(const char *s, long long min, long long max)
{
	long long v = UNTOUCHED;

	if (num_parse(s, min, max, &v) != -1)
		fail_msg("\"%s\" in [%lld, %lld] accepted as %lld", s, min, max, v);
	/* A refusal never writes the output. */
	assert_int_equal(v, UNTOUCHED);
}

static void
test_accepts_plain_decimal_in_range(void **state)
{
	(void)state;
	accept("0", 0, 10, 0);
	accept("7", 0, 10, 7);
	accept("10", 0, 10, 10);
	accept("1", 1, 65535, 1);
	accept("65535", 1, 65535, 65535);
	accept("9007199254740991", 0, 9007199254740991LL, 9007199254740991LL);
	accept("9223372036854775807", 0, INT64_MAX, INT64_MAX);
}

static void
test_refuses_signs_and_whitespace(void **state)
{
	static const char *const bad[] = {
		"+1", "-1", "-0", " 1", "1 ", "1\n", "\t1", "1\t", "1 2", NULL
	};
	size_t i;

	(void)state;
	for (i = 0; bad[i] != NULL; i++)
		refuse(bad[i], 0, 65535);
}

/* A port "080" or "0x50" is a second spelling of 80 (tinyproxy's and
 * strtol's leniency); "1e3" and "1.0" are not integers at all. */
static void
test_refuses_leading_zero_hex_octal_and_exponent(void **state)
{
	static const char *const bad[] = {
		"00", "080", "0080", "0x50", "0X50", "050", "1e3", "1.0", "1,000",
		"1_000", "0b1", NULL
	};
	size_t i;

	(void)state;
	for (i = 0; bad[i] != NULL; i++)
		refuse(bad[i], 0, 65535);
}

static void
test_refuses_empty_null_and_junk(void **state)
{
	long long v = UNTOUCHED;

	(void)state;
	refuse("", 0, 10);
	refuse("a", 0, 10);
	refuse("1a", 0, 10);
	refuse("\xd9\xa1", 0, 10);	/* ARABIC-INDIC DIGIT ONE */
	assert_int_equal(num_parse(NULL, 0, 10, &v), -1);
	assert_int_equal(v, UNTOUCHED);
}

static void
test_refuses_out_of_range_both_ends(void **state)
{
	(void)state;
	refuse("0", 1, 65535);		/* port 0 */
	refuse("65536", 1, 65535);
	refuse("11", 0, 10);
	refuse("4", 5, 10);
	refuse("9007199254740992", 0, 9007199254740991LL);
}

/* 20 digits or a value past 2^63-1 must not wrap into range: the length
 * bound stops the accumulator before it can overflow. */
static void
test_refuses_overflow_that_would_wrap(void **state)
{
	(void)state;
	refuse("9223372036854775808", 0, INT64_MAX);
	refuse("18446744073709551616", 0, INT64_MAX);	/* 2^64: wraps to 0 */
	refuse("18446744073709551696", 0, 100);		/* 2^64 + 80 */
	refuse("99999999999999999999", 0, INT64_MAX);
	refuse("0000000000000000000080", 0, 100);
}

static void
test_refuses_bad_bounds(void **state)
{
	long long v = UNTOUCHED;

	(void)state;
	refuse("5", 10, 1);		/* max < min */
	refuse("5", -1, 10);		/* negative min: no signs here */
	assert_int_equal(num_parse_n("5", 1, 10, 1, &v), -1);
	assert_int_equal(v, UNTOUCHED);
}

/* num_parse_n reads exactly len bytes: the digits after them, or no NUL
 * at all, do not count. */
static void
test_parse_n_reads_exactly_len_bytes(void **state)
{
	const char buf[] = { '4', '4', '3', '9' };	/* no NUL */
	long long v = UNTOUCHED;

	(void)state;
	assert_int_equal(num_parse_n(buf, 3, 0, 65535, &v), 0);
	assert_int_equal(v, 443);
	assert_int_equal(num_parse_n(buf, 4, 0, 65535, &v), 0);
	assert_int_equal(v, 4439);
	v = UNTOUCHED;
	assert_int_equal(num_parse_n(buf, 0, 0, 65535, &v), -1);
	assert_int_equal(num_parse_n("12\0" "3", 4, 0, 65535, &v), -1);
	assert_int_equal(num_parse_n(NULL, 1, 0, 65535, &v), -1);
	assert_int_equal(v, UNTOUCHED);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_accepts_plain_decimal_in_range),
		cmocka_unit_test(test_refuses_signs_and_whitespace),
		cmocka_unit_test(test_refuses_leading_zero_hex_octal_and_exponent),
		cmocka_unit_test(test_refuses_empty_null_and_junk),
		cmocka_unit_test(test_refuses_out_of_range_both_ends),
		cmocka_unit_test(test_refuses_overflow_that_would_wrap),
		cmocka_unit_test(test_refuses_bad_bounds),
		cmocka_unit_test(test_parse_n_reads_exactly_len_bytes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
