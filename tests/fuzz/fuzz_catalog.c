/* policy/catalog: catalog_parse.
 *
 * Beyond "no crash": an accepted catalog's canonical bytes parse again to
 * the same canonical bytes and digest (the canonical form is a fixed
 * point); its version is one a compiled policy can record; every entry
 * it lists is a normalised host and no entry is listed twice; a refusal
 * gives a printable one-line reason. */
#include <string.h>

#include "policy/catalog.h"
#include "policy/policy.h"
#include "tests/fuzz/fuzz.h"

static void
check_accepted(const struct catalog *c)
{
	const struct dest *h;
	struct catalog *d;
	const char *canon;
	size_t len, dlen, i, k, n;

	canon = catalog_canonical(c, &len);
	FUZZ_CHECK(canon != NULL && len > 0);
	FUZZ_CHECK(strlen(catalog_digest(c)) == POLICY_DIGEST_LEN);
	FUZZ_CHECK(catalog_version_ok(catalog_version(c),
	    strlen(catalog_version(c))));
	d = catalog_parse(canon, len, NULL, 0);
	FUZZ_CHECK(d != NULL);
	FUZZ_CHECK(strcmp(catalog_digest(c), catalog_digest(d)) == 0);
	FUZZ_CHECK(memcmp(catalog_canonical(d, &dlen), canon, len) == 0 &&
	    dlen == len);
	catalog_free(d);
	for (i = 0; i < CATALOG_NECOSYSTEMS; i++) {
		n = catalog_hosts(c, (unsigned)i, &h);
		FUZZ_CHECK(n <= CATALOG_MAX_HOSTS);
		for (k = 0; k < n; k++) {
			FUZZ_CHECK(dest_host_is_normal(h[k].host, strlen(h[k].host)));
			FUZZ_CHECK(h[k].port >= 1);
			FUZZ_CHECK(k == 0 || strcmp(h[k - 1].host, h[k].host) < 0 ||
			    (strcmp(h[k - 1].host, h[k].host) == 0 &&
			    h[k - 1].port < h[k].port));
		}
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = fuzz_dup(data, size), err[512];
	struct catalog *c;

	err[0] = '\0';
	if ((c = catalog_parse(s, size, err, sizeof(err))) != NULL) {
		check_accepted(c);
		catalog_free(c);
	} else {
		FUZZ_CHECK(err[0] != '\0' && fuzz_printable(err));
	}
	free(s);
	return 0;
}
