/* conform/receipt: receipt_report_parse, receipt_verify and
 * receipt_view_open against a fixed attester keyring and a fixed suite.
 *
 * The attester key is the fixed fuzz key (tests/fuzz/fuzzkey.h) and the
 * suite is FUZZ_SUITE (tests/fuzz/fuzzsuite.h), so the checked-in seed
 * receipts, signed with that key by tests/fuzz/mkcorpus.py for an empty
 * binary and naming that suite's digest, verify, and the fuzzer starts
 * from inside the format. The clock is fixed (NOW) so that seeds do not
 * go stale.
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
 * another binary is revision_mismatch; under no suite it is never ok; one
 * that is ok now is ran_at_in_future at the epoch and stale in ten years;
 * receipt_view_open reads every authentic receipt, and an ok one shows
 * its suite known, every fact signed true and proved. A report the parser
 * accepts always signs and verifies, grading security_boundary exactly
 * when its five facts are claimed and proved by its suite's cases,
 * revision_mismatch for another binary, bad_signature with one signature
 * character changed, untrusted_signer for nobody; under no suite it is
 * refused; the report's guard_sha256 is the one binary it lets sign. */
#include <string.h>

#include "ctl/receiptcmd.h"
#include "plane/bundle.h"
#include "conform/receipt.h"
#include "conform/suite.h"
#include "tests/fuzz/fuzz.h"
#include "tests/fuzz/fuzzkey.h"
#include "tests/fuzz/fuzzsuite.h"

#define SHA_EMPTY	"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
#define SHA_OTHER	"ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
#define NOW		1796083200LL	/* 2026-12-01T00:00:00Z */
#define MAX_AGE		(30LL * 86400)
/* Older than any ran_at (year 0000): a report path grade is never stale. */
#define AGE_ALL		(NOW + 100000000000LL)

static struct bundle_keyring *attesters, *nobody;
static struct suite_set suites, none;
static EVP_PKEY *priv;

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	attesters = fuzz_key_keyring(&priv);
	FUZZ_CHECK((nobody = bundle_keyring_new()) != NULL);
	fuzz_suite_set(&suites);
	return 0;
}

/* Grades an exact-size copy of b under kr and chk; checks what holds for
 * every verdict. */
static int
grade(const struct bundle_keyring *kr, const char *b, size_t len,
    const struct receipt_check *chk, struct receipt_verdict *v)
{
	char *c = fuzz_dup(b, len), err[1024] = "";
	int rc;

	memset(v, 0xa5, sizeof(*v));
	rc = receipt_verify(kr, c, len, chk, v, err, sizeof(err));
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

static struct receipt_check
check(const char *sha, const struct suite_set *set, long long now,
    long long max_age)
{
	return (struct receipt_check){ set, sha, now, max_age };
}

/* Signed by a trusted attester for the binary in hand: the reasons that
 * come after the signature and the revision are checked. */
static int
authentic(enum receipt_reason r)
{
	return r == RECEIPT_OK || r == RECEIPT_FACTS_INCOMPLETE ||
	    r == RECEIPT_NO_SELECTOR || r == RECEIPT_UNKNOWN_SUITE ||
	    r == RECEIPT_STALE || r == RECEIPT_FUTURE;
}

/* What receipt show would read of an authentic receipt graded v. */
static void
view(const char *b, size_t len, const struct receipt_verdict *v)
{
	struct receipt_view rv;
	char *c = fuzz_dup(b, len), err[1024] = "";
	size_t i;

	FUZZ_CHECK(receipt_view_open(c, len, &suites, &rv, err,
	    sizeof(err)) == 0);
	FUZZ_CHECK(rv.suite_known == (rv.grade != NULL));
	if (v->reason == RECEIPT_OK) {
		FUZZ_CHECK(rv.suite_known);
		for (i = 0; i < RECEIPT_NFACTS; i++) {
			FUZZ_CHECK(rv.signed_facts[i] == 1);
			FUZZ_CHECK(rv.grade->proved[i]);
			FUZZ_CHECK(rv.grade->npass[i] == rv.grade->nrequired[i]);
		}
	}
	if (v->reason == RECEIPT_UNKNOWN_SUITE)
		FUZZ_CHECK(!rv.suite_known);
	receipt_view_free(&rv);
	free(c);
}

static void
envelope_path(const char *b, size_t len)
{
	struct receipt_check chk = check(SHA_EMPTY, &suites, NOW, MAX_AGE);
	struct receipt_verdict v, w;
	int rc;

	rc = grade(attesters, b, len, &chk, &v);
	/* The envelope's form is checked before the signer: nobody trusted
	 * never makes a malformed envelope look well-formed, nor a
	 * well-formed one better than untrusted. */
	if (grade(nobody, b, len, &chk, &w) == 0)
		FUZZ_CHECK(w.reason == RECEIPT_UNTRUSTED_SIGNER);
	else
		FUZZ_CHECK(rc == -1);
	if (rc != 0 || !authentic(v.reason))
		return;
	view(b, len, &v);
	chk.sha256 = SHA_OTHER;
	(void)grade(attesters, b, len, &chk, &w);
	FUZZ_CHECK(w.reason == RECEIPT_REVISION_MISMATCH);
	/* No suite known: nothing is recomputed, nothing is ok. */
	chk = check(SHA_EMPTY, &none, NOW, MAX_AGE);
	(void)grade(attesters, b, len, &chk, &w);
	FUZZ_CHECK(w.reason != RECEIPT_OK);
	if (v.reason == RECEIPT_OK) {
		FUZZ_CHECK(w.reason == RECEIPT_UNKNOWN_SUITE);
		/* Fresh now: from the future at the epoch, stale in ten
		 * years. */
		chk = check(SHA_EMPTY, &suites, 0, MAX_AGE);
		(void)grade(attesters, b, len, &chk, &w);
		FUZZ_CHECK(w.reason == RECEIPT_FUTURE);
		chk = check(SHA_EMPTY, &suites, NOW + 3650LL * 86400, MAX_AGE);
		(void)grade(attesters, b, len, &chk, &w);
		FUZZ_CHECK(w.reason == RECEIPT_STALE);
	}
}

static void
report_path(const char *b, size_t len)
{
	struct receipt_check chk = check(SHA_EMPTY, &suites, NOW, AGE_ALL);
	struct receipt_report *r;
	struct receipt_verdict v;
	char *c = fuzz_dup(b, len), err[1024] = "", *canon, *env, *sig;
	size_t clen, i, proved = 0;

	r = receipt_report_parse(c, len, &suites, NOW, err, sizeof(err));
	if (r == NULL) {
		free(c);
		FUZZ_CHECK(err[0] != '\0' && fuzz_printable(err));
		return;
	}
	/* A report names its suite: under none, it is refused. */
	FUZZ_CHECK(receipt_report_parse(c, len, &none, NOW, err,
	    sizeof(err)) == NULL);
	free(c);
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
	FUZZ_CHECK(grade(attesters, env, strlen(env), &chk, &v) == 0);
	FUZZ_CHECK(v.reason == (proved == RECEIPT_NFACTS ? RECEIPT_OK :
	    RECEIPT_FACTS_INCOMPLETE));
	view(env, strlen(env), &v);
	chk.sha256 = SHA_OTHER;
	FUZZ_CHECK(grade(attesters, env, strlen(env), &chk, &v) == 0);
	FUZZ_CHECK(v.reason == RECEIPT_REVISION_MISMATCH);
	chk.sha256 = SHA_EMPTY;
	FUZZ_CHECK(grade(nobody, env, strlen(env), &chk, &v) == 0);
	FUZZ_CHECK(v.reason == RECEIPT_UNTRUSTED_SIGNER);
	/* One signature character changed, within the alphabet. */
	FUZZ_CHECK((sig = strstr(env, "\"signature\":\"")) != NULL);
	sig += 13 + 10;
	*sig = *sig == 'a' ? 'b' : 'a';
	FUZZ_CHECK(grade(attesters, env, strlen(env), &chk, &v) == 0);
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
