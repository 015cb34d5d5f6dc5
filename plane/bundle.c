/* Signed policy bundles (docs/design.md "Signed bundle"): the verifier side.
 *
 * One spelling per field: the four key names and the four values are
 * taken exactly as written, with no JSON escape anywhere in the envelope
 * (none of them ever needs one), and each value is held to its own
 * grammar (the schema and key id exactly, strict base64), so the bytes of
 * every field are fixed by the format, covered by the signature (the
 * policy) or checked against the keyring (key_id): a flipped bit inside a
 * field is a refusal. What stays free is only what carries no data: JSON
 * whitespace between the tokens, the order of the four keys, a trailing
 * newline. Nothing is computed from the envelope's bytes (the digest is
 * of the signed policy), so those do not give a bundle a second meaning.
 * The signature is checked before the policy is parsed: untrusted policy
 * bytes never reach the JSON parser. Only public keys are ever loaded
 * here; signing lives in ctl/keys.c. */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>
#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>

#include "plane/bundle.h"
#include "util/bigbuf.h"
#include "util/errbuf.h"
#include "util/jsonstrict.h"
#include "util/file.h"
#include "util/names.h"

#define ED25519_RAW_LEN	32

struct bundle_key {
	EVP_PKEY	*pk;
	char		 id[BUNDLE_KEY_ID_LEN + 1];
};

struct bundle_keyring {
	struct bundle_key keys[BUNDLE_MAX_KEYS];
	size_t		 n;
};

const char *
bundle_error_name(enum bundle_error e)
{
	switch (e) {
	case BUNDLE_OK:
		return "ok";
	case BUNDLE_MALFORMED:
		return "malformed";
	case BUNDLE_UNKNOWN_KEY:
		return "unknown_key";
	case BUNDLE_BAD_SIGNATURE:
		return "bad_signature";
	}
	return "malformed";
}

struct bundle_keyring *
bundle_keyring_new(void)
{
	return calloc(1, sizeof(struct bundle_keyring));
}

void
bundle_keyring_free(struct bundle_keyring *kr)
{
	size_t i;

	if (kr == NULL)
		return;
	for (i = 0; i < kr->n; i++)
		EVP_PKEY_free(kr->keys[i].pk);
	free(kr);
}

size_t
bundle_keyring_count(const struct bundle_keyring *kr)
{
	return kr == NULL ? 0 : kr->n;
}

int
bundle_key_id(const EVP_PKEY *pk, char *out, char *err, size_t errlen)
{
	static const char hex[] = "0123456789abcdef";
	unsigned char raw[ED25519_RAW_LEN], md[EVP_MAX_MD_SIZE];
	size_t rawlen = sizeof(raw), i;
	unsigned int mdlen = 0;

	if (pk == NULL || out == NULL || !EVP_PKEY_is_a(pk, "ED25519")) {
		errbuf_set(err, errlen, "not an Ed25519 key");
		return -1;
	}
	if (EVP_PKEY_get_raw_public_key(pk, raw, &rawlen) != 1 ||
	    rawlen != ED25519_RAW_LEN) {
		errbuf_set(err, errlen, "cannot read the raw Ed25519 public key");
		return -1;
	}
	if (EVP_Digest(raw, rawlen, md, &mdlen, EVP_sha256(), NULL) != 1 ||
	    mdlen * 2 != BUNDLE_KEY_ID_LEN) {
		errbuf_set(err, errlen, "cannot hash the public key");
		return -1;
	}
	for (i = 0; i < mdlen; i++) {
		out[2 * i] = hex[md[i] >> 4];
		out[2 * i + 1] = hex[md[i] & 0xf];
	}
	out[BUNDLE_KEY_ID_LEN] = '\0';
	return 0;
}

size_t
bundle_domain_prefix(const char *context, unsigned char *out)
{
	size_t clen = strlen(context) + 1;

	memcpy(out, context, clen);
	return clen;
}

unsigned char *
bundle_domain_message(const char *context, const char *canon, size_t len,
    size_t *outlen)
{
	size_t clen;
	unsigned char *m;

	if (context == NULL || canon == NULL || outlen == NULL)
		return NULL;
	clen = strlen(context) + 1;
	if (len > SIZE_MAX - clen - 1 || (m = malloc(clen + len + 1)) == NULL)
		return NULL;
	memcpy(m + bundle_domain_prefix(context, m), canon, len);
	*outlen = clen + len;
	return m;
}

unsigned char *
bundle_signed_message(const char *canon, size_t len, size_t *outlen)
{
	return bundle_domain_message(BUNDLE_CONTEXT, canon, len, outlen);
}

static int
pem_space(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

/* 1 when buf, past leading and trailing whitespace, is one "PUBLIC KEY"
 * block from its BEGIN line to its END line. */
static int
pem_only(const char *buf, size_t len)
{
	static const char head[] = "-----BEGIN PUBLIC KEY-----";
	static const char tail[] = "-----END PUBLIC KEY-----";
	size_t a = 0, b = len;

	while (a < b && pem_space(buf[a]))
		a++;
	while (b > a && pem_space(buf[b - 1]))
		b--;
	return b - a >= sizeof(head) - 1 + sizeof(tail) - 1 &&
	    memcmp(buf + a, head, sizeof(head) - 1) == 0 &&
	    memcmp(buf + b - (sizeof(tail) - 1), tail, sizeof(tail) - 1) == 0;
}

/* Reads the key file from fd (already open) or, with fd -1, from path. */
static int
keyring_add(struct bundle_keyring *kr, int fd, const char *path, char *err,
    size_t errlen)
{
	static const char begin[] = "-----BEGIN ";
	char why[256], id[BUNDLE_KEY_ID_LEN + 1];
	EVP_PKEY *pk = NULL;
	BIO *bio = NULL;
	char *buf = NULL;
	const char *s;
	size_t len, i, blocks = 0;
	int rc = -1;

	if (kr == NULL) {
		errbuf_set(err, errlen, "%s: no keyring", path != NULL ? path : "");
		return -1;
	}
	buf = fd == -1 ? file_read(path, BUNDLE_KEY_FILE_MAX, 0, &len, err,
	    errlen) : file_read_fd(fd, path, BUNDLE_KEY_FILE_MAX, 0, &len, err,
	    errlen);
	if (buf == NULL)
		return -1;
	/* Private key material must never be parsed by the guard, not even
	 * to refuse it after the fact: look for it before OpenSSL does. */
	if (memmem(buf, len, "PRIVATE KEY", 11) != NULL) {
		errbuf_set(err, errlen, "%s: contains a private key; trust only "
		    "public keys (KEY.pub.pem)", path);
		goto out;
	}
	/* Exactly one PEM block: a second key behind the first would be
	 * silently ignored by PEM_read_bio_PUBKEY. */
	for (s = buf; (s = memmem(s, len - (size_t)(s - buf), begin,
	    sizeof(begin) - 1)) != NULL; s += sizeof(begin) - 1)
		blocks++;
	if (blocks != 1) {
		errbuf_set(err, errlen, "%s: expected exactly one PEM public key, "
		    "found %zu PEM blocks", path, blocks);
		goto out;
	}
	/* And nothing else: PEM_read_bio_PUBKEY skips any text around the
	 * block, so a file with other content would pass for a key file. */
	if (!pem_only(buf, len)) {
		errbuf_set(err, errlen, "%s: text outside the PEM block: the file "
		    "must hold one public key and nothing else", path);
		goto out;
	}
	if ((bio = BIO_new_mem_buf(buf, (int)len)) == NULL) {
		errbuf_set(err, errlen, "%s: out of memory", path);
		goto out;
	}
	if ((pk = PEM_read_bio_PUBKEY(bio, NULL, NULL, NULL)) == NULL) {
		errbuf_set(err, errlen, "%s: not a PEM public key (SPKI)", path);
		goto out;
	}
	if (!EVP_PKEY_is_a(pk, "ED25519")) {
		errbuf_set(err, errlen, "%s: not an Ed25519 key (%s)", path,
		    EVP_PKEY_get0_type_name(pk) != NULL ?
		    EVP_PKEY_get0_type_name(pk) : "unknown type");
		goto out;
	}
	if (bundle_key_id(pk, id, why, sizeof(why)) == -1) {
		errbuf_set(err, errlen, "%s: %s", path, why);
		goto out;
	}
	/* The same key twice (e.g. a repeated --trust-key) is one key. */
	for (i = 0; i < kr->n; i++) {
		if (strcmp(kr->keys[i].id, id) == 0) {
			rc = 0;
			goto out;
		}
	}
	if (kr->n >= BUNDLE_MAX_KEYS) {
		errbuf_set(err, errlen, "%s: more than %d trusted keys", path,
		    BUNDLE_MAX_KEYS);
		goto out;
	}
	kr->keys[kr->n].pk = pk;
	memcpy(kr->keys[kr->n].id, id, sizeof(id));
	kr->n++;
	pk = NULL;
	rc = 0;
out:
	/* Leave no parse errors queued for an unrelated later caller. */
	if (rc == -1)
		ERR_clear_error();
	EVP_PKEY_free(pk);
	BIO_free(bio);
	free(buf);
	return rc;
}

int
bundle_keyring_add_file(struct bundle_keyring *kr, const char *path,
    char *err, size_t errlen)
{
	return keyring_add(kr, -1, path, err, errlen);
}

int
bundle_keyring_add_fd(struct bundle_keyring *kr, int fd, const char *path,
    char *err, size_t errlen)
{
	return keyring_add(kr, fd, path, err, errlen);
}

/* Each byte's base64 value, shifted into place for each of the four
 * characters of a quantum (18, 12, 6 and 0 bits up), or B64_BAD for a
 * byte outside the standard alphabet: a quantum is then four lookups
 * and three ORs, checked once. Built per call: 1,024 stores, against
 * megabytes decoded. */
#define B64_BAD	0x80000000u

static void
b64_tables(uint32_t t[4][256])
{
	static const char alphabet[] =
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	size_t i, k;

	for (k = 0; k < 4; k++)
		for (i = 0; i < 256; i++)
			t[k][i] = B64_BAD;
	for (i = 0; i < 64; i++)
		for (k = 0; k < 4; k++)
			t[k][(unsigned char)alphabet[i]] = (uint32_t)i << (18 - 6 * k);
}

/* Strict standard base64 with padding: no whitespace, no line breaks, no
 * URL alphabet, '=' only as the last one or two characters, and zero
 * unused bits in the last quantum, so one byte string has exactly one
 * accepted spelling. Decodes after reserve bytes left free for the
 * caller. Returns a malloc'd buffer or NULL; *outlen excludes reserve. */
static unsigned char *
b64_decode(const char *s, size_t len, size_t reserve, size_t *outlen)
{
	const unsigned char *u = (const unsigned char *)s;
	unsigned char *out, *o;
	uint32_t t[4][256], q;
	size_t i, pad = 0, full;

	if (len % 4 != 0 || len > BUNDLE_MAX_BYTES)
		return NULL;
	if (len > 0 && s[len - 1] == '=')
		pad = s[len - 2] == '=' ? 2 : 1;
	if ((out = bigbuf_malloc(reserve + len / 4 * 3 + 1)) == NULL)
		return NULL;
	b64_tables(t);
	o = out + reserve;
	full = pad > 0 ? len - 4 : len;
	for (i = 0; i < full; i += 4) {
		q = t[0][u[i]] | t[1][u[i + 1]] | t[2][u[i + 2]] | t[3][u[i + 3]];
		if (q & B64_BAD)
			goto bad;
		o[0] = (unsigned char)(q >> 16);
		o[1] = (unsigned char)(q >> 8);
		o[2] = (unsigned char)q;
		o += 3;
	}
	if (pad > 0) {
		q = t[0][u[i]] | t[1][u[i + 1]] | (pad == 1 ? t[2][u[i + 2]] : 0);
		/* Bad bytes, and the bits no output byte takes must be zero. */
		if (q & (B64_BAD | (pad == 2 ? 0xffffu : 0xffu)))
			goto bad;
		*o++ = (unsigned char)(q >> 16);
		if (pad == 1)
			*o++ = (unsigned char)(q >> 8);
	}
	*outlen = (size_t)(o - out) - reserve;
	return out;
bad:
	free(out);
	return NULL;
}

unsigned char *
bundle_b64_decode(const char *s, size_t len, size_t *outlen)
{
	if (s == NULL || outlen == NULL)
		return NULL;
	return b64_decode(s, len, 0, outlen);
}

EVP_PKEY *
bundle_keyring_find(const struct bundle_keyring *kr, const char *key_id)
{
	size_t i;

	if (kr == NULL || key_id == NULL)
		return NULL;
	for (i = 0; i < kr->n; i++)
		if (memcmp(kr->keys[i].id, key_id, BUNDLE_KEY_ID_LEN) == 0)
			return kr->keys[i].pk;
	return NULL;
}

static int
is_key_id(const char *s, size_t len)
{
	size_t i;

	if (len != BUNDLE_KEY_ID_LEN)
		return 0;
	for (i = 0; i < len; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return 0;
	return 1;
}

/* 1 when sig is pk's Ed25519 signature over the whole message m. */
static int
ed25519_verify(EVP_PKEY *pk, const unsigned char *sig, size_t siglen,
    const unsigned char *m, size_t mlen)
{
	EVP_MD_CTX *ctx;
	int ok = 0;

	/* Ed25519 is one-shot: NULL digest, EVP_DigestVerify. */
	if ((ctx = EVP_MD_CTX_new()) != NULL &&
	    EVP_DigestVerifyInit(ctx, NULL, NULL, NULL, pk) == 1)
		ok = EVP_DigestVerify(ctx, sig, siglen, m, mlen) == 1;
	if (!ok)
		ERR_clear_error();
	EVP_MD_CTX_free(ctx);
	return ok;
}

int
bundle_ed25519_verify(EVP_PKEY *pk, const char *context,
    const unsigned char *sig, size_t siglen, const char *canon, size_t len)
{
	unsigned char *m;
	size_t mlen;
	int ok;

	if ((m = bundle_domain_message(context, canon, len, &mlen)) == NULL)
		return 0;
	ok = ed25519_verify(pk, sig, siglen, m, mlen);
	free(m);
	return ok;
}

/* The string at s (its opening quote passed) up to the closing quote,
 * which *q is set to; -1 when it has none or holds an escape. */
static int
plain_string(const char *s, const char *end, const char **q)
{
	if ((*q = memchr(s, '"', (size_t)(end - s))) == NULL ||
	    memchr(s, '\\', (size_t)(*q - s)) != NULL)
		return -1;
	return 0;
}

/* A bundle's four fields, in the order egress-guardctl sign writes them. */
static const char *const envelope_keys[] = {
	"schema", "key_id", "policy", "signature", NULL
};

/* The envelope as egress-guardctl sign writes it: one flat object of four
 * string fields without escapes or whitespace (a trailing newline
 * allowed). Recognised by hand, since jansson's string scanner is most of
 * the cost of a large bundle; any other spelling takes the jansson path,
 * which refuses escapes too (envelope_escaped), accepts only whitespace
 * between tokens beyond this, and names the problem. The values' bytes are not
 * checked here: each is then held to a narrower grammar (the schema and
 * key id exactly, strict base64) that no control or non-ASCII byte
 * passes, so such a bundle is refused as malformed either way. Returns 0
 * and fills v/vlen in envelope_keys[] order, or -1. */
int
bundle_envelope_fast(const char *buf, size_t len, const char **v, size_t *vlen)
{
	const char *s = buf, *end = buf + len, *q;
	int seen = 0, n, i;

	while (end > s && end[-1] == '\n')
		end--;
	if (s == end || *s++ != '{')
		return -1;
	for (n = 0; n < 4; n++) {
		if (n > 0 && (s == end || *s++ != ','))
			return -1;
		if (s == end || *s++ != '"' || plain_string(s, end, &q) == -1)
			return -1;
		i = names_index(envelope_keys, NAMES_N(envelope_keys), s,
		    (size_t)(q - s));
		if (i < 0 || (seen & (1 << i)))
			return -1;	/* unknown or duplicate key */
		seen |= 1 << i;
		s = q + 1;
		if (end - s < 2 || s[0] != ':' || s[1] != '"')
			return -1;
		s += 2;
		if (plain_string(s, end, &q) == -1)
			return -1;
		v[i] = s;
		vlen[i] = (size_t)(q - s);
		s = q + 1;
	}
	return (s + 1 == end && *s == '}' && seen == 15) ? 0 : -1;
}

int
bundle_envelope_escaped(const char *buf, size_t len)
{
	/* Outside strings JSON has no backslash: one here is an escape in
	 * a key or a value. */
	return buf != NULL && memchr(buf, '\\', len) != NULL;
}

int
bundle_is_envelope(const char *buf, size_t len)
{
	static const char policy_start[] = "{\"allow\":[";
	const char *v[4], *schema;
	size_t vlen[4];
	json_t *root;
	int yes;

	if (buf == NULL || len == 0)
		return 0;
	if (bundle_envelope_fast(buf, len, v, vlen) == 0)
		return vlen[0] == sizeof(BUNDLE_SCHEMA) - 1 &&
		    memcmp(v[0], BUNDLE_SCHEMA, vlen[0]) == 0;
	/* Canonical policy bytes start so, and no bundle does: a
	 * 100,000-entry policy is not parsed twice to learn that. */
	if (len >= sizeof(policy_start) - 1 &&
	    memcmp(buf, policy_start, sizeof(policy_start) - 1) == 0)
		return 0;
	root = json_loadb(buf, len, JSON_REJECT_DUPLICATES, NULL);
	schema = json_string_value(json_object_get(root, "schema"));
	yes = schema != NULL && strcmp(schema, BUNDLE_SCHEMA) == 0;
	json_decref(root);
	return yes;
}

struct policy *
bundle_verify(const struct bundle_keyring *kr, const char *buf, size_t len,
    char *key_id, enum bundle_error *why, char *err, size_t errlen)
{
	enum bundle_error e = BUNDLE_MALFORMED;
	const struct bundle_key *k = NULL;
	struct policy *p = NULL;
	unsigned char *msg = NULL, *sig = NULL;
	const char *v[4], *canon, *pol;
	size_t vlen[4], pollen = 0, siglen = 0, clen, i;
	char perr[512];
	int taken = 0;
	json_error_t jerr;
	json_t *root = NULL;

	if (buf == NULL || len == 0) {
		errbuf_set(err, errlen, "empty bundle");
		goto out;
	}
	if (len > BUNDLE_MAX_BYTES) {
		errbuf_set(err, errlen, "bundle larger than %u bytes",
		    BUNDLE_MAX_BYTES);
		goto out;
	}
	if (bundle_envelope_fast(buf, len, v, vlen) == 0)
		goto fields;
	/* jansson would decode "\/" or "\u0041" into the alphabet: a second
	 * spelling of the same field. */
	if (bundle_envelope_escaped(buf, len)) {
		errbuf_set(err, errlen, "bundle holds a JSON escape: its keys and "
		    "values are written as they are");
		goto out;
	}
	/* jansson's message may quote input: report the position only. */
	root = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &jerr);
	if (root == NULL) {
		errbuf_set(err, errlen, "bundle is not valid JSON (line %d column "
		    "%d) or has a duplicate key", jerr.line, jerr.column);
		goto out;
	}
	if (!json_is_object(root) || json_object_size(root) != 4) {
		errbuf_set(err, errlen, "bundle must be an object with exactly the "
		    "keys schema, key_id, policy, signature");
		goto out;
	}
	for (i = 0; envelope_keys[i] != NULL; i++) {
		if ((v[i] = jsonstrict_str(root, envelope_keys[i], &vlen[i])) == NULL) {
			errbuf_set(err, errlen, "bundle key \"%s\" missing or not a "
			    "string", envelope_keys[i]);
			goto out;
		}
	}
fields:
	if (vlen[0] != sizeof(BUNDLE_SCHEMA) - 1 ||
	    memcmp(v[0], BUNDLE_SCHEMA, vlen[0]) != 0) {
		errbuf_set(err, errlen, "bundle schema must be \"%s\"", BUNDLE_SCHEMA);
		goto out;
	}
	if (!is_key_id(v[1], vlen[1])) {
		errbuf_set(err, errlen, "bundle key_id must be %d lowercase hex "
		    "digits", BUNDLE_KEY_ID_LEN);
		goto out;
	}
	/* Decoded after room for the domain prefix: the signed message,
	 * megabytes long, then needs no copy of its own. */
	if ((msg = b64_decode(v[2], vlen[2], sizeof(BUNDLE_CONTEXT), &pollen)) == NULL) {
		errbuf_set(err, errlen, "bundle policy is not canonical base64");
		goto out;
	}
	pol = (const char *)msg + bundle_domain_prefix(BUNDLE_CONTEXT, msg);
	if ((sig = b64_decode(v[3], vlen[3], 0, &siglen)) == NULL) {
		errbuf_set(err, errlen, "bundle signature is not canonical base64");
		goto out;
	}
	for (i = 0; kr != NULL && i < kr->n; i++)
		if (memcmp(kr->keys[i].id, v[1], BUNDLE_KEY_ID_LEN) == 0)
			k = &kr->keys[i];
	if (k == NULL) {
		e = BUNDLE_UNKNOWN_KEY;
		errbuf_set(err, errlen, "key %.*s is not trusted", BUNDLE_KEY_ID_LEN,
		    v[1]);
		goto out;
	}
	if (siglen != BUNDLE_SIG_LEN || !ed25519_verify(k->pk, sig, siglen, msg,
	    sizeof(BUNDLE_CONTEXT) + pollen)) {
		e = BUNDLE_BAD_SIGNATURE;
		errbuf_set(err, errlen, "signature does not verify under key %s",
		    k->id);
		goto out;
	}
	/* Signed, hence parsed; and the signed bytes must be the canonical
	 * form, so the digest the guard reports is of what was signed. Taken
	 * by the policy, they are its canonical bytes. */
	if ((p = policy_parse_take((char *)msg, (size_t)(pol - (const char *)msg),
	    pollen, &taken, perr, sizeof(perr))) == NULL) {
		errbuf_set(err, errlen, "signed policy is invalid: %s", perr);
		goto out;
	}
	if (taken)
		msg = NULL;
	canon = policy_canonical(p, &clen);
	if (clen != pollen || (!taken && memcmp(canon, pol, clen) != 0)) {
		errbuf_set(err, errlen, "signed policy is not in canonical form");
		policy_free(p);
		p = NULL;
		goto out;
	}
	e = BUNDLE_OK;
	if (key_id != NULL)
		memcpy(key_id, k->id, BUNDLE_KEY_ID_LEN + 1);
out:
	if (why != NULL)
		*why = e;
	free(msg);
	free(sig);
	json_decref(root);
	return p;
}
