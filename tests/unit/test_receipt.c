/* Conformance receipts and grades (conform/, ctl/receiptcmd.c):
 * pinned canonical bytes and an independently made signature; the round
 * trip to security_boundary; and every way a receipt must fall short of
 * it, each named: tampered bytes, a foreign binary, an untrusted signer,
 * a missing, false or unproved fact, a malformed envelope. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include <jansson.h>
#include <openssl/evp.h>
#include <openssl/pem.h>

#include "ctl/receiptcmd.h"
#include "plane/bundle.h"
#include "conform/receipt.h"

/* SHA-256 of the empty string: the "binary" of the pinned receipt. */
#define SHA_EMPTY "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
#define SHA_ABC   "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"

/* RFC 8032 section 7.1 TEST 1 key pair (as in test_bundle.c). */
#define RFC_SEED "9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60"
#define RFC_KEY_ID "21fe31dfa154a261626bf854046fd2271b7bed4b6abe45aa58877ef47f9721b9"

/* A report as the matrix runner could spell it: keys in any order,
 * whitespace, JSON escapes, a control_expected on one case, and probe
 * text with every class of character the canonical form escapes. */
static const char pinned_report[] =
    "{\n"
    " \"version\": \"0.1.0\",\n"
    " \"schema\": \"egress-guard.conformance-report.v1\",\n"
    " \"provider\": \"egress-guard\",\n"
    " \"guard_binary\": \"/opt/eg/egress-guard\",\n"
    " \"guard_sha256\": \"" SHA_EMPTY "\",\n"
    " \"ran_at\": \"2026-11-29T10:00:00Z\",\n"
    " \"facts\": {\"exact_destination_match\": true,\n"
    "           \"connect_time_public_address\": true,\n"
    "           \"redirect_recheck\": true, \"authority_separation\": true,\n"
    "           \"default_deny\": true},\n"
    " \"cases\": [\n"
    "  {\"id\": \"edm-01\", \"fact\": \"exact_destination_match\",\n"
    "   \"probe\": \"CONNECT www.api.example.test:443\",\n"
    "   \"expected\": \"deny not_allowlisted\",\n"
    "   \"observed\": \"deny not_allowlisted\", \"control\": \"allow\",\n"
    "   \"verdict\": \"pass\"},\n"
    "  {\"id\": \"ctpa-08\", \"fact\": \"connect_time_public_address\",\n"
    "   \"probe\": \"answer flips public\\u2192private, TTL 0\",\n"
    "   \"expected\": \"deny non_public_address\",\n"
    "   \"observed\": \"deny non_public_address\",\n"
    "   \"control_expected\": \"allow\", \"control\": \"allow\",\n"
    "   \"verdict\": \"pass\"},\n"
    "  {\"id\": \"rr-01\", \"fact\": \"redirect_recheck\",\n"
    "   \"probe\": \"curl -L: 302 to \\\"http://other.example.test/\\\"\",\n"
    "   \"expected\": \"deny not_allowlisted\",\n"
    "   \"observed\": \"deny not_allowlisted\", \"control\": \"allow\",\n"
    "   \"verdict\": \"pass\"},\n"
    "  {\"id\": \"as-03\", \"fact\": \"authority_separation\",\n"
    "   \"probe\": \"GET /v1/status\\r\\n over the workload listener\",\n"
    "   \"expected\": \"400\", \"observed\": \"400\", \"control\": \"200\",\n"
    "   \"verdict\": \"pass\"},\n"
    "  {\"id\": \"dd-03\", \"fact\": \"default_deny\",\n"
    "   \"probe\": \"ICMP echo\\t(ping -c1) \\\\ \\u00e9\\ud83d\\ude00 "
    "\\u007f\\u0001\",\n"
    "   \"expected\": \"blocked\", \"observed\": \"blocked\",\n"
    "   \"control\": \"reached\", \"verdict\": \"pass\"}\n"
    " ]\n"
    "}\n";

/* Its canonical receipt for SHA_EMPTY, written by Python's
 * json.dumps(receipt, sort_keys=True, separators=(",", ":"),
 * ensure_ascii=True): an independent implementation pins the bytes. */
#define PINNED_CANON \
    "{\"cases\":[{\"control\":\"allow\",\"expected\":\"deny not_allow" \
    "listed\",\"fact\":\"exact_destination_match\",\"id\":\"edm-01\"," \
    "\"observed\":\"deny not_allowlisted\",\"probe\":\"CONNECT www.ap" \
    "i.example.test:443\",\"verdict\":\"pass\"},{\"control\":\"allow" \
    "\",\"control_expected\":\"allow\",\"expected\":\"deny non_public" \
    "_address\",\"fact\":\"connect_time_public_address\",\"id\":\"ctp" \
    "a-08\",\"observed\":\"deny non_public_address\",\"probe\":\"answ" \
    "er flips public\\u2192private, TTL 0\",\"verdict\":\"pass\"},{\"" \
    "control\":\"allow\",\"expected\":\"deny not_allowlisted\",\"fact" \
    "\":\"redirect_recheck\",\"id\":\"rr-01\",\"observed\":\"deny not" \
    "_allowlisted\",\"probe\":\"curl -L: 302 to \\\"http://other.exam" \
    "ple.test/\\\"\",\"verdict\":\"pass\"},{\"control\":\"200\",\"exp" \
    "ected\":\"400\",\"fact\":\"authority_separation\",\"id\":\"as-03" \
    "\",\"observed\":\"400\",\"probe\":\"GET /v1/status\\r\\n over th" \
    "e workload listener\",\"verdict\":\"pass\"},{\"control\":\"reach" \
    "ed\",\"expected\":\"blocked\",\"fact\":\"default_deny\",\"id\":" \
    "\"dd-03\",\"observed\":\"blocked\",\"probe\":\"ICMP echo\\t(ping" \
    " -c1) \\\\ \\u00e9\\ud83d\\ude00 \\u007f\\u0001\",\"verdict\":\"" \
    "pass\"}],\"facts\":{\"authority_separation\":true,\"connect_time" \
    "_public_address\":true,\"default_deny\":true,\"exact_destination" \
    "_match\":true,\"redirect_recheck\":true},\"provider\":\"egress-g" \
    "uard\",\"provider_revision\":\"0.1.0+sha256:e3b0c44298fc1c149afb" \
    "f4c8996fb92427ae41e4649b934ca495991b7852b855\",\"ran_at\":\"2026" \
    "-11-29T10:00:00Z\",\"schema\":\"egress-guard.conformance.v1\"}"

/* PINNED_CANON signed with the RFC key by Node.js's crypto.sign(null, ...)
 * over RECEIPT_CONTEXT 0x00 PINNED_CANON, the envelope assembled there too
 * (Ed25519 signatures are deterministic). */
#define PINNED_ENVELOPE \
    "{\"schema\":\"egress-guard.receipt-envelope.v1\",\"key_id\":\"" \
    RFC_KEY_ID "\",\"receipt\":\"" \
    "eyJjYXNlcyI6W3siY29udHJvbCI6ImFsbG93IiwiZXhwZWN0ZWQiOiJkZW55IG5vdF9hbGxv" \
    "d2xpc3RlZCIsImZhY3QiOiJleGFjdF9kZXN0aW5hdGlvbl9tYXRjaCIsImlkIjoiZWRtLTAx" \
    "Iiwib2JzZXJ2ZWQiOiJkZW55IG5vdF9hbGxvd2xpc3RlZCIsInByb2JlIjoiQ09OTkVDVCB3" \
    "d3cuYXBpLmV4YW1wbGUudGVzdDo0NDMiLCJ2ZXJkaWN0IjoicGFzcyJ9LHsiY29udHJvbCI6" \
    "ImFsbG93IiwiY29udHJvbF9leHBlY3RlZCI6ImFsbG93IiwiZXhwZWN0ZWQiOiJkZW55IG5v" \
    "bl9wdWJsaWNfYWRkcmVzcyIsImZhY3QiOiJjb25uZWN0X3RpbWVfcHVibGljX2FkZHJlc3Mi" \
    "LCJpZCI6ImN0cGEtMDgiLCJvYnNlcnZlZCI6ImRlbnkgbm9uX3B1YmxpY19hZGRyZXNzIiwi" \
    "cHJvYmUiOiJhbnN3ZXIgZmxpcHMgcHVibGljXHUyMTkycHJpdmF0ZSwgVFRMIDAiLCJ2ZXJk" \
    "aWN0IjoicGFzcyJ9LHsiY29udHJvbCI6ImFsbG93IiwiZXhwZWN0ZWQiOiJkZW55IG5vdF9h" \
    "bGxvd2xpc3RlZCIsImZhY3QiOiJyZWRpcmVjdF9yZWNoZWNrIiwiaWQiOiJyci0wMSIsIm9i" \
    "c2VydmVkIjoiZGVueSBub3RfYWxsb3dsaXN0ZWQiLCJwcm9iZSI6ImN1cmwgLUw6IDMwMiB0" \
    "byBcImh0dHA6Ly9vdGhlci5leGFtcGxlLnRlc3QvXCIiLCJ2ZXJkaWN0IjoicGFzcyJ9LHsi" \
    "Y29udHJvbCI6IjIwMCIsImV4cGVjdGVkIjoiNDAwIiwiZmFjdCI6ImF1dGhvcml0eV9zZXBh" \
    "cmF0aW9uIiwiaWQiOiJhcy0wMyIsIm9ic2VydmVkIjoiNDAwIiwicHJvYmUiOiJHRVQgL3Yx" \
    "L3N0YXR1c1xyXG4gb3ZlciB0aGUgd29ya2xvYWQgbGlzdGVuZXIiLCJ2ZXJkaWN0IjoicGFz" \
    "cyJ9LHsiY29udHJvbCI6InJlYWNoZWQiLCJleHBlY3RlZCI6ImJsb2NrZWQiLCJmYWN0Ijoi" \
    "ZGVmYXVsdF9kZW55IiwiaWQiOiJkZC0wMyIsIm9ic2VydmVkIjoiYmxvY2tlZCIsInByb2Jl" \
    "IjoiSUNNUCBlY2hvXHQocGluZyAtYzEpIFxcIFx1MDBlOVx1ZDgzZFx1ZGUwMCBcdTAwN2Zc" \
    "dTAwMDEiLCJ2ZXJkaWN0IjoicGFzcyJ9XSwiZmFjdHMiOnsiYXV0aG9yaXR5X3NlcGFyYXRp" \
    "b24iOnRydWUsImNvbm5lY3RfdGltZV9wdWJsaWNfYWRkcmVzcyI6dHJ1ZSwiZGVmYXVsdF9k" \
    "ZW55Ijp0cnVlLCJleGFjdF9kZXN0aW5hdGlvbl9tYXRjaCI6dHJ1ZSwicmVkaXJlY3RfcmVj" \
    "aGVjayI6dHJ1ZX0sInByb3ZpZGVyIjoiZWdyZXNzLWd1YXJkIiwicHJvdmlkZXJfcmV2aXNp" \
    "b24iOiIwLjEuMCtzaGEyNTY6ZTNiMGM0NDI5OGZjMWMxNDlhZmJmNGM4OTk2ZmI5MjQyN2Fl" \
    "NDFlNDY0OWI5MzRjYTQ5NTk5MWI3ODUyYjg1NSIsInJhbl9hdCI6IjIwMjYtMTEtMjlUMTA6" \
    "MDA6MDBaIiwic2NoZW1hIjoiZWdyZXNzLWd1YXJkLmNvbmZvcm1hbmNlLnYxIn0=" \
    "\",\"signature\":\"" \
    "TDQ4tjdRsxx0veF2B0qGYOeQTsBgSHTK3LpHM8CWK882BF37Qq1UMmzMrWVnqZRH" \
    "YHuDFaCy8RMeeaqhP6giBg==\"}"

/* ---- helpers ---- */

static void
check_err(const char *err)
{
	size_t i;

	assert_true(err[0] != '\0');
	for (i = 0; err[i] != '\0'; i++)
		assert_true(err[i] >= 0x20 && err[i] < 0x7f);
}

static int
nibble(char c)
{
	return c <= '9' ? c - '0' : c - 'a' + 10;
}

static EVP_PKEY *
rfc_key(void)
{
	unsigned char seed[32];
	EVP_PKEY *pk;
	size_t i;

	for (i = 0; i < sizeof(seed); i++)
		seed[i] = (unsigned char)(nibble(RFC_SEED[2 * i]) << 4 |
		    nibble(RFC_SEED[2 * i + 1]));
	pk = EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, NULL, seed,
	    sizeof(seed));
	assert_non_null(pk);
	return pk;
}

static EVP_PKEY *
gen_key(const char *type)
{
	EVP_PKEY *pk = EVP_PKEY_Q_keygen(NULL, NULL, type);

	assert_non_null(pk);
	return pk;
}

static char *
write_tmp_in(const char *dir, const char *name, const void *content,
    size_t len)
{
	char *path;
	FILE *f;

	assert_true(asprintf(&path, "%s/%s", dir, name) > 0);
	f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(fwrite(content, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
	return path;
}

/* Writes pk's SPKI PEM (or, with priv, its PKCS#8 PEM) to dir/name. */
static void
write_key_in(const char *dir, const char *name, EVP_PKEY *pk, int priv)
{
	BIO *bio = BIO_new(BIO_s_mem());
	char *data;
	long n;

	assert_non_null(bio);
	if (priv)
		assert_int_equal(PEM_write_bio_PKCS8PrivateKey(bio, pk, NULL,
		    NULL, 0, NULL, NULL), 1);
	else
		assert_int_equal(PEM_write_bio_PUBKEY(bio, pk), 1);
	n = BIO_get_mem_data(bio, &data);
	assert_true(n > 0);
	free(write_tmp_in(dir, name, data, (size_t)n));
	BIO_free(bio);
}

static char *
tmp_dir(void)
{
	char *d = strdup("/tmp/eg-receipt-test-XXXXXX");

	assert_non_null(d);
	assert_non_null(mkdtemp(d));
	return d;
}

static void
rm_dir(char *d)
{
	char *cmd;

	assert_true(asprintf(&cmd, "rm -rf '%s'", d) > 0);
	assert_int_equal(system(cmd), 0);
	free(cmd);
	free(d);
}

/* A keyring trusting the public halves of the given keys (NULLs skipped). */
static struct bundle_keyring *
ring(EVP_PKEY *a, EVP_PKEY *b)
{
	struct bundle_keyring *kr = bundle_keyring_new();
	char err[512] = "", *d = tmp_dir();

	assert_non_null(kr);
	if (a != NULL)
		write_key_in(d, "a.pub.pem", a, 0);
	if (b != NULL)
		write_key_in(d, "b.pub.pem", b, 0);
	if (receiptcmd_load_attesters(kr, d, err, sizeof(err)) == -1)
		fail_msg("attesters: %s", err);
	rm_dir(d);
	return kr;
}

static json_t *
pinned(void)
{
	json_t *r = json_loads(pinned_report, 0, NULL);

	assert_non_null(r);
	return r;
}

static json_t *
case_of(json_t *report, const char *id)
{
	json_t *c;
	size_t i;

	json_array_foreach(json_object_get(report, "cases"), i, c)
		if (strcmp(json_string_value(json_object_get(c, "id")), id) == 0)
			return c;
	fail_msg("no case %s", id);
	return NULL;
}

static void
set_str(json_t *obj, const char *key, const char *val)
{
	assert_int_equal(json_object_set_new(obj, key, json_string(val)), 0);
}

static char *
text_of(json_t *report)
{
	char *s = json_dumps(report, JSON_INDENT(1));

	assert_non_null(s);
	return s;
}

static struct receipt_report *
parse_ok(const char *text)
{
	char err[512] = "";
	struct receipt_report *r;

	r = receipt_report_parse(text, strlen(text), err, sizeof(err));
	if (r == NULL)
		fail_msg("report refused: %s", err);
	return r;
}

static void
refuse_report(json_t *report, const char *want)
{
	char err[512] = "", *text = text_of(report);
	struct receipt_report *r;

	r = receipt_report_parse(text, strlen(text), err, sizeof(err));
	if (r != NULL) {
		receipt_report_free(r);
		fail_msg("report accepted, want \"%s\": %s", want, text);
	}
	check_err(err);
	if (strstr(err, want) == NULL)
		fail_msg("error \"%s\" does not contain \"%s\"", err, want);
	free(text);
	json_decref(report);
}

static void
refuse_report_text(const char *text, const char *want)
{
	char err[512] = "";
	struct receipt_report *r;

	r = receipt_report_parse(text, strlen(text), err, sizeof(err));
	if (r != NULL) {
		receipt_report_free(r);
		fail_msg("report accepted, want \"%s\": %s", want, text);
	}
	check_err(err);
	if (strstr(err, want) == NULL)
		fail_msg("error \"%s\" does not contain \"%s\"", err, want);
}

/* The canonical receipt of a report text for a binary hash. */
static char *
canon_of(const char *text, const char *sha, size_t *len)
{
	struct receipt_report *r = parse_ok(text);
	char err[512] = "", *c;

	c = receipt_canonical(r, sha, len, err, sizeof(err));
	if (c == NULL)
		fail_msg("canonical: %s", err);
	receipt_report_free(r);
	return c;
}

/* Signs bytes (whatever they are) into an envelope. */
static char *
sign_bytes(const char *bytes, size_t len, EVP_PKEY *pk)
{
	char err[512] = "", *env;

	env = receiptcmd_sign_envelope(bytes, len, pk, err, sizeof(err));
	if (env == NULL)
		fail_msg("sign: %s", err);
	return env;
}

/* report (consumed) → signed envelope for binary sha. */
static char *
envelope_of(json_t *report, const char *sha, EVP_PKEY *pk)
{
	char *text = text_of(report), *c, *env;
	size_t len;

	c = canon_of(text, sha, &len);
	env = sign_bytes(c, len, pk);
	free(c);
	free(text);
	json_decref(report);
	return env;
}

static struct receipt_verdict
grade_n(const struct bundle_keyring *kr, const char *env, size_t len,
    const char *sha, int want_rc)
{
	struct receipt_verdict v;
	char err[1024] = "";
	int rc;

	rc = receipt_verify(kr, env, len, sha, &v, err, sizeof(err));
	if (rc != want_rc)
		fail_msg("receipt_verify returned %d (%s: %s), want %d", rc,
		    receipt_reason_name(v.reason), err, want_rc);
	if (rc == -1 || v.reason != RECEIPT_OK)
		check_err(err);
	else
		assert_string_equal(err, "");
	if (rc == -1)
		assert_int_equal(v.reason, RECEIPT_MALFORMED);
	return v;
}

static struct receipt_verdict
grade(const struct bundle_keyring *kr, const char *env, const char *sha,
    int want_rc)
{
	return grade_n(kr, env, strlen(env), sha, want_rc);
}

static void
expect_grade(const struct bundle_keyring *kr, const char *env,
    const char *sha, enum receipt_grade g, enum receipt_reason why)
{
	struct receipt_verdict v = grade(kr, env, sha, 0);

	if (v.grade != g || v.reason != why)
		fail_msg("graded %s (%s), want %s (%s)",
		    receipt_grade_name(v.grade), receipt_reason_name(v.reason),
		    receipt_grade_name(g), receipt_reason_name(why));
}

static void
expect_malformed(const struct bundle_keyring *kr, const char *env)
{
	(void)grade(kr, env, SHA_EMPTY, -1);
}

/* The receipt bytes inside an envelope, malloc'd and NUL-terminated. */
static char *
receipt_of(const char *env, size_t *len)
{
	json_t *root = json_loads(env, 0, NULL);
	const char *s;
	size_t n;
	char *out;

	assert_non_null(root);
	s = json_string_value(json_object_get(root, "receipt"));
	assert_non_null(s);
	n = strlen(s);
	out = malloc(n + 1);
	assert_non_null(out);
	assert_int_equal(EVP_DecodeBlock((unsigned char *)out,
	    (const unsigned char *)s, (int)n), (int)(n / 4 * 3));
	*len = n / 4 * 3 - (s[n - 1] == '=') - (s[n - 2] == '=');
	out[*len] = '\0';
	json_decref(root);
	return out;
}

/* env with its receipt bytes replaced, the signature kept. */
static char *
with_receipt(const char *env, const char *bytes, size_t len)
{
	json_t *root = json_loads(env, 0, NULL);
	char *b, *out;

	assert_non_null(root);
	b = malloc(4 * ((len + 2) / 3) + 1);
	assert_non_null(b);
	EVP_EncodeBlock((unsigned char *)b, (const unsigned char *)bytes,
	    (int)len);
	set_str(root, "receipt", b);
	out = json_dumps(root, JSON_COMPACT | JSON_PRESERVE_ORDER);
	assert_non_null(out);
	free(b);
	json_decref(root);
	return out;
}

/* env with field set to value (any JSON), the rest kept. */
static char *
with_field(const char *env, const char *field, json_t *value)
{
	json_t *root = json_loads(env, 0, NULL);
	char *out;

	assert_non_null(root);
	if (value == NULL)
		assert_int_equal(json_object_del(root, field), 0);
	else
		assert_int_equal(json_object_set_new(root, field, value), 0);
	out = json_dumps(root, JSON_COMPACT | JSON_PRESERVE_ORDER);
	assert_non_null(out);
	json_decref(root);
	return out;
}

/* s with the one occurrence of from replaced by to, malloc'd. */
static char *
replace_once(const char *s, const char *from, const char *to)
{
	const char *at = strstr(s, from);
	size_t n;
	char *out;

	if (at == NULL)
		fail_msg("\"%s\" not found", from);
	assert_null(strstr(at + 1, from));
	n = strlen(s) - strlen(from) + strlen(to);
	out = malloc(n + 1);
	assert_non_null(out);
	memcpy(out, s, (size_t)(at - s));
	strcpy(out + (at - s), to);
	strcat(out, at + strlen(from));
	return out;
}

/* The pinned canonical receipt edited (from → to) and signed by pk: what a
 * trusted attester running some other signer could hand over. */
static char *
signed_edit(const char *from, const char *to, EVP_PKEY *pk)
{
	char *c = replace_once(PINNED_CANON, from, to), *env;

	env = sign_bytes(c, strlen(c), pk);
	free(c);
	return env;
}

/* ---- pinned bytes ---- */

static void
test_canonical_bytes_of_pinned_report_are_exact(void **state)
{
	static const size_t flags[] = {
		JSON_COMPACT, JSON_INDENT(4) | JSON_SORT_KEYS, JSON_ENSURE_ASCII
	};
	json_t *r;
	char *c, *text;
	size_t len, i;

	(void)state;
	c = canon_of(pinned_report, SHA_EMPTY, &len);
	assert_string_equal(c, PINNED_CANON);
	assert_int_equal(len, strlen(PINNED_CANON));
	free(c);
	/* Any other spelling of the same report: the same bytes. */
	for (i = 0; i < sizeof(flags) / sizeof(flags[0]); i++) {
		r = pinned();
		text = json_dumps(r, flags[i]);
		assert_non_null(text);
		c = canon_of(text, SHA_EMPTY, &len);
		assert_string_equal(c, PINNED_CANON);
		free(c);
		free(text);
		json_decref(r);
	}
}

static void
test_envelope_matches_node_signature_for_rfc8032_key(void **state)
{
	EVP_PKEY *k = rfc_key();
	struct bundle_keyring *kr = ring(k, NULL);
	struct receipt_verdict v;
	char *env;

	(void)state;
	env = sign_bytes(PINNED_CANON, strlen(PINNED_CANON), k);
	assert_string_equal(env, PINNED_ENVELOPE);
	v = grade(kr, PINNED_ENVELOPE, SHA_EMPTY, 0);
	assert_int_equal(v.grade, RECEIPT_SECURITY_BOUNDARY);
	assert_int_equal(v.reason, RECEIPT_OK);
	assert_string_equal(v.key_id, RFC_KEY_ID);
	free(env);
	bundle_keyring_free(kr);
	EVP_PKEY_free(k);
}

static void
test_signed_message_is_context_nul_then_receipt(void **state)
{
	static const char ctx[] = "egress-guard.sandbox-egress-conformance.v1";
	unsigned char *m;
	size_t len;

	(void)state;
	m = receipt_signed_message("{}", 2, &len);
	assert_non_null(m);
	assert_int_equal(len, sizeof(ctx) + 2);
	assert_memory_equal(m, ctx, sizeof(ctx));	/* with the 0x00 */
	assert_memory_equal(m + sizeof(ctx), "{}", 2);
	free(m);
}

/* ---- round trip ---- */

static void
test_sign_then_verify_is_security_boundary(void **state)
{
	EVP_PKEY *k = gen_key("ED25519"), *other = gen_key("ED25519");
	struct bundle_keyring *kr = ring(other, k);
	struct receipt_verdict v;
	char id[BUNDLE_KEY_ID_LEN + 1], err[128], *env;
	json_t *r = pinned();

	(void)state;
	/* A version with build metadata keeps its own '+'. */
	set_str(r, "version", "0.1.0+git.ab12");
	env = envelope_of(r, SHA_ABC, k);
	assert_true(strlen(env) + 1 <= RECEIPT_MAX_BYTES);
	v = grade(kr, env, SHA_ABC, 0);
	assert_int_equal(v.grade, RECEIPT_SECURITY_BOUNDARY);
	assert_int_equal(v.reason, RECEIPT_OK);
	assert_int_equal(bundle_key_id(k, id, err, sizeof(err)), 0);
	assert_string_equal(v.key_id, id);
	free(env);
	bundle_keyring_free(kr);
	EVP_PKEY_free(k);
	EVP_PKEY_free(other);
}

/* Appends n copies of the first case (with a 1000-byte probe). */
static void
add_bulk_cases(json_t *r, const char *prefix, size_t n)
{
	json_t *cases = json_object_get(r, "cases"), *c;
	char id[32], probe[1001];
	size_t i;

	memset(probe, 'p', sizeof(probe) - 1);
	probe[sizeof(probe) - 1] = '\0';
	for (i = 0; i < n; i++) {
		c = json_deep_copy(json_array_get(cases, 0));
		assert_non_null(c);
		snprintf(id, sizeof(id), "%s-%zu", prefix, i);
		set_str(c, "id", id);
		set_str(c, "probe", probe);
		assert_int_equal(json_array_append_new(cases, c), 0);
	}
}

static void
test_large_receipt_near_the_size_bound_round_trips(void **state)
{
	EVP_PKEY *k = gen_key("ED25519");
	struct bundle_keyring *kr = ring(k, NULL);
	json_t *r = pinned();
	char err[256] = "", *text, *canon, *env;
	size_t len;

	(void)state;
	/* About 700 KB of canonical receipt: under the envelope bound once
	 * base64 (4/3) is added. */
	add_bulk_cases(r, "bulk", 600);
	text = json_dumps(r, JSON_COMPACT);
	assert_non_null(text);
	canon = canon_of(text, SHA_EMPTY, &len);
	assert_true(len > 650000);
	env = sign_bytes(canon, len, k);
	assert_true(strlen(env) + 1 <= RECEIPT_MAX_BYTES);
	expect_grade(kr, env, SHA_EMPTY, RECEIPT_SECURITY_BOUNDARY, RECEIPT_OK);
	free(env);
	free(canon);
	free(text);
	/* A report that still parses but whose envelope would not fit:
	 * refused at signing, never truncated. */
	add_bulk_cases(r, "more", 120);
	text = json_dumps(r, JSON_COMPACT);
	assert_non_null(text);
	canon = canon_of(text, SHA_EMPTY, &len);
	assert_null(receiptcmd_sign_envelope(canon, len, k, err, sizeof(err)));
	assert_non_null(strstr(err, "too large"));
	free(canon);
	free(text);
	json_decref(r);
	bundle_keyring_free(kr);
	EVP_PKEY_free(k);
}

/* ---- tampering: never security_boundary ---- */

static void
expect_tampered(const char *env, const char *from, const char *to,
    const struct bundle_keyring *kr)
{
	char *rec, *bad, *benv;
	size_t len;

	rec = receipt_of(env, &len);
	bad = replace_once(rec, from, to);
	benv = with_receipt(env, bad, strlen(bad));
	expect_grade(kr, benv, SHA_EMPTY, RECEIPT_ADVISORY_FILTER,
	    RECEIPT_BAD_SIGNATURE);
	free(benv);
	free(bad);
	free(rec);
}

static void
test_tampered_fact_is_bad_signature(void **state)
{
	EVP_PKEY *k = gen_key("ED25519");
	struct bundle_keyring *kr = ring(k, NULL);
	json_t *r = pinned();
	char *env;

	(void)state;
	env = envelope_of(pinned(), SHA_EMPTY, k);
	expect_tampered(env, "\"default_deny\":true",
	    "\"default_deny\":false", kr);
	free(env);
	/* The dangerous direction: a false fact flipped to true. */
	set_str(case_of(r, "dd-03"), "verdict", "fail");
	env = envelope_of(r, SHA_EMPTY, k);
	expect_grade(kr, env, SHA_EMPTY, RECEIPT_ADVISORY_FILTER,
	    RECEIPT_FACTS_INCOMPLETE);
	expect_tampered(env, "\"default_deny\":false",
	    "\"default_deny\":true", kr);
	free(env);
	bundle_keyring_free(kr);
	EVP_PKEY_free(k);
}

static void
test_tampered_case_verdict_is_bad_signature(void **state)
{
	EVP_PKEY *k = gen_key("ED25519");
	struct bundle_keyring *kr = ring(k, NULL);
	json_t *r = pinned();
	char *env;

	(void)state;
	set_str(case_of(r, "rr-01"), "verdict", "inconclusive");
	env = envelope_of(r, SHA_EMPTY, k);
	expect_tampered(env, "\"verdict\":\"inconclusive\"",
	    "\"verdict\":\"pass\"", kr);
	expect_tampered(env, "\"id\":\"rr-01\"", "\"id\":\"rr-02\"", kr);
	free(env);
	bundle_keyring_free(kr);
	EVP_PKEY_free(k);
}

static void
test_tampered_ran_at_is_bad_signature(void **state)
{
	EVP_PKEY *k = gen_key("ED25519");
	struct bundle_keyring *kr = ring(k, NULL);
	char *env;

	(void)state;
	env = envelope_of(pinned(), SHA_EMPTY, k);
	expect_tampered(env, "2026-11-29T10:00:00Z", "2026-11-29T10:00:01Z",
	    kr);
	expect_tampered(env, SHA_EMPTY, SHA_ABC, kr);	/* the revision */
	free(env);
	bundle_keyring_free(kr);
	EVP_PKEY_free(k);
}

static void
test_flipped_bit_anywhere_in_receipt_bytes_is_bad_signature(void **state)
{
	EVP_PKEY *k = rfc_key();
	struct bundle_keyring *kr = ring(k, NULL);
	char *bad = strdup(PINNED_CANON), *env;
	size_t i, n = strlen(PINNED_CANON);

	(void)state;
	assert_non_null(bad);
	for (i = 0; i < n; i++) {
		bad[i] ^= (char)(1 << (i % 8));
		env = with_receipt(PINNED_ENVELOPE, bad, n);
		expect_grade(kr, env, SHA_EMPTY, RECEIPT_ADVISORY_FILTER,
		    RECEIPT_BAD_SIGNATURE);
		free(env);
		bad[i] ^= (char)(1 << (i % 8));
	}
	free(bad);
	bundle_keyring_free(kr);
	EVP_PKEY_free(k);
}

static void
test_flipped_bit_anywhere_in_envelope_never_security_boundary(void **state)
{
	EVP_PKEY *k = rfc_key();
	struct bundle_keyring *kr = ring(k, NULL);
	char *bad = strdup(PINNED_ENVELOPE), err[1024];
	size_t i, n = strlen(PINNED_ENVELOPE);
	struct receipt_verdict v;
	int rc;

	(void)state;
	assert_non_null(bad);
	for (i = 0; i < n; i++) {
		bad[i] ^= (char)(1 << (i % 8));
		rc = receipt_verify(kr, bad, n, SHA_EMPTY, &v, err,
		    sizeof(err));
		if (rc == 0 && v.grade == RECEIPT_SECURITY_BOUNDARY)
			fail_msg("byte %zu flipped still grades "
			    "security_boundary", i);
		check_err(err);
		bad[i] ^= (char)(1 << (i % 8));
	}
	free(bad);
	bundle_keyring_free(kr);
	EVP_PKEY_free(k);
}

/* ---- revision, signer ---- */

static void
test_swapped_revision_is_revision_mismatch(void **state)
{
	EVP_PKEY *k = rfc_key();
	struct bundle_keyring *kr = ring(k, NULL);

	(void)state;
	/* Signed for SHA_EMPTY; the binary in hand hashes otherwise. */
	expect_grade(kr, PINNED_ENVELOPE, SHA_ABC, RECEIPT_ADVISORY_FILTER,
	    RECEIPT_REVISION_MISMATCH);
	bundle_keyring_free(kr);
	EVP_PKEY_free(k);
}

static void
test_signer_not_in_attesters_is_untrusted(void **state)
{
	EVP_PKEY *k = rfc_key(), *a = gen_key("ED25519"), *b = gen_key("ED25519");
	struct bundle_keyring *kr = ring(a, b), *empty = ring(NULL, NULL);
	struct receipt_verdict v;

	(void)state;
	expect_grade(kr, PINNED_ENVELOPE, SHA_EMPTY, RECEIPT_ADVISORY_FILTER,
	    RECEIPT_UNTRUSTED_SIGNER);
	expect_grade(empty, PINNED_ENVELOPE, SHA_EMPTY,
	    RECEIPT_ADVISORY_FILTER, RECEIPT_UNTRUSTED_SIGNER);
	v = grade(NULL, PINNED_ENVELOPE, SHA_EMPTY, 0);
	assert_int_equal(v.reason, RECEIPT_UNTRUSTED_SIGNER);
	assert_string_equal(v.key_id, RFC_KEY_ID);
	bundle_keyring_free(kr);
	bundle_keyring_free(empty);
	EVP_PKEY_free(k);
	EVP_PKEY_free(a);
	EVP_PKEY_free(b);
}

/* An envelope naming a trusted key but signed by another. */
static void
test_trusted_key_id_with_foreign_signature_is_bad_signature(void **state)
{
	EVP_PKEY *k = rfc_key(), *mallory = gen_key("ED25519");
	struct bundle_keyring *kr = ring(k, NULL);
	char *env, *forged;

	(void)state;
	env = sign_bytes(PINNED_CANON, strlen(PINNED_CANON), mallory);
	forged = with_field(env, "key_id", json_string(RFC_KEY_ID));
	expect_grade(kr, forged, SHA_EMPTY, RECEIPT_ADVISORY_FILTER,
	    RECEIPT_BAD_SIGNATURE);
	free(forged);
	free(env);
	bundle_keyring_free(kr);
	EVP_PKEY_free(k);
	EVP_PKEY_free(mallory);
}

/* A policy-bundle signature (another context) is no receipt signature. */
static void
test_policy_bundle_context_cannot_pass_as_receipt(void **state)
{
	EVP_PKEY *k = rfc_key();
	struct bundle_keyring *kr = ring(k, NULL);
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	unsigned char sig[64], *m;
	char s64[89], *env;
	size_t mlen, slen = sizeof(sig);

	(void)state;
	assert_non_null(ctx);
	m = bundle_signed_message(PINNED_CANON, strlen(PINNED_CANON), &mlen);
	assert_non_null(m);
	assert_int_equal(EVP_DigestSignInit(ctx, NULL, NULL, NULL, k), 1);
	assert_int_equal(EVP_DigestSign(ctx, sig, &slen, m, mlen), 1);
	EVP_EncodeBlock((unsigned char *)s64, sig, (int)slen);
	env = with_field(PINNED_ENVELOPE, "signature", json_string(s64));
	expect_grade(kr, env, SHA_EMPTY, RECEIPT_ADVISORY_FILTER,
	    RECEIPT_BAD_SIGNATURE);
	free(env);
	/* And a bundle is not an envelope at all. */
	expect_malformed(kr, "{\"schema\":\"egress-guard.bundle.v1\",\"key_id\":"
	    "\"" RFC_KEY_ID "\",\"policy\":\"e30=\",\"signature\":\"\"}");
	free(m);
	EVP_MD_CTX_free(ctx);
	bundle_keyring_free(kr);
	EVP_PKEY_free(k);
}

/* ---- facts: recomputed, never copied ---- */

static void
expect_fact(const char *text, size_t fact, int want, const char *note_has)
{
	struct receipt_report *r = parse_ok(text);
	char note[256];

	assert_int_equal(receipt_report_fact(r, fact, note, sizeof(note)),
	    want);
	if (note_has == NULL) {
		assert_string_equal(note, "");
	} else if (strstr(note, note_has) == NULL) {
		fail_msg("note \"%s\" does not contain \"%s\"", note, note_has);
	}
	receipt_report_free(r);
}

/* index of a fact name in receipt_fact_name order */
static size_t
fact_ix(const char *name)
{
	size_t i;

	for (i = 0; i < RECEIPT_NFACTS; i++)
		if (strcmp(receipt_fact_name(i), name) == 0)
			return i;
	fail_msg("no fact %s", name);
	return 0;
}

/* The report (consumed) signs into a receipt that grades advisory_filter
 * for facts_incomplete, with fact false in the signed bytes. */
static void
expect_signed_short_of_boundary(json_t *r, const char *fact)
{
	EVP_PKEY *k = gen_key("ED25519");
	struct bundle_keyring *kr = ring(k, NULL);
	char want[128], *env, *rec;
	size_t len;

	env = envelope_of(r, SHA_EMPTY, k);
	expect_grade(kr, env, SHA_EMPTY, RECEIPT_ADVISORY_FILTER,
	    RECEIPT_FACTS_INCOMPLETE);
	rec = receipt_of(env, &len);
	snprintf(want, sizeof(want), "\"%s\":false", fact);
	assert_non_null(strstr(rec, want));
	free(rec);
	free(env);
	bundle_keyring_free(kr);
	EVP_PKEY_free(k);
}

static void
test_report_with_four_facts_never_security_boundary(void **state)
{
	json_t *r = pinned();
	char *text;

	(void)state;
	/* Its cases all pass, but the report does not claim the fact. */
	assert_int_equal(json_object_del(json_object_get(r, "facts"),
	    "default_deny"), 0);
	text = text_of(r);
	expect_fact(text, fact_ix("default_deny"), 0, NULL);
	expect_fact(text, fact_ix("redirect_recheck"), 1, NULL);
	free(text);
	expect_signed_short_of_boundary(r, "default_deny");
}

static void
test_report_fact_false_stays_false_though_cases_pass(void **state)
{
	json_t *r = pinned();

	(void)state;
	assert_int_equal(json_object_set_new(json_object_get(r, "facts"),
	    "authority_separation", json_false()), 0);
	expect_signed_short_of_boundary(r, "authority_separation");
}

static void
test_report_fact_true_but_case_inconclusive_is_false(void **state)
{
	json_t *r = pinned();
	char *text;

	(void)state;
	/* The control did not flip: the runner says inconclusive. */
	set_str(case_of(r, "as-03"), "control", "400");
	set_str(case_of(r, "as-03"), "verdict", "inconclusive");
	text = text_of(r);
	expect_fact(text, fact_ix("authority_separation"), 0,
	    "case as-03 does not pass");
	free(text);
	expect_signed_short_of_boundary(r, "authority_separation");
}

static void
test_report_fact_true_but_case_failing_is_false(void **state)
{
	json_t *r = pinned(), *c;

	(void)state;
	/* A second case for the fact, failing, after a passing one. */
	c = json_deep_copy(case_of(r, "edm-01"));
	set_str(c, "id", "edm-02");
	set_str(c, "observed", "allow");
	set_str(c, "verdict", "fail");
	assert_int_equal(json_array_append_new(json_object_get(r, "cases"),
	    c), 0);
	expect_signed_short_of_boundary(r, "exact_destination_match");
}

static void
test_report_fact_true_without_cases_is_false(void **state)
{
	json_t *r = pinned(), *cases;
	char *text;
	size_t i;

	(void)state;
	cases = json_object_get(r, "cases");
	for (i = 0; i < json_array_size(cases); i++)
		if (strcmp(json_string_value(json_object_get(json_array_get(
		    cases, i), "fact")), "redirect_recheck") == 0)
			assert_int_equal(json_array_remove(cases, i), 0);
	text = text_of(r);
	expect_fact(text, fact_ix("redirect_recheck"), 0, "has no case");
	free(text);
	expect_signed_short_of_boundary(r, "redirect_recheck");
}

/* A runner bug that writes "pass" over a result that is not one. */
static void
test_report_refuses_pass_that_contradicts_its_strings(void **state)
{
	json_t *r;

	(void)state;
	r = pinned();
	set_str(case_of(r, "edm-01"), "observed", "allow");
	refuse_report(r, "case edm-01: verdict pass, but observed differs");
	r = pinned();
	set_str(case_of(r, "as-03"), "control", "400");	/* did not flip */
	refuse_report(r, "case as-03: verdict pass");
	r = pinned();
	set_str(case_of(r, "ctpa-08"), "control_expected", "deny");
	refuse_report(r, "case ctpa-08: verdict pass");
}

static void
test_report_refuses_unknown_or_bad_keys(void **state)
{
	/* Not RFC 3339 UTC; the last three are days the month does not
	 * have: the 31st of a 30-day month, 29 February outside a leap
	 * year. */
	static const char *const bad_ran_at[] = { "2026-11-29 10:00:00",
	    "2026-13-29T10:00:00Z", "2026-11-29T10:00:00+01:00",
	    "2026-04-31T00:00:00Z", "2026-02-29T00:00:00Z",
	    "2100-02-29T00:00:00Z" };
	json_t *r;
	size_t i;

	(void)state;
	r = pinned();
	set_str(r, "summary", "all good");
	refuse_report(r, "report: unknown key \"summary\"");
	r = pinned();
	set_str(case_of(r, "rr-01"), "note", "x");
	refuse_report(r, "cases[2]: unknown key \"note\"");
	r = pinned();
	assert_int_equal(json_object_set_new(json_object_get(r, "facts"),
	    "no_egress_at_all", json_true()), 0);
	refuse_report(r, "facts: unknown fact \"no_egress_at_all\"");
	r = pinned();
	assert_int_equal(json_object_set_new(json_object_get(r, "facts"),
	    "default_deny", json_string("true")), 0);
	refuse_report(r, "facts: \"default_deny\" must be true or false");
	r = pinned();
	set_str(case_of(r, "dd-03"), "fact", "default_deny ");
	refuse_report(r, "case dd-03: unknown fact");
	r = pinned();
	set_str(case_of(r, "dd-03"), "verdict", "PASS");
	refuse_report(r, "case dd-03: verdict must be");
	r = pinned();
	set_str(case_of(r, "dd-03"), "id", "edm-01");
	refuse_report(r, "duplicate id \"edm-01\"");
	r = pinned();
	set_str(case_of(r, "dd-03"), "id", "dd 03");
	refuse_report(r, "id \"dd 03\" must be");
	r = pinned();
	assert_int_equal(json_object_del(case_of(r, "dd-03"), "probe"), 0);
	refuse_report(r, "\"probe\" missing or not a string");
	r = pinned();
	assert_int_equal(json_object_set_new(case_of(r, "dd-03"), "expected",
	    json_integer(1)), 0);
	refuse_report(r, "\"expected\" missing or not a string");
	r = pinned();
	set_str(r, "schema", "egress-guard.conformance-report.v2");
	refuse_report(r, "report: schema must be");
	r = pinned();
	set_str(r, "provider", "other-guard");
	refuse_report(r, "report: provider must be");
	r = pinned();
	set_str(r, "version", "0.1.0 beta");
	refuse_report(r, "report: version");
	for (i = 0; i < sizeof(bad_ran_at) / sizeof(bad_ran_at[0]); i++) {
		r = pinned();
		set_str(r, "ran_at", bad_ran_at[i]);
		refuse_report(r, "report: ran_at");
	}
	r = pinned();
	assert_int_equal(json_object_del(r, "cases"), 0);
	refuse_report(r, "\"facts\" and \"cases\" are required");
	r = pinned();
	assert_int_equal(json_object_set_new(r, "cases", json_object()), 0);
	refuse_report(r, "\"cases\" must be an array");
	r = pinned();
	assert_int_equal(json_object_set_new(r, "guard_binary",
	    json_null()), 0);
	refuse_report(r, "\"guard_binary\" missing or not a string");
	/* The hash of the binary that ran: required, exactly 64 lowercase
	 * hex digits (one spelling, so the comparison is a strcmp). */
	r = pinned();
	assert_int_equal(json_object_del(r, "guard_sha256"), 0);
	refuse_report(r, "\"guard_sha256\" missing or not a string");
	r = pinned();
	set_str(r, "guard_sha256", "E3B0C44298FC1C149AFBF4C8996FB92427AE41E4649B934CA4"
	    "95991B7852B855");
	refuse_report(r, "report: guard_sha256 must be 64 lowercase hex");
	r = pinned();
	set_str(r, "guard_sha256", SHA_EMPTY "0");
	refuse_report(r, "report: guard_sha256 must be 64 lowercase hex");
	r = pinned();
	set_str(r, "guard_sha256", "sha256:" SHA_EMPTY);
	refuse_report(r, "report: guard_sha256 must be 64 lowercase hex");
	refuse_report_text("", "empty report");
	refuse_report_text("[]", "report must be a JSON object");
	refuse_report_text("{\"schema\":1,\"schema\":2}", "duplicate key");
	refuse_report_text("{\"a\":", "not valid JSON");
}

/* Fractional seconds are RFC 3339 too; they survive into the receipt. */
static void
test_report_accepts_fractional_ran_at(void **state)
{
	static const char *const ok[] = { "2026-01-31T00:00:00Z",
	    "2026-04-30T00:00:00Z", "2026-02-28T23:59:60Z",
	    "2028-02-29T00:00:00Z", "2000-02-29T00:00:00Z" };
	json_t *r = pinned();
	char *text, *c;
	size_t len, i;

	(void)state;
	set_str(r, "ran_at", "2026-11-29T10:00:00.123456Z");
	text = text_of(r);
	c = canon_of(text, SHA_EMPTY, &len);
	assert_non_null(strstr(c, "\"ran_at\":\"2026-11-29T10:00:00.123456Z\""));
	free(c);
	free(text);
	json_decref(r);
	/* The control of the day checks: the last day of each kind of
	 * month, and 29 February of leap years (2000 and 2028). */
	for (i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		r = pinned();
		set_str(r, "ran_at", ok[i]);
		text = text_of(r);
		c = canon_of(text, SHA_EMPTY, &len);
		free(c);
		free(text);
		json_decref(r);
	}
}

/* ---- what a trusted attester signs is still checked ---- */

static void
test_signed_receipt_claiming_unproved_fact_never_security_boundary(
    void **state)
{
	EVP_PKEY *k = gen_key("ED25519");
	struct bundle_keyring *kr = ring(k, NULL);
	char *env;

	(void)state;
	/* facts map all true, a case failing. */
	env = signed_edit("\"observed\":\"400\",\"probe\":\"GET /v1/status\\r"
	    "\\n over the workload listener\",\"verdict\":\"pass\"",
	    "\"observed\":\"400\",\"probe\":\"GET /v1/status\\r"
	    "\\n over the workload listener\",\"verdict\":\"fail\"", k);
	expect_grade(kr, env, SHA_EMPTY, RECEIPT_ADVISORY_FILTER,
	    RECEIPT_FACTS_INCOMPLETE);
	free(env);
	/* "pass" over an observation that differs from the expectation. */
	env = signed_edit("\"observed\":\"400\"", "\"observed\":\"403\"", k);
	expect_grade(kr, env, SHA_EMPTY, RECEIPT_ADVISORY_FILTER,
	    RECEIPT_FACTS_INCOMPLETE);
	free(env);
	/* "pass" with a control that did not flip. */
	env = signed_edit("\"control\":\"reached\"", "\"control\":\"blocked\"",
	    k);
	expect_grade(kr, env, SHA_EMPTY, RECEIPT_ADVISORY_FILTER,
	    RECEIPT_FACTS_INCOMPLETE);
	free(env);
	/* Four facts in the map. */
	env = signed_edit("\"default_deny\":true,", "", k);
	expect_grade(kr, env, SHA_EMPTY, RECEIPT_ADVISORY_FILTER,
	    RECEIPT_FACTS_INCOMPLETE);
	free(env);
	/* A fact with no case at all. */
	env = signed_edit(",{\"control\":\"reached\",\"expected\":\"blocked\","
	    "\"fact\":\"default_deny\",\"id\":\"dd-03\",\"observed\":\"blocked\","
	    "\"probe\":\"ICMP echo\\t(ping -c1) \\\\ \\u00e9\\ud83d\\ude00 "
	    "\\u007f\\u0001\",\"verdict\":\"pass\"}", "", k);
	expect_grade(kr, env, SHA_EMPTY, RECEIPT_ADVISORY_FILTER,
	    RECEIPT_FACTS_INCOMPLETE);
	free(env);
	bundle_keyring_free(kr);
	EVP_PKEY_free(k);
}

static void
test_signed_receipt_with_empty_facts_is_unsupported(void **state)
{
	EVP_PKEY *k = gen_key("ED25519");
	struct bundle_keyring *kr = ring(k, NULL);
	char *c, *env;

	(void)state;
	c = replace_once(PINNED_CANON, "\"facts\":{\"authority_separation\":"
	    "true,\"connect_time_public_address\":true,\"default_deny\":true,"
	    "\"exact_destination_match\":true,\"redirect_recheck\":true}",
	    "\"facts\":{}");
	env = sign_bytes(c, strlen(c), k);
	expect_grade(kr, env, SHA_EMPTY, RECEIPT_UNSUPPORTED,
	    RECEIPT_NO_SELECTOR);
	/* Still bound to the binary: for another one it is advisory. */
	expect_grade(kr, env, SHA_ABC, RECEIPT_ADVISORY_FILTER,
	    RECEIPT_REVISION_MISMATCH);
	free(env);
	free(c);
	bundle_keyring_free(kr);
	EVP_PKEY_free(k);
}

static void
test_signed_non_canonical_receipt_is_malformed(void **state)
{
	static const char *const edits[][2] = {
		{ "{\"cases\":[", "{ \"cases\":[" },		/* whitespace */
		{ "\"provider\":\"egress-guard\",\"provider_revision\"",
		  "\"provider_revision\"" },			/* key missing */
		{ "\\u2192", "\\u21A0" },			/* hex case */
		{ "public\\u2192private", "public\xe2\x86\x92private" },
		{ "\\u007f", "\x7f" },				/* raw DEL */
		{ "/v1/status", "\\/v1\\/status" },		/* escaped / */
		{ "\"id\":\"edm-01\",\"observed\"",
		  "\"observed\":\"deny not_allowlisted\",\"id\":\"edm-01\","
		  "\"observed\"" },				/* dup key */
		{ "\"schema\":\"egress-guard.conformance.v1\"}",
		  "\"schema\":\"egress-guard.conformance.v2\"}" },
		{ "\"provider\":\"egress-guard\"", "\"provider\":\"other\"" },
		{ "0.1.0+sha256:", "0.1.0+sha1:" },
		{ "\"default_deny\":true", "\"default_deny\":1" },
		{ "\"ran_at\":\"2026", "\"x\":true,\"ran_at\":\"2026" },
	};
	EVP_PKEY *k = gen_key("ED25519");
	struct bundle_keyring *kr = ring(k, NULL);
	char *env;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(edits) / sizeof(edits[0]); i++) {
		env = signed_edit(edits[i][0], edits[i][1], k);
		expect_malformed(kr, env);
		free(env);
	}
	bundle_keyring_free(kr);
	EVP_PKEY_free(k);
}

/* ---- the envelope ---- */

static void
test_envelope_refusals_are_malformed(void **state)
{
	EVP_PKEY *k = rfc_key();
	struct bundle_keyring *kr = ring(k, NULL);
	char *env, *s64, upper[BUNDLE_KEY_ID_LEN + 1];
	size_t i;

	(void)state;
	env = with_field(PINNED_ENVELOPE, "extra", json_string("x"));
	expect_malformed(kr, env);
	free(env);
	env = with_field(PINNED_ENVELOPE, "signature", NULL);
	expect_malformed(kr, env);
	free(env);
	env = with_field(PINNED_ENVELOPE, "schema",
	    json_string("egress-guard.bundle.v1"));
	expect_malformed(kr, env);
	free(env);
	env = with_field(PINNED_ENVELOPE, "key_id", json_integer(1));
	expect_malformed(kr, env);
	free(env);
	for (i = 0; i < BUNDLE_KEY_ID_LEN; i++)
		upper[i] = RFC_KEY_ID[i] >= 'a' ? (char)(RFC_KEY_ID[i] - 32) :
		    RFC_KEY_ID[i];
	upper[BUNDLE_KEY_ID_LEN] = '\0';
	env = with_field(PINNED_ENVELOPE, "key_id", json_string(upper));
	expect_malformed(kr, env);
	free(env);
	env = with_field(PINNED_ENVELOPE, "receipt", json_string(""));
	expect_malformed(kr, env);
	free(env);
	env = with_field(PINNED_ENVELOPE, "receipt", json_string("e30"));
	expect_malformed(kr, env);				/* no padding */
	free(env);
	env = with_field(PINNED_ENVELOPE, "receipt", json_string("e3 0="));
	expect_malformed(kr, env);
	free(env);
	env = with_field(PINNED_ENVELOPE, "receipt", json_string("e31="));
	expect_malformed(kr, env);			/* unused bits set */
	free(env);
	/* A signature of the wrong length is a bad signature, not a grade
	 * of anything better. */
	s64 = strdup("AAAA");
	env = with_field(PINNED_ENVELOPE, "signature", json_string(s64));
	expect_grade(kr, env, SHA_EMPTY, RECEIPT_ADVISORY_FILTER,
	    RECEIPT_BAD_SIGNATURE);
	free(env);
	free(s64);
	expect_malformed(kr, "");
	expect_malformed(kr, "[]");
	expect_malformed(kr, "null");
	expect_malformed(kr, PINNED_ENVELOPE "x");
	env = replace_once(PINNED_ENVELOPE, "\"key_id\"",
	    "\"key_id\":\"x\",\"key_id\"");
	expect_malformed(kr, env);				/* duplicate */
	free(env);
	/* Trailing whitespace (the newline sign prints) is fine. */
	expect_grade(kr, PINNED_ENVELOPE "\n", SHA_EMPTY,
	    RECEIPT_SECURITY_BOUNDARY, RECEIPT_OK);
	bundle_keyring_free(kr);
	EVP_PKEY_free(k);
}

/* One spelling per field, as for bundles: jansson would decode "\u0054"
 * to "T", so the same receipt would verify under a second envelope
 * spelling. Any escape in a key or value is malformed. */
static void
test_escaped_envelope_fields_are_malformed(void **state)
{
	static const char *const esc[][2] = {
		{ "\"signature\":\"T", "\"signature\":\"\\u0054" },
		{ "\"receipt\":\"e", "\"receipt\":\"\\u0065" },
		{ "\"key_id\":\"2", "\"key_id\":\"\\u0032" },
		{ "\"schema\":\"e", "\"schema\":\"\\u0065" },
		{ "\"schema\":", "\"\\u0073chema\":" },
		{ "\"signature\":\"T", "\"signature\":\"\\/T" },
	};
	EVP_PKEY *k = rfc_key();
	struct bundle_keyring *kr = ring(k, NULL);
	char *env;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(esc) / sizeof(esc[0]); i++) {
		env = replace_once(PINNED_ENVELOPE, esc[i][0], esc[i][1]);
		expect_malformed(kr, env);
		free(env);
	}
	/* Negative control: whitespace between tokens carries nothing. */
	env = replace_once(PINNED_ENVELOPE, "\",\"signature\":",
	    "\" ,\n \"signature\" : ");
	expect_grade(kr, env, SHA_EMPTY, RECEIPT_SECURITY_BOUNDARY, RECEIPT_OK);
	free(env);
	bundle_keyring_free(kr);
	EVP_PKEY_free(k);
}

static void
test_envelope_larger_than_max_is_malformed(void **state)
{
	EVP_PKEY *k = rfc_key();
	struct bundle_keyring *kr = ring(k, NULL);
	size_t n = RECEIPT_MAX_BYTES + 1, pl = strlen(PINNED_ENVELOPE);
	char *big = malloc(n + 1);

	(void)state;
	assert_non_null(big);
	memcpy(big, PINNED_ENVELOPE, pl);
	memset(big + pl, ' ', n - pl);
	big[n] = '\0';
	(void)grade_n(kr, big, n, SHA_EMPTY, -1);
	(void)grade_n(kr, big, n - 1, SHA_EMPTY, 0);	/* at the bound */
	free(big);
	bundle_keyring_free(kr);
	EVP_PKEY_free(k);
}

static void
test_verify_refuses_bad_binary_hash_argument(void **state)
{
	EVP_PKEY *k = rfc_key();
	struct bundle_keyring *kr = ring(k, NULL);
	struct receipt_verdict v;
	char err[256];

	(void)state;
	assert_int_equal(receipt_verify(kr, PINNED_ENVELOPE,
	    strlen(PINNED_ENVELOPE), NULL, &v, err, sizeof(err)), -1);
	assert_int_equal(receipt_verify(kr, PINNED_ENVELOPE,
	    strlen(PINNED_ENVELOPE), "E3B0", &v, err, sizeof(err)), -1);
	assert_int_equal(v.reason, RECEIPT_MALFORMED);
	bundle_keyring_free(kr);
	EVP_PKEY_free(k);
}

/* ---- grades ---- */

static void
test_grade_names_order_and_parse(void **state)
{
	static const char *const bad[] = {
		"", "Security_boundary", "advisory_filter ", "security",
		"none", "advisory-filter"
	};
	enum receipt_grade g;
	size_t i;

	(void)state;
	assert_true(RECEIPT_UNSUPPORTED < RECEIPT_ADVISORY_FILTER);
	assert_true(RECEIPT_ADVISORY_FILTER < RECEIPT_SECURITY_BOUNDARY);
	assert_int_equal(receipt_grade_parse("unsupported", &g), 0);
	assert_int_equal(g, RECEIPT_UNSUPPORTED);
	assert_int_equal(receipt_grade_parse("advisory_filter", &g), 0);
	assert_int_equal(g, RECEIPT_ADVISORY_FILTER);
	assert_int_equal(receipt_grade_parse("security_boundary", &g), 0);
	assert_int_equal(g, RECEIPT_SECURITY_BOUNDARY);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(receipt_grade_parse(bad[i], &g), -1);
	assert_int_equal(receipt_grade_parse(NULL, &g), -1);
	assert_true(receipt_grade_meets(RECEIPT_SECURITY_BOUNDARY,
	    RECEIPT_ADVISORY_FILTER));
	assert_true(receipt_grade_meets(RECEIPT_ADVISORY_FILTER,
	    RECEIPT_ADVISORY_FILTER));
	assert_false(receipt_grade_meets(RECEIPT_ADVISORY_FILTER,
	    RECEIPT_SECURITY_BOUNDARY));
	assert_false(receipt_grade_meets(RECEIPT_UNSUPPORTED,
	    RECEIPT_ADVISORY_FILTER));
	assert_string_equal(receipt_reason_name(RECEIPT_REVISION_MISMATCH),
	    "revision_mismatch");
	assert_string_equal(receipt_reason_name(RECEIPT_UNTRUSTED_SIGNER),
	    "untrusted_signer");
	assert_string_equal(receipt_fact_name(0), "authority_separation");
	assert_null(receipt_fact_name(RECEIPT_NFACTS));
}

/* ---- binary hashing and the attester directory ---- */

static void
test_file_sha256_known_vectors_and_bounds(void **state)
{
	char *d = tmp_dir(), *p, hex[RECEIPT_SHA256_HEX + 1], err[512];
	FILE *f;

	(void)state;
	p = write_tmp_in(d, "empty", "", 0);
	assert_int_equal(receipt_file_sha256(p, hex, err, sizeof(err)), 0);
	assert_string_equal(hex, SHA_EMPTY);
	free(p);
	p = write_tmp_in(d, "abc", "abc", 3);
	assert_int_equal(receipt_file_sha256(p, hex, err, sizeof(err)), 0);
	assert_string_equal(hex, SHA_ABC);
	free(p);
	/* A directory, a FIFO, a missing file. */
	assert_int_equal(receipt_file_sha256(d, hex, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "not a regular file"));
	assert_true(asprintf(&p, "%s/fifo", d) > 0);
	assert_int_equal(mkfifo(p, 0600), 0);
	assert_int_equal(receipt_file_sha256(p, hex, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "not a regular file"));
	free(p);
	assert_true(asprintf(&p, "%s/missing", d) > 0);
	assert_int_equal(receipt_file_sha256(p, hex, err, sizeof(err)), -1);
	check_err(err);
	free(p);
	/* One byte past the bound (sparse). */
	assert_true(asprintf(&p, "%s/big", d) > 0);
	f = fopen(p, "w");
	assert_non_null(f);
	assert_int_equal(ftruncate(fileno(f), (off_t)RECEIPT_BINARY_MAX + 1),
	    0);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(receipt_file_sha256(p, hex, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "larger than"));
	free(p);
	rm_dir(d);
}

static void
test_load_attesters_reads_only_pub_pem_files(void **state)
{
	EVP_PKEY *a = gen_key("ED25519"), *b = gen_key("ED25519");
	EVP_PKEY *rsa = gen_key("X25519");
	struct bundle_keyring *kr;
	char *d = tmp_dir(), err[1024] = "";

	(void)state;
	kr = bundle_keyring_new();
	assert_int_equal(receiptcmd_load_attesters(kr, d, err, sizeof(err)),
	    0);					/* empty: no attester */
	write_key_in(d, "a.pub.pem", a, 0);
	write_key_in(d, "b.pub.pem", b, 0);
	write_key_in(d, "b.pem", b, 1);		/* private: not *.pub.pem */
	free(write_tmp_in(d, "README", "x", 1));
	free(write_tmp_in(d, ".junk.pub.pem", "x", 1));
	free(write_tmp_in(d, ".pub.pem", "x", 1));
	assert_int_equal(receiptcmd_load_attesters(kr, d, err, sizeof(err)),
	    2);
	assert_int_equal(bundle_keyring_count(kr), 2);
	bundle_keyring_free(kr);
	/* A private key, an RSA key or junk named *.pub.pem is an error. */
	write_key_in(d, "c.pub.pem", b, 1);
	kr = bundle_keyring_new();
	assert_int_equal(receiptcmd_load_attesters(kr, d, err, sizeof(err)),
	    -1);
	assert_non_null(strstr(err, "c.pub.pem: contains a private key"));
	bundle_keyring_free(kr);
	write_key_in(d, "c.pub.pem", rsa, 0);
	kr = bundle_keyring_new();
	assert_int_equal(receiptcmd_load_attesters(kr, d, err, sizeof(err)),
	    -1);
	assert_non_null(strstr(err, "not an Ed25519 key"));
	bundle_keyring_free(kr);
	kr = bundle_keyring_new();
	assert_int_equal(receiptcmd_load_attesters(kr, "/nonexistent/eg",
	    err, sizeof(err)), -1);
	check_err(err);
	bundle_keyring_free(kr);
	rm_dir(d);
	EVP_PKEY_free(a);
	EVP_PKEY_free(b);
	EVP_PKEY_free(rsa);
}

static void
test_sign_envelope_refuses_non_ed25519_and_nothing(void **state)
{
	EVP_PKEY *rsa = gen_key("X25519"), *k = gen_key("ED25519");
	char err[512] = "";

	(void)state;
	assert_null(receiptcmd_sign_envelope(PINNED_CANON,
	    strlen(PINNED_CANON), rsa, err, sizeof(err)));
	check_err(err);
	assert_null(receiptcmd_sign_envelope(PINNED_CANON, 0, k, err,
	    sizeof(err)));
	assert_null(receiptcmd_sign_envelope(NULL, 1, k, err, sizeof(err)));
	assert_null(receiptcmd_sign_envelope(PINNED_CANON,
	    strlen(PINNED_CANON), NULL, err, sizeof(err)));
	assert_null(receiptcmd_sign_envelope(PINNED_CANON,
	    (size_t)RECEIPT_MAX_BYTES, k, err, sizeof(err)));
	assert_non_null(strstr(err, "too large"));
	EVP_PKEY_free(rsa);
	EVP_PKEY_free(k);
}

static void
test_canonical_refuses_bad_hash(void **state)
{
	struct receipt_report *r = parse_ok(pinned_report);
	char err[256] = "";
	size_t len;

	(void)state;
	assert_null(receipt_canonical(r, "E3B0C44298FC1C149AFBF4C8996FB92427AE"
	    "41E4649B934CA495991B7852B855", &len, err, sizeof(err)));
	assert_null(receipt_canonical(r, "e3b0", &len, err, sizeof(err)));
	assert_null(receipt_canonical(r, NULL, &len, err, sizeof(err)));
	assert_string_equal(receipt_report_guard_binary(r),
	    "/opt/eg/egress-guard");
	receipt_report_free(r);
}

/* A receipt certifies the binary the matrix ran: signing another one (a
 * binary modified or replaced after the run) is refused, and the error
 * names both hashes. */
static void
test_report_refuses_binary_changed_since_the_run(void **state)
{
	struct receipt_report *r = parse_ok(pinned_report);
	char err[512] = "";

	(void)state;
	assert_string_equal(receipt_report_guard_sha256(r), SHA_EMPTY);
	assert_int_equal(receipt_report_check_binary(r, SHA_ABC, err,
	    sizeof(err)), -1);
	check_err(err);
	assert_non_null(strstr(err, "sha256:" SHA_ABC));
	assert_non_null(strstr(err, "matrix ran sha256:" SHA_EMPTY));
	assert_int_equal(receipt_report_check_binary(r, NULL, err,
	    sizeof(err)), -1);
	assert_int_equal(receipt_report_check_binary(r, "e3b0", err,
	    sizeof(err)), -1);
	assert_int_equal(receipt_report_check_binary(NULL, SHA_EMPTY, err,
	    sizeof(err)), -1);
	/* Negative control: the binary that ran. */
	assert_int_equal(receipt_report_check_binary(r, SHA_EMPTY, err,
	    sizeof(err)), 0);
	receipt_report_free(r);
}

/* The Docker target's evidence: signed into the receipt, its tampering
 * caught by the signature like any other byte. */
static json_t *
docker_deployment(void)
{
	json_t *d = json_pack("{s:s, s:s, s:s, s:s, s:s}", "target", "docker",
	    "layout", "a", "engine", "docker 20.10.24+dfsg1", "image_id",
	    "sha256:" SHA_ABC, "image_repo_digests", "none");

	assert_non_null(d);
	return d;
}

static void
test_deployment_evidence_is_signed_into_receipt(void **state)
{
	EVP_PKEY *k = gen_key("ED25519");
	struct bundle_keyring *kr = ring(k, NULL);
	json_t *r = pinned();
	char *text, *c, *env;
	size_t len;

	(void)state;
	assert_int_equal(json_object_set_new(r, "deployment",
	    docker_deployment()), 0);
	text = text_of(r);
	c = canon_of(text, SHA_ABC, &len);
	assert_non_null(strstr(c, ",\"deployment\":{\"engine\":\"docker "
	    "20.10.24+dfsg1\",\"image_id\":\"sha256:" SHA_ABC "\","
	    "\"image_repo_digests\":\"none\",\"layout\":\"a\","
	    "\"target\":\"docker\"},\"facts\":"));
	free(c);
	free(text);
	env = envelope_of(r, SHA_ABC, k);
	expect_grade(kr, env, SHA_ABC, RECEIPT_SECURITY_BOUNDARY, RECEIPT_OK);
	expect_tampered(env, "\"layout\":\"a\"", "\"layout\":\"b\"", kr);
	free(env);
	/* Negative control: without it the receipt says nothing of one. */
	c = canon_of(pinned_report, SHA_ABC, &len);
	assert_null(strstr(c, "deployment"));
	free(c);
	bundle_keyring_free(kr);
	EVP_PKEY_free(k);
}

static void
test_report_refuses_malformed_deployment(void **state)
{
	json_t *r, *d;
	char key[8], big[RECEIPT_DEPLOY_VALUE + 2];
	int i;

	(void)state;
	r = pinned();
	set_str(r, "deployment", "docker");
	refuse_report(r, "deployment must be an object");
	r = pinned();
	assert_int_equal(json_object_set_new(r, "deployment", json_object()), 0);
	refuse_report(r, "deployment must be an object");
	r = pinned();
	d = docker_deployment();
	assert_int_equal(json_object_del(d, "image_id"), 0);
	assert_int_equal(json_object_set_new(r, "deployment", d), 0);
	refuse_report(r, "deployment lacks \"image_id\"");
	r = pinned();
	d = docker_deployment();
	set_str(d, "Engine", "x");
	assert_int_equal(json_object_set_new(r, "deployment", d), 0);
	refuse_report(r, "deployment key \"Engine\" must be 1-32 of [a-z_]");
	r = pinned();
	d = docker_deployment();
	set_str(d, "layout", "a\nfacts: all true");
	assert_int_equal(json_object_set_new(r, "deployment", d), 0);
	refuse_report(r, "deployment \"layout\" must be printable ASCII");
	r = pinned();
	d = docker_deployment();
	assert_int_equal(json_object_set_new(d, "engine", json_pack("{s:s}",
	    "version", "20.10")), 0);
	assert_int_equal(json_object_set_new(r, "deployment", d), 0);
	refuse_report(r, "deployment \"engine\" must be a string");
	r = pinned();
	d = docker_deployment();
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	set_str(d, "engine", big);
	assert_int_equal(json_object_set_new(r, "deployment", d), 0);
	refuse_report(r, "deployment \"engine\" must be a string of 1-256");
	r = pinned();
	d = docker_deployment();
	for (i = 0; i < RECEIPT_DEPLOY_KEYS; i++) {
		snprintf(key, sizeof(key), "k_%c", 'a' + i);
		set_str(d, key, "v");
	}
	assert_int_equal(json_object_set_new(r, "deployment", d), 0);
	refuse_report(r, "deployment must be an object of 1-16");
	/* Negative control: the well-formed one passes. */
	r = pinned();
	assert_int_equal(json_object_set_new(r, "deployment",
	    docker_deployment()), 0);
	{
		char *text = text_of(r);

		receipt_report_free(parse_ok(text));
		free(text);
	}
	json_decref(r);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_canonical_bytes_of_pinned_report_are_exact),
		cmocka_unit_test(test_envelope_matches_node_signature_for_rfc8032_key),
		cmocka_unit_test(test_signed_message_is_context_nul_then_receipt),
		cmocka_unit_test(test_sign_then_verify_is_security_boundary),
		cmocka_unit_test(test_deployment_evidence_is_signed_into_receipt),
		cmocka_unit_test(test_report_refuses_malformed_deployment),
		cmocka_unit_test(test_large_receipt_near_the_size_bound_round_trips),
		cmocka_unit_test(test_tampered_fact_is_bad_signature),
		cmocka_unit_test(test_tampered_case_verdict_is_bad_signature),
		cmocka_unit_test(test_tampered_ran_at_is_bad_signature),
		cmocka_unit_test(test_flipped_bit_anywhere_in_receipt_bytes_is_bad_signature),
		cmocka_unit_test(test_flipped_bit_anywhere_in_envelope_never_security_boundary),
		cmocka_unit_test(test_swapped_revision_is_revision_mismatch),
		cmocka_unit_test(test_signer_not_in_attesters_is_untrusted),
		cmocka_unit_test(test_trusted_key_id_with_foreign_signature_is_bad_signature),
		cmocka_unit_test(test_policy_bundle_context_cannot_pass_as_receipt),
		cmocka_unit_test(test_report_with_four_facts_never_security_boundary),
		cmocka_unit_test(test_report_fact_false_stays_false_though_cases_pass),
		cmocka_unit_test(test_report_fact_true_but_case_inconclusive_is_false),
		cmocka_unit_test(test_report_fact_true_but_case_failing_is_false),
		cmocka_unit_test(test_report_fact_true_without_cases_is_false),
		cmocka_unit_test(test_report_refuses_pass_that_contradicts_its_strings),
		cmocka_unit_test(test_report_refuses_unknown_or_bad_keys),
		cmocka_unit_test(test_report_refuses_binary_changed_since_the_run),
		cmocka_unit_test(test_report_accepts_fractional_ran_at),
		cmocka_unit_test(test_signed_receipt_claiming_unproved_fact_never_security_boundary),
		cmocka_unit_test(test_signed_receipt_with_empty_facts_is_unsupported),
		cmocka_unit_test(test_signed_non_canonical_receipt_is_malformed),
		cmocka_unit_test(test_envelope_refusals_are_malformed),
		cmocka_unit_test(test_escaped_envelope_fields_are_malformed),
		cmocka_unit_test(test_envelope_larger_than_max_is_malformed),
		cmocka_unit_test(test_verify_refuses_bad_binary_hash_argument),
		cmocka_unit_test(test_grade_names_order_and_parse),
		cmocka_unit_test(test_file_sha256_known_vectors_and_bounds),
		cmocka_unit_test(test_load_attesters_reads_only_pub_pem_files),
		cmocka_unit_test(test_sign_envelope_refuses_non_ed25519_and_nothing),
		cmocka_unit_test(test_canonical_refuses_bad_hash),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
