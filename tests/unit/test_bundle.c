/* Signed policy bundles (docs/design.md "Signed bundle"): signing (ctl/keys.c)
 * and verification (plane/bundle.c) round-trip; every refusal the format
 * promises, each named; the keyring's key hygiene; keygen's file modes;
 * and the push client's response parser (ctl/client.c). */
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

#include "ctl/client.h"
#include "ctl/keys.h"
#include "plane/bundle.h"
#include "plane/bundlepeek.h"
#include "policy/policy.h"
#include "util/file.h"

/* docs/design.md's canonical example ("Policy"). */
#define DESIGN_CANON "{\"allow\":[{\"host\":\"api.example.com\",\"port\":443}," \
    "{\"host\":\"example.org\",\"port\":80}],\"epoch\":7,\"mode\":\"allowlist\"," \
    "\"schema\":\"egress-guard.policy.v1\"}"
#define DESIGN_DIGEST \
    "sha256:01f35d4dd3a4cf988d354d7f137e407335f090574ff5cfc0015f611e1531e3a0"

/* RFC 8032 section 7.1 TEST 1 key pair. */
#define RFC_SEED "9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60"
#define RFC_PUB  "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a"
/* SHA-256 of the raw RFC_PUB bytes, computed with Python's hashlib. */
#define RFC_KEY_ID "21fe31dfa154a261626bf854046fd2271b7bed4b6abe45aa58877ef47f9721b9"
/* DESIGN_CANON signed with the RFC key by Node.js's crypto.sign(null, ...)
 * over "egress-guard.policy.v1" 0x00 DESIGN_CANON: an independent
 * implementation pins the bytes (Ed25519 signatures are deterministic). */
#define RFC_BUNDLE "{\"schema\":\"egress-guard.bundle.v1\",\"key_id\":\"" \
    RFC_KEY_ID "\",\"policy\":\"eyJhbGxvdyI6W3siaG9zdCI6ImFwaS5leGFtcGxlLmNv" \
    "bSIsInBvcnQiOjQ0M30seyJob3N0IjoiZXhhbXBsZS5vcmciLCJwb3J0Ijo4MH1dLCJlcG9j" \
    "aCI6NywibW9kZSI6ImFsbG93bGlzdCIsInNjaGVtYSI6ImVncmVzcy1ndWFyZC5wb2xpY3ku" \
    "djEifQ==\",\"signature\":\"boaqngugO0rxmmEVUsp6kqfREov2gvUp4cPamk8LuE5xOw" \
    "KMKjcxPh5rvHnx34eZ2/u8RIZf5kPm0zX4gwfODQ==\"}"

#define SMALL_CANON "{\"allow\":[{\"host\":\"a.example\",\"port\":443}]," \
    "\"epoch\":3,\"mode\":\"allowlist\",\"schema\":\"egress-guard.policy.v1\"}"

static const char rsa_pub_pem[] =
    "-----BEGIN PUBLIC KEY-----\n"
    "MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAkNEsew8r5WA9REFv8Gxt\n"
    "26A9rfUVdJ+yOmY9NTJzsvR3PxzDcFdG04Sy8NTkvrMVbd1nc3cMjMLbI6RYO1r4\n"
    "fprztX6+2In+hR8xvIfpP7Q/AMg1mlqcozA8YkvArCxFpXje/mSXZqGygUDAPFiW\n"
    "/DWyBujlf1ttPM4UZuQrS6wxFG1Jw3jdUamlNLz4TLfXmcgC9eZayhiy0d+fqejq\n"
    "a3MpZvul6fWBcfK/1uozBmqnf85zloOly+SX+V3apkP+xMNhrYXT7SOnAKNbN0k2\n"
    "Njlozcg787ms+mZry7S366sWYTecd3wwdGdnhn0IC0r28smvmhqNGt04gFwkaFMD\n"
    "vQIDAQAB\n"
    "-----END PUBLIC KEY-----\n";

static const char ec_pub_pem[] =
    "-----BEGIN PUBLIC KEY-----\n"
    "MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEyT8AZJqNqYxsxBiX4FLotXeZF6dd\n"
    "pJxet2vhkf3X43Oca6Q2QYaQQnv8EiXq4+L9h/K8jNwTa6OTguHv1kVK7A==\n"
    "-----END PUBLIC KEY-----\n";

/* ---- helpers ---- */

/* err is printable ASCII only. */
static void
check_err(const char *err)
{
	size_t i;

	assert_true(err[0] != '\0');
	for (i = 0; err[i] != '\0'; i++)
		assert_true(err[i] >= 0x20 && err[i] < 0x7f);
}

static EVP_PKEY *
gen_key(const char *type)
{
	EVP_PKEY *pk = EVP_PKEY_Q_keygen(NULL, NULL, type);

	assert_non_null(pk);
	return pk;
}

static int
nibble(char c)
{
	return c <= '9' ? c - '0' : c - 'a' + 10;
}

static void
unhex(const char *hex, unsigned char *out, size_t n)
{
	size_t i;

	assert_int_equal(strlen(hex), 2 * n);
	for (i = 0; i < n; i++)
		out[i] = (unsigned char)(nibble(hex[2 * i]) << 4 |
		    nibble(hex[2 * i + 1]));
}

static EVP_PKEY *
rfc_key(void)
{
	unsigned char seed[32];
	EVP_PKEY *pk;

	unhex(RFC_SEED, seed, sizeof(seed));
	pk = EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, NULL, seed,
	    sizeof(seed));
	assert_non_null(pk);
	return pk;
}

static char *
write_tmp(const void *content, size_t len)
{
	char *path = strdup("/tmp/eg-bundle-test-XXXXXX");
	int fd;

	assert_non_null(path);
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, content, len), (ssize_t)len);
	close(fd);
	return path;
}

static char *
write_tmp_str(const char *s)
{
	return write_tmp(s, strlen(s));
}

/* Writes pk's SPKI PEM (or, with priv, its PKCS#8 PEM) to a temp file. */
static char *
write_key(EVP_PKEY *pk, int priv)
{
	BIO *bio = BIO_new(BIO_s_mem());
	char *data, *path;
	long n;

	assert_non_null(bio);
	if (priv)
		assert_int_equal(PEM_write_bio_PKCS8PrivateKey(bio, pk, NULL,
		    NULL, 0, NULL, NULL), 1);
	else
		assert_int_equal(PEM_write_bio_PUBKEY(bio, pk), 1);
	n = BIO_get_mem_data(bio, &data);
	assert_true(n > 0);
	path = write_tmp(data, (size_t)n);
	BIO_free(bio);
	return path;
}

static void
drop_file(char *path)
{
	unlink(path);
	free(path);
}

/* A keyring trusting the public halves of the given keys. */
static struct bundle_keyring *
ring(EVP_PKEY *a, EVP_PKEY *b)
{
	struct bundle_keyring *kr = bundle_keyring_new();
	EVP_PKEY *keys[2] = { a, b };
	char err[512] = "", *path;
	size_t i;

	assert_non_null(kr);
	for (i = 0; i < 2; i++) {
		if (keys[i] == NULL)
			continue;
		path = write_key(keys[i], 0);
		if (bundle_keyring_add_file(kr, path, err, sizeof(err)) != 0)
			fail_msg("add %s: %s", path, err);
		drop_file(path);
	}
	return kr;
}

static char *
sign_ok(const char *canon, EVP_PKEY *pk)
{
	char err[512] = "", *b;

	b = ctlkeys_sign_bytes(canon, strlen(canon), pk, err, sizeof(err));
	if (b == NULL)
		fail_msg("sign: %s", err);
	return b;
}

static void
key_id_of(EVP_PKEY *pk, char *id)
{
	char err[128];

	assert_int_equal(bundle_key_id(pk, id, err, sizeof(err)), 0);
}

static char *
b64(const unsigned char *in, size_t len)
{
	char *out = malloc(4 * ((len + 2) / 3) + 1);

	assert_non_null(out);
	EVP_EncodeBlock((unsigned char *)out, in, (int)len);
	return out;
}

static void
sign_raw(EVP_PKEY *pk, const void *msg, size_t len, unsigned char *sig)
{
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	size_t siglen = 64;

	assert_non_null(ctx);
	assert_int_equal(EVP_DigestSignInit(ctx, NULL, NULL, NULL, pk), 1);
	assert_int_equal(EVP_DigestSign(ctx, sig, &siglen, msg, len), 1);
	assert_int_equal(siglen, 64);
	EVP_MD_CTX_free(ctx);
}

/* A bundle assembled field by field, for the hostile cases. */
static char *
assemble(const char *id, const void *pol, size_t plen, const void *sig,
    size_t slen)
{
	char *p64 = b64(pol, plen), *s64 = b64(sig, slen), *out;
	size_t n = strlen(id) + strlen(p64) + strlen(s64) + 128;

	out = malloc(n);
	assert_non_null(out);
	snprintf(out, n, "{\"schema\":\"egress-guard.bundle.v1\",\"key_id\":"
	    "\"%s\",\"policy\":\"%s\",\"signature\":\"%s\"}", id, p64, s64);
	free(p64);
	free(s64);
	return out;
}

/* Signs msg (whatever it is) and wraps pol as the policy. */
static char *
assemble_signed(EVP_PKEY *pk, const void *msg, size_t mlen, const char *pol)
{
	unsigned char sig[64];
	char id[BUNDLE_KEY_ID_LEN + 1];

	key_id_of(pk, id);
	sign_raw(pk, msg, mlen, sig);
	return assemble(id, pol, strlen(pol), sig, sizeof(sig));
}

/* Signs the right domain-separated message over arbitrary policy bytes. */
static char *
assemble_policy(EVP_PKEY *pk, const char *pol)
{
	size_t mlen;
	unsigned char *m = bundle_signed_message(pol, strlen(pol), &mlen);
	char *b;

	assert_non_null(m);
	b = assemble_signed(pk, m, mlen, pol);
	free(m);
	return b;
}

static void
expect_refused_n(const struct bundle_keyring *kr, const char *b, size_t len,
    enum bundle_error want)
{
	enum bundle_error why = BUNDLE_OK;
	char err[1024] = "", id[BUNDLE_KEY_ID_LEN + 1] = "untouched";
	struct policy *p;

	p = bundle_verify(kr, b, len, id, &why, err, sizeof(err));
	if (p != NULL) {
		policy_free(p);
		fail_msg("accepted: %.*s", (int)len, b);
	}
	if (why != want)
		fail_msg("refused as %s, want %s (%s): %.*s",
		    bundle_error_name(why), bundle_error_name(want), err,
		    (int)len, b);
	check_err(err);
	assert_string_equal(id, "untouched");
}

static void
expect_refused(const struct bundle_keyring *kr, const char *b,
    enum bundle_error want)
{
	expect_refused_n(kr, b, strlen(b), want);
}

static struct policy *
expect_ok(const struct bundle_keyring *kr, const char *b, char *id)
{
	enum bundle_error why = BUNDLE_MALFORMED;
	char err[1024] = "";
	struct policy *p;

	p = bundle_verify(kr, b, strlen(b), id, &why, err, sizeof(err));
	if (p == NULL)
		fail_msg("refused (%s): %s", bundle_error_name(why), err);
	assert_int_equal(why, BUNDLE_OK);
	return p;
}

/* Replaces the string value of field in bundle b. */
static char *
with_field(const char *b, const char *field, const char *value)
{
	json_t *root = json_loads(b, 0, NULL);
	char *out;

	assert_non_null(root);
	assert_int_equal(json_object_set_new(root, field,
	    json_string(value)), 0);
	out = json_dumps(root, JSON_COMPACT | JSON_PRESERVE_ORDER);
	assert_non_null(out);
	json_decref(root);
	return out;
}

/* The string value of field in bundle b, malloc'd. */
static char *
field_of(const char *b, const char *field)
{
	json_t *root = json_loads(b, 0, NULL);
	char *out;

	assert_non_null(root);
	out = strdup(json_string_value(json_object_get(root, field)));
	assert_non_null(out);
	json_decref(root);
	return out;
}

static unsigned char *
unb64(const char *s, size_t *len)
{
	size_t n = strlen(s), pad = 0;
	unsigned char *out = malloc(n);

	assert_non_null(out);
	if (n > 0 && s[n - 1] == '=')
		pad = s[n - 2] == '=' ? 2 : 1;
	assert_int_equal(EVP_DecodeBlock(out, (const unsigned char *)s,
	    (int)n), (int)(n / 4 * 3));
	*len = n / 4 * 3 - pad;
	return out;
}

/* ---- round trip and known answers ---- */

static void
test_sign_then_verify_round_trips_canonical_bytes(void **state)
{
	EVP_PKEY *pk = gen_key("ED25519");
	struct bundle_keyring *kr = ring(pk, NULL);
	char id[BUNDLE_KEY_ID_LEN + 1], want[BUNDLE_KEY_ID_LEN + 1];
	const char *canon;
	struct policy *p;
	char *b;
	size_t len;

	(void)state;
	b = sign_ok(DESIGN_CANON, pk);
	p = expect_ok(kr, b, id);
	canon = policy_canonical(p, &len);
	assert_int_equal(len, strlen(DESIGN_CANON));
	assert_memory_equal(canon, DESIGN_CANON, len);
	assert_string_equal(policy_digest(p), DESIGN_DIGEST);
	assert_int_equal(policy_epoch(p), 7);
	key_id_of(pk, want);
	assert_string_equal(id, want);
	policy_free(p);
	/* key_id may be NULL; why and err may be NULL. */
	p = bundle_verify(kr, b, strlen(b), NULL, NULL, NULL, 0);
	assert_non_null(p);
	policy_free(p);
	/* Surrounding JSON whitespace is not part of what is signed. */
	{
		size_t n = strlen(b) + 8;
		char *spaced = malloc(n);

		assert_non_null(spaced);
		snprintf(spaced, n, " \n%s\r\n", b);
		p = expect_ok(kr, spaced, id);
		policy_free(p);
		free(spaced);
	}
	free(b);
	bundle_keyring_free(kr);
	EVP_PKEY_free(pk);
}

/* About 700 KB of canonical policy: the base64 and size paths with a
 * bundle close to BUNDLE_MAX_BYTES. */
static void
test_large_policy_round_trips_near_the_size_bound(void **state)
{
	EVP_PKEY *pk = gen_key("ED25519");
	struct bundle_keyring *kr = ring(pk, NULL);
	size_t n = 17000, cap = n * 48 + 256, o = 0, i, len, blen;
	char *json = malloc(cap), *b, err[512] = "";
	struct policy *p, *q;
	const char *canon;

	(void)state;
	assert_non_null(json);
	o += (size_t)snprintf(json + o, cap - o, "{\"allow\":[");
	for (i = 0; i < n; i++)
		o += (size_t)snprintf(json + o, cap - o, "%s{\"host\":"
		    "\"h%06zu.example.com\",\"port\":443}", i ? "," : "", i);
	snprintf(json + o, cap - o, "],\"epoch\":9,\"mode\":\"allowlist\","
	    "\"schema\":\"egress-guard.policy.v1\"}");
	p = policy_parse(json, strlen(json), err, sizeof(err));
	if (p == NULL)
		fail_msg("parse: %s", err);
	canon = policy_canonical(p, &len);
	assert_true(len > 700000);
	b = ctlkeys_sign_bytes(canon, len, pk, err, sizeof(err));
	if (b == NULL)
		fail_msg("sign: %s", err);
	blen = strlen(b);
	assert_true(blen > 900000 && blen <= BUNDLE_MAX_BYTES);
	q = expect_ok(kr, b, NULL);
	assert_string_equal(policy_digest(q), policy_digest(p));
	assert_int_equal(policy_entries(q), n);
	policy_free(q);
	policy_free(p);
	free(b);
	free(json);
	bundle_keyring_free(kr);
	EVP_PKEY_free(pk);
}

static void
test_bundle_matches_node_signature_for_rfc8032_key(void **state)
{
	EVP_PKEY *pk = rfc_key();
	struct bundle_keyring *kr = ring(pk, NULL);
	char id[BUNDLE_KEY_ID_LEN + 1];
	struct policy *p;
	char *b;

	(void)state;
	b = sign_ok(DESIGN_CANON, pk);
	assert_string_equal(b, RFC_BUNDLE);
	p = expect_ok(kr, RFC_BUNDLE, id);
	assert_string_equal(id, RFC_KEY_ID);
	assert_string_equal(policy_digest(p), DESIGN_DIGEST);
	policy_free(p);
	free(b);
	bundle_keyring_free(kr);
	EVP_PKEY_free(pk);
}

static void
test_key_id_is_sha256_of_raw_public_key(void **state)
{
	static const char hex[] = "0123456789abcdef";
	EVP_PKEY *pk = gen_key("ED25519"), *rfc = rfc_key();
	unsigned char raw[32], md[32], rfcpub[32];
	char want[65], id[65], err[128];
	size_t rawlen = sizeof(raw), i;
	unsigned int mdlen = 0;
	char *b, *bid;

	(void)state;
	assert_int_equal(EVP_PKEY_get_raw_public_key(pk, raw, &rawlen), 1);
	assert_int_equal(rawlen, 32);
	assert_int_equal(EVP_Digest(raw, rawlen, md, &mdlen, EVP_sha256(),
	    NULL), 1);
	for (i = 0; i < 32; i++) {
		want[2 * i] = hex[md[i] >> 4];
		want[2 * i + 1] = hex[md[i] & 0xf];
	}
	want[64] = '\0';
	key_id_of(pk, id);
	assert_string_equal(id, want);
	b = sign_ok(SMALL_CANON, pk);
	bid = field_of(b, "key_id");
	assert_string_equal(bid, want);
	free(bid);
	free(b);

	/* The RFC key: its raw public key is RFC_PUB, its id is pinned. */
	rawlen = sizeof(raw);
	assert_int_equal(EVP_PKEY_get_raw_public_key(rfc, raw, &rawlen), 1);
	unhex(RFC_PUB, rfcpub, sizeof(rfcpub));
	assert_memory_equal(raw, rfcpub, 32);
	key_id_of(rfc, id);
	assert_string_equal(id, RFC_KEY_ID);
	EVP_PKEY_free(rfc);
	EVP_PKEY_free(pk);

	/* Only Ed25519 has a key id. */
	pk = gen_key("X25519");
	assert_int_equal(bundle_key_id(pk, id, err, sizeof(err)), -1);
	check_err(err);
	EVP_PKEY_free(pk);
	assert_int_equal(bundle_key_id(NULL, id, err, sizeof(err)), -1);
}

static void
test_signed_message_is_context_nul_then_policy(void **state)
{
	static const char want[] = "egress-guard.policy.v1\0{}";
	unsigned char *m;
	size_t len = 0;

	(void)state;
	m = bundle_signed_message("{}", 2, &len);
	assert_non_null(m);
	assert_int_equal(len, sizeof(want) - 1);
	assert_memory_equal(m, want, len);
	free(m);
	assert_null(bundle_signed_message(NULL, 0, &len));
}

/* ---- every bit is covered ---- */

static void
test_flipped_bit_anywhere_in_policy_bytes_is_refused(void **state)
{
	EVP_PKEY *pk = gen_key("ED25519");
	struct bundle_keyring *kr = ring(pk, NULL);
	char *b = sign_ok(DESIGN_CANON, pk), *p64, *s64, *id, *bad;
	unsigned char *pol, *sig;
	size_t plen, slen, i;
	int bit;

	(void)state;
	id = field_of(b, "key_id");
	p64 = field_of(b, "policy");
	s64 = field_of(b, "signature");
	pol = unb64(p64, &plen);
	sig = unb64(s64, &slen);
	assert_int_equal(plen, strlen(DESIGN_CANON));
	for (i = 0; i < plen; i++) {
		for (bit = 0; bit < 8; bit++) {
			pol[i] ^= (unsigned char)(1u << bit);
			bad = assemble(id, pol, plen, sig, slen);
			expect_refused(kr, bad, BUNDLE_BAD_SIGNATURE);
			free(bad);
			pol[i] ^= (unsigned char)(1u << bit);
		}
	}
	/* Negative control: unflipped, the reassembled bundle verifies. */
	bad = assemble(id, pol, plen, sig, slen);
	policy_free(expect_ok(kr, bad, NULL));
	free(bad);
	free(pol);
	free(sig);
	free(id);
	free(p64);
	free(s64);
	free(b);
	bundle_keyring_free(kr);
	EVP_PKEY_free(pk);
}

static void
test_flipped_bit_anywhere_in_signature_is_refused(void **state)
{
	EVP_PKEY *pk = gen_key("ED25519");
	struct bundle_keyring *kr = ring(pk, NULL);
	char *b = sign_ok(SMALL_CANON, pk), *s64, *id, *bad;
	unsigned char *sig;
	size_t slen, i;
	int bit;

	(void)state;
	id = field_of(b, "key_id");
	s64 = field_of(b, "signature");
	sig = unb64(s64, &slen);
	assert_int_equal(slen, 64);
	for (i = 0; i < slen; i++) {
		for (bit = 0; bit < 8; bit++) {
			sig[i] ^= (unsigned char)(1u << bit);
			bad = assemble(id, SMALL_CANON, strlen(SMALL_CANON),
			    sig, slen);
			expect_refused(kr, bad, BUNDLE_BAD_SIGNATURE);
			free(bad);
			sig[i] ^= (unsigned char)(1u << bit);
		}
	}
	bad = assemble(id, SMALL_CANON, strlen(SMALL_CANON), sig, slen);
	policy_free(expect_ok(kr, bad, NULL));
	free(bad);
	free(sig);
	free(id);
	free(s64);
	free(b);
	bundle_keyring_free(kr);
	EVP_PKEY_free(pk);
}

/* The bundle as sent: schema, names, key_id, base64 spelling, all of it. */
static void
test_flipped_bit_anywhere_in_bundle_text_is_refused(void **state)
{
	EVP_PKEY *pk = gen_key("ED25519");
	struct bundle_keyring *kr = ring(pk, NULL);
	char *b = sign_ok(SMALL_CANON, pk);
	size_t len = strlen(b), i;
	enum bundle_error why;
	struct policy *p;
	int bit;

	(void)state;
	for (i = 0; i < len; i++) {
		for (bit = 0; bit < 8; bit++) {
			b[i] ^= (char)(1u << bit);
			p = bundle_verify(kr, b, len, NULL, &why, NULL, 0);
			if (p != NULL) {
				policy_free(p);
				fail_msg("accepted with bit %d of byte %zu "
				    "flipped", bit, i);
			}
			assert_int_not_equal(why, BUNDLE_OK);
			b[i] ^= (char)(1u << bit);
		}
	}
	policy_free(expect_ok(kr, b, NULL));
	free(b);
	bundle_keyring_free(kr);
	EVP_PKEY_free(pk);
}

static void
test_wrong_context_string_is_refused(void **state)
{
	static const char *const contexts[] = {
		"egress-guard.policy.v2",	/* another version */
		"egress-guard.policy.v1",	/* without the 0x00 */
		"egress-guard.policy.v",	/* a prefix */
		"egress-guard.sandbox-egress-conformance.v1",	/* receipts */
		"",				/* the bare policy */
		NULL
	};
	EVP_PKEY *pk = gen_key("ED25519");
	struct bundle_keyring *kr = ring(pk, NULL);
	size_t plen = strlen(SMALL_CANON), clen, i;
	unsigned char *m = malloc(plen + 64);
	char *b;

	(void)state;
	assert_non_null(m);
	for (i = 0; contexts[i] != NULL; i++) {
		clen = strlen(contexts[i]);
		memcpy(m, contexts[i], clen);
		memcpy(m + clen, SMALL_CANON, plen);
		b = assemble_signed(pk, m, clen + plen, SMALL_CANON);
		expect_refused(kr, b, BUNDLE_BAD_SIGNATURE);
		free(b);
	}
	/* v2 with the separator, and v1 with two separators. */
	memcpy(m, "egress-guard.policy.v2\0", 23);
	memcpy(m + 23, SMALL_CANON, plen);
	b = assemble_signed(pk, m, 23 + plen, SMALL_CANON);
	expect_refused(kr, b, BUNDLE_BAD_SIGNATURE);
	free(b);
	memcpy(m, "egress-guard.policy.v1\0\0", 24);
	memcpy(m + 24, SMALL_CANON, plen);
	b = assemble_signed(pk, m, 24 + plen, SMALL_CANON);
	expect_refused(kr, b, BUNDLE_BAD_SIGNATURE);
	free(b);
	/* Negative control: the right context, assembled the same way. */
	memcpy(m, "egress-guard.policy.v1\0", 23);
	memcpy(m + 23, SMALL_CANON, plen);
	b = assemble_signed(pk, m, 23 + plen, SMALL_CANON);
	policy_free(expect_ok(kr, b, NULL));
	free(b);
	free(m);
	bundle_keyring_free(kr);
	EVP_PKEY_free(pk);
}

/* ---- keys ---- */

static void
test_unknown_key_is_refused(void **state)
{
	EVP_PKEY *a = gen_key("ED25519"), *other = gen_key("ED25519");
	struct bundle_keyring *kr = ring(other, NULL), *empty = ring(NULL, NULL);
	char *b = sign_ok(SMALL_CANON, a);

	(void)state;
	expect_refused(kr, b, BUNDLE_UNKNOWN_KEY);
	expect_refused(empty, b, BUNDLE_UNKNOWN_KEY);
	expect_refused(NULL, b, BUNDLE_UNKNOWN_KEY);
	free(b);
	bundle_keyring_free(kr);
	bundle_keyring_free(empty);
	EVP_PKEY_free(a);
	EVP_PKEY_free(other);
}

static void
test_key_id_of_another_trusted_key_is_refused(void **state)
{
	EVP_PKEY *a = gen_key("ED25519"), *b = gen_key("ED25519");
	struct bundle_keyring *kr = ring(a, b);
	char ida[65], idb[65], *ba, *bb, *swapped;

	(void)state;
	key_id_of(a, ida);
	key_id_of(b, idb);
	ba = sign_ok(SMALL_CANON, a);
	bb = sign_ok(SMALL_CANON, b);
	policy_free(expect_ok(kr, ba, NULL));
	policy_free(expect_ok(kr, bb, NULL));
	/* Signed by a, claiming b: the signature is checked under b. */
	swapped = with_field(ba, "key_id", idb);
	expect_refused(kr, swapped, BUNDLE_BAD_SIGNATURE);
	free(swapped);
	swapped = with_field(bb, "key_id", ida);
	expect_refused(kr, swapped, BUNDLE_BAD_SIGNATURE);
	free(swapped);
	free(ba);
	free(bb);
	bundle_keyring_free(kr);
	EVP_PKEY_free(a);
	EVP_PKEY_free(b);
}

/* ---- the signed bytes must be the canonical policy ---- */

static void
test_signed_non_canonical_policy_is_malformed(void **state)
{
	static const char *const policies[] = {
		/* Valid policies, not in canonical form. */
		"{\"allow\": [{\"host\":\"a.example\",\"port\":443}],\"epoch\":3,"
		    "\"mode\":\"allowlist\",\"schema\":\"egress-guard.policy.v1\"}",
		SMALL_CANON "\n",
		" " SMALL_CANON,
		"{\"schema\":\"egress-guard.policy.v1\",\"mode\":\"allowlist\","
		    "\"epoch\":3,\"allow\":[{\"host\":\"a.example\",\"port\":443}]}",
		"{\"allow\":[{\"port\":443,\"host\":\"a.example\"}],\"epoch\":3,"
		    "\"mode\":\"allowlist\",\"schema\":\"egress-guard.policy.v1\"}",
		"{\"allow\":[{\"host\":\"A.Example\",\"port\":443}],\"epoch\":3,"
		    "\"mode\":\"allowlist\",\"schema\":\"egress-guard.policy.v1\"}",
		"{\"allow\":[{\"host\":\"b.example\",\"port\":1},{\"host\":"
		    "\"a.example\",\"port\":443}],\"epoch\":3,\"mode\":"
		    "\"allowlist\",\"schema\":\"egress-guard.policy.v1\"}",
		"{\"allow\":[{\"host\":\"a.example\",\"port\":443},{\"host\":"
		    "\"a.example\",\"port\":443}],\"epoch\":3,\"mode\":"
		    "\"allowlist\",\"schema\":\"egress-guard.policy.v1\"}",
		"{\"allow\":[{\"host\":\"[2001:db8::1]\",\"port\":443}],\"epoch\":3,"
		    "\"mode\":\"allowlist\",\"schema\":\"egress-guard.policy.v1\"}",
		"{\"allow\":[{\"host\":\"a.exampl\\u0065\",\"port\":443}],\"epoch\":3,"
		    "\"mode\":\"allowlist\",\"schema\":\"egress-guard.policy.v1\"}",
		"{\"allow\":[{\"host\":\"a.example\",\"port\":443}],\"epoch\":3.0,"
		    "\"mode\":\"allowlist\",\"schema\":\"egress-guard.policy.v1\"}",
		/* Not policies at all, yet validly signed. */
		"{\"allow\":[],\"epoch\":3,\"mode\":\"allowlist\",\"schema\":"
		    "\"egress-guard.policy.v1\",\"extra\":1}",
		"{\"allow\":[{\"host\":\"*.example\",\"port\":443}],\"epoch\":3,"
		    "\"mode\":\"allowlist\",\"schema\":\"egress-guard.policy.v1\"}",
		"[]",
		"not json",
		"",
		NULL
	};
	EVP_PKEY *pk = gen_key("ED25519");
	struct bundle_keyring *kr = ring(pk, NULL);
	char *b;
	size_t i;

	(void)state;
	for (i = 0; policies[i] != NULL; i++) {
		b = assemble_policy(pk, policies[i]);
		expect_refused(kr, b, BUNDLE_MALFORMED);
		free(b);
	}
	/* Negative control: the canonical spelling of the first ones. */
	b = assemble_policy(pk, SMALL_CANON);
	policy_free(expect_ok(kr, b, NULL));
	free(b);
	bundle_keyring_free(kr);
	EVP_PKEY_free(pk);
}

/* ---- the bundle envelope ---- */

static void
test_duplicate_bundle_key_is_malformed(void **state)
{
	EVP_PKEY *pk = gen_key("ED25519");
	struct bundle_keyring *kr = ring(pk, NULL);
	char *b = sign_ok(SMALL_CANON, pk), *dup;
	size_t n = strlen(b) + 128;

	(void)state;
	dup = malloc(n);
	assert_non_null(dup);
	/* The same schema twice: harmless-looking, still refused. */
	snprintf(dup, n, "{\"schema\":\"egress-guard.bundle.v1\",%s", b + 1);
	expect_refused(kr, dup, BUNDLE_MALFORMED);
	snprintf(dup, n, "%.*s,\"key_id\":\"%064d\"}", (int)strlen(b) - 1, b, 0);
	expect_refused(kr, dup, BUNDLE_MALFORMED);
	free(dup);
	free(b);
	bundle_keyring_free(kr);
	EVP_PKEY_free(pk);
}

static void
test_extra_or_missing_bundle_key_is_malformed(void **state)
{
	EVP_PKEY *pk = gen_key("ED25519");
	struct bundle_keyring *kr = ring(pk, NULL);
	char *b = sign_ok(SMALL_CANON, pk), *x;
	json_t *root;

	(void)state;
	root = json_loads(b, 0, NULL);
	assert_non_null(root);
	json_object_set_new(root, "epoch", json_integer(3));
	x = json_dumps(root, JSON_COMPACT);
	expect_refused(kr, x, BUNDLE_MALFORMED);
	free(x);
	json_object_del(root, "epoch");
	json_object_del(root, "schema");
	x = json_dumps(root, JSON_COMPACT);
	expect_refused(kr, x, BUNDLE_MALFORMED);
	free(x);
	/* Four keys, one of them not ours. */
	json_object_set_new(root, "Schema", json_string(BUNDLE_SCHEMA));
	x = json_dumps(root, JSON_COMPACT);
	expect_refused(kr, x, BUNDLE_MALFORMED);
	free(x);
	json_decref(root);
	free(b);
	bundle_keyring_free(kr);
	EVP_PKEY_free(pk);
}

static void
test_wrong_schema_is_malformed(void **state)
{
	static const char *const schemas[] = {
		"egress-guard.bundle.v2", "egress-guard.policy.v1", "",
		"egress-guard.bundle.v1 ", "EGRESS-GUARD.BUNDLE.V1", NULL
	};
	EVP_PKEY *pk = gen_key("ED25519");
	struct bundle_keyring *kr = ring(pk, NULL);
	char *b = sign_ok(SMALL_CANON, pk), *x;
	size_t i;

	(void)state;
	for (i = 0; schemas[i] != NULL; i++) {
		x = with_field(b, "schema", schemas[i]);
		expect_refused(kr, x, BUNDLE_MALFORMED);
		free(x);
	}
	free(b);
	bundle_keyring_free(kr);
	EVP_PKEY_free(pk);
}

static void
test_non_object_or_non_string_fields_are_malformed(void **state)
{
	EVP_PKEY *pk = gen_key("ED25519");
	struct bundle_keyring *kr = ring(pk, NULL);
	char *b = sign_ok(SMALL_CANON, pk), *x;
	static const char *const fields[] = {
		"schema", "key_id", "policy", "signature", NULL
	};
	json_t *root;
	size_t i;

	(void)state;
	for (i = 0; fields[i] != NULL; i++) {
		root = json_loads(b, 0, NULL);
		assert_non_null(root);
		json_object_set_new(root, fields[i], json_integer(1));
		x = json_dumps(root, JSON_COMPACT);
		expect_refused(kr, x, BUNDLE_MALFORMED);
		free(x);
		json_object_set_new(root, fields[i], json_null());
		x = json_dumps(root, JSON_COMPACT);
		expect_refused(kr, x, BUNDLE_MALFORMED);
		free(x);
		json_decref(root);
	}
	expect_refused(kr, "[]", BUNDLE_MALFORMED);
	expect_refused(kr, "\"x\"", BUNDLE_MALFORMED);
	expect_refused(kr, "null", BUNDLE_MALFORMED);
	expect_refused(kr, "{}", BUNDLE_MALFORMED);
	expect_refused(kr, "{", BUNDLE_MALFORMED);
	expect_refused_n(kr, "", 0, BUNDLE_MALFORMED);
	expect_refused_n(kr, NULL, 10, BUNDLE_MALFORMED);
	/* A NUL inside: json_loadb sees every byte. */
	{
		size_t n = strlen(b);
		char *nul = malloc(n + 2);

		assert_non_null(nul);
		memcpy(nul, b, n);
		nul[n] = '\0';
		nul[n + 1] = ' ';
		expect_refused_n(kr, nul, n + 2, BUNDLE_MALFORMED);
		free(nul);
	}
	/* Trailing data after the object. */
	x = malloc(strlen(b) + 3);
	assert_non_null(x);
	sprintf(x, "%s{}", b);
	expect_refused(kr, x, BUNDLE_MALFORMED);
	free(x);
	free(b);
	bundle_keyring_free(kr);
	EVP_PKEY_free(pk);
}

/* Replaces s[at] with c in a copy. */
static char *
with_char(const char *s, size_t at, char c)
{
	char *x = strdup(s);

	assert_non_null(x);
	x[at] = c;
	return x;
}

/* ---- signing straight onto a stream (egress-guardctl sign) ---- */

static const struct ctlkeys_envelope test_bundle_envelope = {
	BUNDLE_SCHEMA, BUNDLE_CONTEXT, "policy", BUNDLE_MAX_BYTES, 0, "policy",
	"a bundle"
};

/* ctlkeys_sign_to's output for canon, in a string. */
static char *
sign_to_string(const char *canon, EVP_PKEY *pk, int *rc, char *err,
    size_t errlen)
{
	size_t len = strlen(canon), outlen = 0;
	char *buf = malloc(sizeof(BUNDLE_CONTEXT) + len + 1), *out = NULL;
	FILE *f = open_memstream(&out, &outlen);

	assert_non_null(buf);
	assert_non_null(f);
	memset(buf, 'x', sizeof(BUNDLE_CONTEXT));
	memcpy(buf + sizeof(BUNDLE_CONTEXT), canon, len + 1);
	*rc = ctlkeys_sign_to(&test_bundle_envelope, buf, len, pk, f, err, errlen);
	assert_int_equal(fclose(f), 0);
	free(buf);
	return out;
}

/* The same bytes as the envelope held in memory, and a newline, for a
 * policy that spans many of the pieces it is encoded in. */
static void
test_sign_to_stream_writes_the_same_envelope(void **state)
{
	EVP_PKEY *pk = gen_key("ED25519");
	struct bundle_keyring *kr = ring(pk, NULL);
	const char *canons[] = { SMALL_CANON, NULL, NULL };
	char err[512] = "", *big, *b, *s;
	struct policy *p;
	size_t i, n = 3000, len;
	int rc;

	(void)state;
	/* About 100 KiB: several of sink_b64's pieces, and a last short one. */
	big = malloc(n * 40 + 256);
	assert_non_null(big);
	len = (size_t)sprintf(big, "{\"allow\":[");
	for (i = 0; i < n; i++)
		len += (size_t)sprintf(big + len, "%s{\"host\":\"h%05zu.example\","
		    "\"port\":%zu}", i ? "," : "", i, 1 + i % 7);
	sprintf(big + len, "],\"epoch\":9,\"mode\":\"allowlist\",\"schema\":"
	    "\"egress-guard.policy.v1\"}");
	canons[1] = big;
	for (i = 0; canons[i] != NULL; i++) {
		b = sign_ok(canons[i], pk);
		s = sign_to_string(canons[i], pk, &rc, err, sizeof(err));
		assert_int_equal(rc, 0);
		assert_int_equal(strlen(s), strlen(b) + 1);
		assert_memory_equal(s, b, strlen(b));
		assert_int_equal(s[strlen(b)], '\n');
		p = expect_ok(kr, b, NULL);
		assert_string_equal(policy_canonical(p, NULL), canons[i]);
		policy_free(p);
		free(b);
		free(s);
	}
	free(big);
	bundle_keyring_free(kr);
	EVP_PKEY_free(pk);
}

/* Refused before anything is written. */
static void
test_sign_to_stream_refuses_without_writing(void **state)
{
	EVP_PKEY *x = gen_key("X25519"), *pk = gen_key("ED25519");
	char err[512] = "", *s;
	int rc;

	(void)state;
	s = sign_to_string(SMALL_CANON, x, &rc, err, sizeof(err));
	assert_int_equal(rc, -1);
	check_err(err);
	assert_string_equal(s, "");
	free(s);
	s = sign_to_string("", pk, &rc, err, sizeof(err));
	assert_int_equal(rc, -1);
	assert_string_equal(s, "");
	free(s);
	EVP_PKEY_free(x);
	EVP_PKEY_free(pk);
}

/* The hand-read envelope does not look at the values' bytes: what no
 * field's grammar admits is refused there, as jansson refuses it. */
static void
test_control_and_non_ascii_bytes_in_envelope_values_malformed(void **state)
{
	static const char *const fields[] = {
		"\"schema\":\"", "\"key_id\":\"", "\"policy\":\"",
		"\"signature\":\"", NULL
	};
	static const char bad[] = { 0x01, 0x1f, 0x7f, (char)0x80, (char)0xff, 0 };
	EVP_PKEY *pk = gen_key("ED25519");
	struct bundle_keyring *kr = ring(pk, NULL);
	char *b = sign_ok(DESIGN_CANON, pk), *x;
	size_t i, j, at;

	(void)state;
	for (i = 0; fields[i] != NULL; i++) {
		at = (size_t)(strstr(b, fields[i]) - b) + strlen(fields[i]) + 3;
		for (j = 0; bad[j] != 0; j++) {
			x = with_char(b, at, bad[j]);
			expect_refused(kr, x, BUNDLE_MALFORMED);
			free(x);
		}
	}
	policy_free(expect_ok(kr, b, NULL));
	free(b);
	bundle_keyring_free(kr);
	EVP_PKEY_free(pk);
}

/* b with the first occurrence of from replaced by to, malloc'd. */
static char *
spliced(const char *b, const char *from, const char *to)
{
	const char *at = strstr(b, from);
	size_t n = strlen(b) - strlen(from) + strlen(to) + 1, off;
	char *x = malloc(n);

	assert_non_null(at);
	assert_non_null(x);
	off = (size_t)(at - b);
	memcpy(x, b, off);
	snprintf(x + off, n - off, "%s%s", to, at + strlen(from));
	return x;
}

/* One spelling per field: jansson would decode "\/" or "\u0041" back into
 * the alphabet, and the fallback used to verify such a bundle. Any escape,
 * in any key or value, is malformed on both paths. */
static void
test_escaped_envelope_fields_are_malformed(void **state)
{
	/* Each pair: what RFC_BUNDLE holds, an escaped spelling of it. */
	static const char *const esc[][2] = {
		{ "2/u8", "2\\/u8" },				/* signature, "\/" */
		{ "\"signature\":\"b", "\"signature\":\"\\u0062" },
		{ "\"policy\":\"e", "\"policy\":\"\\u0065" },
		{ "\"key_id\":\"2", "\"key_id\":\"\\u0032" },
		{ "\"schema\":\"e", "\"schema\":\"\\u0065" },	/* egress */
		{ "\"schema\"", "\"\\u0073chema\"" },		/* a key name */
		/* Whitespace inside a value, written as an escape. */
		{ "bSIsIn", "bSIs\\nIn" },
		{ "bSIsIn", "bSIs\\r\\nIn" },
		{ "bSIsIn", "bSIs\\u0020In" },
		{ "bSIsIn", "bSIs\\tIn" },
	};
	EVP_PKEY *pk = rfc_key();
	struct bundle_keyring *kr = ring(pk, NULL);
	char *x, *y;
	struct policy *p;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(esc) / sizeof(esc[0]); i++) {
		x = spliced(RFC_BUNDLE, esc[i][0], esc[i][1]);
		expect_refused(kr, x, BUNDLE_MALFORMED);
		/* The same through the jansson path for certain: "{ ". */
		y = spliced(x, "{", "{ ");
		expect_refused(kr, y, BUNDLE_MALFORMED);
		free(y);
		free(x);
	}
	/* Negative controls: as written, and with whitespace between the
	 * tokens (the jansson path, which stays open to that), it verifies. */
	p = expect_ok(kr, RFC_BUNDLE, NULL);
	assert_string_equal(policy_digest(p), DESIGN_DIGEST);
	policy_free(p);
	x = spliced(RFC_BUNDLE, "{", "{ \n ");
	y = spliced(x, "\",\"policy\":", "\" ,\t\"policy\" : ");
	p = expect_ok(kr, y, NULL);
	assert_string_equal(policy_digest(p), DESIGN_DIGEST);
	policy_free(p);
	free(y);
	free(x);
	assert_false(bundle_envelope_escaped(RFC_BUNDLE, strlen(RFC_BUNDLE)));
	bundle_keyring_free(kr);
	EVP_PKEY_free(pk);
}

static void
refuse_b64(const struct bundle_keyring *kr, const char *b, const char *field,
    const char *value)
{
	char *x = with_field(b, field, value);

	expect_refused(kr, x, BUNDLE_MALFORMED);
	free(x);
}

static void
test_bad_base64_is_malformed(void **state)
{
	static const char *const fields[] = { "policy", "signature", NULL };
	EVP_PKEY *pk = gen_key("ED25519");
	struct bundle_keyring *kr = ring(pk, NULL);
	char *b = sign_ok(DESIGN_CANON, pk), *v, *x, *y;
	size_t i, n;

	(void)state;
	for (i = 0; fields[i] != NULL; i++) {
		v = field_of(b, fields[i]);
		n = strlen(v);
		/* Both fields of this bundle end in "==": DESIGN_CANON is
		 * 142 bytes, a signature 64. */
		assert_true(n >= 8 && v[n - 1] == '=' && v[n - 2] == '=');

		/* Padding dropped. */
		x = strndup(v, n - 2);
		refuse_b64(kr, b, fields[i], x);
		free(x);
		/* Padding added. */
		x = malloc(n + 5);
		assert_non_null(x);
		sprintf(x, "%s====", v);
		refuse_b64(kr, b, fields[i], x);
		/* Whitespace: leading, trailing, line break inside. */
		sprintf(x, " %s", v);
		refuse_b64(kr, b, fields[i], x);
		sprintf(x, "%s\n", v);
		refuse_b64(kr, b, fields[i], x);
		sprintf(x, "%.4s\n%s", v, v + 4);
		refuse_b64(kr, b, fields[i], x);
		sprintf(x, "%.4s\r\n%s", v, v + 4);
		refuse_b64(kr, b, fields[i], x);
		free(x);
		/* '=' in the middle; URL-safe alphabet; non-ASCII. */
		x = with_char(v, 4, '=');
		refuse_b64(kr, b, fields[i], x);
		free(x);
		x = with_char(v, 5, '-');
		refuse_b64(kr, b, fields[i], x);
		free(x);
		x = with_char(v, 5, '_');
		refuse_b64(kr, b, fields[i], x);
		free(x);
		x = with_char(v, 5, '.');
		refuse_b64(kr, b, fields[i], x);
		free(x);
		/* Length not a multiple of 4. */
		x = strndup(v, n - 3);
		refuse_b64(kr, b, fields[i], x);
		free(x);
		/* Non-zero unused bits: the same bytes, a second spelling.
		 * Before "==" only the top 2 of 6 bits are data. */
		x = strdup(v);
		assert_non_null(x);
		x[n - 3] = x[n - 3] == 'A' ? 'B' : x[n - 3] == 'Q' ? 'R' :
		    x[n - 3] == 'g' ? 'h' : 'x';
		refuse_b64(kr, b, fields[i], x);
		free(x);
		/* Non-ASCII through JSON: "\u00e9". */
		y = malloc(n + 8);
		assert_non_null(y);
		sprintf(y, "%.4s\xc3\xa9%s", v, v + 6);
		refuse_b64(kr, b, fields[i], y);
		free(y);
		free(v);
	}
	/* Negative control for the unused-bits case: decoding alone
	 * would have given the signed bytes back. */
	policy_free(expect_ok(kr, b, NULL));
	free(b);
	bundle_keyring_free(kr);
	EVP_PKEY_free(pk);
}

static void
test_bad_key_id_spelling_is_malformed(void **state)
{
	EVP_PKEY *pk = gen_key("ED25519");
	struct bundle_keyring *kr = ring(pk, NULL);
	char *b = sign_ok(SMALL_CANON, pk), *id, *x;
	char alt[80];
	size_t i;

	(void)state;
	id = field_of(b, "key_id");
	/* Upper-case hex of the right key is still not the key id. */
	for (i = 0; i < 64; i++)
		alt[i] = (id[i] >= 'a' && id[i] <= 'f') ?
		    (char)(id[i] - 'a' + 'A') : id[i];
	alt[64] = '\0';
	refuse_b64(kr, b, "key_id", alt);
	snprintf(alt, sizeof(alt), "%.63s", id);
	refuse_b64(kr, b, "key_id", alt);
	snprintf(alt, sizeof(alt), "%s0", id);
	refuse_b64(kr, b, "key_id", alt);
	snprintf(alt, sizeof(alt), "sha256:%s", id);
	refuse_b64(kr, b, "key_id", alt);
	snprintf(alt, sizeof(alt), "%.63sg", id);
	refuse_b64(kr, b, "key_id", alt);
	refuse_b64(kr, b, "key_id", "");
	/* Well-formed but nobody's key. */
	x = with_field(b, "key_id", "0000000000000000000000000000000000000000"
	    "000000000000000000000000");
	expect_refused(kr, x, BUNDLE_UNKNOWN_KEY);
	free(x);
	free(id);
	free(b);
	bundle_keyring_free(kr);
	EVP_PKEY_free(pk);
}

static void
test_signature_of_wrong_length_is_refused(void **state)
{
	EVP_PKEY *pk = gen_key("ED25519");
	struct bundle_keyring *kr = ring(pk, NULL);
	char *b = sign_ok(SMALL_CANON, pk), *id, *s64, *x;
	unsigned char *sig, longer[65];
	size_t slen;

	(void)state;
	id = field_of(b, "key_id");
	s64 = field_of(b, "signature");
	sig = unb64(s64, &slen);
	x = assemble(id, SMALL_CANON, strlen(SMALL_CANON), sig, 63);
	expect_refused(kr, x, BUNDLE_BAD_SIGNATURE);
	free(x);
	memcpy(longer, sig, 64);
	longer[64] = 0;
	x = assemble(id, SMALL_CANON, strlen(SMALL_CANON), longer, 65);
	expect_refused(kr, x, BUNDLE_BAD_SIGNATURE);
	free(x);
	x = assemble(id, SMALL_CANON, strlen(SMALL_CANON), sig, 0);
	expect_refused(kr, x, BUNDLE_BAD_SIGNATURE);
	free(x);
	free(sig);
	free(s64);
	free(id);
	free(b);
	bundle_keyring_free(kr);
	EVP_PKEY_free(pk);
}

/* --policy takes a bundle or a compiled policy; the schema says which.
 * The canonical forms are told in one scan, others by jansson; a policy
 * that carries a bundle's schema inside its text is still a policy. */
static void
test_is_envelope_tells_bundle_from_policy(void **state)
{
	static const char pretty_policy[] =
	    "{ \"schema\": \"egress-guard.policy.v1\", \"mode\": \"none\", "
	    "\"epoch\": 1, \"allow\": [] }\n";
	static const char other_schema[] =
	    "{\"schema\":\"egress-guard.receipt.v1\",\"key_id\":\"x\","
	    "\"policy\":\"\",\"signature\":\"\"}";
	EVP_PKEY *pk = rfc_key();
	char *b = sign_ok(DESIGN_CANON, pk), *pretty;
	size_t n = strlen(b), i, j = 0;

	(void)state;
	assert_true(bundle_is_envelope(b, n));
	/* The same bundle reformatted: not canonical, still a bundle. */
	assert_non_null(pretty = malloc(2 * n + 2));
	pretty[j++] = '\n';
	for (i = 0; i < n; i++) {
		pretty[j++] = b[i];
		if (b[i] == ',')
			pretty[j++] = ' ';
	}
	assert_true(bundle_is_envelope(pretty, j));
	assert_false(bundle_is_envelope(DESIGN_CANON, strlen(DESIGN_CANON)));
	assert_false(bundle_is_envelope(pretty_policy, strlen(pretty_policy)));
	assert_false(bundle_is_envelope(other_schema, strlen(other_schema)));
	assert_false(bundle_is_envelope("{\"allow\":[{\"host\":\"egress-guard.bundle.v1\"",
	    40));
	assert_false(bundle_is_envelope("not json", 8));
	assert_false(bundle_is_envelope(NULL, 0));
	free(pretty);
	free(b);
	EVP_PKEY_free(pk);
}

static void
test_bundle_larger_than_max_is_malformed(void **state)
{
	EVP_PKEY *pk = gen_key("ED25519");
	struct bundle_keyring *kr = ring(pk, NULL);
	char *b = sign_ok(SMALL_CANON, pk), *big;
	size_t n = strlen(b);
	struct policy *p;

	(void)state;
	/* Valid JSON padded with whitespace: exactly the bound is fine,
	 * one byte more is refused before any parsing. */
	big = malloc(BUNDLE_MAX_BYTES + 1);
	assert_non_null(big);
	memset(big, ' ', BUNDLE_MAX_BYTES + 1);
	memcpy(big, b, n);
	p = bundle_verify(kr, big, BUNDLE_MAX_BYTES, NULL, NULL, NULL, 0);
	assert_non_null(p);
	policy_free(p);
	expect_refused_n(kr, big, BUNDLE_MAX_BYTES + 1, BUNDLE_MALFORMED);
	free(big);
	free(b);
	bundle_keyring_free(kr);
	EVP_PKEY_free(pk);
}

/* ---- the keyring ---- */

static void
refuse_key_file(struct bundle_keyring *kr, const char *content, size_t len,
    const char *want)
{
	char err[512] = "", *path = write_tmp(content, len);
	size_t before = bundle_keyring_count(kr);

	assert_int_equal(bundle_keyring_add_file(kr, path, err, sizeof(err)),
	    -1);
	check_err(err);
	if (strncmp(err, path, strlen(path)) != 0)
		fail_msg("error \"%s\" does not start with the path", err);
	if (strstr(err, want) == NULL)
		fail_msg("error \"%s\" does not contain \"%s\"", err, want);
	assert_int_equal(bundle_keyring_count(kr), before);
	drop_file(path);
}

static char *
pem_of(EVP_PKEY *pk, int priv)
{
	char *path = write_key(pk, priv), *buf;
	size_t len;

	buf = file_read(path, 1 << 16, 0, &len, NULL, 0);
	assert_non_null(buf);
	drop_file(path);
	return buf;
}

static void
test_keyring_refuses_private_key_pem(void **state)
{
	struct bundle_keyring *kr = bundle_keyring_new();
	EVP_PKEY *pk = gen_key("ED25519");
	char *priv = pem_of(pk, 1), *pub = pem_of(pk, 0), *both;
	size_t n = strlen(priv) + strlen(pub) + 1;
	const char *x;
	BIO *bio;
	char *enc;
	long elen;

	(void)state;
	refuse_key_file(kr, priv, strlen(priv), "private key");
	/* A public key first does not launder a private key after it. */
	both = malloc(n);
	assert_non_null(both);
	snprintf(both, n, "%s%s", pub, priv);
	refuse_key_file(kr, both, strlen(both), "private key");
	snprintf(both, n, "%s%s", priv, pub);
	refuse_key_file(kr, both, strlen(both), "private key");
	free(both);
	/* Encrypted PKCS#8 and legacy spellings, refused unparsed. */
	bio = BIO_new(BIO_s_mem());
	assert_non_null(bio);
	assert_int_equal(PEM_write_bio_PKCS8PrivateKey(bio, pk,
	    EVP_aes_256_cbc(), "pw", 2, NULL, NULL), 1);
	elen = BIO_get_mem_data(bio, &enc);
	assert_non_null(strstr(enc, "ENCRYPTED PRIVATE KEY"));
	refuse_key_file(kr, enc, (size_t)elen, "private key");
	BIO_free(bio);
	x = "-----BEGIN EC PRIVATE KEY-----\nAAAA\n"
	    "-----END EC PRIVATE KEY-----\n";
	refuse_key_file(kr, x, strlen(x), "private key");
	/* Negative control: the public half is accepted. */
	{
		char err[256] = "", *path = write_tmp_str(pub);

		assert_int_equal(bundle_keyring_add_file(kr, path, err,
		    sizeof(err)), 0);
		assert_int_equal(bundle_keyring_count(kr), 1);
		drop_file(path);
	}
	free(priv);
	free(pub);
	bundle_keyring_free(kr);
	EVP_PKEY_free(pk);
}

/* hostile: text before or after the one PEM block (the reader skips it)
 * is refused, so a key file holds a key and nothing else; whitespace
 * around the block is not text (control). */
static void
test_hostile_keyring_refuses_text_around_the_pem_block(void **state)
{
	struct bundle_keyring *kr = bundle_keyring_new();
	EVP_PKEY *pk = EVP_PKEY_Q_keygen(NULL, NULL, "ED25519");
	char *pub, *x, err[256] = "", *path;
	size_t n;

	(void)state;
	assert_non_null(kr);
	assert_non_null(pk);
	pub = pem_of(pk, 0);
	n = strlen(pub) + 64;
	x = malloc(n);
	assert_non_null(x);
	snprintf(x, n, "%ssome junk text\n", pub);
	refuse_key_file(kr, x, strlen(x), "outside the PEM block");
	snprintf(x, n, "junk before\n%s", pub);
	refuse_key_file(kr, x, strlen(x), "outside the PEM block");
	snprintf(x, n, "%s#", pub);
	refuse_key_file(kr, x, strlen(x), "outside the PEM block");
	snprintf(x, n, "\n\n%s \n\n", pub);
	path = write_tmp_str(x);
	if (bundle_keyring_add_file(kr, path, err, sizeof(err)) != 0)
		fail_msg("%s", err);
	assert_int_equal(bundle_keyring_count(kr), 1);
	drop_file(path);
	free(x);
	free(pub);
	bundle_keyring_free(kr);
	EVP_PKEY_free(pk);
}

static void
test_keyring_refuses_rsa_ec_x25519_ed448_keys(void **state)
{
	static const char *const types[] = { "X25519", "ED448", "X448", NULL };
	struct bundle_keyring *kr = bundle_keyring_new();
	EVP_PKEY *pk;
	char *pem;
	size_t i;

	(void)state;
	refuse_key_file(kr, rsa_pub_pem, strlen(rsa_pub_pem),
	    "not an Ed25519 key");
	refuse_key_file(kr, ec_pub_pem, strlen(ec_pub_pem),
	    "not an Ed25519 key");
	/* X25519 has the same 32-byte raw key: the type must be checked. */
	for (i = 0; types[i] != NULL; i++) {
		pk = gen_key(types[i]);
		pem = pem_of(pk, 0);
		refuse_key_file(kr, pem, strlen(pem), "not an Ed25519 key");
		free(pem);
		EVP_PKEY_free(pk);
	}
	assert_int_equal(bundle_keyring_count(kr), 0);
	bundle_keyring_free(kr);
}

static void
test_keyring_refuses_bad_files(void **state)
{
	struct bundle_keyring *kr = bundle_keyring_new();
	EVP_PKEY *a = gen_key("ED25519"), *b = gen_key("ED25519");
	char *pa = pem_of(a, 0), *pb = pem_of(b, 0), *x;
	char err[512] = "";
	size_t n;

	(void)state;
	assert_int_equal(bundle_keyring_add_file(kr, "/nonexistent/k.pub.pem",
	    err, sizeof(err)), -1);
	assert_true(strncmp(err, "/nonexistent/k.pub.pem: ", 24) == 0);
	assert_int_equal(bundle_keyring_add_file(kr, "/tmp", err,
	    sizeof(err)), -1);
	assert_string_equal(err, "/tmp: not a regular file");
	refuse_key_file(kr, "", 0, "found 0 PEM blocks");
	refuse_key_file(kr, "garbage\n", 8, "found 0 PEM blocks");
	refuse_key_file(kr, "-----BEGIN PUBLIC KEY-----\nAAAA\n"
	    "-----END PUBLIC KEY-----\n", 57, "not a PEM public key");
	/* Two keys in one file: which one would be trusted? Neither. */
	n = strlen(pa) + strlen(pb) + 1;
	x = malloc(n);
	assert_non_null(x);
	snprintf(x, n, "%s%s", pa, pb);
	refuse_key_file(kr, x, strlen(x), "exactly one PEM public key");
	free(x);
	/* Bounded: a valid key followed by a long comment. */
	x = malloc(BUNDLE_KEY_FILE_MAX + 1);
	assert_non_null(x);
	memset(x, '#', BUNDLE_KEY_FILE_MAX + 1);
	memcpy(x, pa, strlen(pa));
	refuse_key_file(kr, x, BUNDLE_KEY_FILE_MAX + 1, "larger than");
	free(x);
	assert_int_equal(bundle_keyring_add_file(NULL, "/tmp/x", err,
	    sizeof(err)), -1);
	assert_int_equal(bundle_keyring_count(kr), 0);
	assert_int_equal(bundle_keyring_count(NULL), 0);
	bundle_keyring_free(NULL);
	free(pa);
	free(pb);
	bundle_keyring_free(kr);
	EVP_PKEY_free(a);
	EVP_PKEY_free(b);
}

static void
test_keyring_holds_at_most_max_keys(void **state)
{
	struct bundle_keyring *kr = bundle_keyring_new();
	EVP_PKEY *pk;
	char err[512] = "", *path;
	int i;

	(void)state;
	for (i = 0; i <= BUNDLE_MAX_KEYS; i++) {
		pk = gen_key("ED25519");
		path = write_key(pk, 0);
		EVP_PKEY_free(pk);
		if (i < BUNDLE_MAX_KEYS) {
			assert_int_equal(bundle_keyring_add_file(kr, path, err,
			    sizeof(err)), 0);
		} else {
			assert_int_equal(bundle_keyring_add_file(kr, path, err,
			    sizeof(err)), -1);
			check_err(err);
			assert_non_null(strstr(err, "more than 16"));
		}
		drop_file(path);
	}
	assert_int_equal(bundle_keyring_count(kr), BUNDLE_MAX_KEYS);
	bundle_keyring_free(kr);

	/* The same key twice is one key. */
	kr = bundle_keyring_new();
	pk = gen_key("ED25519");
	path = write_key(pk, 0);
	assert_int_equal(bundle_keyring_add_file(kr, path, err, sizeof(err)), 0);
	assert_int_equal(bundle_keyring_add_file(kr, path, err, sizeof(err)), 0);
	assert_int_equal(bundle_keyring_count(kr), 1);
	drop_file(path);
	EVP_PKEY_free(pk);
	bundle_keyring_free(kr);
}

/* ---- the signing side (ctl/keys.c) ---- */

static void
test_pub_path_replaces_trailing_pem(void **state)
{
	static const char *const cases[][2] = {
		{ "k.pem", "k.pub.pem" },
		{ "k", "k.pub.pem" },
		{ "/etc/eg/signing.pem", "/etc/eg/signing.pub.pem" },
		{ "dir.pem/k", "dir.pem/k.pub.pem" },
		{ "k.pem.bak", "k.pem.bak.pub.pem" },
		{ "k.PEM", "k.PEM.pub.pem" },
		{ ".pem", ".pub.pem" },
		{ "pem", "pem.pub.pem" },
	};
	size_t i;
	char *p;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		p = ctlkeys_pub_path(cases[i][0]);
		assert_non_null(p);
		assert_string_equal(p, cases[i][1]);
		free(p);
	}
	assert_null(ctlkeys_pub_path(NULL));
}

static void
test_keygen_writes_0600_private_and_refuses_overwrite(void **state)
{
	char dir[] = "/tmp/eg-keygen-test-XXXXXX";
	char priv[64], pub[64], err[512] = "", ida[65], idb[65];
	struct bundle_keyring *kr;
	struct stat st;
	EVP_PKEY *pk;
	char *b, *before, *after;
	size_t l1, l2;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(priv, sizeof(priv), "%s/signing.pem", dir);
	snprintf(pub, sizeof(pub), "%s/signing.pub.pem", dir);
	if (ctlkeys_keygen(priv, err, sizeof(err)) != 0)
		fail_msg("keygen: %s", err);
	assert_int_equal(stat(priv, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	assert_int_equal(stat(pub, &st), 0);

	/* The private key is PKCS#8 PEM, the public key SPKI PEM. */
	before = file_read(priv, 4096, 0, &l1, NULL, 0);
	assert_non_null(before);
	assert_non_null(strstr(before, "-----BEGIN PRIVATE KEY-----"));
	b = file_read(pub, 4096, 0, &l2, NULL, 0);
	assert_non_null(b);
	assert_non_null(strstr(b, "-----BEGIN PUBLIC KEY-----"));
	free(b);

	/* The pair belongs together and signs a verifiable bundle. */
	pk = ctlkeys_load_private(priv, err, sizeof(err));
	if (pk == NULL)
		fail_msg("load: %s", err);
	kr = bundle_keyring_new();
	assert_int_equal(bundle_keyring_add_file(kr, pub, err, sizeof(err)), 0);
	b = sign_ok(SMALL_CANON, pk);
	policy_free(expect_ok(kr, b, ida));
	key_id_of(pk, idb);
	assert_string_equal(ida, idb);
	free(b);
	bundle_keyring_free(kr);
	EVP_PKEY_free(pk);

	/* Never overwrites, and leaves the existing key as it was. */
	assert_int_equal(ctlkeys_keygen(priv, err, sizeof(err)), -1);
	check_err(err);
	assert_true(strncmp(err, priv, strlen(priv)) == 0);
	after = file_read(priv, 4096, 0, &l2, NULL, 0);
	assert_non_null(after);
	assert_int_equal(l1, l2);
	assert_memory_equal(before, after, l1);
	free(after);
	free(before);

	/* An existing public key alone also stops it, with nothing left. */
	assert_int_equal(unlink(priv), 0);
	assert_int_equal(ctlkeys_keygen(priv, err, sizeof(err)), -1);
	assert_true(strncmp(err, pub, strlen(pub)) == 0);
	assert_int_equal(stat(priv, &st), -1);

	assert_int_equal(ctlkeys_keygen("", err, sizeof(err)), -1);
	snprintf(priv, sizeof(priv), "%s/missing/k.pem", dir);
	assert_int_equal(ctlkeys_keygen(priv, err, sizeof(err)), -1);
	assert_true(strncmp(err, priv, strlen(priv)) == 0);

	unlink(pub);
	assert_int_equal(rmdir(dir), 0);
}

static void
test_load_private_refuses_public_encrypted_and_non_ed25519(void **state)
{
	EVP_PKEY *ed = gen_key("ED25519"), *x = gen_key("X25519"), *pk;
	char err[512] = "", *path;
	BIO *bio;
	char *enc;
	long elen;

	(void)state;
	path = write_key(ed, 0);
	assert_null(ctlkeys_load_private(path, err, sizeof(err)));
	assert_true(strncmp(err, path, strlen(path)) == 0);
	drop_file(path);
	path = write_key(x, 1);
	assert_null(ctlkeys_load_private(path, err, sizeof(err)));
	assert_non_null(strstr(err, "not an Ed25519 key"));
	drop_file(path);
	/* Encrypted: refused, not prompted for. */
	bio = BIO_new(BIO_s_mem());
	assert_non_null(bio);
	assert_int_equal(PEM_write_bio_PKCS8PrivateKey(bio, ed,
	    EVP_aes_256_cbc(), "pw", 2, NULL, NULL), 1);
	elen = BIO_get_mem_data(bio, &enc);
	path = write_tmp(enc, (size_t)elen);
	BIO_free(bio);
	assert_null(ctlkeys_load_private(path, err, sizeof(err)));
	check_err(err);
	drop_file(path);
	/* Negative control. */
	path = write_key(ed, 1);
	pk = ctlkeys_load_private(path, err, sizeof(err));
	assert_non_null(pk);
	EVP_PKEY_free(pk);
	drop_file(path);
	assert_null(ctlkeys_load_private("/nonexistent", err, sizeof(err)));
	EVP_PKEY_free(ed);
	EVP_PKEY_free(x);
}

static void
test_sign_refuses_non_ed25519_public_only_and_oversize(void **state)
{
	EVP_PKEY *x = gen_key("X25519"), *ed = gen_key("ED25519"), *pubonly;
	unsigned char raw[32];
	size_t rawlen = sizeof(raw), big = BUNDLE_MAX_BYTES / 4 * 3;
	char err[512] = "", *canon;

	(void)state;
	assert_null(ctlkeys_sign_bytes(SMALL_CANON, strlen(SMALL_CANON), x,
	    err, sizeof(err)));
	check_err(err);
	assert_int_equal(EVP_PKEY_get_raw_public_key(ed, raw, &rawlen), 1);
	pubonly = EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, NULL, raw,
	    rawlen);
	assert_non_null(pubonly);
	assert_null(ctlkeys_sign_bytes(SMALL_CANON, strlen(SMALL_CANON),
	    pubonly, err, sizeof(err)));
	check_err(err);
	assert_null(ctlkeys_sign_bytes(NULL, 0, ed, err, sizeof(err)));
	assert_null(ctlkeys_sign_bytes(SMALL_CANON, 1, NULL, err, sizeof(err)));
	/* 3/4 MiB of policy base64-encodes to the whole bundle bound. */
	canon = malloc(big);
	assert_non_null(canon);
	memset(canon, ' ', big);
	assert_null(ctlkeys_sign_bytes(canon, big, ed, err, sizeof(err)));
	assert_non_null(strstr(err, "too large"));
	free(canon);
	EVP_PKEY_free(pubonly);
	EVP_PKEY_free(x);
	EVP_PKEY_free(ed);
}

/* ---- the push client's response parser (ctl/client.c) ---- */

static int
parse_resp(const char *s, int eof, struct ctlclient_response *r, char *err)
{
	return ctlclient_parse_response(s, strlen(s), eof, r, err, 256);
}

/* Hostile: an answer naming the digest twice, the wrong one first, does
 * not confirm a push (jansson alone would keep the last). */
static void
test_client_push_answer_with_duplicate_digest_refused(void **state)
{
	static const char want[] = "sha256:1111";
	struct ctlclient_response r = { 200, NULL, 0 };
	char err[256] = "", body[128];

	(void)state;
	r.body = body;
	snprintf(body, sizeof(body), "{\"digest\":\"sha256:0\",\"digest\":\"%s\"}",
	    want);
	r.body_len = strlen(body);
	assert_int_equal(ctlclient_check_pushed(&r, want, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "duplicate key"));
	/* Control: the same answer with the digest once. */
	snprintf(body, sizeof(body), "{\"digest\":\"%s\"}", want);
	r.body_len = strlen(body);
	assert_int_equal(ctlclient_check_pushed(&r, want, err, sizeof(err)), 0);
}

static void
test_client_parses_content_length_and_chunked(void **state)
{
	struct ctlclient_response r;
	char err[256] = "";
	static const char cl[] = "HTTP/1.1 409 Conflict\r\ncontent-length: 23"
	    "\r\nContent-Type: application/json\r\n\r\n{\"error\":\"stale_epoch\"}";
	static const char ch[] = "HTTP/1.1 200 OK\r\nTransfer-Encoding: Chunked"
	    "\r\n\r\n5\r\n{\"epo\r\na;ext=1\r\nch\":7,\"x\":\r\n2\r\n1}\r\n0\r\n"
	    "X-Checksum: x\r\n\r\n";
	size_t i;

	(void)state;
	assert_int_equal(parse_resp(cl, 0, &r, err), 1);
	assert_int_equal(r.status, 409);
	assert_string_equal(r.body, "{\"error\":\"stale_epoch\"}");
	free(r.body);
	assert_int_equal(parse_resp(ch, 0, &r, err), 1);
	assert_int_equal(r.status, 200);
	assert_string_equal(r.body, "{\"epoch\":7,\"x\":1}");
	free(r.body);
	/* Every prefix is "need more", or an error once the peer closed. */
	for (i = 0; i < sizeof(cl) - 1; i++) {
		assert_int_equal(ctlclient_parse_response(cl, i, 0, &r, err,
		    sizeof(err)), 0);
		assert_int_equal(ctlclient_parse_response(cl, i, 1, &r, err,
		    sizeof(err)), -1);
	}
	for (i = 0; i < sizeof(ch) - 1; i++) {
		assert_int_equal(ctlclient_parse_response(ch, i, 0, &r, err,
		    sizeof(err)), 0);
		assert_int_equal(ctlclient_parse_response(ch, i, 1, &r, err,
		    sizeof(err)), -1);
	}
	/* Close-delimited body; 204 without one. */
	assert_int_equal(parse_resp("HTTP/1.0 200 OK\r\n\r\nabc", 0, &r, err), 0);
	assert_int_equal(parse_resp("HTTP/1.0 200 OK\r\n\r\nabc", 1, &r, err), 1);
	assert_string_equal(r.body, "abc");
	free(r.body);
	assert_int_equal(parse_resp("HTTP/1.1 204 No Content\r\n\r\n", 0, &r,
	    err), 1);
	assert_int_equal(r.body_len, 0);
	free(r.body);
	assert_int_equal(parse_resp("HTTP/1.1 200\r\nContent-Length: 0\r\n\r\n",
	    0, &r, err), 1);
	free(r.body);
}

static void
test_client_refuses_malformed_responses(void **state)
{
	static const char *const bad[] = {
		"HTTP/2 200 OK\r\n\r\n",
		"HTTP/1.1 20 OK\r\n\r\n",
		"HTTP/1.1 2000 OK\r\n\r\n",
		"HTTP/1.1 099 OK\r\n\r\n",
		"HTTP/1.1 100 Continue\r\n\r\n",
		"http/1.1 200 OK\r\n\r\n",
		"SSH-2.0-OpenSSH\r\n\r\n",
		"HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n",
		"HTTP/1.1 200 OK\r\nContent-Length: 1x\r\n\r\n",
		"HTTP/1.1 200 OK\r\nContent-Length: 01\r\n\r\nx",
		"HTTP/1.1 200 OK\r\nContent-Length: 99999999\r\n\r\n",
		"HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
		"HTTP/1.1 200 OK\r\nContent-Length: 1\r\nTransfer-Encoding: "
		    "chunked\r\n\r\n",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n",
		"HTTP/1.1 200 OK\r\n folded\r\n\r\n",
		"HTTP/1.1 200 OK\r\nNo colon\r\n\r\n",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nz\r\n",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nabc\r\n",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
		    "fffffff\r\n",
		NULL
	};
	struct ctlclient_response r;
	char err[256], *head;
	size_t i;

	(void)state;
	for (i = 0; bad[i] != NULL; i++) {
		err[0] = '\0';
		if (parse_resp(bad[i], 0, &r, err) != -1)
			fail_msg("accepted: %s", bad[i]);
		check_err(err);
	}
	/* A head that never ends is bounded. */
	head = malloc(CTLCLIENT_HEAD_MAX + 1);
	assert_non_null(head);
	memcpy(head, "HTTP/1.1 200 OK\r\nX: ", 20);
	memset(head + 20, 'a', CTLCLIENT_HEAD_MAX - 20);
	head[CTLCLIENT_HEAD_MAX] = '\0';
	assert_int_equal(parse_resp(head, 0, &r, err), -1);
	free(head);
}

/* The ctl client reads answers with the guard's own rules (proto/http.c,
 * proto/chunked.c): what the guard refuses from an upstream, the client
 * refuses from whatever answers on the control socket. */
static void
test_client_refuses_what_the_guard_refuses_from_upstreams(void **state)
{
	static const char *const bad[] = {
		/* bare LF and NUL in the head */
		"HTTP/1.1 200 OK\nContent-Length: 0\r\n\r\n",
		"HTTP/1.1 200 OK\r\nX: a\0b\r\n\r\n",
		/* a status past 599 */
		"HTTP/1.1 600 Odd\r\nContent-Length: 0\r\n\r\n",
		/* Connection dropping a framing field */
		"HTTP/1.1 200 OK\r\nConnection: content-length\r\n"
		    "Content-Length: 2\r\n\r\nok",
		/* a coding under chunked that the client cannot remove */
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n"
		    "0\r\n\r\n",
		/* a trailer that names framing */
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
		    "0\r\nContent-Length: 5\r\n\r\n",
		/* whitespace in a chunk extension */
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
		    "1 ;a=b\r\nx\r\n0\r\n\r\n",
		/* one chunk past the body bound, refused before its data */
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
		    "100001\r\n",
		NULL
	};
	static const char two[] = "HTTP/1.1 200 OK\r\nTransfer-Encoding: "
	    "chunked\r\n\r\n80000\r\n";
	struct ctlclient_response r;
	char err[256], *big;
	size_t i, n;

	(void)state;
	for (i = 0; bad[i] != NULL; i++) {
		err[0] = '\0';
		n = strlen(bad[i]);
		if (i == 1)
			n = 28;	/* past the NUL */
		if (ctlclient_parse_response(bad[i], n, 0, &r, err,
		    sizeof(err)) != -1)
			fail_msg("accepted: %s", bad[i]);
		check_err(err);
	}
	/* Two chunks of half the bound each fit; one byte more does not. */
	n = sizeof(two) - 1;
	big = malloc(n + 2 * (0x80000 + 2) + 16);
	assert_non_null(big);
	memcpy(big, two, n);
	memset(big + n, 'a', 0x80000);
	n += 0x80000;
	memcpy(big + n, "\r\n80000\r\n", 9);
	n += 9;
	memset(big + n, 'b', 0x80000);
	n += 0x80000;
	memcpy(big + n, "\r\n0\r\n\r\n", 7);
	assert_int_equal(ctlclient_parse_response(big, n + 7, 0, &r, err,
	    sizeof(err)), 1);
	assert_int_equal(r.body_len, CTLCLIENT_BODY_MAX);
	free(r.body);
	memcpy(big + n, "\r\n1\r\n", 5);
	assert_int_equal(ctlclient_parse_response(big, n + 5, 0, &r, err,
	    sizeof(err)), -1);
	check_err(err);
	free(big);
}

/* egress-guardctl push compares the guard's answer with the digest of
 * what it sent, read without parsing the policy: the same digest as the
 * parsed policy's, for the envelope as sign writes it and for another
 * JSON spelling of it; no digest for bytes that hold no bundle. */
static void
test_peek_digest_equals_parsed_policy_digest_either_spelling(void **state)
{
	char d[POLICY_DIGEST_LEN + 1], kid[BUNDLE_KEY_ID_LEN + 1], err[256];
	char spaced[sizeof(RFC_BUNDLE) + 16], *q;
	struct policy *p;

	(void)state;
	assert_int_equal(bundlepeek_digest(RFC_BUNDLE, strlen(RFC_BUNDLE), d, err,
	    sizeof(err)), 0);
	assert_string_equal(d, DESIGN_DIGEST);
	p = bundlepeek_policy(RFC_BUNDLE, strlen(RFC_BUNDLE), kid, err, sizeof(err));
	assert_non_null(p);
	assert_string_equal(policy_digest(p), DESIGN_DIGEST);
	assert_string_equal(kid, RFC_KEY_ID);
	policy_free(p);
	/* "{ " and ": " instead of "{" and ":": the jansson path. */
	snprintf(spaced, sizeof(spaced), "{ %s", &RFC_BUNDLE[1]);
	assert_non_null(q = strstr(spaced, "\"policy\":"));
	memmove(q + 10, q + 9, strlen(q + 9) + 1);
	q[9] = ' ';
	assert_int_equal(bundlepeek_digest(spaced, strlen(spaced), d, err,
	    sizeof(err)), 0);
	assert_string_equal(d, DESIGN_DIGEST);
	p = bundlepeek_policy(spaced, strlen(spaced), kid, err, sizeof(err));
	assert_non_null(p);
	assert_string_equal(kid, RFC_KEY_ID);
	policy_free(p);
	/* Hostile: not JSON, a compiled policy, a policy field not base64. */
	assert_int_equal(bundlepeek_digest("nope", 4, d, err, sizeof(err)), -1);
	check_err(err);
	assert_int_equal(bundlepeek_digest(DESIGN_CANON, strlen(DESIGN_CANON), d,
	    err, sizeof(err)), -1);
	snprintf(spaced, sizeof(spaced), "%s", RFC_BUNDLE);
	assert_non_null(q = strstr(spaced, "\"policy\":\"ey"));
	q[10] = '*';
	assert_int_equal(bundlepeek_digest(spaced, strlen(spaced), d, err,
	    sizeof(err)), -1);
	check_err(err);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sign_then_verify_round_trips_canonical_bytes),
		cmocka_unit_test(test_peek_digest_equals_parsed_policy_digest_either_spelling),
		cmocka_unit_test(test_large_policy_round_trips_near_the_size_bound),
		cmocka_unit_test(test_sign_to_stream_writes_the_same_envelope),
		cmocka_unit_test(test_sign_to_stream_refuses_without_writing),
		cmocka_unit_test(test_control_and_non_ascii_bytes_in_envelope_values_malformed),
		cmocka_unit_test(test_escaped_envelope_fields_are_malformed),
		cmocka_unit_test(test_bundle_matches_node_signature_for_rfc8032_key),
		cmocka_unit_test(test_key_id_is_sha256_of_raw_public_key),
		cmocka_unit_test(test_signed_message_is_context_nul_then_policy),
		cmocka_unit_test(test_flipped_bit_anywhere_in_policy_bytes_is_refused),
		cmocka_unit_test(test_flipped_bit_anywhere_in_signature_is_refused),
		cmocka_unit_test(test_flipped_bit_anywhere_in_bundle_text_is_refused),
		cmocka_unit_test(test_wrong_context_string_is_refused),
		cmocka_unit_test(test_unknown_key_is_refused),
		cmocka_unit_test(test_key_id_of_another_trusted_key_is_refused),
		cmocka_unit_test(test_signed_non_canonical_policy_is_malformed),
		cmocka_unit_test(test_duplicate_bundle_key_is_malformed),
		cmocka_unit_test(test_extra_or_missing_bundle_key_is_malformed),
		cmocka_unit_test(test_wrong_schema_is_malformed),
		cmocka_unit_test(test_non_object_or_non_string_fields_are_malformed),
		cmocka_unit_test(test_bad_base64_is_malformed),
		cmocka_unit_test(test_bad_key_id_spelling_is_malformed),
		cmocka_unit_test(test_signature_of_wrong_length_is_refused),
		cmocka_unit_test(test_bundle_larger_than_max_is_malformed),
		cmocka_unit_test(test_is_envelope_tells_bundle_from_policy),
		cmocka_unit_test(test_keyring_refuses_private_key_pem),
		cmocka_unit_test(test_hostile_keyring_refuses_text_around_the_pem_block),
		cmocka_unit_test(test_keyring_refuses_rsa_ec_x25519_ed448_keys),
		cmocka_unit_test(test_keyring_refuses_bad_files),
		cmocka_unit_test(test_keyring_holds_at_most_max_keys),
		cmocka_unit_test(test_pub_path_replaces_trailing_pem),
		cmocka_unit_test(test_keygen_writes_0600_private_and_refuses_overwrite),
		cmocka_unit_test(test_load_private_refuses_public_encrypted_and_non_ed25519),
		cmocka_unit_test(test_sign_refuses_non_ed25519_public_only_and_oversize),
		cmocka_unit_test(test_client_parses_content_length_and_chunked),
		cmocka_unit_test(test_client_push_answer_with_duplicate_digest_refused),
		cmocka_unit_test(test_client_refuses_malformed_responses),
		cmocka_unit_test(test_client_refuses_what_the_guard_refuses_from_upstreams),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
