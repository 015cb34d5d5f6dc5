/* The package-manager catalog (policy/catalog.h): parsed strictly with
 * jansson (a catalog is a few hundred entries: no fast path needed),
 * entries normalised by the destination grammar, canonical bytes and
 * their digest as for a policy. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "policy/catalog.h"
#include "policy/dest.h"
#include "policy/policy.h"
#include "policy/policyint.h"
#include "util/errbuf.h"
#include "util/file.h"
#include "util/jsonstrict.h"
#include "util/names.h"

static const char *const ecosystems[CATALOG_NECOSYSTEMS + 1] = {
	"apt", "cargo", "go", "maven", "npm", "nuget", "pypi", "rubygems", NULL
};

struct catalog {
	char		 version[CATALOG_VERSION_MAX + 1];
	char		 digest[POLICY_DIGEST_LEN + 1];
	char		*canon;
	size_t		 canon_len;
	struct dest	*hosts[CATALOG_NECOSYSTEMS];
	size_t		 n[CATALOG_NECOSYSTEMS];
};

const char *
catalog_ecosystem_name(unsigned i)
{
	return i < CATALOG_NECOSYSTEMS ? ecosystems[i] : NULL;
}

int
catalog_ecosystem_index(const char *s, size_t len)
{
	return names_index(ecosystems, CATALOG_NECOSYSTEMS, s, len);
}

const char *
catalog_ecosystem_list(void)
{
	return "apt, cargo, go, maven, npm, nuget, pypi, rubygems";
}

void
catalog_free(struct catalog *c)
{
	size_t i;

	if (c == NULL)
		return;
	for (i = 0; i < CATALOG_NECOSYSTEMS; i++)
		free(c->hosts[i]);
	free(c->canon);
	free(c);
}

const char *
catalog_version(const struct catalog *c)
{
	return c == NULL ? NULL : c->version;
}

const char *
catalog_digest(const struct catalog *c)
{
	return c == NULL ? NULL : c->digest;
}

const char *
catalog_canonical(const struct catalog *c, size_t *len)
{
	*len = c == NULL ? 0 : c->canon_len;
	return c == NULL ? NULL : c->canon;
}

size_t
catalog_hosts(const struct catalog *c, unsigned eco, const struct dest **out)
{
	if (c == NULL || eco >= CATALOG_NECOSYSTEMS) {
		*out = NULL;
		return 0;
	}
	*out = c->hosts[eco];
	return c->n[eco];
}

/* As a policy orders its entries: host bytes, then port. */
static int
dest_cmp(const void *a, const void *b)
{
	const struct dest *x = a, *y = b;
	int c = strcmp(x->host, y->host);

	if (c != 0)
		return c;
	return (x->port > y->port) - (x->port < y->port);
}

int
catalog_version_ok(const char *s, size_t len)
{
	size_t i;

	if (len == 0 || len > CATALOG_VERSION_MAX)
		return 0;
	for (i = 0; i < len; i++) {
		char ch = s[i];

		if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
		    (ch >= '0' && ch <= '9') || ch == '.' || ch == '_' || ch == '-'))
			return 0;
	}
	return 1;
}

/* One ecosystem's array into c->hosts[eco], sorted, no entry twice. */
static int
parse_ecosystem(struct catalog *c, unsigned eco, json_t *arr, char *err,
    size_t errlen)
{
	const char *name = ecosystems[eco];
	char why[128], shown[ERRBUF_SHOW_BUF];
	size_t i, n;
	json_t *v;

	if (!json_is_array(arr)) {
		errbuf_set(err, errlen, "ecosystems.%s must be an array of "
		    "\"host:port\" strings", name);
		return -1;
	}
	if ((n = json_array_size(arr)) == 0) {
		errbuf_set(err, errlen, "ecosystems.%s is empty", name);
		return -1;
	}
	if (n > CATALOG_MAX_HOSTS) {
		errbuf_set(err, errlen, "ecosystems.%s has more than %u entries",
		    name, CATALOG_MAX_HOSTS);
		return -1;
	}
	if ((c->hosts[eco] = calloc(n, sizeof(struct dest))) == NULL) {
		errbuf_set(err, errlen, "out of memory");
		return -1;
	}
	json_array_foreach(arr, i, v) {
		const char *s = json_string_value(v);
		size_t len = json_string_length(v);

		if (s == NULL) {
			errbuf_set(err, errlen, "ecosystems.%s[%zu]: must be a "
			    "\"host:port\" string", name, i);
			return -1;
		}
		if (dest_parse_authority(s, len, &c->hosts[eco][i], why,
		    sizeof(why)) == -1) {
			errbuf_set(err, errlen, "ecosystems.%s[%zu] \"%s\": %s",
			    name, i, errbuf_show(s, len, shown), why);
			return -1;
		}
	}
	c->n[eco] = n;
	qsort(c->hosts[eco], n, sizeof(struct dest), dest_cmp);
	for (i = 1; i < n; i++) {
		if (dest_cmp(&c->hosts[eco][i - 1], &c->hosts[eco][i]) == 0) {
			(void)dest_format(&c->hosts[eco][i], shown, sizeof(shown));
			errbuf_set(err, errlen, "ecosystems.%s: \"%s\" is listed "
			    "twice", name, shown);
			return -1;
		}
	}
	return 0;
}

/* An entry in two ecosystems would have two provenances: which flag
 * granted it would depend on the profile. Refused. */
static int
check_disjoint(const struct catalog *c, char *err, size_t errlen)
{
	char shown[ERRBUF_SHOW_BUF];
	size_t a, b, i, j;

	for (a = 0; a < CATALOG_NECOSYSTEMS; a++)
		for (b = a + 1; b < CATALOG_NECOSYSTEMS; b++)
			for (i = 0; i < c->n[a]; i++)
				for (j = 0; j < c->n[b]; j++) {
					if (dest_cmp(&c->hosts[a][i], &c->hosts[b][j]) != 0)
						continue;
					(void)dest_format(&c->hosts[a][i], shown,
					    sizeof(shown));
					errbuf_set(err, errlen, "\"%s\" is listed "
					    "in both ecosystems.%s and ecosystems.%s",
					    shown, ecosystems[a], ecosystems[b]);
					return -1;
				}
	return 0;
}

/* {"ecosystems":{"npm":["h:443",…],…},"schema":…,"version":…} */
static int
build_canonical(struct catalog *c)
{
	size_t cap = 128 + strlen(c->version), i, k, len = 0;
	char hp[DEST_HOST_MAX + 16];
	int first = 1, w;

	for (i = 0; i < CATALOG_NECOSYSTEMS; i++)
		cap += 16 + c->n[i] * sizeof(hp);
	if ((c->canon = malloc(cap)) == NULL)
		return -1;
#define ADD(...) do {							\
	w = snprintf(c->canon + len, cap - len, __VA_ARGS__);		\
	if (w < 0 || (size_t)w >= cap - len)				\
		return -1;						\
	len += (size_t)w;						\
} while (0)
	ADD("{\"ecosystems\":{");
	for (i = 0; i < CATALOG_NECOSYSTEMS; i++) {
		if (c->n[i] == 0)
			continue;
		ADD("%s\"%s\":[", first ? "" : ",", ecosystems[i]);
		first = 0;
		for (k = 0; k < c->n[i]; k++) {
			if (dest_format(&c->hosts[i][k], hp, sizeof(hp)) == -1)
				return -1;
			ADD("%s\"%s\"", k > 0 ? "," : "", hp);
		}
		ADD("]");
	}
	ADD("},\"schema\":\"%s\",\"version\":\"%s\"}", CATALOG_SCHEMA, c->version);
#undef ADD
	c->canon_len = len;
	return policy_digest_bytes(c->canon, len, c->digest);
}

static int
parse_root(struct catalog *c, json_t *root, char *err, size_t errlen)
{
	static const char *const keys[] = {
		"ecosystems", "schema", "version", NULL
	};
	char shown[ERRBUF_SHOW_BUF];
	json_t *eco, *schema, *ver, *v;
	const char *extra, *name, *vs;
	size_t i, vl;
	int idx, any = 0;

	if ((extra = jsonstrict_unknown_key(root, keys)) != NULL) {
		errbuf_set(err, errlen, "unknown key \"%s\"",
		    errbuf_show(extra, strlen(extra), shown));
		return -1;
	}
	for (i = 0; keys[i] != NULL; i++)
		if (json_object_get(root, keys[i]) == NULL) {
			errbuf_set(err, errlen, "missing key \"%s\"", keys[i]);
			return -1;
		}
	schema = json_object_get(root, "schema");
	if (!json_is_string(schema) || strcmp(json_string_value(schema),
	    CATALOG_SCHEMA) != 0 || json_string_length(schema) !=
	    sizeof(CATALOG_SCHEMA) - 1) {
		errbuf_set(err, errlen, "schema must be \"%s\"", CATALOG_SCHEMA);
		return -1;
	}
	ver = json_object_get(root, "version");
	vs = json_string_value(ver);
	vl = json_string_length(ver);
	if (vs == NULL || !catalog_version_ok(vs, vl)) {
		errbuf_set(err, errlen, "version must be 1-%d characters of "
		    "[A-Za-z0-9._-]", CATALOG_VERSION_MAX);
		return -1;
	}
	memcpy(c->version, vs, vl);
	c->version[vl] = '\0';
	eco = json_object_get(root, "ecosystems");
	if (!json_is_object(eco)) {
		errbuf_set(err, errlen, "ecosystems must be an object");
		return -1;
	}
	json_object_foreach(eco, name, v) {
		if ((idx = catalog_ecosystem_index(name, strlen(name))) < 0) {
			errbuf_set(err, errlen, "ecosystems: unknown ecosystem "
			    "\"%s\" (known: %s)", errbuf_show(name, strlen(name),
			    shown), catalog_ecosystem_list());
			return -1;
		}
		if (parse_ecosystem(c, (unsigned)idx, v, err, errlen) == -1)
			return -1;
		any = 1;
	}
	if (!any) {
		errbuf_set(err, errlen, "ecosystems is empty");
		return -1;
	}
	return check_disjoint(c, err, errlen);
}

struct catalog *
catalog_parse(const char *buf, size_t len, char *err, size_t errlen)
{
	struct catalog *c = NULL;
	json_t *root;

	if (len > CATALOG_MAX_BYTES) {
		errbuf_set(err, errlen, "larger than %u bytes", CATALOG_MAX_BYTES);
		return NULL;
	}
	if ((root = policy_load_json(buf, len, err, errlen)) == NULL)
		return NULL;
	if ((c = calloc(1, sizeof(*c))) == NULL) {
		errbuf_set(err, errlen, "out of memory");
		goto bad;
	}
	if (parse_root(c, root, err, errlen) == -1)
		goto bad;
	if (build_canonical(c) == -1) {
		errbuf_set(err, errlen, "cannot build the canonical bytes");
		goto bad;
	}
	json_decref(root);
	return c;
bad:
	catalog_free(c);
	json_decref(root);
	return NULL;
}

struct catalog *
catalog_load_file(const char *path, char *err, size_t errlen)
{
	struct catalog *c;
	char why[512];
	size_t len;
	char *buf;

	if ((buf = file_read(path, CATALOG_MAX_BYTES, 0, &len, err, errlen)) == NULL)
		return NULL;
	if ((c = catalog_parse(buf, len, why, sizeof(why))) == NULL)
		errbuf_set(err, errlen, "%s: %s", path, why);
	free(buf);
	return c;
}
