/* util/names.c: a name's index in a const table, over a byte range
 * that need not be NUL-terminated; anything but the exact bytes of an
 * entry is no name. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "util/names.h"

static const char *const terminated[] = { "apt", "go", "golang", "", NULL };
static const char *const sized[] = { "pass", "fail", "inconclusive" };

static void
test_finds_each_entry(void **state)
{
	(void)state;
	assert_int_equal(names_index(terminated, NAMES_N(terminated), "apt",
	    3), 0);
	assert_int_equal(names_index(terminated, NAMES_N(terminated), "go",
	    2), 1);
	assert_int_equal(names_index(terminated, NAMES_N(terminated),
	    "golang", 6), 2);
	assert_int_equal(names_index(sized, NAMES_N(sized), "pass", 4), 0);
	assert_int_equal(names_index(sized, NAMES_N(sized), "inconclusive",
	    12), 2);
	/* An empty entry is a name like any other. */
	assert_int_equal(names_index(terminated, NAMES_N(terminated), "", 0),
	    3);
	assert_int_equal(names_index(sized, NAMES_N(sized), "", 0), -1);
}

static void
test_reads_only_len_bytes(void **state)
{
	const char field[] = "golang:1.22";
	const char unterminated[2] = { 'g', 'o' };

	(void)state;
	/* A prefix of a longer buffer, and a range with no NUL after it. */
	assert_int_equal(names_index(terminated, NAMES_N(terminated), field,
	    2), 1);
	assert_int_equal(names_index(terminated, NAMES_N(terminated), field,
	    6), 2);
	assert_int_equal(names_index(terminated, NAMES_N(terminated),
	    unterminated, sizeof(unterminated)), 1);
}

static void
test_hostile_near_names_refused(void **state)
{
	static const struct {
		const char	*s;
		size_t		 len;
	} bad[] = {
		{ "Go", 2 }, { "GO", 2 }, { "g", 1 }, { "goo", 3 },
		{ "go ", 3 }, { " go", 3 }, { "go\0", 3 }, { "apt\n", 4 },
		{ "golan", 5 }, { "pass", 4 },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (names_index(terminated, NAMES_N(terminated), bad[i].s,
		    bad[i].len) != -1)
			fail_msg("\"%.*s\" (%zu bytes) taken for a name",
			    (int)bad[i].len, bad[i].s, bad[i].len);
	assert_int_equal(names_index(terminated, NAMES_N(terminated), NULL,
	    0), -1);
	assert_int_equal(names_index(sized, NAMES_N(sized), NULL, 4), -1);
}

static void
test_bounds_end_the_table(void **state)
{
	(void)state;
	/* n ends the search: an entry past it is not looked at. */
	assert_int_equal(names_index(sized, 2, "inconclusive", 12), -1);
	assert_int_equal(names_index(sized, 0, "pass", 4), -1);
	/* So does the NULL, whatever n says. */
	assert_int_equal(names_index(terminated, (size_t)-1, "nope", 4), -1);
	assert_int_equal(names_index(terminated, (size_t)-1, "", 0), 3);
}

int main(void);

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_finds_each_entry),
		cmocka_unit_test(test_reads_only_len_bytes),
		cmocka_unit_test(test_hostile_near_names_refused),
		cmocka_unit_test(test_bounds_end_the_table),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
