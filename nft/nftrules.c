/* The default-deny ruleset (docs/design.md "nftables"). One function,
 * nftrules_expected(), says what the table holds; the batch, the reference
 * for verify and the error descriptions are all derived from its objects,
 * so apply and verify cannot drift apart. */
#include <arpa/inet.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <linux/netfilter.h>
#include <linux/netfilter/nf_conntrack_common.h>
#include <linux/netfilter/nf_conntrack_tuple_common.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/netfilter/nfnetlink.h>

#include <libmnl/libmnl.h>
#include <libnftnl/chain.h>
#include <libnftnl/common.h>
#include <libnftnl/expr.h>
#include <libnftnl/rule.h>
#include <libnftnl/table.h>

#include "nft/nftfmt.h"
#include "nft/nftrules.h"
#include "policy/dest.h"
#include "util/errbuf.h"
#include "util/num.h"

/* The kernel gives loopback this index in every network namespace, so the
 * rule can match the index (as `nft` does for `oif lo`) without a lookup. */
#define LOOPBACK_IFINDEX	1u
/* Neighbour discovery: router solicitation .. redirect (RFC 4861). */
#define ND_TYPE_FIRST		133
#define ND_TYPE_LAST		137
#define ND_HOP_LIMIT		255
#define IPV4_OPT_LSRR		131
#define IPV4_OPT_SSRR		137
#define DNS_PORT		53
#define CT_ESTABLISHED_RELATED \
	(NF_CT_STATE_BIT(IP_CT_ESTABLISHED) | NF_CT_STATE_BIT(IP_CT_RELATED))

/* snprintf whose truncation is intended (descriptions, messages). */
static void textf(char *buf, size_t len, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void
textf(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;

	if (buf == NULL || len == 0)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, len, fmt, ap);
	va_end(ap);
}

/* ---- configuration ---------------------------------------------------- */

void
nftrules_config_init(struct nftrules_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
}

static int
guard_cmp(const struct nftrules_guard *a, const struct nftrules_guard *b)
{
	int c;

	if (a->family != b->family)
		return a->family == AF_INET ? -1 : 1;
	if ((c = memcmp(a->addr, b->addr, sizeof(a->addr))) != 0)
		return c;
	return (a->port > b->port) - (a->port < b->port);
}

/* Addresses no packet to a guard can carry as its destination. */
static const char *
unusable_guard(const struct nftrules_guard *g)
{
	static const unsigned char zero[16];
	const unsigned char *a = g->addr;

	if (g->family == AF_INET) {
		if (memcmp(a, zero, 4) == 0)
			return "0.0.0.0 is not a destination";
		if (a[0] >= 224 && a[0] <= 239)
			return "a multicast address cannot be a guard";
		if (a[0] == 255 && a[1] == 255 && a[2] == 255 && a[3] == 255)
			return "the broadcast address cannot be a guard";
		return NULL;
	}
	if (memcmp(a, zero, 16) == 0)
		return ":: is not a destination";
	if (a[0] == 0xff)
		return "a multicast address cannot be a guard";
	/* A socket connecting to ::ffff:a.b.c.d sends IPv4 packets, which an
	 * ip6 daddr rule never matches. */
	if (memcmp(a, zero, 10) == 0 && a[10] == 0xff && a[11] == 0xff)
		return "IPv4-mapped address: give the IPv4 address instead";
	return NULL;
}

int
nftrules_add_guard(struct nftrules_config *cfg, const char *text, char *err,
    size_t errlen)
{
	struct nftrules_guard g;
	struct dest d;
	char why[128];
	const char *bad;
	size_t i;
	int c;

	if (cfg == NULL || text == NULL)
		return errbuf_fail(err, errlen, "no guard address");
	if (cfg->nguards >= NFTRULES_MAX_GUARDS)
		return errbuf_fail(err, errlen, "too many guard addresses (at most %d)",
		    NFTRULES_MAX_GUARDS);
	if (dest_parse_authority(text, strlen(text), &d, why, sizeof(why)) == -1)
		return errbuf_fail(err, errlen, "bad guard address: %s "
		    "(expected IPv4:PORT or [IPv6]:PORT)", why);
	if (d.kind != DEST_IPV4 && d.kind != DEST_IPV6)
		return errbuf_fail(err, errlen, "bad guard address: a host name; rules "
		    "take IP literals only (IPv4:PORT or [IPv6]:PORT)");
	memset(&g, 0, sizeof(g));
	g.family = d.kind == DEST_IPV4 ? AF_INET : AF_INET6;
	memcpy(g.addr, d.addr, g.family == AF_INET ? 4 : 16);
	g.port = d.port;
	if ((bad = unusable_guard(&g)) != NULL)
		return errbuf_fail(err, errlen, "bad guard address: %s", bad);
	for (i = 0; i < cfg->nguards; i++) {
		c = guard_cmp(&g, &cfg->guards[i]);
		if (c == 0)
			return errbuf_fail(err, errlen, "guard address given twice");
		if (c < 0)
			break;
	}
	memmove(&cfg->guards[i + 1], &cfg->guards[i],
	    (cfg->nguards - i) * sizeof(cfg->guards[0]));
	cfg->guards[i] = g;
	cfg->nguards++;
	return 0;
}

int
nftrules_set_exempt_uid(struct nftrules_config *cfg, const char *text,
    char *err, size_t errlen)
{
	long long v;

	if (cfg == NULL || num_parse(text, 0, 4294967294LL, &v) == -1)
		return errbuf_fail(err, errlen, "bad exempt uid: expected a decimal "
		    "uid 1-4294967294");
	if (v == 0)
		return errbuf_fail(err, errlen, "exempt uid 0 refused: it would exempt "
		    "a workload running as root; run the guard as its own user");
	cfg->has_exempt_uid = 1;
	cfg->exempt_uid = (uint32_t)v;
	return 0;
}

int
nftrules_set_exempt_cgroup(struct nftrules_config *cfg, uint64_t id,
    uint32_t level, char *err, size_t errlen)
{
	if (cfg == NULL || id == 0)
		return errbuf_fail(err, errlen, "bad exempt cgroup: no id");
	if (level == 0)
		return errbuf_fail(err, errlen, "exempt cgroup refused: it is the root "
		    "cgroup, which holds every process not placed elsewhere "
		    "(the workload too)");
	if (level > NFTRULES_CGROUP_LEVEL_MAX)
		return errbuf_fail(err, errlen, "exempt cgroup refused: deeper than "
		    "%d levels", NFTRULES_CGROUP_LEVEL_MAX);
	cfg->has_exempt_cgroup = 1;
	cfg->exempt_cgroup_id = id;
	cfg->exempt_cgroup_level = level;
	return 0;
}

int
nftrules_format_guard(const struct nftrules_guard *g, char *buf, size_t len)
{
	char a[INET6_ADDRSTRLEN];
	int n;

	if (inet_ntop(g->family, g->addr, a, sizeof(a)) == NULL)
		return -1;
	n = snprintf(buf, len, g->family == AF_INET6 ? "[%s]:%u" : "%s:%u",
	    a, (unsigned int)g->port);
	if (n < 0 || (size_t)n >= len)
		return -1;
	return n;
}

/* ---- expressions and rules -------------------------------------------- */

/* Each builder sets exactly the attributes the kernel dumps back, so a
 * dumped rule compares equal to a built one attribute by attribute. */

static struct nftnl_expr *
x_meta(uint32_t key)
{
	struct nftnl_expr *e = nftnl_expr_alloc("meta");

	if (e != NULL) {
		nftnl_expr_set_u32(e, NFTNL_EXPR_META_KEY, key);
		nftnl_expr_set_u32(e, NFTNL_EXPR_META_DREG, NFT_REG_1);
	}
	return e;
}

static struct nftnl_expr *
x_cmp(uint32_t op, const void *data, uint32_t len)
{
	struct nftnl_expr *e = nftnl_expr_alloc("cmp");

	if (e == NULL)
		return NULL;
	nftnl_expr_set_u32(e, NFTNL_EXPR_CMP_SREG, NFT_REG_1);
	nftnl_expr_set_u32(e, NFTNL_EXPR_CMP_OP, op);
	if (nftnl_expr_set(e, NFTNL_EXPR_CMP_DATA, data, len) < 0) {
		nftnl_expr_free(e);
		return NULL;
	}
	return e;
}

static struct nftnl_expr *
x_payload(uint32_t base, uint32_t offset, uint32_t len)
{
	struct nftnl_expr *e = nftnl_expr_alloc("payload");

	if (e != NULL) {
		nftnl_expr_set_u32(e, NFTNL_EXPR_PAYLOAD_DREG, NFT_REG_1);
		nftnl_expr_set_u32(e, NFTNL_EXPR_PAYLOAD_BASE, base);
		nftnl_expr_set_u32(e, NFTNL_EXPR_PAYLOAD_OFFSET, offset);
		nftnl_expr_set_u32(e, NFTNL_EXPR_PAYLOAD_LEN, len);
	}
	return e;
}

static struct nftnl_expr *
x_ct(uint32_t key)
{
	struct nftnl_expr *e = nftnl_expr_alloc("ct");

	if (e != NULL) {
		nftnl_expr_set_u32(e, NFTNL_EXPR_CT_KEY, key);
		nftnl_expr_set_u32(e, NFTNL_EXPR_CT_DREG, NFT_REG_1);
	}
	return e;
}

/* ct KEY in the original direction: a tuple field (proto-dst). */
static struct nftnl_expr *
x_ct_orig(uint32_t key)
{
	struct nftnl_expr *e = x_ct(key);

	if (e != NULL)
		nftnl_expr_set_u8(e, NFTNL_EXPR_CT_DIR, IP_CT_DIR_ORIGINAL);
	return e;
}

/* reg1 = reg1 & mask, over len bytes of mask (at most 16). */
static struct nftnl_expr *
x_bitwise(const void *mask, uint32_t len)
{
	struct nftnl_expr *e = nftnl_expr_alloc("bitwise");
	static const unsigned char zero[16];

	if (e == NULL)
		return NULL;
	nftnl_expr_set_u32(e, NFTNL_EXPR_BITWISE_SREG, NFT_REG_1);
	nftnl_expr_set_u32(e, NFTNL_EXPR_BITWISE_DREG, NFT_REG_1);
	nftnl_expr_set_u32(e, NFTNL_EXPR_BITWISE_LEN, len);
	nftnl_expr_set_u32(e, NFTNL_EXPR_BITWISE_OP, NFT_BITWISE_BOOL);
	if (nftnl_expr_set(e, NFTNL_EXPR_BITWISE_MASK, mask, len) < 0 ||
	    nftnl_expr_set(e, NFTNL_EXPR_BITWISE_XOR, zero, len) < 0) {
		nftnl_expr_free(e);
		return NULL;
	}
	return e;
}

/* reg1 = reg1 & mask (a 4-byte host-order value, as ct state is). */
static struct nftnl_expr *
x_mask(uint32_t mask)
{
	return x_bitwise(&mask, sizeof(mask));
}

/* reg1 = 1 when the IPv6 extension header or IPv4 option TYPE is there. */
static struct nftnl_expr *
x_exthdr_present(uint32_t op, uint8_t type)
{
	struct nftnl_expr *e = nftnl_expr_alloc("exthdr");

	if (e != NULL) {
		nftnl_expr_set_u32(e, NFTNL_EXPR_EXTHDR_DREG, NFT_REG_1);
		nftnl_expr_set_u8(e, NFTNL_EXPR_EXTHDR_TYPE, type);
		nftnl_expr_set_u32(e, NFTNL_EXPR_EXTHDR_OFFSET, 0);
		nftnl_expr_set_u32(e, NFTNL_EXPR_EXTHDR_LEN, 1);
		nftnl_expr_set_u32(e, NFTNL_EXPR_EXTHDR_FLAGS,
		    NFT_EXTHDR_F_PRESENT);
		nftnl_expr_set_u32(e, NFTNL_EXPR_EXTHDR_OP, op);
	}
	return e;
}

/* reg1 = the id of the socket's cgroup v2 ancestor at level. */
static struct nftnl_expr *
x_socket_cgroup(uint32_t level)
{
	struct nftnl_expr *e = nftnl_expr_alloc("socket");

	if (e != NULL) {
		nftnl_expr_set_u32(e, NFTNL_EXPR_SOCKET_KEY, NFT_SOCKET_CGROUPV2);
		nftnl_expr_set_u32(e, NFTNL_EXPR_SOCKET_DREG, NFT_REG_1);
		nftnl_expr_set_u32(e, NFTNL_EXPR_SOCKET_LEVEL, level);
	}
	return e;
}

static struct nftnl_expr *
x_counter(void)
{
	return nftnl_expr_alloc("counter");
}

static struct nftnl_expr *
x_verdict(uint32_t v)
{
	struct nftnl_expr *e = nftnl_expr_alloc("immediate");

	if (e != NULL) {
		nftnl_expr_set_u32(e, NFTNL_EXPR_IMM_DREG, NFT_REG_VERDICT);
		nftnl_expr_set_u32(e, NFTNL_EXPR_IMM_VERDICT, v);
	}
	return e;
}

static struct nftnl_expr *
x_accept(void)
{
	return x_verdict(NF_ACCEPT);
}

/* The kernel dumps a code only for the ICMP reject types. */
static struct nftnl_expr *
x_reject(uint32_t type, int code)
{
	struct nftnl_expr *e = nftnl_expr_alloc("reject");

	if (e != NULL) {
		nftnl_expr_set_u32(e, NFTNL_EXPR_REJECT_TYPE, type);
		if (code >= 0)
			nftnl_expr_set_u8(e, NFTNL_EXPR_REJECT_CODE,
			    (uint8_t)code);
	}
	return e;
}

/* A rule under construction: one allocation failure anywhere spoils it,
 * checked once when the rule is complete. */
struct rb {
	struct nftnl_rule	*r;
	int			 bad;
};

static void
rb_add(struct rb *b, struct nftnl_expr *e)
{
	if (e == NULL)
		b->bad = 1;
	else if (b->r == NULL)
		nftnl_expr_free(e);
	else
		nftnl_rule_add_expr(b->r, e);
}

static void
rb_start(struct rb *b, const char *chain)
{
	b->bad = 0;
	b->r = nftnl_rule_alloc();
	if (b->r == NULL) {
		b->bad = 1;
		return;
	}
	nftnl_rule_set_u32(b->r, NFTNL_RULE_FAMILY, NFPROTO_INET);
	if (nftnl_rule_set_str(b->r, NFTNL_RULE_TABLE, NFTRULES_TABLE) < 0 ||
	    nftnl_rule_set_str(b->r, NFTNL_RULE_CHAIN, chain) < 0)
		b->bad = 1;
}

/* Hands the rule to the chain; -1 (rule freed) if anything failed. */
static int
rb_finish(struct rb *b, struct nftnl_chain *c)
{
	if (b->bad) {
		if (b->r != NULL)
			nftnl_rule_free(b->r);
		b->r = NULL;
		return -1;
	}
	nftnl_chain_rule_add_tail(b->r, c);
	b->r = NULL;
	return 0;
}

static void
m_meta_u8(struct rb *b, uint32_t key, uint8_t v)
{
	rb_add(b, x_meta(key));
	rb_add(b, x_cmp(NFT_CMP_EQ, &v, sizeof(v)));
}

static void
m_meta_u32(struct rb *b, uint32_t key, uint32_t v)
{
	rb_add(b, x_meta(key));
	rb_add(b, x_cmp(NFT_CMP_EQ, &v, sizeof(v)));
}

/* Neighbour discovery (ICMPv6 133-137) with hop limit 255 towards dest
 * (len bytes compared after masking with mask; NULL mask: exact), accepted.
 * The kernel sends ND itself, with no socket and so no uid or cgroup to
 * exempt: without these no IPv6 packet reaches even an on-link neighbour.
 * The destination keeps them on the link: a router never forwards to
 * link-local or ff02::/16, and a guard address is a destination the table
 * opens anyway. dest NULL: any destination (input: they are for us). */
static int
rule_nd(struct nftnl_chain *c, const char *chain, const unsigned char *dest,
    const unsigned char *mask, uint32_t len)
{
	uint8_t hop = ND_HOP_LIMIT, lo = ND_TYPE_FIRST, hi = ND_TYPE_LAST;
	struct rb b;

	rb_start(&b, chain);
	m_meta_u8(&b, NFT_META_NFPROTO, NFPROTO_IPV6);
	if (dest != NULL) {
		rb_add(&b, x_payload(NFT_PAYLOAD_NETWORK_HEADER, 24,
		    mask != NULL ? 16 : len));
		if (mask != NULL)
			rb_add(&b, x_bitwise(mask, 16));
		rb_add(&b, x_cmp(NFT_CMP_EQ, dest, mask != NULL ? 16 : len));
	}
	rb_add(&b, x_payload(NFT_PAYLOAD_NETWORK_HEADER, 7, 1));
	rb_add(&b, x_cmp(NFT_CMP_EQ, &hop, sizeof(hop)));
	m_meta_u8(&b, NFT_META_L4PROTO, IPPROTO_ICMPV6);
	rb_add(&b, x_payload(NFT_PAYLOAD_TRANSPORT_HEADER, 0, 1));
	rb_add(&b, x_cmp(NFT_CMP_GTE, &lo, sizeof(lo)));
	rb_add(&b, x_cmp(NFT_CMP_LTE, &hi, sizeof(hi)));
	rb_add(&b, x_accept());
	return rb_finish(&b, c);
}

/* ip6 daddr fe80::/10, ff02::/16 and each IPv6 guard address. */
static int
rules_nd_out(struct nftnl_chain *c, const struct nftrules_config *cfg)
{
	static const unsigned char ll[16] = { 0xfe, 0x80 };
	static const unsigned char llmask[16] = { 0xff, 0xc0 };
	static const unsigned char mc[2] = { 0xff, 0x02 };
	size_t i;

	if (rule_nd(c, "output", ll, llmask, 16) == -1 ||
	    rule_nd(c, "output", mc, NULL, sizeof(mc)) == -1)
		return -1;
	/* A neighbour soliciting from its global address (the guard host
	 * answering the workload) is answered at that address. */
	for (i = 0; i < cfg->nguards; i++)
		if (cfg->guards[i].family == AF_INET6 &&
		    (i == 0 || memcmp(cfg->guards[i].addr,
		    cfg->guards[i - 1].addr, 16) != 0 ||
		    cfg->guards[i - 1].family != AF_INET6) &&
		    rule_nd(c, "output", cfg->guards[i].addr, NULL, 16) == -1)
			return -1;
	return 0;
}

/* Source routing: an IPv6 routing header (any type) or an IPv4 LSRR/SSRR
 * option names a next hop other than the destination the rules checked,
 * which a forwarding host then honours (seg6, accept_source_route). */
static int
rules_srcroute(struct nftnl_chain *c, const char *chain)
{
	static const struct {
		uint8_t		nfproto;
		uint32_t	op;
		uint8_t		type;
	} sr[] = {
		{ NFPROTO_IPV6, NFT_EXTHDR_OP_IPV6, IPPROTO_ROUTING },
		{ NFPROTO_IPV4, NFT_EXTHDR_OP_IPV4, IPV4_OPT_LSRR },
		{ NFPROTO_IPV4, NFT_EXTHDR_OP_IPV4, IPV4_OPT_SSRR },
	};
	uint32_t one = 1;
	struct rb b;
	size_t i;

	for (i = 0; i < sizeof(sr) / sizeof(sr[0]); i++) {
		rb_start(&b, chain);
		m_meta_u8(&b, NFT_META_NFPROTO, sr[i].nfproto);
		rb_add(&b, x_exthdr_present(sr[i].op, sr[i].type));
		rb_add(&b, x_cmp(NFT_CMP_EQ, &one, sizeof(one)));
		rb_add(&b, x_counter());
		rb_add(&b, x_verdict(NF_DROP));
		if (rb_finish(&b, c) == -1)
			return -1;
	}
	return 0;
}

/* ip daddr A tcp dport P counter accept (ip6 daddr for IPv6). */
static int
rule_guard(struct nftnl_chain *c, const struct nftrules_guard *g)
{
	uint16_t port = htons(g->port);
	int v4 = g->family == AF_INET;
	struct rb b;

	rb_start(&b, "output");
	m_meta_u8(&b, NFT_META_NFPROTO, v4 ? NFPROTO_IPV4 : NFPROTO_IPV6);
	rb_add(&b, x_payload(NFT_PAYLOAD_NETWORK_HEADER, v4 ? 16 : 24,
	    v4 ? 4 : 16));
	rb_add(&b, x_cmp(NFT_CMP_EQ, g->addr, v4 ? 4 : 16));
	m_meta_u8(&b, NFT_META_L4PROTO, IPPROTO_TCP);
	rb_add(&b, x_payload(NFT_PAYLOAD_TRANSPORT_HEADER, 2, 2));
	rb_add(&b, x_cmp(NFT_CMP_EQ, &port, sizeof(port)));
	rb_add(&b, x_counter());
	rb_add(&b, x_accept());
	return rb_finish(&b, c);
}

static int
rule_iface_lo(struct nftnl_chain *c, const char *chain, uint32_t key)
{
	struct rb b;

	rb_start(&b, chain);
	m_meta_u32(&b, key, LOOPBACK_IFINDEX);
	rb_add(&b, x_accept());
	return rb_finish(&b, c);
}

/* The guard's own traffic in the shared layout: by cgroup where it can be
 * (no uid change leaves a cgroup), else by uid. */
static int
rule_exempt(struct nftnl_chain *c, const struct nftrules_config *cfg)
{
	struct rb b;

	if (!cfg->has_exempt_cgroup && !cfg->has_exempt_uid)
		return 0;
	rb_start(&b, "output");
	if (cfg->has_exempt_cgroup) {
		rb_add(&b, x_socket_cgroup(cfg->exempt_cgroup_level));
		rb_add(&b, x_cmp(NFT_CMP_EQ, &cfg->exempt_cgroup_id,
		    sizeof(cfg->exempt_cgroup_id)));
	} else {
		m_meta_u32(&b, NFT_META_SKUID, cfg->exempt_uid);
	}
	rb_add(&b, x_counter());
	rb_add(&b, x_accept());
	return rb_finish(&b, c);
}

/* oif lo, in the original direction (replies of a resolver to the exempt
 * guard pass), then either l4proto P with ct original proto-dst 53, or
 * (P 0) ct status dnat. The filter hook runs after nat output, so the
 * packet's own port is Docker's random one: the conntrack entry keeps the
 * port the workload asked for. */
static int
rule_lo_dns(struct nftnl_chain *c, uint8_t l4)
{
	uint32_t dnat = IPS_DST_NAT, zero = 0;
	uint16_t port = htons(DNS_PORT);
	uint8_t orig = IP_CT_DIR_ORIGINAL;
	struct rb b;

	rb_start(&b, "output");
	m_meta_u32(&b, NFT_META_OIF, LOOPBACK_IFINDEX);
	rb_add(&b, x_ct(NFT_CT_DIRECTION));
	rb_add(&b, x_cmp(NFT_CMP_EQ, &orig, sizeof(orig)));
	if (l4 != 0) {
		m_meta_u8(&b, NFT_META_L4PROTO, l4);
		rb_add(&b, x_ct_orig(NFT_CT_PROTO_DST));
		rb_add(&b, x_cmp(NFT_CMP_EQ, &port, sizeof(port)));
	} else {
		rb_add(&b, x_ct(NFT_CT_STATUS));
		rb_add(&b, x_mask(dnat));
		rb_add(&b, x_cmp(NFT_CMP_NEQ, &zero, sizeof(zero)));
	}
	rb_add(&b, x_counter());
	if (l4 == IPPROTO_TCP)
		rb_add(&b, x_reject(NFT_REJECT_TCP_RST, -1));
	else
		rb_add(&b, x_reject(NFT_REJECT_ICMPX_UNREACH,
		    NFT_REJECT_ICMPX_ADMIN_PROHIBITED));
	return rb_finish(&b, c);
}

static int
rule_output(struct nftnl_chain *c, const struct nftrules_config *cfg)
{
	struct rb b;
	size_t i;

	/* Loopback is open, but not for DNS: a resolver on loopback (Docker
	 * DNATs 127.0.0.11:53 to its embedded one) forwards queries out. Nor
	 * for any other DNAT: a redirected loopback connection goes wherever
	 * the nat rule sends it. */
	if (rules_srcroute(c, "output") == -1 || rule_exempt(c, cfg) == -1 ||
	    rule_lo_dns(c, IPPROTO_UDP) == -1 ||
	    rule_lo_dns(c, IPPROTO_TCP) == -1 || rule_lo_dns(c, 0) == -1 ||
	    rule_iface_lo(c, "output", NFT_META_OIF) == -1 ||
	    rules_nd_out(c, cfg) == -1)
		return -1;
	for (i = 0; i < cfg->nguards; i++)
		if (rule_guard(c, &cfg->guards[i]) == -1)
			return -1;
	/* Refused traffic fails at once instead of timing out: TCP gets a
	 * reset, everything else an ICMP(v6) administratively prohibited. */
	rb_start(&b, "output");
	m_meta_u8(&b, NFT_META_L4PROTO, IPPROTO_TCP);
	rb_add(&b, x_counter());
	rb_add(&b, x_reject(NFT_REJECT_TCP_RST, -1));
	if (rb_finish(&b, c) == -1)
		return -1;
	rb_start(&b, "output");
	rb_add(&b, x_counter());
	rb_add(&b, x_reject(NFT_REJECT_ICMPX_UNREACH,
	    NFT_REJECT_ICMPX_ADMIN_PROHIBITED));
	return rb_finish(&b, c);
}

static int
rule_input(struct nftnl_chain *c)
{
	uint32_t zero = 0;
	struct rb b;

	if (rules_srcroute(c, "input") == -1 ||
	    rule_iface_lo(c, "input", NFT_META_IIF) == -1)
		return -1;
	rb_start(&b, "input");
	rb_add(&b, x_ct(NFT_CT_STATE));
	rb_add(&b, x_mask(CT_ESTABLISHED_RELATED));
	rb_add(&b, x_cmp(NFT_CMP_NEQ, &zero, sizeof(zero)));
	rb_add(&b, x_accept());
	if (rb_finish(&b, c) == -1)
		return -1;
	return rule_nd(c, "input", NULL, NULL, 0);
}

static struct nftnl_chain *
chain_new(const char *name, uint32_t hook)
{
	struct nftnl_chain *c = nftnl_chain_alloc();

	if (c == NULL)
		return NULL;
	nftnl_chain_set_u32(c, NFTNL_CHAIN_FAMILY, NFPROTO_INET);
	nftnl_chain_set_u32(c, NFTNL_CHAIN_HOOKNUM, hook);
	nftnl_chain_set_s32(c, NFTNL_CHAIN_PRIO, 0);
	nftnl_chain_set_u32(c, NFTNL_CHAIN_POLICY, NF_DROP);
	if (nftnl_chain_set_str(c, NFTNL_CHAIN_TABLE, NFTRULES_TABLE) < 0 ||
	    nftnl_chain_set_str(c, NFTNL_CHAIN_NAME, name) < 0 ||
	    nftnl_chain_set_str(c, NFTNL_CHAIN_TYPE, "filter") < 0) {
		nftnl_chain_free(c);
		return NULL;
	}
	return c;
}

/* What the table holds: output, input, forward, all policy drop. */
struct nftnl_chain_list *
nftrules_expected(const struct nftrules_config *cfg, char *err, size_t errlen)
{
	static const struct {
		const char	*name;
		uint32_t	 hook;
	} chains[] = {
		{ "output", NF_INET_LOCAL_OUT },
		{ "input", NF_INET_LOCAL_IN },
		{ "forward", NF_INET_FORWARD },
	};
	struct nftnl_chain_list *list;
	struct nftnl_chain *c;
	size_t i;
	int rc = 0;

	if (cfg == NULL || cfg->nguards == 0) {
		errbuf_fail(err, errlen, "at least one guard address is needed");
		return NULL;
	}
	if ((list = nftnl_chain_list_alloc()) == NULL)
		goto nomem;
	for (i = 0; i < sizeof(chains) / sizeof(chains[0]); i++) {
		if ((c = chain_new(chains[i].name, chains[i].hook)) == NULL)
			goto nomem;
		nftnl_chain_list_add_tail(c, list);
		if (chains[i].hook == NF_INET_LOCAL_OUT)
			rc = rule_output(c, cfg);
		else if (chains[i].hook == NF_INET_LOCAL_IN)
			rc = rule_input(c);
		if (rc == -1)
			goto nomem;
	}
	return list;
nomem:
	if (list != NULL)
		nftnl_chain_list_free(list);
	errbuf_fail(err, errlen, "out of memory building the ruleset");
	return NULL;
}

/* ---- the batch -------------------------------------------------------- */

/* Writes messages one after another into the caller's buffer. Before each
 * message it checks that NFTRULES_MSG_MAX bytes are free, since libnftnl
 * writes attributes without bounds; after, that the message kept to it. */
struct bw {
	char			*buf;
	size_t			 size;
	struct nftrules_batch	*b;
	uint32_t		 seq;
	char			*err;
	size_t			 errlen;
};

static char *
bw_room(struct bw *w, int acked)
{
	if (w->size < w->b->len || w->size - w->b->len < NFTRULES_MSG_MAX) {
		errbuf_fail(w->err, w->errlen, "batch buffer too small (%zu bytes)",
		    w->size);
		return NULL;
	}
	if (acked && w->b->nmsgs >= NFTRULES_MAX_MSGS) {
		errbuf_fail(w->err, w->errlen, "more than %d messages in one batch",
		    NFTRULES_MAX_MSGS);
		return NULL;
	}
	memset(w->buf + w->b->len, 0, NFTRULES_MSG_MAX);
	return w->buf + w->b->len;
}

static int
bw_commit(struct bw *w, const struct nlmsghdr *nlh, const char *what)
{
	if (nlh->nlmsg_len > NFTRULES_MSG_MAX)
		return errbuf_fail(w->err, w->errlen, "message for %s is %u bytes, "
		    "over the %d reserved", what != NULL ? what : "batch",
		    (unsigned int)nlh->nlmsg_len,
		    NFTRULES_MSG_MAX);
	if (what != NULL)
		snprintf(w->b->what[w->b->nmsgs++], NFTRULES_WHAT_MAX, "%s",
		    what);
	w->b->len += MNL_ALIGN(nlh->nlmsg_len);
	w->seq++;
	return 0;
}

static int
bw_begin(struct bw *w, void *buf, size_t size, uint32_t seq,
    struct nftrules_batch *b)
{
	char *p;

	memset(b, 0, sizeof(*b));
	w->buf = buf;
	w->size = size;
	w->b = b;
	w->seq = seq;
	b->seq_first = seq;
	if (buf == NULL || (p = bw_room(w, 0)) == NULL)
		return errbuf_fail(w->err, w->errlen, "batch buffer too small (%zu "
		    "bytes)", size);
	return bw_commit(w, nftnl_batch_begin(p, w->seq), NULL);
}

static int
bw_end(struct bw *w)
{
	char *p;

	if ((p = bw_room(w, 0)) == NULL)
		return -1;
	w->b->seq_last = w->seq;
	return bw_commit(w, nftnl_batch_end(p, w->seq), NULL);
}

static int
bw_table(struct bw *w, uint16_t type, uint16_t flags, const char *what)
{
	struct nftnl_table *t;
	struct nlmsghdr *nlh;
	char *p;

	if ((p = bw_room(w, 1)) == NULL)
		return -1;
	if ((t = nftnl_table_alloc()) == NULL)
		return errbuf_fail(w->err, w->errlen, "out of memory");
	nftnl_table_set_u32(t, NFTNL_TABLE_FAMILY, NFPROTO_INET);
	if (type == NFT_MSG_NEWTABLE)
		nftnl_table_set_u32(t, NFTNL_TABLE_FLAGS, 0);
	if (nftnl_table_set_str(t, NFTNL_TABLE_NAME, NFTRULES_TABLE) < 0) {
		nftnl_table_free(t);
		return errbuf_fail(w->err, w->errlen, "out of memory");
	}
	nlh = nftnl_nlmsg_build_hdr(p, type, NFPROTO_INET, flags | NLM_F_ACK,
	    w->seq);
	nftnl_table_nlmsg_build_payload(nlh, t);
	nftnl_table_free(t);
	return bw_commit(w, nlh, what);
}

int
nftrules_build_apply(const struct nftrules_config *cfg, uint32_t seq,
    void *buf, size_t size, struct nftrules_batch *b, char *err,
    size_t errlen)
{
	struct bw w = { .err = err, .errlen = errlen };
	struct nftnl_chain_list *chains;
	struct nftnl_chain_list_iter *ci = NULL;
	struct nftnl_rule_iter *ri;
	struct nftnl_chain *c;
	struct nftnl_rule *r;
	struct nlmsghdr *nlh;
	char what[NFTRULES_WHAT_MAX], text[NFTRULES_WHAT_MAX];
	const char *name;
	unsigned int n;
	char *p;
	int rc = -1;

	if (b == NULL)
		return errbuf_fail(err, errlen, "no batch record");
	if ((chains = nftrules_expected(cfg, err, errlen)) == NULL)
		return -1;
	if (bw_begin(&w, buf, size, seq, b) == -1 ||
	    bw_table(&w, NFT_MSG_NEWTABLE, NLM_F_CREATE,
	    "table inet " NFTRULES_TABLE " (add)") == -1 ||
	    bw_table(&w, NFT_MSG_DELTABLE, 0,
	    "table inet " NFTRULES_TABLE " (delete old)") == -1 ||
	    bw_table(&w, NFT_MSG_NEWTABLE, NLM_F_CREATE,
	    "table inet " NFTRULES_TABLE " (add new)") == -1)
		goto out;
	if ((ci = nftnl_chain_list_iter_create(chains)) == NULL) {
		errbuf_fail(err, errlen, "out of memory");
		goto out;
	}
	while ((c = nftnl_chain_list_iter_next(ci)) != NULL) {
		name = nftnl_chain_get_str(c, NFTNL_CHAIN_NAME);
		if ((p = bw_room(&w, 1)) == NULL)
			goto out;
		nlh = nftnl_nlmsg_build_hdr(p, NFT_MSG_NEWCHAIN, NFPROTO_INET,
		    NLM_F_CREATE | NLM_F_ACK, w.seq);
		nftnl_chain_nlmsg_build_payload(nlh, c);
		textf(what, sizeof(what), "chain %s", name);
		if (bw_commit(&w, nlh, what) == -1)
			goto out;
	}
	nftnl_chain_list_iter_destroy(ci);
	if ((ci = nftnl_chain_list_iter_create(chains)) == NULL) {
		errbuf_fail(err, errlen, "out of memory");
		goto out;
	}
	while ((c = nftnl_chain_list_iter_next(ci)) != NULL) {
		name = nftnl_chain_get_str(c, NFTNL_CHAIN_NAME);
		if ((ri = nftnl_rule_iter_create(c)) == NULL) {
			errbuf_fail(err, errlen, "out of memory");
			goto out;
		}
		for (n = 1; (r = nftnl_rule_iter_next(ri)) != NULL; n++) {
			if ((p = bw_room(&w, 1)) == NULL)
				break;
			nlh = nftnl_nlmsg_build_hdr(p, NFT_MSG_NEWRULE,
			    NFPROTO_INET, NLM_F_CREATE | NLM_F_APPEND |
			    NLM_F_ACK, w.seq);
			nftnl_rule_nlmsg_build_payload(nlh, r);
			nftfmt_rule(r, text, sizeof(text));
			textf(what, sizeof(what), "%s rule #%u (%s)", name, n,
			    text);
			if (bw_commit(&w, nlh, what) == -1)
				break;
		}
		nftnl_rule_iter_destroy(ri);
		if (r != NULL)
			goto out;
	}
	if (bw_end(&w) == -1)
		goto out;
	rc = 0;
out:
	if (ci != NULL)
		nftnl_chain_list_iter_destroy(ci);
	nftnl_chain_list_free(chains);
	if (rc == -1)
		b->len = 0;
	return rc;
}

int
nftrules_build_remove(uint32_t seq, void *buf, size_t size,
    struct nftrules_batch *b, char *err, size_t errlen)
{
	struct bw w = { .err = err, .errlen = errlen };

	if (b == NULL)
		return errbuf_fail(err, errlen, "no batch record");
	if (bw_begin(&w, buf, size, seq, b) == -1 ||
	    bw_table(&w, NFT_MSG_DELTABLE, 0,
	    "table inet " NFTRULES_TABLE " (delete)") == -1 ||
	    bw_end(&w) == -1) {
		b->len = 0;
		return -1;
	}
	return 0;
}

const char *
nftrules_batch_what(const struct nftrules_batch *b, uint32_t seq)
{
	if (b == NULL)
		return "unknown message";
	/* Errors the kernel reports against the begin message concern the
	 * batch as a whole: no permission, or the commit itself failed. */
	if (seq == b->seq_first)
		return "the batch as a whole";
	if (seq == b->seq_last)
		return "batch end";
	if (seq > b->seq_first && seq < b->seq_last &&
	    seq - b->seq_first - 1 < b->nmsgs)
		return b->what[seq - b->seq_first - 1];
	return "unknown message";
}

/* ---- comparison ------------------------------------------------------- */

/* Attribute-by-attribute: every attribute one side has set, the other must
 * have with the same bytes. Counter values are state, not ruleset. */
static int
expr_equal(const struct nftnl_expr *a, const struct nftnl_expr *b)
{
	const char *na = nftnl_expr_get_str(a, NFTNL_EXPR_NAME);
	const char *nb = nftnl_expr_get_str(b, NFTNL_EXPR_NAME);
	const void *da, *db;
	uint32_t la, lb;
	uint16_t t;
	int counter;

	if (na == NULL || nb == NULL || strcmp(na, nb) != 0)
		return 0;
	counter = strcmp(na, "counter") == 0;
	/* libnftnl keeps attribute presence in a 32-bit mask. */
	for (t = NFTNL_EXPR_BASE; t < 32; t++) {
		if (counter && (t == NFTNL_EXPR_CTR_PACKETS ||
		    t == NFTNL_EXPR_CTR_BYTES))
			continue;
		if (nftnl_expr_is_set(a, t) != nftnl_expr_is_set(b, t))
			return 0;
		if (!nftnl_expr_is_set(a, t))
			continue;
		la = lb = 0;
		da = nftnl_expr_get(a, t, &la);
		db = nftnl_expr_get(b, t, &lb);
		if ((da == NULL) != (db == NULL) || la != lb ||
		    (da != NULL && la > 0 && memcmp(da, db, la) != 0))
			return 0;
	}
	return 1;
}

static int
rule_equal(const struct nftnl_rule *a, const struct nftnl_rule *b)
{
	struct nftnl_expr_iter *ia, *ib;
	const struct nftnl_expr *ea, *eb;
	int eq = 0;

	ia = nftnl_expr_iter_create(a);
	ib = nftnl_expr_iter_create(b);
	if (ia == NULL || ib == NULL)
		goto out;
	for (;;) {
		ea = nftnl_expr_iter_next(ia);
		eb = nftnl_expr_iter_next(ib);
		if (ea == NULL || eb == NULL) {
			eq = ea == NULL && eb == NULL;
			break;
		}
		if (!expr_equal(ea, eb))
			break;
	}
out:
	if (ia != NULL)
		nftnl_expr_iter_destroy(ia);
	if (ib != NULL)
		nftnl_expr_iter_destroy(ib);
	return eq;
}

/* The differences found, one per line; past the buffer's end only a
 * "..." line says more were found. */
struct dw {
	char		*buf;
	size_t		 len;
	size_t		 off;
	unsigned int	 n;
};

static void dw_line(struct dw *d, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void
dw_line(struct dw *d, const char *fmt, ...)
{
	char line[768];
	va_list ap;
	size_t n;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	d->n++;
	if (d->buf == NULL || d->len == 0 || d->off == SIZE_MAX)
		return;
	n = strlen(line);
	if (d->off + n + 2 > d->len) {
		if (d->off + 5 <= d->len)
			memcpy(d->buf + d->off, "...\n", 5);
		d->off = SIZE_MAX;	/* truncated: nothing more */
		return;
	}
	memcpy(d->buf + d->off, line, n);
	d->buf[d->off + n] = '\n';
	d->buf[d->off + n + 1] = '\0';
	d->off += n + 1;
}

/* The rules of a chain as an array, kernel order. -1 on allocation failure. */
static int
rule_array(const struct nftnl_chain *c, const struct nftnl_rule ***out,
    size_t *n)
{
	struct nftnl_rule_iter *it;
	const struct nftnl_rule **a = NULL, **na;
	const struct nftnl_rule *r;
	size_t cap = 0;

	*n = 0;
	*out = NULL;
	if ((it = nftnl_rule_iter_create(c)) == NULL)
		return -1;
	while ((r = nftnl_rule_iter_next(it)) != NULL) {
		if (*n == cap) {
			cap = cap ? cap * 2 : 32;
			if ((na = realloc(a, cap * sizeof(*a))) == NULL) {
				free(a);
				nftnl_rule_iter_destroy(it);
				return -1;
			}
			a = na;
		}
		a[(*n)++] = r;
	}
	nftnl_rule_iter_destroy(it);
	*out = a;
	return 0;
}

static int
find_rule(const struct nftnl_rule **v, size_t from, size_t n,
    const struct nftnl_rule *r, size_t *at)
{
	size_t i;

	for (i = from; i < n; i++) {
		if (rule_equal(v[i], r)) {
			*at = i;
			return 1;
		}
	}
	return 0;
}

/* Walks both rule lists; a rule is "unexpected" when the wanted one appears
 * further on, "missing" when the present one is wanted further on, and
 * "differs" otherwise. Positions are the kernel's, 1-based. */
static int
compare_rules(struct dw *d, const char *chain, const struct nftnl_chain *want,
    const struct nftnl_chain *have)
{
	const struct nftnl_rule **w = NULL, **h = NULL;
	size_t nw, nh, i = 0, j = 0, k;
	char ta[384], tb[384];
	int rc = -1;

	if (rule_array(want, &w, &nw) == -1 || rule_array(have, &h, &nh) == -1)
		goto out;
	while (i < nw || j < nh) {
		if (i < nw && j < nh && rule_equal(w[i], h[j])) {
			i++;
			j++;
		} else if (i == nw || (j < nh &&
		    find_rule(h, j + 1, nh, w[i], &k))) {
			for (k = i == nw ? nh : k; j < k; j++) {
				nftfmt_rule(h[j], ta, sizeof(ta));
				dw_line(d, "%s: unexpected rule #%zu (%s)",
				    chain, j + 1, ta);
			}
		} else if (j == nh || find_rule(w, i + 1, nw, h[j], &k)) {
			nftfmt_rule(w[i], tb, sizeof(tb));
			dw_line(d, "%s: missing rule (%s) at #%zu", chain, tb,
			    j + 1);
			i++;
		} else {
			nftfmt_rule(h[j], ta, sizeof(ta));
			nftfmt_rule(w[i], tb, sizeof(tb));
			dw_line(d, "%s: rule #%zu is (%s), expected (%s)",
			    chain, j + 1, ta, tb);
			i++;
			j++;
		}
	}
	rc = 0;
out:
	free(w);
	free(h);
	return rc;
}

static int
compare_chain(struct dw *d, const struct nftnl_chain *want,
    const struct nftnl_chain *have)
{
	const char *name = nftnl_chain_get_str(want, NFTNL_CHAIN_NAME);
	const char *wt = nftnl_chain_get_str(want, NFTNL_CHAIN_TYPE);
	const char *ht = nftnl_chain_get_str(have, NFTNL_CHAIN_TYPE);
	uint32_t wh, hh, wp, hp;
	int32_t wprio, hprio;
	char safe[80];

	if (!nftnl_chain_is_set(have, NFTNL_CHAIN_HOOKNUM)) {
		dw_line(d, "%s: not a base chain, expected type filter hook %s",
		    name, nftfmt_hook(nftnl_chain_get_u32(want,
		    NFTNL_CHAIN_HOOKNUM)));
	} else {
		if (ht == NULL || strcmp(wt, ht) != 0) {
			nftfmt_safe(ht != NULL ? ht : "none", safe, sizeof(safe));
			dw_line(d, "%s: type %s, expected %s", name, safe, wt);
		}
		wh = nftnl_chain_get_u32(want, NFTNL_CHAIN_HOOKNUM);
		hh = nftnl_chain_get_u32(have, NFTNL_CHAIN_HOOKNUM);
		if (wh != hh)
			dw_line(d, "%s: hook %s, expected %s", name,
			    nftfmt_hook(hh), nftfmt_hook(wh));
		wprio = nftnl_chain_get_s32(want, NFTNL_CHAIN_PRIO);
		hprio = nftnl_chain_get_s32(have, NFTNL_CHAIN_PRIO);
		if (wprio != hprio)
			dw_line(d, "%s: priority %d, expected %d", name,
			    (int)hprio, (int)wprio);
		wp = nftnl_chain_get_u32(want, NFTNL_CHAIN_POLICY);
		hp = nftnl_chain_is_set(have, NFTNL_CHAIN_POLICY) ?
		    nftnl_chain_get_u32(have, NFTNL_CHAIN_POLICY) : NF_ACCEPT;
		if (wp != hp)
			dw_line(d, "%s: policy %s, expected %s", name,
			    nftfmt_policy(hp), nftfmt_policy(wp));
	}
	return compare_rules(d, name, want, have);
}

static const struct nftnl_chain *
find_chain(const struct nftnl_chain_list *l, const char *name)
{
	struct nftnl_chain_list_iter *it;
	const struct nftnl_chain *c;
	const char *n;

	if (l == NULL || (it = nftnl_chain_list_iter_create(l)) == NULL)
		return NULL;
	while ((c = nftnl_chain_list_iter_next(it)) != NULL) {
		n = nftnl_chain_get_str(c, NFTNL_CHAIN_NAME);
		if (n != NULL && strcmp(n, name) == 0)
			break;
	}
	nftnl_chain_list_iter_destroy(it);
	return c;
}

int
nftrules_compare(const struct nftrules_config *cfg,
    const struct nftnl_table *table, const struct nftnl_chain_list *chains,
    char *diff, size_t difflen, char *err, size_t errlen)
{
	struct dw d = { diff, difflen, 0, 0 };
	struct nftnl_chain_list *want;
	struct nftnl_chain_list_iter *it = NULL;
	const struct nftnl_chain *c, *h;
	const char *name;
	char text[256];
	uint32_t flags;
	int rc = -1;

	if (diff != NULL && difflen > 0)
		diff[0] = '\0';
	if ((want = nftrules_expected(cfg, err, errlen)) == NULL)
		return -1;
	if (table == NULL) {
		dw_line(&d, "table inet " NFTRULES_TABLE ": missing");
		rc = 1;
		goto out;
	}
	flags = nftnl_table_is_set(table, NFTNL_TABLE_FLAGS) ?
	    nftnl_table_get_u32(table, NFTNL_TABLE_FLAGS) : 0;
	if (flags != 0)
		dw_line(&d, "table inet " NFTRULES_TABLE ": flags 0x%x%s, "
		    "expected none", flags, (flags & NFT_TABLE_F_DORMANT) ?
		    " (dormant: its chains see no packets)" : "");
	if ((it = nftnl_chain_list_iter_create(want)) == NULL)
		goto out;
	while ((c = nftnl_chain_list_iter_next(it)) != NULL) {
		name = nftnl_chain_get_str(c, NFTNL_CHAIN_NAME);
		if ((h = find_chain(chains, name)) == NULL)
			dw_line(&d, "%s: chain missing", name);
		else if (compare_chain(&d, c, h) == -1)
			goto out;
	}
	nftnl_chain_list_iter_destroy(it);
	it = NULL;
	if (chains != NULL) {
		if ((it = nftnl_chain_list_iter_create(chains)) == NULL)
			goto out;
		while ((c = nftnl_chain_list_iter_next(it)) != NULL) {
			name = nftnl_chain_get_str(c, NFTNL_CHAIN_NAME);
			if (name == NULL || find_chain(want, name) == NULL) {
				nftfmt_chain(c, text, sizeof(text));
				dw_line(&d, "unexpected chain %s", text);
			}
		}
	}
	rc = d.n > 0 ? 1 : 0;
out:
	/* Past nftrules_expected, only an allocation can fail. */
	if (rc == -1)
		errbuf_fail(err, errlen, "out of memory comparing the ruleset");
	if (it != NULL)
		nftnl_chain_list_iter_destroy(it);
	nftnl_chain_list_free(want);
	return rc;
}
