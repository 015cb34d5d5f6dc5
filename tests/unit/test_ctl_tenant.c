/* egress-guardctl's tenant pieces (ctl/tenant.c): the id a
 * spec file names, and the request targets a tenant id goes into, where
 * nothing but the id grammar may reach the request line. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "ctl/tenant.h"
#include "policy/policy.h"

#define SPEC "{\"address\":\"10.81.1.1\",\"dns_port\":5353,\"id\":\"a-1\"," \
    "\"link\":\"eg-a\",\"max_conns\":256,\"max_dns\":64,\"peer\":\"10.81.1.2\"," \
    "\"port\":3128,\"transparent_port\":0}"

static void
test_spec_id_read(void **state)
{
	char id[POLICY_TENANT_MAX + 1], err[256];

	(void)state;
	assert_int_equal(ctltenant_spec_id(SPEC, strlen(SPEC), id, err,
	    sizeof(err)), 0);
	assert_string_equal(id, "a-1");
	/* The rest is the guard's to judge: an id alone is enough here. */
#define LONGEST "{\"id\":\"abcdefghijklmnopqrstuvwxyz012345\"}"
	assert_int_equal(ctltenant_spec_id(LONGEST, strlen(LONGEST), id, err,
	    sizeof(err)), 0);
	assert_string_equal(id, "abcdefghijklmnopqrstuvwxyz012345");
}

static void
test_hostile_spec_without_a_usable_id_refused(void **state)
{
	static const struct {
		const char	*spec;
		const char	*says;
	} cases[] = {
		{ "", "invalid JSON" },
		{ "[\"a\"]", "a tenant spec is a JSON object" },
		{ "\"a\"", "invalid JSON" },
		{ "{}", "no string \"id\"" },
		{ "{\"id\":1}", "no string \"id\"" },
		{ "{\"id\":null}", "no string \"id\"" },
		{ "{\"id\":[\"a\"]}", "no string \"id\"" },
		{ "{\"id\":\"a\",\"id\":\"b\"}", "duplicate" },
		{ "{\"id\":\"\"}", "id \"\": a tenant ID is 1-32" },
		{ "{\"id\":\"A\"}", "id \"A\": a tenant ID" },
		{ "{\"id\":\"-a\"}", "id \"-a\": a tenant ID" },
		{ "{\"id\":\"abcdefghijklmnopqrstuvwxyz0123456\"}", "a tenant ID" },
		/* What would leave the path or the request line. */
		{ "{\"id\":\"a/../b\"}", "a tenant ID" },
		{ "{\"id\":\"a?x=1\"}", "a tenant ID" },
		{ "{\"id\":\"a b\"}", "a tenant ID" },
		{ "{\"id\":\"a\\r\\nX-Evil: 1\"}", "id \"a\\x0d\\x0aX-Evil: 1\": a tenant ID" },
	};
	char id[POLICY_TENANT_MAX + 1], err[256];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		err[0] = '\0';
		if (ctltenant_spec_id(cases[i].spec, strlen(cases[i].spec), id, err,
		    sizeof(err)) != -1 || strstr(err, cases[i].says) == NULL)
			fail_msg("%s: got \"%s\"", cases[i].spec, err);
	}
}

static void
test_tenant_targets(void **state)
{
	char t[CTLTENANT_TARGET_MAX];

	(void)state;
	assert_int_equal(ctltenant_target(t, sizeof(t), NULL, "/policy"), 0);
	assert_string_equal(t, "/v1/policy");
	assert_int_equal(ctltenant_target(t, sizeof(t), "a", "/policy"), 0);
	assert_string_equal(t, "/v1/tenants/a/policy");
	assert_int_equal(ctltenant_target(t, sizeof(t), "a", ""), 0);
	assert_string_equal(t, "/v1/tenants/a");
	/* The longest id fits the longest target. */
	assert_int_equal(ctltenant_target(t, sizeof(t),
	    "abcdefghijklmnopqrstuvwxyz012345", "/status"), 0);
	assert_string_equal(t, "/v1/tenants/abcdefghijklmnopqrstuvwxyz012345/status");
	/* hostile: anything but the grammar never becomes a target. */
	assert_int_equal(ctltenant_target(t, sizeof(t), "a/../b", ""), -1);
	assert_int_equal(ctltenant_target(t, sizeof(t), "a b", ""), -1);
	assert_int_equal(ctltenant_target(t, sizeof(t), "a\r\n", ""), -1);
	assert_int_equal(ctltenant_target(t, sizeof(t), "", ""), -1);
	assert_int_equal(ctltenant_target(t, 8, "a", "/policy"), -1);
}

int main(void);

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_spec_id_read),
		cmocka_unit_test(test_hostile_spec_without_a_usable_id_refused),
		cmocka_unit_test(test_tenant_targets),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
