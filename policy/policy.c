/* The policy model (docs/design.md "Policy"): strict parsing of profiles and
 * compiled policies, canonical bytes, digest, and the exact matcher.
 *
 * Both inputs end in the same builder: entries are normalised by
 * dest_parse_*, kept in one string arena, sorted by (host bytes, port),
 * deduplicated, then written out as canonical bytes and indexed in an
 * open-addressing hash set keyed with a per-policy random SipHash key, so
 * a lookup costs the same for 1 entry or 1,000,000 and nobody who writes
 * host names can aim collisions at it. Input that is canonical already
 * (what the plane signs and pushes) skips all of that but the index: its
 * bytes are the canonical bytes, and its entries point into them. */
#include <endian.h>
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>
#include <openssl/evp.h>
#include <openssl/rand.h>

#include "policy/dest.h"
#include "policy/policy.h"
#include "util/bigbuf.h"
#include "util/num.h"
#include "util/errbuf.h"
#include "util/file.h"
#include "util/jsonstrict.h"
#include "util/thread.h"


/* 8 bytes: a million of them stay small and cache-friendly. */
struct entry {
	uint32_t	 off;		/* the host: hlen bytes at names + off */
	uint16_t	 hlen;
	uint16_t	 port;
};

/* What a builder makes: the whole policy, or only its canonical bytes for
 * the plane's compile and sign, which write them out and never match:
 * the digest and the matcher (a hash set as large as the policy) would be
 * thrown away. A canonical-only policy never leaves this file. */
enum build {
	BUILD_ALL,
	BUILD_CANONICAL
};

/* A JSON string's bytes, wherever they live; s is NULL for a value that
 * is not a string. */
struct span {
	const char	*s;
	size_t		 len;
};

struct slot {
	uint32_t	 tag;		/* high half of the hash */
	uint32_t	 idx;		/* entry index + 1; 0 is an empty slot */
};

struct policy {
	enum build	 build;
	enum policy_mode mode;
	long long	 epoch;
	const char	*grade;		/* static string or NULL */

	char		*arena;
	size_t		 arena_len;
	size_t		 arena_cap;
	const char	*names;		/* the arena or canon, once final */
	struct entry	*ent;
	size_t		 n;
	size_t		 cap;

	struct slot	*slots;
	size_t		 mask;
	uint64_t	 k0, k1;

	char		*canon;
	size_t		 canon_len;
	char		*canon_mem;	/* the block canon is in: freed with p */
	char		 digest[POLICY_DIGEST_LEN + 1];
};

/* What a profile may require. "unsupported" is a grade (a provider with
 * no selector at all) but never a requirement: requiring it would admit
 * anything, which is what leaving the key out already means for none and
 * unrestricted, and is refused for allowlist. */
static const char *const grades[] = {
	"advisory_filter", "security_boundary", NULL
};

static struct span
json_span(const json_t *v)
{
	struct span sp = { json_string_value(v), json_string_length(v) };

	return sp;
}

static int
span_is(struct span sp, const char *lit)
{
	return sp.s != NULL && strlen(lit) == sp.len && memcmp(lit, sp.s, sp.len) == 0;
}

static int
one_of(struct span v, const char *const *names)
{
	int i;

	for (i = 0; names[i] != NULL; i++)
		if (span_is(v, names[i]))
			return i;
	return -1;
}

static int
parse_mode(struct span v, enum policy_mode *m)
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

/* Room for cap entries; the arena for their names comes with the first. */
static struct policy *
policy_new(enum policy_mode mode, long long epoch, size_t cap, enum build b)
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
static int
add_entry(struct policy *p, const struct dest *d)
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
	p->ent[p->n].hlen = (uint16_t)hlen;
	p->ent[p->n].port = d->port;
	p->arena_len += hlen + 1;
	p->n++;
	return 0;
}

/* By host bytes (unsigned, a prefix first, as strcmp orders them), then
 * port. */
static int
entry_order(const char *names, const struct entry *x, const struct entry *y)
{
	int c = memcmp(names + x->off, names + y->off,
	    x->hlen < y->hlen ? x->hlen : y->hlen);

	if (c != 0)
		return c;
	if (x->hlen != y->hlen)
		return x->hlen < y->hlen ? -1 : 1;
	return (x->port > y->port) - (x->port < y->port);
}

static int
entry_cmp(const void *a, const void *b, void *names)
{
	return entry_order(names, a, b);
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
			const struct entry *e = &p->ent[i + k];

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
	size_t cap = 160, i;
	char *o;

	for (i = 0; i < p->n; i++)
		cap += p->ent[i].hlen + 32;
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
		*o++ = '}';
	}
	o = PUT(o, "],\"epoch\":");
	o = put_num(o, (unsigned long long)p->epoch);
	o = PUT(o, ",\"mode\":\"");
	o = put_str(o, mode, strlen(mode));
	o = PUT(o, "\",\"schema\":\"" POLICY_SCHEMA "\"}");
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

/* The digest of the canonical bytes, and the matcher. After this the
 * policy is immutable. */
static int
seal(struct policy *p, char *err, size_t errlen)
{
	static const char hex[] = "0123456789abcdef";
	struct digest_job j = { p->canon, p->canon_len, { 0 }, 0 };
	pthread_t t;
	int threaded = 0, indexed;
	size_t i;

	if (p->build == BUILD_CANONICAL)
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
	memcpy(p->digest, "sha256:", 7);
	for (i = 0; i < sizeof(j.md); i++) {
		p->digest[7 + 2 * i] = hex[j.md[i] >> 4];
		p->digest[7 + 2 * i + 1] = hex[j.md[i] & 0xf];
	}
	p->digest[POLICY_DIGEST_LEN] = '\0';
	if (indexed == -1) {
		errbuf_set(err, errlen, "cannot build the matcher");
		return -1;
	}
	return 0;
}

/* Sorts, deduplicates, writes the canonical bytes, then seals. */
static int
finish(struct policy *p, char *err, size_t errlen)
{
	size_t i, w;
	int c, unsorted = 0, dups = 0;

	p->names = p->arena;
	/* Input in order already (a compiled policy, most profiles) needs
	 * no sort, and without equal neighbours no dedup either. */
	for (i = 1; i < p->n && !unsorted; i++) {
		c = entry_order(p->names, &p->ent[i - 1], &p->ent[i]);
		unsorted = c > 0;
		dups |= c == 0;
	}
	if (unsorted)
		qsort_r(p->ent, p->n, sizeof(*p->ent), entry_cmp, p->arena);
	if (unsorted || dups) {
		for (i = 0, w = 0; i < p->n; i++) {
			if (w > 0 && entry_order(p->names, &p->ent[w - 1],
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
	return seal(p, err, errlen);
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

/* {"host":"…","port":N} at *s, into the next entry, which points into
 * the canonical bytes being read. */
static int
canonical_entry(struct policy *p, const char **s, const char *end)
{
	struct entry *e = &p->ent[p->n];
	const char *h;
	long long port;

	if (p->n >= p->cap || lit(s, end, "{\"host\":\"") == -1)
		return -1;
	for (h = *s; *s < end && **s != '"'; (*s)++)
		;
	if (*s == end || !dest_host_is_normal(h, (size_t)(*s - h)))
		return -1;
	e->off = (uint32_t)(h - p->names);
	e->hlen = (uint16_t)(*s - h);
	(*s)++;
	if (lit(s, end, ",\"port\":") == -1 ||
	    fast_num(s, end, 1, 65535, &port) == -1 || lit(s, end, "}") == -1)
		return -1;
	e->port = (uint16_t)port;
	/* Each entry above the one before: sorted, no duplicates. */
	if (p->n > 0 && entry_order(p->names, &p->ent[p->n - 1], e) >= 0)
		return -1;
	p->n++;
	return 0;
}

/* Reads the len bytes at s, inside mem (a malloc'd block with a byte to
 * spare after them), when they are exactly canonical bytes (a trailing
 * newline allowed): the policy then takes mem, and those bytes are its
 * canonical bytes. NULL otherwise, mem left unchanged and the caller's. */
static struct policy *
parse_canonical(char *mem, char *bytes, size_t len, enum build b)
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
	    s != end || (p->n > 0 && mode != POLICY_ALLOWLIST))
		goto fallback;
	p->mode = mode;
	p->epoch = epoch;
	p->canon = bytes;
	p->canon_len = len;
	if (seal(p, NULL, 0) == -1)
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
parse_json(const char *buf, size_t len, enum build b, char *err, size_t errlen)
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
	if (one_of(json_span(json_object_get(root, "schema")), schema) != 0) {
		errbuf_set(err, errlen, "schema must be \"%s\"", POLICY_SCHEMA);
		goto bad;
	}
	if (parse_mode(json_span(json_object_get(root, "mode")), &mode) == -1) {
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
	if ((p = policy_new(mode, epoch, n, b)) == NULL) {
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

/* The len bytes at mem + off, mem malloc'd with a byte to spare after
 * them: canonical bytes are read in place and the policy takes mem
 * (*taken 1); any other spelling goes the strict way, and mem stays the
 * caller's. */
static struct policy *
parse_bytes(char *mem, size_t off, size_t len, enum build b, int *taken,
    char *err, size_t errlen)
{
	struct policy *p;

	*taken = 0;
	/* mem NULL is refused by load_json: NULL + 0 is undefined in C. */
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
		return parse_json(buf, len, BUILD_ALL, err, errlen);
	memcpy(copy, buf, len);
	p = parse_bytes(copy, 0, len, BUILD_ALL, &taken, err, errlen);
	if (!taken)
		free(copy);
	return p;
}

struct policy *
policy_parse_take(char *buf, size_t off, size_t len, int *taken, char *err,
    size_t errlen)
{
	return parse_bytes(buf, off, len, BUILD_ALL, taken, err, errlen);
}

/* What a profile says, whichever parser read it. */
struct profile {
	int		 has_mode, has_hosts, has_cert;
	int		 hosts_array;	/* allowed_hosts is an array */
	struct span	 mode, cert;
	struct span	*hosts;		/* NULL beyond POLICY_MAX_ENTRIES */
	size_t		 nhosts;
};

/* The checks and the build, the same for both parsers, so that they
 * accept the same profiles and name the same problem first. */
static struct policy *
profile_compile(const struct profile *pf, long long epoch, enum build b,
    char *err, size_t errlen)
{
	char why[128], shown[ERRBUF_SHOW_BUF];
	struct policy *p = NULL;
	enum policy_mode mode;
	struct dest d;
	size_t i, n = pf->nhosts;
	int g = -1;

	if (!pf->has_mode) {
		errbuf_set(err, errlen, "missing key \"network_policy\"");
		return NULL;
	}
	if (parse_mode(pf->mode, &mode) == -1) {
		errbuf_set(err, errlen, "network_policy must be one of none, "
		    "allowlist, unrestricted");
		return NULL;
	}
	if (!pf->has_hosts && mode == POLICY_ALLOWLIST) {
		errbuf_set(err, errlen, "missing key \"allowed_hosts\" "
		    "(required with network_policy \"allowlist\")");
		return NULL;
	}
	if (pf->has_hosts && !pf->hosts_array) {
		errbuf_set(err, errlen, "allowed_hosts must be an array");
		return NULL;
	}
	if (n > 0 && mode != POLICY_ALLOWLIST) {
		errbuf_set(err, errlen, "allowed_hosts must be absent or empty "
		    "with network_policy \"%s\"", policy_mode_name(mode));
		return NULL;
	}
	if (n > POLICY_MAX_ENTRIES) {
		errbuf_set(err, errlen, "allowed_hosts has more than %u entries",
		    POLICY_MAX_ENTRIES);
		return NULL;
	}
	if (pf->has_cert) {
		if (mode != POLICY_ALLOWLIST) {
			errbuf_set(err, errlen, "required_egress_certification is "
			    "only allowed with network_policy \"allowlist\"");
			return NULL;
		}
		if ((g = one_of(pf->cert, grades)) < 0) {
			errbuf_set(err, errlen, "required_egress_certification must "
			    "be one of advisory_filter, security_boundary");
			return NULL;
		}
	}
	if ((p = policy_new(mode, epoch, n, b)) == NULL) {
		errbuf_set(err, errlen, "out of memory");
		return NULL;
	}
	p->grade = g >= 0 ? grades[g] : NULL;
	for (i = 0; i < n; i++) {
		const struct span *h = &pf->hosts[i];

		if (h->s == NULL) {
			errbuf_set(err, errlen, "allowed_hosts[%zu]: must be a "
			    "\"host:port\" string", i);
			goto bad;
		}
		if (dest_parse_authority(h->s, h->len, &d, why, sizeof(why)) == -1) {
			errbuf_set(err, errlen, "allowed_hosts[%zu] \"%s\": %s", i,
			    errbuf_show(h->s, h->len, shown), why);
			goto bad;
		}
		if (add_entry(p, &d) == -1) {
			errbuf_set(err, errlen, "out of memory");
			goto bad;
		}
	}
	if (finish(p, err, errlen) == 0)
		return p;
bad:
	policy_free(p);
	return NULL;
}

/* ---- the profile fast path ----
 * A profile as people and tools write one: a single object of the three
 * known keys, each at most once, whose values are strings (an array of
 * strings for allowed_hosts) without escapes, with any JSON whitespace
 * around. Read by hand, because building a jansson tree of 100,000
 * strings is most of the cost of compiling a large profile. Anything
 * else, and any profile profile_compile refuses from here, takes the
 * jansson path, which is as strict and names the problem; both end in
 * profile_compile. */

static const char *
skip_ws(const char *s, const char *end)
{
	while (s < end && (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r'))
		s++;
	return s;
}

/* A string at *s (after whitespace) into out, and past it. Its bytes are
 * not checked here: what profile_compile accepts is printable ASCII, and
 * whatever it refuses the jansson path then names. */
static int
scan_str(const char **s, const char *end, struct span *out)
{
	const char *b, *q;

	*s = skip_ws(*s, end);
	if (*s == end || **s != '"')
		return -1;
	b = *s + 1;
	if ((q = memchr(b, '"', (size_t)(end - b))) == NULL ||
	    memchr(b, '\\', (size_t)(q - b)) != NULL)
		return -1;
	out->s = b;
	out->len = (size_t)(q - b);
	*s = q + 1;
	return 0;
}

/* The next non-whitespace byte is c: step past it. */
static int
scan_byte(const char **s, const char *end, char c)
{
	*s = skip_ws(*s, end);
	if (*s == end || **s != c)
		return -1;
	(*s)++;
	return 0;
}

static int
scan_hosts(const char **s, const char *end, struct profile *pf)
{
	size_t cap = 0;

	if (scan_byte(s, end, '[') == -1)
		return -1;
	if (scan_byte(s, end, ']') == 0)
		return 0;
	do {
		if (pf->nhosts == cap) {
			struct span *nh;

			if (cap == POLICY_MAX_ENTRIES)
				return -1;
			cap = cap == 0 ? 1024 : cap * 2;
			if (cap > POLICY_MAX_ENTRIES)
				cap = POLICY_MAX_ENTRIES;
			if ((nh = realloc(pf->hosts, cap * sizeof(*nh))) == NULL)
				return -1;
			pf->hosts = nh;
		}
		if (scan_str(s, end, &pf->hosts[pf->nhosts]) == -1)
			return -1;
		pf->nhosts++;
	} while (scan_byte(s, end, ',') == 0);
	return scan_byte(s, end, ']');
}

/* One "key": value of the profile, a key not seen before. */
static int
scan_member(const char **s, const char *end, struct profile *pf)
{
	struct span key;

	if (scan_str(s, end, &key) == -1 || scan_byte(s, end, ':') == -1)
		return -1;
	if (span_is(key, "network_policy") && !pf->has_mode) {
		pf->has_mode = 1;
		return scan_str(s, end, &pf->mode);
	}
	if (span_is(key, "required_egress_certification") && !pf->has_cert) {
		pf->has_cert = 1;
		return scan_str(s, end, &pf->cert);
	}
	if (span_is(key, "allowed_hosts") && !pf->has_hosts) {
		pf->has_hosts = pf->hosts_array = 1;
		return scan_hosts(s, end, pf);
	}
	return -1;
}

/* 0 with pf filled (its strings point into buf, pf->hosts is malloc'd),
 * or -1 with nothing to free: take the jansson path. */
static int
profile_scan(const char *buf, size_t len, struct profile *pf)
{
	const char *s = buf, *end = buf + len;

	memset(pf, 0, sizeof(*pf));
	if (scan_byte(&s, end, '{') == -1)
		return -1;
	if (scan_byte(&s, end, '}') == -1) {
		do {
			if (scan_member(&s, end, pf) == -1)
				goto bad;
		} while (scan_byte(&s, end, ',') == 0);
		if (scan_byte(&s, end, '}') == -1)
			goto bad;
	}
	if (skip_ws(s, end) == end)
		return 0;
bad:
	free(pf->hosts);
	pf->hosts = NULL;
	return -1;
}

/* The same from jansson's tree; the strings point into it. */
static int
profile_from_json(json_t *root, struct profile *pf)
{
	json_t *mode = json_object_get(root, "network_policy");
	json_t *hosts = json_object_get(root, "allowed_hosts");
	json_t *cert = json_object_get(root, "required_egress_certification");
	size_t i;

	memset(pf, 0, sizeof(*pf));
	pf->has_mode = mode != NULL;
	pf->mode = json_span(mode);
	pf->has_cert = cert != NULL;
	pf->cert = json_span(cert);
	pf->has_hosts = hosts != NULL;
	pf->hosts_array = json_is_array(hosts);
	pf->nhosts = json_array_size(hosts);	/* 0 for NULL */
	if (pf->nhosts == 0 || pf->nhosts > POLICY_MAX_ENTRIES)
		return 0;
	if ((pf->hosts = calloc(pf->nhosts, sizeof(*pf->hosts))) == NULL)
		return -1;
	for (i = 0; i < pf->nhosts; i++)
		pf->hosts[i] = json_span(json_array_get(hosts, i));
	return 0;
}

static struct policy *
compile_profile(const char *buf, size_t len, long long epoch, enum build b,
    char *err, size_t errlen)
{
	static const char *const keys[] = {
		"network_policy", "allowed_hosts",
		"required_egress_certification", NULL
	};
	char shown[ERRBUF_SHOW_BUF];
	struct policy *p = NULL;
	struct profile pf;
	const char *extra;
	json_t *root;

	if (epoch < 0 || epoch > POLICY_EPOCH_MAX) {
		errbuf_set(err, errlen, "epoch must be 0-%lld", POLICY_EPOCH_MAX);
		return NULL;
	}
	/* buf NULL is refused by load_json: NULL + 0 is undefined in C. */
	if (buf != NULL && len <= POLICY_MAX_BYTES && profile_scan(buf, len, &pf) == 0) {
		p = profile_compile(&pf, epoch, b, err, errlen);
		free(pf.hosts);
		if (p != NULL)
			return p;
	}
	if ((root = load_json(buf, len, err, errlen)) == NULL)
		return NULL;
	if ((extra = jsonstrict_unknown_key(root, keys)) != NULL) {
		errbuf_set(err, errlen, "unknown key \"%s\"",
		    errbuf_show(extra, strlen(extra), shown));
	} else if (profile_from_json(root, &pf) == -1) {
		errbuf_set(err, errlen, "out of memory");
	} else {
		p = profile_compile(&pf, epoch, b, err, errlen);
		free(pf.hosts);
	}
	json_decref(root);
	return p;
}

struct policy *
policy_compile_profile(const char *buf, size_t len, long long epoch,
    char *err, size_t errlen)
{
	return compile_profile(buf, len, epoch, BUILD_ALL, err, errlen);
}

/* A compiled policy file, read after reserve free bytes; when it is
 * canonical already the policy keeps the buffer read, which then holds
 * its canonical bytes after those reserve bytes. */
static struct policy *
load_file(const char *path, size_t reserve, enum build b, char *err,
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

static struct policy *
compile_file(const char *path, long long epoch, enum build b, char *err,
    size_t errlen)
{
	struct policy *p;
	char why[512];
	size_t len;
	char *buf;

	if ((buf = file_read(path, POLICY_MAX_BYTES, 0, &len, err, errlen)) == NULL)
		return NULL;
	if ((p = compile_profile(buf, len, epoch, b, why, sizeof(why))) == NULL)
		errbuf_set(err, errlen, "%s: %s", path, why);
	free(buf);
	return p;
}

/* p's canonical bytes after reserve free bytes, in the block they are in
 * when it has that room before them (no copy), and p freed. */
static char *
hand_canonical(struct policy *p, size_t reserve, size_t *len, char *err,
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

struct policy *
policy_load_file(const char *path, char *err, size_t errlen)
{
	return load_file(path, 0, BUILD_ALL, err, errlen);
}

struct policy *
policy_compile_profile_file(const char *path, long long epoch, char *err,
    size_t errlen)
{
	return compile_file(path, epoch, BUILD_ALL, err, errlen);
}

char *
policy_file_canonical(const char *path, size_t reserve, size_t *len, char *err,
    size_t errlen)
{
	struct policy *p = load_file(path, reserve, BUILD_CANONICAL, err, errlen);

	return p != NULL ? hand_canonical(p, reserve, len, err, errlen) : NULL;
}

char *
policy_profile_canonical(const char *path, long long epoch, size_t *len,
    char *err, size_t errlen)
{
	struct policy *p = compile_file(path, epoch, BUILD_CANONICAL, err, errlen);

	return p != NULL ? hand_canonical(p, 0, len, err, errlen) : NULL;
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
		    e->hlen == hlen && memcmp(p->names + e->off, host, hlen) == 0)
			return 1;
	}
	return 0;
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
		const struct entry *e = &p->ent[mid];
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
