/* Unit tests for resolver_conf_nameservers: without --dns the guard starts
 * only when resolv.conf names a server, never on c-ares' loopback default. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "resolver/resolver.h"

static size_t
count(const char *text)
{
	return resolver_conf_nameservers(text, strlen(text));
}

static void
test_nameserver_lines_counted(void **state)
{
	(void)state;
	assert_int_equal(count("nameserver 10.0.0.1\n"), 1);
	assert_int_equal(count("nameserver 10.0.0.1"), 1);	/* no newline */
	assert_int_equal(count("search a.test\n  nameserver\t::1\n"
	    "options ndots:1\nnameserver 127.0.0.11\n"), 2);
}

/* Hostile: files that would leave c-ares on 127.0.0.1:53. */
static void
test_hostile_files_without_a_server_count_zero(void **state)
{
	(void)state;
	assert_int_equal(count(""), 0);
	assert_int_equal(count("search example.test\n"), 0);
	assert_int_equal(count("# nameserver 10.0.0.1\n; nameserver 10.0.0.2\n"),
	    0);
	assert_int_equal(count("nameserver\nnameserver \n"), 0);
	assert_int_equal(count("nameserver # none\n"), 0);
	assert_int_equal(count("nameservers 10.0.0.1\nxnameserver 10.0.0.1\n"),
	    0);
	assert_int_equal(count("Nameserver 10.0.0.1\n"), 0);	/* c-ares: case */
	assert_int_equal(resolver_conf_nameservers("nameserver 1", 11), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_nameserver_lines_counted),
		cmocka_unit_test(test_hostile_files_without_a_server_count_zero),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
