/* Policy model (docs/design.md "Policy"): strict parsing, canonical bytes and
 * digest, profiles, the exact matcher, file loading; the catalog, the
 * profile abbreviations and provenance, diff's widening test. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include <openssl/evp.h>

#if defined(__has_include)
#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
#endif
#endif
#ifndef RUNNING_ON_VALGRIND
#define RUNNING_ON_VALGRIND 0
#endif
/* ASan builds (make sanitize) run 3-5x slower: no timing bound there. */
#if defined(__SANITIZE_ADDRESS__)
#define SANITIZED_BUILD 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SANITIZED_BUILD 1
#endif
#endif
#ifndef SANITIZED_BUILD
#define SANITIZED_BUILD 0
#endif

#include "ctl/diff.h"
#include "policy/catalog.h"
#include "policy/dest.h"
#include "policy/policy.h"

/* docs/design.md's canonical example and its digest, fixed once with
 * printf '%s' "$bytes" | sha256sum: it pins the canonical bytes too. */
#define DESIGN_CANON "{\"allow\":[{\"host\":\"api.example.com\",\"port\":443}," \
    "{\"host\":\"example.org\",\"port\":80}],\"epoch\":7,\"mode\":\"allowlist\"," \
    "\"schema\":\"egress-guard.policy.v1\"}"
#define DESIGN_DIGEST \
    "sha256:01f35d4dd3a4cf988d354d7f137e407335f090574ff5cfc0015f611e1531e3a0"
#define DESIGN_PROFILE "{\"network_policy\":\"allowlist\",\"allowed_hosts\":" \
    "[\"api.example.com:443\",\"example.org:80\"]," \
    "\"required_egress_certification\":\"advisory_filter\"}"

#define DESIGN_CANON_EPOCH_1 "{\"allow\":[{\"host\":\"api.example.com\"," \
    "\"port\":443},{\"host\":\"example.org\",\"port\":80}],\"epoch\":1," \
    "\"mode\":\"allowlist\",\"schema\":\"egress-guard.policy.v1\"}"

#define HEAD "{\"schema\":\"egress-guard.policy.v1\",\"mode\":\"allowlist\"," \
    "\"epoch\":1,\"allow\":"

static struct policy *
parse(const char *s, char *err, size_t errlen)
{
	return policy_parse(s, strlen(s), err, errlen);
}

static struct policy *
profile(const char *s, long long epoch, char *err, size_t errlen)
{
	return policy_compile_profile(s, strlen(s), epoch, err, errlen);
}

/* err is printable ASCII only: hostile bytes arrive escaped. */
static void
check_err(const char *err)
{
	size_t i;

	assert_true(err[0] != '\0');
	for (i = 0; err[i] != '\0'; i++)
		assert_true(err[i] >= 0x20 && err[i] < 0x7f);
}

static void
refuse_policy(const char *s, const char *want)
{
	struct policy *p;
	char err[512] = "";

	p = parse(s, err, sizeof(err));
	if (p != NULL) {
		policy_free(p);
		fail_msg("accepted: %s", s);
	}
	check_err(err);
	if (strstr(err, want) == NULL)
		fail_msg("error \"%s\" does not contain \"%s\"", err, want);
}

static void
refuse_profile(const char *s, const char *want)
{
	struct policy *p;
	char err[512] = "";

	p = profile(s, 1, err, sizeof(err));
	if (p != NULL) {
		policy_free(p);
		fail_msg("accepted: %s", s);
	}
	check_err(err);
	if (strstr(err, want) == NULL)
		fail_msg("error \"%s\" does not contain \"%s\"", err, want);
}

static void
expect_canonical(struct policy *p, const char *want)
{
	const char *c;
	size_t len;

	assert_non_null(p);
	c = policy_canonical(p, &len);
	assert_non_null(c);
	assert_string_equal(c, want);
	assert_int_equal(len, strlen(want));
}

static void
test_design_example_digest_is_fixed(void **state)
{
	struct policy *p;
	char err[256] = "";

	(void)state;
	p = parse(DESIGN_CANON, err, sizeof(err));
	assert_non_null(p);
	expect_canonical(p, DESIGN_CANON);
	assert_string_equal(policy_digest(p), DESIGN_DIGEST);
	assert_int_equal(strlen(policy_digest(p)), POLICY_DIGEST_LEN);
	assert_int_equal(policy_mode(p), POLICY_ALLOWLIST);
	assert_int_equal(policy_epoch(p), 7);
	assert_int_equal(policy_entries(p), 2);
	assert_null(policy_required_grade(p));
	policy_free(p);
}

static void
test_design_profile_compiles_to_design_policy(void **state)
{
	struct policy *p;
	char err[256] = "";

	(void)state;
	p = profile(DESIGN_PROFILE, 7, err, sizeof(err));
	assert_non_null(p);
	expect_canonical(p, DESIGN_CANON);
	assert_string_equal(policy_digest(p), DESIGN_DIGEST);
	/* The grade is kept for `admit` but is not in the canonical bytes. */
	assert_string_equal(policy_required_grade(p), "advisory_filter");
	policy_free(p);
}

static void
test_canonical_sorted_and_deduplicated(void **state)
{
	struct policy *p;
	char err[256] = "";
	const char *in =
	    "{ \"mode\" : \"allowlist\", \"allow\": [\n"
	    "  {\"port\": 80, \"host\": \"Example.ORG.\"},\n"
	    "  {\"host\": \"api.example.com\", \"port\": 443},\n"
	    "  {\"host\": \"example.org\", \"port\": 80},\n"
	    "  {\"host\": \"API.example.com\", \"port\": 443}\n"
	    "], \"epoch\": 7, \"schema\": \"egress-guard.policy.v1\" }\n";

	(void)state;
	p = parse(in, err, sizeof(err));
	expect_canonical(p, DESIGN_CANON);
	assert_string_equal(policy_digest(p), DESIGN_DIGEST);
	assert_int_equal(policy_entries(p), 2);
	policy_free(p);
}

static void
test_canonical_orders_by_host_bytes_then_numeric_port(void **state)
{
	struct policy *p;
	char err[256] = "";
	const char *in = HEAD "[{\"host\":\"a.b\",\"port\":80},"
	    "{\"host\":\"a\",\"port\":8080},{\"host\":\"a\",\"port\":443},"
	    "{\"host\":\"a-b\",\"port\":1},{\"host\":\"a\",\"port\":80}]}";

	(void)state;
	p = parse(in, err, sizeof(err));
	expect_canonical(p, "{\"allow\":[{\"host\":\"a\",\"port\":80},"
	    "{\"host\":\"a\",\"port\":443},{\"host\":\"a\",\"port\":8080},"
	    "{\"host\":\"a-b\",\"port\":1},{\"host\":\"a.b\",\"port\":80}],"
	    "\"epoch\":1,\"mode\":\"allowlist\","
	    "\"schema\":\"egress-guard.policy.v1\"}");
	policy_free(p);
}

static void
test_canonical_reparses_to_same_bytes(void **state)
{
	struct policy *p, *q;
	char err[256] = "";
	const char *c;
	size_t len;
	const char *in = HEAD "[{\"host\":\"[2001:DB8::1]\",\"port\":443},"
	    "{\"host\":\"::ffff:7f00:1\",\"port\":80},"
	    "{\"host\":\"192.0.2.1\",\"port\":8443},"
	    "{\"host\":\"Zeta.example.\",\"port\":1}]}";

	(void)state;
	p = parse(in, err, sizeof(err));
	assert_non_null(p);
	c = policy_canonical(p, &len);
	q = policy_parse(c, len, err, sizeof(err));
	assert_non_null(q);
	expect_canonical(q, c);
	assert_string_equal(policy_digest(q), policy_digest(p));
	policy_free(p);
	policy_free(q);
}

static void
test_ipv6_host_canonical_is_unbracketed(void **state)
{
	struct policy *p;
	char err[256] = "";
	const char *in = HEAD "[{\"host\":\"[2001:DB8:0::1]\",\"port\":443},"
	    "{\"host\":\"2001:db8::1\",\"port\":443}]}";

	(void)state;
	p = parse(in, err, sizeof(err));
	expect_canonical(p, "{\"allow\":[{\"host\":\"2001:db8::1\",\"port\":443}],"
	    "\"epoch\":1,\"mode\":\"allowlist\","
	    "\"schema\":\"egress-guard.policy.v1\"}");
	assert_int_equal(policy_admits(p, "2001:db8::1", 443), 1);
	policy_free(p);
}

static void
test_refuses_unknown_key(void **state)
{
	(void)state;
	refuse_policy("{\"schema\":\"egress-guard.policy.v1\",\"mode\":\"none\","
	    "\"epoch\":1,\"allow\":[],\"comment\":\"hi\"}",
	    "unknown key \"comment\"");
}

static void
test_refuses_unknown_entry_key(void **state)
{
	(void)state;
	refuse_policy(HEAD "[{\"host\":\"a.example\",\"port\":1},"
	    "{\"host\":\"b.example\",\"port\":443,\"ports\":[1,2]}]}",
	    "allow[1]: unknown key \"ports\"");
}

static void
test_refuses_duplicate_key(void **state)
{
	(void)state;
	refuse_policy("{\"schema\":\"egress-guard.policy.v1\",\"mode\":\"none\","
	    "\"mode\":\"unrestricted\",\"epoch\":1,\"allow\":[]}",
	    "duplicate");
}

static void
test_refuses_duplicate_entry_key(void **state)
{
	(void)state;
	refuse_policy(HEAD "[{\"host\":\"a.example\",\"host\":\"b.example\","
	    "\"port\":1}]}", "duplicate");
}

static void
test_refuses_wildcard_entry_named(void **state)
{
	struct policy *p;
	char err[256] = "";

	(void)state;
	p = parse(HEAD "[{\"host\":\"a.example\",\"port\":1},"
	    "{\"host\":\"b.example\",\"port\":1},"
	    "{\"host\":\"*.example.com\",\"port\":443}]}", err, sizeof(err));
	assert_null(p);
	assert_string_equal(err,
	    "allow[2]: wildcard host \"*.example.com\" is not allowed");
}

static void
test_refuses_bad_host_entry_named(void **state)
{
	(void)state;
	refuse_policy(HEAD "[{\"host\":\"127.1\",\"port\":80}]}",
	    "allow[0]: host \"127.1\": IPv4 literal must be a strict dotted quad");
	refuse_policy(HEAD "[{\"host\":\"::ffff:127.0.0.1\",\"port\":80}]}",
	    "allow[0]: host \"::ffff:127.0.0.1\": IPv6 literal must not embed");
	refuse_policy(HEAD "[{\"host\":\"user@example.com\",\"port\":80}]}",
	    "allow[0]: host \"user@example.com\": userinfo is not allowed");
	refuse_policy(HEAD "[{\"host\":\"example.com:443\",\"port\":443}]}",
	    "allow[0]: host \"example.com:443\"");
	refuse_policy(HEAD "[{\"host\":\"\",\"port\":443}]}",
	    "allow[0]: host \"\": empty host");
}

static void
test_refuses_non_ascii_host_escaped(void **state)
{
	struct policy *p;
	char err[256] = "";

	(void)state;
	/* U+00FC as UTF-8, and a raw control byte via \u escape: both are
	 * shown escaped, never raw. */
	p = parse(HEAD "[{\"host\":\"b\\u00fccher.de\",\"port\":443}]}", err,
	    sizeof(err));
	assert_null(p);
	check_err(err);
	assert_non_null(strstr(err, "b\\xc3\\xbccher.de"));
	p = parse(HEAD "[{\"host\":\"a\\u001b[31m\\\"x\",\"port\":443}]}", err,
	    sizeof(err));
	assert_null(p);
	check_err(err);
	assert_non_null(strstr(err, "a\\x1b[31m\\\"x"));
}

static void
test_refuses_nul_in_host(void **state)
{
	(void)state;
	refuse_policy(HEAD "[{\"host\":\"a\\u0000.evil\",\"port\":443}]}",
	    "invalid JSON");
}

static void
test_refuses_bad_port(void **state)
{
	(void)state;
	refuse_policy(HEAD "[{\"host\":\"a.example\",\"port\":0}]}",
	    "allow[0]: port 0 of \"a.example\" must be 1-65535");
	refuse_policy(HEAD "[{\"host\":\"a.example\",\"port\":65536}]}",
	    "allow[0]: port 65536 of \"a.example\" must be 1-65535");
	refuse_policy(HEAD "[{\"host\":\"a.example\",\"port\":-443}]}",
	    "must be 1-65535");
}

static void
test_refuses_non_integer_port(void **state)
{
	(void)state;
	refuse_policy(HEAD "[{\"host\":\"a.example\",\"port\":\"443\"}]}",
	    "allow[0]: port of \"a.example\" must be an integer");
	refuse_policy(HEAD "[{\"host\":\"a.example\",\"port\":443.0}]}",
	    "must be an integer");
	refuse_policy(HEAD "[{\"host\":\"a.example\",\"port\":null}]}",
	    "must be an integer");
}

static void
test_refuses_incomplete_entry(void **state)
{
	(void)state;
	refuse_policy(HEAD "[{\"host\":\"a.example\"}]}",
	    "allow[0]: missing key \"port\"");
	refuse_policy(HEAD "[{\"port\":443}]}", "allow[0]: missing key \"host\"");
	refuse_policy(HEAD "[\"a.example:443\"]}", "allow[0]: entry must be an object");
	refuse_policy(HEAD "[{\"host\":443,\"port\":443}]}",
	    "allow[0]: host must be a string");
}

static void
test_refuses_wrong_schema(void **state)
{
	(void)state;
	refuse_policy("{\"schema\":\"egress-guard.policy.v2\",\"mode\":\"none\","
	    "\"epoch\":1,\"allow\":[]}", "schema must be");
	refuse_policy("{\"schema\":\"egress-guard.bundle.v1\",\"mode\":\"none\","
	    "\"epoch\":1,\"allow\":[]}", "schema must be");
	refuse_policy("{\"schema\":1,\"mode\":\"none\",\"epoch\":1,\"allow\":[]}",
	    "schema must be");
}

static void
test_refuses_missing_key(void **state)
{
	(void)state;
	refuse_policy("{\"mode\":\"none\",\"epoch\":1,\"allow\":[]}",
	    "missing key \"schema\"");
	refuse_policy("{\"schema\":\"egress-guard.policy.v1\",\"epoch\":1,"
	    "\"allow\":[]}", "missing key \"mode\"");
	refuse_policy("{\"schema\":\"egress-guard.policy.v1\",\"mode\":\"none\","
	    "\"allow\":[]}", "missing key \"epoch\"");
	refuse_policy("{\"schema\":\"egress-guard.policy.v1\",\"mode\":\"none\","
	    "\"epoch\":1}", "missing key \"allow\"");
}

static void
test_refuses_bad_mode(void **state)
{
	(void)state;
	refuse_policy("{\"schema\":\"egress-guard.policy.v1\",\"mode\":\"Allowlist\","
	    "\"epoch\":1,\"allow\":[]}", "mode must be one of");
	refuse_policy("{\"schema\":\"egress-guard.policy.v1\",\"mode\":\"all\","
	    "\"epoch\":1,\"allow\":[]}", "mode must be one of");
}

static void
test_refuses_negative_epoch(void **state)
{
	(void)state;
	refuse_policy("{\"schema\":\"egress-guard.policy.v1\",\"mode\":\"none\","
	    "\"epoch\":-1,\"allow\":[]}", "epoch must be 0-9007199254740991");
}

static void
test_refuses_epoch_too_large(void **state)
{
	(void)state;
	refuse_policy("{\"schema\":\"egress-guard.policy.v1\",\"mode\":\"none\","
	    "\"epoch\":9007199254740992,\"allow\":[]}", "epoch must be 0-");
	refuse_policy("{\"schema\":\"egress-guard.policy.v1\",\"mode\":\"none\","
	    "\"epoch\":99999999999999999999999,\"allow\":[]}", "invalid JSON");
}

static void
test_accepts_epoch_bounds(void **state)
{
	struct policy *p;
	char err[256] = "";

	(void)state;
	p = parse("{\"schema\":\"egress-guard.policy.v1\",\"mode\":\"none\","
	    "\"epoch\":9007199254740991,\"allow\":[]}", err, sizeof(err));
	expect_canonical(p, "{\"allow\":[],\"epoch\":9007199254740991,"
	    "\"mode\":\"none\",\"schema\":\"egress-guard.policy.v1\"}");
	assert_int_equal(policy_epoch(p), POLICY_EPOCH_MAX);
	policy_free(p);
	p = parse("{\"schema\":\"egress-guard.policy.v1\",\"mode\":\"none\","
	    "\"epoch\":0,\"allow\":[]}", err, sizeof(err));
	assert_non_null(p);
	assert_int_equal(policy_epoch(p), 0);
	policy_free(p);
}

static void
test_refuses_non_integer_epoch(void **state)
{
	(void)state;
	refuse_policy("{\"schema\":\"egress-guard.policy.v1\",\"mode\":\"none\","
	    "\"epoch\":7.0,\"allow\":[]}", "epoch must be an integer");
	refuse_policy("{\"schema\":\"egress-guard.policy.v1\",\"mode\":\"none\","
	    "\"epoch\":1e3,\"allow\":[]}", "epoch must be an integer");
	refuse_policy("{\"schema\":\"egress-guard.policy.v1\",\"mode\":\"none\","
	    "\"epoch\":\"7\",\"allow\":[]}", "epoch must be an integer");
}

static void
test_refuses_entries_with_mode_none(void **state)
{
	(void)state;
	refuse_policy("{\"schema\":\"egress-guard.policy.v1\",\"mode\":\"none\","
	    "\"epoch\":1,\"allow\":[{\"host\":\"a.example\",\"port\":1}]}",
	    "allow must be empty when mode is \"none\"");
}

static void
test_refuses_entries_with_mode_unrestricted(void **state)
{
	(void)state;
	refuse_policy("{\"schema\":\"egress-guard.policy.v1\","
	    "\"mode\":\"unrestricted\",\"epoch\":1,"
	    "\"allow\":[{\"host\":\"a.example\",\"port\":1}]}",
	    "allow must be empty when mode is \"unrestricted\"");
}

static void
test_refuses_allow_not_array(void **state)
{
	(void)state;
	refuse_policy(HEAD "{}}", "allow must be an array");
	refuse_policy(HEAD "null}", "allow must be an array");
}

static void
test_refuses_bad_json(void **state)
{
	(void)state;
	refuse_policy("", "invalid JSON");
	refuse_policy("[]", "top level must be a JSON object");
	refuse_policy("{\"schema\":", "invalid JSON");
	refuse_policy(DESIGN_CANON "x", "invalid JSON");
	refuse_policy(DESIGN_CANON DESIGN_CANON, "invalid JSON");
}

static void
test_refuses_oversized_input(void **state)
{
	struct policy *p;
	char err[256] = "";

	(void)state;
	/* The bound is checked before a byte is read. */
	p = policy_parse(DESIGN_CANON, (size_t)POLICY_MAX_BYTES + 1, err,
	    sizeof(err));
	assert_null(p);
	assert_non_null(strstr(err, "larger than"));
	p = policy_compile_profile(DESIGN_PROFILE, (size_t)POLICY_MAX_BYTES + 1,
	    1, err, sizeof(err));
	assert_null(p);
	assert_non_null(strstr(err, "larger than"));
	assert_null(policy_parse(NULL, 0, err, sizeof(err)));
}

static void
test_profile_refuses_wildcard_named(void **state)
{
	struct policy *p;
	char err[256] = "";

	(void)state;
	p = profile("{\"network_policy\":\"allowlist\",\"allowed_hosts\":"
	    "[\"a.com:443\",\"*.x.com:443\"]}", 1, err, sizeof(err));
	assert_null(p);
	assert_string_equal(err,
	    "allowed_hosts[1] \"*.x.com:443\": wildcards are not allowed");
}

static void
test_profile_refuses_bad_entry_named(void **state)
{
	(void)state;
	refuse_profile("{\"network_policy\":\"allowlist\",\"allowed_hosts\":"
	    "[\"example.com:0443\"]}", "allowed_hosts[0] \"example.com:0443\": "
	    "port must be 1-65535 without leading zeros");
	refuse_profile("{\"network_policy\":\"allowlist\",\"allowed_hosts\":"
	    "[\"example.com\"]}", "allowed_hosts[0] \"example.com\": missing port");
	refuse_profile("{\"network_policy\":\"allowlist\",\"allowed_hosts\":"
	    "[\"0x7f.0.0.1:80\"]}", "allowed_hosts[0] \"0x7f.0.0.1:80\": IPv4");
	refuse_profile("{\"network_policy\":\"allowlist\",\"allowed_hosts\":"
	    "[\"a.com:443\",443]}", "allowed_hosts[1]: must be a \"host:port\" string");
}

static void
test_profile_refuses_unknown_key(void **state)
{
	(void)state;
	refuse_profile("{\"network_policy\":\"none\",\"allowed_host\":[]}",
	    "unknown key \"allowed_host\"");
}

static void
test_profile_refuses_duplicate_key(void **state)
{
	(void)state;
	refuse_profile("{\"network_policy\":\"none\",\"network_policy\":"
	    "\"unrestricted\"}", "duplicate");
}

static void
test_profile_refuses_missing_or_bad_network_policy(void **state)
{
	(void)state;
	refuse_profile("{\"allowed_hosts\":[]}", "missing key \"network_policy\"");
	refuse_profile("{\"network_policy\":\"deny\"}",
	    "network_policy must be one of");
	refuse_profile("{\"network_policy\":null}", "network_policy must be one of");
}

static void
test_profile_allowlist_requires_allowed_hosts(void **state)
{
	(void)state;
	refuse_profile("{\"network_policy\":\"allowlist\"}",
	    "missing key \"allowed_hosts\"");
	refuse_profile("{\"network_policy\":\"allowlist\",\"allowed_hosts\":"
	    "\"a.com:443\"}", "allowed_hosts must be an array");
}

static void
test_profile_allowlist_may_be_empty(void **state)
{
	struct policy *p;
	char err[256] = "";

	(void)state;
	p = profile("{\"network_policy\":\"allowlist\",\"allowed_hosts\":[]}",
	    3, err, sizeof(err));
	expect_canonical(p, "{\"allow\":[],\"epoch\":3,\"mode\":\"allowlist\","
	    "\"schema\":\"egress-guard.policy.v1\"}");
	assert_int_equal(policy_admits(p, "example.com", 443), 0);
	assert_null(policy_required_grade(p));
	policy_free(p);
}

static void
test_profile_none_and_unrestricted(void **state)
{
	struct policy *p;
	char err[256] = "";

	(void)state;
	p = profile("{\"network_policy\":\"none\"}", 1, err, sizeof(err));
	expect_canonical(p, "{\"allow\":[],\"epoch\":1,\"mode\":\"none\","
	    "\"schema\":\"egress-guard.policy.v1\"}");
	policy_free(p);
	p = profile("{\"network_policy\":\"unrestricted\",\"allowed_hosts\":[]}",
	    1, err, sizeof(err));
	expect_canonical(p, "{\"allow\":[],\"epoch\":1,\"mode\":\"unrestricted\","
	    "\"schema\":\"egress-guard.policy.v1\"}");
	policy_free(p);
}

static void
test_profile_none_refuses_hosts(void **state)
{
	(void)state;
	refuse_profile("{\"network_policy\":\"none\",\"allowed_hosts\":"
	    "[\"a.com:443\"]}", "allowed_hosts must be absent or empty");
	refuse_profile("{\"network_policy\":\"unrestricted\",\"allowed_hosts\":"
	    "[\"a.com:443\"]}", "allowed_hosts must be absent or empty");
}

static void
test_profile_certification_only_with_allowlist(void **state)
{
	(void)state;
	refuse_profile("{\"network_policy\":\"none\","
	    "\"required_egress_certification\":\"advisory_filter\"}",
	    "only allowed with network_policy \"allowlist\"");
	refuse_profile("{\"network_policy\":\"unrestricted\","
	    "\"required_egress_certification\":\"security_boundary\"}",
	    "only allowed with network_policy \"allowlist\"");
}

static void
test_profile_refuses_bad_certification(void **state)
{
	(void)state;
	refuse_profile("{\"network_policy\":\"allowlist\",\"allowed_hosts\":[],"
	    "\"required_egress_certification\":\"gold\"}",
	    "required_egress_certification must be one of");
	refuse_profile("{\"network_policy\":\"allowlist\",\"allowed_hosts\":[],"
	    "\"required_egress_certification\":null}",
	    "required_egress_certification must be one of");
}

/* "unsupported" is a grade, not a requirement: requiring it would make the
 * requirement meaningless (every grade meets it). */
static void
test_profile_refuses_unsupported_as_requirement(void **state)
{
	(void)state;
	refuse_profile("{\"network_policy\":\"allowlist\",\"allowed_hosts\":"
	    "[\"a.com:443\"],\"required_egress_certification\":\"unsupported\"}",
	    "required_egress_certification must be one of advisory_filter, "
	    "security_boundary");
}

static void
test_profile_keeps_grade_outside_canonical(void **state)
{
	static const char *const g[] = {
		"advisory_filter", "security_boundary"
	};
	struct policy *p, *q;
	char in[256], err[256] = "";
	size_t i;

	(void)state;
	q = profile("{\"network_policy\":\"allowlist\",\"allowed_hosts\":"
	    "[\"a.com:443\"]}", 1, err, sizeof(err));
	assert_non_null(q);
	for (i = 0; i < sizeof(g) / sizeof(g[0]); i++) {
		snprintf(in, sizeof(in), "{\"network_policy\":\"allowlist\","
		    "\"allowed_hosts\":[\"a.com:443\"],"
		    "\"required_egress_certification\":\"%s\"}", g[i]);
		p = profile(in, 1, err, sizeof(err));
		assert_non_null(p);
		assert_string_equal(policy_required_grade(p), g[i]);
		assert_string_equal(policy_digest(p), policy_digest(q));
		policy_free(p);
	}
	policy_free(q);
}

static void
test_profile_refuses_bad_epoch(void **state)
{
	struct policy *p;
	char err[256] = "";

	(void)state;
	p = profile(DESIGN_PROFILE, -1, err, sizeof(err));
	assert_null(p);
	assert_non_null(strstr(err, "epoch must be 0-"));
	p = profile(DESIGN_PROFILE, POLICY_EPOCH_MAX + 1, err, sizeof(err));
	assert_null(p);
}

static struct policy *
one_entry(const char *host, int port)
{
	char in[512], err[256] = "";
	struct policy *p;

	snprintf(in, sizeof(in), HEAD "[{\"host\":\"%s\",\"port\":%d}]}",
	    host, port);
	p = parse(in, err, sizeof(err));
	if (p == NULL)
		fail_msg("%s", err);
	return p;
}

static void
test_matcher_exact_match_only(void **state)
{
	struct policy *p = one_entry("api.example.com", 443);

	(void)state;
	assert_int_equal(policy_admits(p, "api.example.com", 443), 1);
	/* subdomain, parent, suffix, prefix, other port: all miss */
	assert_int_equal(policy_admits(p, "x.api.example.com", 443), 0);
	assert_int_equal(policy_admits(p, "example.com", 443), 0);
	assert_int_equal(policy_admits(p, "pi.example.com", 443), 0);
	assert_int_equal(policy_admits(p, "api.example.co", 443), 0);
	assert_int_equal(policy_admits(p, "evilapi.example.com", 443), 0);
	assert_int_equal(policy_admits(p, "api.example.com.evil", 443), 0);
	assert_int_equal(policy_admits(p, "api.example.com", 444), 0);
	assert_int_equal(policy_admits(p, "api.example.com", 80), 0);
	assert_int_equal(policy_admits(p, "api.example.com", 0), 0);
	/* not normalised: the caller's job, and a miss here */
	assert_int_equal(policy_admits(p, "API.example.com", 443), 0);
	assert_int_equal(policy_admits(p, "api.example.com.", 443), 0);
	assert_int_equal(policy_admits(p, "", 443), 0);
	assert_int_equal(policy_admits(p, NULL, 443), 0);
	policy_free(p);
}

/* The DNS listener's question: the name on any port, and nothing that
 * merely shares bytes with it. */
static void
test_name_matcher_any_port_exact_name_only(void **state)
{
	const char *pol = HEAD "[{\"host\":\"a.test\",\"port\":1},"
	    "{\"host\":\"api.example.com\",\"port\":8443},"
	    "{\"host\":\"api.example.com\",\"port\":443},"
	    "{\"host\":\"api.example.co\",\"port\":80},"
	    "{\"host\":\"198.18.1.10\",\"port\":443},"
	    "{\"host\":\"zz.test\",\"port\":65535}]}";
	const char *none = "{\"schema\":\"egress-guard.policy.v1\","
	    "\"mode\":\"none\",\"epoch\":1,\"allow\":[]}";
	const char *open = "{\"schema\":\"egress-guard.policy.v1\","
	    "\"mode\":\"unrestricted\",\"epoch\":1,\"allow\":[]}";
	char err[256] = "";
	struct policy *p = parse(pol, err, sizeof(err));

	(void)state;
	assert_non_null(p);
	assert_int_equal(policy_admits_name(p, "api.example.com"), 1);
	assert_int_equal(policy_admits_name(p, "api.example.co"), 1);
	assert_int_equal(policy_admits_name(p, "a.test"), 1);	/* first */
	assert_int_equal(policy_admits_name(p, "zz.test"), 1);	/* last */
	/* prefix, suffix, subdomain, parent, not normalised: all miss */
	assert_int_equal(policy_admits_name(p, "api.example.c"), 0);
	assert_int_equal(policy_admits_name(p, "api.example.comm"), 0);
	assert_int_equal(policy_admits_name(p, "x.api.example.com"), 0);
	assert_int_equal(policy_admits_name(p, "example.com"), 0);
	assert_int_equal(policy_admits_name(p, "API.example.com"), 0);
	assert_int_equal(policy_admits_name(p, "api.example.com."), 0);
	assert_int_equal(policy_admits_name(p, "a"), 0);
	assert_int_equal(policy_admits_name(p, "zzz.test"), 0);
	assert_int_equal(policy_admits_name(p, ""), 0);
	assert_int_equal(policy_admits_name(p, NULL), 0);
	policy_free(p);
	assert_int_equal(policy_admits_name(NULL, "api.example.com"), 0);
	assert_non_null(p = parse(none, err, sizeof(err)));
	assert_int_equal(policy_admits_name(p, "api.example.com"), 0);
	policy_free(p);
	assert_non_null(p = parse(open, err, sizeof(err)));
	assert_int_equal(policy_admits_name(p, "anything.test"), 1);
	policy_free(p);
}

static void
test_matcher_mode_none_admits_nothing(void **state)
{
	struct policy *p;
	char err[256] = "";

	(void)state;
	p = parse("{\"schema\":\"egress-guard.policy.v1\",\"mode\":\"none\","
	    "\"epoch\":1,\"allow\":[]}", err, sizeof(err));
	assert_non_null(p);
	assert_int_equal(policy_mode(p), POLICY_NONE);
	assert_int_equal(policy_admits(p, "example.com", 443), 0);
	assert_int_equal(policy_admits(p, "192.0.2.1", 80), 0);
	policy_free(p);
}

static void
test_matcher_unrestricted_admits_everything(void **state)
{
	struct policy *p;
	char err[256] = "";

	(void)state;
	p = parse("{\"schema\":\"egress-guard.policy.v1\","
	    "\"mode\":\"unrestricted\",\"epoch\":1,\"allow\":[]}", err,
	    sizeof(err));
	assert_non_null(p);
	assert_int_equal(policy_mode(p), POLICY_UNRESTRICTED);
	assert_int_equal(policy_admits(p, "example.com", 443), 1);
	assert_int_equal(policy_admits(p, "2001:db8::1", 8443), 1);
	policy_free(p);
}

static void
test_matcher_null_policy_denies(void **state)
{
	size_t len = 99;

	(void)state;
	assert_int_equal(policy_admits(NULL, "example.com", 443), 0);
	assert_int_equal(policy_mode(NULL), POLICY_NONE);
	assert_null(policy_canonical(NULL, &len));
	assert_int_equal(len, 0);
	assert_null(policy_digest(NULL));
	assert_null(policy_required_grade(NULL));
	assert_int_equal(policy_entries(NULL), 0);
	assert_int_equal(policy_epoch(NULL), -1);
	policy_free(NULL);
}

static void
test_matcher_literals(void **state)
{
	struct policy *p;
	char err[256] = "";

	(void)state;
	p = parse(HEAD "[{\"host\":\"192.0.2.1\",\"port\":443},"
	    "{\"host\":\"[2001:db8::1]\",\"port\":443}]}", err, sizeof(err));
	assert_non_null(p);
	assert_int_equal(policy_admits(p, "192.0.2.1", 443), 1);
	assert_int_equal(policy_admits(p, "2001:db8::1", 443), 1);
	assert_int_equal(policy_admits(p, "[2001:db8::1]", 443), 0);
	assert_int_equal(policy_admits(p, "192.0.2.10", 443), 0);
	assert_int_equal(policy_admits(p, "192.0.2.1", 80), 0);
	policy_free(p);
}

static void
test_matcher_overlong_host_misses(void **state)
{
	struct policy *p = one_entry("a.example", 1);
	char host[400];

	(void)state;
	memset(host, 'a', sizeof(host) - 1);
	host[sizeof(host) - 1] = '\0';
	assert_int_equal(policy_admits(p, host, 1), 0);
	policy_free(p);
}

static void
test_mode_names(void **state)
{
	(void)state;
	assert_string_equal(policy_mode_name(POLICY_NONE), "none");
	assert_string_equal(policy_mode_name(POLICY_ALLOWLIST), "allowlist");
	assert_string_equal(policy_mode_name(POLICY_UNRESTRICTED), "unrestricted");
}

#define BIG	100000

/* The process's CPU time, not the wall clock: the bound below is about
 * the parser's complexity (a quadratic index would take minutes), and on a
 * loaded machine wall time measures the other processes too. */
static double
cpu_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* The digest is SHA-256 of the canonical bytes, computed here apart from
 * the library. A canonical form of a MiB or more is hashed on a second
 * thread while the matcher is built (policy.c, policy_seal): this checks that
 * path on the bytes it was given, and that reading them back through the
 * canonical fast path gives the same digest again. */
static void
digest_is_sha256_of_canonical(const struct policy *p)
{
	static const char hex[] = "0123456789abcdef";
	unsigned char md[32];
	char want[POLICY_DIGEST_LEN + 1] = "sha256:", err[256] = "";
	const char *canon;
	struct policy *q;
	size_t len, i;
	unsigned int mdlen = 0;

	canon = policy_canonical(p, &len);
	assert_true(len >= (1u << 20));
	assert_int_equal(EVP_Digest(canon, len, md, &mdlen, EVP_sha256(), NULL), 1);
	for (i = 0; i < sizeof(md); i++) {
		want[7 + 2 * i] = hex[md[i] >> 4];
		want[7 + 2 * i + 1] = hex[md[i] & 0xf];
	}
	want[POLICY_DIGEST_LEN] = '\0';
	assert_string_equal(policy_digest(p), want);
	if ((q = policy_parse(canon, len, err, sizeof(err))) == NULL)
		fail_msg("%s", err);
	assert_string_equal(policy_digest(q), want);
	policy_free(q);
}

/* 100,000 entries in shuffled order: all found, near misses not, the
 * digest right, and the build stays far from quadratic. */
static void
test_matcher_100k_entries(void **state)
{
	struct policy *p;
	char *buf, err[256] = "", host[64];
	size_t cap = (size_t)BIG * 64 + 256, off;
	double t0, t1;
	unsigned int i, k;

	(void)state;
	buf = malloc(cap);
	assert_non_null(buf);
	off = (size_t)snprintf(buf, cap, HEAD "[");
	for (i = 0; i < BIG; i++) {
		/* a permutation of 0..BIG-1 (7919 is coprime with BIG) */
		k = (unsigned int)(((unsigned long long)i * 7919) % BIG);
		off += (size_t)snprintf(buf + off, cap - off,
		    "%s{\"host\":\"h%u.example.com\",\"port\":%u}",
		    i ? "," : "", k, 1 + k % 65535);
	}
	off += (size_t)snprintf(buf + off, cap - off, "]}");
	t0 = cpu_ms();
	p = policy_parse(buf, off, err, sizeof(err));
	t1 = cpu_ms();
	free(buf);
	if (p == NULL)
		fail_msg("%s", err);
	print_message("parsed and indexed %d entries in %.1f ms\n", BIG, t1 - t0);
	if (!RUNNING_ON_VALGRIND && !SANITIZED_BUILD)
		assert_true(t1 - t0 < 1000.0);
	assert_int_equal(policy_entries(p), BIG);
	digest_is_sha256_of_canonical(p);
	for (i = 0; i < BIG; i++) {
		snprintf(host, sizeof(host), "h%u.example.com", i);
		assert_int_equal(policy_admits(p, host, (uint16_t)(1 + i % 65535)), 1);
		assert_int_equal(policy_admits(p, host, (uint16_t)(2 + i % 65534)), 0);
		snprintf(host, sizeof(host), "h%u.example.com", i + BIG);
		assert_int_equal(policy_admits(p, host, (uint16_t)(1 + i % 65535)), 0);
		snprintf(host, sizeof(host), "x.h%u.example.com", i);
		assert_int_equal(policy_admits(p, host, (uint16_t)(1 + i % 65535)), 0);
	}
	policy_free(p);
}

static char *
write_tmp(const char *content)
{
	char *path = strdup("/tmp/eg-policy-test-XXXXXX");
	int fd;

	assert_non_null(path);
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, content, strlen(content)),
	    (ssize_t)strlen(content));
	close(fd);
	return path;
}

static void
test_load_file_reads_policy(void **state)
{
	struct policy *p;
	char err[512] = "", *path;

	(void)state;
	path = write_tmp(DESIGN_CANON "\n");
	p = policy_load_file(path, err, sizeof(err));
	expect_canonical(p, DESIGN_CANON);
	assert_string_equal(policy_digest(p), DESIGN_DIGEST);
	policy_free(p);
	unlink(path);
	free(path);
}

static void
test_load_file_errors_name_the_path(void **state)
{
	struct policy *p;
	char err[512] = "", *path;

	(void)state;
	p = policy_load_file("/nonexistent/eg-policy.json", err, sizeof(err));
	assert_null(p);
	assert_non_null(strstr(err, "/nonexistent/eg-policy.json: "));
	p = policy_load_file("/tmp", err, sizeof(err));
	assert_null(p);
	assert_string_equal(err, "/tmp: not a regular file");
	path = write_tmp(HEAD "[{\"host\":\"*.a.com\",\"port\":1}]}");
	p = policy_load_file(path, err, sizeof(err));
	assert_null(p);
	assert_true(strncmp(err, path, strlen(path)) == 0);
	assert_non_null(strstr(err, ": allow[0]: wildcard host \"*.a.com\""));
	unlink(path);
	free(path);
}

static void
test_compile_profile_file(void **state)
{
	struct policy *p;
	char err[512] = "", *path;

	(void)state;
	path = write_tmp(DESIGN_PROFILE);
	p = policy_compile_profile_file(path, 7, err, sizeof(err));
	expect_canonical(p, DESIGN_CANON);
	policy_free(p);
	unlink(path);
	free(path);
	path = write_tmp("{\"network_policy\":\"allowlist\",\"extra\":1}");
	p = policy_compile_profile_file(path, 7, err, sizeof(err));
	assert_null(p);
	assert_true(strncmp(err, path, strlen(path)) == 0);
	assert_non_null(strstr(err, ": unknown key \"extra\""));
	unlink(path);
	free(path);
}

/* The hand-read profile path and the jansson one must agree: every
 * spelling of one profile compiles to the same bytes. */
static void
test_profile_spellings_compile_alike(void **state)
{
	static const char *const spellings[] = {
		DESIGN_PROFILE,
		" {\n\t\"allowed_hosts\" : [ \"example.org:80\" ,\r\n"
		"\"api.example.com:443\" ] , \"network_policy\" : \"allowlist\" }\n",
		"{\"network_policy\":\"allowlist\",\"allowed_hosts\":"
		"[\"API.Example.COM:443\",\"example.org.:80\",\"example.org:80\"]}",
		/* An escape takes the jansson path; same result. */
		"{\"network_policy\":\"allow\\u006cist\",\"allowed_hosts\":"
		"[\"\\u0061pi.example.com:443\",\"example.org:80\"]}",
	};
	struct policy *p;
	char err[256] = "";
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(spellings) / sizeof(spellings[0]); i++) {
		p = profile(spellings[i], 7, err, sizeof(err));
		if (p == NULL)
			fail_msg("refused %zu: %s", i, err);
		expect_canonical(p, DESIGN_CANON);
		assert_string_equal(policy_digest(p), DESIGN_DIGEST);
		assert_true(policy_admits(p, "api.example.com", 443));
		policy_free(p);
	}
}

/* Bytes the hand-read path lets through to the checks are refused there,
 * and named as the jansson path names them. */
static void
test_profile_hostile_bytes_in_strings_refused(void **state)
{
	(void)state;
	refuse_profile("{\"network_policy\":\"allowlist\",\"allowed_hosts\":"
	    "[\"a\x01.example:443\"]}", "invalid JSON");
	refuse_profile("{\"network_policy\":\"allowlist\",\"allowed_hosts\":"
	    "[\"\xc3\xa9.example:443\"]}", "non-ASCII");
	refuse_profile("{\"network_policy\":\"allowlist\",\"allowed_hosts\":"
	    "[\"\xff.example:443\"]}", "invalid JSON");
	refuse_profile("{\"network_policy\":\"allow\x7flist\",\"allowed_hosts\":[]}",
	    "network_policy must be one of");
	refuse_profile("{\"network_policy\":\"allowlist\",\"allowed_hosts\":"
	    "[\"a.example:443\"]} x", "invalid JSON");
	refuse_profile("{\"network_policy\":\"allowlist\",\"allowed_hosts\":"
	    "[\"a.example:443\",]}", "invalid JSON");
}

/* A duplicate ahead of an entry out of order: still sorted, then
 * deduplicated. */
static void
test_profile_duplicate_then_unsorted_sorted_and_deduplicated(void **state)
{
	struct policy *p;
	char err[256] = "";

	(void)state;
	p = profile("{\"network_policy\":\"allowlist\",\"allowed_hosts\":"
	    "[\"b.example:1\",\"b.example:1\",\"a.example:1\",\"b.example:1\"]}",
	    1, err, sizeof(err));
	expect_canonical(p, "{\"allow\":[{\"host\":\"a.example\",\"port\":1},"
	    "{\"host\":\"b.example\",\"port\":1}],\"epoch\":1,\"mode\":"
	    "\"allowlist\",\"schema\":\"egress-guard.policy.v1\"}");
	assert_int_equal(policy_entries(p), 2);
	policy_free(p);
}

static void
test_host_is_normal_only_as_dest_parse_writes_it(void **state)
{
	static const char *const normal[] = {
		"a.example", "xn--bcher-kva.example", "a_b-c.example", "1.2.3.4",
		"2001:db8::1", "::1", "a",
	};
	static const char *const not_normal[] = {
		"A.example", "a.example.", "[::1]", "2001:DB8::1", "0::1",
		"::ffff:1.2.3.4", "127.1", "0x7f.0.0.1", "01.2.3.4", "a..b", ".a",
		"a b", "a\x01", "*.a", "a%41", "",
	};
	char big[300];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(normal) / sizeof(normal[0]); i++)
		if (!dest_host_is_normal(normal[i], strlen(normal[i])))
			fail_msg("not normal: %s", normal[i]);
	for (i = 0; i < sizeof(not_normal) / sizeof(not_normal[0]); i++)
		if (dest_host_is_normal(not_normal[i], strlen(not_normal[i])))
			fail_msg("normal: %s", not_normal[i]);
	memset(big, 'a', sizeof(big));
	assert_false(dest_host_is_normal(big, 64));	/* one label of 64 */
	for (i = 63; i < sizeof(big); i += 64)
		big[i] = '.';
	assert_true(dest_host_is_normal(big, 253));
	assert_false(dest_host_is_normal(big, 254));
	assert_false(dest_host_is_normal(NULL, 0));
}

/* Canonical-shaped bytes whose host is not written the normal way are
 * not canonical: the strict path normalises them into other bytes. */
static void
test_canonical_shape_with_unnormal_host_is_normalised(void **state)
{
	struct policy *p;
	char err[256] = "";

	(void)state;
	p = parse("{\"allow\":[{\"host\":\"API.example.com\",\"port\":443},"
	    "{\"host\":\"example.org\",\"port\":80}],\"epoch\":7,\"mode\":"
	    "\"allowlist\",\"schema\":\"egress-guard.policy.v1\"}", err,
	    sizeof(err));
	expect_canonical(p, DESIGN_CANON);
	policy_free(p);
}

static void
test_parse_take_adopts_only_canonical_bytes(void **state)
{
	static const char pad[] = "prefix";
	const char *c;
	struct policy *p;
	char err[256] = "", *buf;
	size_t len, off = sizeof(pad);
	int taken = -1;

	(void)state;
	/* Canonical: the policy's canonical bytes are the buffer's. */
	buf = malloc(off + sizeof(DESIGN_CANON));
	assert_non_null(buf);
	memcpy(buf, pad, off);
	memcpy(buf + off, DESIGN_CANON, sizeof(DESIGN_CANON));
	p = policy_parse_take(buf, off, strlen(DESIGN_CANON), &taken, err,
	    sizeof(err));
	assert_non_null(p);
	assert_int_equal(taken, 1);
	c = policy_canonical(p, &len);
	assert_ptr_equal(c, buf + off);
	assert_string_equal(policy_digest(p), DESIGN_DIGEST);
	policy_free(p);		/* frees buf */
	/* Another spelling: parsed, and the buffer stays the caller's. */
	buf = strdup(" " DESIGN_CANON);
	assert_non_null(buf);
	p = policy_parse_take(buf, 0, strlen(buf), &taken, err, sizeof(err));
	assert_int_equal(taken, 0);
	expect_canonical(p, DESIGN_CANON);
	assert_string_equal(buf, " " DESIGN_CANON);
	policy_free(p);
	free(buf);
	/* Refused: NULL, err set, buffer still the caller's. */
	buf = strdup(HEAD "[{\"host\":\"*.a.com\",\"port\":1}]}");
	assert_non_null(buf);
	p = policy_parse_take(buf, 0, strlen(buf), &taken, err, sizeof(err));
	assert_null(p);
	assert_int_equal(taken, 0);
	assert_non_null(strstr(err, "wildcard"));
	free(buf);
}

static void
test_canonical_bytes_of_files_for_the_plane_tools(void **state)
{
	char err[512] = "", *path, *c;
	size_t len = 0;

	(void)state;
	/* Canonical already: read in place after the reserved bytes. */
	path = write_tmp(DESIGN_CANON "\n");
	c = policy_file_canonical(path, 23, &len, err, sizeof(err));
	assert_non_null(c);
	assert_int_equal(len, strlen(DESIGN_CANON));
	assert_memory_equal(c + 23, DESIGN_CANON, len + 1);
	free(c);
	unlink(path);
	free(path);
	/* Another spelling: its canonical bytes, after the reserve too. */
	path = write_tmp(HEAD "[{\"host\":\"example.org\",\"port\":80},"
	    "{\"host\":\"API.example.com\",\"port\":443}]}");
	c = policy_file_canonical(path, 5, &len, err, sizeof(err));
	assert_non_null(c);
	assert_int_equal(len, strlen(DESIGN_CANON));
	assert_memory_equal(c + 5, DESIGN_CANON_EPOCH_1, len + 1);
	free(c);
	unlink(path);
	free(path);
	/* A profile, compiled. */
	path = write_tmp(DESIGN_PROFILE);
	c = policy_profile_canonical(path, 7, &len, err, sizeof(err));
	assert_non_null(c);
	assert_int_equal(len, strlen(DESIGN_CANON));
	assert_string_equal(c, DESIGN_CANON);
	free(c);
	unlink(path);
	free(path);
	/* Refusals name the path, as the policy_*_file functions do. */
	path = write_tmp("{\"network_policy\":\"allowlist\",\"extra\":1}");
	assert_null(policy_profile_canonical(path, 7, &len, err, sizeof(err)));
	assert_true(strncmp(err, path, strlen(path)) == 0);
	assert_non_null(strstr(err, ": unknown key \"extra\""));
	assert_null(policy_file_canonical(path, 0, &len, err, sizeof(err)));
	assert_true(strncmp(err, path, strlen(path)) == 0);
	unlink(path);
	free(path);
	assert_null(policy_file_canonical("/tmp", 0, &len, err, sizeof(err)));
	assert_string_equal(err, "/tmp: not a regular file");
}

int main(void);

/* ---- the profile abbreviations (docs/design.md "Profile
 * abbreviations"): the catalog's strict parser, allow_package_managers
 * expanded per ecosystem into entries that carry their provenance,
 * allow_mcp_servers granting nothing, both profile parsers agreeing on
 * the new keys, provenance and catalog inside the canonical bytes, and
 * the widening test of egress-guardctl diff and push --no-widen. ---- */

/* The shape of examples/catalog.json, hosts under example.test. */
#define CATALOG_V1 "{\"schema\":\"egress-guard.catalog.v1\",\"version\":\"v1\"," \
    "\"ecosystems\":{\"npm\":[\"registry.npm.example.test:443\"]," \
    "\"pypi\":[\"pypi.example.test:443\",\"files.pypi.example.test:443\"]," \
    "\"go\":[\"proxy.golang.example.test:443\",\"sum.golang.example.test:443\"]," \
    "\"apt\":[\"deb.debian.example.test:80\"]}}"
/* The same and one more npm host: a newer catalog. */
#define CATALOG_V2 "{\"schema\":\"egress-guard.catalog.v1\",\"version\":\"v2\"," \
    "\"ecosystems\":{\"npm\":[\"registry.npm.example.test:443\"," \
    "\"npm2.example.test:443\"]," \
    "\"pypi\":[\"pypi.example.test:443\",\"files.pypi.example.test:443\"]," \
    "\"go\":[\"proxy.golang.example.test:443\",\"sum.golang.example.test:443\"]," \
    "\"apt\":[\"deb.debian.example.test:80\"]}}"

static struct catalog *
cat_of(const char *s)
{
	char err[512] = "";
	struct catalog *c = catalog_parse(s, strlen(s), err, sizeof(err));

	if (c == NULL)
		fail_msg("catalog refused: %s", err);
	return c;
}

static void
refuse_catalog(const char *s, const char *want)
{
	char err[512] = "";
	struct catalog *c = catalog_parse(s, strlen(s), err, sizeof(err));

	if (c != NULL) {
		catalog_free(c);
		fail_msg("accepted: %s", s);
	}
	check_err(err);
	if (strstr(err, want) == NULL)
		fail_msg("error \"%s\" does not contain \"%s\"", err, want);
}

static struct policy *
compile_cat(const char *prof, const struct catalog *c, char *err, size_t errlen)
{
	return policy_compile_profile_cat(prof, strlen(prof), 5, c, err, errlen);
}

/* The key "allow_package_managers" spelled with an escape: the same
 * profile, but never read by the hand-written fast path. */
static char *
jansson_spelling(const char *prof)
{
	const char *k = "\"network_policy\"";
	const char *at = strstr(prof, k);
	char *out;

	assert_non_null(at);
	out = malloc(strlen(prof) + 8);
	assert_non_null(out);
	memcpy(out, prof, (size_t)(at - prof));
	strcpy(out + (at - prof), "\"network_polic\\u0079\"");
	strcat(out, at + strlen(k));
	return out;
}

/* Both parsers: refused with the same message containing want. */
static void
refuse_profile_both(const char *prof, const struct catalog *c, const char *want)
{
	char err[512] = "", err2[512] = "", *slow = jansson_spelling(prof);
	struct policy *p = compile_cat(prof, c, err, sizeof(err));
	struct policy *q = compile_cat(slow, c, err2, sizeof(err2));

	if (p != NULL || q != NULL)
		fail_msg("accepted (%s): %s", p != NULL ? "fast" : "jansson", prof);
	check_err(err);
	if (strstr(err, want) == NULL)
		fail_msg("error \"%s\" does not contain \"%s\"", err, want);
	/* jansson's column moves with the spelling; all else is the same. */
	if (strncmp(err, "invalid JSON", 12) != 0)
		assert_string_equal(err, err2);
	free(slow);
}

/* Both parsers: the same canonical bytes. */
static struct policy *
accept_profile(const char *prof, const struct catalog *c)
{
	char err[512] = "", *slow = jansson_spelling(prof);
	struct policy *p = compile_cat(prof, c, err, sizeof(err)), *q;

	if (p == NULL)
		fail_msg("refused: %s: %s", prof, err);
	if ((q = compile_cat(slow, c, err, sizeof(err))) == NULL)
		fail_msg("jansson path refused: %s: %s", slow, err);
	assert_string_equal(policy_canonical(p, NULL), policy_canonical(q, NULL));
	policy_free(q);
	free(slow);
	return p;
}

static void
test_catalog_parses_canonical_and_digest(void **state)
{
	struct catalog *c = cat_of(CATALOG_V1), *d;
	const struct dest *h;
	size_t len;

	(void)state;
	assert_string_equal(catalog_version(c), "v1");
	assert_int_equal(strlen(catalog_digest(c)), POLICY_DIGEST_LEN);
	assert_string_equal(catalog_canonical(c, &len),
	    "{\"ecosystems\":{\"apt\":[\"deb.debian.example.test:80\"],"
	    "\"go\":[\"proxy.golang.example.test:443\",\"sum.golang.example.test:443\"],"
	    "\"npm\":[\"registry.npm.example.test:443\"],"
	    "\"pypi\":[\"files.pypi.example.test:443\",\"pypi.example.test:443\"]},"
	    "\"schema\":\"egress-guard.catalog.v1\",\"version\":\"v1\"}");
	assert_int_equal(catalog_hosts(c, (unsigned)catalog_ecosystem_index("pypi", 4),
	    &h), 2);
	assert_string_equal(h[0].host, "files.pypi.example.test");
	assert_int_equal(catalog_hosts(c, (unsigned)catalog_ecosystem_index("maven", 5),
	    &h), 0);
	/* Another spelling of the same catalog: the same digest. */
	d = cat_of("{ \"version\":\"v1\", \"ecosystems\":{\"apt\":[\"DEB.debian.example.test.:80\"],"
	    "\"pypi\":[\"files.pypi.example.test:443\",\"pypi.example.test:443\"],"
	    "\"npm\":[\"registry.npm.example.test:443\"],"
	    "\"go\":[\"sum.golang.example.test:443\",\"proxy.golang.example.test:443\"]},"
	    "\"schema\":\"egress-guard.catalog.v1\"}");
	assert_string_equal(catalog_digest(c), catalog_digest(d));
	catalog_free(d);
	d = cat_of(CATALOG_V2);
	assert_string_not_equal(catalog_digest(c), catalog_digest(d));
	catalog_free(d);
	catalog_free(c);
}

static void
test_catalog_hostile_entries_named(void **state)
{
#define CAT(eco) "{\"schema\":\"egress-guard.catalog.v1\",\"version\":\"v\"," \
    "\"ecosystems\":" eco "}"
	(void)state;
	refuse_catalog(CAT("{\"npm\":[\"a.example.test:443\",\"*.npm.example.test:443\"]}"),
	    "ecosystems.npm[1] \"*.npm.example.test:443\": wildcards are not allowed");
	refuse_catalog(CAT("{\"npm\":[\"a.example.test:0\"]}"),
	    "ecosystems.npm[0] \"a.example.test:0\"");
	refuse_catalog(CAT("{\"npm\":[\"a.example.test\"]}"),
	    "ecosystems.npm[0] \"a.example.test\"");
	refuse_catalog(CAT("{\"npm\":[443]}"), "ecosystems.npm[0]: must be a");
	refuse_catalog(CAT("{\"npm\":\"a.example.test:443\"}"),
	    "ecosystems.npm must be an array");
	refuse_catalog(CAT("{\"npm\":[]}"), "ecosystems.npm is empty");
	refuse_catalog(CAT("{}"), "ecosystems is empty");
	refuse_catalog(CAT("{\"leftpad\":[\"a.example.test:443\"]}"),
	    "unknown ecosystem \"leftpad\"");
	refuse_catalog(CAT("{\"npm\":[\"a.example.test:443\",\"A.example.test.:443\"]}"),
	    "ecosystems.npm: \"a.example.test:443\" is listed twice");
	refuse_catalog(CAT("{\"npm\":[\"a.example.test:443\"],\"pypi\":[\"a.example.test:443\"]}"),
	    "\"a.example.test:443\" is listed in both ecosystems.npm and ecosystems.pypi");
	refuse_catalog(CAT("{\"npm\":[\"a.example.test:443\"],\"npm\":[\"b.example.test:443\"]}"),
	    "duplicate");
	refuse_catalog("{\"schema\":\"egress-guard.catalog.v1\",\"version\":\"v\","
	    "\"ecosystems\":{\"npm\":[\"a.example.test:443\"]},\"hosts\":[]}",
	    "unknown key \"hosts\"");
	refuse_catalog("{\"schema\":\"egress-guard.catalog.v1\",\"version\":\"v 1\","
	    "\"ecosystems\":{\"npm\":[\"a.example.test:443\"]}}", "version must be");
	refuse_catalog("{\"schema\":\"egress-guard.catalog.v1\","
	    "\"ecosystems\":{\"npm\":[\"a.example.test:443\"]}}",
	    "missing key \"version\"");
	refuse_catalog("{\"schema\":\"egress-guard.policy.v1\",\"version\":\"v\","
	    "\"ecosystems\":{\"npm\":[\"a.example.test:443\"]}}", "schema must be");
	refuse_catalog("[]", "top level must be a JSON object");
#undef CAT
}

/* Each ecosystem expands to exactly its catalog entries, each named by
 * the flag and ecosystem, and to nothing of the others. */
static void
test_expansion_per_ecosystem(void **state)
{
	static const char *const ecos[] = { "apt", "go", "npm", "pypi" };
	struct catalog *c = cat_of(CATALOG_V1);
	char prof[512], via[64];
	const struct dest *h;
	const char *host;
	struct policy *p;
	size_t i, k, n, hl;
	uint16_t port;
	unsigned v;

	(void)state;
	for (i = 0; i < sizeof(ecos) / sizeof(ecos[0]); i++) {
		snprintf(prof, sizeof(prof), "{\"network_policy\":\"allowlist\","
		    "\"allow_package_managers\":true,\"package_managers\":[\"%s\"]}",
		    ecos[i]);
		p = accept_profile(prof, c);
		n = catalog_hosts(c, (unsigned)catalog_ecosystem_index(ecos[i],
		    strlen(ecos[i])), &h);
		assert_int_equal(policy_entries(p), n);
		snprintf(via, sizeof(via), "package_managers:%s", ecos[i]);
		for (k = 0; k < n; k++) {
			assert_true(policy_admits(p, h[k].host, h[k].port));
			assert_string_equal(policy_via_name((unsigned)policy_admits_via(p,
			    h[k].host, h[k].port)), via);
			policy_entry_get(p, k, &host, &hl, &port, &v);
			assert_string_equal(policy_via_name(v), via);
		}
		assert_string_equal(policy_catalog_version(p), "v1");
		assert_string_equal(policy_catalog_digest(p), catalog_digest(c));
		/* Nothing of another ecosystem. */
		assert_false(policy_admits(p, i == 2 ? "pypi.example.test" :
		    "registry.npm.example.test", 443));
		policy_free(p);
	}
	catalog_free(c);
}

/* Provenance and catalog are in the canonical bytes, hand-written
 * entries keep the spelling they always had, and a host both written
 * and granted is the profile's. Both compiled-policy parsers read them
 * back to the same digest. */
static void
test_provenance_in_canonical_bytes(void **state)
{
	static const char prefix[] = "{\"allow\":["
	    "{\"host\":\"api.example.test\",\"port\":443},"
	    "{\"host\":\"proxy.golang.example.test\",\"port\":443,\"via\":\"package_managers:go\"},"
	    "{\"host\":\"registry.npm.example.test\",\"port\":443},"
	    "{\"host\":\"sum.golang.example.test\",\"port\":443,\"via\":\"package_managers:go\"}],"
	    "\"catalog\":{\"digest\":\"";
	struct catalog *c = cat_of(CATALOG_V1);
	struct policy *p, *q;
	char err[512] = "", want[256], *slow;
	const char *canon;
	size_t len;

	(void)state;
	p = accept_profile("{\"network_policy\":\"allowlist\",\"allowed_hosts\":"
	    "[\"api.example.test:443\",\"registry.npm.example.test:443\"],"
	    "\"allow_package_managers\":true,\"package_managers\":[\"npm\",\"go\"]}", c);
	canon = policy_canonical(p, &len);
	assert_int_equal(strncmp(canon, prefix, sizeof(prefix) - 1), 0);
	snprintf(want, sizeof(want), "%s\",\"version\":\"v1\"},\"epoch\":5,"
	    "\"mode\":\"allowlist\",\"schema\":\"egress-guard.policy.v1\"}",
	    catalog_digest(c));
	assert_string_equal(canon + sizeof(prefix) - 1, want);
	assert_int_equal(policy_admits_via(p, "registry.npm.example.test", 443),
	    POLICY_VIA_PROFILE);
	/* The canonical fast path ... */
	q = policy_parse(canon, len, err, sizeof(err));
	if (q == NULL)
		fail_msg("canonical refused: %s", err);
	assert_string_equal(policy_digest(q), policy_digest(p));
	assert_string_equal(policy_catalog_version(q), "v1");
	assert_int_equal(policy_admits_via(q, "sum.golang.example.test", 443), 3);
	policy_free(q);
	/* ... and the jansson path agree. */
	slow = malloc(len + 2);
	assert_non_null(slow);
	slow[0] = '{';
	slow[1] = ' ';
	memcpy(slow + 2, canon + 1, len);
	q = policy_parse(slow, len + 1, err, sizeof(err));
	if (q == NULL)
		fail_msg("jansson path refused: %s", err);
	assert_string_equal(policy_digest(q), policy_digest(p));
	policy_free(q);
	free(slow);
	policy_free(p);
	catalog_free(c);
}

#define PHEAD "{\"schema\":\"egress-guard.policy.v1\",\"mode\":\"allowlist\",\"epoch\":1,"
#define CATD "\"catalog\":{\"version\":\"v1\",\"digest\":\"sha256:" \
    "0000000000000000000000000000000000000000000000000000000000000000\"}"

/* A compiled policy that claims a provenance it cannot have. */
static void
test_hostile_compiled_provenance_refused(void **state)
{
	char err[512] = "";
	struct policy *p, *q;

	(void)state;
	refuse_policy(PHEAD "\"allow\":[{\"host\":\"a.example\",\"port\":1,"
	    "\"via\":\"package_managers:npm\"}]}", "records no catalog");
	refuse_policy(PHEAD CATD ",\"allow\":[{\"host\":\"a.example\",\"port\":1,"
	    "\"via\":\"package_managers:leftpad\"}]}", "allow[0]: via of \"a.example\"");
	refuse_policy(PHEAD CATD ",\"allow\":[{\"host\":\"a.example\",\"port\":1,"
	    "\"via\":\"allow_mcp_servers\"}]}", "via of");
	refuse_policy(PHEAD CATD ",\"allow\":[{\"host\":\"a.example\",\"port\":1,"
	    "\"via\":7}]}", "via of");
	refuse_policy("{\"schema\":\"egress-guard.policy.v1\",\"mode\":\"none\","
	    "\"epoch\":1," CATD ",\"allow\":[]}", "catalog is only allowed");
	refuse_policy(PHEAD "\"catalog\":{\"version\":\"v1\",\"digest\":\"sha256:00\"},"
	    "\"allow\":[]}", "catalog must be");
	refuse_policy(PHEAD "\"catalog\":{\"version\":\"v1\",\"digest\":\"sha256:"
	    "0000000000000000000000000000000000000000000000000000000000000000\","
	    "\"url\":\"x\"},\"allow\":[]}", "catalog must be");
	/* The same entry twice, by a flag and by hand: the profile's. An
	 * explicit "profile" is the absent one. */
	p = policy_parse(PHEAD CATD ",\"allow\":[{\"host\":\"a.example\",\"port\":1,"
	    "\"via\":\"package_managers:npm\"},{\"host\":\"a.example\",\"port\":1,"
	    "\"via\":\"profile\"}]}", strlen(PHEAD CATD ",\"allow\":[{\"host\":"
	    "\"a.example\",\"port\":1,\"via\":\"package_managers:npm\"},{\"host\":"
	    "\"a.example\",\"port\":1,\"via\":\"profile\"}]}"), err, sizeof(err));
	if (p == NULL)
		fail_msg("refused: %s", err);
	q = policy_parse(PHEAD CATD ",\"allow\":[{\"host\":\"a.example\",\"port\":1}]}",
	    strlen(PHEAD CATD ",\"allow\":[{\"host\":\"a.example\",\"port\":1}]}"),
	    err, sizeof(err));
	assert_non_null(q);
	assert_string_equal(policy_digest(p), policy_digest(q));
	assert_int_equal(policy_admits_via(p, "a.example", 1), POLICY_VIA_PROFILE);
	policy_free(p);
	policy_free(q);
}

/* allow_mcp_servers grants no host: the policy is the one without it. */
static void
test_mcp_grants_nothing(void **state)
{
	struct policy *p, *q;

	(void)state;
	p = accept_profile("{\"network_policy\":\"allowlist\",\"allowed_hosts\":"
	    "[\"api.example.test:443\"],\"allow_mcp_servers\":true}", NULL);
	q = accept_profile("{\"network_policy\":\"allowlist\",\"allowed_hosts\":"
	    "[\"api.example.test:443\"]}", NULL);
	assert_string_equal(policy_canonical(p, NULL), policy_canonical(q, NULL));
	assert_int_equal(policy_entries(p), 1);
	assert_null(policy_catalog_version(p));
	policy_free(p);
	policy_free(q);
}

static void
test_hostile_profile_flags_refused_named(void **state)
{
	struct catalog *c = cat_of(CATALOG_V1);

#define AL "{\"network_policy\":\"allowlist\","
	(void)state;
	refuse_profile_both(AL "\"allow_mcp_servers\":true}", c,
	    "allow_mcp_servers grants no workload host");
	refuse_profile_both(AL "\"allowed_hosts\":[],\"allow_mcp_servers\":true,"
	    "\"allow_package_managers\":false}", c,
	    "allow_mcp_servers grants no workload host");
	refuse_profile_both(AL "\"allow_package_managers\":true,\"package_managers\":"
	    "[\"npm\",\"leftpad\"]}", c,
	    "package_managers[1] \"leftpad\": unknown ecosystem");
	refuse_profile_both(AL "\"allow_package_managers\":true,\"package_managers\":"
	    "[\"npm\",\"pypi\",\"npm\"]}", c, "package_managers[2] \"npm\": listed twice");
	refuse_profile_both(AL "\"allow_package_managers\":true,\"package_managers\":"
	    "[\"maven\"]}", c, "package_managers[0] \"maven\": not in catalog v1");
	refuse_profile_both(AL "\"allow_package_managers\":true,\"package_managers\":"
	    "[\"npm\"]}", NULL, "allow_package_managers needs a catalog");
	refuse_profile_both(AL "\"allow_package_managers\":true}", c,
	    "allow_package_managers needs package_managers");
	refuse_profile_both(AL "\"allow_package_managers\":true,\"package_managers\":[]}",
	    c, "allow_package_managers needs package_managers");
	refuse_profile_both(AL "\"allowed_hosts\":[],\"package_managers\":[\"npm\"]}", c,
	    "package_managers is only read with allow_package_managers true");
	refuse_profile_both(AL "\"allowed_hosts\":[],\"allow_package_managers\":false,"
	    "\"package_managers\":[\"npm\"]}", c,
	    "package_managers is only read with allow_package_managers true");
	/* Wrong types, named. */
	refuse_profile_both(AL "\"allow_package_managers\":\"yes\",\"package_managers\":"
	    "[\"npm\"]}", c, "allow_package_managers must be true or false");
	refuse_profile_both(AL "\"allow_package_managers\":1}", c,
	    "allow_package_managers must be true or false");
	refuse_profile_both(AL "\"allowed_hosts\":[\"a.example:1\"],\"allow_mcp_servers\":"
	    "null}", c, "allow_mcp_servers must be true or false");
	refuse_profile_both(AL "\"allow_package_managers\":true,\"package_managers\":"
	    "\"npm\"}", c, "package_managers must be an array");
	refuse_profile_both(AL "\"allow_package_managers\":true,\"package_managers\":"
	    "[\"npm\",3]}", c, "package_managers[1]: must be a string");
	/* Nine entries of eight names: one is named, unknown or twice. */
	refuse_profile_both(AL "\"allow_package_managers\":true,\"package_managers\":"
	    "[\"apt\",\"cargo\",\"go\",\"maven\",\"npm\",\"nuget\",\"pypi\","
	    "\"rubygems\",\"zz\",\"npm\"]}", c, "package_managers[8] \"zz\"");
	/* Only with allowlist. */
	refuse_profile_both("{\"network_policy\":\"unrestricted\",\"allow_package_managers\":"
	    "true,\"package_managers\":[\"npm\"]}", c,
	    "allow_package_managers is only allowed with network_policy \"allowlist\"");
	refuse_profile_both("{\"network_policy\":\"none\",\"allow_mcp_servers\":true}", c,
	    "allow_mcp_servers is only allowed with network_policy \"allowlist\"");
	/* Duplicates and unknown keys, as for every key. */
	refuse_profile_both(AL "\"allowed_hosts\":[\"a.example:1\"],\"allow_mcp_servers\":"
	    "true,\"allow_mcp_servers\":true}", c, "duplicate");
	refuse_profile_both(AL "\"allowed_hosts\":[\"a.example:1\"],\"allow_mcp_server\":"
	    "true}", c, "unknown key \"allow_mcp_server\"");
#undef AL
	catalog_free(c);
}

/* A newer catalog is a new policy: the same profile at the same epoch
 * has another digest (which the guard refuses at that epoch: test_plane
 * and tests/integration/profile_test.sh). */
static void
test_newer_catalog_new_digest(void **state)
{
	static const char prof[] = "{\"network_policy\":\"allowlist\","
	    "\"allow_package_managers\":true,\"package_managers\":[\"pypi\"]}";
	struct catalog *c1 = cat_of(CATALOG_V1), *c2 = cat_of(CATALOG_V2);
	struct policy *p = accept_profile(prof, c1), *q = accept_profile(prof, c2);

	(void)state;
	/* The same pypi hosts, but the catalog is recorded: other bytes. */
	assert_int_equal(policy_entries(p), policy_entries(q));
	assert_string_not_equal(policy_digest(p), policy_digest(q));
	assert_string_equal(policy_catalog_version(q), "v2");
	policy_free(p);
	policy_free(q);
	catalog_free(c1);
	catalog_free(c2);
}

static struct policy *
parsed(const char *s)
{
	char err[512] = "";
	struct policy *p = policy_parse(s, strlen(s), err, sizeof(err));

	if (p == NULL)
		fail_msg("refused: %s: %s", s, err);
	return p;
}

#define E(h, port) "{\"host\":\"" h "\",\"port\":" #port "}"
#define ALLOW(list) PHEAD "\"allow\":[" list "]}"

/* The widening test of diff and push --no-widen. */
static void
test_diff_widening_and_narrowing(void **state)
{
	struct policy *a = parsed(ALLOW(E("a.example", 1) "," E("b.example", 2)));
	struct policy *b = parsed(ALLOW(E("a.example", 1)));
	struct policy *c = parsed(ALLOW(E("a.example", 1) "," E("c.example", 3)));
	struct policy *u = parsed("{\"schema\":\"egress-guard.policy.v1\",\"mode\":"
	    "\"unrestricted\",\"epoch\":1,\"allow\":[]}");
	struct policy *n = parsed("{\"schema\":\"egress-guard.policy.v1\",\"mode\":"
	    "\"none\",\"epoch\":1,\"allow\":[]}");
	struct policy *v = parsed(PHEAD CATD ",\"allow\":[" E("a.example", 1) ","
	    "{\"host\":\"b.example\",\"port\":2,\"via\":\"package_managers:npm\"}]}");
	struct ctldiff_sum s;

	(void)state;
	ctldiff_compare(a, b, NULL, &s);		/* narrowing */
	assert_false(s.widens);
	assert_true(s.narrows);
	assert_int_equal(s.removed, 1);
	ctldiff_compare(b, a, NULL, &s);		/* widening */
	assert_true(s.widens);
	assert_int_equal(s.added, 1);
	ctldiff_compare(a, c, NULL, &s);		/* both */
	assert_true(s.widens && s.narrows);
	ctldiff_compare(a, a, NULL, &s);
	assert_false(s.widens || s.narrows || s.added || s.removed);
	ctldiff_compare(a, v, NULL, &s);		/* provenance only */
	assert_false(s.widens || s.narrows);
	assert_int_equal(s.changed, 1);
	ctldiff_compare(a, u, NULL, &s);
	assert_true(s.widens);
	ctldiff_compare(u, a, NULL, &s);
	assert_false(s.widens);
	assert_true(s.narrows);
	ctldiff_compare(NULL, a, NULL, &s);		/* no policy: denies all */
	assert_true(s.widens);
	ctldiff_compare(NULL, n, NULL, &s);
	assert_false(s.widens);
	ctldiff_compare(a, n, NULL, &s);
	assert_false(s.widens);
	assert_true(s.narrows);
	ctldiff_compare(n, b, NULL, &s);
	assert_true(s.widens);
	policy_free(a);
	policy_free(b);
	policy_free(c);
	policy_free(u);
	policy_free(n);
	policy_free(v);
}

static void
test_ecosystem_names_match_provenance(void **state)
{
	char want[64];
	unsigned i;

	(void)state;
	assert_string_equal(policy_via_name(POLICY_VIA_PROFILE), "profile");
	for (i = 0; i < CATALOG_NECOSYSTEMS; i++) {
		snprintf(want, sizeof(want), "package_managers:%s",
		    catalog_ecosystem_name(i));
		assert_string_equal(policy_via_name(i + 1), want);
		assert_non_null(strstr(catalog_ecosystem_list(),
		    catalog_ecosystem_name(i)));
		if (i > 0)
			assert_true(strcmp(catalog_ecosystem_name(i - 1),
			    catalog_ecosystem_name(i)) < 0);
	}
	assert_null(catalog_ecosystem_name(CATALOG_NECOSYSTEMS));
}

/* The shipped examples: every catalog host under example.test; the
 * example profile compiles with the example catalog. */
static void
test_example_catalog_is_example_test_only(void **state)
{
	char err[512] = "";
	struct catalog *c = catalog_load_file("examples/catalog.json", err, sizeof(err));
	const struct dest *h;
	size_t i, k, n, l, len, total = 0;
	char *canon;

	(void)state;
	if (c == NULL)
		fail_msg("%s", err);
	for (i = 0; i < CATALOG_NECOSYSTEMS; i++) {
		n = catalog_hosts(c, (unsigned)i, &h);
		for (k = 0; k < n; k++, total++) {
			l = strlen(h[k].host);
			assert_true(l > 13 && strcmp(h[k].host + l - 13, ".example.test") == 0);
		}
	}
	assert_true(total > 0);
	/* The example profile compiles with it, each host named by its
	 * flag and ecosystem. */
	canon = policy_profile_canonical_cat("examples/profile-package-managers.json",
	    1, c, NULL, &len, err, sizeof(err));
	if (canon == NULL)
		fail_msg("%s", err);
	assert_non_null(strstr(canon, "{\"host\":\"api.example.com\",\"port\":443},"));
	assert_non_null(strstr(canon, "{\"host\":\"registry.npm.example.test\","
	    "\"port\":443,\"via\":\"package_managers:npm\"}"));
	assert_non_null(strstr(canon, "\"version\":\"2026-12-01.example\""));
	free(canon);
	catalog_free(c);
}

/* ---- the compiled policy's optional "tenant" (docs/design.md
 * "Compiled policy and canonical form"; issue 33): the id grammar, both
 * parse paths, the canonical bytes and digest with and without it,
 * compile's tenant, and diff counting a tenant change as widening. ---- */

/* DESIGN_CANON without its closing brace. */
#define T_ENTRIES "{\"allow\":[{\"host\":\"api.example.com\",\"port\":443}," \
    "{\"host\":\"example.org\",\"port\":80}],\"epoch\":7,\"mode\":\"allowlist\"," \
    "\"schema\":\"egress-guard.policy.v1\""
/* The same for tenant "a"; digest by printf '%s' "$bytes" | sha256sum. */
#define T_CANON_A		T_ENTRIES ",\"tenant\":\"a\"}"
#define T_CANON_A_DIGEST \
    "sha256:4cd1349d3e810a7622e6b2bb2286b0dab8989dc77c3573b41d1e2c17c19f49bc"
/* Another spelling of T_CANON_A: keys unsorted, spaces, an escape. */
#define T_SPELLED_A "{ \"tenant\" : \"\\u0061\", \"schema\":\"egress-guard.policy.v1\"," \
    "\"mode\":\"allowlist\",\"epoch\":7,\"allow\":[{\"port\":80,\"host\":" \
    "\"example.org\"},{\"host\":\"API.example.com\",\"port\":443}]}"
/* A policy of the strict path's shape whose tenant value is V. */
#define T_WITH_TENANT(v) "{\"schema\":\"egress-guard.policy.v1\",\"mode\":\"none\"," \
    "\"epoch\":1,\"allow\":[],\"tenant\":" v "}"

/* s through policy_parse_take: 1 when the fast path took it. */
static struct policy *
parse_take(const char *s, int *taken, char *err, size_t errlen)
{
	char *buf = malloc(strlen(s) + 1);
	struct policy *p;

	assert_non_null(buf);
	memcpy(buf, s, strlen(s) + 1);
	p = policy_parse_take(buf, 0, strlen(s), taken, err, errlen);
	if (!*taken)
		free(buf);
	return p;
}


static void
test_id_grammar(void **state)
{
	static const char *const good[] = {
		"a", "0", "a-", "tenant-1", "0-0", "abcdefghijklmnopqrstuvwxyz012345",
		NULL
	};
	static const char *const bad[] = {
		"", "-a", "A", "aB", "a_b", "a.b", "a b", "a/b", "\xc3\xa4",
		"abcdefghijklmnopqrstuvwxyz0123456",	/* 33 bytes */
		NULL
	};
	size_t i;

	(void)state;
	for (i = 0; good[i] != NULL; i++)
		assert_int_equal(policy_tenant_id_ok(good[i], strlen(good[i])), 1);
	for (i = 0; bad[i] != NULL; i++)
		assert_int_equal(policy_tenant_id_ok(bad[i], strlen(bad[i])), 0);
	/* The length given, not the string's: a NUL inside is a bad byte. */
	assert_int_equal(policy_tenant_id_ok("a\0b", 3), 0);
	assert_int_equal(policy_tenant_id_ok("ab", 1), 1);
	assert_int_equal(policy_tenant_id_ok(NULL, 0), 0);
}

static void
test_canonical_round_trip_without_tenant(void **state)
{
	char err[256] = "";
	struct policy *p;
	int taken;

	(void)state;
	p = parse_take(DESIGN_CANON, &taken, err, sizeof(err));
	assert_int_equal(taken, 1);
	expect_canonical(p, DESIGN_CANON);
	assert_null(policy_tenant(p));
	assert_string_equal(policy_digest(p), DESIGN_DIGEST);
	policy_free(p);
	assert_null(policy_tenant(NULL));
}

static void
test_canonical_round_trip_with_tenant(void **state)
{
	char err[256] = "";
	struct policy *p, *q;
	const char *c;
	size_t len;
	int taken;

	(void)state;
	/* Canonical already: the fast path takes the bytes as they are. */
	p = parse_take(T_CANON_A, &taken, err, sizeof(err));
	assert_int_equal(taken, 1);
	expect_canonical(p, T_CANON_A);
	assert_string_equal(policy_tenant(p), "a");
	assert_string_equal(policy_digest(p), T_CANON_A_DIGEST);
	/* Another spelling: the strict path, to the same bytes. */
	q = parse_take(T_SPELLED_A, &taken, err, sizeof(err));
	assert_int_equal(taken, 0);
	expect_canonical(q, T_CANON_A);
	assert_string_equal(policy_tenant(q), "a");
	assert_string_equal(policy_digest(q), policy_digest(p));
	policy_free(q);
	/* The canonical bytes parse back to themselves. */
	c = policy_canonical(p, &len);
	q = policy_parse(c, len, err, sizeof(err));
	expect_canonical(q, T_CANON_A);
	policy_free(q);
	policy_free(p);
	/* With every mode, the longest id, a catalog-less none. */
	p = parse(T_WITH_TENANT("\"abcdefghijklmnopqrstuvwxyz012345\""), err,
	    sizeof(err));
	expect_canonical(p, "{\"allow\":[],\"epoch\":1,\"mode\":\"none\",\"schema\":"
	    "\"egress-guard.policy.v1\",\"tenant\":\"abcdefghijklmnopqrstuvwxyz012345\"}");
	c = policy_canonical(p, &len);
	q = policy_parse(c, len, err, sizeof(err));
	assert_non_null(q);
	assert_string_equal(policy_tenant(q), "abcdefghijklmnopqrstuvwxyz012345");
	policy_free(q);
	policy_free(p);
}

static void
test_digest_differs_with_tenant(void **state)
{
	char err[256] = "";
	struct policy *none, *a, *b;

	(void)state;
	none = parse(DESIGN_CANON, err, sizeof(err));
	a = parse(T_CANON_A, err, sizeof(err));
	b = parse(T_ENTRIES ",\"tenant\":\"b\"}", err, sizeof(err));
	assert_non_null(none);
	assert_non_null(a);
	assert_non_null(b);
	assert_string_not_equal(policy_digest(none), policy_digest(a));
	assert_string_not_equal(policy_digest(a), policy_digest(b));
	assert_string_not_equal(policy_digest(none), policy_digest(b));
	/* The tenant decides no destination. */
	assert_int_equal(policy_admits(a, "example.org", 80), 1);
	assert_int_equal(policy_admits(b, "example.org", 81), 0);
	policy_free(none);
	policy_free(a);
	policy_free(b);
}

/* Each value is refused by the strict path, with err naming the tenant,
 * and the fast path's shape with it falls back to be refused too. */
static void
test_hostile_bad_tenant_refused_named(void **state)
{
	static const struct {
		const char	*value;	/* as JSON */
		const char	*says;
	} cases[] = {
		{ "\"\"", "tenant \"\" is not a tenant id" },
		{ "\"abcdefghijklmnopqrstuvwxyz0123456\"", "is not a tenant id: 1-32" },
		{ "\"Tenant\"", "tenant \"Tenant\" is not a tenant id" },
		{ "\"A\"", "tenant \"A\" is not a tenant id" },
		{ "\"-a\"", "tenant \"-a\" is not a tenant id" },
		{ "\"a_b\"", "is not a tenant id" },
		{ "\"a\\u0000b\"", "\\u0000 is not allowed" },
		{ "\"a\\\"b\"", "is not a tenant id" },
		{ "1", "tenant must be a string" },
		{ "null", "tenant must be a string" },
		{ "[\"a\"]", "tenant must be a string" },
		{ "{\"id\":\"a\"}", "tenant must be a string" },
		{ "true", "tenant must be a string" },
	};
	char err[256], buf[512];
	struct policy *p;
	size_t i;
	int taken;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		err[0] = '\0';
		snprintf(buf, sizeof(buf), T_WITH_TENANT("%s"), cases[i].value);
		p = parse(buf, err, sizeof(err));
		if (p != NULL || strstr(err, cases[i].says) == NULL)
			fail_msg("%s: got \"%s\"", cases[i].value, err);
		/* Canonical in every other byte. */
		snprintf(buf, sizeof(buf), T_ENTRIES ",\"tenant\":%s}", cases[i].value);
		err[0] = '\0';
		p = parse_take(buf, &taken, err, sizeof(err));
		assert_null(p);
		assert_int_equal(taken, 0);
		if (strstr(err, cases[i].says) == NULL)
			fail_msg("%s (canonical shape): got \"%s\"", cases[i].value, err);
	}
}

static void
test_hostile_tenant_twice_or_misplaced_refused(void **state)
{
	char err[256] = "";
	struct policy *p;
	int taken;

	(void)state;
	/* Twice, the same value or another: jansson refuses the duplicate;
	 * the fast path never reads a second one. */
	p = parse(T_ENTRIES ",\"tenant\":\"a\",\"tenant\":\"a\"}", err, sizeof(err));
	assert_null(p);
	assert_non_null(strstr(err, "duplicate"));
	p = parse(T_ENTRIES ",\"tenant\":\"a\",\"tenant\":\"b\"}", err, sizeof(err));
	assert_null(p);
	assert_non_null(strstr(err, "duplicate"));
	/* Before "schema": not canonical, so the strict path reads it, and
	 * writes it back last. */
	p = parse_take("{\"allow\":[],\"epoch\":1,\"mode\":\"none\",\"tenant\":\"a\","
	    "\"schema\":\"egress-guard.policy.v1\"}", &taken, err, sizeof(err));
	assert_int_equal(taken, 0);
	expect_canonical(p, "{\"allow\":[],\"epoch\":1,\"mode\":\"none\",\"schema\":"
	    "\"egress-guard.policy.v1\",\"tenant\":\"a\"}");
	policy_free(p);
	/* Unterminated after the key: refused, nothing read past the end. */
	p = parse(T_ENTRIES ",\"tenant\":\"a", err, sizeof(err));
	assert_null(p);
	/* A near key is an unknown key, not a tenant. */
	p = parse(T_ENTRIES ",\"Tenant\":\"a\"}", err, sizeof(err));
	assert_null(p);
	assert_non_null(strstr(err, "unknown key \"Tenant\""));
}

static void
test_compile_writes_tenant(void **state)
{
	char err[512] = "", *path, *c;
	struct policy *p;
	size_t len;

	(void)state;
	path = write_tmp(DESIGN_PROFILE);
	/* None: the bytes of before. */
	c = policy_profile_canonical_cat(path, 7, NULL, NULL, &len, err,
	    sizeof(err));
	assert_non_null(c);
	assert_string_equal(c, DESIGN_CANON);
	free(c);
	c = policy_profile_canonical_cat(path, 7, NULL, "a", &len, err,
	    sizeof(err));
	assert_non_null(c);
	assert_int_equal(len, strlen(T_CANON_A));
	assert_string_equal(c, T_CANON_A);
	p = policy_parse(c, len, err, sizeof(err));
	assert_non_null(p);
	assert_string_equal(policy_tenant(p), "a");
	assert_string_equal(policy_digest(p), T_CANON_A_DIGEST);
	policy_free(p);
	free(c);
	/* A bad id is refused, the profile unread matters not. */
	assert_null(policy_profile_canonical_cat(path, 7, NULL, "-a", &len, err,
	    sizeof(err)));
	assert_non_null(strstr(err, "tenant \"-a\" is not a tenant id"));
	assert_null(policy_profile_canonical_cat(path, 7, NULL, "", &len, err,
	    sizeof(err)));
	assert_non_null(strstr(err, "is not a tenant id"));
	assert_null(policy_profile_canonical_cat(path, 7, NULL,
	    "abcdefghijklmnopqrstuvwxyz0123456789", &len, err, sizeof(err)));
	assert_non_null(strstr(err, "is not a tenant id"));
	unlink(path);
	free(path);
	/* "tenant" is no profile key. */
	path = write_tmp("{\"network_policy\":\"none\",\"tenant\":\"a\"}");
	assert_null(policy_profile_canonical_cat(path, 7, NULL, NULL, &len, err,
	    sizeof(err)));
	assert_non_null(strstr(err, "unknown key \"tenant\""));
	unlink(path);
	free(path);
}

/* A tenant change moves every grant to another sandbox: diff and push
 * --no-widen count it as widening, whatever the entries do. */
static void
test_diff_tenant_change_widens(void **state)
{
	char err[256] = "";
	struct policy *none, *a, *b, *a_fewer, *none_mode_b;
	struct ctldiff_sum sum;

	(void)state;
	none = parse(DESIGN_CANON, err, sizeof(err));
	a = parse(T_CANON_A, err, sizeof(err));
	b = parse(T_ENTRIES ",\"tenant\":\"b\"}", err, sizeof(err));
	a_fewer = parse("{\"allow\":[{\"host\":\"example.org\",\"port\":80}],"
	    "\"epoch\":8,\"mode\":\"allowlist\",\"schema\":\"egress-guard.policy.v1\","
	    "\"tenant\":\"b\"}", err, sizeof(err));
	assert_non_null(none);
	assert_non_null(a);
	assert_non_null(b);
	none_mode_b = parse(T_WITH_TENANT("\"b\""), err, sizeof(err));
	assert_non_null(a_fewer);
	assert_non_null(none_mode_b);
	ctldiff_compare(a, b, NULL, &sum);
	assert_true(sum.widens);
	assert_true(sum.tenant_changed);
	assert_int_equal(sum.added, 0);
	ctldiff_compare(none, a, NULL, &sum);
	assert_true(sum.widens);
	ctldiff_compare(a, none, NULL, &sum);
	assert_true(sum.widens);
	/* Fewer entries, but for another tenant: still widens. */
	ctldiff_compare(a, a_fewer, NULL, &sum);
	assert_true(sum.widens);
	assert_true(sum.narrows);
	/* From no policy (a fresh tenant of push --no-widen) only the
	 * entries count: none for a mode none policy. */
	ctldiff_compare(NULL, none_mode_b, NULL, &sum);
	assert_false(sum.widens);
	assert_false(sum.tenant_changed);
	ctldiff_compare(NULL, a, NULL, &sum);
	assert_true(sum.widens);
	assert_false(sum.tenant_changed);
	/* Negative control: the same tenant on both sides does not. */
	ctldiff_compare(a, a, NULL, &sum);
	assert_false(sum.widens);
	assert_false(sum.tenant_changed);
	ctldiff_compare(b, a_fewer, NULL, &sum);
	assert_false(sum.widens);
	assert_true(sum.narrows);
	policy_free(none);
	policy_free(a);
	policy_free(b);
	policy_free(a_fewer);
	policy_free(none_mode_b);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_design_example_digest_is_fixed),
		cmocka_unit_test(test_design_profile_compiles_to_design_policy),
		cmocka_unit_test(test_canonical_sorted_and_deduplicated),
		cmocka_unit_test(test_canonical_orders_by_host_bytes_then_numeric_port),
		cmocka_unit_test(test_canonical_reparses_to_same_bytes),
		cmocka_unit_test(test_ipv6_host_canonical_is_unbracketed),
		cmocka_unit_test(test_refuses_unknown_key),
		cmocka_unit_test(test_refuses_unknown_entry_key),
		cmocka_unit_test(test_refuses_duplicate_key),
		cmocka_unit_test(test_refuses_duplicate_entry_key),
		cmocka_unit_test(test_refuses_wildcard_entry_named),
		cmocka_unit_test(test_refuses_bad_host_entry_named),
		cmocka_unit_test(test_refuses_non_ascii_host_escaped),
		cmocka_unit_test(test_refuses_nul_in_host),
		cmocka_unit_test(test_refuses_bad_port),
		cmocka_unit_test(test_refuses_non_integer_port),
		cmocka_unit_test(test_refuses_incomplete_entry),
		cmocka_unit_test(test_refuses_wrong_schema),
		cmocka_unit_test(test_refuses_missing_key),
		cmocka_unit_test(test_refuses_bad_mode),
		cmocka_unit_test(test_refuses_negative_epoch),
		cmocka_unit_test(test_refuses_epoch_too_large),
		cmocka_unit_test(test_accepts_epoch_bounds),
		cmocka_unit_test(test_refuses_non_integer_epoch),
		cmocka_unit_test(test_refuses_entries_with_mode_none),
		cmocka_unit_test(test_refuses_entries_with_mode_unrestricted),
		cmocka_unit_test(test_refuses_allow_not_array),
		cmocka_unit_test(test_refuses_bad_json),
		cmocka_unit_test(test_refuses_oversized_input),
		cmocka_unit_test(test_profile_refuses_wildcard_named),
		cmocka_unit_test(test_profile_refuses_bad_entry_named),
		cmocka_unit_test(test_profile_refuses_unknown_key),
		cmocka_unit_test(test_profile_refuses_duplicate_key),
		cmocka_unit_test(test_profile_refuses_missing_or_bad_network_policy),
		cmocka_unit_test(test_profile_allowlist_requires_allowed_hosts),
		cmocka_unit_test(test_profile_allowlist_may_be_empty),
		cmocka_unit_test(test_profile_none_and_unrestricted),
		cmocka_unit_test(test_profile_none_refuses_hosts),
		cmocka_unit_test(test_profile_certification_only_with_allowlist),
		cmocka_unit_test(test_profile_refuses_bad_certification),
		cmocka_unit_test(test_profile_refuses_unsupported_as_requirement),
		cmocka_unit_test(test_profile_keeps_grade_outside_canonical),
		cmocka_unit_test(test_profile_refuses_bad_epoch),
		cmocka_unit_test(test_matcher_exact_match_only),
		cmocka_unit_test(test_matcher_mode_none_admits_nothing),
		cmocka_unit_test(test_name_matcher_any_port_exact_name_only),
		cmocka_unit_test(test_matcher_unrestricted_admits_everything),
		cmocka_unit_test(test_matcher_null_policy_denies),
		cmocka_unit_test(test_matcher_literals),
		cmocka_unit_test(test_matcher_overlong_host_misses),
		cmocka_unit_test(test_mode_names),
		cmocka_unit_test(test_matcher_100k_entries),
		cmocka_unit_test(test_load_file_reads_policy),
		cmocka_unit_test(test_load_file_errors_name_the_path),
		cmocka_unit_test(test_compile_profile_file),
		cmocka_unit_test(test_profile_spellings_compile_alike),
		cmocka_unit_test(test_profile_hostile_bytes_in_strings_refused),
		cmocka_unit_test(test_profile_duplicate_then_unsorted_sorted_and_deduplicated),
		cmocka_unit_test(test_host_is_normal_only_as_dest_parse_writes_it),
		cmocka_unit_test(test_canonical_shape_with_unnormal_host_is_normalised),
		cmocka_unit_test(test_parse_take_adopts_only_canonical_bytes),
		cmocka_unit_test(test_canonical_bytes_of_files_for_the_plane_tools),
		cmocka_unit_test(test_catalog_parses_canonical_and_digest),
		cmocka_unit_test(test_catalog_hostile_entries_named),
		cmocka_unit_test(test_expansion_per_ecosystem),
		cmocka_unit_test(test_provenance_in_canonical_bytes),
		cmocka_unit_test(test_hostile_compiled_provenance_refused),
		cmocka_unit_test(test_mcp_grants_nothing),
		cmocka_unit_test(test_hostile_profile_flags_refused_named),
		cmocka_unit_test(test_newer_catalog_new_digest),
		cmocka_unit_test(test_diff_widening_and_narrowing),
		cmocka_unit_test(test_ecosystem_names_match_provenance),
		cmocka_unit_test(test_example_catalog_is_example_test_only),
		cmocka_unit_test(test_id_grammar),
		cmocka_unit_test(test_canonical_round_trip_without_tenant),
		cmocka_unit_test(test_canonical_round_trip_with_tenant),
		cmocka_unit_test(test_digest_differs_with_tenant),
		cmocka_unit_test(test_hostile_bad_tenant_refused_named),
		cmocka_unit_test(test_hostile_tenant_twice_or_misplaced_refused),
		cmocka_unit_test(test_compile_writes_tenant),
		cmocka_unit_test(test_diff_tenant_change_widens),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
