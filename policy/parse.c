/* Compiled policies (docs/design.md "Policy"): the canonical fast path
 * for what the plane signs, and the strict jansson path for any other
 * spelling; both end in the builder of policy/policy.c. Also the JSON
 * pieces policy/profile.c shares. Pure but for the file readers. */
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
#include "util/num.h"

struct policy_span
policy_json_span(const json_t *v)
{
	struct policy_span sp = { json_string_value(v), json_string_length(v) };

	return sp;
}

int
policy_span_is(struct policy_span sp, const char *lit)
{
	return sp.s != NULL && strlen(lit) == sp.len && memcmp(lit, sp.s, sp.len) == 0;
}

int
policy_one_of(struct policy_span v, const char *const *names)
{
	int i;

	for (i = 0; names[i] != NULL; i++)
		if (policy_span_is(v, names[i]))
			return i;
	return -1;
}

int
policy_parse_mode(struct policy_span v, enum policy_mode *m)
{
	static const char *const names[] = {
		"none", "allowlist", "unrestricted", NULL
	};
	static const enum policy_mode modes[] = {
		POLICY_NONE, POLICY_ALLOWLIST, POLICY_UNRESTRICTED
	};
	int i = policy_one_of(v, names);

	if (i < 0)
		return -1;
	*m = modes[i];
	return 0;
}

json_t *
policy_load_json(const char *buf, size_t len, char *err, size_t errlen)
{
	char shown[ERRBUF_SHOW_BUF];
	json_error_t jerr;
	json_t *root;

	if (buf == NULL) {
		errbuf_set(err, errlen, "no input");
		return NULL;
	}
	if (len > POLICY_MAX_BYTES) {
		errbuf_set(err, errlen, "larger than %u bytes", POLICY_MAX_BYTES);
		return NULL;
	}
	root = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &jerr);
	if (root == NULL) {
		/* jansson quotes input near the error: escape it. */
		errbuf_set(err, errlen, "invalid JSON at line %d column %d: %s",
		    jerr.line, jerr.column,
		    errbuf_show(jerr.text, strnlen(jerr.text, sizeof(jerr.text)), shown));
		return NULL;
	}
	if (!json_is_object(root)) {
		errbuf_set(err, errlen, "top level must be a JSON object");
		json_decref(root);
		return NULL;
	}
	return root;
}

static int
parse_epoch(const json_t *v, long long *epoch, char *err, size_t errlen)
{
	json_int_t e;

	if (!json_is_integer(v)) {
		errbuf_set(err, errlen, "epoch must be an integer");
		return -1;
	}
	e = json_integer_value(v);
	if (e < 0 || e > POLICY_EPOCH_MAX) {
		errbuf_set(err, errlen, "epoch must be 0-%lld", POLICY_EPOCH_MAX);
		return -1;
	}
	*epoch = (long long)e;
	return 0;
}

/* One element of a compiled policy's "allow": {"host":…,"port":…}. */
static int
parse_allow_entry(size_t i, json_t *item, struct policy *p,
    char *err, size_t errlen)
{
	static const char *const keys[] = { "host", "port", "via", NULL };
	char why[128], shown[ERRBUF_SHOW_BUF];
	const char *hs, *extra;
	json_t *host, *port, *via;
	json_int_t pv;
	struct dest d;
	size_t hl;
	int v = POLICY_VIA_PROFILE;

	if (!json_is_object(item)) {
		errbuf_set(err, errlen, "allow[%zu]: entry must be an object", i);
		return -1;
	}
	if ((extra = jsonstrict_unknown_key(item, keys)) != NULL) {
		errbuf_set(err, errlen, "allow[%zu]: unknown key \"%s\"", i,
		    errbuf_show(extra, strlen(extra), shown));
		return -1;
	}
	host = json_object_get(item, "host");
	port = json_object_get(item, "port");
	if (host == NULL || port == NULL) {
		errbuf_set(err, errlen, "allow[%zu]: missing key \"%s\"", i,
		    host == NULL ? "host" : "port");
		return -1;
	}
	if (!json_is_string(host)) {
		errbuf_set(err, errlen, "allow[%zu]: host must be a string", i);
		return -1;
	}
	hs = json_string_value(host);
	hl = json_string_length(host);
	if (memchr(hs, '*', hl) != NULL) {
		errbuf_set(err, errlen, "allow[%zu]: wildcard host \"%s\" is not "
		    "allowed", i, errbuf_show(hs, hl, shown));
		return -1;
	}
	/* The canonical spelling of an IPv6 host is bare; a bracketed one
	 * is accepted and normalised. */
	if (dest_parse_host(hs, hl, hl > 0 && hs[0] == '[', &d, why,
	    sizeof(why)) == -1) {
		errbuf_set(err, errlen, "allow[%zu]: host \"%s\": %s", i,
		    errbuf_show(hs, hl, shown), why);
		return -1;
	}
	if (!json_is_integer(port)) {
		errbuf_set(err, errlen, "allow[%zu]: port of \"%s\" must be an "
		    "integer 1-65535", i, errbuf_show(hs, hl, shown));
		return -1;
	}
	pv = json_integer_value(port);
	if (pv < 1 || pv > 65535) {
		errbuf_set(err, errlen, "allow[%zu]: port %lld of \"%s\" must be "
		    "1-65535", i, (long long)pv, errbuf_show(hs, hl, shown));
		return -1;
	}
	d.port = (uint16_t)pv;
	if ((via = json_object_get(item, "via")) != NULL &&
	    (v = policy_via_parse(policy_json_span(via))) < 0) {
		errbuf_set(err, errlen, "allow[%zu]: via of \"%s\" must be "
		    "\"profile\" or \"package_managers:ECOSYSTEM\" (%s)", i,
		    errbuf_show(hs, hl, shown), catalog_ecosystem_list());
		return -1;
	}
	if (policy_add_entry(p, &d, (unsigned)v) == -1) {
		errbuf_set(err, errlen, "allow[%zu]: out of memory", i);
		return -1;
	}
	return 0;
}

/* "sha256:" and 64 lower-case hex digits. */
static int
digest_ok(const char *s, size_t len)
{
	size_t i;

	if (len != POLICY_DIGEST_LEN || memcmp(s, "sha256:", 7) != 0)
		return 0;
	for (i = 7; i < len; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return 0;
	return 1;
}

/* A compiled policy's "catalog": {"digest":…,"version":…}, exactly. */
static int
parse_catalog(json_t *v, struct policy *p, char *err, size_t errlen)
{
	static const char *const keys[] = { "digest", "version", NULL };
	const char *d, *ver;
	size_t dl, vl;

	if (!json_is_object(v) || jsonstrict_unknown_key(v, keys) != NULL ||
	    (d = jsonstrict_str(v, "digest", &dl)) == NULL || !digest_ok(d, dl) ||
	    (ver = jsonstrict_str(v, "version", &vl)) == NULL ||
	    !catalog_version_ok(ver, vl)) {
		errbuf_set(err, errlen, "catalog must be {\"digest\":\"sha256:"
		    "HEX\",\"version\":V}, V 1-%d characters of [A-Za-z0-9._-]",
		    CATALOG_VERSION_MAX);
		return -1;
	}
	policy_set_catalog(p, ver, vl, d);
	return 0;
}

/* ---- the canonical fast path ----
 * A compiled policy from the plane arrives in canonical form (a bundle's
 * policy must be). Recognising exactly that grammar by hand avoids
 * building a JSON tree of every entry, which dominates the cost of a large
 * policy. Anything that is not byte-for-byte canonical falls back to the
 * strict jansson path, which also gives the precise error message. */

static int
lit(const char **s, const char *end, const char *want)
{
	size_t n = strlen(want);

	if ((size_t)(end - *s) < n || memcmp(*s, want, n) != 0)
		return -1;
	*s += n;
	return 0;
}

/* Decimal without sign or leading zero, within [min, max]. */
static int
fast_num(const char **s, const char *end, long long min, long long max,
    long long *out)
{
	const char *b = *s;

	while (*s < end && **s >= '0' && **s <= '9')
		(*s)++;
	return num_parse_n(b, (unsigned long)(*s - b), min, max, out);
}

/* {"host":"…","port":N} at *s, into the next entry, which points into
 * the canonical bytes being read. */
static int
canonical_entry(struct policy *p, const char **s, const char *end)
{
	struct policy_entry *e = &p->ent[p->n];
	const char *h;
	long long port;

	if (p->n >= p->cap || lit(s, end, "{\"host\":\"") == -1)
		return -1;
	for (h = *s; *s < end && **s != '"'; (*s)++)
		;
	if (*s == end || !dest_host_is_normal(h, (size_t)(*s - h)))
		return -1;
	e->off = (uint32_t)(h - p->names);
	e->hlen = (uint8_t)(*s - h);	/* at most DEST_HOST_MAX */
	(*s)++;
	if (lit(s, end, ",\"port\":") == -1 ||
	    fast_num(s, end, 1, 65535, &port) == -1)
		return -1;
	e->port = (uint16_t)port;
	e->via = POLICY_VIA_PROFILE;
	/* A flag's entry names it; "profile" is never spelled out. */
	if (lit(s, end, ",\"via\":\"") == 0) {
		struct policy_span v = { *s, 0 };
		int code;

		while (*s < end && **s != '"')
			(*s)++;
		v.len = (size_t)(*s - v.s);
		if (*s == end || (code = policy_via_parse(v)) <= 0)
			return -1;
		e->via = (uint8_t)code;
		(*s)++;
	}
	if (lit(s, end, "}") == -1)
		return -1;
	/* Each entry above the one before: sorted, no duplicates. */
	if (p->n > 0 && policy_entry_order(p->names, &p->ent[p->n - 1], e) >= 0)
		return -1;
	p->n++;
	return 0;
}

/* Reads the len bytes at s, inside mem (a malloc'd block with a byte to
 * spare after them), when they are exactly canonical bytes (a trailing
 * newline allowed): the policy then takes mem, and those bytes are its
 * canonical bytes. NULL otherwise, mem left unchanged and the caller's. */
static struct policy *
parse_canonical(char *mem, char *bytes, size_t len, enum policy_build b)
{
	static const char *const modes[] = { "none", "allowlist", "unrestricted" };
	struct policy *p = NULL;
	const char *s = bytes, *end;
	long long epoch;
	size_t i, cap;
	enum policy_mode mode = POLICY_NONE;

	/* A file may end in a newline; the canonical bytes never do. */
	while (len > 0 && (bytes[len - 1] == '\n' || bytes[len - 1] == ' '))
		len--;
	end = bytes + len;
	if (lit(&s, end, "{\"allow\":[") == -1)
		return NULL;
	/* Entries are at least {"host":"a","port":1}, 24 bytes. */
	cap = len / 24 + 1;
	if (cap > POLICY_MAX_ENTRIES)
		cap = POLICY_MAX_ENTRIES;
	if ((p = policy_new(POLICY_ALLOWLIST, 0, cap, b)) == NULL)
		return NULL;
	p->names = bytes;
	if (s < end && *s == ']') {
		s++;
	} else {
		for (;;) {
			if (canonical_entry(p, &s, end) == -1)
				goto fallback;
			if (s < end && *s == ',') {
				s++;
				continue;
			}
			if (lit(&s, end, "]") == -1)
				goto fallback;
			break;
		}
	}
	if (lit(&s, end, ",\"catalog\":{\"digest\":\"") == 0) {
		const char *d = s, *v;

		if ((size_t)(end - s) < POLICY_DIGEST_LEN ||
		    !digest_ok(d, POLICY_DIGEST_LEN))
			goto fallback;
		s += POLICY_DIGEST_LEN;
		if (lit(&s, end, "\",\"version\":\"") == -1)
			goto fallback;
		for (v = s; s < end && *s != '"'; s++)
			;
		if (s == end || !catalog_version_ok(v, (size_t)(s - v)))
			goto fallback;
		policy_set_catalog(p, v, (size_t)(s - v), d);
		if (lit(&s, end, "\"}") == -1)
			goto fallback;
	}
	if (lit(&s, end, ",\"epoch\":") == -1 ||
	    fast_num(&s, end, 0, POLICY_EPOCH_MAX, &epoch) == -1 ||
	    lit(&s, end, ",\"mode\":\"") == -1)
		goto fallback;
	for (i = 0; i < 3; i++) {
		const char *t = s;
		if (lit(&t, end, modes[i]) == 0 && t < end && *t == '"') {
			mode = (enum policy_mode)(POLICY_NONE + (int)i);
			s = t;
			break;
		}
	}
	if (i == 3 || lit(&s, end, "\",\"schema\":\"" POLICY_SCHEMA "\"") == -1)
		goto fallback;
	if (lit(&s, end, ",\"tenant\":\"") == 0) {
		struct policy_span t = { s, 0 };

		while (s < end && *s != '"')
			s++;
		t.len = (size_t)(s - t.s);
		if (s == end || policy_set_tenant(p, t, NULL, 0) == -1)
			goto fallback;
		s++;
	}
	if (lit(&s, end, "}") == -1 ||
	    s != end || ((p->n > 0 || p->cat_version[0] != '\0') &&
	    mode != POLICY_ALLOWLIST) || policy_check_vias(p, NULL, 0) == -1)
		goto fallback;
	p->mode = mode;
	p->epoch = epoch;
	p->canon = bytes;
	p->canon_len = len;
	if (policy_seal(p, NULL, 0) == -1)
		goto fallback;
	bytes[len] = '\0';
	p->canon_mem = mem;
	return p;
fallback:
	policy_free(p);
	return NULL;
}

/* The strict path, for any spelling: jansson's tree, then the builder. */
static struct policy *
parse_json(const char *buf, size_t len, enum policy_build b, char *err, size_t errlen)
{
	/* The first four required; "catalog" only a policy with package
	 * managers has, "tenant" only one for a tenant of a multi-tenant
	 * guard. */
	static const char *const keys[] = {
		"schema", "mode", "epoch", "allow", "catalog", "tenant", NULL
	};
	static const char *const schema[] = { POLICY_SCHEMA, NULL };
	json_t *cat, *tenant;
	char shown[ERRBUF_SHOW_BUF];
	struct policy *p = NULL;
	const char *extra;
	enum policy_mode mode;
	json_t *root, *v, *allow;
	long long epoch;
	size_t i, n;

	if ((root = policy_load_json(buf, len, err, errlen)) == NULL)
		return NULL;
	if ((extra = jsonstrict_unknown_key(root, keys)) != NULL) {
		errbuf_set(err, errlen, "unknown key \"%s\"",
		    errbuf_show(extra, strlen(extra), shown));
		goto bad;
	}
	for (i = 0; i < 4; i++) {
		if (json_object_get(root, keys[i]) == NULL) {
			errbuf_set(err, errlen, "missing key \"%s\"", keys[i]);
			goto bad;
		}
	}
	if (policy_one_of(policy_json_span(json_object_get(root, "schema")), schema) != 0) {
		errbuf_set(err, errlen, "schema must be \"%s\"", POLICY_SCHEMA);
		goto bad;
	}
	if (policy_parse_mode(policy_json_span(json_object_get(root, "mode")), &mode) == -1) {
		errbuf_set(err, errlen, "mode must be one of none, allowlist, unrestricted");
		goto bad;
	}
	if (parse_epoch(json_object_get(root, "epoch"), &epoch, err,
	    errlen) == -1)
		goto bad;
	allow = json_object_get(root, "allow");
	if (!json_is_array(allow)) {
		errbuf_set(err, errlen, "allow must be an array");
		goto bad;
	}
	n = json_array_size(allow);
	if (n > POLICY_MAX_ENTRIES) {
		errbuf_set(err, errlen, "allow has more than %u entries",
		    POLICY_MAX_ENTRIES);
		goto bad;
	}
	if (n > 0 && mode != POLICY_ALLOWLIST) {
		errbuf_set(err, errlen, "allow must be empty when mode is \"%s\"",
		    policy_mode_name(mode));
		goto bad;
	}
	cat = json_object_get(root, "catalog");
	if (cat != NULL && mode != POLICY_ALLOWLIST) {
		errbuf_set(err, errlen, "catalog is only allowed with mode "
		    "\"allowlist\"");
		goto bad;
	}
	if ((p = policy_new(mode, epoch, n, b)) == NULL) {
		errbuf_set(err, errlen, "out of memory");
		goto bad;
	}
	if (cat != NULL && parse_catalog(cat, p, err, errlen) == -1)
		goto bad;
	if ((tenant = json_object_get(root, "tenant")) != NULL &&
	    policy_set_tenant(p, policy_json_span(tenant), err, errlen) == -1)
		goto bad;
	json_array_foreach(allow, i, v) {
		if (parse_allow_entry(i, v, p, err, errlen) == -1)
			goto bad;
	}
	if (policy_check_vias(p, err, errlen) == -1 ||
	    policy_finish(p, err, errlen) == -1)
		goto bad;
	json_decref(root);
	return p;
bad:
	policy_free(p);
	json_decref(root);
	return NULL;
}

/* The len bytes at mem + off, mem malloc'd with a byte to spare after
 * them: canonical bytes are read in place and the policy takes mem
 * (*taken 1); any other spelling goes the strict way, and mem stays the
 * caller's. */
static struct policy *
parse_bytes(char *mem, size_t off, size_t len, enum policy_build b, int *taken,
    char *err, size_t errlen)
{
	struct policy *p;

	*taken = 0;
	/* mem NULL is refused by policy_load_json: NULL + 0 is undefined in C. */
	if (mem != NULL && len <= POLICY_MAX_BYTES &&
	    (p = parse_canonical(mem, mem + off, len, b)) != NULL) {
		*taken = 1;
		return p;
	}
	return parse_json(mem != NULL ? mem + off : NULL, len, b, err, errlen);
}

struct policy *
policy_parse(const char *buf, size_t len, char *err, size_t errlen)
{
	struct policy *p;
	char *copy;
	int taken;

	if (buf == NULL || len > POLICY_MAX_BYTES || (copy = malloc(len + 1)) == NULL)
		return parse_json(buf, len, POLICY_BUILD_ALL, err, errlen);
	memcpy(copy, buf, len);
	p = parse_bytes(copy, 0, len, POLICY_BUILD_ALL, &taken, err, errlen);
	if (!taken)
		free(copy);
	return p;
}

struct policy *
policy_parse_take(char *buf, size_t off, size_t len, int *taken, char *err,
    size_t errlen)
{
	return parse_bytes(buf, off, len, POLICY_BUILD_ALL, taken, err, errlen);
}

/* A compiled policy file, read after reserve free bytes; when it is
 * canonical already the policy keeps the buffer read, which then holds
 * its canonical bytes after those reserve bytes. */
static struct policy *
load_file(const char *path, size_t reserve, enum policy_build b, char *err,
    size_t errlen)
{
	struct policy *p;
	char why[512];
	size_t len;
	char *buf;
	int taken;

	if ((buf = file_read(path, POLICY_MAX_BYTES, reserve, &len, err, errlen)) == NULL)
		return NULL;
	if ((p = parse_bytes(buf, reserve, len, b, &taken, why, sizeof(why))) == NULL)
		errbuf_set(err, errlen, "%s: %s", path, why);
	if (!taken)
		free(buf);
	return p;
}

struct policy *
policy_load_file(const char *path, char *err, size_t errlen)
{
	return load_file(path, 0, POLICY_BUILD_ALL, err, errlen);
}

char *
policy_file_canonical(const char *path, size_t reserve, size_t *len, char *err,
    size_t errlen)
{
	struct policy *p = load_file(path, reserve, POLICY_BUILD_CANONICAL, err, errlen);

	return p != NULL ? policy_hand_canonical(p, reserve, len, err, errlen) : NULL;
}
