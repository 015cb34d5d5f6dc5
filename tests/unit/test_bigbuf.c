/* util/bigbuf: large blocks are marked for 2 MiB pages before their first
 * touch, small ones are left alone, and sizes that overflow are refused.
 * The mark is read back from the kernel (/proc/self/smaps, VmFlags "hg"),
 * so these go red when the hint is dropped. When the kernel has no
 * transparent huge pages the marking tests are skipped, not passed. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "util/bigbuf.h"

/* 1 when the mapping holding addr is marked MADV_HUGEPAGE, 0 when not,
 * -1 when smaps cannot say. */
static int
marked_huge(const void *addr)
{
	uintptr_t a = (uintptr_t)addr, lo, hi;
	char line[512];
	int in = 0, rc = -1;
	FILE *f = fopen("/proc/self/smaps", "r");

	if (f == NULL)
		return -1;
	while (fgets(line, sizeof(line), f) != NULL) {
		char *dash, *end;

		/* A mapping's line: "lo-hi perms ...", both in hex. */
		lo = (uintptr_t)strtoull(line, &dash, 16);
		if (dash != line && *dash == '-') {
			hi = (uintptr_t)strtoull(dash + 1, &end, 16);
			if (end != dash + 1 && *end == ' ') {
				in = a >= lo && a < hi;
				continue;
			}
		}
		if (in && strncmp(line, "VmFlags:", 8) == 0) {
			rc = strstr(line, " hg") != NULL;
			break;
		}
	}
	fclose(f);
	return rc;
}

static int
thp_available(void)
{
	char buf[128] = "";
	FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");

	if (f == NULL)
		return 0;
	if (fgets(buf, sizeof(buf), f) == NULL)
		buf[0] = '\0';
	fclose(f);
	return strstr(buf, "[never]") == NULL && buf[0] != '\0';
}

static void
test_large_block_marked_before_first_touch(void **state)
{
	size_t n = 8u << 20;
	char *p;

	(void)state;
	if (!thp_available())
		skip();
	assert_non_null(p = bigbuf_malloc(n));
	assert_int_equal(marked_huge(p + n / 2), 1);
	memset(p, 1, n);
	free(p);
}

static void
test_large_calloc_marked_and_zero(void **state)
{
	size_t n = 1u << 20, i;
	uint64_t *p;

	(void)state;
	if (!thp_available())
		skip();
	assert_non_null(p = bigbuf_calloc(n, sizeof(*p)));
	assert_int_equal(marked_huge(p + n / 2), 1);
	for (i = 0; i < n; i += 4096)
		assert_int_equal(p[i], 0);
	free(p);
}

static void
test_realloc_grown_block_marked(void **state)
{
	char *p, *q;

	(void)state;
	if (!thp_available())
		skip();
	assert_non_null(p = bigbuf_malloc(64));
	memcpy(p, "kept", 5);
	assert_non_null(q = bigbuf_realloc(p, 16u << 20));
	assert_string_equal(q, "kept");
	assert_int_equal(marked_huge(q + (8u << 20)), 1);
	free(q);
}

/* The negative control: the same read-back on a block too small to hold
 * a 2 MiB page says "not marked", so the checks above can fail. */
static void
test_small_block_not_marked(void **state)
{
	char *p;

	(void)state;
	assert_non_null(p = bigbuf_malloc(256u << 10));
	assert_int_equal(marked_huge(p + 1024), 0);
	free(p);
}

static void
test_calloc_overflow_refused(void **state)
{
	(void)state;
	assert_null(bigbuf_calloc(SIZE_MAX / 4, 8));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_large_block_marked_before_first_touch),
		cmocka_unit_test(test_large_calloc_marked_and_zero),
		cmocka_unit_test(test_realloc_grown_block_marked),
		cmocka_unit_test(test_small_block_not_marked),
		cmocka_unit_test(test_calloc_overflow_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
