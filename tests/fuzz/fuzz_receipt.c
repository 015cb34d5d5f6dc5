/* conform/receipt: receipt_report_parse and receipt_verify against a fixed
 * attester keyring.
 *
 * The attester key is the fixed fuzz key (tests/fuzz/fuzzkey.h), so the
 * checked-in seed receipts, signed with it by tests/fuzz/mkcorpus.py for
 * an empty binary, verify and the fuzzer starts from inside the format.
 *
 * The first byte chooses what the rest is:
 *   even  a receipt envelope as received: graded for the binary whose
 *         SHA-256 is SHA_EMPTY, under the attester, and under nobody;
 *   odd   a conformance report: parsed, and when accepted, written in
 *         canonical form, signed by the harness and graded.
 * Beyond "no crash": -1 exactly when the verdict is "malformed", with a
 * printable reason; security_boundary exactly when the reason is "ok",
 * unsupported exactly for "no_selector"; an envelope holding a JSON
 * escape is malformed; under an empty attester set a well-formed envelope
 * is untrusted_signer, never better; an authentic receipt graded for
 * another binary is revision_mismatch. A report the parser accepts always
 * signs and verifies, grading security_boundary exactly when its five
 * facts are proved by its cases, revision_mismatch for another binary,
 * bad_signature with one signature character changed, untrusted_signer
 * for nobody; the report's guard_sha256 is the one binary it lets sign. */
#include <string.h>

#include "ctl/receiptcmd.h"
#include "plane/bundle.h"
#include "conform/receipt.h"
#include "tests/fuzz/fuzz.h"
#include "tests/fuzz/fuzzkey.h"

#define SHA_EMPTY	"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
#define SHA_OTHER	"ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"

static struct bundle_keyring *attesters, *nobody;
static EVP_PKEY *priv;

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	attesters = fuzz_key_keyring(&priv);
	FUZZ_CHECK((nobody = bundle_keyring_new()) != NULL);
	return 0;
}

/* Grades an exact-size copy of b; checks what holds for every verdict. */
static int
grade(const struct bundle_keyring *kr, const char *b, size_t len,
    const char *sha, struct receipt_verdict *v)
{
	char *c = fuzz_dup(b, len), err[1024] = "";
	int rc;

	memset(v, 0xa5, sizeof(*v));
	rc = receipt_verify(kr, c, len, sha, v, err, sizeof(err));
	free(c);
	FUZZ_CHECK(rc == 0 || rc == -1);
	FUZZ_CHECK((rc == -1) == (v->reason == RECEIPT_MALFORMED));
	FUZZ_CHECK(fuzz_printable(err));
	FUZZ_CHECK((v->reason == RECEIPT_OK) ==
	    (v->grade == RECEIPT_SECURITY_BOUNDARY));
	FUZZ_CHECK((v->reason == RECEIPT_NO_SELECTOR) ==
	    (v->grade == RECEIPT_UNSUPPORTED));
	if (v->reason != RECEIPT_OK)
		FUZZ_CHECK(err[0] != '\0');
	/* Independently of bundle_envelope_escaped: any backslash is an
	 * escape, and no field has a second spelling. */
	if (memchr(b, '\\', len) != NULL)
		FUZZ_CHECK(rc == -1);
	return rc;
}

static void
envelope_path(const char *b, size_t len)
{
	struct receipt_verdict v, w;
	int rc;

	rc = grade(attesters, b, len, SHA_EMPTY, &v);
	/* The envelope's form is checked before the signer: nobody trusted
	 * never makes a malformed envelope look well-formed, nor a
	 * well-formed one better than untrusted. */
	if (grade(nobody, b, len, SHA_EMPTY, &w) == 0)
		FUZZ_CHECK(w.reason == RECEIPT_UNTRUSTED_SIGNER);
	else
		FUZZ_CHECK(rc == -1);
	if (rc == 0 && (v.reason == RECEIPT_OK ||
	    v.reason == RECEIPT_FACTS_INCOMPLETE ||
	    v.reason == RECEIPT_NO_SELECTOR)) {
		(void)grade(attesters, b, len, SHA_OTHER, &w);
		FUZZ_CHECK(w.reason == RECEIPT_REVISION_MISMATCH);
	}
}

static void
report_path(const char *b, size_t len)
{
	struct receipt_report *r;
	struct receipt_verdict v;
	char *c = fuzz_dup(b, len), err[1024] = "", *canon, *env, *sig;
	size_t clen, i, proved = 0;

	r = receipt_report_parse(c, len, err, sizeof(err));
	free(c);
	if (r == NULL) {
		FUZZ_CHECK(err[0] != '\0' && fuzz_printable(err));
		return;
	}
	/* The one binary the report lets sign is the one the matrix ran. */
	FUZZ_CHECK(receipt_report_check_binary(r,
	    receipt_report_guard_sha256(r), err, sizeof(err)) == 0);
	FUZZ_CHECK(receipt_report_check_binary(r,
	    strcmp(receipt_report_guard_sha256(r), SHA_EMPTY) == 0 ?
	    SHA_OTHER : SHA_EMPTY, err, sizeof(err)) == -1);
	for (i = 0; i < RECEIPT_NFACTS; i++)
		proved += (size_t)receipt_report_fact(r, i, err, sizeof(err));
	canon = receipt_canonical(r, SHA_EMPTY, &clen, err, sizeof(err));
	FUZZ_CHECK(canon != NULL && strlen(canon) == clen);
	env = receiptcmd_sign_envelope(canon, clen, priv, err, sizeof(err));
	FUZZ_CHECK(env != NULL);
	FUZZ_CHECK(grade(attesters, env, strlen(env), SHA_EMPTY, &v) == 0);
	FUZZ_CHECK(v.reason == (proved == RECEIPT_NFACTS ? RECEIPT_OK :
	    RECEIPT_FACTS_INCOMPLETE));
	FUZZ_CHECK(grade(attesters, env, strlen(env), SHA_OTHER, &v) == 0);
	FUZZ_CHECK(v.reason == RECEIPT_REVISION_MISMATCH);
	FUZZ_CHECK(grade(nobody, env, strlen(env), SHA_EMPTY, &v) == 0);
	FUZZ_CHECK(v.reason == RECEIPT_UNTRUSTED_SIGNER);
	/* One signature character changed, within the alphabet. */
	FUZZ_CHECK((sig = strstr(env, "\"signature\":\"")) != NULL);
	sig += 13 + 10;
	*sig = *sig == 'a' ? 'b' : 'a';
	FUZZ_CHECK(grade(attesters, env, strlen(env), SHA_EMPTY, &v) == 0);
	FUZZ_CHECK(v.reason == RECEIPT_BAD_SIGNATURE);
	free(env);
	free(canon);
	receipt_report_free(r);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size == 0)
		return 0;
	if ((data[0] & 1) == 0)
		envelope_path((const char *)data + 1, size - 1);
	else
		report_path((const char *)data + 1, size - 1);
	return 0;
}
