/* The policy model (docs/design.md "Policy"): the builder every input
 * ends in, canonical bytes, digest, and the exact matcher. Parsing lives
 * in policy/parse.c (compiled policies) and policy/profile.c (profiles).
 *
 * Entries are normalised by dest_parse_*, kept in one string arena,
 * sorted by (host bytes, port), deduplicated, then written out as
 * canonical bytes and indexed in an open-addressing hash set keyed with a
 * per-policy random SipHash key, so a lookup costs the same for 1 entry or
 * 1,000,000 and nobody who writes host names can aim collisions at it.
 * Input that is canonical already (what the plane signs and pushes) skips
 * all of that but the index: its bytes are the canonical bytes, and its
 * entries point into them. */
#include <endian.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>
#include <openssl/rand.h>

#include "policy/dest.h"
#include "policy/policy.h"
#include "policy/policyint.h"
#include "util/bigbuf.h"
#include "util/errbuf.h"
#include "util/thread.h"

/* Room for cap entries; the arena for their names comes with the first. */
struct policy *
policy_new(enum policy_mode mode, long long epoch, size_t cap, enum policy_build b)
{
	struct policy *p;

	if ((p = calloc(1, sizeof(*p))) == NULL)
		return NULL;
	p->build = b;
	p->mode = mode;
	p->epoch = epoch;
	if (cap > 0) {
		if ((p->ent = bigbuf_malloc(cap * sizeof(*p->ent))) == NULL) {
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
	free(p->canon_mem);
	free(p);
}

/* Appends a normalised destination; cap was sized from the JSON array. */
int
policy_add_entry(struct policy *p, const struct dest *d, unsigned via)
{
	size_t hlen = strlen(d->host);

	if (p->n >= p->cap)
		return -1;
	if (p->arena_cap - p->arena_len < hlen + 1) {
		/* A first guess of 24 bytes a name, doubled from there:
		 * a few allocations for the lot. */
		size_t ncap = (p->arena_cap > 0 ? p->arena_cap * 2 : p->cap * 24) +
		    hlen + 1;
		char *na = bigbuf_realloc(p->arena, ncap);

		if (na == NULL)
			return -1;
		p->arena = na;
		p->arena_cap = ncap;
	}
	memcpy(p->arena + p->arena_len, d->host, hlen + 1);
	p->ent[p->n].off = (uint32_t)p->arena_len;
	p->ent[p->n].hlen = (uint8_t)hlen;
	p->ent[p->n].via = (uint8_t)via;
	p->ent[p->n].port = d->port;
	p->arena_len += hlen + 1;
	p->n++;
	return 0;
}

/* By host bytes (unsigned, a prefix first, as strcmp orders them), then
 * port. */
static int
entry_order2(const char *nx, const struct policy_entry *x, const char *ny,
    const struct policy_entry *y)
{
	int c = memcmp(nx + x->off, ny + y->off,
	    x->hlen < y->hlen ? x->hlen : y->hlen);

	if (c != 0)
		return c;
	if (x->hlen != y->hlen)
		return x->hlen < y->hlen ? -1 : 1;
	return (x->port > y->port) - (x->port < y->port);
}

int
policy_entry_order(const char *names, const struct policy_entry *x, const struct policy_entry *y)
{
	return entry_order2(names, x, names, y);
}

int
policy_entry_compare(const struct policy *a, size_t i, const struct policy *b,
    size_t j)
{
	return entry_order2(a->names, &a->ent[i], b->names, &b->ent[j]);
}

/* The order, then the provenance: of equal entries the lowest code
 * sorts first and is the one kept, so which provenance an entry granted
 * twice shows does not depend on qsort ("profile" before any flag). */
static int
entry_cmp(const void *a, const void *b, void *names)
{
	const struct policy_entry *x = a, *y = b;
	int c = policy_entry_order(names, x, y);

	return c != 0 ? c : (x->via > y->via) - (x->via < y->via);
}

/* By code: 0 the profile's own allowed_hosts, 1 + i ecosystem i of
 * policy/catalog.c's closed list. */
static const char *const vias[CATALOG_NECOSYSTEMS + 2] = {
	"profile", "package_managers:apt", "package_managers:cargo",
	"package_managers:go", "package_managers:maven",
	"package_managers:npm", "package_managers:nuget",
	"package_managers:pypi", "package_managers:rubygems", NULL
};

const char *
policy_via_name(unsigned via)
{
	return via <= CATALOG_NECOSYSTEMS ? vias[via] : "invalid";
}

int
policy_via_parse(struct policy_span v)
{
	return policy_one_of(v, vias);
}

void
policy_set_catalog(struct policy *p, const char *version, size_t vlen,
    const char *digest)
{
	memcpy(p->cat_version, version, vlen);
	p->cat_version[vlen] = '\0';
	memcpy(p->cat_digest, digest, POLICY_DIGEST_LEN);
	p->cat_digest[POLICY_DIGEST_LEN] = '\0';
}

int
policy_tenant_id_ok(const char *s, size_t len)
{
	size_t i;

	if (s == NULL || len == 0 || len > POLICY_TENANT_MAX)
		return 0;
	/* By byte value, not <ctype.h>: the grammar must not follow a
	 * locale. A leading '-' would read as an option on a command line. */
	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];

		if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
		    (c == '-' && i > 0)))
			return 0;
	}
	return 1;
}

int
policy_set_tenant(struct policy *p, struct policy_span v, char *err,
    size_t errlen)
{
	char shown[ERRBUF_SHOW_BUF];

	if (v.s == NULL)
		return errbuf_fail(err, errlen, "tenant must be a string: a "
		    "tenant id, 1-%d characters of [a-z0-9-], the first "
		    "[a-z0-9]", POLICY_TENANT_MAX);
	if (!policy_tenant_id_ok(v.s, v.len))
		return errbuf_fail(err, errlen, "tenant \"%s\" is not a tenant "
		    "id: 1-%d characters of [a-z0-9-], the first [a-z0-9]",
		    errbuf_show(v.s, v.len, shown), POLICY_TENANT_MAX);
	if (p != NULL) {
		memcpy(p->tenant, v.s, v.len);
		p->tenant[v.len] = '\0';
	}
	return 0;
}

int
policy_check_vias(const struct policy *p, char *err, size_t errlen)
{
	size_t i;

	if (p->cat_version[0] != '\0')
		return 0;
	for (i = 0; i < p->n; i++) {
		if (p->ent[i].via == POLICY_VIA_PROFILE)
			continue;
		errbuf_set(err, errlen, "allow: an entry via \"%s\" in a "
		    "policy that records no catalog",
		    policy_via_name(p->ent[i].via));
		return -1;
	}
	return 0;
}

#define ROTL(x, b)	(uint64_t)(((x) << (b)) | ((x) >> (64 - (b))))
#define SIPROUND do {							\
	v0 += v1; v1 = ROTL(v1, 13); v1 ^= v0; v0 = ROTL(v0, 32);	\
	v2 += v3; v3 = ROTL(v3, 16); v3 ^= v2;				\
	v0 += v3; v3 = ROTL(v3, 21); v3 ^= v0;				\
	v2 += v1; v1 = ROTL(v1, 17); v1 ^= v2; v2 = ROTL(v2, 32);	\
} while (0)

/* SipHash-1-3: one compression round a word and three to finish, the
 * variant Rust's and Python's hash tables use against chosen collisions;
 * half the rounds of SipHash-2-4, for 100,000 names a push. The key is
 * random per policy and never leaves the process. */
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
		memcpy(&m, in + i, sizeof(m));	/* one load, not eight */
		m = le64toh(m);
		v3 ^= m;
		SIPROUND;
		v0 ^= m;
	}
	for (j = 0; i + j < len; j++)
		b |= (uint64_t)in[i + j] << (8 * j);
	v3 ^= b;
	SIPROUND;
	v0 ^= b;
	v2 ^= 0xff;
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

#define INDEX_BATCH	16

static void
index_insert(struct policy *p, size_t i, uint64_t h)
{
	size_t j;

	for (j = (size_t)h & p->mask; p->slots[j].idx != 0; j = (j + 1) & p->mask)
		;
	p->slots[j].tag = (uint32_t)(h >> 32);
	p->slots[j].idx = (uint32_t)(i + 1);
}

static int
build_index(struct policy *p)
{
	unsigned char key[16];
	uint64_t h[INDEX_BATCH];
	size_t size = 2, i, k, m;

	while (size < 2 * p->n)
		size <<= 1;
	if (RAND_bytes(key, sizeof(key)) != 1)
		return -1;
	p->k0 = p->k1 = 0;
	for (i = 0; i < 8; i++) {
		p->k0 = p->k0 << 8 | key[i];
		p->k1 = p->k1 << 8 | key[8 + i];
	}
	if ((p->slots = bigbuf_calloc(size, sizeof(*p->slots))) == NULL)
		return -1;
	p->mask = size - 1;
	/* A batch of hashes first, asking for the slots they land on
	 * meanwhile: inserted one by one, a large table waits out a cache
	 * miss per entry. */
	for (i = 0; i < p->n; i += m) {
		m = p->n - i < INDEX_BATCH ? p->n - i : INDEX_BATCH;
		for (k = 0; k < m; k++) {
			const struct policy_entry *e = &p->ent[i + k];

			h[k] = hash_dest(p, p->names + e->off, e->hlen, e->port);
			__builtin_prefetch(&p->slots[(size_t)h[k] & p->mask], 1);
		}
		for (k = 0; k < m; k++)
			index_insert(p, i + k, h[k]);
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
	const char *mode = policy_mode_name(p->mode);
	/* All but the entries: ~270 bytes with a catalog, 44 more with a
	 * tenant. */
	size_t cap = 384, i;
	char *o;

	for (i = 0; i < p->n; i++)
		cap += p->ent[i].hlen + 64;
	if ((p->canon = p->canon_mem = bigbuf_malloc(cap)) == NULL)
		return -1;
	o = PUT(p->canon, "{\"allow\":[");
	for (i = 0; i < p->n; i++) {
		if (i > 0)
			*o++ = ',';
		o = PUT(o, "{\"host\":\"");
		o = put_str(o, p->names + p->ent[i].off, p->ent[i].hlen);
		o = PUT(o, "\",\"port\":");
		o = put_num(o, p->ent[i].port);
		/* The profile's own entries carry no "via": the bytes of
		 * every policy compiled before provenance stay the same. */
		if (p->ent[i].via != POLICY_VIA_PROFILE) {
			const char *via = policy_via_name(p->ent[i].via);

			o = PUT(o, ",\"via\":\"");
			o = put_str(o, via, strlen(via));
			*o++ = '"';
		}
		*o++ = '}';
	}
	*o++ = ']';
	if (p->cat_version[0] != '\0') {
		o = PUT(o, ",\"catalog\":{\"digest\":\"");
		o = put_str(o, p->cat_digest, POLICY_DIGEST_LEN);
		o = PUT(o, "\",\"version\":\"");
		o = put_str(o, p->cat_version, strlen(p->cat_version));
		o = PUT(o, "\"}");
	}
	o = PUT(o, ",\"epoch\":");
	o = put_num(o, (unsigned long long)p->epoch);
	o = PUT(o, ",\"mode\":\"");
	o = put_str(o, mode, strlen(mode));
	o = PUT(o, "\",\"schema\":\"" POLICY_SCHEMA "\"");
	/* After "schema", as keys sort; [a-z0-9-] needs no escaping. Absent
	 * when none, so untenanted policies keep their bytes and digest. */
	if (p->tenant[0] != '\0') {
		o = PUT(o, ",\"tenant\":\"");
		o = put_str(o, p->tenant, strlen(p->tenant));
		*o++ = '"';
	}
	*o++ = '}';
	*o = '\0';
	p->canon_len = (size_t)(o - p->canon);
	return 0;
}

/* SHA-256 of a block, on whichever thread runs it. */
struct digest_job {
	const char	*bytes;
	size_t		 len;
	unsigned char	 md[32];
	int		 ok;
};

static void *
digest_run(void *arg)
{
	struct digest_job *j = arg;
	unsigned int n = 0;

	j->ok = EVP_Digest(j->bytes, j->len, j->md, &n, EVP_sha256(), NULL) == 1 &&
	    n == sizeof(j->md);
	return NULL;
}

/* From this many canonical bytes on, the digest is hashed on a second
 * thread while this one builds the matcher: for 100,000 entries that is
 * ~3 ms of SHA-256 beside ~4 ms of indexing, against ~50 µs to start a
 * thread. Without a thread, both run here in turn. */
#define SEAL_THREAD_MIN	((size_t)1 << 20)

/* "sha256:" and the hex of md into out (POLICY_DIGEST_LEN + 1 bytes). */
static void
digest_hex(const unsigned char md[32], char *out)
{
	static const char hex[] = "0123456789abcdef";
	size_t i;

	memcpy(out, "sha256:", 7);
	for (i = 0; i < 32; i++) {
		out[7 + 2 * i] = hex[md[i] >> 4];
		out[7 + 2 * i + 1] = hex[md[i] & 0xf];
	}
	out[POLICY_DIGEST_LEN] = '\0';
}

int
policy_digest_bytes(const void *canon, size_t len, char *out)
{
	struct digest_job j = { canon, len, { 0 }, 0 };

	(void)digest_run(&j);
	if (!j.ok)
		return -1;
	digest_hex(j.md, out);
	return 0;
}

/* The digest of the canonical bytes, and the matcher. After this the
 * policy is immutable. */
int
policy_seal(struct policy *p, char *err, size_t errlen)
{
	struct digest_job j = { p->canon, p->canon_len, { 0 }, 0 };
	pthread_t t;
	int threaded = 0, indexed;

	if (p->build == POLICY_BUILD_CANONICAL)
		return 0;
	if (p->canon_len >= SEAL_THREAD_MIN)
		threaded = thread_start(&t, digest_run, &j) == 0;
	indexed = build_index(p);
	if (threaded)
		(void)pthread_join(t, NULL);
	else
		(void)digest_run(&j);
	if (!j.ok) {
		errbuf_set(err, errlen, "cannot hash the canonical bytes");
		return -1;
	}
	digest_hex(j.md, p->digest);
	if (indexed == -1) {
		errbuf_set(err, errlen, "cannot build the matcher");
		return -1;
	}
	return 0;
}

/* Sorts, deduplicates, writes the canonical bytes, then seals. */
int
policy_finish(struct policy *p, char *err, size_t errlen)
{
	size_t i, w;
	int c, unsorted = 0, dups = 0;

	p->names = p->arena;
	/* Input in order already (a compiled policy, most profiles) needs
	 * no sort, and without equal neighbours no dedup either. */
	for (i = 1; i < p->n && !unsorted; i++) {
		c = entry_cmp(&p->ent[i - 1], &p->ent[i], p->arena);
		unsorted = c > 0;
		dups |= c == 0 || policy_entry_order(p->names, &p->ent[i - 1],
		    &p->ent[i]) == 0;
	}
	if (unsorted)
		qsort_r(p->ent, p->n, sizeof(*p->ent), entry_cmp, p->arena);
	if (unsorted || dups) {
		for (i = 0, w = 0; i < p->n; i++) {
			if (w > 0 && policy_entry_order(p->names, &p->ent[w - 1],
			    &p->ent[i]) == 0)
				continue;
			p->ent[w++] = p->ent[i];
		}
		p->n = w;
	}
	if (build_canonical(p) == -1) {
		errbuf_set(err, errlen, "cannot build canonical bytes");
		return -1;
	}
	return policy_seal(p, err, errlen);
}

/* p's canonical bytes after reserve free bytes, in the block they are in
 * when it has that room before them (no copy), and p freed. */
char *
policy_hand_canonical(struct policy *p, size_t reserve, size_t *len, char *err,
    size_t errlen)
{
	char *out;

	*len = p->canon_len;
	if ((size_t)(p->canon - p->canon_mem) == reserve) {
		out = p->canon_mem;
		p->canon_mem = NULL;
	} else if ((out = malloc(reserve + p->canon_len + 1)) != NULL) {
		memcpy(out + reserve, p->canon, p->canon_len + 1);
	} else {
		errbuf_set(err, errlen, "out of memory");
	}
	policy_free(p);
	return out;
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

/* The index of (host, port) among an allowlist's entries, or -1. */
static long
lookup(const struct policy *p, const char *host, uint16_t port)
{
	uint64_t h;
	uint32_t tag;
	size_t hlen, j;

	if (p->slots == NULL)
		return -1;
	hlen = strnlen(host, DEST_HOST_MAX + 1);
	if (hlen > DEST_HOST_MAX)
		return -1;
	h = hash_dest(p, host, hlen, port);
	tag = (uint32_t)(h >> 32);
	for (j = (size_t)h & p->mask; p->slots[j].idx != 0;
	    j = (j + 1) & p->mask) {
		const struct policy_entry *e = &p->ent[p->slots[j].idx - 1];

		if (p->slots[j].tag == tag && e->port == port &&
		    e->hlen == hlen && memcmp(p->names + e->off, host, hlen) == 0)
			return (long)p->slots[j].idx - 1;
	}
	return -1;
}

int
policy_admits(const struct policy *p, const char *host, uint16_t port)
{
	if (p == NULL || host == NULL)
		return 0;
	switch (p->mode) {
	case POLICY_UNRESTRICTED:
		return 1;
	case POLICY_ALLOWLIST:
		return lookup(p, host, port) >= 0;
	default:
		return 0;
	}
}

int
policy_admits_via(const struct policy *p, const char *host, uint16_t port)
{
	long i;

	if (p == NULL || host == NULL || p->mode != POLICY_ALLOWLIST ||
	    (i = lookup(p, host, port)) < 0)
		return -1;
	return p->ent[i].via;
}

void
policy_entry_get(const struct policy *p, size_t i, const char **host,
    size_t *hlen, uint16_t *port, unsigned *via)
{
	const struct policy_entry *e = &p->ent[i];

	*host = p->names + e->off;
	*hlen = e->hlen;
	*port = e->port;
	*via = e->via;
}

const char *
policy_tenant(const struct policy *p)
{
	return p == NULL || p->tenant[0] == '\0' ? NULL : p->tenant;
}

const char *
policy_catalog_version(const struct policy *p)
{
	return p == NULL || p->cat_version[0] == '\0' ? NULL : p->cat_version;
}

const char *
policy_catalog_digest(const struct policy *p)
{
	return p == NULL || p->cat_version[0] == '\0' ? NULL : p->cat_digest;
}

int
policy_admits_name(const struct policy *p, const char *host)
{
	size_t lo = 0, hi, hlen;

	if (p == NULL || host == NULL || p->mode != POLICY_ALLOWLIST)
		return p != NULL && host != NULL && p->mode == POLICY_UNRESTRICTED;
	if (p->ent == NULL || p->names == NULL)
		return 0;
	hlen = strnlen(host, DEST_HOST_MAX + 1);
	if (hlen > DEST_HOST_MAX)
		return 0;
	/* The entries are sorted by host bytes, then port, so one binary
	 * search on the host alone finds any of its ports: O(log n), no
	 * table as large as the policy. */
	hi = p->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct policy_entry *e = &p->ent[mid];
		int c = memcmp(p->names + e->off, host,
		    e->hlen < hlen ? e->hlen : hlen);

		if (c == 0 && e->hlen != hlen)
			c = e->hlen < hlen ? -1 : 1;
		if (c == 0)
			return 1;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return 0;
}
