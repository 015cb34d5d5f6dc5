/* The default-deny ruleset (docs/design.md "nftables"). One function,
 * nftrules_expected(), says what the table holds; the batch, the reference
 * for verify and the error descriptions are all derived from its objects,
 * so apply and verify cannot drift apart. */
#include <arpa/inet.h>
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
#include <linux/rtnetlink.h>

#include <libnftnl/chain.h>
#include <libnftnl/common.h>
#include <libnftnl/expr.h>
#include <libnftnl/rule.h>

#include "nft/nftrules.h"
#include "nft/nfttransp.h"
#include "nft/nftx.h"
#include "policy/dest.h"
#include "util/errbuf.h"
#include "util/num.h"

/* Neighbour discovery: neighbour solicitation and advertisement only
 * (RFC 4861 135-136), what address resolution and DAD need. Router
 * solicitations and advertisements (133-134) and redirects (137) are
 * refused: a workload's RA would give the guard's own kernel routes and
 * SLAAC addresses of its choosing (an on-link route for a public prefix
 * the guard then dials over the workload's link), and a redirect would
 * move the guard's next hop. */
#define ND_TYPE_FIRST		135
#define ND_TYPE_LAST		136
#define ND_HOP_LIMIT		255
#define IPV4_OPT_LSRR		131
#define IPV4_OPT_SSRR		137
#define DNS_PORT		53
#define CT_ESTABLISHED_RELATED \
	(NF_CT_STATE_BIT(IP_CT_ESTABLISHED) | NF_CT_STATE_BIT(IP_CT_RELATED))

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

/* Addresses no packet to a listener can carry as its destination. */
const char *
nftrules_unusable(const struct nftrules_guard *g)
{
	static const unsigned char zero[16];
	const unsigned char *a = g->addr;

	if (g->family == AF_INET) {
		if (memcmp(a, zero, 4) == 0)
			return "0.0.0.0 is not a destination";
		if (a[0] >= 224 && a[0] <= 239)
			return "a multicast address cannot be a listener";
		if (a[0] == 255 && a[1] == 255 && a[2] == 255 && a[3] == 255)
			return "the broadcast address cannot be a listener";
		return NULL;
	}
	if (memcmp(a, zero, 16) == 0)
		return ":: is not a destination";
	if (a[0] == 0xff)
		return "a multicast address cannot be a listener";
	/* A socket connecting to ::ffff:a.b.c.d sends IPv4 packets, which an
	 * ip6 daddr rule never matches. */
	if (memcmp(a, zero, 10) == 0 && a[10] == 0xff && a[11] == 0xff)
		return "IPv4-mapped address: give the IPv4 address instead";
	return NULL;
}

int
nftrules_parse_addr(const char *text, const char *what,
    struct nftrules_guard *g, char *err, size_t errlen)
{
	struct dest d;
	char why[128];
	const char *bad;

	if (text == NULL)
		return errbuf_fail(err, errlen, "no %s address", what);
	if (dest_parse_authority(text, strlen(text), &d, why, sizeof(why)) == -1)
		return errbuf_fail(err, errlen, "bad %s address: %s "
		    "(expected IPv4:PORT or [IPv6]:PORT)", what, why);
	if (d.kind != DEST_IPV4 && d.kind != DEST_IPV6)
		return errbuf_fail(err, errlen, "bad %s address: a host name; "
		    "rules take IP literals only (IPv4:PORT or [IPv6]:PORT)",
		    what);
	memset(g, 0, sizeof(*g));
	g->family = d.kind == DEST_IPV4 ? AF_INET : AF_INET6;
	memcpy(g->addr, d.addr, g->family == AF_INET ? 4 : 16);
	g->port = d.port;
	if ((bad = nftrules_unusable(g)) != NULL)
		return errbuf_fail(err, errlen, "bad %s address: %s", what, bad);
	return 0;
}

int
nftrules_add_guard(struct nftrules_config *cfg, const char *text, char *err,
    size_t errlen)
{
	struct nftrules_guard g;
	size_t i;
	int c;

	if (cfg == NULL || text == NULL)
		return errbuf_fail(err, errlen, "no guard address");
	if (cfg->nguards >= NFTRULES_MAX_GUARDS)
		return errbuf_fail(err, errlen, "too many guard addresses (at most %d)",
		    NFTRULES_MAX_GUARDS);
	if (nftrules_parse_addr(text, "guard", &g, err, errlen) == -1)
		return -1;
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

/* ---- rules ------------------------------------------------------------- */

/* Neighbour discovery (ICMPv6 135-136) with hop limit 255 towards dest
 * (len bytes compared after masking with mask; NULL mask: exact), accepted.
 * The kernel sends ND itself, with no socket and so no uid or cgroup to
 * exempt: without these no IPv6 packet reaches even an on-link neighbour.
 * The destination keeps them on the link: a router never forwards to
 * link-local or ff02::/16, and a guard address is a destination the table
 * opens anyway. dest NULL: any destination (input: they are for us);
 * iifname, when set, limits the rule to packets arriving there. */
int
nftrules_rule_nd(struct nftnl_chain *c, const char *chain,
    const char *iifname, const unsigned char *dest,
    const unsigned char *mask, uint32_t len)
{
	uint8_t hop = ND_HOP_LIMIT, lo = ND_TYPE_FIRST, hi = ND_TYPE_LAST;
	struct nftx_rule b;

	nftx_start(&b, chain);
	if (iifname != NULL)
		nftx_ifname(&b, NFT_META_IIFNAME, iifname);
	nftx_meta_u8(&b, NFT_META_NFPROTO, NFPROTO_IPV6);
	if (dest != NULL) {
		nftx_add(&b, nftx_payload(NFT_PAYLOAD_NETWORK_HEADER, 24,
		    mask != NULL ? 16 : len));
		if (mask != NULL)
			nftx_add(&b, nftx_bitwise(mask, 16));
		nftx_add(&b, nftx_cmp(NFT_CMP_EQ, dest, mask != NULL ? 16 : len));
	}
	nftx_add(&b, nftx_payload(NFT_PAYLOAD_NETWORK_HEADER, 7, 1));
	nftx_add(&b, nftx_cmp(NFT_CMP_EQ, &hop, sizeof(hop)));
	nftx_meta_u8(&b, NFT_META_L4PROTO, IPPROTO_ICMPV6);
	nftx_add(&b, nftx_payload(NFT_PAYLOAD_TRANSPORT_HEADER, 0, 1));
	nftx_add(&b, nftx_cmp(NFT_CMP_GTE, &lo, sizeof(lo)));
	nftx_add(&b, nftx_cmp(NFT_CMP_LTE, &hi, sizeof(hi)));
	nftx_add(&b, nftx_verdict(NF_ACCEPT));
	return nftx_finish(&b, c);
}

/* Whether IPv6 address a is among the first n of l. */
static int
has_addr6(const struct nftrules_guard *l, size_t n, const unsigned char *a)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (l[i].family == AF_INET6 && memcmp(l[i].addr, a, 16) == 0)
			return 1;
	return 0;
}

/* ip6 daddr fe80::/10, ff02::/16, each IPv6 guard address and each IPv6
 * next hop of the separate layout's transparent mode. */
static int
rules_nd_out(struct nftnl_chain *c, const struct nftrules_config *cfg)
{
	static const unsigned char ll[16] = { 0xfe, 0x80 };
	static const unsigned char llmask[16] = { 0xff, 0xc0 };
	static const unsigned char mc[2] = { 0xff, 0x02 };
	size_t i;

	if (nftrules_rule_nd(c, "output", NULL, ll, llmask, 16) == -1 ||
	    nftrules_rule_nd(c, "output", NULL, mc, NULL, sizeof(mc)) == -1)
		return -1;
	/* A neighbour soliciting from its global address (the guard host
	 * answering the workload) is answered at that address. */
	for (i = 0; i < cfg->nguards; i++)
		if (cfg->guards[i].family == AF_INET6 &&
		    !has_addr6(cfg->guards, i, cfg->guards[i].addr) &&
		    nftrules_rule_nd(c, "output", NULL, cfg->guards[i].addr,
		    NULL, 16) == -1)
			return -1;
	for (i = 0; i < cfg->nvia; i++)
		if (cfg->via[i].family == AF_INET6 &&
		    !has_addr6(cfg->guards, cfg->nguards, cfg->via[i].addr) &&
		    nftrules_rule_nd(c, "output", NULL, cfg->via[i].addr,
		    NULL, 16) == -1)
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
	struct nftx_rule b;
	size_t i;

	for (i = 0; i < sizeof(sr) / sizeof(sr[0]); i++) {
		nftx_start(&b, chain);
		nftx_meta_u8(&b, NFT_META_NFPROTO, sr[i].nfproto);
		nftx_add(&b, nftx_exthdr_present(sr[i].op, sr[i].type));
		nftx_add(&b, nftx_cmp(NFT_CMP_EQ, &one, sizeof(one)));
		nftx_count_verdict(&b, NF_DROP);
		if (nftx_finish(&b, c) == -1)
			return -1;
	}
	return 0;
}

/* A source that is not this namespace's own: IPV6_FREEBIND (no capability
 * needed) or a raw socket binds any address, and a SYN from "2001:db8::7"
 * to the guard's port makes the guard host answer that address over its
 * own way out: address, port and timing carry data past the guard. Two
 * exceptions: the unspecified source (::), which DAD and early MLD use and
 * nothing answers; and related packets, which is what our own rejects
 * send (a reset "from" the refused address, delivered over lo, that the
 * kernel attaches to the refused connection). "ct state" never fails to
 * load: an untracked or invalid packet is checked too. */
static int
rules_spoofed(struct nftnl_chain *c, const char *chain)
{
	static const unsigned char any6[16];
	uint32_t local = RTN_LOCAL, related = NF_CT_STATE_BIT(IP_CT_RELATED);
	struct nftx_rule b;
	int v6;

	for (v6 = 1; v6 >= 0; v6--) {
		nftx_start(&b, chain);
		nftx_meta_u8(&b, NFT_META_NFPROTO, v6 ? NFPROTO_IPV6 :
		    NFPROTO_IPV4);
		if (v6) {
			nftx_add(&b, nftx_payload(NFT_PAYLOAD_NETWORK_HEADER, 8,
			    sizeof(any6)));
			nftx_add(&b, nftx_cmp(NFT_CMP_NEQ, any6, sizeof(any6)));
		}
		nftx_add(&b, nftx_ct(NFT_CT_STATE));
		nftx_add(&b, nftx_cmp(NFT_CMP_NEQ, &related, sizeof(related)));
		nftx_add(&b, nftx_fib_saddr_type());
		nftx_add(&b, nftx_cmp(NFT_CMP_NEQ, &local, sizeof(local)));
		nftx_count_verdict(&b, NF_DROP);
		if (nftx_finish(&b, c) == -1)
			return -1;
	}
	return 0;
}

/* ip daddr A tcp dport P counter accept (ip6 daddr for IPv6), in chain;
 * iifname, when set, limits it to packets arriving there. */
int
nftrules_rule_guard(struct nftnl_chain *c, const char *chain,
    const char *iifname, const struct nftrules_guard *g)
{
	struct nftx_rule b;

	nftx_start(&b, chain);
	if (iifname != NULL)
		nftx_ifname(&b, NFT_META_IIFNAME, iifname);
	nftx_dest(&b, g->family, g->addr, IPPROTO_TCP, g->port);
	nftx_count_verdict(&b, NF_ACCEPT);
	return nftx_finish(&b, c);
}

/* oif "lo" accept / iif "lo" accept, and in the nat chain (no rewrite). */
int
nftrules_rule_lo(struct nftnl_chain *c, const char *chain, uint32_t key)
{
	struct nftx_rule b;

	nftx_start(&b, chain);
	nftx_meta_u32(&b, key, NFTX_LOOPBACK_IFINDEX);
	nftx_add(&b, nftx_verdict(NF_ACCEPT));
	return nftx_finish(&b, c);
}

/* The guard's own traffic in the shared layout: by cgroup where it can be
 * (no uid change leaves a cgroup), else by uid. In the nat chain the same
 * accept means "not redirected". */
int
nftrules_rule_exempt(struct nftnl_chain *c, const char *chain,
    const struct nftrules_config *cfg)
{
	struct nftx_rule b;

	if (!cfg->has_exempt_cgroup && !cfg->has_exempt_uid)
		return 0;
	nftx_start(&b, chain);
	if (cfg->has_exempt_cgroup) {
		nftx_add(&b, nftx_socket_cgroup(cfg->exempt_cgroup_level));
		nftx_add(&b, nftx_cmp(NFT_CMP_EQ, &cfg->exempt_cgroup_id,
		    sizeof(cfg->exempt_cgroup_id)));
	} else {
		nftx_meta_u32(&b, NFT_META_SKUID, cfg->exempt_uid);
	}
	nftx_count_verdict(&b, NF_ACCEPT);
	return nftx_finish(&b, c);
}

/* oif lo, in the original direction (replies of a resolver to the exempt
 * guard pass), then either l4proto P with ct original proto-dst 53, or
 * (P 0) ct status dnat. The filter hook runs after nat output, so the
 * packet's own port is Docker's random one: the conntrack entry keeps the
 * port the workload asked for. */
static int
rule_lo_dns(struct nftnl_chain *c, uint8_t l4)
{
	uint16_t port = htons(DNS_PORT);
	struct nftx_rule b;

	nftx_start(&b, "output");
	nftx_meta_u32(&b, NFT_META_OIF, NFTX_LOOPBACK_IFINDEX);
	nftx_ct_original(&b);
	if (l4 != 0) {
		nftx_meta_u8(&b, NFT_META_L4PROTO, l4);
		nftx_add(&b, nftx_ct_orig(NFT_CT_PROTO_DST));
		nftx_add(&b, nftx_cmp(NFT_CMP_EQ, &port, sizeof(port)));
	} else {
		nftx_ct_dnat(&b);
	}
	nftx_count_reject(&b, l4 == IPPROTO_TCP);
	return nftx_finish(&b, c);
}

/* oif lo ip daddr 127.0.0.11, original direction: Docker's embedded
 * resolver, which forwards queries out. Its real port is a random one,
 * but /proc/net/udp shows it to any uid: a query sent there directly is
 * neither port 53 nor redirected, so rule_lo_dns misses it. */
static int
rule_lo_docker_dns(struct nftnl_chain *c)
{
	const unsigned char addr[4] = { 127, 0, 0, 11 };
	struct nftx_rule b;

	nftx_start(&b, "output");
	nftx_meta_u32(&b, NFT_META_OIF, NFTX_LOOPBACK_IFINDEX);
	nftx_ct_original(&b);
	nftx_dest(&b, AF_INET, addr, 0, 0);
	nftx_count_reject(&b, 0);
	return nftx_finish(&b, c);
}

/* The last two rules of a chain that refuses: refused traffic fails at
 * once instead of timing out: TCP gets a reset, everything else an
 * ICMP(v6) administratively prohibited. iifname limits them to one link. */
int
nftrules_rules_reject(struct nftnl_chain *c, const char *chain,
    const char *iifname)
{
	struct nftx_rule b;
	int tcp;

	for (tcp = 1; tcp >= 0; tcp--) {
		nftx_start(&b, chain);
		if (iifname != NULL)
			nftx_ifname(&b, NFT_META_IIFNAME, iifname);
		if (tcp)
			nftx_meta_u8(&b, NFT_META_L4PROTO, IPPROTO_TCP);
		nftx_count_reject(&b, tcp);
		if (nftx_finish(&b, c) == -1)
			return -1;
	}
	return 0;
}

static int
rule_output(struct nftnl_chain *c, const struct nftrules_config *cfg)
{
	size_t i;

	/* Loopback is open, but not for DNS: a resolver on loopback (Docker
	 * DNATs 127.0.0.11:53 to its embedded one) forwards queries out. Nor
	 * for any other DNAT: a redirected loopback connection goes wherever
	 * the nat rule sends it; only our own redirects to the transparent
	 * and DNS listeners are let through first. */
	if (rules_srcroute(c, "output") == -1 ||
	    rules_spoofed(c, "output") == -1 ||
	    nftrules_rule_exempt(c, "output", cfg) == -1 ||
	    nfttransp_rules_redirected(c, cfg) == -1 ||
	    rule_lo_dns(c, IPPROTO_UDP) == -1 ||
	    rule_lo_dns(c, IPPROTO_TCP) == -1 || rule_lo_dns(c, 0) == -1 ||
	    rule_lo_docker_dns(c) == -1 ||
	    nftrules_rule_lo(c, "output", NFT_META_OIF) == -1 ||
	    rules_nd_out(c, cfg) == -1)
		return -1;
	for (i = 0; i < cfg->nguards; i++)
		if (nftrules_rule_guard(c, "output", NULL, &cfg->guards[i]) == -1)
			return -1;
	if (nfttransp_rules_via(c, cfg) == -1)
		return -1;
	return nftrules_rules_reject(c, "output", NULL);
}

/* ct state established,related accept; iifname limits it to one link. */
int
nftrules_rule_established(struct nftnl_chain *c, const char *chain,
    const char *iifname)
{
	uint32_t zero = 0;
	struct nftx_rule b;

	nftx_start(&b, chain);
	if (iifname != NULL)
		nftx_ifname(&b, NFT_META_IIFNAME, iifname);
	nftx_add(&b, nftx_ct(NFT_CT_STATE));
	nftx_add(&b, nftx_mask(CT_ESTABLISHED_RELATED));
	nftx_add(&b, nftx_cmp(NFT_CMP_NEQ, &zero, sizeof(zero)));
	nftx_add(&b, nftx_verdict(NF_ACCEPT));
	return nftx_finish(&b, c);
}

static int
rule_input(struct nftnl_chain *c)
{
	if (rules_srcroute(c, "input") == -1 ||
	    nftrules_rule_lo(c, "input", NFT_META_IIF) == -1 ||
	    nftrules_rule_established(c, "input", NULL) == -1)
		return -1;
	return nftrules_rule_nd(c, "input", NULL, NULL, NULL, 0);
}

/* What the table holds in the workload's namespace: output, input,
 * forward, all policy drop, and in the shared layout's transparent mode
 * the nat chain that redirects. The guard side's table is nfttransp's. */
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

	if (cfg == NULL || nfttransp_check(cfg, err, errlen) == -1)
		return NULL;
	if ((list = nftnl_chain_list_alloc()) == NULL)
		goto nomem;
	if (cfg->in_ifname[0] != '\0') {
		if (nfttransp_chains_guard(list, cfg) == -1)
			goto nomem;
		return list;
	}
	for (i = 0; i < sizeof(chains) / sizeof(chains[0]); i++) {
		if ((c = nftx_chain(chains[i].name, "filter", chains[i].hook, 0,
		    NF_DROP)) == NULL)
			goto nomem;
		nftnl_chain_list_add_tail(c, list);
		if (chains[i].hook == NF_INET_LOCAL_OUT)
			rc = rule_output(c, cfg);
		else if (chains[i].hook == NF_INET_LOCAL_IN)
			rc = rule_input(c);
		if (rc == -1)
			goto nomem;
	}
	if (nfttransp_chain_nat_output(list, cfg) == -1)
		goto nomem;
	return list;
nomem:
	if (list != NULL)
		nftnl_chain_list_free(list);
	errbuf_fail(err, errlen, "out of memory building the ruleset");
	return NULL;
}
