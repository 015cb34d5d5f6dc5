/* The policy model (DESIGN.md "Policy"): strict parsing of profiles and
 * compiled policies, canonical bytes, digest, and the exact matcher.
 *
 * Both inputs end in the same builder: entries are normalised by
 * dest_parse_*, kept in one string arena, sorted by (host bytes, port),
 * deduplicated, then written out as canonical bytes and indexed in an
 * open-addressing hash set keyed with a per-policy random SipHash key, so
 * a lookup costs the same for 1 entry or 1,000,000 and nobody who writes
 * host names can aim collisions at it. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>
#include <openssl/evp.h>
#include <openssl/rand.h>

#include "policy/dest.h"
#include "policy/policy.h"
#include "util/num.h"
#include "util/errbuf.h"
#include "util/jsonstrict.h"


struct entry {
	const char	*host;		/* into the arena, NUL-terminated */
	size_t		 off;		/* arena offset, until the arena is final */
	uint32_t	 hlen;
	uint16_t	 port;
};

struct slot {
	uint32_t	 tag;		/* high half of the hash */
	uint32_t	 idx;		/* entry index + 1; 0 is an empty slot */
};

struct policy {
	enum policy_mode mode;
	long long	 epoch;
	const char	*grade;		/* static string or NULL */

	char		*arena;
	size_t		 arena_len;
	size_t		 arena_cap;
	struct entry	*ent;
	size_t		 n;
	size_t		 cap;

	struct slot	*slots;
	size_t		 mask;
	uint64_t	 k0, k1;

	char		*canon;
	size_t		 canon_len;
	char		 digest[POLICY_DIGEST_LEN + 1];
};

/* What a profile may require. "unsupported" is a grade (a provider with
 * no selector at all) but never a requirement: requiring it would admit
 * anything, which is what leaving the key out already means for none and
 * unrestricted, and is refused for allowlist. */
static const char *const grades[] = {
	"advisory_filter", "security_boundary", NULL
};

static int
one_of(const json_t *v, const char *const *names)
{
	const char *s = json_string_value(v);
	size_t len = json_string_length(v);
	int i;

	if (s == NULL)
		return -1;
	for (i = 0; names[i] != NULL; i++)
		if (strlen(names[i]) == len && memcmp(names[i], s, len) == 0)
			return i;
	return -1;
}

static int
parse_mode(const json_t *v, enum policy_mode *m)
{
	static const char *const names[] = {
		"none", "allowlist", "unrestricted", NULL
	};
	static const enum policy_mode modes[] = {
		POLICY_NONE, POLICY_ALLOWLIST, POLICY_UNRESTRICTED
	};
	int i = one_of(v, names);

	if (i < 0)
		return -1;
	*m = modes[i];
	return 0;
}

static json_t *
load_json(const char *buf, size_t len, char *err, size_t errlen)
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

static struct policy *
policy_new(enum policy_mode mode, long long epoch, size_t cap)
{
	struct policy *p;

	if ((p = calloc(1, sizeof(*p))) == NULL)
		return NULL;
	p->mode = mode;
	p->epoch = epoch;
	if (cap > 0) {
		p->ent = calloc(cap, sizeof(*p->ent));
		p->arena_cap = cap * 24;
		p->arena = malloc(p->arena_cap);
		if (p->ent == NULL || p->arena == NULL) {
			policy_free(p);
			return NULL;
		}
		p->cap = cap;
	}
	return p;
}

void
policy_free(struct policy *p)
{
	if (p == NULL)
		return;
	free(p->arena);
	free(p->ent);
	free(p->slots);
	free(p->canon);
	free(p);
}

/* Appends a normalised destination; cap was sized from the JSON array. */
static int
add_entry(struct policy *p, const struct dest *d)
{
	size_t hlen = strlen(d->host);

	if (p->n >= p->cap)
		return -1;
	if (p->arena_cap - p->arena_len < hlen + 1) {
		size_t ncap = p->arena_cap * 2 + hlen + 1;
		char *na = realloc(p->arena, ncap);

		if (na == NULL)
			return -1;
		p->arena = na;
		p->arena_cap = ncap;
	}
	memcpy(p->arena + p->arena_len, d->host, hlen + 1);
	p->ent[p->n].off = p->arena_len;
	p->ent[p->n].hlen = (uint32_t)hlen;
	p->ent[p->n].port = d->port;
	p->arena_len += hlen + 1;
	p->n++;
	return 0;
}

static int
entry_cmp(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;
	int c = strcmp(x->host, y->host);

	if (c != 0)
		return c;
	return (x->port > y->port) - (x->port < y->port);
}

#define ROTL(x, b)	(uint64_t)(((x) << (b)) | ((x) >> (64 - (b))))
#define SIPROUND do {							\
	v0 += v1; v1 = ROTL(v1, 13); v1 ^= v0; v0 = ROTL(v0, 32);	\
	v2 += v3; v3 = ROTL(v3, 16); v3 ^= v2;				\
	v0 += v3; v3 = ROTL(v3, 21); v3 ^= v0;				\
	v2 += v1; v1 = ROTL(v1, 17); v1 ^= v2; v2 = ROTL(v2, 32);	\
} while (0)

/* SipHash-2-4. */
static uint64_t
siphash(const unsigned char *in, size_t len, uint64_t k0, uint64_t k1)
{
	uint64_t v0 = 0x736f6d6570736575ULL ^ k0;
	uint64_t v1 = 0x646f72616e646f6dULL ^ k1;
	uint64_t v2 = 0x6c7967656e657261ULL ^ k0;
	uint64_t v3 = 0x7465646279746573ULL ^ k1;
	uint64_t b = (uint64_t)len << 56, m;
	size_t i, j, full = len - len % 8;

	for (i = 0; i < full; i += 8) {
		m = 0;
		for (j = 0; j < 8; j++)
			m |= (uint64_t)in[i + j] << (8 * j);
		v3 ^= m;
		SIPROUND;
		SIPROUND;
		v0 ^= m;
	}
	for (j = 0; i + j < len; j++)
		b |= (uint64_t)in[i + j] << (8 * j);
	v3 ^= b;
	SIPROUND;
	SIPROUND;
	v0 ^= b;
	v2 ^= 0xff;
	SIPROUND;
	SIPROUND;
	SIPROUND;
	SIPROUND;
	return v0 ^ v1 ^ v2 ^ v3;
}

/* hlen <= DEST_HOST_MAX, checked by every caller. */
static uint64_t
hash_dest(const struct policy *p, const char *host, size_t hlen, uint16_t port)
{
	unsigned char buf[DEST_HOST_MAX + 2];

	memcpy(buf, host, hlen);
	buf[hlen] = (unsigned char)(port >> 8);
	buf[hlen + 1] = (unsigned char)(port & 0xff);
	return siphash(buf, hlen + 2, p->k0, p->k1);
}

static int
build_index(struct policy *p)
{
	unsigned char key[16];
	size_t size = 2, i, j;

	while (size < 2 * p->n)
		size <<= 1;
	if (RAND_bytes(key, sizeof(key)) != 1)
		return -1;
	p->k0 = p->k1 = 0;
	for (i = 0; i < 8; i++) {
		p->k0 = p->k0 << 8 | key[i];
		p->k1 = p->k1 << 8 | key[8 + i];
	}
	if ((p->slots = calloc(size, sizeof(*p->slots))) == NULL)
		return -1;
	p->mask = size - 1;
	for (i = 0; i < p->n; i++) {
		const struct entry *e = &p->ent[i];
		uint64_t h = hash_dest(p, e->host, e->hlen, e->port);

		for (j = (size_t)h & p->mask; p->slots[j].idx != 0;
		    j = (j + 1) & p->mask)
			;
		p->slots[j].tag = (uint32_t)(h >> 32);
		p->slots[j].idx = (uint32_t)(i + 1);
	}
	return 0;
}

static char *
put_str(char *o, const char *s, size_t len)
{
	memcpy(o, s, len);
	return o + len;
}

static char *
put_num(char *o, unsigned long long v)
{
	char tmp[24];
	size_t n = 0;

	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v > 0);
	while (n > 0)
		*o++ = tmp[--n];
	return o;
}

#define PUT(o, lit)	put_str((o), (lit), sizeof(lit) - 1)

/* Hosts hold only [a-z0-9_.:-], so nothing needs JSON escaping. */
static int
build_canonical(struct policy *p)
{
	unsigned char md[EVP_MAX_MD_SIZE];
	static const char hex[] = "0123456789abcdef";
	const char *mode = policy_mode_name(p->mode);
	unsigned int mdlen = 0;
	size_t cap = 160, i;
	char *o;

	for (i = 0; i < p->n; i++)
		cap += p->ent[i].hlen + 32;
	if ((p->canon = malloc(cap)) == NULL)
		return -1;
	o = PUT(p->canon, "{\"allow\":[");
	for (i = 0; i < p->n; i++) {
		if (i > 0)
			*o++ = ',';
		o = PUT(o, "{\"host\":\"");
		o = put_str(o, p->ent[i].host, p->ent[i].hlen);
		o = PUT(o, "\",\"port\":");
		o = put_num(o, p->ent[i].port);
		*o++ = '}';
	}
	o = PUT(o, "],\"epoch\":");
	o = put_num(o, (unsigned long long)p->epoch);
	o = PUT(o, ",\"mode\":\"");
	o = put_str(o, mode, strlen(mode));
	o = PUT(o, "\",\"schema\":\"" POLICY_SCHEMA "\"}");
	*o = '\0';
	p->canon_len = (size_t)(o - p->canon);

	if (EVP_Digest(p->canon, p->canon_len, md, &mdlen, EVP_sha256(),
	    NULL) != 1 || mdlen != 32)
		return -1;
	memcpy(p->digest, "sha256:", 7);
	for (i = 0; i < mdlen; i++) {
		p->digest[7 + 2 * i] = hex[md[i] >> 4];
		p->digest[7 + 2 * i + 1] = hex[md[i] & 0xf];
	}
	p->digest[POLICY_DIGEST_LEN] = '\0';
	return 0;
}

/* Sorts, deduplicates, writes canonical bytes and digest, builds the
 * matcher. After this the policy is immutable. */
static int
finish(struct policy *p, char *err, size_t errlen)
{
	size_t i, w;
	int sorted = 1;

	for (i = 0; i < p->n; i++)
		p->ent[i].host = p->arena + p->ent[i].off;
	/* A compiled policy arrives sorted: skip the sort then. */
	for (i = 1; i < p->n && sorted; i++)
		if (entry_cmp(&p->ent[i - 1], &p->ent[i]) > 0)
			sorted = 0;
	if (!sorted)
		qsort(p->ent, p->n, sizeof(*p->ent), entry_cmp);
	for (i = 0, w = 0; i < p->n; i++) {
		if (w > 0 && entry_cmp(&p->ent[w - 1], &p->ent[i]) == 0)
			continue;
		p->ent[w++] = p->ent[i];
	}
	p->n = w;
	if (build_canonical(p) == -1) {
		errbuf_set(err, errlen, "cannot build canonical bytes");
		return -1;
	}
	if (build_index(p) == -1) {
		errbuf_set(err, errlen, "cannot build the matcher");
		return -1;
	}
	return 0;
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
	static const char *const keys[] = { "host", "port", NULL };
	char why[128], shown[ERRBUF_SHOW_BUF];
	const char *hs, *extra;
	json_t *host, *port;
	json_int_t pv;
	struct dest d;
	size_t hl;

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
	if (add_entry(p, &d) == -1) {
		errbuf_set(err, errlen, "allow[%zu]: out of memory", i);
		return -1;
	}
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

static struct policy *
parse_canonical(const char *buf, size_t len)
{
	const char *s = buf, *end = buf + len, *h;
	static const char *const modes[] = { "none", "allowlist", "unrestricted" };
	struct policy *p = NULL;
	struct dest d;
	char why[64];
	long long port, epoch;
	size_t n = 0, i, cap;
	enum policy_mode mode = POLICY_NONE;

	/* A file may end in a newline; the canonical bytes never do. */
	while (end > s && (end[-1] == '\n' || end[-1] == ' '))
		end--;
	/* Entries are at least {"host":"a","port":1}, 24 bytes. */
	cap = len / 24 + 1;
	if (cap > POLICY_MAX_ENTRIES)
		cap = POLICY_MAX_ENTRIES;
	if (lit(&s, end, "{\"allow\":[") == -1 ||
	    (p = policy_new(POLICY_ALLOWLIST, 0, cap)) == NULL)
		goto fallback;
	if (s < end && *s == ']') {
		s++;
	} else {
		for (;;) {
			if (lit(&s, end, "{\"host\":\"") == -1)
				goto fallback;
			for (h = s; s < end && *s != '"' && *s != '\\'; s++)
				;
			if (s == end || *s != '"' ||
			    dest_parse_host(h, (size_t)(s - h), 0, &d, why, sizeof(why)) == -1 ||
			    strlen(d.host) != (size_t)(s - h) ||
			    memcmp(d.host, h, (size_t)(s - h)) != 0)
				goto fallback;	/* not already normalised */
			s++;
			if (lit(&s, end, ",\"port\":") == -1 ||
			    fast_num(&s, end, 1, 65535, &port) == -1 ||
			    lit(&s, end, "}") == -1)
				goto fallback;
			d.port = (uint16_t)port;
			if (add_entry(p, &d) == -1)
				goto fallback;
			n++;
			if (n > 1) {
				struct entry *a = &p->ent[n - 2], *b = &p->ent[n - 1];
				a->host = p->arena + a->off;
				b->host = p->arena + b->off;
				if (entry_cmp(a, b) >= 0)
					goto fallback;	/* unsorted or duplicate */
			}
			if (s < end && *s == ',') {
				s++;
				continue;
			}
			if (lit(&s, end, "]") == -1)
				goto fallback;
			break;
		}
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
	if (i == 3 || lit(&s, end, "\",\"schema\":\"" POLICY_SCHEMA "\"}") == -1 ||
	    s != end || (n > 0 && mode != POLICY_ALLOWLIST))
		goto fallback;
	p->mode = mode;
	p->epoch = epoch;
	if (finish(p, why, sizeof(why)) == -1)
		goto fallback;
	return p;
fallback:
	policy_free(p);
	return NULL;
}

struct policy *
policy_parse(const char *buf, size_t len, char *err, size_t errlen)
{
	static const char *const keys[] = {
		"schema", "mode", "epoch", "allow", NULL
	};
	static const char *const schema[] = { POLICY_SCHEMA, NULL };
	char shown[ERRBUF_SHOW_BUF];
	struct policy *p = NULL;
	const char *extra;
	enum policy_mode mode;
	json_t *root, *v, *allow;
	long long epoch;
	size_t i, n;

	/* buf NULL is refused by load_json: NULL + 0 is undefined in C. */
	if (buf != NULL && len <= POLICY_MAX_BYTES &&
	    (p = parse_canonical(buf, len)) != NULL)
		return p;
	if ((root = load_json(buf, len, err, errlen)) == NULL)
		return NULL;
	if ((extra = jsonstrict_unknown_key(root, keys)) != NULL) {
		errbuf_set(err, errlen, "unknown key \"%s\"",
		    errbuf_show(extra, strlen(extra), shown));
		goto bad;
	}
	for (i = 0; keys[i] != NULL; i++) {
		if (json_object_get(root, keys[i]) == NULL) {
			errbuf_set(err, errlen, "missing key \"%s\"", keys[i]);
			goto bad;
		}
	}
	if (one_of(json_object_get(root, "schema"), schema) != 0) {
		errbuf_set(err, errlen, "schema must be \"%s\"", POLICY_SCHEMA);
		goto bad;
	}
	if (parse_mode(json_object_get(root, "mode"), &mode) == -1) {
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
	if ((p = policy_new(mode, epoch, n)) == NULL) {
		errbuf_set(err, errlen, "out of memory");
		goto bad;
	}
	json_array_foreach(allow, i, v) {
		if (parse_allow_entry(i, v, p, err, errlen) == -1)
			goto bad;
	}
	if (finish(p, err, errlen) == -1)
		goto bad;
	json_decref(root);
	return p;
bad:
	policy_free(p);
	json_decref(root);
	return NULL;
}

struct policy *
policy_compile_profile(const char *buf, size_t len, long long epoch,
    char *err, size_t errlen)
{
	static const char *const keys[] = {
		"network_policy", "allowed_hosts",
		"required_egress_certification", NULL
	};
	char why[128], shown[ERRBUF_SHOW_BUF];
	struct policy *p = NULL;
	const char *extra;
	enum policy_mode mode;
	json_t *root, *v, *hosts, *cert;
	struct dest d;
	size_t i, n;
	int g = -1;

	if (epoch < 0 || epoch > POLICY_EPOCH_MAX) {
		errbuf_set(err, errlen, "epoch must be 0-%lld", POLICY_EPOCH_MAX);
		return NULL;
	}
	if ((root = load_json(buf, len, err, errlen)) == NULL)
		return NULL;
	if ((extra = jsonstrict_unknown_key(root, keys)) != NULL) {
		errbuf_set(err, errlen, "unknown key \"%s\"",
		    errbuf_show(extra, strlen(extra), shown));
		goto bad;
	}
	v = json_object_get(root, "network_policy");
	if (v == NULL) {
		errbuf_set(err, errlen, "missing key \"network_policy\"");
		goto bad;
	}
	if (parse_mode(v, &mode) == -1) {
		errbuf_set(err, errlen, "network_policy must be one of none, "
		    "allowlist, unrestricted");
		goto bad;
	}
	hosts = json_object_get(root, "allowed_hosts");
	if (hosts == NULL && mode == POLICY_ALLOWLIST) {
		errbuf_set(err, errlen, "missing key \"allowed_hosts\" "
		    "(required with network_policy \"allowlist\")");
		goto bad;
	}
	if (hosts != NULL && !json_is_array(hosts)) {
		errbuf_set(err, errlen, "allowed_hosts must be an array");
		goto bad;
	}
	n = json_array_size(hosts);	/* 0 for NULL */
	if (n > 0 && mode != POLICY_ALLOWLIST) {
		errbuf_set(err, errlen, "allowed_hosts must be absent or empty "
		    "with network_policy \"%s\"", policy_mode_name(mode));
		goto bad;
	}
	if (n > POLICY_MAX_ENTRIES) {
		errbuf_set(err, errlen, "allowed_hosts has more than %u entries",
		    POLICY_MAX_ENTRIES);
		goto bad;
	}
	cert = json_object_get(root, "required_egress_certification");
	if (cert != NULL) {
		if (mode != POLICY_ALLOWLIST) {
			errbuf_set(err, errlen, "required_egress_certification is "
			    "only allowed with network_policy \"allowlist\"");
			goto bad;
		}
		if ((g = one_of(cert, grades)) < 0) {
			errbuf_set(err, errlen, "required_egress_certification must "
			    "be one of advisory_filter, security_boundary");
			goto bad;
		}
	}
	if ((p = policy_new(mode, epoch, n)) == NULL) {
		errbuf_set(err, errlen, "out of memory");
		goto bad;
	}
	p->grade = g >= 0 ? grades[g] : NULL;
	json_array_foreach(hosts, i, v) {
		const char *s = json_string_value(v);
		size_t sl = json_string_length(v);

		if (s == NULL) {
			errbuf_set(err, errlen, "allowed_hosts[%zu]: must be a "
			    "\"host:port\" string", i);
			goto bad;
		}
		if (dest_parse_authority(s, sl, &d, why, sizeof(why)) == -1) {
			errbuf_set(err, errlen, "allowed_hosts[%zu] \"%s\": %s", i,
			    errbuf_show(s, sl, shown), why);
			goto bad;
		}
		if (add_entry(p, &d) == -1) {
			errbuf_set(err, errlen, "out of memory");
			goto bad;
		}
	}
	if (finish(p, err, errlen) == -1)
		goto bad;
	json_decref(root);
	return p;
bad:
	policy_free(p);
	json_decref(root);
	return NULL;
}

/* Reads a whole regular file, at most POLICY_MAX_BYTES. Messages start
 * with the path. The buffer is NUL-terminated for convenience. */
static char *
read_file(const char *path, size_t *lenp, char *err, size_t errlen)
{
	struct stat st;
	char *buf = NULL, *nb;
	size_t len = 0, cap;
	ssize_t r;
	int fd;

	if (path == NULL) {
		errbuf_set(err, errlen, "no path");
		return NULL;
	}
	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY)) == -1) {
		errbuf_set(err, errlen, "%s: %s", path, strerror(errno));
		return NULL;
	}
	if (fstat(fd, &st) == -1) {
		errbuf_set(err, errlen, "%s: %s", path, strerror(errno));
		goto bad;
	}
	if (!S_ISREG(st.st_mode)) {
		errbuf_set(err, errlen, "%s: not a regular file", path);
		goto bad;
	}
	if (st.st_size < 0 || (unsigned long long)st.st_size > POLICY_MAX_BYTES) {
		errbuf_set(err, errlen, "%s: larger than %u bytes", path,
		    POLICY_MAX_BYTES);
		goto bad;
	}
	/* One byte more than the size fstat saw, so a file that grew in
	 * the meantime is still read to its end and bounded. */
	cap = (size_t)st.st_size + 1;
	if ((buf = malloc(cap + 1)) == NULL) {
		errbuf_set(err, errlen, "%s: out of memory", path);
		goto bad;
	}
	for (;;) {
		if (len == cap) {
			if (cap > POLICY_MAX_BYTES) {
				errbuf_set(err, errlen, "%s: larger than %u bytes",
				    path, POLICY_MAX_BYTES);
				goto bad;
			}
			cap = cap * 2 > (size_t)POLICY_MAX_BYTES + 1 ?
			    (size_t)POLICY_MAX_BYTES + 1 : cap * 2;
			if ((nb = realloc(buf, cap + 1)) == NULL) {
				errbuf_set(err, errlen, "%s: out of memory", path);
				goto bad;
			}
			buf = nb;
		}
		r = read(fd, buf + len, cap - len);
		if (r == -1 && errno == EINTR)
			continue;
		if (r == -1) {
			errbuf_set(err, errlen, "%s: %s", path, strerror(errno));
			goto bad;
		}
		if (r == 0)
			break;
		len += (size_t)r;
	}
	if (len > POLICY_MAX_BYTES) {
		errbuf_set(err, errlen, "%s: larger than %u bytes", path,
		    POLICY_MAX_BYTES);
		goto bad;
	}
	buf[len] = '\0';
	close(fd);
	*lenp = len;
	return buf;
bad:
	free(buf);
	close(fd);
	return NULL;
}

struct policy *
policy_load_file(const char *path, char *err, size_t errlen)
{
	struct policy *p;
	char why[512];
	size_t len;
	char *buf;

	if ((buf = read_file(path, &len, err, errlen)) == NULL)
		return NULL;
	if ((p = policy_parse(buf, len, why, sizeof(why))) == NULL)
		errbuf_set(err, errlen, "%s: %s", path, why);
	free(buf);
	return p;
}

struct policy *
policy_compile_profile_file(const char *path, long long epoch, char *err,
    size_t errlen)
{
	struct policy *p;
	char why[512];
	size_t len;
	char *buf;

	if ((buf = read_file(path, &len, err, errlen)) == NULL)
		return NULL;
	if ((p = policy_compile_profile(buf, len, epoch, why,
	    sizeof(why))) == NULL)
		errbuf_set(err, errlen, "%s: %s", path, why);
	free(buf);
	return p;
}

const char *
policy_canonical(const struct policy *p, size_t *len)
{
	if (p == NULL) {
		if (len != NULL)
			*len = 0;
		return NULL;
	}
	if (len != NULL)
		*len = p->canon_len;
	return p->canon;
}

const char *
policy_digest(const struct policy *p)
{
	return p == NULL ? NULL : p->digest;
}

enum policy_mode
policy_mode(const struct policy *p)
{
	return p == NULL ? POLICY_NONE : p->mode;
}

const char *
policy_mode_name(enum policy_mode m)
{
	switch (m) {
	case POLICY_NONE:
		return "none";
	case POLICY_ALLOWLIST:
		return "allowlist";
	case POLICY_UNRESTRICTED:
		return "unrestricted";
	}
	return "invalid";
}

long long
policy_epoch(const struct policy *p)
{
	return p == NULL ? -1 : p->epoch;
}

size_t
policy_entries(const struct policy *p)
{
	return p == NULL ? 0 : p->n;
}

const char *
policy_required_grade(const struct policy *p)
{
	return p == NULL ? NULL : p->grade;
}

int
policy_admits(const struct policy *p, const char *host, uint16_t port)
{
	uint64_t h;
	uint32_t tag;
	size_t hlen, j;

	if (p == NULL || host == NULL)
		return 0;
	switch (p->mode) {
	case POLICY_UNRESTRICTED:
		return 1;
	case POLICY_ALLOWLIST:
		break;
	default:
		return 0;
	}
	if (p->slots == NULL)
		return 0;
	hlen = strnlen(host, DEST_HOST_MAX + 1);
	if (hlen > DEST_HOST_MAX)
		return 0;
	h = hash_dest(p, host, hlen, port);
	tag = (uint32_t)(h >> 32);
	for (j = (size_t)h & p->mask; p->slots[j].idx != 0;
	    j = (j + 1) & p->mask) {
		const struct entry *e = &p->ent[p->slots[j].idx - 1];

		if (p->slots[j].tag == tag && e->port == port &&
		    e->hlen == hlen && memcmp(e->host, host, hlen) == 0)
			return 1;
	}
	return 0;
}
