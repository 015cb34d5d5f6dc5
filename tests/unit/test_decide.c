/* guard/decide.c: the decision steps every client protocol and `check`
 * share. No policy denies; only an exact (host, port) is admitted; the
 * address step fails closed on no answer and on any non-public one, and
 * classifies every answer (logs and `check` show each); the reason table
 * is the wire contract (names, HTTP statuses). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <sys/socket.h>

#include "guard/decide.h"
#include "policy/dest.h"
#include "policy/policy.h"

#define ALLOWLIST "{\"allow\":[{\"host\":\"api.example.com\",\"port\":443}," \
    "{\"host\":\"example.org\",\"port\":80}],\"epoch\":7,\"mode\":\"allowlist\"," \
    "\"schema\":\"egress-guard.policy.v1\"}"
#define NONE "{\"allow\":[],\"epoch\":1,\"mode\":\"none\"," \
    "\"schema\":\"egress-guard.policy.v1\"}"
#define UNRESTRICTED "{\"allow\":[],\"epoch\":1,\"mode\":\"unrestricted\"," \
    "\"schema\":\"egress-guard.policy.v1\"}"

static struct policy *
policy_of(const char *canon)
{
	char err[256] = "";
	struct policy *p = policy_parse(canon, strlen(canon), err, sizeof(err));

	if (p == NULL)
		fail_msg("policy refused: %s", err);
	return p;
}

static enum reason
decide(const struct policy *p, const char *authority)
{
	struct dest d;
	char err[256];

	if (dest_parse_authority(authority, strlen(authority), &d, err,
	    sizeof(err)) == -1)
		fail_msg("%s: %s", authority, err);
	return decide_policy(p, &d);
}

static struct resolver_addr
addr(const char *s)
{
	struct resolver_addr a;

	memset(&a, 0, sizeof(a));
	a.family = strchr(s, ':') != NULL ? AF_INET6 : AF_INET;
	assert_int_equal(inet_pton(a.family, s, a.addr), 1);
	return a;
}

static void
test_no_policy_denies_everything(void **state)
{
	(void)state;
	assert_int_equal(decide(NULL, "api.example.com:443"), REASON_NO_POLICY);
	assert_int_equal(decide(NULL, "198.51.100.1:80"), REASON_NO_POLICY);
}

static void
test_allowlist_admits_only_exact_host_and_port(void **state)
{
	struct policy *p = policy_of(ALLOWLIST);

	(void)state;
	assert_int_equal(decide(p, "api.example.com:443"), REASON_ALLOWLISTED);
	assert_int_equal(decide(p, "API.Example.COM.:443"), REASON_ALLOWLISTED);
	assert_int_equal(decide(p, "example.org:80"), REASON_ALLOWLISTED);
	/* Another port, a subdomain, a suffix, a parent, a look-alike. */
	assert_int_equal(decide(p, "api.example.com:80"), REASON_NOT_ALLOWLISTED);
	assert_int_equal(decide(p, "example.org:443"), REASON_NOT_ALLOWLISTED);
	assert_int_equal(decide(p, "www.api.example.com:443"),
	    REASON_NOT_ALLOWLISTED);
	assert_int_equal(decide(p, "api.example.com.evil.test:443"),
	    REASON_NOT_ALLOWLISTED);
	assert_int_equal(decide(p, "example.com:443"), REASON_NOT_ALLOWLISTED);
	assert_int_equal(decide(p, "xapi.example.com:443"), REASON_NOT_ALLOWLISTED);
	/* A literal the listed name may resolve to is not the name. */
	assert_int_equal(decide(p, "93.184.216.34:443"), REASON_NOT_ALLOWLISTED);
	policy_free(p);
}

static void
test_mode_none_admits_nothing_unrestricted_anything(void **state)
{
	struct policy *none = policy_of(NONE), *all = policy_of(UNRESTRICTED);

	(void)state;
	assert_int_equal(decide(none, "api.example.com:443"),
	    REASON_NOT_ALLOWLISTED);
	assert_int_equal(decide(all, "anything.example:8443"),
	    REASON_UNRESTRICTED);
	assert_int_equal(decide(all, "198.51.100.1:22"), REASON_UNRESTRICTED);
	policy_free(none);
	policy_free(all);
}

/* No answer is not "all public": an empty list denies. */
static void
test_addrs_empty_answer_is_not_public(void **state)
{
	(void)state;
	assert_int_equal(decide_addrs(NULL, NULL, 0, NULL), 0);
}

/* One non-public answer among public ones denies the lot, and every
 * answer is still classified (no early exit), whatever its position. */
static void
test_addrs_one_private_answer_denies_and_all_are_classified(void **state)
{
	struct resolver_addr a[4];
	struct classify_result res[4];
	size_t i;

	(void)state;
	a[0] = addr("10.99.0.5");
	a[1] = addr("93.184.216.34");
	a[2] = addr("2606:2800:220:1:248:1893:25c8:1946");
	a[3] = addr("169.254.169.254");
	memset(res, 0, sizeof(res));
	assert_int_equal(decide_addrs(NULL, a, 4, res), 0);
	for (i = 0; i < 4; i++)
		assert_non_null(res[i].range);
	assert_int_equal(res[0].public, 0);
	assert_int_equal(res[1].public, 1);
	assert_int_equal(res[2].public, 1);
	assert_int_equal(res[3].public, 0);
	/* Negative control: the public ones alone pass. */
	assert_int_equal(decide_addrs(NULL, a + 1, 2, NULL), 1);
	assert_int_equal(decide_addrs(NULL, a + 1, 2, res), 1);
}

static void
test_addrs_loopback_mapped_and_unspecified_never_public(void **state)
{
	static const char *const bad[] = {
		"127.0.0.1", "0.0.0.0", "::1", "::", "::ffff:127.0.0.1",
		"::ffff:10.0.0.1", "fd00::5", "fe80::1", "100.100.100.200",
		"224.0.0.1", "255.255.255.255", NULL
	};
	struct resolver_addr a;
	size_t i;

	(void)state;
	for (i = 0; bad[i] != NULL; i++) {
		a = addr(bad[i]);
		if (decide_addrs(NULL, &a, 1, NULL) != 0)
			fail_msg("%s classified public", bad[i]);
	}
}

static void
test_reason_table_is_the_wire_contract(void **state)
{
	static const struct {
		enum reason	 r;
		const char	*name;
		int		 status;
	} want[] = {
		{ REASON_ALLOWLISTED, "allowlisted", 200 },
		{ REASON_UNRESTRICTED, "unrestricted", 200 },
		{ REASON_NO_POLICY, "no_policy", 403 },
		{ REASON_NOT_ALLOWLISTED, "not_allowlisted", 403 },
		{ REASON_NON_PUBLIC_ADDRESS, "non_public_address", 403 },
		{ REASON_BAD_REQUEST, "bad_request", 400 },
		{ REASON_METHOD_NOT_ALLOWED, "method_not_allowed", 405 },
		{ REASON_HEADER_TOO_LARGE, "header_too_large", 431 },
		{ REASON_HEADER_TIMEOUT, "header_timeout", 408 },
		{ REASON_DNS_FAILURE, "dns_failure", 502 },
		{ REASON_DNS_TIMEOUT, "dns_timeout", 504 },
		{ REASON_UPSTREAM_UNREACHABLE, "upstream_unreachable", 502 },
		{ REASON_UPSTREAM_TIMEOUT, "upstream_timeout", 504 },
		{ REASON_OVERLOADED, "overloaded", 503 },
		{ REASON_SNI_MISMATCH, "sni_mismatch", 0 },
		{ REASON_REVOKED, "revoked", 403 },
		{ REASON_NO_ORIGINAL_DST, "no_original_dst", 0 },
		{ REASON_TRANSPARENT_LOOP, "transparent_loop", 0 },
		{ REASON_UNIDENTIFIED, "unidentified", 0 },
		{ REASON_HOST_CHANGED, "host_changed", 400 },
	};
	size_t i, j;

	(void)state;
	/* Every reason listed here, once: a new one must be added. */
	assert_int_equal(sizeof(want) / sizeof(want[0]), REASON__COUNT);
	for (i = 0; i < REASON__COUNT; i++) {
		assert_string_equal(reason_name(want[i].r), want[i].name);
		assert_int_equal(reason_status(want[i].r), want[i].status);
		assert_non_null(reason_status_text(want[i].r));
		assert_int_equal(reason_is_allow(want[i].r),
		    want[i].status == 200);
		for (j = 0; j < i; j++)
			assert_string_not_equal(reason_name(want[i].r),
			    reason_name(want[j].r));
	}
	/* Outside the table: an internal error, never an allow. */
	assert_string_equal(reason_name(REASON__COUNT), "internal_error");
	assert_int_equal(reason_status(REASON__COUNT), 500);
	assert_string_equal(reason_status_text((enum reason)-1),
	    "Internal Server Error");
	assert_int_equal(reason_is_allow(REASON__COUNT), 0);
}

static void
test_addr_str_formats_both_families(void **state)
{
	struct resolver_addr a;
	char buf[64];

	(void)state;
	a = addr("198.18.0.10");
	decide_addr_str(&a, buf, sizeof(buf));
	assert_string_equal(buf, "198.18.0.10");
	a = addr("2001:2::10");
	decide_addr_str(&a, buf, sizeof(buf));
	assert_string_equal(buf, "2001:2::10");
	/* Mapped: pure hex, the grammar's spelling (inet_ntop would write
	 * ::ffff:198.18.1.10, which a policy or check refuses). */
	a = addr("::ffff:198.18.1.10");
	decide_addr_str(&a, buf, sizeof(buf));
	assert_string_equal(buf, "::ffff:c612:10a");
	/* Too small or an unknown family: "?", never a partial address. */
	decide_addr_str(&a, buf, 4);
	assert_string_equal(buf, "?");
	a.family = AF_UNIX;
	decide_addr_str(&a, buf, sizeof(buf));
	assert_string_equal(buf, "?");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_no_policy_denies_everything),
		cmocka_unit_test(test_allowlist_admits_only_exact_host_and_port),
		cmocka_unit_test(test_mode_none_admits_nothing_unrestricted_anything),
		cmocka_unit_test(test_addrs_empty_answer_is_not_public),
		cmocka_unit_test(test_addrs_one_private_answer_denies_and_all_are_classified),
		cmocka_unit_test(test_addrs_loopback_mapped_and_unspecified_never_public),
		cmocka_unit_test(test_reason_table_is_the_wire_contract),
		cmocka_unit_test(test_addr_str_formats_both_families),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
