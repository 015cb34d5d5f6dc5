/* The grammar reports, signed receipts and suites share (docs/receipts.md):
 * the fact names, field syntax, the facts map and the cases. Pure: bytes or
 * JSON in, a tally or an error message out. The lowest layer of conform/:
 * it includes none of the others.
 *
 * A fact is never copied from what someone claims: conform/suite.c grades
 * it from the cases its suite requires. Here a case is only checked for
 * form, and, in a report, for agreeing with itself. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "conform/rparse.h"
#include "util/ascii.h"
#include "util/errbuf.h"
#include "util/jsonstrict.h"
#include "util/names.h"

#define MAX_CASES	4096
#define MAX_STRING	4096	/* bytes of any case string */

enum verdict { V_PASS, V_FAIL, V_INCONCLUSIVE };

/* Sorted: the order the canonical facts map has. */
static const char *const fact_names[RPARSE_NFACTS + 1] = {
	"authority_separation", "connect_time_public_address",
	"default_deny", "exact_destination_match", "redirect_recheck", NULL
};

const char *
rparse_fact_name(size_t i)
{
	return i < RPARSE_NFACTS ? fact_names[i] : NULL;
}

int
rparse_fact_index(const char *s, size_t len)
{
	return names_index(fact_names, RPARSE_NFACTS, s, len);
}

int
rparse_is_lower_hex(const char *s, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (!(ascii_is_digit((unsigned char)s[i]) ||
		    (s[i] >= 'a' && s[i] <= 'f')))
			return 0;
	return 1;
}

/* 1-max of [A-Za-z0-9] and the bytes in punct. */
static int
is_word(const char *s, size_t len, size_t max, const char *punct)
{
	size_t i;

	if (len == 0 || len > max)
		return 0;
	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];

		if (!(ascii_is_digit(c) || ascii_is_alpha(c) ||
		    (c != '\0' && strchr(punct, c) != NULL)))
			return 0;
	}
	return 1;
}

/* Case ids are short names ([A-Za-z0-9._-], 1-64) so that messages can
 * name them as they are. */
int
rparse_is_case_id(const char *s, size_t len)
{
	return is_word(s, len, RPARSE_MAX_ID, "._-");
}

/* A version: 1-64 of [A-Za-z0-9.+_~-], e.g. "0.1.0" or "0.1.0+git.ab12". */
int
rparse_is_version(const char *s, size_t len)
{
	return is_word(s, len, RPARSE_MAX_VERSION, ".+_~-");
}

/* The value of n decimal digits at s (checked by the caller). */
static int
digits(const char *s, int n)
{
	int v = 0;

	while (n-- > 0)
		v = v * 10 + (*s++ - '0');
	return v;
}

static int
two_digits(const char *s, int lo, int hi)
{
	int v;

	if (!ascii_is_digit((unsigned char)s[0]) ||
	    !ascii_is_digit((unsigned char)s[1]))
		return 0;
	v = digits(s, 2);
	return v >= lo && v <= hi;
}

/* The last day of month m (1-12) of year y, Gregorian. */
static int
month_days(int y, int m)
{
	static const int days[12] = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31,
	    30, 31 };

	if (m == 2 && ((y % 4 == 0 && y % 100 != 0) || y % 400 == 0))
		return 29;
	return days[m - 1];
}

/* RFC 3339 in UTC: YYYY-MM-DDTHH:MM:SS, optional .1-9 digits, then Z;
 * a day the month does not have (2026-02-31) is no date. */
int
rparse_is_timestamp(const char *s, size_t len)
{
	size_t i;
	int y, m;

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
	y = digits(s, 4);
	m = digits(s + 5, 2);
	if (digits(s + 8, 2) > month_days(y, m))
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

long long
rparse_time(const char *s, size_t len)
{
	struct tm tm;
	time_t t;

	if (s == NULL || !rparse_is_timestamp(s, len))
		return -1;
	memset(&tm, 0, sizeof(tm));
	tm.tm_year = digits(s, 4) - 1900;
	tm.tm_mon = digits(s + 5, 2) - 1;
	tm.tm_mday = digits(s + 8, 2);
	tm.tm_hour = digits(s + 11, 2);
	tm.tm_min = digits(s + 14, 2);
	tm.tm_sec = digits(s + 17, 2);
	if ((t = timegm(&tm)) == (time_t)-1)
		return -1;
	return (long long)t;
}

/* "<version>+sha256:<64 lowercase hex>"; *hash points at the hex. */
int
rparse_is_revision(const char *s, size_t len, const char **hash)
{
	size_t tag = sizeof(RPARSE_REV_TAG) - 1, vlen;

	if (len < 1 + tag + RPARSE_SHA256_HEX)
		return 0;
	vlen = len - tag - RPARSE_SHA256_HEX;
	if (!rparse_is_version(s, vlen) ||
	    memcmp(s + vlen, RPARSE_REV_TAG, tag) != 0 ||
	    !rparse_is_lower_hex(s + vlen + tag, RPARSE_SHA256_HEX))
		return 0;
	*hash = s + vlen + tag;
	return 1;
}

json_t *
rparse_object(const char *buf, size_t len, const char *what, char *err,
    size_t errlen)
{
	json_error_t jerr;
	json_t *root;

	if (buf == NULL || len == 0) {
		errbuf_set(err, errlen, "empty %s", what);
		return NULL;
	}
	if (len > RPARSE_MAX_BYTES) {
		errbuf_set(err, errlen, "%s larger than %u bytes", what,
		    RPARSE_MAX_BYTES);
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

/* Checks one case object. With strict, a case that says "pass" but whose
 * strings disagree is refused. Returns 0 or -1 with err set. */
static int
check_case(json_t *c, size_t idx, json_t *seen, int strict, char *err,
    size_t errlen)
{
	static const char *const keys[] = {
		"id", "fact", "probe", "expected", "observed", "control",
		"control_expected", "control_evidence", "verdict", NULL
	};
	static const char *const verdicts[] = {
		"pass", "fail", "inconclusive", NULL
	};
	char shown[ERRBUF_SHOW_BUF];
	const char *extra, *s, *id;
	size_t len = 0, idlen = 0, i;
	enum verdict v = V_FAIL;
	json_t *val;
	int consistent, vi;

	if (!json_is_object(c)) {
		errbuf_set(err, errlen, "cases[%zu] must be an object", idx);
		return -1;
	}
	if ((extra = jsonstrict_unknown_key(c, keys)) != NULL) {
		errbuf_set(err, errlen, "cases[%zu]: unknown key \"%s\"", idx,
		    errbuf_show(extra, strlen(extra), shown));
		return -1;
	}
	/* Every key is required; all are strings. */
	for (i = 0; keys[i] != NULL; i++) {
		val = json_object_get(c, keys[i]);
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
	if (!rparse_is_case_id(id, idlen)) {
		errbuf_set(err, errlen, "cases[%zu]: id \"%s\" must be 1-%d of "
		    "[A-Za-z0-9._-]", idx, errbuf_show(id, idlen, shown),
		    RPARSE_MAX_ID);
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
	if (rparse_fact_index(s, len) < 0) {
		errbuf_set(err, errlen, "case %s: unknown fact \"%s\"", id,
		    errbuf_show(s, len, shown));
		return -1;
	}
	s = jsonstrict_str(c, "verdict", &len);
	if ((vi = names_index(verdicts, NAMES_N(verdicts), s, len)) < 0) {
		errbuf_set(err, errlen, "case %s: verdict must be pass, fail or "
		    "inconclusive", id);
		return -1;
	}
	v = (enum verdict)vi;
	/* A control that reached nothing carries no evidence: that case is
	 * inconclusive, whatever its words say. */
	consistent = str_eq(c, "observed", "expected") &&
	    !str_eq(c, "control", "observed") &&
	    str_eq(c, "control", "control_expected") &&
	    json_string_length(json_object_get(c, "control_evidence")) > 0;
	if (v == V_PASS && !consistent && strict) {
		errbuf_set(err, errlen, "case %s: verdict pass, but observed differs "
		    "from expected, the control did not flip, or the control has "
		    "no evidence", id);
		return -1;
	}
	return 0;
}

int
rparse_cases(json_t *cases, int strict, char *err, size_t errlen)
{
	json_t *seen, *c;
	size_t i;
	int rc = -1;

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
		if (check_case(c, i, seen, strict, err, errlen) == -1)
			goto out;
	}
	rc = 0;
out:
	json_decref(seen);
	return rc;
}

/* Validates a facts map (keys among the five, boolean values) into t[]. */
int
rparse_facts(json_t *facts, struct rparse_tally *t, char *err, size_t errlen)
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
		if ((i = rparse_fact_index(key, strlen(key))) < 0) {
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

/* The Docker target's evidence (engine, layout, image) rides in the
 * signed receipt as is, so it must be small, flat and plain. */
int
rparse_deployment(json_t *d, const char *where, char *err, size_t errlen)
{
	static const char *const need[] = {
		"target", "layout", "engine", "image_id", NULL
	};
	char shown[ERRBUF_SHOW_BUF];
	const char *key, *v;
	json_t *val;
	size_t i, len;

	if (!json_is_object(d) || json_object_size(d) == 0 ||
	    json_object_size(d) > RPARSE_DEPLOY_KEYS) {
		errbuf_set(err, errlen, "%s: deployment must be an object of 1-%d "
		    "strings", where, RPARSE_DEPLOY_KEYS);
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
		    len > RPARSE_DEPLOY_VALUE) {
			errbuf_set(err, errlen, "%s: deployment \"%s\" must be a "
			    "string of 1-%d bytes", where, key, RPARSE_DEPLOY_VALUE);
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
