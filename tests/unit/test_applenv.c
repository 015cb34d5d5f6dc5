/* guard/applenv.c: the values of the image's EG_* environment. A list
 * item or a uid read wrongly here would put the wrong listener in the nft
 * rule, exempt the wrong uid, or hand a folder to the wrong owner. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "guard/applenv.h"

static void
test_split_on_commas_spaces_tabs_newlines(void **state)
{
	char buf[128], *it[APPLENV_LIST_MAX];
	int n;

	(void)state;
	n = applenv_split(" a.pem, b.pem\t,c.pem\n\nd ", buf, sizeof(buf), it, APPLENV_LIST_MAX);
	assert_int_equal(n, 4);
	assert_string_equal(it[0], "a.pem");
	assert_string_equal(it[1], "b.pem");
	assert_string_equal(it[2], "c.pem");
	assert_string_equal(it[3], "d");
	/* An IPv6 listener keeps its brackets and colons. */
	n = applenv_split("10.77.0.1:3128,[fd00::1]:3128", buf, sizeof(buf), it, APPLENV_LIST_MAX);
	assert_int_equal(n, 2);
	assert_string_equal(it[1], "[fd00::1]:3128");
}

static void
test_split_empty_and_separators_only_is_no_item(void **state)
{
	char buf[16], *it[4];

	(void)state;
	assert_int_equal(applenv_split("", buf, sizeof(buf), it, 4), 0);
	assert_int_equal(applenv_split(" , ,\t", buf, sizeof(buf), it, 4), 0);
}

static void
test_hostile_split_refuses_more_items_than_the_bound(void **state)
{
	char val[2 * APPLENV_LIST_MAX + 3], buf[sizeof(val)], *it[APPLENV_LIST_MAX];
	int i;

	(void)state;
	for (i = 0; i < APPLENV_LIST_MAX; i++)
		memcpy(val + 2 * i, "x,", 2);
	val[2 * APPLENV_LIST_MAX] = '\0';
	assert_int_equal(applenv_split(val, buf, sizeof(buf), it, APPLENV_LIST_MAX),
	    APPLENV_LIST_MAX);
	strcat(val, "y");
	assert_int_equal(applenv_split(val, buf, sizeof(buf), it, APPLENV_LIST_MAX), -1);
}

static void
test_split_refuses_a_value_longer_than_its_buffer(void **state)
{
	char buf[4], *it[4];

	(void)state;
	assert_int_equal(applenv_split("abcd", buf, sizeof(buf), it, 4), -1);
	assert_int_equal(applenv_split("abc", buf, sizeof(buf), it, 4), 1);
}

static void
test_id_accepts_decimal_and_leading_zeros(void **state)
{
	unsigned long v = 7;

	(void)state;
	assert_int_equal(applenv_id("10001", &v), 0);
	assert_int_equal(v, 10001);
	assert_int_equal(applenv_id("0", &v), 0);
	assert_int_equal(v, 0);
	assert_int_equal(applenv_id("00065534", &v), 0);
	assert_int_equal(v, 65534);
	assert_int_equal(applenv_id("4294967294", &v), 0);
	assert_int_equal(v, 4294967294UL);
}

static void
test_hostile_id_refuses_sign_hex_space_and_the_invalid_uid(void **state)
{
	const char *bad[] = {"", "-1", "+1", "0x10", " 1", "1 ", "1e3", "nobody",
	    "4294967295", "18446744073709551617", "1:2"};
	unsigned long v = 7;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (applenv_id(bad[i], &v) != -1)
			fail_msg("\"%s\" accepted as %lu", bad[i], v);
	}
	assert_int_equal(v, 7);
}

static void
test_ids_uid_gid(void **state)
{
	unsigned long u = 7, g = 7;

	(void)state;
	assert_int_equal(applenv_ids("10001:10001", &u, &g), 0);
	assert_int_equal(u, 10001);
	assert_int_equal(g, 10001);
	assert_int_equal(applenv_ids("0:0", &u, &g), 0);
	assert_int_equal(u, 0);
}

static void
test_hostile_ids_refuse_names_halves_and_extra_fields(void **state)
{
	const char *bad[] = {"", ":", "1:", ":1", "nobody:nogroup", "1:2:3", "10001",
	    "1:-2", "0000000000000001:1"};
	unsigned long u = 7, g = 7;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (applenv_ids(bad[i], &u, &g) != -1)
			fail_msg("\"%s\" accepted as %lu:%lu", bad[i], u, g);
	}
	assert_int_equal(u, 7);
	assert_int_equal(g, 7);
}

/* EG_TENANTS and EG_DRY_RUN: a misspelt "true" or "yes" must stop the
 * entry, not start a single-tenant guard the operator did not ask for. */
static void
test_hostile_switch_takes_0_and_1_only(void **state)
{
	const char *bad[] = {"", "true", "yes", "on", "01", "1 ", " 1", "2", "-1", "10"};
	size_t i;
	int v = 7;

	(void)state;
	assert_int_equal(applenv_switch("0", &v), 0);
	assert_int_equal(v, 0);
	assert_int_equal(applenv_switch("1", &v), 0);
	assert_int_equal(v, 1);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		v = 7;
		assert_int_equal(applenv_switch(bad[i], &v), -1);
		assert_int_equal(v, 7);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_split_on_commas_spaces_tabs_newlines),
		cmocka_unit_test(test_split_empty_and_separators_only_is_no_item),
		cmocka_unit_test(test_hostile_split_refuses_more_items_than_the_bound),
		cmocka_unit_test(test_split_refuses_a_value_longer_than_its_buffer),
		cmocka_unit_test(test_id_accepts_decimal_and_leading_zeros),
		cmocka_unit_test(test_hostile_id_refuses_sign_hex_space_and_the_invalid_uid),
		cmocka_unit_test(test_ids_uid_gid),
		cmocka_unit_test(test_hostile_ids_refuse_names_halves_and_extra_fields),
		cmocka_unit_test(test_hostile_switch_takes_0_and_1_only),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
