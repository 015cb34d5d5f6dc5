/* util/ncpu.c: the default --workers count, from the CPUs the process
 * may run on and the cgroup v2 cpu.max quota. A count above what the
 * quota pays for only adds threads that wait for their turn; a count of 0
 * or an unbounded one would not start at all, or start too many. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "util/ncpu.h"

static void
test_no_quota_takes_the_affinity_count(void **state)
{
	(void)state;
	assert_int_equal(ncpu_default(2, NULL, 64), 2);
	assert_int_equal(ncpu_default(8, "max 100000\n", 64), 8);
}

static void
test_quota_caps_rounding_up(void **state)
{
	(void)state;
	assert_int_equal(ncpu_default(8, "200000 100000\n", 64), 2);
	assert_int_equal(ncpu_default(8, "150000 100000\n", 64), 2);
	assert_int_equal(ncpu_default(8, "50000 100000\n", 64), 1);
	assert_int_equal(ncpu_default(8, "100000 100000", 64), 1);
}

static void
test_quota_above_affinity_leaves_affinity(void **state)
{
	(void)state;
	assert_int_equal(ncpu_default(2, "800000 100000\n", 64), 2);
}

static void
test_bounded_one_to_max(void **state)
{
	(void)state;
	assert_int_equal(ncpu_default(0, NULL, 64), 1);
	assert_int_equal(ncpu_default(-3, NULL, 64), 1);
	assert_int_equal(ncpu_default(512, NULL, 64), 64);
	assert_int_equal(ncpu_default(512, "max 100000\n", 64), 64);
}

static void
test_refuses_malformed_cpu_max_as_no_cap(void **state)
{
	static const char *const bad[] = {
		"", "\n", "200000", "200000 ", " 200000 100000", "200000  100000",
		"200000 100000 7", "0 100000", "200000 0", "-200000 100000",
		"200000 abc", "2e5 100000", "200000\t100000", "max", "MAX 100000",
		"99999999999999999999 1",
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (ncpu_default(4, bad[i], 64) != 4)
			fail_msg("cpu.max \"%s\" set a cap", bad[i]);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_no_quota_takes_the_affinity_count),
		cmocka_unit_test(test_quota_caps_rounding_up),
		cmocka_unit_test(test_quota_above_affinity_leaves_affinity),
		cmocka_unit_test(test_bounded_one_to_max),
		cmocka_unit_test(test_refuses_malformed_cpu_max_as_no_cap),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
