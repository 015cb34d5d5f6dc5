#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "plane/bundlepeek.h"
#include "util/errbuf.h"

/* The fields a peek reads, from the envelope as egress-guardctl sign
 * writes it (scanned by hand) or from any JSON spelling (jansson, whose
 * tree *root then holds them). Schema and key_id length checked. */
struct peek {
	json_t		*root;
	const char	*kid, *pol;
	size_t		 polen;
};

static int
peek_open(struct peek *k, const char *buf, size_t len, char *err, size_t errlen)
{
	const char *v[4];
	size_t vlen[4];
	json_t *schema, *kid, *pol;
	json_error_t jerr;

	memset(k, 0, sizeof(*k));
	if (buf == NULL || len == 0 || len > BUNDLE_MAX_BYTES) {
		errbuf_set(err, errlen, "not a bundle: empty or larger than %u bytes",
		    BUNDLE_MAX_BYTES);
		return -1;
	}
	if (bundle_envelope_fast(buf, len, v, vlen) == 0) {
		if (vlen[0] != sizeof(BUNDLE_SCHEMA) - 1 ||
		    memcmp(v[0], BUNDLE_SCHEMA, vlen[0]) != 0 ||
		    vlen[1] != BUNDLE_KEY_ID_LEN)
			goto bad;
		k->kid = v[1];
		k->pol = v[2];
		k->polen = vlen[2];
		return 0;
	}
	/* jansson's message may quote input: the position only. */
	if ((k->root = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &jerr)) == NULL) {
		errbuf_set(err, errlen, "not a bundle: invalid JSON (line %d column %d)",
		    jerr.line, jerr.column);
		return -1;
	}
	schema = json_object_get(k->root, "schema");
	kid = json_object_get(k->root, "key_id");
	pol = json_object_get(k->root, "policy");
	if (!json_is_string(schema) || strcmp(json_string_value(schema),
	    BUNDLE_SCHEMA) != 0 || !json_is_string(kid) ||
	    json_string_length(kid) != BUNDLE_KEY_ID_LEN || !json_is_string(pol)) {
		json_decref(k->root);
		k->root = NULL;
		goto bad;
	}
	k->kid = json_string_value(kid);
	k->pol = json_string_value(pol);
	k->polen = json_string_length(pol);
	return 0;
bad:
	errbuf_set(err, errlen, "not a bundle: schema, key_id or policy missing "
	    "or wrong");
	return -1;
}

static unsigned char *
peek_canon(const struct peek *k, size_t *clen, char *err, size_t errlen)
{
	unsigned char *canon;

	if ((canon = bundle_b64_decode(k->pol, k->polen, clen)) == NULL)
		errbuf_set(err, errlen, "not a bundle: policy is not canonical base64");
	return canon;
}

struct policy *
bundlepeek_policy(const char *buf, size_t len, char *key_id, char *err,
    size_t errlen)
{
	struct policy *p = NULL;
	struct peek k;
	unsigned char *canon;
	size_t clen = 0;
	char why[512];

	if (peek_open(&k, buf, len, err, errlen) == -1)
		return NULL;
	if ((canon = peek_canon(&k, &clen, err, errlen)) == NULL)
		goto out;
	if ((p = policy_parse((const char *)canon, clen, why, sizeof(why))) == NULL)
		errbuf_set(err, errlen, "the bundle's policy: %s", why);
	else if (key_id != NULL) {
		memcpy(key_id, k.kid, BUNDLE_KEY_ID_LEN);
		key_id[BUNDLE_KEY_ID_LEN] = '\0';
	}
	free(canon);
out:
	json_decref(k.root);
	return p;
}

int
bundlepeek_digest(const char *buf, size_t len, char *digest, char *err,
    size_t errlen)
{
	struct peek k;
	unsigned char *canon;
	size_t clen = 0;
	int rc = -1;

	if (peek_open(&k, buf, len, err, errlen) == -1)
		return -1;
	if ((canon = peek_canon(&k, &clen, err, errlen)) != NULL) {
		if ((rc = policy_digest_bytes(canon, clen, digest)) == -1)
			errbuf_set(err, errlen, "cannot hash the bundle's policy");
		free(canon);
	}
	json_decref(k.root);
	return rc;
}
