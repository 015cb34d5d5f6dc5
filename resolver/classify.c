/* Address classification. The tables below are
 * docs/design.md "Address classification" row for row (plus
 * 0.0.0.0/32, the unspecified address inside 0.0.0.0/8); each row's range
 * text is the string reported in classify_result.range. Overlapping rows
 * (::/128 and ::1/128 inside ::/96, 255.255.255.255/32 inside 240.0.0.0/4)
 * are resolved by longest prefix, so the most specific row decides.
 *
 * How --allow-range meets the table (issue 14, finding 3): a range used to
 * be consulted before the table, so `--allow-range ::/0` opened
 * ::ffff:127.0.0.1 and ::ffff:<own address> (the kernel connects to the
 * IPv4 inside, which the range never named), :: and ::1. Now:
 *   - ROW_NEVER rows are never a destination, whatever the ranges say:
 *     unspecified, IPv4-mapped/-compatible/-translated (they embed an IPv4
 *     address; that address must be asked for as IPv4), multicast and
 *     limited broadcast (never a unicast TCP peer);
 *   - the guard's own addresses are never a destination, in any spelling
 *     that embeds them (see own_embedded);
 *   - a ROW_DENY row (loopback included) is opened only by an allow-range
 *     that lies inside that row: 127.0.0.0/8 or ::1/128 open loopback,
 *     0.0.0.0/0 and ::/0 open nothing the table denies;
 *   - 64:ff9b::/96 is judged by its embedded IPv4 address only (IPv6 ranges
 *     do not open it), and through it loopback and "this network" never
 *     open. */
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "resolver/classify.h"
#include "util/mutant.h"

#define CLASSIFY_MAX_RANGES	256	/* per --allow-range / --deny-range list */

/* "64:ff9b::/96 NAT64 -> " (ASCII: log lines stay plain), prefixed to the embedded IPv4
 * verdict so a log shows both the translation and what decided it. */
#define NAT64_VIA	"64:ff9b::/96 NAT64 -> "

#define GLOBAL_UNICAST	"global unicast"
#define OWN_ADDRESS	"own-address"
#define OUTSIDE_2000_3	"outside 2000::/3 global unicast"
#define OWN_UNKNOWN	"own addresses unknown"

/* ROW_DENY: opened only by an allow-range inside the row. ROW_NEVER: not
 * opened by any range. */
enum row_kind { ROW_DENY, ROW_NEVER, ROW_ALLOW, ROW_NAT64 };

struct v4_row {
	unsigned char	net[4];
	unsigned int	prefix;
	enum row_kind	kind;
	const char	*name;
	const char	*via_nat64;	/* name as reached through 64:ff9b::/96 */
};

struct v6_row {
	unsigned char	net[16];
	unsigned int	prefix;
	enum row_kind	kind;
	const char	*name;
};

#define V4(a, b, c, d, len, kind, text) \
	{ { a, b, c, d }, len, kind, text, NAT64_VIA text }

static const struct v4_row v4_table[] = {
	V4(0, 0, 0, 0, 8, ROW_DENY, "0.0.0.0/8 This network"),
	V4(0, 0, 0, 0, 32, ROW_NEVER, "0.0.0.0/32 Unspecified"),
	V4(10, 0, 0, 0, 8, ROW_DENY, "10.0.0.0/8 Private-Use"),
	V4(100, 64, 0, 0, 10, ROW_DENY,
	    "100.64.0.0/10 Shared Address Space (CGNAT)"),
	V4(127, 0, 0, 0, 8, ROW_DENY, "127.0.0.0/8 Loopback"),
	V4(169, 254, 0, 0, 16, ROW_DENY, "169.254.0.0/16 Link Local"),
	V4(172, 16, 0, 0, 12, ROW_DENY, "172.16.0.0/12 Private-Use"),
	V4(192, 0, 0, 0, 24, ROW_DENY,
	    "192.0.0.0/24 IETF Protocol Assignments"),
	V4(192, 0, 2, 0, 24, ROW_DENY,
	    "192.0.2.0/24 Documentation (TEST-NET-1)"),
	V4(192, 31, 196, 0, 24, ROW_ALLOW, "192.31.196.0/24 AS112-v4"),
	V4(192, 52, 193, 0, 24, ROW_ALLOW, "192.52.193.0/24 AMT"),
	V4(192, 88, 99, 0, 24, ROW_DENY,
	    "192.88.99.0/24 Deprecated 6to4 Relay Anycast"),
	V4(192, 168, 0, 0, 16, ROW_DENY, "192.168.0.0/16 Private-Use"),
	V4(192, 175, 48, 0, 24, ROW_ALLOW,
	    "192.175.48.0/24 Direct Delegation AS112 Service"),
	V4(198, 18, 0, 0, 15, ROW_DENY, "198.18.0.0/15 Benchmarking"),
	V4(198, 51, 100, 0, 24, ROW_DENY,
	    "198.51.100.0/24 Documentation (TEST-NET-2)"),
	V4(203, 0, 113, 0, 24, ROW_DENY,
	    "203.0.113.0/24 Documentation (TEST-NET-3)"),
	V4(224, 0, 0, 0, 4, ROW_NEVER, "224.0.0.0/4 Multicast"),
	V4(240, 0, 0, 0, 4, ROW_DENY, "240.0.0.0/4 Reserved"),
	V4(255, 255, 255, 255, 32, ROW_NEVER,
	    "255.255.255.255/32 Limited Broadcast"),
};

static const struct v4_row v4_global = {
	{ 0, 0, 0, 0 }, 0, ROW_ALLOW, GLOBAL_UNICAST, NAT64_VIA GLOBAL_UNICAST
};
static const struct v4_row v4_own = {
	{ 0, 0, 0, 0 }, 0, ROW_DENY, OWN_ADDRESS, NAT64_VIA OWN_ADDRESS
};

static const struct v6_row v6_table[] = {
	{ { 0 }, 128, ROW_NEVER, "::/128 Unspecified" },
	{ { [15] = 1 }, 128, ROW_DENY, "::1/128 Loopback" },
	{ { 0 }, 96, ROW_NEVER, "::/96 IPv4-compatible (deprecated)" },
	{ { [10] = 0xff, [11] = 0xff }, 96, ROW_NEVER,
	    "::ffff:0:0/96 IPv4-mapped" },
	{ { [8] = 0xff, [9] = 0xff }, 96, ROW_NEVER,
	    "::ffff:0:0:0/96 IPv4-translated" },
	{ { 0x00, 0x64, 0xff, 0x9b }, 96, ROW_NAT64, "64:ff9b::/96 NAT64" },
	{ { 0x00, 0x64, 0xff, 0x9b, 0x00, 0x01 }, 48, ROW_DENY,
	    "64:ff9b:1::/48 Local-use IPv4/IPv6 Translation" },
	{ { 0x01, 0x00 }, 64, ROW_DENY, "100::/64 Discard-Only" },
	{ { 0x01, 0x00, 0, 0, 0, 0, 0x00, 0x01 }, 64, ROW_DENY,
	    "100:0:0:1::/64 Dummy IPv6 Prefix" },
	{ { 0x20, 0x01 }, 23, ROW_DENY,
	    "2001::/23 IETF Protocol Assignments" },
	{ { 0x20, 0x01, 0x0d, 0xb8 }, 32, ROW_DENY,
	    "2001:db8::/32 Documentation" },
	{ { 0x20, 0x02 }, 16, ROW_DENY, "2002::/16 6to4" },
	{ { 0x26, 0x20, 0x00, 0x4f, 0x80, 0x00 }, 48, ROW_ALLOW,
	    "2620:4f:8000::/48 Direct Delegation AS112 Service" },
	{ { 0x3f, 0xff }, 20, ROW_DENY, "3fff::/20 Documentation" },
	{ { 0x5f, 0x00 }, 16, ROW_DENY,
	    "5f00::/16 Segment Routing (SRv6) SIDs" },
	{ { 0xfc }, 7, ROW_DENY, "fc00::/7 Unique-Local" },
	{ { 0xfe, 0x80 }, 10, ROW_DENY, "fe80::/10 Link-Local Unicast" },
	{ { 0xfe, 0xc0 }, 10, ROW_DENY, "fec0::/10 Site-Local (deprecated)" },
	{ { 0xff }, 8, ROW_NEVER, "ff00::/8 Multicast" },
};

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

/* "deny-range " + longest IPv6 CIDR text (45 + "/128") fits with room. */
#define RANGE_TEXT	72
#define VIA_TEXT	(sizeof(NAT64_VIA) + RANGE_TEXT)

struct classify_entry {
	struct cidr	cidr;
	char			name[RANGE_TEXT];
	char			via_nat64[VIA_TEXT];
};

/* Entries are allocated one by one so that a range text handed out in a
 * classify_result stays valid when later ranges are added. */
struct classify_list {
	struct classify_entry	**v;
	size_t			n;
	size_t			cap;
};

struct classify_cfg {
	struct classify_list	allow;
	struct classify_list	deny;
	/* Addresses (/32, /128) first, sorted for a binary search, then
	 * the local prefixes, scanned: a guard with thousands of links pays
	 * a logarithm per answer, not a pass over every one. */
	struct cidr		*own;
	size_t			nown;
	size_t			nexact;	/* own[0..nexact) are addresses */
	int			own_unknown;	/* see classify_cfg_own_unknown */
};

/* One verdict with both texts, so a NAT64 caller can report the composed
 * string without formatting anything at classification time. */
struct verdict {
	int		public;
	const char	*name;
	const char	*via_nat64;
};

struct classify_cfg *
classify_cfg_new(void)
{
	return calloc(1, sizeof(struct classify_cfg));
}

static void
list_free(struct classify_list *l)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
}

void
classify_cfg_free(struct classify_cfg *cfg)
{
	if (cfg == NULL)
		return;
	list_free(&cfg->allow);
	list_free(&cfg->deny);
	free(cfg->own);
	free(cfg);
}

static int
list_add(struct classify_list *l, const struct cidr *c,
    const char *label)
{
	struct classify_entry *e;
	char text[INET6_ADDRSTRLEN + 8];
	size_t i;
	int n;

	if (!cidr_valid(c))
		return -1;
	for (i = 0; i < l->n; i++)
		if (cidr_equal(&l->v[i]->cidr, c))
			return 0;
	if (l->n >= CLASSIFY_MAX_RANGES)
		return -1;
	if (cidr_format(c, text, sizeof(text)) == -1)
		return -1;
	if (l->n == l->cap) {
		size_t ncap = l->cap == 0 ? 8 : l->cap * 2;
		struct classify_entry **nv;

		if (ncap > CLASSIFY_MAX_RANGES)
			ncap = CLASSIFY_MAX_RANGES;
		nv = realloc(l->v, ncap * sizeof(*nv));
		if (nv == NULL)
			return -1;
		l->v = nv;
		l->cap = ncap;
	}
	e = calloc(1, sizeof(*e));
	if (e == NULL)
		return -1;
	e->cidr = *c;
	n = snprintf(e->name, sizeof(e->name), "%s %s", label, text);
	if (n < 0 || (size_t)n >= sizeof(e->name))
		goto cleanup;
	n = snprintf(e->via_nat64, sizeof(e->via_nat64), "%s%s", NAT64_VIA,
	    e->name);
	if (n < 0 || (size_t)n >= sizeof(e->via_nat64))
		goto cleanup;
	l->v[l->n++] = e;
	return 0;
cleanup:
	free(e);
	return -1;
}

int
classify_cfg_allow(struct classify_cfg *cfg, const struct cidr *c)
{
	if (cfg == NULL || c == NULL)
		return -1;
	return list_add(&cfg->allow, c, "allow-range");
}

int
classify_cfg_deny(struct classify_cfg *cfg, const struct cidr *c)
{
	if (cfg == NULL || c == NULL)
		return -1;
	return list_add(&cfg->deny, c, "deny-range");
}

static int
is_loopback(int family, const unsigned char *a)
{
	static const unsigned char v6_loop[16] = { [15] = 1 };

	if (family == AF_INET)
		return a[0] == 127;
	return memcmp(a, v6_loop, sizeof(v6_loop)) == 0;
}

static int
own_is_host(const struct cidr *c)
{
	return c->prefix == (c->family == AF_INET ? 32u : 128u);
}

/* Hosts before prefixes; each by family, then address (its family's
 * bytes only), then length: equal blocks end up side by side, and
 * own_in's search uses the same order. */
static int
own_order(const void *a, const void *b)
{
	const struct cidr *x = a, *y = b;
	int hx = own_is_host(x), hy = own_is_host(y), c;

	if (hx != hy)
		return hy - hx;
	if (x->family != y->family)
		return x->family < y->family ? -1 : 1;
	if ((c = memcmp(x->addr, y->addr, cidr_family_len(x->family))) != 0)
		return c;
	return x->prefix == y->prefix ? 0 : x->prefix < y->prefix ? -1 : 1;
}

int
classify_cfg_set_own(struct classify_cfg *cfg, const struct cidr *own,
    size_t n)
{
	struct cidr *nown = NULL;
	size_t i, j, keep = 0;

	if (cfg == NULL || (n > 0 && own == NULL))
		return -1;
	/* Validate and count first: the old set stays in force on error. A
	 * valid block whose network is loopback lies inside 127.0.0.0/8 or
	 * is ::1/128 (host bits are zero), so dropping it drops no other
	 * address. */
	for (i = 0; i < n; i++) {
		if (!cidr_valid(&own[i]))
			return -1;
		if (!is_loopback(own[i].family, own[i].addr))
			keep++;
	}
	if (keep > CLASSIFY_MAX_OWN)
		return -1;
	if (keep > 0) {
		nown = calloc(keep, sizeof(*nown));
		if (nown == NULL)
			return -1;
		keep = 0;
		for (i = 0; i < n; i++)
			if (!is_loopback(own[i].family, own[i].addr))
				nown[keep++] = own[i];
		qsort(nown, keep, sizeof(*nown), own_order);
		/* Once each: additions announced (classify_cfg_add_own) may
		 * repeat what the set holds. */
		for (i = 1, j = 1; i < keep; i++)
			if (own_order(&nown[j - 1], &nown[i]) != 0)
				nown[j++] = nown[i];
		keep = j;
	}
	free(cfg->own);
	cfg->own = nown;
	cfg->nown = keep;
	for (cfg->nexact = 0; cfg->nexact < keep &&
	    own_is_host(&nown[cfg->nexact]); cfg->nexact++)
		;
	cfg->own_unknown = 0;
	return 0;
}

int
classify_cfg_add_own(struct classify_cfg *cfg, const struct cidr *add,
    size_t n)
{
	struct cidr *all;
	int rc;

	if (cfg == NULL || cfg->own_unknown || (n > 0 && add == NULL) ||
	    n > CLASSIFY_MAX_OWN)
		return -1;
	if (n == 0)
		return 0;
	if ((all = calloc(cfg->nown + n, sizeof(*all))) == NULL)
		return -1;
	if (cfg->nown > 0)
		memcpy(all, cfg->own, cfg->nown * sizeof(*all));
	memcpy(all + cfg->nown, add, n * sizeof(*all));
	rc = classify_cfg_set_own(cfg, all, cfg->nown + n);
	free(all);
	return rc;
}

void
classify_cfg_own_unknown(struct classify_cfg *cfg)
{
	if (cfg != NULL)
		cfg->own_unknown = 1;
}

static void
verdict_set(struct verdict *v, int public, const char *name,
    const char *via_nat64)
{
	v->public = public;
	v->name = name;
	v->via_nat64 = via_nat64;
}

/* 1 when a (family's bytes) lies in one of the own blocks. */
static int
own_in(const struct classify_cfg *cfg, int family, const unsigned char *a)
{
	struct cidr key;
	size_t i;

	/* The addresses: found in the order they were sorted by. */
	memset(&key, 0, sizeof(key));
	key.family = family;
	key.prefix = (unsigned int)cidr_family_len(family) * 8;
	memcpy(key.addr, a, cidr_family_len(family));
	if (cfg->nexact > 0 && bsearch(&key, cfg->own, cfg->nexact,
	    sizeof(*cfg->own), own_order) != NULL)
		return 1;
	for (i = cfg->nexact; i < cfg->nown; i++)
		if (cfg->own[i].family == family &&
		    cidr_prefix_match(a, cfg->own[i].addr, cfg->own[i].prefix))
			return 1;
	return 0;
}

static int
own_v4(const struct classify_cfg *cfg, const unsigned char *a4)
{
	return own_in(cfg, AF_INET, a4);
}

/* 1 when a names one of the guard's own IPv4 addresses in an IPv6
 * spelling that embeds it: mapped, compatible, translated, local-use NAT64
 * 64:ff9b:1::/48 at every RFC 6052 position a /48../96 prefix can use,
 * 6to4, Teredo (server, and the client obfuscated) and an ISATAP interface
 * identifier under any prefix. (64:ff9b::/96 is judged as its embedded
 * IPv4, own check included.) A false match only refuses an address whose
 * embedded IPv4 happens to be ours. */
static int
own_embedded(const struct classify_cfg *cfg, const unsigned char *a)
{
	static const unsigned char wkp[4] = { 0x00, 0x64, 0xff, 0x9b };
	static const unsigned char zero10[10];
	unsigned char e[4];
	size_t i;

	if (memcmp(a, zero10, 10) == 0 &&
	    ((a[10] == 0 && a[11] == 0) || (a[10] == 0xff && a[11] == 0xff)))
		return own_v4(cfg, a + 12);	/* compatible, mapped */
	if (memcmp(a, zero10, 8) == 0 && a[8] == 0xff && a[9] == 0xff &&
	    a[10] == 0 && a[11] == 0)
		return own_v4(cfg, a + 12);	/* translated */
	if (memcmp(a, wkp, 4) == 0 && a[4] == 0 && a[5] == 1) {
		/* 64:ff9b:1::/48: the /48, /56, /64 and /96 layouts (bits
		 * 64-71 are the reserved "u" octet, skipped). */
		const unsigned char l48[4] = { a[6], a[7], a[9], a[10] };
		const unsigned char l56[4] = { a[7], a[9], a[10], a[11] };

		if (own_v4(cfg, l48) || own_v4(cfg, l56) ||
		    own_v4(cfg, a + 9) || own_v4(cfg, a + 12))
			return 1;
	}
	if (a[0] == 0x20 && a[1] == 0x02 && own_v4(cfg, a + 2))
		return 1;			/* 6to4 2002:V4ADDR::/48 */
	if (a[0] == 0x20 && a[1] == 0x01 && a[2] == 0 && a[3] == 0) {
		for (i = 0; i < 4; i++)
			e[i] = (unsigned char)~a[12 + i];
		if (own_v4(cfg, a + 4) || own_v4(cfg, e))
			return 1;		/* Teredo server, client */
	}
	if ((a[8] & 0xfd) == 0 && a[9] == 0 && a[10] == 0x5e &&
	    a[11] == 0xfe && own_v4(cfg, a + 12))
		return 1;			/* ISATAP ::0:5efe:V4, ::200:5efe:V4 */
	return 0;
}

static int
own_addr(const struct classify_cfg *cfg, int family, const unsigned char *a)
{
	if (family == AF_INET)
		return own_v4(cfg, a);
	return own_in(cfg, AF_INET6, a) || own_embedded(cfg, a);
}

static const struct classify_entry *
list_match(const struct classify_list *l, int family, const unsigned char *a)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		if (l->v[i]->cidr.family == family &&
		    cidr_prefix_match(a, l->v[i]->cidr.addr, l->v[i]->cidr.prefix))
			return l->v[i];
	return NULL;
}

/* The allow-range that opens a, or NULL. When a lies in a denied table
 * row (net/prefix), only a range that lies inside that row opens it: a
 * broader range never opens a special-purpose block by containing it. */
static const struct classify_entry *
allow_opening(const struct classify_cfg *cfg, int family,
    const unsigned char *a, const unsigned char *net, int in_row,
    unsigned int prefix)
{
	const struct classify_list *l = &cfg->allow;
	size_t i;

	for (i = 0; i < l->n; i++) {
		const struct cidr *c = &l->v[i]->cidr;

		if (c->family != family || !cidr_prefix_match(a, c->addr, c->prefix))
			continue;
		if (in_row && (c->prefix < prefix ||
		    !cidr_prefix_match(c->addr, net, prefix)))
			continue;
		return l->v[i];
	}
	return NULL;
}

/* The operator rules that run before the table: own address, then
 * --deny-range. Returns 1 and fills *v when one of them decides. */
static int
cfg_refuses(const struct classify_cfg *cfg, int family,
    const unsigned char *a, struct verdict *v)
{
	const struct classify_entry *e;

	if (cfg->own_unknown) {
		verdict_set(v, 0, OWN_UNKNOWN, NAT64_VIA OWN_UNKNOWN);
		return 1;
	}
	if (own_addr(cfg, family, a)) {
		verdict_set(v, 0, v4_own.name, v4_own.via_nat64);
		return 1;
	}
	if ((e = list_match(&cfg->deny, family, a)) != NULL) {
		verdict_set(v, 0, e->name, e->via_nat64);
		return 1;
	}
	return 0;
}

#ifdef EG_MUTANT_RANGE_FIRST
/* Test-only mutant (make conformance-mutants): the order before issue 14,
 * own address (same family only) → deny-range → allow-range → table. The
 * matrix must catch ::ffff:<own address> and ::ffff:127.0.0.1 under ::/0. */
static int
mutant_range_first(const struct classify_cfg *cfg, int family,
    const unsigned char *a, struct verdict *v)
{
	const struct classify_entry *e;
	size_t i;

	for (i = 0; i < cfg->nown; i++)
		if (cfg->own[i].family == family && memcmp(cfg->own[i].addr, a,
		    cidr_family_len(family)) == 0) {
			verdict_set(v, 0, v4_own.name, v4_own.via_nat64);
			return 1;
		}
	if ((e = list_match(&cfg->deny, family, a)) != NULL) {
		verdict_set(v, 0, e->name, e->via_nat64);
		return 1;
	}
	if ((e = list_match(&cfg->allow, family, a)) != NULL) {
		verdict_set(v, 1, e->name, e->via_nat64);
		return 1;
	}
	return 0;
}
#endif

/* embedded: a reached through 64:ff9b::/96. The gateway, not this host,
 * delivers it, so an allow-range for this host's loopback or "this
 * network" must not open the translated spelling. */
static void
classify_v4(const struct classify_cfg *cfg, const unsigned char *a,
    int embedded, struct verdict *v)
{
	const struct v4_row *best = NULL;
	const struct classify_entry *e;
	size_t i;

#ifdef EG_MUTANT_RANGE_FIRST
	if (cfg != NULL && mutant_range_first(cfg, AF_INET, a, v))
		return;
#endif
	if (cfg != NULL && cfg_refuses(cfg, AF_INET, a, v))
		return;
	for (i = 0; i < NELEM(v4_table); i++) {
		const struct v4_row *r = &v4_table[i];

		if (cidr_prefix_match(a, r->net, r->prefix) &&
		    (best == NULL || r->prefix > best->prefix))
			best = r;
	}
	if (best == NULL)
		best = &v4_global;
	if (best->kind == ROW_DENY && cfg != NULL &&
	    !(embedded && (a[0] == 127 || a[0] == 0)) &&
	    (e = allow_opening(cfg, AF_INET, a, best->net, 1,
	    best->prefix)) != NULL) {
		verdict_set(v, 1, e->name, e->via_nat64);
		return;
	}
	verdict_set(v, best->kind == ROW_ALLOW, best->name, best->via_nat64);
}

static void
classify_v6(const struct classify_cfg *cfg, const unsigned char *a,
    struct verdict *v)
{
	const struct v6_row *best = NULL;
	const struct classify_entry *e;
	struct verdict sub;
	size_t i;

#ifdef EG_MUTANT_RANGE_FIRST
	if (cfg != NULL && mutant_range_first(cfg, AF_INET6, a, v))
		return;
#endif
	if (cfg != NULL && cfg_refuses(cfg, AF_INET6, a, v))
		return;
	for (i = 0; i < NELEM(v6_table); i++) {
		const struct v6_row *r = &v6_table[i];

		if (cidr_prefix_match(a, r->net, r->prefix) &&
		    (best == NULL || r->prefix > best->prefix))
			best = r;
	}
	if (best != NULL) {
		switch (best->kind) {
		case ROW_NAT64:
			/* The gateway delivers to the embedded IPv4 address:
			 * that address, under the IPv4 rules, is the
			 * destination to judge; IPv6 ranges do not open it. */
			classify_v4(cfg, a + 12, 1, &sub);
			verdict_set(v, sub.public, sub.via_nat64, sub.via_nat64);
			return;
		case ROW_ALLOW:
			verdict_set(v, 1, best->name, best->name);
			return;
		case ROW_DENY:
			if (cfg != NULL && (e = allow_opening(cfg, AF_INET6, a,
			    best->net, 1, best->prefix)) != NULL) {
				verdict_set(v, 1, e->name, e->name);
				return;
			}
			break;
		case ROW_NEVER:
			break;
		}
		verdict_set(v, 0, best->name, best->name);
		return;
	}
	/* 2000::/3: the top three bits are 001. */
	if ((a[0] & 0xe0) == 0x20)
		verdict_set(v, 1, GLOBAL_UNICAST, GLOBAL_UNICAST);
	else if (cfg != NULL &&
	    (e = allow_opening(cfg, AF_INET6, a, NULL, 0, 0)) != NULL)
		verdict_set(v, 1, e->name, e->name);
	else
		verdict_set(v, 0, OUTSIDE_2000_3, OUTSIDE_2000_3);
}

/* Probes a, when it lies in [lo, hi]: the table alone holds it
 * non-public, and the allow list of only holds it public. */
static int
opens_at(const struct classify_cfg *only, int family, const unsigned char *a,
    const unsigned char *lo, const unsigned char *hi, size_t len)
{
	if (memcmp(a, lo, len) < 0 || memcmp(a, hi, len) > 0)
		return 0;
	return classify_addr(NULL, family, a, NULL) == 0 &&
	    classify_addr(only, family, a, NULL) == 1;
}

/* Probes a row's edges and the addresses just outside them. */
static int
opens_near(const struct classify_cfg *only, int family,
    const unsigned char *net, unsigned int prefix, const unsigned char *lo,
    const unsigned char *hi, size_t len)
{
	unsigned char first[16], last[16];

	cidr_ends(net, prefix, len, first, last);
	if (opens_at(only, family, first, lo, hi, len) ||
	    opens_at(only, family, last, lo, hi, len))
		return 1;
	if (cidr_step(first, len, 0) == 0 &&
	    opens_at(only, family, first, lo, hi, len))
		return 1;
	return cidr_step(last, len, 1) == 0 &&
	    opens_at(only, family, last, lo, hi, len);
}

int
classify_range_opens(const struct cidr *c)
{
	static const unsigned char global6[16] = { 0x20 };	/* 2000::/3 */
	struct classify_entry e;
	struct classify_entry *ev[1] = { &e };
	struct classify_cfg only;
	unsigned char lo[16], hi[16];
	size_t i, len;

	if (c == NULL || !cidr_valid(c))
		return 0;
	len = cidr_family_len(c->family);
	memset(&e, 0, sizeof(e));
	e.cidr = *c;
	memset(&only, 0, sizeof(only));
	only.allow.v = ev;
	only.allow.n = 1;
	cidr_ends(c->addr, c->prefix, len, lo, hi);
	/* What the two classifications say is constant between the edges of
	 * the range and of the table's rows: one probe per stretch. */
	if (opens_near(&only, c->family, c->addr, c->prefix, lo, hi, len))
		return 1;
	if (c->family == AF_INET) {
		for (i = 0; i < NELEM(v4_table); i++)
			if (opens_near(&only, AF_INET, v4_table[i].net,
			    v4_table[i].prefix, lo, hi, len))
				return 1;
		return 0;
	}
	for (i = 0; i < NELEM(v6_table); i++)
		if (opens_near(&only, AF_INET6, v6_table[i].net,
		    v6_table[i].prefix, lo, hi, len))
			return 1;
	return opens_near(&only, AF_INET6, global6, 3, lo, hi, len);
}

int
classify_addr(const struct classify_cfg *cfg, int family,
    const unsigned char *addr, struct classify_result *res)
{
	struct verdict v;

	if (addr == NULL)
		verdict_set(&v, 0, "no address", NULL);
	else if (family == AF_INET)
		classify_v4(cfg, addr, 0, &v);
	else if (family == AF_INET6)
		classify_v6(cfg, addr, &v);
	else
		verdict_set(&v, 0, "unknown address family", NULL);
	if (res != NULL) {
		res->public = v.public;
		res->range = v.name;
	}
	return v.public;
}
