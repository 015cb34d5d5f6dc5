/* Conformance receipts (docs/design.md "Receipts and grades";
 * docs/receipts.md): names of grades and reasons, report → canonical
 * receipt bytes, and the hash of the binary a receipt certifies. The
 * shared grammar and the facts rule are in conform/rparse.c, the
 * canonical writer in conform/canon.c, grading in conform/verify.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>
#include <openssl/evp.h>

#include "conform/canon.h"
#include "conform/receipt.h"
#include "conform/rparse.h"
#include "conform/suite.h"
#include "util/errbuf.h"
#include "util/file.h"
#include "util/jsonstrict.h"

/* The envelope's base64 goes through bundle_b64_decode and its bound. */
_Static_assert(RECEIPT_SHA256_HEX == FILE_SHA256_HEX,
    "a receipt names binaries by util/file.h's hash");
_Static_assert(RECEIPT_MAX_BYTES <= BUNDLE_MAX_BYTES,
    "a receipt envelope must fit the bundle base64 bound");

/* The bounds rparse.c checks are the ones this header promises. */
_Static_assert(RECEIPT_NFACTS == RPARSE_NFACTS &&
    RECEIPT_SHA256_HEX == RPARSE_SHA256_HEX &&
    RECEIPT_MAX_BYTES == RPARSE_MAX_BYTES &&
    RECEIPT_DEPLOY_KEYS == RPARSE_DEPLOY_KEYS &&
    RECEIPT_DEPLOY_VALUE == RPARSE_DEPLOY_VALUE, "conform bounds differ");

_Static_assert(SUITE_MAX_ID == RECEIPT_SUITE_ID, "suite id bounds differ");

struct receipt_report {
	json_t			*root;
	const struct suite	*suite;
	struct rparse_tally	 t[RECEIPT_NFACTS];
	struct suite_grade	 g;
};

const char *
receipt_fact_name(size_t i)
{
	return rparse_fact_name(i);
}

const char *
receipt_grade_name(enum receipt_grade g)
{
	switch (g) {
	case RECEIPT_UNSUPPORTED:
		return "unsupported";
	case RECEIPT_ADVISORY_FILTER:
		return "advisory_filter";
	case RECEIPT_SECURITY_BOUNDARY:
		return "security_boundary";
	}
	return "unsupported";
}

int
receipt_grade_parse(const char *s, enum receipt_grade *out)
{
	static const enum receipt_grade all[] = {
		RECEIPT_UNSUPPORTED, RECEIPT_ADVISORY_FILTER,
		RECEIPT_SECURITY_BOUNDARY
	};
	size_t i;

	if (s == NULL || out == NULL)
		return -1;
	for (i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
		if (strcmp(s, receipt_grade_name(all[i])) == 0) {
			*out = all[i];
			return 0;
		}
	}
	return -1;
}

int
receipt_grade_meets(enum receipt_grade have, enum receipt_grade need)
{
	return (int)have >= (int)need;
}

const char *
receipt_reason_name(enum receipt_reason r)
{
	switch (r) {
	case RECEIPT_OK:
		return "ok";
	case RECEIPT_MALFORMED:
		return "malformed";
	case RECEIPT_UNTRUSTED_SIGNER:
		return "untrusted_signer";
	case RECEIPT_BAD_SIGNATURE:
		return "bad_signature";
	case RECEIPT_REVISION_MISMATCH:
		return "revision_mismatch";
	case RECEIPT_FACTS_INCOMPLETE:
		return "facts_incomplete";
	case RECEIPT_NO_SELECTOR:
		return "no_selector";
	case RECEIPT_UNKNOWN_SUITE:
		return "unknown_suite";
	case RECEIPT_STALE:
		return "stale";
	case RECEIPT_FUTURE:
		return "ran_at_in_future";
	}
	return "malformed";
}

/* ---- report → canonical receipt ---- */

void
receipt_report_free(struct receipt_report *r)
{
	if (r == NULL)
		return;
	suite_grade_free(&r->g);
	json_decref(r->root);
	free(r);
}

long long
receipt_time(const char *s, size_t len)
{
	return rparse_time(s, len);
}

struct receipt_report *
receipt_report_parse(const char *buf, size_t len,
    const struct suite_set *suites, long long now, char *err, size_t errlen)
{
	/* The string-valued keys first: the loop below checks them. */
	static const char *const keys[] = {
		"schema", "provider", "guard_binary", "guard_sha256", "version",
		"ran_at", "suite", "facts", "cases", "deployment", NULL
	};
	struct receipt_report *r;
	char shown[ERRBUF_SHOW_BUF];
	const char *extra, *s;
	size_t slen = 0, i;

	if ((r = calloc(1, sizeof(*r))) == NULL) {
		errbuf_set(err, errlen, "out of memory");
		return NULL;
	}
	if ((r->root = rparse_object(buf, len, "report", err, errlen)) == NULL)
		goto bad;
	if ((extra = jsonstrict_unknown_key(r->root, keys)) != NULL) {
		errbuf_set(err, errlen, "report: unknown key \"%s\"",
		    errbuf_show(extra, strlen(extra), shown));
		goto bad;
	}
	for (i = 0; i < 7; i++) {
		if (jsonstrict_str(r->root, keys[i], &slen) == NULL) {
			errbuf_set(err, errlen, "report: \"%s\" missing or not a "
			    "string", keys[i]);
			goto bad;
		}
	}
	s = jsonstrict_str(r->root, "schema", &slen);
	if (strcmp(s, RECEIPT_REPORT_SCHEMA) != 0 || slen != strlen(s)) {
		errbuf_set(err, errlen, "report: schema must be \"%s\"",
		    RECEIPT_REPORT_SCHEMA);
		goto bad;
	}
	s = jsonstrict_str(r->root, "provider", &slen);
	if (strcmp(s, RECEIPT_PROVIDER) != 0 || slen != strlen(s)) {
		errbuf_set(err, errlen, "report: provider must be \"%s\"",
		    RECEIPT_PROVIDER);
		goto bad;
	}
	s = jsonstrict_str(r->root, "guard_binary", &slen);
	if (slen == 0 || slen > 4096 || strlen(s) != slen) {
		errbuf_set(err, errlen, "report: guard_binary must be a path");
		goto bad;
	}
	s = jsonstrict_str(r->root, "guard_sha256", &slen);
	if (slen != RECEIPT_SHA256_HEX || !rparse_is_lower_hex(s, slen)) {
		errbuf_set(err, errlen, "report: guard_sha256 must be %d lowercase "
		    "hex digits", RECEIPT_SHA256_HEX);
		goto bad;
	}
	s = jsonstrict_str(r->root, "version", &slen);
	if (!rparse_is_version(s, slen)) {
		errbuf_set(err, errlen, "report: version \"%s\" must be 1-%d of "
		    "[A-Za-z0-9.+_~-]", errbuf_show(s, slen, shown),
		    RPARSE_MAX_VERSION);
		goto bad;
	}
	s = jsonstrict_str(r->root, "ran_at", &slen);
	if (!rparse_is_timestamp(s, slen)) {
		errbuf_set(err, errlen, "report: ran_at \"%s\" must be an RFC 3339 "
		    "UTC time (YYYY-MM-DDTHH:MM:SSZ)", errbuf_show(s, slen, shown));
		goto bad;
	}
	/* A run cannot have happened later than now: a report from the
	 * future is a clock or a forgery, and signing it would let it pass
	 * any maximum age for longer than it should. */
	if (receipt_time(s, slen) > now + RECEIPT_SKEW_S) {
		errbuf_set(err, errlen, "report: ran_at %s is in the future", s);
		goto bad;
	}
	s = jsonstrict_str(r->root, "suite", &slen);
	if ((r->suite = suite_set_by_id(suites, s, slen)) == NULL) {
		errbuf_set(err, errlen, "report: suite \"%s\" is not one this "
		    "program grades by (docs/receipts.md \"Suites and evidence\")",
		    errbuf_show(s, slen, shown));
		goto bad;
	}
	if (json_object_get(r->root, "facts") == NULL ||
	    json_object_get(r->root, "cases") == NULL) {
		errbuf_set(err, errlen, "report: \"facts\" and \"cases\" are "
		    "required");
		goto bad;
	}
	if (rparse_facts(json_object_get(r->root, "facts"), r->t, err,
	    errlen) == -1 ||
	    rparse_cases(json_object_get(r->root, "cases"), 1, err,
	    errlen) == -1)
		goto bad;
	if (suite_grade(r->suite, json_object_get(r->root, "cases"),
	    &r->g) == -1) {
		errbuf_set(err, errlen, "out of memory");
		goto bad;
	}
	if (json_object_get(r->root, "deployment") != NULL &&
	    rparse_deployment(json_object_get(r->root, "deployment"), "report",
	    err, errlen) == -1)
		goto bad;
	return r;
bad:
	receipt_report_free(r);
	return NULL;
}

const char *
receipt_report_guard_binary(const struct receipt_report *r)
{
	return r == NULL ? NULL :
	    json_string_value(json_object_get(r->root, "guard_binary"));
}

const char *
receipt_report_guard_sha256(const struct receipt_report *r)
{
	return r == NULL ? NULL :
	    json_string_value(json_object_get(r->root, "guard_sha256"));
}

int
receipt_report_check_binary(const struct receipt_report *r,
    const char *sha256, char *err, size_t errlen)
{
	const char *ran = receipt_report_guard_sha256(r);

	if (ran == NULL || sha256 == NULL ||
	    strlen(sha256) != RECEIPT_SHA256_HEX ||
	    strcmp(ran, sha256) != 0) {
		errbuf_set(err, errlen, "the binary is sha256:%s, the matrix ran "
		    "sha256:%s: it changed since the run, refusing to sign",
		    sha256 != NULL ? sha256 : "?", ran != NULL ? ran : "?");
		return -1;
	}
	return 0;
}

int
receipt_report_fact(const struct receipt_report *r, size_t i, char *note,
    size_t notelen)
{
	const struct suite_case *bad;

	if (note != NULL && notelen > 0)
		note[0] = '\0';
	if (r == NULL || i >= RECEIPT_NFACTS)
		return 0;
	if (!r->t[i].claimed) {
		errbuf_set(note, notelen, "fact %s is not claimed true by the "
		    "report", rparse_fact_name(i));
		return 0;
	}
	if (r->g.proved[i])
		return 1;
	if ((bad = r->g.first_bad[i]) != NULL)
		errbuf_set(note, notelen, "fact %s is claimed true but case %s "
		    "(suite %s) %s", rparse_fact_name(i), bad->id,
		    suite_id(r->suite), suite_status_name(bad->status));
	else
		errbuf_set(note, notelen, "fact %s has no case in suite %s",
		    rparse_fact_name(i), suite_id(r->suite));
	return 0;
}

char *
receipt_canonical(const struct receipt_report *r, const char *sha256,
    size_t *len, char *err, size_t errlen)
{
	json_t *obj = NULL, *facts = NULL, *cases = NULL, *suite = NULL;
	char rev[RPARSE_MAX_VERSION + sizeof(RPARSE_REV_TAG) +
	    RECEIPT_SHA256_HEX + 1];
	char *out = NULL, ver[24];
	size_t i;

	if (r == NULL || len == NULL || sha256 == NULL ||
	    strlen(sha256) != RECEIPT_SHA256_HEX ||
	    !rparse_is_lower_hex(sha256, RECEIPT_SHA256_HEX)) {
		errbuf_set(err, errlen, "no report or no binary SHA-256");
		return NULL;
	}
	snprintf(rev, sizeof(rev), "%s" RPARSE_REV_TAG "%s",
	    json_string_value(json_object_get(r->root, "version")), sha256);
	if ((facts = json_object()) == NULL ||
	    (cases = json_deep_copy(json_object_get(r->root,
	    "cases"))) == NULL)
		goto oom;
	/* Always all five: a fact the report left out is false. */
	for (i = 0; i < RECEIPT_NFACTS; i++)
		if (json_object_set_new(facts, rparse_fact_name(i),
		    json_boolean(receipt_report_fact(r, i, NULL, 0))) == -1)
			goto oom;
	/* The version is a string: canonical receipts hold no number. */
	snprintf(ver, sizeof(ver), "%lld", suite_version(r->suite));
	if ((suite = json_pack("{s:s, s:s, s:s}", "id", suite_id(r->suite),
	    "version", ver, "digest", suite_digest(r->suite))) == NULL)
		goto oom;
	obj = json_pack("{s:s, s:s, s:s, s:O, s:O, s:O, s:O}",
	    "schema", RECEIPT_SCHEMA,
	    "provider", RECEIPT_PROVIDER,
	    "provider_revision", rev,
	    "facts", facts,
	    "cases", cases,
	    "suite", suite,
	    "ran_at", json_object_get(r->root, "ran_at"));
	if (obj == NULL)
		goto oom;
	/* Signed with the rest: a receipt says which deployment it speaks of. */
	if (json_object_get(r->root, "deployment") != NULL &&
	    json_object_set(obj, "deployment",
	    json_object_get(r->root, "deployment")) == -1)
		goto oom;
	if ((out = canon_dump(obj, len)) == NULL) {
		errbuf_set(err, errlen, "cannot write the receipt: out of memory or "
		    "larger than %u bytes", RECEIPT_MAX_BYTES);
		goto out;
	}
	goto out;
oom:
	errbuf_set(err, errlen, "out of memory");
out:
	json_decref(obj);
	json_decref(facts);
	json_decref(cases);
	json_decref(suite);
	return out;
}

unsigned char *
receipt_signed_message(const char *canon, size_t len, size_t *outlen)
{
	return bundle_domain_message(RECEIPT_CONTEXT, canon, len, outlen);
}

int
receipt_file_sha256(const char *path, char *hex, char *err, size_t errlen)
{
	return file_sha256(path, RECEIPT_BINARY_MAX, hex, err, errlen);
}
