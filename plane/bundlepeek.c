#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "plane/bundlepeek.h"
#include "util/errbuf.h"

struct policy *
bundlepeek_policy(const char *buf, size_t len, char *key_id, char *err,
    size_t errlen)
{
	struct policy *p = NULL;
	json_t *root = NULL, *schema, *kid, *pol;
	unsigned char *canon = NULL;
	size_t clen = 0;
	json_error_t jerr;
	char why[512];

	if (buf == NULL || len == 0 || len > BUNDLE_MAX_BYTES) {
		errbuf_set(err, errlen, "not a bundle: empty or larger than %u bytes",
		    BUNDLE_MAX_BYTES);
		return NULL;
	}
	/* jansson's message may quote input: the position only. */
	if ((root = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &jerr)) == NULL) {
		errbuf_set(err, errlen, "not a bundle: invalid JSON (line %d column %d)",
		    jerr.line, jerr.column);
		return NULL;
	}
	schema = json_object_get(root, "schema");
	kid = json_object_get(root, "key_id");
	pol = json_object_get(root, "policy");
	if (!json_is_string(schema) || strcmp(json_string_value(schema),
	    BUNDLE_SCHEMA) != 0 || !json_is_string(kid) ||
	    json_string_length(kid) != BUNDLE_KEY_ID_LEN || !json_is_string(pol)) {
		errbuf_set(err, errlen, "not a bundle: schema, key_id or policy missing "
		    "or wrong");
		goto out;
	}
	if ((canon = bundle_b64_decode(json_string_value(pol),
	    json_string_length(pol), &clen)) == NULL) {
		errbuf_set(err, errlen, "not a bundle: policy is not canonical base64");
		goto out;
	}
	if ((p = policy_parse((const char *)canon, clen, why, sizeof(why))) == NULL) {
		errbuf_set(err, errlen, "the bundle's policy: %s", why);
		goto out;
	}
	if (key_id != NULL)
		memcpy(key_id, json_string_value(kid), BUNDLE_KEY_ID_LEN + 1);
out:
	free(canon);
	json_decref(root);
	return p;
}
