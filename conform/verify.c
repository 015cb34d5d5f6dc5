/* Grading of a signed receipt envelope (docs/design.md "Receipts and
 * grades"; docs/receipts.md). Like bundles, the signature is checked
 * before the signed bytes reach the JSON parser, and the signed bytes must
 * be exactly canonical. */
#include <stdlib.h>
#include <string.h>

#include <jansson.h>
#include <openssl/evp.h>

#include "conform/canon.h"
#include "conform/receipt.h"
#include "conform/rparse.h"
#include "conform/suite.h"
#include "util/errbuf.h"
#include "util/jsonstrict.h"

/* The receipt's "suite": exactly id, version (decimal digits, as canonical
 * receipts hold no number) and digest. Returns 0 or -1 with err set. */
static int
check_suite_ref(json_t *ref, char *err, size_t errlen)
{
	static const char *const keys[] = { "id", "version", "digest", NULL };
	const char *v;
	size_t len, i;

	if (!json_is_object(ref) || json_object_size(ref) != 3 ||
	    jsonstrict_unknown_key(ref, keys) != NULL)
		return errbuf_fail(err, errlen, "signed receipt: suite must have "
		    "exactly id, version and digest");
	/* The id is printed in messages and by receipt show: the suite
	 * grammar, nothing a terminal would act on. */
	v = jsonstrict_str(ref, "id", &len);
	if (v == NULL || !suite_id_ok(v, len))
		return errbuf_fail(err, errlen, "signed receipt: suite id must "
		    "be 1-%d of [a-z0-9_-]", SUITE_MAX_ID);
	v = jsonstrict_str(ref, "version", &len);
	for (i = 0; v != NULL && i < len && v[i] >= '0' && v[i] <= '9'; i++)
		;
	if (v == NULL || len == 0 || len > 18 || i != len || v[0] == '0')
		return errbuf_fail(err, errlen, "signed receipt: suite version "
		    "must be a decimal integer >= 1");
	v = jsonstrict_str(ref, "digest", &len);
	if (v == NULL || len != RECEIPT_SHA256_HEX ||
	    !rparse_is_lower_hex(v, len))
		return errbuf_fail(err, errlen, "signed receipt: suite digest "
		    "must be %d lowercase hex digits", RECEIPT_SHA256_HEX);
	return 0;
}

/* Parses the signed receipt bytes strictly into t[] and the revision's
 * hash. The bytes must be exactly the canonical dump of what they parse
 * to, so one receipt has one signed spelling. */
static json_t *
parse_receipt(const char *buf, size_t len, struct rparse_tally *t,
    const char **hash, char *err, size_t errlen)
{
	static const char *const keys[] = {
		"schema", "provider", "provider_revision", "ran_at", "facts",
		"cases", "suite", "deployment", NULL
	};
	char shown[ERRBUF_SHOW_BUF], *again = NULL;
	const char *extra, *s;
	json_t *root;
	size_t slen = 0, alen = 0, i;

	if ((root = rparse_object(buf, len, "signed receipt", err,
	    errlen)) == NULL)
		return NULL;
	if ((extra = jsonstrict_unknown_key(root, keys)) != NULL) {
		errbuf_set(err, errlen, "signed receipt: unknown key \"%s\"",
		    errbuf_show(extra, strlen(extra), shown));
		goto bad;
	}
	for (i = 0; i < 4; i++) {
		if (jsonstrict_str(root, keys[i], &slen) == NULL) {
			errbuf_set(err, errlen, "signed receipt: \"%s\" missing or "
			    "not a string", keys[i]);
			goto bad;
		}
	}
	s = jsonstrict_str(root, "schema", &slen);
	if (strcmp(s, RECEIPT_SCHEMA) != 0 || slen != strlen(s)) {
		errbuf_set(err, errlen, "signed receipt: schema must be \"%s\"",
		    RECEIPT_SCHEMA);
		goto bad;
	}
	s = jsonstrict_str(root, "provider", &slen);
	if (strcmp(s, RECEIPT_PROVIDER) != 0 || slen != strlen(s)) {
		errbuf_set(err, errlen, "signed receipt: provider must be \"%s\"",
		    RECEIPT_PROVIDER);
		goto bad;
	}
	s = jsonstrict_str(root, "provider_revision", &slen);
	if (!rparse_is_revision(s, slen, hash)) {
		errbuf_set(err, errlen, "signed receipt: provider_revision must be "
		    "VERSION+sha256:HEX");
		goto bad;
	}
	s = jsonstrict_str(root, "ran_at", &slen);
	if (!rparse_is_timestamp(s, slen)) {
		errbuf_set(err, errlen, "signed receipt: ran_at is not an RFC 3339 "
		    "UTC time");
		goto bad;
	}
	if (json_object_get(root, "facts") == NULL ||
	    json_object_get(root, "cases") == NULL ||
	    json_object_get(root, "suite") == NULL) {
		errbuf_set(err, errlen, "signed receipt: \"facts\", \"cases\" "
		    "and \"suite\" are required");
		goto bad;
	}
	if (rparse_facts(json_object_get(root, "facts"), t, err,
	    errlen) == -1 ||
	    rparse_cases(json_object_get(root, "cases"), 0, err,
	    errlen) == -1 ||
	    check_suite_ref(json_object_get(root, "suite"), err, errlen) == -1)
		goto bad;
	if (json_object_get(root, "deployment") != NULL &&
	    rparse_deployment(json_object_get(root, "deployment"),
	    "signed receipt", err, errlen) == -1)
		goto bad;
	if ((again = canon_dump(root, &alen)) == NULL) {
		errbuf_set(err, errlen, "signed receipt cannot be written in "
		    "canonical form");
		goto bad;
	}
	if (alen != len || memcmp(again, buf, len) != 0) {
		errbuf_set(err, errlen, "signed receipt is not in canonical form");
		goto bad;
	}
	free(again);
	return root;
bad:
	free(again);
	json_decref(root);
	return NULL;
}

/* A receipt envelope's fields, checked for form only: nothing here says
 * whether the signer is trusted or the signature verifies. */
struct envelope {
	char		 key_id[BUNDLE_KEY_ID_LEN + 1];
	unsigned char	*rec;		/* the signed receipt bytes */
	size_t		 reclen;
	unsigned char	*sig;
	size_t		 siglen;
};

/* Reads the envelope (exactly schema, key_id, receipt, signature, as
 * strings written as they are) into e. 0, or -1 with err and nothing for
 * the caller to free. */
static int
read_envelope(const char *buf, size_t len, struct envelope *e, char *err,
    size_t errlen)
{
	static const char *const keys[] = {
		"schema", "key_id", "receipt", "signature", NULL
	};
	const char *f[4];
	size_t flen[4], i;
	json_t *env;
	int rc = -1;

	memset(e, 0, sizeof(*e));
	/* One spelling per field, as for bundles: "\/" in the base64 would
	 * be a second one. */
	if (bundle_envelope_escaped(buf, len))
		return errbuf_fail(err, errlen, "receipt envelope holds a JSON "
		    "escape: its keys and values are written as they are");
	if ((env = rparse_object(buf, len, "receipt envelope", err,
	    errlen)) == NULL)
		return -1;
	if (json_object_size(env) != 4 ||
	    jsonstrict_unknown_key(env, keys) != NULL) {
		errbuf_set(err, errlen, "receipt envelope must have exactly the "
		    "keys schema, key_id, receipt, signature");
		goto out;
	}
	for (i = 0; keys[i] != NULL; i++) {
		if ((f[i] = jsonstrict_str(env, keys[i], &flen[i])) == NULL) {
			errbuf_set(err, errlen, "receipt envelope: \"%s\" is not "
			    "a string", keys[i]);
			goto out;
		}
	}
	if (flen[0] != sizeof(RECEIPT_ENVELOPE_SCHEMA) - 1 ||
	    memcmp(f[0], RECEIPT_ENVELOPE_SCHEMA, flen[0]) != 0) {
		errbuf_set(err, errlen, "receipt envelope: schema must be \"%s\"",
		    RECEIPT_ENVELOPE_SCHEMA);
		goto out;
	}
	if (flen[1] != BUNDLE_KEY_ID_LEN ||
	    !rparse_is_lower_hex(f[1], flen[1])) {
		errbuf_set(err, errlen, "receipt envelope: key_id must be %d "
		    "lowercase hex digits", BUNDLE_KEY_ID_LEN);
		goto out;
	}
	if ((e->rec = bundle_b64_decode(f[2], flen[2], &e->reclen)) == NULL ||
	    e->reclen == 0) {
		errbuf_set(err, errlen, "receipt envelope: receipt is not "
		    "canonical base64");
		goto out;
	}
	if ((e->sig = bundle_b64_decode(f[3], flen[3], &e->siglen)) == NULL) {
		errbuf_set(err, errlen, "receipt envelope: signature is not "
		    "canonical base64");
		goto out;
	}
	memcpy(e->key_id, f[1], BUNDLE_KEY_ID_LEN);
	e->key_id[BUNDLE_KEY_ID_LEN] = '\0';
	rc = 0;
out:
	if (rc == -1) {
		free(e->rec);
		e->rec = NULL;
	}
	json_decref(env);
	return rc;
}

/* The suite the receipt names, when this verifier knows it under that
 * digest with the same id and version; else NULL. */
static const struct suite *
named_suite(json_t *root, const struct suite_set *suites)
{
	json_t *ref = json_object_get(root, "suite");
	const struct suite *su;
	const char *v;
	char ver[24];
	size_t len;

	v = jsonstrict_str(ref, "digest", &len);
	if ((su = suite_set_by_digest(suites, v, len)) == NULL)
		return NULL;
	snprintf(ver, sizeof(ver), "%lld", suite_version(su));
	v = jsonstrict_str(ref, "id", &len);
	if (strlen(suite_id(su)) != len || memcmp(suite_id(su), v, len) != 0)
		return NULL;
	v = jsonstrict_str(ref, "version", &len);
	if (strlen(ver) != len || memcmp(ver, v, len) != 0)
		return NULL;
	return su;
}

/* The grade the authentic receipt earns: its ran_at against the clock,
 * then every fact from the suite it names (conform/suite.c), into v, with
 * err saying why when it falls short. A fact is true only when the signed
 * map says so AND its suite's cases prove it; an empty map is no
 * selector. */
static int
grade_facts(json_t *root, const struct rparse_tally *t,
    const struct receipt_check *chk, struct receipt_verdict *v, char *err,
    size_t errlen)
{
	struct suite_grade g;
	const struct suite *su;
	const struct suite_case *bad;
	const char *at;
	long long ran;
	size_t i, nfacts = 0, alen = 0;

	at = jsonstrict_str(root, "ran_at", &alen);
	ran = receipt_time(at, alen);
	if (ran > chk->now + RECEIPT_SKEW_S) {
		v->reason = RECEIPT_FUTURE;
		errbuf_set(err, errlen, "ran_at %s is in the future", at);
		return 0;
	}
	if (ran < chk->now - chk->max_age_s) {
		v->reason = RECEIPT_STALE;
		errbuf_set(err, errlen, "ran_at %s is older than %lld days", at,
		    chk->max_age_s / 86400);
		return 0;
	}
	for (i = 0; i < RECEIPT_NFACTS; i++)
		nfacts += (size_t)t[i].present;
	if (nfacts == 0) {
		v->grade = RECEIPT_UNSUPPORTED;
		v->reason = RECEIPT_NO_SELECTOR;
		errbuf_set(err, errlen, "the receipt attests no fact (no selector)");
		return 0;
	}
	if ((su = named_suite(root, chk->suites)) == NULL) {
		v->reason = RECEIPT_UNKNOWN_SUITE;
		errbuf_set(err, errlen, "suite %s digest %s is not one this "
		    "verifier grades by: no fact can be recomputed",
		    json_string_value(json_object_get(json_object_get(root,
		    "suite"), "id")), json_string_value(json_object_get(
		    json_object_get(root, "suite"), "digest")));
		return 0;
	}
	snprintf(v->suite_id, sizeof(v->suite_id), "%s", suite_id(su));
	if (suite_grade(su, json_object_get(root, "cases"), &g) == -1) {
		errbuf_set(err, errlen, "out of memory");
		return -1;
	}
	for (i = 0; i < RECEIPT_NFACTS; i++) {
		/* The attester's own word counts against, never for: a fact
		 * it signed false or left out stays false. */
		if (g.proved[i] && t[i].claimed)
			continue;
		v->reason = RECEIPT_FACTS_INCOMPLETE;
		if ((bad = g.first_bad[i]) != NULL)
			errbuf_set(err, errlen, "fact %s is false: case %s (suite "
			    "%s) %s", receipt_fact_name(i), bad->id, suite_id(su),
			    suite_status_name(bad->status));
		else if (!g.proved[i])
			errbuf_set(err, errlen, "fact %s is false: suite %s has no "
			    "case for it", receipt_fact_name(i), suite_id(su));
		else
			errbuf_set(err, errlen, "fact %s is false: the receipt does "
			    "not sign it true", receipt_fact_name(i));
		suite_grade_free(&g);
		return 0;
	}
	suite_grade_free(&g);
	v->grade = RECEIPT_SECURITY_BOUNDARY;
	v->reason = RECEIPT_OK;
	return 0;
}

int
receipt_verify(const struct bundle_keyring *kr, const char *buf, size_t len,
    const struct receipt_check *chk, struct receipt_verdict *v, char *err,
    size_t errlen)
{
	const char *sha256 = chk != NULL ? chk->sha256 : NULL;
	struct rparse_tally t[RECEIPT_NFACTS];
	struct envelope e;
	const char *hash = NULL;
	json_t *root = NULL;
	EVP_PKEY *pk;
	int rc = -1;

	if (err != NULL && errlen > 0)
		err[0] = '\0';
	if (v == NULL) {
		errbuf_set(err, errlen, "no verdict");
		return -1;
	}
	memset(v, 0, sizeof(*v));
	memset(t, 0, sizeof(t));
	v->grade = RECEIPT_ADVISORY_FILTER;
	v->reason = RECEIPT_MALFORMED;
	if (sha256 == NULL || strlen(sha256) != RECEIPT_SHA256_HEX ||
	    !rparse_is_lower_hex(sha256, RECEIPT_SHA256_HEX)) {
		errbuf_set(err, errlen, "no SHA-256 of the binary in hand");
		return -1;
	}
	if (read_envelope(buf, len, &e, err, errlen) == -1)
		return -1;
	memcpy(v->key_id, e.key_id, sizeof(v->key_id));

	/* From here on the input is well-formed: every outcome is a grade. */
	rc = 0;
	if ((pk = bundle_keyring_find(kr, e.key_id)) == NULL) {
		v->reason = RECEIPT_UNTRUSTED_SIGNER;
		errbuf_set(err, errlen, "signer %s is not among the attesters",
		    v->key_id);
		goto out;
	}
	if (e.siglen != BUNDLE_SIG_LEN ||
	    !bundle_ed25519_verify(pk, RECEIPT_CONTEXT, e.sig, e.siglen,
	    (const char *)e.rec, e.reclen)) {
		v->reason = RECEIPT_BAD_SIGNATURE;
		errbuf_set(err, errlen, "signature does not verify under attester "
		    "%s", v->key_id);
		goto out;
	}
	/* Signed by a trusted attester, hence parsed. A trusted attester
	 * that signed something that is not a receipt is malformed input,
	 * not a grade. */
	if ((root = parse_receipt((const char *)e.rec, e.reclen, t, &hash, err,
	    errlen)) == NULL) {
		rc = -1;
		v->reason = RECEIPT_MALFORMED;
		goto out;
	}
	if (memcmp(hash, sha256, RECEIPT_SHA256_HEX) != 0) {
		v->reason = RECEIPT_REVISION_MISMATCH;
		errbuf_set(err, errlen, "receipt is for sha256:%.*s, the binary in "
		    "hand is sha256:%s", RECEIPT_SHA256_HEX, hash, sha256);
		goto out;
	}
	if (grade_facts(root, t, chk, v, err, errlen) == -1) {
		rc = -1;
		v->reason = RECEIPT_MALFORMED;
	}
out:
	json_decref(root);
	free(e.rec);
	free(e.sig);
	return rc;
}

/* What receipt_view keeps alive for the pointers it hands out. */
struct view_priv {
	json_t			*root;
	struct suite_grade	 g;
};

int
receipt_view_open(const char *buf, size_t len,
    const struct suite_set *suites, struct receipt_view *rv, char *err,
    size_t errlen)
{
	struct rparse_tally t[RECEIPT_NFACTS];
	struct view_priv *p;
	struct envelope e;
	const char *hash, *v;
	json_t *ref;
	size_t i, vlen;

	memset(rv, 0, sizeof(*rv));
	memset(t, 0, sizeof(t));
	if (read_envelope(buf, len, &e, err, errlen) == -1)
		return -1;
	memcpy(rv->key_id, e.key_id, sizeof(rv->key_id));
	if ((p = calloc(1, sizeof(*p))) == NULL) {
		errbuf_set(err, errlen, "out of memory");
		goto bad;
	}
	rv->priv = p;
	if ((p->root = parse_receipt((const char *)e.rec, e.reclen, t, &hash,
	    err, errlen)) == NULL)
		goto bad;
	rv->revision = json_string_value(json_object_get(p->root,
	    "provider_revision"));
	rv->ran_at = json_string_value(json_object_get(p->root, "ran_at"));
	ref = json_object_get(p->root, "suite");
	rv->suite_id = json_string_value(json_object_get(ref, "id"));
	rv->suite_digest = json_string_value(json_object_get(ref, "digest"));
	v = jsonstrict_str(ref, "version", &vlen);
	rv->suite_version = strtoll(v, NULL, 10);	/* digits, checked */
	for (i = 0; i < RECEIPT_NFACTS; i++)
		rv->signed_facts[i] = t[i].present ? t[i].claimed : -1;
	if (named_suite(p->root, suites) != NULL) {
		rv->suite_known = 1;
		if (suite_grade(named_suite(p->root, suites),
		    json_object_get(p->root, "cases"), &p->g) == -1) {
			errbuf_set(err, errlen, "out of memory");
			goto bad;
		}
		rv->grade = &p->g;
	}
	free(e.rec);
	free(e.sig);
	return 0;
bad:
	free(e.rec);
	free(e.sig);
	receipt_view_free(rv);
	return -1;
}

void
receipt_view_free(struct receipt_view *rv)
{
	struct view_priv *p;

	if (rv == NULL || (p = rv->priv) == NULL)
		return;
	suite_grade_free(&p->g);
	json_decref(p->root);
	free(p);
	memset(rv, 0, sizeof(*rv));
}
