/* Plane-side keys and signing (docs/design.md "Signed bundle"), and the keygen,
 * sign and verify subcommands of egress-guardctl.
 *
 * The helpers above the subcommands are library-like (errors into a
 * buffer); only the cmd_ functions print. Private key bytes are held in
 * OpenSSL's secure-heap BIO and cleansed before they are freed. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/bio.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>

#include "ctl/cli.h"
#include "ctl/keys.h"
#include "plane/bundle.h"
#include "policy/policy.h"
#include "util/errbuf.h"
#include "util/file.h"


char *
ctlkeys_pub_path(const char *priv_path)
{
	static const char ext[] = ".pem", pub[] = ".pub.pem";
	size_t len, base;
	char *out;

	if (priv_path == NULL)
		return NULL;
	len = strlen(priv_path);
	base = len;
	if (len >= sizeof(ext) - 1 &&
	    strcmp(priv_path + len - (sizeof(ext) - 1), ext) == 0)
		base = len - (sizeof(ext) - 1);
	if ((out = malloc(base + sizeof(pub))) == NULL)
		return NULL;
	memcpy(out, priv_path, base);
	memcpy(out + base, pub, sizeof(pub));
	return out;
}

static int
write_all_fd(int fd, const char *buf, size_t len)
{
	ssize_t w;

	while (len > 0) {
		w = write(fd, buf, len);
		if (w == -1 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		buf += w;
		len -= (size_t)w;
	}
	return 0;
}

/* Writes a BIO's contents to an open fd, syncs and closes it (the fd is
 * closed in every case). Returns 0 or -1 with errno set. */
static int
finish_file(int fd, BIO *bio)
{
	char *data;
	long n;
	int saved;

	n = BIO_get_mem_data(bio, &data);
	if (n <= 0 || write_all_fd(fd, data, (size_t)n) == -1 ||
	    fsync(fd) == -1) {
		saved = n <= 0 ? EIO : errno;
		close(fd);
		errno = saved;
		return -1;
	}
	return close(fd);
}

int
ctlkeys_keygen(const char *priv_path, char *err, size_t errlen)
{
	EVP_PKEY *pk = NULL;
	BIO *sbio = NULL, *pbio = NULL;
	char *pub_path = NULL;
	int sfd = -1, pfd = -1, made_s = 0, made_p = 0, rc = -1;

	if (priv_path == NULL || priv_path[0] == '\0') {
		errbuf_set(err, errlen, "no output path");
		return -1;
	}
	if ((pub_path = ctlkeys_pub_path(priv_path)) == NULL) {
		errbuf_set(err, errlen, "%s: out of memory", priv_path);
		goto out;
	}
	if ((pk = EVP_PKEY_Q_keygen(NULL, NULL, "ED25519")) == NULL) {
		errbuf_set(err, errlen, "cannot generate an Ed25519 key");
		goto out;
	}
	/* The secure-heap BIO clears the private key text when freed. */
	if ((sbio = BIO_new(BIO_s_secmem())) == NULL ||
	    (pbio = BIO_new(BIO_s_mem())) == NULL ||
	    PEM_write_bio_PKCS8PrivateKey(sbio, pk, NULL, NULL, 0, NULL,
	    NULL) != 1 || PEM_write_bio_PUBKEY(pbio, pk) != 1) {
		errbuf_set(err, errlen, "cannot encode the key as PEM");
		goto out;
	}
	/* Both files are created exclusively before anything is written, so
	 * an existing key is never overwritten and a half pair is never
	 * left behind. 0600: the mode is set at creation, no window. */
	sfd = open(priv_path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOCTTY,
	    0600);
	if (sfd == -1) {
		errbuf_set(err, errlen, "%s: %s", priv_path, strerror(errno));
		goto out;
	}
	made_s = 1;
	pfd = open(pub_path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOCTTY,
	    0644);
	if (pfd == -1) {
		errbuf_set(err, errlen, "%s: %s", pub_path, strerror(errno));
		goto out;
	}
	made_p = 1;
	if (finish_file(sfd, sbio) == -1) {
		sfd = -1;
		errbuf_set(err, errlen, "%s: %s", priv_path, strerror(errno));
		goto out;
	}
	sfd = -1;
	if (finish_file(pfd, pbio) == -1) {
		pfd = -1;
		errbuf_set(err, errlen, "%s: %s", pub_path, strerror(errno));
		goto out;
	}
	pfd = -1;
	rc = 0;
out:
	if (sfd != -1)
		close(sfd);
	if (pfd != -1)
		close(pfd);
	if (rc == -1 && made_s)
		unlink(priv_path);
	if (rc == -1 && made_p)
		unlink(pub_path);
	BIO_free(sbio);
	BIO_free(pbio);
	EVP_PKEY_free(pk);
	free(pub_path);
	return rc;
}

/* Refuses to prompt: an encrypted key fails to load instead of blocking
 * a script on the terminal. */
static int
no_passphrase(char *buf, int size, int rwflag, void *u)
{
	(void)buf;
	(void)size;
	(void)rwflag;
	(void)u;
	return -1;
}

EVP_PKEY *
ctlkeys_load_private(const char *path, char *err, size_t errlen)
{
	EVP_PKEY *pk = NULL;
	BIO *bio = NULL;
	char *buf;
	size_t len;

	if ((buf = file_read(path, BUNDLE_KEY_FILE_MAX, 0, &len, err,
	    errlen)) == NULL)
		return NULL;
	if ((bio = BIO_new_mem_buf(buf, (int)len)) == NULL) {
		errbuf_set(err, errlen, "%s: out of memory", path);
		goto out;
	}
	pk = PEM_read_bio_PrivateKey(bio, NULL, no_passphrase, NULL);
	if (pk == NULL) {
		errbuf_set(err, errlen, "%s: not an unencrypted PEM private key",
		    path);
		goto out;
	}
	if (!EVP_PKEY_is_a(pk, "ED25519")) {
		errbuf_set(err, errlen, "%s: not an Ed25519 key", path);
		EVP_PKEY_free(pk);
		pk = NULL;
		goto out;
	}
out:
	if (pk == NULL)
		ERR_clear_error();
	BIO_free(bio);
	OPENSSL_clear_free(buf, len);
	return pk;
}

int
ctlkeys_envelope_fits(const struct ctlkeys_envelope *e, size_t len,
    size_t *total, char *err, size_t errlen)
{
	if (len > e->max)
		*total = SIZE_MAX;
	else
		*total = strlen(e->schema) + strlen(e->field) + 46 +
		    BUNDLE_KEY_ID_LEN + 4 * ((len + 2) / 3) +
		    4 * ((BUNDLE_SIG_LEN + 2) / 3);
	if (*total == SIZE_MAX || *total + e->reserve > e->max) {
		errbuf_set(err, errlen, "%s too large: %s is at most %zu bytes",
		    e->what, e->container, e->max);
		return -1;
	}
	return 0;
}

/* Before any work: something to sign, a key that can, and an envelope
 * the reader would take. Fills id and *total. */
static int
sign_check(const struct ctlkeys_envelope *e, const void *canon, size_t len,
    EVP_PKEY *priv, char *id, size_t *total, char *err, size_t errlen)
{
	char why[128];

	if (canon == NULL || len == 0 || priv == NULL) {
		errbuf_set(err, errlen, "nothing to sign");
		return -1;
	}
	if (bundle_key_id(priv, id, why, sizeof(why)) == -1) {
		errbuf_set(err, errlen, "signing key: %s", why);
		return -1;
	}
	return ctlkeys_envelope_fits(e, len, total, err, errlen);
}

/* The Ed25519 signature over the whole message m. */
static int
sign_ed25519(EVP_PKEY *priv, const unsigned char *m, size_t mlen,
    unsigned char *sig, char *err, size_t errlen)
{
	EVP_MD_CTX *ctx;
	size_t siglen = BUNDLE_SIG_LEN;
	int ok = 0;

	/* Ed25519 is one-shot: NULL digest, EVP_DigestSign. */
	if ((ctx = EVP_MD_CTX_new()) != NULL &&
	    EVP_DigestSignInit(ctx, NULL, NULL, NULL, priv) == 1 &&
	    EVP_DigestSign(ctx, sig, &siglen, m, mlen) == 1 &&
	    siglen == BUNDLE_SIG_LEN)
		ok = 1;
	EVP_MD_CTX_free(ctx);
	if (!ok) {
		ERR_clear_error();
		errbuf_set(err, errlen, "Ed25519 signing failed");
		return -1;
	}
	return 0;
}

/* Where an envelope goes, piece by piece: a buffer of cap bytes, or a
 * stream (whose write errors the caller sees with ferror). */
struct sink {
	char	*buf;
	size_t	 len, cap;
	FILE	*f;
};

static void
sink_put(struct sink *k, const char *s, size_t n)
{
	if (k->f != NULL) {
		(void)fwrite(s, 1, n, k->f);
	} else if (n <= k->cap - k->len) {
		memcpy(k->buf + k->len, s, n);
		k->len += n;
	} else {
		k->len = k->cap + 1;	/* overflowed: never equals total */
	}
}

static void
sink_str(struct sink *k, const char *s)
{
	sink_put(k, s, strlen(s));
}

/* Standard base64 with padding, one line (the only spelling the verifier
 * accepts), in pieces of whole 3-byte groups, which concatenate to the
 * encoding of the whole. */
static void
sink_b64(struct sink *k, const unsigned char *in, size_t len)
{
	enum { GROUPS = 4096 };
	char out[4 * GROUPS + 1];
	size_t n;

	for (; len > 0; in += n, len -= n) {
		n = len < 3 * GROUPS ? len : 3 * GROUPS;
		sink_put(k, out, (size_t)EVP_EncodeBlock((unsigned char *)out, in,
		    (int)n));
	}
}

/* {"schema":S,"key_id":…,"FIELD":base64(canon),"signature":…} */
static void
sink_envelope(struct sink *k, const struct ctlkeys_envelope *e, const char *id,
    const unsigned char *canon, size_t len, const unsigned char *sig)
{
	sink_str(k, "{\"schema\":\"");
	sink_str(k, e->schema);
	sink_str(k, "\",\"key_id\":\"");
	sink_str(k, id);
	sink_str(k, "\",\"");
	sink_str(k, e->field);
	sink_str(k, "\":\"");
	sink_b64(k, canon, len);
	sink_str(k, "\",\"signature\":\"");
	sink_b64(k, sig, BUNDLE_SIG_LEN);
	sink_str(k, "\"}");
}

char *
ctlkeys_sign_envelope(const struct ctlkeys_envelope *e, const char *canon,
    size_t len, EVP_PKEY *priv, char *err, size_t errlen)
{
	unsigned char sig[BUNDLE_SIG_LEN], *m = NULL;
	char id[BUNDLE_KEY_ID_LEN + 1];
	struct sink k = { NULL, 0, 0, NULL };
	size_t mlen, total;

	if (sign_check(e, canon, len, priv, id, &total, err, errlen) == -1)
		return NULL;
	if ((m = bundle_domain_message(e->context, canon, len, &mlen)) == NULL ||
	    (k.buf = malloc(total + 1)) == NULL) {
		errbuf_set(err, errlen, "out of memory");
		goto fail;
	}
	if (sign_ed25519(priv, m, mlen, sig, err, errlen) == -1)
		goto fail;
	k.cap = total;
	sink_envelope(&k, e, id, (const unsigned char *)canon, len, sig);
	if (k.len != total) {
		errbuf_set(err, errlen, "cannot format the %s", e->field);
		goto fail;
	}
	k.buf[total] = '\0';
	free(m);
	return k.buf;
fail:
	free(m);
	free(k.buf);
	return NULL;
}

int
ctlkeys_sign_to(const struct ctlkeys_envelope *e, char *buf, size_t len,
    EVP_PKEY *priv, FILE *out, char *err, size_t errlen)
{
	unsigned char sig[BUNDLE_SIG_LEN];
	char id[BUNDLE_KEY_ID_LEN + 1];
	struct sink k = { NULL, 0, 0, out };
	size_t clen, total;

	if (sign_check(e, buf, len, priv, id, &total, err, errlen) == -1)
		return -1;
	clen = bundle_domain_prefix(e->context, (unsigned char *)buf);
	if (sign_ed25519(priv, (const unsigned char *)buf, clen + len, sig, err,
	    errlen) == -1)
		return -1;
	sink_envelope(&k, e, id, (const unsigned char *)buf + clen, len, sig);
	sink_put(&k, "\n", 1);
	return 0;
}

static const struct ctlkeys_envelope bundle_envelope = {
	BUNDLE_SCHEMA, BUNDLE_CONTEXT, "policy", BUNDLE_MAX_BYTES, 0,
	"policy", "a bundle"
};

char *
ctlkeys_sign_bytes(const char *canon, size_t len, EVP_PKEY *priv, char *err,
    size_t errlen)
{
	return ctlkeys_sign_envelope(&bundle_envelope, canon, len, priv, err,
	    errlen);
}

/* ---- subcommands: the CLI layer, which prints. ---- */

/* keygen --out KEY.pem */
int
ctlkeys_cmd_keygen(int argc, char **argv)
{
	static const char *const names[] = { "--out", NULL };
	struct cli_opts o = { argv[0], CTLKEYS_KEYGEN_USAGE, names, { NULL },
	    NULL, 0 };
	const char *out;
	char err[1024], *pub;
	int rc;

	if ((rc = cli_parse_opts(argc, argv, 1, &o)) != 0)
		return rc;
	if ((out = o.vals[0]) == NULL)
		return cli_usage_error(o.cmd, o.usage, "missing --out", NULL);
	if (ctlkeys_keygen(out, err, sizeof(err)) == -1) {
		fprintf(stderr, "%s: keygen: %s\n", CLI_PROG, err);
		return CLI_EXIT_FAIL;
	}
	/* Tell the operator which file to hand to the guard. */
	pub = ctlkeys_pub_path(out);
	fprintf(stderr, "%s: wrote %s (private, 0600) and %s (public)\n", CLI_PROG,
	    out, pub != NULL ? pub : "the .pub.pem file");
	free(pub);
	return 0;
}

/* sign POLICY --key KEY.pem: the bundle and a newline on stdout. */
int
ctlkeys_cmd_sign(int argc, char **argv)
{
	static const char *const names[] = { "--key", NULL };
	struct cli_opts o = { argv[0], CTLKEYS_SIGN_USAGE, names, { NULL },
	    NULL, 1 };
	const char *key, *path;
	EVP_PKEY *pk = NULL;
	char err[1024], *canon = NULL;
	size_t len;
	int rc;

	if ((rc = cli_parse_opts(argc, argv, 1, &o)) != 0)
		return rc;
	path = o.operand;
	key = o.vals[0];
	if (path == NULL || key == NULL)
		return cli_usage_error(o.cmd, o.usage, path == NULL ?
		    "missing POLICY" : "missing --key", NULL);
	rc = CLI_EXIT_USAGE;

	/* What is signed is the canonical form, whatever spelling the file
	 * used; read with room for the domain prefix before it, so the
	 * signed message is built without a copy. */
	if ((canon = policy_file_canonical(path, sizeof(BUNDLE_CONTEXT), &len, err,
	    sizeof(err))) == NULL) {
		fprintf(stderr, "%s: sign: %s\n", CLI_PROG, err);
		goto out;
	}
	/* A policy too large for any bundle is bad input (2), found before
	 * the key is read, not a failure to sign (1). */
	if (ctlkeys_envelope_fits(&bundle_envelope, len, &(size_t){ 0 }, err,
	    sizeof(err)) == -1) {
		fprintf(stderr, "%s: sign: %s: %s\n", CLI_PROG, path, err);
		goto out;
	}
	if ((pk = ctlkeys_load_private(key, err, sizeof(err))) == NULL) {
		fprintf(stderr, "%s: sign: %s\n", CLI_PROG, err);
		goto out;
	}
	if (ctlkeys_sign_to(&bundle_envelope, canon, len, pk, stdout, err,
	    sizeof(err)) == -1) {
		fprintf(stderr, "%s: sign: %s: %s\n", CLI_PROG, path, err);
		rc = CLI_EXIT_FAIL;
		goto out;
	}
	rc = cli_print_all("", 0) == -1 ? CLI_EXIT_FAIL : 0;
out:
	EVP_PKEY_free(pk);
	free(canon);
	return rc;
}

/* verify BUNDLE --trust-key PUB.pem...: one JSON line with the signer's
 * key id, the epoch and the digest (then the catalog and the tenant when
 * the policy names them). */
int
ctlkeys_cmd_verify(int argc, char **argv)
{
	const char *cmd = argv[0], *path = NULL, *key;
	char err[1024], id[BUNDLE_KEY_ID_LEN + 1], *buf = NULL;
	struct bundle_keyring *kr = NULL;
	struct policy *p = NULL;
	enum bundle_error why;
	size_t len;
	int i, r, opts = 1, rc = CLI_EXIT_USAGE;

	if ((kr = bundle_keyring_new()) == NULL) {
		fprintf(stderr, "%s: verify: out of memory\n", CLI_PROG);
		return CLI_EXIT_FAIL;
	}
	for (i = 1; i < argc; i++) {
		if (opts && strcmp(argv[i], "--") == 0) {
			opts = 0;
			continue;
		}
		r = opts ? cli_opt_value(argc, argv, &i, "--trust-key", &key) : 0;
		if (r == -1) {
			rc = cli_usage_error(cmd, CTLKEYS_VERIFY_USAGE,
			    "--trust-key needs a path", NULL);
			goto out;
		}
		if (r == 1) {
			if (bundle_keyring_add_file(kr, key, err,
			    sizeof(err)) == -1) {
				fprintf(stderr, "%s: verify: %s\n", CLI_PROG, err);
				goto out;
			}
			continue;
		}
		if (opts && argv[i][0] == '-' && argv[i][1] != '\0') {
			rc = cli_usage_error(cmd, CTLKEYS_VERIFY_USAGE,
			    "unknown option", argv[i]);
			goto out;
		}
		if (path != NULL) {
			rc = cli_usage_error(cmd, CTLKEYS_VERIFY_USAGE,
			    "one BUNDLE only", NULL);
			goto out;
		}
		path = argv[i];
	}
	if (path == NULL || bundle_keyring_count(kr) == 0) {
		rc = cli_usage_error(cmd, CTLKEYS_VERIFY_USAGE, path == NULL ?
		    "missing BUNDLE" : "at least one --trust-key is needed",
		    NULL);
		goto out;
	}
	if ((buf = file_read(path, BUNDLE_MAX_BYTES, 0, &len, err,
	    sizeof(err))) == NULL) {
		fprintf(stderr, "%s: verify: %s\n", CLI_PROG, err);
		goto out;
	}
	if ((p = bundle_verify(kr, buf, len, id, &why, err,
	    sizeof(err))) == NULL) {
		fprintf(stderr, "%s: verify: %s: refused (%s): %s\n", CLI_PROG,
		    path, bundle_error_name(why), err);
		rc = why == BUNDLE_MALFORMED ? CLI_EXIT_USAGE : CLI_EXIT_FAIL;
		goto out;
	}
	/* The catalog a verified bundle is pinned to, when it has one (the
	 * line is unchanged for others), read from its signed bytes: version
	 * and digest are [A-Za-z0-9._:-], nothing to escape. */
	printf("{\"key_id\":\"%s\",\"epoch\":%lld,\"digest\":\"%s\"", id,
	    policy_epoch(p), policy_digest(p));
	if (policy_catalog_version(p) != NULL)
		printf(",\"catalog\":{\"digest\":\"%s\",\"version\":\"%s\"}",
		    policy_catalog_digest(p), policy_catalog_version(p));
	/* The tenant it is for, when it names one: [a-z0-9-], nothing to
	 * escape either. */
	if (policy_tenant(p) != NULL)
		printf(",\"tenant\":\"%s\"", policy_tenant(p));
	printf("}\n");
	rc = cli_print_all("", 0) == -1 ? CLI_EXIT_FAIL : 0;
out:
	policy_free(p);
	free(buf);
	bundle_keyring_free(kr);
	return rc;
}
