/* Signed policy bundles (docs/design.md "Signed bundle"): Ed25519 over the
 * domain-separated bytes "egress-guard.policy.v1" 0x00 <canonical policy>,
 * with OpenSSL 3 EVP. Library code: errors into a buffer, no logging.
 * The guard side only ever holds public keys. */
#ifndef EG_BUNDLE_H
#define EG_BUNDLE_H

#include <stddef.h>

#include <openssl/types.h>	/* EVP_PKEY */

#include "policy/policy.h"

#define BUNDLE_SCHEMA		"egress-guard.bundle.v1"
#define BUNDLE_CONTEXT		"egress-guard.policy.v1"
#define BUNDLE_MAX_BYTES	(8u << 20)	/* room for ~150,000 entries */
#define BUNDLE_MAX_KEYS		16
#define BUNDLE_KEY_ID_LEN	64		/* hex SHA-256 of the raw public key */
#define BUNDLE_KEY_FILE_MAX	(16u * 1024)	/* a PEM key file is at most 16 KiB */
#define BUNDLE_SIG_LEN		64		/* Ed25519 signature bytes */

enum bundle_error {
	BUNDLE_OK = 0,
	BUNDLE_MALFORMED,	/* not a bundle: bad JSON, keys, base64, policy → 400 */
	BUNDLE_UNKNOWN_KEY,	/* key_id not among the trusted keys → 403 */
	BUNDLE_BAD_SIGNATURE	/* signature does not verify → 403 */
};

struct bundle_keyring;	/* a set of trusted Ed25519 public keys */

struct bundle_keyring *bundle_keyring_new(void);
void bundle_keyring_free(struct bundle_keyring *kr);
/* Adds an SPKI PEM public key file (refuses private keys and non-Ed25519).
 * Returns 0 or -1 with err naming the path. */
int bundle_keyring_add_file(struct bundle_keyring *kr, const char *path,
    char *err, size_t errlen);
/* The same from fd, already open and checked (left open): the bytes read
 * are those of the file the caller checked, whatever path now names. */
int bundle_keyring_add_fd(struct bundle_keyring *kr, int fd, const char *path,
    char *err, size_t errlen);
size_t bundle_keyring_count(const struct bundle_keyring *kr);

/* The trusted key whose key id is the BUNDLE_KEY_ID_LEN hex chars at
 * key_id, or NULL. Owned by the keyring: never freed by the caller. Lets
 * other signed formats (conformance receipts, conform/receipt.h) share this
 * trust store and its key hygiene. */
EVP_PKEY *bundle_keyring_find(const struct bundle_keyring *kr,
    const char *key_id);

/* The strict base64 bundles use (standard alphabet, padded, no
 * whitespace, zero unused bits, at most BUNDLE_MAX_BYTES of text): one
 * byte string has one accepted spelling. Returns a malloc'd buffer
 * (possibly of length 0) or NULL. */
unsigned char *bundle_b64_decode(const char *s, size_t len, size_t *outlen);

/* Verifies a bundle (JSON bytes) against the keyring. On success returns
 * the policy (the signed bytes must be exactly canonical) and, when key_id
 * is not NULL, copies the signer's key id (65 bytes with NUL). On failure
 * returns NULL, sets *why and writes a one-line reason to err. */
struct policy *bundle_verify(const struct bundle_keyring *kr, const char *buf,
    size_t len, char *key_id, enum bundle_error *why, char *err, size_t errlen);

/* The four string fields of a bundle spelled as egress-guardctl sign
 * writes it (one flat object, keys in order, no escapes, no whitespace),
 * in the order schema, key_id, policy, signature: 0 with v/vlen filled
 * (values unchecked), -1 for any other spelling (then parse it with
 * jansson). Scanning by hand is what makes a large bundle cheap. */
int bundle_envelope_fast(const char *buf, size_t len, const char **v,
    size_t *vlen);

/* 1 when an envelope (bundle or receipt, JSON text) holds a JSON escape.
 * Their keys and values never need one, and each field has one accepted
 * spelling, so such an envelope is malformed. */
int bundle_envelope_escaped(const char *buf, size_t len);

/* Whether the bytes of a file are a signed bundle rather than a compiled
 * policy, by their "schema", without reading the policy inside: a bundle
 * as egress-guardctl writes it, or a compiled policy in canonical form,
 * is told in one scan; anything else is parsed with jansson. */
int bundle_is_envelope(const char *buf, size_t len);

/* "malformed", "unknown_key", "bad_signature" ("ok" for BUNDLE_OK). */
const char *bundle_error_name(enum bundle_error e);

/* The bytes a bundle signature covers: BUNDLE_CONTEXT, one 0x00, then the
 * canonical policy bytes. Shared by the signer (ctl/keys.c) and the
 * verifier so the two cannot drift. Returns a malloc'd buffer or NULL. */
unsigned char *bundle_signed_message(const char *canon, size_t len,
    size_t *outlen);

/* What comes before the signed bytes: context and the 0x00 separator (its
 * NUL), strlen(context) + 1 bytes written at out; returns that length.
 * For a signer or verifier that builds the message in place. */
size_t bundle_domain_prefix(const char *context, unsigned char *out);

/* The same for any domain-separation context (receipts use their own):
 * context, one 0x00, canon. */
unsigned char *bundle_domain_message(const char *context, const char *canon,
    size_t len, size_t *outlen);

/* 1 when sig is pk's Ed25519 signature over context, 0x00, canon. */
int bundle_ed25519_verify(EVP_PKEY *pk, const char *context,
    const unsigned char *sig, size_t siglen, const char *canon, size_t len);

/* Writes the key id of an Ed25519 key (public or private): lowercase hex
 * SHA-256 of the raw 32-byte public key, BUNDLE_KEY_ID_LEN chars and a
 * NUL. Returns 0, or -1 with err set (not an Ed25519 key). */
int bundle_key_id(const EVP_PKEY *pk, char *out, char *err, size_t errlen);


#endif
