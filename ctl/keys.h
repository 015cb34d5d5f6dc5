/* Plane-side key handling for egress-guardctl: Ed25519 key generation and
 * bundle signing (docs/design.md "Signed bundle"), and the keygen, sign and
 * verify subcommands. The guard never calls anything here: it only
 * verifies, with plane/bundle.h. */
#ifndef EG_CTL_KEYS_H
#define EG_CTL_KEYS_H

#include <stddef.h>
#include <stdio.h>

#include <openssl/types.h>	/* EVP_PKEY */

#define CTLKEYS_KEYGEN_USAGE	"--out KEY.pem"
#define CTLKEYS_SIGN_USAGE	"POLICY --key KEY.pem"
#define CTLKEYS_VERIFY_USAGE	"BUNDLE --trust-key PUB.pem [--trust-key PUB.pem]..."

/* The public key path that goes with a private key path: a trailing
 * ".pem" becomes ".pub.pem", otherwise ".pub.pem" is appended.
 * Returns a malloc'd string or NULL. */
char *ctlkeys_pub_path(const char *priv_path);

/* Generates an Ed25519 key: the PKCS#8 PEM private key at priv_path (mode
 * 0600) and the SPKI PEM public key at ctlkeys_pub_path(priv_path). Never
 * overwrites: if either file exists nothing is written. Returns 0, or -1
 * with err naming the path. */
int ctlkeys_keygen(const char *priv_path, char *err, size_t errlen);

/* Loads an Ed25519 PEM private key (unencrypted PKCS#8; never prompts for
 * a passphrase). Returns the key or NULL with err naming the path. */
EVP_PKEY *ctlkeys_load_private(const char *path, char *err, size_t errlen);

/* Signs canon as given (it is not parsed or canonicalised here: callers
 * pass policy_canonical bytes) and returns the bundle JSON, NUL-terminated,
 * without a trailing newline, malloc'd. NULL with err set when the key is
 * not Ed25519 or the bundle would exceed BUNDLE_MAX_BYTES. */
char *ctlkeys_sign_bytes(const char *canon, size_t len, EVP_PKEY *priv,
    char *err, size_t errlen);

/* What differs between the signed things the plane makes (bundles,
 * receipts): the envelope's schema and field name, the signature's
 * domain-separation context, and the size bound. */
struct ctlkeys_envelope {
	const char	*schema;
	const char	*context;
	const char	*field;		/* "policy", "receipt" */
	size_t		 max;		/* the largest envelope a reader takes */
	size_t		 reserve;	/* bytes the reader keeps for itself */
	const char	*what;		/* for "… too large: …" */
	const char	*container;
};

/* Whether an envelope of len signed bytes is one the reader takes (its
 * exact length, plus what the reader keeps in reserve): 0 with *total
 * that length, or -1 with err. */
int ctlkeys_envelope_fits(const struct ctlkeys_envelope *e, size_t len,
    size_t *total, char *err, size_t errlen);

/* Signs canon (as given) under e; the envelope JSON, malloc'd, no
 * newline, or NULL with err. */
char *ctlkeys_sign_envelope(const struct ctlkeys_envelope *e, const char *canon,
    size_t len, EVP_PKEY *priv, char *err, size_t errlen);

/* The same written to out, with a newline, for the len canonical bytes
 * at buf + strlen(e->context) + 1 (the bytes before them free): the
 * domain prefix is written there and the message signed in place, and
 * the envelope is never held whole, sparing two copies of a large
 * policy. Returns 0, or -1 with err and nothing written; write errors
 * show in ferror(out). */
int ctlkeys_sign_to(const struct ctlkeys_envelope *e, char *buf, size_t len,
    EVP_PKEY *priv, FILE *out, char *err, size_t errlen);

/* Subcommands (argv[0] is the subcommand name). Exit status as in
 * ctl/main.c: 0 done, 1 an operating failure or, for verify, a refused
 * bundle (unknown key, bad signature), 2 bad usage or malformed input. */
int ctlkeys_cmd_keygen(int argc, char **argv);
int ctlkeys_cmd_sign(int argc, char **argv);
int ctlkeys_cmd_verify(int argc, char **argv);

#endif
