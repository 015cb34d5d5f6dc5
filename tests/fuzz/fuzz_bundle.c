/* plane/bundle: bundle_verify against a fixed keyring.
 *
 * The key is the fixed fuzz key (tests/fuzz/fuzzkey.h), so that the
 * checked-in seed bundles, signed with it by tests/fuzz/mkcorpus.py,
 * verify and the fuzzer starts from inside the format.
 *
 * The first byte chooses what the rest is:
 *   even  a bundle as received (JSON);
 *   odd   policy bytes, which the harness signs with ctlkeys_sign_bytes,
 *         so the signed path (policy_parse behind the signature, the
 *         canonical-bytes check) is reached with arbitrary policies.
 * Beyond "no crash": a policy comes back exactly when the verdict is
 * BUNDLE_OK, with the signer's key id; a bundle signed by the harness is
 * accepted exactly when the signed bytes are a canonical policy and is
 * otherwise "malformed", never a key or signature error; the same bundle
 * with one signature character changed is "bad_signature", and with the
 * key id changed "unknown_key"; the hand-read envelope (the spelling
 * egress-guardctl writes) and the jansson path give the same verdict;
 * every refusal has a printable reason. */
#include <string.h>

#include "ctl/keys.h"
#include "plane/bundle.h"
#include "tests/fuzz/fuzz.h"
#include "tests/fuzz/fuzzkey.h"

static struct bundle_keyring *keyring;
static EVP_PKEY *priv;
static char key_id[BUNDLE_KEY_ID_LEN + 1];

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	char err[256];

	(void)argc;
	(void)argv;
	keyring = fuzz_key_keyring(&priv);
	FUZZ_CHECK(bundle_key_id(priv, key_id, err, sizeof(err)) == 0);
	return 0;
}

static struct policy *
verify(const char *b, size_t len, enum bundle_error *why)
{
	char *c = fuzz_dup(b, len), id[BUNDLE_KEY_ID_LEN + 1] = "", err[600] = "";
	struct policy *p;

	*why = (enum bundle_error)-1;
	p = bundle_verify(keyring, c, len, id, why, err, sizeof(err));
	free(c);
	FUZZ_CHECK(*why >= BUNDLE_OK && *why <= BUNDLE_BAD_SIGNATURE);
	FUZZ_CHECK((p != NULL) == (*why == BUNDLE_OK));
	if (p != NULL)
		FUZZ_CHECK(strcmp(id, key_id) == 0);
	else
		FUZZ_CHECK(err[0] != '\0' && fuzz_printable(err));
	return p;
}

/* Whether pol is exactly a canonical compiled policy. */
static int
is_canonical(const char *pol, size_t len)
{
	char err[512];
	struct policy *p = policy_parse(pol, len, err, sizeof(err));
	const char *c;
	size_t clen;
	int ok;

	if (p == NULL)
		return 0;
	c = policy_canonical(p, &clen);
	ok = clen == len && memcmp(c, pol, len) == 0;
	policy_free(p);
	return ok;
}

/* Changes the character at the given field offset into another of the
 * base64 alphabet, keeping the encoding canonical. */
static void
tweak(char *bundle, const char *field, size_t off)
{
	char *v = strstr(bundle, field);

	FUZZ_CHECK(v != NULL);
	v += strlen(field) + off;
	*v = *v == 'a' ? 'b' : 'a';
}

static void
signed_path(const char *pol, size_t len)
{
	enum bundle_error why;
	struct policy *p;
	char err[256], *b;
	size_t blen;

	b = ctlkeys_sign_bytes(pol, len, priv, err, sizeof(err));
	if (b == NULL)
		return;		/* too large to sign: nothing to verify */
	blen = strlen(b);
	p = verify(b, blen, &why);
	FUZZ_CHECK(why == BUNDLE_OK || why == BUNDLE_MALFORMED);
	FUZZ_CHECK((p != NULL) == is_canonical(pol, len));
	policy_free(p);

	tweak(b, "\"signature\":\"", 10);
	p = verify(b, blen, &why);
	FUZZ_CHECK(why == BUNDLE_BAD_SIGNATURE);
	tweak(b, "\"key_id\":\"", 0);
	p = verify(b, blen, &why);
	FUZZ_CHECK(why == BUNDLE_UNKNOWN_KEY);
	free(b);
}

/* bundle_verify reads the envelope egress-guardctl writes by hand and any
 * other spelling with jansson: both must give the same verdict. "{ " and
 * the rest is the same JSON but never takes the fast path. */
static void
check_paths_agree(const char *b, size_t len, enum bundle_error why,
    const struct policy *p)
{
	enum bundle_error why2;
	struct policy *q;
	char *slow;

	if (len == 0 || b[0] != '{')
		return;
	slow = malloc(len + 1);
	FUZZ_CHECK(slow != NULL);
	slow[0] = '{';
	slow[1] = ' ';
	memcpy(slow + 2, b + 1, len - 1);
	q = verify(slow, len + 1, &why2);
	free(slow);
	FUZZ_CHECK(why2 == why);
	if (q != NULL)
		FUZZ_CHECK(strcmp(policy_digest(p), policy_digest(q)) == 0);
	policy_free(q);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	enum bundle_error why;
	struct policy *p;
	const char *canon;
	size_t clen;

	if (size == 0)
		return 0;
	if ((data[0] & 1) == 0) {
		p = verify((const char *)data + 1, size - 1, &why);
		check_paths_agree((const char *)data + 1, size - 1, why, p);
		if (p != NULL) {
			/* Accepted: its canonical bytes sign and verify again. */
			canon = policy_canonical(p, &clen);
			signed_path(canon, clen);
			policy_free(p);
		}
	} else {
		signed_path((const char *)data + 1, size - 1);
	}
	return 0;
}
