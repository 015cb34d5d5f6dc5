/* conform/suite: suite_parse, suite_grade and suite_evidence_ok.
 *
 * The first byte chooses what the rest is:
 *   even  a suite file: parsed; when accepted, its digest is the SHA-256
 *         of exactly those bytes, its id is 1-32 of [a-z0-9_-], its
 *         version >= 1, a set holding it finds it by id and digest; the
 *         cases it lists, each run perfectly (the suite's words, evidence
 *         of its kind), prove all five facts and pass rparse_cases as a
 *         report would; with one case missing, that case's fact is false
 *         and it is the case named; no case at all proves nothing.
 *   odd   a control evidence, its kind chosen by the second byte: the
 *         verdict of suite_evidence_ok equals a reference reading of the
 *         grammar written here from the spec (KIND NAME: DETAIL, NAME 1-64
 *         of [A-Za-z0-9._:/-], DETAIL 1-200 printable ASCII starting with
 *         [1-9] for the kinds that count).
 * Every refusal has a printable reason. The seeds start from FUZZ_SUITE
 * (tests/fuzz/fuzzsuite.h) and the evidence examples of the spec. */
#include <string.h>

#include <jansson.h>
#include <openssl/evp.h>

#include "conform/rparse.h"
#include "conform/suite.h"
#include "tests/fuzz/fuzz.h"

static const char *const kinds[] = {
	"listener", "resolver", "socket", "counter", "process", "log"
};

static void
hex_sha256(const char *b, size_t len, char *hex)
{
	static const char digits[] = "0123456789abcdef";
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int n = 0, i;

	FUZZ_CHECK(EVP_Digest(b, len, md, &n, EVP_sha256(), NULL) == 1);
	FUZZ_CHECK(n == 32);
	for (i = 0; i < n; i++) {
		hex[2 * i] = digits[md[i] >> 4];
		hex[2 * i + 1] = digits[md[i] & 0xf];
	}
	hex[64] = '\0';
}

/* The cases of the suite file root, each as a perfect run would report
 * it, with the case at index skip left out (none when skip >= n). */
static json_t *
perfect_cases(json_t *root, size_t skip)
{
	json_t *out = json_array(), *c, *rc;
	const char *kind;
	char ev[64];
	size_t i;

	FUZZ_CHECK(out != NULL);
	json_array_foreach(json_object_get(root, "cases"), i, c) {
		if (i == skip)
			continue;
		kind = json_string_value(json_object_get(c, "evidence"));
		snprintf(ev, sizeof(ev), "%s fuzz:x: 1 seen", kind);
		rc = json_pack("{s:O, s:O, s:s, s:O, s:O, s:O, s:O, s:s, s:s}",
		    "id", json_object_get(c, "id"),
		    "fact", json_object_get(c, "fact"), "probe", "p",
		    "expected", json_object_get(c, "expected"),
		    "observed", json_object_get(c, "expected"),
		    "control", json_object_get(c, "control_expected"),
		    "control_expected", json_object_get(c, "control_expected"),
		    "control_evidence", ev, "verdict", "pass");
		FUZZ_CHECK(rc != NULL);
		FUZZ_CHECK(json_array_append_new(out, rc) == 0);
	}
	return out;
}

static void
suite_path(const char *b, size_t len)
{
	struct suite *s;
	struct suite_set set;
	struct suite_grade g;
	json_t *root, *cases;
	char *c = fuzz_dup(b, len), err[1024] = "", hex[65];
	const char *id;
	size_t i, n, f;

	s = suite_parse(c, len, err, sizeof(err));
	free(c);
	if (s == NULL) {
		FUZZ_CHECK(err[0] != '\0' && fuzz_printable(err));
		return;
	}
	hex_sha256(b, len, hex);
	FUZZ_CHECK(strcmp(suite_digest(s), hex) == 0);
	id = suite_id(s);
	FUZZ_CHECK(strlen(id) >= 1 && strlen(id) <= SUITE_MAX_ID);
	FUZZ_CHECK(strspn(id, "abcdefghijklmnopqrstuvwxyz0123456789_-") ==
	    strlen(id));
	FUZZ_CHECK(suite_version(s) >= 1);
	set.v = &s;
	set.n = 1;
	FUZZ_CHECK(suite_set_by_id(&set, id, strlen(id)) == s);
	FUZZ_CHECK(suite_set_by_digest(&set, hex, 64) == s);

	FUZZ_CHECK((root = json_loadb(b, len, 0, NULL)) != NULL);
	n = json_array_size(json_object_get(root, "cases"));
	FUZZ_CHECK(n >= 1 && n <= SUITE_MAX_CASES);
	/* A perfect run proves every fact, and is a report's cases. */
	cases = perfect_cases(root, n);
	FUZZ_CHECK(rparse_cases(cases, 1, err, sizeof(err)) == 0);
	FUZZ_CHECK(suite_grade(s, cases, &g) == 0);
	FUZZ_CHECK(g.ncases == n);
	for (f = 0; f < RPARSE_NFACTS; f++) {
		FUZZ_CHECK(g.proved[f] && g.first_bad[f] == NULL);
		FUZZ_CHECK(g.nrequired[f] >= 1 && g.npass[f] == g.nrequired[f]);
	}
	suite_grade_free(&g);
	json_decref(cases);
	/* One case left out: its fact is false, for it. */
	i = (size_t)b[len / 2] % n;
	cases = perfect_cases(root, i);
	FUZZ_CHECK(suite_grade(s, cases, &g) == 0);
	f = g.cases[i].fact;
	FUZZ_CHECK(g.cases[i].status == SUITE_CASE_MISSING);
	FUZZ_CHECK(!g.proved[f] && g.first_bad[f] == &g.cases[i]);
	FUZZ_CHECK(g.npass[f] + 1 == g.nrequired[f]);
	suite_grade_free(&g);
	json_decref(cases);
	/* Nothing run proves nothing. */
	cases = json_array();
	FUZZ_CHECK(cases != NULL && suite_grade(s, cases, &g) == 0);
	for (f = 0; f < RPARSE_NFACTS; f++)
		FUZZ_CHECK(!g.proved[f] && g.npass[f] == 0);
	for (i = 0; i < g.ncases; i++)
		FUZZ_CHECK(g.cases[i].status == SUITE_CASE_MISSING);
	suite_grade_free(&g);
	json_decref(cases);
	json_decref(root);
	suite_free(s);
}

/* The grammar read from the spec, one rule at a time. */
static int
evidence_ref(const char *kind, const char *ev, size_t len)
{
	size_t k = strlen(kind), i, name, detail;
	int counts = strcmp(kind, "process") != 0;

	if (strcmp(kind, "log") == 0)		/* not a kind */
		return 0;
	if (len < k + 1 || memcmp(ev, kind, k) != 0 || ev[k] != ' ')
		return 0;
	/* NAME runs to the first space, which ": " ends. */
	for (i = k + 1; i < len && ev[i] != ' '; i++)
		if (!((ev[i] >= 'a' && ev[i] <= 'z') ||
		    (ev[i] >= 'A' && ev[i] <= 'Z') ||
		    (ev[i] >= '0' && ev[i] <= '9') ||
		    (ev[i] != '\0' && strchr("._:/-", ev[i]) != NULL)))
			return 0;
	if (i >= len || ev[i - 1] != ':')
		return 0;
	name = i - 1 - (k + 1);
	if (name < 1 || name > 64)
		return 0;
	detail = len - (i + 1);
	if (detail < 1 || detail > SUITE_MAX_EVIDENCE)
		return 0;
	for (i = len - detail; i < len; i++)
		if ((unsigned char)ev[i] < 0x20 || (unsigned char)ev[i] > 0x7e)
			return 0;
	return !counts || (ev[len - detail] >= '1' && ev[len - detail] <= '9');
}

static void
evidence_path(const char *b, size_t len)
{
	const char *kind;
	char *c;

	if (len == 0)
		return;
	kind = kinds[(unsigned char)b[0] % (sizeof(kinds) / sizeof(kinds[0]))];
	c = fuzz_dup(b + 1, len - 1);
	FUZZ_CHECK(suite_evidence_ok(kind, c, len - 1) ==
	    evidence_ref(kind, c, len - 1));
	free(c);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size == 0)
		return 0;
	if ((data[0] & 1) == 0)
		suite_path((const char *)data + 1, size - 1);
	else
		evidence_path((const char *)data + 1, size - 1);
	return 0;
}
