/* Conformance receipts (docs/design.md "Receipts and
 * grades"; docs/receipts.md): report → canonical receipt bytes, and the
 * grading of a signed receipt envelope.
 *
 * A fact is never copied from what someone claims: it is true only when
 * the claim is true AND the fact has at least one case AND every one of
 * its cases passes, and a case passes only when its own strings agree
 * (observed is what was expected, the negative control flipped). Both the
 * signer and the verifier apply that rule, so a receipt cannot grade
 * higher than its cases show, whoever made it.
 *
 * Like bundles, the signature is checked before the signed bytes reach
 * the JSON parser, and the signed bytes must be exactly canonical. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>
#include <openssl/err.h>
#include <openssl/evp.h>

#include "conform/receipt.h"
#include "util/ascii.h"
#include "util/errbuf.h"
#include "util/jsonstrict.h"

#define MAX_CASES	4096
#define MAX_STRING	4096	/* bytes of any case string */
#define MAX_ID		64
#define MAX_VERSION	64
#define REV_TAG		"+sha256:"

/* The envelope's base64 goes through bundle_b64_decode and its bound. */
_Static_assert(RECEIPT_MAX_BYTES <= BUNDLE_MAX_BYTES,
    "a receipt envelope must fit the bundle base64 bound");

/* Sorted: the order the canonical facts map has. */
static const char *const fact_names[RECEIPT_NFACTS + 1] = {
	"authority_separation", "connect_time_public_address",
	"default_deny", "exact_destination_match", "redirect_recheck", NULL
};

enum verdict { V_PASS, V_FAIL, V_INCONCLUSIVE };

/* Per fact: what was claimed and what the cases prove. */
struct tally {
	int	 present;	/* the facts map has the key */
	int	 claimed;	/* ... with true */
	size_t	 ncases;
	size_t	 npass;
	char	 first_bad[MAX_ID + 1];	/* id of the first non-passing case */
};

struct receipt_report {
	json_t		*root;
	struct tally	 t[RECEIPT_NFACTS];
};

const char *
receipt_fact_name(size_t i)
{
	return i < RECEIPT_NFACTS ? fact_names[i] : NULL;
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
	}
	return "malformed";
}

/* ---- shared grammar ---- */

static int
fact_index(const char *s)
{
	int i;

	for (i = 0; i < RECEIPT_NFACTS; i++)
		if (strcmp(s, fact_names[i]) == 0)
			return i;
	return -1;
}

static int
is_lower_hex(const char *s, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (!(ascii_is_digit((unsigned char)s[i]) ||
		    (s[i] >= 'a' && s[i] <= 'f')))
			return 0;
	return 1;
}

/* Case ids are short names ([A-Za-z0-9._-], 1-64) so that messages can
 * name them as they are. */
static int
is_case_id(const char *s, size_t len)
{
	size_t i;

	if (len == 0 || len > MAX_ID)
		return 0;
	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];

		if (!(ascii_is_digit(c) || ascii_is_alpha(c) || c == '.' ||
		    c == '_' || c == '-'))
			return 0;
	}
	return 1;
}

/* A version: 1-64 of [A-Za-z0-9.+_~-], e.g. "0.1.0" or "0.1.0+git.ab12". */
static int
is_version(const char *s, size_t len)
{
	size_t i;

	if (len == 0 || len > MAX_VERSION)
		return 0;
	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];

		if (!(ascii_is_digit(c) || ascii_is_alpha(c) || c == '.' ||
		    c == '+' || c == '_' || c == '~' || c == '-'))
			return 0;
	}
	return 1;
}

static int
two_digits(const char *s, int lo, int hi)
{
	int v;

	if (!ascii_is_digit((unsigned char)s[0]) ||
	    !ascii_is_digit((unsigned char)s[1]))
		return 0;
	v = (s[0] - '0') * 10 + (s[1] - '0');
	return v >= lo && v <= hi;
}

/* RFC 3339 in UTC: YYYY-MM-DDTHH:MM:SS, optional .1-9 digits, then Z. */
static int
is_timestamp(const char *s, size_t len)
{
	size_t i;

	if (len < 20)
		return 0;
	for (i = 0; i < 4; i++)
		if (!ascii_is_digit((unsigned char)s[i]))
			return 0;
	if (s[4] != '-' || !two_digits(s + 5, 1, 12) || s[7] != '-' ||
	    !two_digits(s + 8, 1, 31) || s[10] != 'T' ||
	    !two_digits(s + 11, 0, 23) || s[13] != ':' ||
	    !two_digits(s + 14, 0, 59) || s[16] != ':' ||
	    !two_digits(s + 17, 0, 60))
		return 0;
	i = 19;
	if (s[i] == '.') {
		for (i++; i < len && ascii_is_digit((unsigned char)s[i]); i++)
			;
		if (i == 20 || i > 29)
			return 0;
	}
	return i + 1 == len && s[i] == 'Z';
}

/* "<version>+sha256:<64 lowercase hex>"; *hash points at the hex. */
static int
is_revision(const char *s, size_t len, const char **hash)
{
	size_t tag = sizeof(REV_TAG) - 1, vlen;

	if (len < 1 + tag + RECEIPT_SHA256_HEX)
		return 0;
	vlen = len - tag - RECEIPT_SHA256_HEX;
	if (!is_version(s, vlen) || memcmp(s + vlen, REV_TAG, tag) != 0 ||
	    !is_lower_hex(s + vlen + tag, RECEIPT_SHA256_HEX))
		return 0;
	*hash = s + vlen + tag;
	return 1;
}

static json_t *
load_object(const char *buf, size_t len, const char *what, char *err,
    size_t errlen)
{
	json_error_t jerr;
	json_t *root;

	if (buf == NULL || len == 0) {
		errbuf_set(err, errlen, "empty %s", what);
		return NULL;
	}
	if (len > RECEIPT_MAX_BYTES) {
		errbuf_set(err, errlen, "%s larger than %u bytes", what,
		    RECEIPT_MAX_BYTES);
		return NULL;
	}
	/* jansson's message may quote input: report the position only. */
	root = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &jerr);
	if (root == NULL) {
		errbuf_set(err, errlen, "%s is not valid JSON (line %d column %d) or "
		    "has a duplicate key", what, jerr.line, jerr.column);
		return NULL;
	}
	if (!json_is_object(root)) {
		errbuf_set(err, errlen, "%s must be a JSON object", what);
		json_decref(root);
		return NULL;
	}
	return root;
}

static int
str_eq(json_t *obj, const char *a, const char *b)
{
	json_t *x = json_object_get(obj, a), *y = json_object_get(obj, b);

	return json_string_length(x) == json_string_length(y) &&
	    memcmp(json_string_value(x), json_string_value(y),
	    json_string_length(x)) == 0;
}

/* Checks one case object. Sets *fact and *passes (whether it counts as a
 * pass under the rule in the header comment). With strict, a case that
 * says "pass" but whose strings disagree is refused; otherwise it merely
 * does not count. Returns 0 or -1 with err set. */
static int
check_case(json_t *c, size_t idx, json_t *seen, int strict, int *fact,
    int *passes, char *err, size_t errlen)
{
	static const char *const keys[] = {
		"id", "fact", "probe", "expected", "observed", "control",
		"control_expected", "verdict", NULL
	};
	static const char *const verdicts[] = {
		"pass", "fail", "inconclusive", NULL
	};
	char shown[ERRBUF_SHOW_BUF];
	const char *extra, *s, *id;
	size_t len = 0, idlen = 0, i;
	enum verdict v = V_FAIL;
	json_t *val;
	int consistent;

	if (!json_is_object(c)) {
		errbuf_set(err, errlen, "cases[%zu] must be an object", idx);
		return -1;
	}
	if ((extra = jsonstrict_unknown_key(c, keys)) != NULL) {
		errbuf_set(err, errlen, "cases[%zu]: unknown key \"%s\"", idx,
		    errbuf_show(extra, strlen(extra), shown));
		return -1;
	}
	/* Every key but control_expected is required; all are strings. */
	for (i = 0; keys[i] != NULL; i++) {
		val = json_object_get(c, keys[i]);
		if (val == NULL && strcmp(keys[i], "control_expected") == 0)
			continue;
		if (!json_is_string(val)) {
			errbuf_set(err, errlen, "cases[%zu]: \"%s\" missing or not a "
			    "string", idx, keys[i]);
			return -1;
		}
		if (json_string_length(val) > MAX_STRING) {
			errbuf_set(err, errlen, "cases[%zu]: \"%s\" longer than %d "
			    "bytes", idx, keys[i], MAX_STRING);
			return -1;
		}
	}
	id = jsonstrict_str(c, "id", &idlen);
	if (!is_case_id(id, idlen)) {
		errbuf_set(err, errlen, "cases[%zu]: id \"%s\" must be 1-%d of "
		    "[A-Za-z0-9._-]", idx, errbuf_show(id, idlen, shown), MAX_ID);
		return -1;
	}
	if (json_object_get(seen, id) != NULL) {
		errbuf_set(err, errlen, "cases[%zu]: duplicate id \"%s\"", idx, id);
		return -1;
	}
	if (json_object_set_new(seen, id, json_true()) == -1) {
		errbuf_set(err, errlen, "out of memory");
		return -1;
	}
	s = jsonstrict_str(c, "fact", &len);
	if (strlen(s) != len || (*fact = fact_index(s)) < 0) {
		errbuf_set(err, errlen, "case %s: unknown fact \"%s\"", id,
		    errbuf_show(s, len, shown));
		return -1;
	}
	s = jsonstrict_str(c, "verdict", &len);
	for (i = 0; verdicts[i] != NULL; i++)
		if (strlen(verdicts[i]) == len && memcmp(verdicts[i], s,
		    len) == 0)
			break;
	if (verdicts[i] == NULL) {
		errbuf_set(err, errlen, "case %s: verdict must be pass, fail or "
		    "inconclusive", id);
		return -1;
	}
	v = (enum verdict)i;
	consistent = str_eq(c, "observed", "expected") &&
	    !str_eq(c, "control", "observed") &&
	    (json_object_get(c, "control_expected") == NULL ||
	    str_eq(c, "control", "control_expected"));
	if (v == V_PASS && !consistent && strict) {
		errbuf_set(err, errlen, "case %s: verdict pass, but observed differs "
		    "from expected or the control did not flip", id);
		return -1;
	}
	*passes = v == V_PASS && consistent;
	return 0;
}

/* Validates the cases array into t[] (ncases, npass, first_bad). */
static int
tally_cases(json_t *cases, int strict, struct tally *t, char *err,
    size_t errlen)
{
	json_t *seen, *c;
	size_t i;
	int fact, passes, rc = -1;

	if (!json_is_array(cases)) {
		errbuf_set(err, errlen, "\"cases\" must be an array");
		return -1;
	}
	if (json_array_size(cases) > MAX_CASES) {
		errbuf_set(err, errlen, "more than %d cases", MAX_CASES);
		return -1;
	}
	if ((seen = json_object()) == NULL) {
		errbuf_set(err, errlen, "out of memory");
		return -1;
	}
	json_array_foreach(cases, i, c) {
		if (check_case(c, i, seen, strict, &fact, &passes, err,
		    errlen) == -1)
			goto out;
		t[fact].ncases++;
		if (passes)
			t[fact].npass++;
		else if (t[fact].first_bad[0] == '\0')
			snprintf(t[fact].first_bad, sizeof(t[fact].first_bad),
			    "%s", json_string_value(json_object_get(c, "id")));
	}
	rc = 0;
out:
	json_decref(seen);
	return rc;
}

/* Validates a facts map (keys among the five, boolean values) into t[]. */
static int
tally_facts(json_t *facts, struct tally *t, char *err, size_t errlen)
{
	char shown[ERRBUF_SHOW_BUF];
	const char *key;
	json_t *v;
	int i;

	if (!json_is_object(facts)) {
		errbuf_set(err, errlen, "\"facts\" must be an object");
		return -1;
	}
	json_object_foreach(facts, key, v) {
		if ((i = fact_index(key)) < 0) {
			errbuf_set(err, errlen, "facts: unknown fact \"%s\"",
			    errbuf_show(key, strlen(key), shown));
			return -1;
		}
		if (!json_is_boolean(v)) {
			errbuf_set(err, errlen, "facts: \"%s\" must be true or false",
			    key);
			return -1;
		}
		t[i].present = 1;
		t[i].claimed = json_is_true(v);
	}
	return 0;
}

static int
proved(const struct tally *t)
{
	return t->claimed && t->ncases > 0 && t->npass == t->ncases;
}

/* Why a claimed-true fact is not proved, or "" when nothing to say. */
static void
unproved_note(const struct tally *t, const char *name, char *note,
    size_t notelen)
{
	if (note == NULL || notelen == 0)
		return;
	note[0] = '\0';
	if (!t->claimed || proved(t))
		return;
	if (t->ncases == 0)
		errbuf_set(note, notelen, "fact %s is claimed true but has no case",
		    name);
	else
		errbuf_set(note, notelen, "fact %s is claimed true but case %s does "
		    "not pass", name, t->first_bad);
}

/* ---- the deployment a run ran against ---- */

/* The report's optional "deployment": what the matrix deployed the guard
 * with (the Docker target: engine, layout, image). Carried into the
 * signed receipt as is, so it must be small, flat and plain: 1-16 keys of
 * [a-z_], each a string of 1-256 printable ASCII bytes, "target",
 * "layout", "engine" and "image_id" among them. */
static int
check_deployment(json_t *d, const char *where, char *err, size_t errlen)
{
	static const char *const need[] = {
		"target", "layout", "engine", "image_id", NULL
	};
	char shown[ERRBUF_SHOW_BUF];
	const char *key, *v;
	json_t *val;
	size_t i, len;

	if (!json_is_object(d) || json_object_size(d) == 0 ||
	    json_object_size(d) > RECEIPT_DEPLOY_KEYS) {
		errbuf_set(err, errlen, "%s: deployment must be an object of 1-%d "
		    "strings", where, RECEIPT_DEPLOY_KEYS);
		return -1;
	}
	json_object_foreach(d, key, val) {
		len = strlen(key);
		for (i = 0; i < len && ((key[i] >= 'a' && key[i] <= 'z') ||
		    key[i] == '_'); i++)
			;
		if (len == 0 || len > 32 || i != len) {
			errbuf_set(err, errlen, "%s: deployment key \"%s\" must be "
			    "1-32 of [a-z_]", where, errbuf_show(key, len, shown));
			return -1;
		}
		if ((v = jsonstrict_str(d, key, &len)) == NULL || len == 0 ||
		    len > RECEIPT_DEPLOY_VALUE) {
			errbuf_set(err, errlen, "%s: deployment \"%s\" must be a "
			    "string of 1-%d bytes", where, key, RECEIPT_DEPLOY_VALUE);
			return -1;
		}
		for (i = 0; i < len; i++) {
			if (v[i] != ' ' && !ascii_is_vchar((unsigned char)v[i])) {
				errbuf_set(err, errlen, "%s: deployment \"%s\" must be "
				    "printable ASCII", where, key);
				return -1;
			}
		}
	}
	for (i = 0; need[i] != NULL; i++) {
		if (json_object_get(d, need[i]) == NULL) {
			errbuf_set(err, errlen, "%s: deployment lacks \"%s\"",
			    where, need[i]);
			return -1;
		}
	}
	return 0;
}

/* ---- report → canonical receipt ---- */

void
receipt_report_free(struct receipt_report *r)
{
	if (r == NULL)
		return;
	json_decref(r->root);
	free(r);
}

struct receipt_report *
receipt_report_parse(const char *buf, size_t len, char *err, size_t errlen)
{
	/* The string-valued keys first: the loop below checks them. */
	static const char *const keys[] = {
		"schema", "provider", "guard_binary", "guard_sha256", "version",
		"ran_at", "facts", "cases", "deployment", NULL
	};
	struct receipt_report *r;
	char shown[ERRBUF_SHOW_BUF];
	const char *extra, *s;
	size_t slen = 0, i;

	if ((r = calloc(1, sizeof(*r))) == NULL) {
		errbuf_set(err, errlen, "out of memory");
		return NULL;
	}
	if ((r->root = load_object(buf, len, "report", err, errlen)) == NULL)
		goto bad;
	if ((extra = jsonstrict_unknown_key(r->root, keys)) != NULL) {
		errbuf_set(err, errlen, "report: unknown key \"%s\"",
		    errbuf_show(extra, strlen(extra), shown));
		goto bad;
	}
	for (i = 0; i < 6; i++) {
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
	if (slen != RECEIPT_SHA256_HEX || !is_lower_hex(s, slen)) {
		errbuf_set(err, errlen, "report: guard_sha256 must be %d lowercase "
		    "hex digits", RECEIPT_SHA256_HEX);
		goto bad;
	}
	s = jsonstrict_str(r->root, "version", &slen);
	if (!is_version(s, slen)) {
		errbuf_set(err, errlen, "report: version \"%s\" must be 1-%d of "
		    "[A-Za-z0-9.+_~-]", errbuf_show(s, slen, shown), MAX_VERSION);
		goto bad;
	}
	s = jsonstrict_str(r->root, "ran_at", &slen);
	if (!is_timestamp(s, slen)) {
		errbuf_set(err, errlen, "report: ran_at \"%s\" must be an RFC 3339 "
		    "UTC time (YYYY-MM-DDTHH:MM:SSZ)", errbuf_show(s, slen, shown));
		goto bad;
	}
	if (json_object_get(r->root, "facts") == NULL ||
	    json_object_get(r->root, "cases") == NULL) {
		errbuf_set(err, errlen, "report: \"facts\" and \"cases\" are "
		    "required");
		goto bad;
	}
	if (tally_facts(json_object_get(r->root, "facts"), r->t, err,
	    errlen) == -1 ||
	    tally_cases(json_object_get(r->root, "cases"), 1, r->t, err,
	    errlen) == -1)
		goto bad;
	if (json_object_get(r->root, "deployment") != NULL &&
	    check_deployment(json_object_get(r->root, "deployment"), "report",
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
	if (note != NULL && notelen > 0)
		note[0] = '\0';
	if (r == NULL || i >= RECEIPT_NFACTS)
		return 0;
	unproved_note(&r->t[i], fact_names[i], note, notelen);
	return proved(&r->t[i]);
}

/* ---- canonical JSON ----
 *
 * Written here rather than by json_dumps so that the bytes do not depend
 * on a jansson version and are exactly those of Python's
 * json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
 * for the values a receipt holds (objects, arrays, strings, booleans): keys
 * sorted bytewise, no whitespace, '"' and '\\' escaped, \b \f \n \r \t
 * short, every other byte below 0x20, DEL and every non-ASCII character
 * as \u with four lowercase hex digits (a surrogate pair above U+FFFF),
 * '/' as is. Numbers and null are refused: a receipt has none. */

struct sbuf {
	char	*p;
	size_t	 len;
	size_t	 cap;
	int	 bad;	/* out of memory, too large or not representable */
};

static void
sb_put(struct sbuf *b, const char *s, size_t n)
{
	size_t cap;
	char *np;

	if (b->bad)
		return;
	if (n > RECEIPT_MAX_BYTES - b->len) {
		b->bad = 1;
		return;
	}
	if (b->len + n + 1 > b->cap) {
		cap = b->cap == 0 ? 4096 : b->cap;
		while (cap < b->len + n + 1)
			cap *= 2;
		if ((np = realloc(b->p, cap)) == NULL) {
			b->bad = 1;
			return;
		}
		b->p = np;
		b->cap = cap;
	}
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = '\0';
}

static void
sb_u16(struct sbuf *b, unsigned int u)
{
	static const char hex[] = "0123456789abcdef";
	char e[6] = { '\\', 'u', hex[(u >> 12) & 0xf], hex[(u >> 8) & 0xf],
	    hex[(u >> 4) & 0xf], hex[u & 0xf] };

	sb_put(b, e, sizeof(e));
}

/* Decodes one UTF-8 sequence at s (n bytes left); returns its length, or
 * 0 when it is not well-formed (jansson only hands out valid UTF-8, but
 * this does not rely on it). */
static size_t
utf8_next(const unsigned char *s, size_t n, unsigned int *cp)
{
	size_t len, i;
	unsigned int c;

	if (s[0] < 0x80) {
		*cp = s[0];
		return 1;
	}
	if (s[0] >= 0xc2 && s[0] <= 0xdf) {
		len = 2;
		c = s[0] & 0x1f;
	} else if (s[0] >= 0xe0 && s[0] <= 0xef) {
		len = 3;
		c = s[0] & 0x0f;
	} else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
		len = 4;
		c = s[0] & 0x07;
	} else {
		return 0;
	}
	if (n < len)
		return 0;
	for (i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		c = c << 6 | (s[i] & 0x3f);
	}
	/* Overlong forms, surrogates and values past U+10FFFF. */
	if ((len == 3 && c < 0x800) || (len == 4 && c < 0x10000) ||
	    (c >= 0xd800 && c <= 0xdfff) || c > 0x10ffff)
		return 0;
	*cp = c;
	return len;
}

/* Not util/jsonw: the canonical form (docs/receipts.md) spells \b \f \n
 * \r \t short and keeps valid UTF-8 as is, where jsonw writes \u00xx
 * for every byte outside printable ASCII. The digest is over these
 * exact bytes, so the two escapings must stay different. */
static void
sb_string(struct sbuf *b, const char *str, size_t n)
{
	const unsigned char *s = (const unsigned char *)str;
	unsigned int cp;
	size_t i = 0, k, run;

	sb_put(b, "\"", 1);
	while (i < n && !b->bad) {
		/* Runs of bytes that need no escape go out in one piece. */
		for (run = i; run < n && s[run] >= 0x20 && s[run] < 0x7f &&
		    s[run] != '"' && s[run] != '\\'; run++)
			;
		sb_put(b, str + i, run - i);
		if ((i = run) >= n)
			break;
		switch (s[i]) {
		case '"':  sb_put(b, "\\\"", 2); i++; continue;
		case '\\': sb_put(b, "\\\\", 2); i++; continue;
		case '\b': sb_put(b, "\\b", 2); i++; continue;
		case '\f': sb_put(b, "\\f", 2); i++; continue;
		case '\n': sb_put(b, "\\n", 2); i++; continue;
		case '\r': sb_put(b, "\\r", 2); i++; continue;
		case '\t': sb_put(b, "\\t", 2); i++; continue;
		default: break;
		}
		if ((k = utf8_next(s + i, n - i, &cp)) == 0) {
			b->bad = 1;
			break;
		}
		if (cp >= 0x10000) {
			cp -= 0x10000;
			sb_u16(b, 0xd800 | (cp >> 10));
			sb_u16(b, 0xdc00 | (cp & 0x3ff));
		} else {
			sb_u16(b, cp);
		}
		i += k;
	}
	sb_put(b, "\"", 1);
}

static int
cmp_keys(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static void
sb_value(struct sbuf *b, json_t *v, int depth)
{
	const char **keys = NULL, *key;
	json_t *x;
	size_t i, n;

	if (b->bad)
		return;
	if (depth > 8) {
		b->bad = 1;
		return;
	}
	switch (json_typeof(v)) {
	case JSON_OBJECT:
		n = json_object_size(v);
		if (n > 0 && (keys = calloc(n, sizeof(*keys))) == NULL) {
			b->bad = 1;
			return;
		}
		i = 0;
		json_object_foreach(v, key, x)
			if (i < n)
				keys[i++] = key;
		if (i > 1)
			qsort(keys, i, sizeof(*keys), cmp_keys);
		sb_put(b, "{", 1);
		for (n = i, i = 0; i < n; i++) {
			if (i > 0)
				sb_put(b, ",", 1);
			sb_string(b, keys[i], strlen(keys[i]));
			sb_put(b, ":", 1);
			sb_value(b, json_object_get(v, keys[i]), depth + 1);
		}
		sb_put(b, "}", 1);
		free(keys);
		return;
	case JSON_ARRAY:
		sb_put(b, "[", 1);
		json_array_foreach(v, i, x) {
			if (i > 0)
				sb_put(b, ",", 1);
			sb_value(b, x, depth + 1);
		}
		sb_put(b, "]", 1);
		return;
	case JSON_STRING:
		sb_string(b, json_string_value(v), json_string_length(v));
		return;
	case JSON_TRUE:
		sb_put(b, "true", 4);
		return;
	case JSON_FALSE:
		sb_put(b, "false", 5);
		return;
	default:
		b->bad = 1;
		return;
	}
}

/* The canonical bytes of obj, malloc'd and NUL-terminated, or NULL (out
 * of memory, larger than RECEIPT_MAX_BYTES, or a number or null). */
static char *
dump_canonical(json_t *obj, size_t *len)
{
	struct sbuf b = { NULL, 0, 0, 0 };

	sb_value(&b, obj, 0);
	if (b.bad || b.p == NULL) {
		free(b.p);
		return NULL;
	}
	*len = b.len;
	return b.p;
}

char *
receipt_canonical(const struct receipt_report *r, const char *sha256,
    size_t *len, char *err, size_t errlen)
{
	json_t *obj = NULL, *facts = NULL, *cases = NULL;
	char rev[MAX_VERSION + sizeof(REV_TAG) + RECEIPT_SHA256_HEX + 1];
	char *out = NULL;
	size_t i;

	if (r == NULL || len == NULL || sha256 == NULL ||
	    strlen(sha256) != RECEIPT_SHA256_HEX ||
	    !is_lower_hex(sha256, RECEIPT_SHA256_HEX)) {
		errbuf_set(err, errlen, "no report or no binary SHA-256");
		return NULL;
	}
	snprintf(rev, sizeof(rev), "%s" REV_TAG "%s",
	    json_string_value(json_object_get(r->root, "version")), sha256);
	if ((facts = json_object()) == NULL ||
	    (cases = json_deep_copy(json_object_get(r->root,
	    "cases"))) == NULL)
		goto oom;
	/* Always all five: a fact the report left out is false. */
	for (i = 0; i < RECEIPT_NFACTS; i++)
		if (json_object_set_new(facts, fact_names[i],
		    json_boolean(proved(&r->t[i]))) == -1)
			goto oom;
	obj = json_pack("{s:s, s:s, s:s, s:O, s:O, s:O}",
	    "schema", RECEIPT_SCHEMA,
	    "provider", RECEIPT_PROVIDER,
	    "provider_revision", rev,
	    "facts", facts,
	    "cases", cases,
	    "ran_at", json_object_get(r->root, "ran_at"));
	if (obj == NULL)
		goto oom;
	/* Signed with the rest: a receipt says which deployment it speaks of. */
	if (json_object_get(r->root, "deployment") != NULL &&
	    json_object_set(obj, "deployment",
	    json_object_get(r->root, "deployment")) == -1)
		goto oom;
	if ((out = dump_canonical(obj, len)) == NULL) {
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
	return out;
}

unsigned char *
receipt_signed_message(const char *canon, size_t len, size_t *outlen)
{
	return bundle_domain_message(RECEIPT_CONTEXT, canon, len, outlen);
}

/* ---- verification ---- */


/* Parses the signed receipt bytes strictly into t[] and the revision's
 * hash. The bytes must be exactly the canonical dump of what they parse
 * to, so one receipt has one signed spelling. */
static json_t *
parse_receipt(const char *buf, size_t len, struct tally *t,
    const char **hash, char *err, size_t errlen)
{
	static const char *const keys[] = {
		"schema", "provider", "provider_revision", "ran_at", "facts",
		"cases", "deployment", NULL
	};
	char shown[ERRBUF_SHOW_BUF], *again = NULL;
	const char *extra, *s;
	json_t *root;
	size_t slen = 0, alen = 0, i;

	if ((root = load_object(buf, len, "signed receipt", err,
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
	if (!is_revision(s, slen, hash)) {
		errbuf_set(err, errlen, "signed receipt: provider_revision must be "
		    "VERSION+sha256:HEX");
		goto bad;
	}
	s = jsonstrict_str(root, "ran_at", &slen);
	if (!is_timestamp(s, slen)) {
		errbuf_set(err, errlen, "signed receipt: ran_at is not an RFC 3339 "
		    "UTC time");
		goto bad;
	}
	if (json_object_get(root, "facts") == NULL ||
	    json_object_get(root, "cases") == NULL) {
		errbuf_set(err, errlen, "signed receipt: \"facts\" and \"cases\" "
		    "are required");
		goto bad;
	}
	if (tally_facts(json_object_get(root, "facts"), t, err,
	    errlen) == -1 ||
	    tally_cases(json_object_get(root, "cases"), 0, t, err,
	    errlen) == -1)
		goto bad;
	if (json_object_get(root, "deployment") != NULL &&
	    check_deployment(json_object_get(root, "deployment"),
	    "signed receipt", err, errlen) == -1)
		goto bad;
	if ((again = dump_canonical(root, &alen)) == NULL) {
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

int
receipt_verify(const struct bundle_keyring *kr, const char *buf, size_t len,
    const char *sha256, struct receipt_verdict *v, char *err, size_t errlen)
{
	static const char *const keys[] = {
		"schema", "key_id", "receipt", "signature", NULL
	};
	struct tally t[RECEIPT_NFACTS];
	unsigned char *rec = NULL, *sig = NULL;
	const char *f[4], *hash = NULL;
	size_t flen[4], reclen = 0, siglen = 0, i, nfacts = 0;
	json_t *env = NULL, *root = NULL;
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
	    !is_lower_hex(sha256, RECEIPT_SHA256_HEX)) {
		errbuf_set(err, errlen, "no SHA-256 of the binary in hand");
		return -1;
	}
	/* One spelling per field, as for bundles: "\/" in the base64 would
	 * be a second one. */
	if (bundle_envelope_escaped(buf, len)) {
		errbuf_set(err, errlen, "receipt envelope holds a JSON escape: its "
		    "keys and values are written as they are");
		goto out;
	}
	if ((env = load_object(buf, len, "receipt envelope", err,
	    errlen)) == NULL)
		goto out;
	if (json_object_size(env) != 4 || jsonstrict_unknown_key(env, keys) != NULL) {
		errbuf_set(err, errlen, "receipt envelope must have exactly the keys "
		    "schema, key_id, receipt, signature");
		goto out;
	}
	for (i = 0; keys[i] != NULL; i++) {
		if ((f[i] = jsonstrict_str(env, keys[i], &flen[i])) == NULL) {
			errbuf_set(err, errlen, "receipt envelope: \"%s\" is not a "
			    "string", keys[i]);
			goto out;
		}
	}
	if (flen[0] != sizeof(RECEIPT_ENVELOPE_SCHEMA) - 1 ||
	    memcmp(f[0], RECEIPT_ENVELOPE_SCHEMA, flen[0]) != 0) {
		errbuf_set(err, errlen, "receipt envelope: schema must be \"%s\"",
		    RECEIPT_ENVELOPE_SCHEMA);
		goto out;
	}
	if (flen[1] != BUNDLE_KEY_ID_LEN || !is_lower_hex(f[1], flen[1])) {
		errbuf_set(err, errlen, "receipt envelope: key_id must be %d "
		    "lowercase hex digits", BUNDLE_KEY_ID_LEN);
		goto out;
	}
	if ((rec = bundle_b64_decode(f[2], flen[2], &reclen)) == NULL ||
	    reclen == 0) {
		errbuf_set(err, errlen, "receipt envelope: receipt is not canonical "
		    "base64");
		goto out;
	}
	if ((sig = bundle_b64_decode(f[3], flen[3], &siglen)) == NULL) {
		errbuf_set(err, errlen, "receipt envelope: signature is not "
		    "canonical base64");
		goto out;
	}
	memcpy(v->key_id, f[1], BUNDLE_KEY_ID_LEN);
	v->key_id[BUNDLE_KEY_ID_LEN] = '\0';

	/* From here on the input is well-formed: every outcome is a grade. */
	rc = 0;
	if ((pk = bundle_keyring_find(kr, f[1])) == NULL) {
		v->reason = RECEIPT_UNTRUSTED_SIGNER;
		errbuf_set(err, errlen, "signer %s is not among the attesters",
		    v->key_id);
		goto out;
	}
	if (siglen != BUNDLE_SIG_LEN ||
	    !bundle_ed25519_verify(pk, RECEIPT_CONTEXT, sig, siglen,
	    (const char *)rec, reclen)) {
		v->reason = RECEIPT_BAD_SIGNATURE;
		errbuf_set(err, errlen, "signature does not verify under attester "
		    "%s", v->key_id);
		goto out;
	}
	/* Signed by a trusted attester, hence parsed. A trusted attester
	 * that signed something that is not a receipt is malformed input,
	 * not a grade. */
	if ((root = parse_receipt((const char *)rec, reclen, t, &hash, err,
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
	for (i = 0; i < RECEIPT_NFACTS; i++)
		nfacts += (size_t)t[i].present;
	if (nfacts == 0) {
		v->grade = RECEIPT_UNSUPPORTED;
		v->reason = RECEIPT_NO_SELECTOR;
		errbuf_set(err, errlen, "the receipt attests no fact (no selector)");
		goto out;
	}
	for (i = 0; i < RECEIPT_NFACTS; i++) {
		if (proved(&t[i]))
			continue;
		v->reason = RECEIPT_FACTS_INCOMPLETE;
		if (!t[i].present)
			errbuf_set(err, errlen, "fact %s is missing", fact_names[i]);
		else if (!t[i].claimed)
			errbuf_set(err, errlen, "fact %s is false", fact_names[i]);
		else
			unproved_note(&t[i], fact_names[i], err, errlen);
		goto out;
	}
	v->grade = RECEIPT_SECURITY_BOUNDARY;
	v->reason = RECEIPT_OK;
out:
	json_decref(root);
	json_decref(env);
	free(rec);
	free(sig);
	return rc;
}

int
receipt_file_sha256(const char *path, char *hex, char *err, size_t errlen)
{
	static const char digits[] = "0123456789abcdef";
	unsigned char buf[65536], md[EVP_MAX_MD_SIZE];
	unsigned long long total = 0;
	EVP_MD_CTX *ctx = NULL;
	unsigned int mdlen = 0, i;
	struct stat st;
	ssize_t r;
	int fd, rc = -1;

	if (path == NULL || hex == NULL) {
		errbuf_set(err, errlen, "no path");
		return -1;
	}
	/* O_NONBLOCK: a FIFO cannot hang the open; it is refused below. */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd == -1) {
		errbuf_set(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) == -1) {
		errbuf_set(err, errlen, "%s: %s", path, strerror(errno));
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		errbuf_set(err, errlen, "%s: not a regular file", path);
		goto out;
	}
	if ((ctx = EVP_MD_CTX_new()) == NULL ||
	    EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) != 1) {
		errbuf_set(err, errlen, "%s: cannot start SHA-256", path);
		goto out;
	}
	/* Bounded by what is read, not by what fstat said. */
	for (;;) {
		r = read(fd, buf, sizeof(buf));
		if (r == -1 && errno == EINTR)
			continue;
		if (r == -1) {
			errbuf_set(err, errlen, "%s: %s", path, strerror(errno));
			goto out;
		}
		if (r == 0)
			break;
		total += (unsigned long long)r;
		if (total > RECEIPT_BINARY_MAX) {
			errbuf_set(err, errlen, "%s: larger than %u bytes", path,
			    RECEIPT_BINARY_MAX);
			goto out;
		}
		if (EVP_DigestUpdate(ctx, buf, (size_t)r) != 1) {
			errbuf_set(err, errlen, "%s: SHA-256 failed", path);
			goto out;
		}
	}
	if (EVP_DigestFinal_ex(ctx, md, &mdlen) != 1 ||
	    mdlen * 2 != RECEIPT_SHA256_HEX) {
		errbuf_set(err, errlen, "%s: SHA-256 failed", path);
		goto out;
	}
	for (i = 0; i < mdlen; i++) {
		hex[2 * i] = digits[md[i] >> 4];
		hex[2 * i + 1] = digits[md[i] & 0xf];
	}
	hex[RECEIPT_SHA256_HEX] = '\0';
	rc = 0;
out:
	if (rc == -1)
		ERR_clear_error();
	EVP_MD_CTX_free(ctx);
	close(fd);
	return rc;
}
