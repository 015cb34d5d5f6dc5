/* policy/policy: policy_parse (compiled policy) and
 * policy_compile_profile (profile, without and with a fixed catalog, so
 * allow_package_managers expands), on the same bytes.
 *
 * Beyond "no crash": an accepted policy's canonical bytes parse again to
 * the same canonical bytes, digest, mode, epoch and entry count (the
 * canonical form is a fixed point) and the canonical fast path agrees with
 * the jansson path; the digest is "sha256:" and 64 hex
 * digits; every entry listed in the canonical bytes is admitted by the
 * matcher, and its neighbours (port + 1, a subdomain) are not unless
 * listed too; a refusal gives a printable one-line reason. The profile's
 * hand-read fast path and its jansson path agree too: a profile whose
 * "network_policy" key is spelled with an escape (never the fast path)
 * compiles to the same digest, or is refused as well. */
#include <string.h>

#include <jansson.h>

#include "policy/catalog.h"
#include "policy/policy.h"
#include "tests/fuzz/fuzz.h"

/* Every (host, port) in the canonical bytes is admitted; mode rules. */
static void
check_matcher(const struct policy *p, const char *canon, size_t clen)
{
	json_t *root, *allow, *e;
	char sub[300];
	size_t i;

	root = json_loadb(canon, clen, JSON_REJECT_DUPLICATES, NULL);
	FUZZ_CHECK(root != NULL);
	allow = json_object_get(root, "allow");
	FUZZ_CHECK(json_is_array(allow));
	FUZZ_CHECK(json_array_size(allow) == policy_entries(p));
	switch (policy_mode(p)) {
	case POLICY_NONE:
		FUZZ_CHECK(!policy_admits(p, "example.com", 443));
		break;
	case POLICY_UNRESTRICTED:
		FUZZ_CHECK(policy_admits(p, "example.com", 443));
		break;
	case POLICY_ALLOWLIST:
		break;
	default:
		FUZZ_CHECK(!"bad mode");
	}
	json_array_foreach(allow, i, e) {
		const char *host = json_string_value(json_object_get(e, "host"));
		json_int_t port = json_integer_value(json_object_get(e, "port"));

		if (i >= 64)
			break;		/* enough for a fuzz input */
		FUZZ_CHECK(host != NULL && port >= 1 && port <= 65535);
		FUZZ_CHECK(policy_admits(p, host, (uint16_t)port) == 1);
		snprintf(sub, sizeof(sub), "zz-not-listed.%s", host);
		if (strstr(canon, "zz-not-listed") == NULL)
			FUZZ_CHECK(policy_admits(p, sub, (uint16_t)port) == 0);
	}
	json_decref(root);
}

static void
check_fixed_point(const struct policy *p)
{
	const char *canon, *dg;
	char err[512];
	struct policy *q;
	size_t clen, qlen, i;

	canon = policy_canonical(p, &clen);
	dg = policy_digest(p);
	FUZZ_CHECK(canon != NULL && strlen(canon) == clen);
	FUZZ_CHECK(strlen(dg) == POLICY_DIGEST_LEN && strncmp(dg, "sha256:", 7) == 0);
	for (i = 7; i < POLICY_DIGEST_LEN; i++)
		FUZZ_CHECK((dg[i] >= '0' && dg[i] <= '9') || (dg[i] >= 'a' && dg[i] <= 'f'));
	q = policy_parse(canon, clen, err, sizeof(err));
	FUZZ_CHECK(q != NULL);
	FUZZ_CHECK(strcmp(policy_digest(q), dg) == 0);
	FUZZ_CHECK(memcmp(policy_canonical(q, &qlen), canon, clen) == 0 && qlen == clen);
	FUZZ_CHECK(policy_mode(q) == policy_mode(p));
	FUZZ_CHECK(policy_epoch(q) == policy_epoch(p));
	FUZZ_CHECK(policy_entries(q) == policy_entries(p));
	FUZZ_CHECK(policy_required_grade(q) == NULL);
	FUZZ_CHECK((policy_catalog_version(q) == NULL) ==
	    (policy_catalog_version(p) == NULL));
	check_matcher(q, canon, clen);
	policy_free(q);
}

/* policy_parse has a fast path for input already in canonical form and
 * the jansson path for the rest: they must agree. "{ " and the rest is
 * the same JSON, but never canonical, so it always takes the jansson
 * path. */
static void
check_paths_agree(const char *s, size_t size, const struct policy *p)
{
	char *slow, err[512];
	struct policy *q;

	if (size == 0 || s[0] != '{')
		return;
	slow = malloc(size + 1);
	FUZZ_CHECK(slow != NULL);
	slow[0] = '{';
	slow[1] = ' ';
	memcpy(slow + 2, s + 1, size - 1);
	q = policy_parse(slow, size + 1, err, sizeof(err));
	free(slow);
	FUZZ_CHECK((p != NULL) == (q != NULL));
	if (q != NULL)
		FUZZ_CHECK(strcmp(policy_digest(p), policy_digest(q)) == 0);
	policy_free(q);
}

/* The catalog profiles expand from: three ecosystems, one host in two
 * spellings of nothing else. */
static const char catalog_json[] = "{\"schema\":\"egress-guard.catalog.v1\","
    "\"version\":\"fuzz\",\"ecosystems\":{\"npm\":[\"registry.npm.example.test:443\"],"
    "\"pypi\":[\"pypi.example.test:443\",\"files.pypi.example.test:443\"],"
    "\"go\":[\"[2001:db8::1]:443\"]}}";
static struct catalog *cat;

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	cat = catalog_parse(catalog_json, sizeof(catalog_json) - 1, NULL, 0);
	FUZZ_CHECK(cat != NULL);
	return 0;
}

/* The same profile through the jansson path only: the first
 * "network_policy" key spelled "network_polic\u0079". */
static void
check_profile_paths_agree(const char *s, size_t size, const struct policy *p,
    const char *perr)
{
	static const char key[] = "\"network_policy\"";
	static const char esc[] = "\"network_polic\\u0079\"";
	char *slow, err[512];
	const char *at;
	struct policy *q;
	size_t off;

	if ((at = memmem(s, size, key, sizeof(key) - 1)) == NULL)
		return;
	off = (size_t)(at - s);
	slow = malloc(size + sizeof(esc));
	FUZZ_CHECK(slow != NULL);
	memcpy(slow, s, off);
	memcpy(slow + off, esc, sizeof(esc) - 1);
	memcpy(slow + off + sizeof(esc) - 1, at + sizeof(key) - 1,
	    size - off - (sizeof(key) - 1));
	err[0] = '\0';
	q = policy_compile_profile_cat(slow, size + sizeof(esc) - sizeof(key),
	    7, cat, err, sizeof(err));
	free(slow);
	FUZZ_CHECK((p != NULL) == (q != NULL));
	if (q != NULL)
		FUZZ_CHECK(strcmp(policy_digest(p), policy_digest(q)) == 0);
	else if (strncmp(perr, "invalid JSON", 12) != 0)
		FUZZ_CHECK(strcmp(perr, err) == 0);
	policy_free(q);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = fuzz_dup(data, size), err[512];
	struct policy *p;
	const char *g;

	err[0] = '\0';
	p = policy_parse(s, size, err, sizeof(err));
	check_paths_agree(s, size, p);
	if (p != NULL) {
		check_fixed_point(p);
		policy_free(p);
	} else {
		FUZZ_CHECK(err[0] != '\0' && fuzz_printable(err));
	}

	err[0] = '\0';
	if ((p = policy_compile_profile(s, size, 7, err, sizeof(err))) != NULL) {
		FUZZ_CHECK(policy_epoch(p) == 7);
		g = policy_required_grade(p);
		FUZZ_CHECK(g == NULL || strcmp(g, "advisory_filter") == 0 ||
		    strcmp(g, "security_boundary") == 0 ||
		    strcmp(g, "unsupported") == 0);
		check_fixed_point(p);
		policy_free(p);
	} else {
		FUZZ_CHECK(err[0] != '\0' && fuzz_printable(err));
	}

	err[0] = '\0';
	p = policy_compile_profile_cat(s, size, 7, cat, err, sizeof(err));
	check_profile_paths_agree(s, size, p, err);
	if (p != NULL) {
		FUZZ_CHECK(policy_catalog_version(p) == NULL ||
		    strcmp(policy_catalog_version(p), "fuzz") == 0);
		check_fixed_point(p);
		policy_free(p);
	} else {
		FUZZ_CHECK(err[0] != '\0' && fuzz_printable(err));
	}
	free(s);
	return 0;
}
