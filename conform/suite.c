/* Conformance suites (docs/receipts.md "Suites and evidence"): parse a
 * suite strictly, digest it, and grade a report's or a receipt's cases
 * against it. Pure but for the built-in table, which is const data.
 *
 * Why a suite: a report that lists one case per fact, each saying "pass",
 * proves nothing unless someone fixed beforehand which cases a fact needs
 * and what each must show. The suite is that fixed list. It is named by
 * digest in the signed receipt, so a verifier grades with exactly the list
 * the attester signed under, and a changed list is another suite. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>
#include <openssl/evp.h>

#include "conform/rparse.h"
#include "conform/suite.h"
#include "conform/suiteblob.h"
#include "util/ascii.h"
#include "util/errbuf.h"
#include "util/jsonstrict.h"
#include "util/names.h"

#define MAX_NAME	64	/* bytes of an evidence's NAME */

struct suite_entry {
	char	*id;
	size_t	 fact;
	char	*expected;
	char	*control_expected;
	char	*kind;
};

struct suite {
	char			 id[SUITE_MAX_ID + 1];
	long long		 version;
	char			 digest[RPARSE_SHA256_HEX + 1];
	struct suite_entry	*cases;
	size_t			 ncases;
};

/* The evidence kinds, and whether each starts its detail with a count:
 * a listener, resolver, socket or counter that saw nothing is no
 * evidence, and "0 connections" must not read as some. */
static const char *const kind_names[] = {
	"listener", "resolver", "socket", "counter", "process"
};
static const unsigned char kind_counts[] = { 1, 1, 1, 1, 0 };
_Static_assert(NAMES_N(kind_names) == NAMES_N(kind_counts),
    "a count rule for each evidence kind");

static int
kind_index(const char *s, size_t len)
{
	return names_index(kind_names, NAMES_N(kind_names), s, len);
}

const char *
suite_status_name(enum suite_status st)
{
	switch (st) {
	case SUITE_CASE_PASS:
		return "passes";
	case SUITE_CASE_MISSING:
		return "is missing";
	case SUITE_CASE_WRONG_FACT:
		return "names another fact";
	case SUITE_CASE_NOT_PASS:
		return "does not pass";
	case SUITE_CASE_WRONG_OBSERVED:
		return "observed what the suite does not expect";
	case SUITE_CASE_WRONG_CONTROL:
		return "has a control the suite does not expect";
	case SUITE_CASE_NO_EVIDENCE:
		return "has no live evidence of its control";
	}
	return "does not pass";
}

int
suite_evidence_ok(const char *kind, const char *ev, size_t len)
{
	size_t klen, i, name;
	int k;

	if (kind == NULL || ev == NULL)
		return 0;
	klen = strlen(kind);
	if ((k = kind_index(kind, klen)) < 0 || len <= klen + 1 ||
	    memcmp(ev, kind, klen) != 0 || ev[klen] != ' ')
		return 0;
	/* NAME: 1-64 of [A-Za-z0-9._:/-], then ": ". */
	for (i = klen + 1; i < len && ev[i] != ' '; i++) {
		unsigned char c = (unsigned char)ev[i];

		if (!(ascii_is_alpha(c) || ascii_is_digit(c) ||
		    strchr("._:/-", c) != NULL) || c == '\0')
			return 0;
	}
	name = i - klen - 1;
	/* The separator is the name's last ':' and a space. */
	if (name < 2 || name - 1 > MAX_NAME || ev[i - 1] != ':' || i >= len)
		return 0;
	i++;
	if (len - i == 0 || len - i > SUITE_MAX_EVIDENCE)
		return 0;
	for (name = i; name < len; name++)
		if (!ascii_is_vchar((unsigned char)ev[name]) && ev[name] != ' ')
			return 0;
	if (!kind_counts[k])
		return 1;
	if (ev[i] < '1' || ev[i] > '9')
		return 0;
	while (i < len && ascii_is_digit((unsigned char)ev[i]))
		i++;
	return i == len || !ascii_is_digit((unsigned char)ev[i]);
}

static void
entry_free(struct suite_entry *e)
{
	free(e->id);
	free(e->expected);
	free(e->control_expected);
	free(e->kind);
}

void
suite_free(struct suite *s)
{
	size_t i;

	if (s == NULL)
		return;
	for (i = 0; i < s->ncases; i++)
		entry_free(&s->cases[i]);
	free(s->cases);
	free(s);
}

int
suite_id_ok(const char *s, size_t len)
{
	size_t i;

	for (i = 0; i < len && ((s[i] >= 'a' && s[i] <= 'z') ||
	    ascii_is_digit((unsigned char)s[i]) || s[i] == '_' || s[i] == '-');
	    i++)
		;
	return len > 0 && len <= SUITE_MAX_ID && i == len;
}

const char *
suite_id(const struct suite *s)
{
	return s->id;
}

long long
suite_version(const struct suite *s)
{
	return s->version;
}

const char *
suite_digest(const struct suite *s)
{
	return s->digest;
}

/* The string at key, 1-max bytes with no NUL, copied; NULL otherwise. */
static char *
str_copy(json_t *obj, const char *key, size_t max)
{
	const char *v;
	size_t len;
	char *out;

	if ((v = jsonstrict_str(obj, key, &len)) == NULL || len == 0 ||
	    len > max || strlen(v) != len)
		return NULL;
	if ((out = malloc(len + 1)) == NULL)
		return NULL;
	memcpy(out, v, len + 1);
	return out;
}

/* One case of the suite into e. Returns 0 or -1 with err set. */
static int
parse_entry(json_t *c, size_t idx, json_t *seen, struct suite_entry *e,
    char *err, size_t errlen)
{
	static const char *const keys[] = {
		"id", "fact", "expected", "control_expected", "evidence", NULL
	};
	char shown[ERRBUF_SHOW_BUF];
	const char *extra, *f;
	size_t len = 0;
	int fi;

	if (!json_is_object(c))
		return errbuf_fail(err, errlen, "cases[%zu] must be an object",
		    idx);
	if ((extra = jsonstrict_unknown_key(c, keys)) != NULL)
		return errbuf_fail(err, errlen, "cases[%zu]: unknown key \"%s\"",
		    idx, errbuf_show(extra, strlen(extra), shown));
	f = jsonstrict_str(c, "id", &len);
	if (f == NULL || !rparse_is_case_id(f, len))
		return errbuf_fail(err, errlen, "cases[%zu]: id must be 1-%d of "
		    "[A-Za-z0-9._-]", idx, RPARSE_MAX_ID);
	if (json_object_get(seen, f) != NULL)
		return errbuf_fail(err, errlen, "cases[%zu]: duplicate id \"%s\"",
		    idx, f);
	if (json_object_set_new(seen, f, json_true()) == -1)
		return errbuf_fail(err, errlen, "out of memory");
	f = jsonstrict_str(c, "fact", &len);
	if (f == NULL || (fi = rparse_fact_index(f, len)) < 0)
		return errbuf_fail(err, errlen, "case %s: unknown fact",
		    json_string_value(json_object_get(c, "id")));
	e->fact = (size_t)fi;
	f = jsonstrict_str(c, "evidence", &len);
	if (f == NULL || kind_index(f, len) < 0)
		return errbuf_fail(err, errlen, "case %s: evidence must be "
		    "listener, resolver, socket, counter or process",
		    json_string_value(json_object_get(c, "id")));
	if ((e->id = str_copy(c, "id", RPARSE_MAX_ID)) == NULL ||
	    (e->kind = str_copy(c, "evidence", 16)) == NULL)
		return errbuf_fail(err, errlen, "out of memory");
	if ((e->expected = str_copy(c, "expected", 4096)) == NULL ||
	    (e->control_expected = str_copy(c, "control_expected",
	    4096)) == NULL)
		return errbuf_fail(err, errlen, "case %s: expected and "
		    "control_expected must be strings of 1-4096 bytes", e->id);
	if (strcmp(e->expected, e->control_expected) == 0)
		return errbuf_fail(err, errlen, "case %s: a control that expects "
		    "what the probe expects proves nothing", e->id);
	return 0;
}

static int
digest_hex(const char *buf, size_t len, char *hex)
{
	static const char digits[] = "0123456789abcdef";
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int mdlen = 0, i;

	if (EVP_Digest(buf, len, md, &mdlen, EVP_sha256(), NULL) != 1 ||
	    mdlen * 2 != RPARSE_SHA256_HEX)
		return -1;
	for (i = 0; i < mdlen; i++) {
		hex[2 * i] = digits[md[i] >> 4];
		hex[2 * i + 1] = digits[md[i] & 0xf];
	}
	hex[RPARSE_SHA256_HEX] = '\0';
	return 0;
}

struct suite *
suite_parse(const char *buf, size_t len, char *err, size_t errlen)
{
	static const char *const keys[] = {
		"schema", "id", "version", "target", "cases", NULL
	};
	char shown[ERRBUF_SHOW_BUF];
	struct suite *s = NULL;
	json_t *root = NULL, *cases, *seen = NULL, *c;
	const char *extra, *v;
	size_t vlen = 0, i, f;
	int covered[RPARSE_NFACTS] = { 0 };

	if (len > SUITE_MAX_BYTES) {
		errbuf_set(err, errlen, "suite larger than %u bytes",
		    SUITE_MAX_BYTES);
		return NULL;
	}
	if ((root = rparse_object(buf, len, "suite", err, errlen)) == NULL)
		return NULL;
	if ((s = calloc(1, sizeof(*s))) == NULL ||
	    (seen = json_object()) == NULL) {
		errbuf_set(err, errlen, "out of memory");
		goto bad;
	}
	if ((extra = jsonstrict_unknown_key(root, keys)) != NULL) {
		errbuf_set(err, errlen, "suite: unknown key \"%s\"",
		    errbuf_show(extra, strlen(extra), shown));
		goto bad;
	}
	v = jsonstrict_str(root, "schema", &vlen);
	if (v == NULL || vlen != strlen(SUITE_SCHEMA) ||
	    memcmp(v, SUITE_SCHEMA, vlen) != 0) {
		errbuf_set(err, errlen, "suite: schema must be \"%s\"",
		    SUITE_SCHEMA);
		goto bad;
	}
	v = jsonstrict_str(root, "id", &vlen);
	if (v == NULL || !suite_id_ok(v, vlen)) {
		errbuf_set(err, errlen, "suite: id must be 1-%d of [a-z0-9_-]",
		    SUITE_MAX_ID);
		goto bad;
	}
	memcpy(s->id, v, vlen);
	if (!json_is_integer(json_object_get(root, "version")) ||
	    (s->version = json_integer_value(json_object_get(root,
	    "version"))) < 1 || s->version > 999999999999999999LL) {
		/* At most 18 digits: what a receipt's version string holds. */
		errbuf_set(err, errlen, "suite %s: version must be an integer "
		    "1-999999999999999999", s->id);
		goto bad;
	}
	v = jsonstrict_str(root, "target", &vlen);
	for (i = 0; v != NULL && i < vlen && (ascii_is_vchar((unsigned char)v[i]) ||
	    v[i] == ' '); i++)
		;
	if (v == NULL || vlen == 0 || vlen > SUITE_MAX_TARGET || i != vlen) {
		errbuf_set(err, errlen, "suite %s: target must be a string of 1-%d "
		    "bytes, printable ASCII", s->id, SUITE_MAX_TARGET);
		goto bad;
	}
	cases = json_object_get(root, "cases");
	if (!json_is_array(cases) || json_array_size(cases) == 0 ||
	    json_array_size(cases) > SUITE_MAX_CASES) {
		errbuf_set(err, errlen, "suite %s: cases must be an array of 1-%d",
		    s->id, SUITE_MAX_CASES);
		goto bad;
	}
	if ((s->cases = calloc(json_array_size(cases),
	    sizeof(*s->cases))) == NULL) {
		errbuf_set(err, errlen, "out of memory");
		goto bad;
	}
	json_array_foreach(cases, i, c) {
		s->ncases++;
		if (parse_entry(c, i, seen, &s->cases[i], err, errlen) == -1)
			goto bad;
		covered[s->cases[i].fact] = 1;
	}
	/* A suite that leaves a fact without cases could never grade it
	 * true: that is a mistake in the suite, said when it is read. */
	for (f = 0; f < RPARSE_NFACTS; f++) {
		if (!covered[f]) {
			errbuf_set(err, errlen, "suite %s: no case for fact %s",
			    s->id, rparse_fact_name(f));
			goto bad;
		}
	}
	if (digest_hex(buf, len, s->digest) == -1) {
		errbuf_set(err, errlen, "suite %s: SHA-256 failed", s->id);
		goto bad;
	}
	json_decref(seen);
	json_decref(root);
	return s;
bad:
	json_decref(seen);
	json_decref(root);
	suite_free(s);
	return NULL;
}

int
suite_builtin_load(struct suite_set *set, char *err, size_t errlen)
{
	char why[512];
	size_t i;

	set->v = NULL;
	set->n = 0;
	if (suite_nblobs == 0)
		return 0;
	if ((set->v = calloc(suite_nblobs, sizeof(*set->v))) == NULL)
		return errbuf_fail(err, errlen, "out of memory");
	for (i = 0; i < suite_nblobs; i++) {
		set->v[i] = suite_parse((const char *)suite_blobs[i].bytes,
		    suite_blobs[i].len, why, sizeof(why));
		if (set->v[i] == NULL) {
			suite_set_free(set);
			return errbuf_fail(err, errlen, "built-in suite %s: %s",
			    suite_blobs[i].name, why);
		}
		set->n++;
		/* One suite per id, named by its file: a receipt's id then
		 * means one file of conform/suites/. */
		if (strlen(suite_blobs[i].name) != strlen(set->v[i]->id) + 5 ||
		    strncmp(suite_blobs[i].name, set->v[i]->id,
		    strlen(set->v[i]->id)) != 0 ||
		    suite_set_by_id(set, set->v[i]->id,
		    strlen(set->v[i]->id)) != set->v[i]) {
			suite_set_free(set);
			return errbuf_fail(err, errlen, "built-in suite %s: its id is "
			    "not its file name, or another suite has it",
			    suite_blobs[i].name);
		}
	}
	return 0;
}

void
suite_set_free(struct suite_set *set)
{
	size_t i;

	if (set == NULL)
		return;
	for (i = 0; i < set->n; i++)
		suite_free(set->v[i]);
	free(set->v);
	set->v = NULL;
	set->n = 0;
}

const struct suite *
suite_set_by_id(const struct suite_set *set, const char *id, size_t len)
{
	size_t i;

	for (i = 0; set != NULL && id != NULL && i < set->n; i++)
		if (strlen(set->v[i]->id) == len &&
		    memcmp(set->v[i]->id, id, len) == 0)
			return set->v[i];
	return NULL;
}

const struct suite *
suite_set_by_digest(const struct suite_set *set, const char *digest,
    size_t len)
{
	size_t i;

	if (digest == NULL || len != RPARSE_SHA256_HEX)
		return NULL;
	for (i = 0; set != NULL && i < set->n; i++)
		if (memcmp(set->v[i]->digest, digest, len) == 0)
			return set->v[i];
	return NULL;
}

static int
str_is(json_t *c, const char *key, const char *want)
{
	const char *v;
	size_t len;

	return (v = jsonstrict_str(c, key, &len)) != NULL &&
	    strlen(want) == len && memcmp(v, want, len) == 0;
}

/* How the case c (NULL: absent) stands against the suite's entry e. */
static enum suite_status
grade_case(const struct suite_entry *e, json_t *c)
{
	const char *ev;
	size_t len = 0;

	if (c == NULL)
		return SUITE_CASE_MISSING;
	if (!str_is(c, "fact", rparse_fact_name(e->fact)))
		return SUITE_CASE_WRONG_FACT;
	if (!str_is(c, "verdict", "pass"))
		return SUITE_CASE_NOT_PASS;
	if (!str_is(c, "observed", e->expected) ||
	    !str_is(c, "expected", e->expected))
		return SUITE_CASE_WRONG_OBSERVED;
	if (!str_is(c, "control", e->control_expected) ||
	    !str_is(c, "control_expected", e->control_expected))
		return SUITE_CASE_WRONG_CONTROL;
	ev = jsonstrict_str(c, "control_evidence", &len);
	if (ev == NULL || !suite_evidence_ok(e->kind, ev, len))
		return SUITE_CASE_NO_EVIDENCE;
	return SUITE_CASE_PASS;
}

int
suite_grade(const struct suite *s, json_t *cases, struct suite_grade *g)
{
	json_t *byid = NULL, *c;
	struct suite_case *sc;
	const char *id;
	size_t i, f;

	memset(g, 0, sizeof(*g));
	if ((g->cases = calloc(s->ncases, sizeof(*g->cases))) == NULL ||
	    (byid = json_object()) == NULL)
		goto oom;
	json_array_foreach(cases, i, c) {
		if ((id = json_string_value(json_object_get(c, "id"))) != NULL &&
		    json_object_set(byid, id, c) == -1)
			goto oom;
	}
	for (f = 0; f < RPARSE_NFACTS; f++)
		g->proved[f] = 1;
	for (i = 0; i < s->ncases; i++) {
		sc = &g->cases[i];
		c = json_object_get(byid, s->cases[i].id);
		sc->id = s->cases[i].id;
		sc->fact = s->cases[i].fact;
		sc->kind = s->cases[i].kind;
		sc->status = grade_case(&s->cases[i], c);
		sc->evidence = c != NULL ? json_string_value(json_object_get(c,
		    "control_evidence")) : NULL;
		sc->verdict = c != NULL ? json_string_value(json_object_get(c,
		    "verdict")) : NULL;
		g->nrequired[sc->fact]++;
		if (sc->status == SUITE_CASE_PASS) {
			g->npass[sc->fact]++;
		} else if (g->proved[sc->fact]) {
			g->proved[sc->fact] = 0;
			g->first_bad[sc->fact] = sc;
		}
	}
	g->ncases = s->ncases;
	/* suite_parse refuses a suite with a fact uncovered; kept as a
	 * rule here too, so no path grades a fact on zero cases. */
	for (f = 0; f < RPARSE_NFACTS; f++)
		if (g->nrequired[f] == 0)
			g->proved[f] = 0;
	json_decref(byid);
	return 0;
oom:
	json_decref(byid);
	suite_grade_free(g);
	return -1;
}

void
suite_grade_free(struct suite_grade *g)
{
	if (g == NULL)
		return;
	free(g->cases);
	memset(g, 0, sizeof(*g));
}
