/* plane/prule.c: the rules a policy change must pass, pure. The tenant
 * rule is what keeps tenant a's signed bundle from ever running as b's
 * (docs/design.md "Tenants"), and a tenant's from running on a guard
 * that serves none. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "plane/prule.h"
#include "policy/policy.h"

static struct policy *
compiled(const char *tenant, long long epoch, const char *host)
{
	char buf[512], err[256];
	struct policy *p;
	int n;

	n = snprintf(buf, sizeof(buf), "{\"allow\":[{\"host\":\"%s\",\"port\":443}],"
	    "\"epoch\":%lld,\"mode\":\"allowlist\",\"schema\":\"egress-guard.policy.v1\""
	    "%s%s%s}", host, epoch, tenant != NULL ? ",\"tenant\":\"" : "",
	    tenant != NULL ? tenant : "", tenant != NULL ? "\"" : "");
	p = policy_parse(buf, (size_t)n, err, sizeof(err));
	assert_non_null(p);
	return p;
}

static void
test_tenant_rule_takes_only_its_own_tenant(void **state)
{
	struct policy *a = compiled("a", 1, "a.test");
	char err[256];

	(void)state;
	assert_int_equal(prule_tenant("a", a, err, sizeof(err)), PLANE_OK);
	policy_free(a);
}

static void
test_hostile_other_tenants_policy_is_wrong_tenant(void **state)
{
	struct policy *a = compiled("a", 1, "a.test");
	struct policy *ab = compiled("ab", 1, "a.test");
	char err[256];

	(void)state;
	assert_int_equal(prule_tenant("b", a, err, sizeof(err)), PLANE_WRONG_TENANT);
	assert_non_null(strstr(err, "tenant a's, pushed to tenant b"));
	/* A prefix is not the tenant. */
	assert_int_equal(prule_tenant("a", ab, err, sizeof(err)), PLANE_WRONG_TENANT);
	assert_int_equal(prule_tenant("ab", a, err, sizeof(err)), PLANE_WRONG_TENANT);
	policy_free(a);
	policy_free(ab);
}

static void
test_hostile_untenanted_policy_refused_by_a_tenant(void **state)
{
	struct policy *none = compiled(NULL, 1, "a.test");
	char err[256];

	(void)state;
	assert_int_equal(prule_tenant("a", none, err, sizeof(err)), PLANE_WRONG_TENANT);
	assert_non_null(strstr(err, "names no tenant"));
	assert_int_equal(prule_tenant("", none, err, sizeof(err)), PLANE_OK);
	policy_free(none);
}

static void
test_hostile_tenant_policy_refused_by_untenanted_guard(void **state)
{
	struct policy *a = compiled("a", 1, "a.test");
	char err[256];

	(void)state;
	assert_int_equal(prule_tenant("", a, err, sizeof(err)), PLANE_WRONG_TENANT);
	assert_non_null(strstr(err, "serves no tenant"));
	policy_free(a);
}

static void
test_epoch_rule_never_backwards(void **state)
{
	struct prule_floor f = { .epoch = 5, .active = 1 };
	struct policy *p4 = compiled("a", 4, "a.test");
	struct policy *p5 = compiled("a", 5, "a.test");
	struct policy *p5b = compiled("a", 5, "b.test");
	struct policy *p6 = compiled("a", 6, "a.test");
	char err[256];

	(void)state;
	snprintf(f.digest, sizeof(f.digest), "%s", policy_digest(p5));
	assert_int_equal(prule_epoch(&f, p4, "", err, sizeof(err)), PLANE_STALE_EPOCH);
	assert_int_equal(prule_epoch(&f, p5b, "", err, sizeof(err)),
	    PLANE_EPOCH_CONFLICT);
	assert_int_equal(prule_epoch(&f, p5, "", err, sizeof(err)), PLANE_SAME);
	assert_int_equal(prule_epoch(&f, p6, "", err, sizeof(err)), PLANE_OK);
	f.epoch = -1;
	assert_int_equal(prule_epoch(&f, p4, "", err, sizeof(err)), PLANE_OK);
	policy_free(p4);
	policy_free(p5);
	policy_free(p5b);
	policy_free(p6);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tenant_rule_takes_only_its_own_tenant),
		cmocka_unit_test(test_hostile_other_tenants_policy_is_wrong_tenant),
		cmocka_unit_test(test_hostile_untenanted_policy_refused_by_a_tenant),
		cmocka_unit_test(test_hostile_tenant_policy_refused_by_untenanted_guard),
		cmocka_unit_test(test_epoch_rule_never_backwards),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
