/* Expression and rule builders (nft/nftx.h). The loads, the nat
 * expressions and the verdicts are all "allocate, set some u32
 * attributes": one table-driven constructor makes them. */
#include <arpa/inet.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>

#include <linux/netfilter.h>
#include <linux/netfilter/nf_conntrack_common.h>
#include <linux/netfilter/nf_conntrack_tuple_common.h>
#include <linux/netfilter/nf_nat.h>
#include <linux/netfilter/nf_tables.h>

#include <libnftnl/chain.h>
#include <libnftnl/expr.h>
#include <libnftnl/rule.h>

#include "nft/nftcfg.h"
#include "nft/nftx.h"

struct attr {
	uint16_t	type;
	uint32_t	value;
};

#define NATTR(a)	(sizeof(a) / sizeof((a)[0]))

/* An expression NAME with the u32 attributes given; NULL on allocation
 * failure. */
static struct nftnl_expr *
x_new(const char *name, const struct attr *a, size_t n)
{
	struct nftnl_expr *e = nftnl_expr_alloc(name);
	size_t i;

	for (i = 0; e != NULL && i < n; i++)
		nftnl_expr_set_u32(e, a[i].type, a[i].value);
	return e;
}

struct nftnl_expr *
nftx_meta_reg(uint32_t key, uint32_t reg)
{
	const struct attr a[] = { { NFTNL_EXPR_META_KEY, key },
		{ NFTNL_EXPR_META_DREG, reg } };

	return x_new("meta", a, NATTR(a));
}

struct nftnl_expr *
nftx_meta(uint32_t key)
{
	return nftx_meta_reg(key, NFT_REG_1);
}

struct nftnl_expr *
nftx_payload_reg(uint32_t base, uint32_t offset, uint32_t len, uint32_t reg)
{
	const struct attr a[] = { { NFTNL_EXPR_PAYLOAD_DREG, reg },
		{ NFTNL_EXPR_PAYLOAD_BASE, base },
		{ NFTNL_EXPR_PAYLOAD_OFFSET, offset },
		{ NFTNL_EXPR_PAYLOAD_LEN, len } };

	return x_new("payload", a, NATTR(a));
}

struct nftnl_expr *
nftx_payload(uint32_t base, uint32_t offset, uint32_t len)
{
	return nftx_payload_reg(base, offset, len, NFT_REG_1);
}

/* The register a concatenation's field at byte offset off (a multiple
 * of 4) starts in, spelled as the kernel dumps it: the 16-byte name
 * (NFT_REG_1..4) when the field starts one, else the 4-byte one. */
uint32_t
nftx_concat_reg(uint32_t off)
{
	uint32_t w = off / 4;

	return w % 4 == 0 ? NFT_REG_1 + w / 4 : NFT_REG32_00 + w;
}

/* Set lookup of the key starting at sreg; FLAGS 0 (the kernel dumps it
 * always), no SET_ID (a set made earlier in the same batch is found by
 * name). */
struct nftnl_expr *
nftx_lookup(const char *set, uint32_t sreg)
{
	return nftx_lookup_map(set, sreg, 0);
}

/* A map lookup (dreg not 0): the element's data into dreg on. */
struct nftnl_expr *
nftx_lookup_map(const char *set, uint32_t sreg, uint32_t dreg)
{
	const struct attr a[] = { { NFTNL_EXPR_LOOKUP_SREG, sreg },
		{ NFTNL_EXPR_LOOKUP_FLAGS, 0 }, { NFTNL_EXPR_LOOKUP_DREG, dreg } };
	struct nftnl_expr *e = x_new("lookup", a, dreg != 0 ? 3 : 2);

	if (e != NULL && nftnl_expr_set_str(e, NFTNL_EXPR_LOOKUP_SET, set) < 0) {
		nftnl_expr_free(e);
		return NULL;
	}
	return e;
}

struct nftnl_expr *
nftx_ct(uint32_t key)
{
	const struct attr a[] = { { NFTNL_EXPR_CT_KEY, key },
		{ NFTNL_EXPR_CT_DREG, NFT_REG_1 } };

	return x_new("ct", a, NATTR(a));
}

/* ct KEY in the original direction: a tuple field (proto-dst). */
struct nftnl_expr *
nftx_ct_orig(uint32_t key)
{
	struct nftnl_expr *e = nftx_ct(key);

	if (e != NULL)
		nftnl_expr_set_u8(e, NFTNL_EXPR_CT_DIR, IP_CT_DIR_ORIGINAL);
	return e;
}

/* reg1 = 1 when the IPv6 extension header or IPv4 option TYPE is there. */
struct nftnl_expr *
nftx_exthdr_present(uint32_t op, uint8_t type)
{
	const struct attr a[] = { { NFTNL_EXPR_EXTHDR_DREG, NFT_REG_1 },
		{ NFTNL_EXPR_EXTHDR_OFFSET, 0 }, { NFTNL_EXPR_EXTHDR_LEN, 1 },
		{ NFTNL_EXPR_EXTHDR_FLAGS, NFT_EXTHDR_F_PRESENT },
		{ NFTNL_EXPR_EXTHDR_OP, op } };
	struct nftnl_expr *e = x_new("exthdr", a, NATTR(a));

	if (e != NULL)
		nftnl_expr_set_u8(e, NFTNL_EXPR_EXTHDR_TYPE, type);
	return e;
}

/* reg1 = the id of the socket's cgroup v2 ancestor at level. */
struct nftnl_expr *
nftx_socket_cgroup(uint32_t level)
{
	const struct attr a[] = { { NFTNL_EXPR_SOCKET_KEY, NFT_SOCKET_CGROUPV2 },
		{ NFTNL_EXPR_SOCKET_DREG, NFT_REG_1 },
		{ NFTNL_EXPR_SOCKET_LEVEL, level } };

	return x_new("socket", a, NATTR(a));
}

/* reg1 = the next hop the route chose (the destination itself when it is
 * on the link). The kernel breaks the rule for the other family. */
struct nftnl_expr *
nftx_rt_nexthop(int family)
{
	const struct attr a[] = { { NFTNL_EXPR_RT_KEY, family == AF_INET ?
		NFT_RT_NEXTHOP4 : NFT_RT_NEXTHOP6 },
		{ NFTNL_EXPR_RT_DREG, NFT_REG_1 } };

	return x_new("rt", a, NATTR(a));
}

/* reg1 = the route type (RTN_*) of the packet's source address: local
 * when the address is one of this namespace's own. */
struct nftnl_expr *
nftx_fib_saddr_type(void)
{
	const struct attr a[] = { { NFTNL_EXPR_FIB_DREG, NFT_REG_1 },
		{ NFTNL_EXPR_FIB_RESULT, NFT_FIB_RESULT_ADDRTYPE },
		{ NFTNL_EXPR_FIB_FLAGS, NFTA_FIB_F_SADDR } };

	return x_new("fib", a, NATTR(a));
}

struct nftnl_expr *
nftx_counter(void)
{
	return nftnl_expr_alloc("counter");
}

struct nftnl_expr *
nftx_verdict(uint32_t v)
{
	const struct attr a[] = { { NFTNL_EXPR_IMM_DREG, NFT_REG_VERDICT },
		{ NFTNL_EXPR_IMM_VERDICT, v } };

	return x_new("immediate", a, NATTR(a));
}

/* The kernel dumps a code only for the ICMP reject types. */
struct nftnl_expr *
nftx_reject(uint32_t type, int code)
{
	const struct attr a[] = { { NFTNL_EXPR_REJECT_TYPE, type } };
	struct nftnl_expr *e = x_new("reject", a, NATTR(a));

	if (e != NULL && code >= 0)
		nftnl_expr_set_u8(e, NFTNL_EXPR_REJECT_CODE, (uint8_t)code);
	return e;
}

/* An expression NAME whose attribute t holds len bytes of data. */
static struct nftnl_expr *
x_data(struct nftnl_expr *e, uint16_t t, const void *data, uint32_t len)
{
	if (e != NULL && nftnl_expr_set(e, t, data, len) < 0) {
		nftnl_expr_free(e);
		return NULL;
	}
	return e;
}

struct nftnl_expr *
nftx_cmp(uint32_t op, const void *data, uint32_t len)
{
	const struct attr a[] = { { NFTNL_EXPR_CMP_SREG, NFT_REG_1 },
		{ NFTNL_EXPR_CMP_OP, op } };

	return x_data(x_new("cmp", a, NATTR(a)), NFTNL_EXPR_CMP_DATA, data,
	    len);
}

/* reg1 = reg1 & mask, over len bytes of mask (at most 16). */
struct nftnl_expr *
nftx_bitwise(const void *mask, uint32_t len)
{
	static const unsigned char zero[16];
	const struct attr a[] = { { NFTNL_EXPR_BITWISE_SREG, NFT_REG_1 },
		{ NFTNL_EXPR_BITWISE_DREG, NFT_REG_1 },
		{ NFTNL_EXPR_BITWISE_LEN, len },
		{ NFTNL_EXPR_BITWISE_OP, NFT_BITWISE_BOOL } };

	return x_data(x_data(x_new("bitwise", a, NATTR(a)),
	    NFTNL_EXPR_BITWISE_MASK, mask, len), NFTNL_EXPR_BITWISE_XOR, zero,
	    len);
}

/* reg1 = reg1 & mask (a 4-byte host-order value, as ct state is). */
struct nftnl_expr *
nftx_mask(uint32_t mask)
{
	return nftx_bitwise(&mask, sizeof(mask));
}

/* reg = len bytes of data (nat addresses and ports). */
static struct nftnl_expr *
x_imm(uint32_t reg, const void *data, uint32_t len)
{
	const struct attr a[] = { { NFTNL_EXPR_IMM_DREG, reg } };

	return x_data(x_new("immediate", a, NATTR(a)), NFTNL_EXPR_IMM_DATA,
	    data, len);
}

/* ---- rules --------------------------------------------------------------- */

void
nftx_add(struct nftx_rule *b, struct nftnl_expr *e)
{
	if (e == NULL)
		b->bad = 1;
	else if (b->r == NULL)
		nftnl_expr_free(e);
	else
		nftnl_rule_add_expr(b->r, e);
}

void
nftx_start(struct nftx_rule *b, const char *chain)
{
	b->bad = 0;
	b->r = nftnl_rule_alloc();
	if (b->r == NULL) {
		b->bad = 1;
		return;
	}
	nftnl_rule_set_u32(b->r, NFTNL_RULE_FAMILY, NFPROTO_INET);
	if (nftnl_rule_set_str(b->r, NFTNL_RULE_TABLE, NFTCFG_TABLE) < 0 ||
	    nftnl_rule_set_str(b->r, NFTNL_RULE_CHAIN, chain) < 0)
		b->bad = 1;
}

int
nftx_finish(struct nftx_rule *b, struct nftnl_chain *c)
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

void
nftx_meta_u8(struct nftx_rule *b, uint32_t key, uint8_t v)
{
	nftx_add(b, nftx_meta(key));
	nftx_add(b, nftx_cmp(NFT_CMP_EQ, &v, sizeof(v)));
}

void
nftx_meta_u32(struct nftx_rule *b, uint32_t key, uint32_t v)
{
	nftx_add(b, nftx_meta(key));
	nftx_add(b, nftx_cmp(NFT_CMP_EQ, &v, sizeof(v)));
}

void
nftx_ifname(struct nftx_rule *b, uint32_t key, const char *name)
{
	char v[NFTX_IFNAME_LEN];

	memset(v, 0, sizeof(v));
	strncpy(v, name, sizeof(v) - 1);
	nftx_add(b, nftx_meta(key));
	nftx_add(b, nftx_cmp(NFT_CMP_EQ, v, sizeof(v)));
}

void
nftx_ct_original(struct nftx_rule *b)
{
	uint8_t orig = IP_CT_DIR_ORIGINAL;

	nftx_add(b, nftx_ct(NFT_CT_DIRECTION));
	nftx_add(b, nftx_cmp(NFT_CMP_EQ, &orig, sizeof(orig)));
}

void
nftx_ct_dnat(struct nftx_rule *b)
{
	uint32_t zero = 0;

	nftx_add(b, nftx_ct(NFT_CT_STATUS));
	nftx_add(b, nftx_mask(IPS_DST_NAT));
	nftx_add(b, nftx_cmp(NFT_CMP_NEQ, &zero, sizeof(zero)));
}

void
nftx_dport(struct nftx_rule *b, uint8_t l4, uint16_t port)
{
	uint16_t p = htons(port);

	nftx_meta_u8(b, NFT_META_L4PROTO, l4);
	nftx_add(b, nftx_payload(NFT_PAYLOAD_TRANSPORT_HEADER, 2, 2));
	nftx_add(b, nftx_cmp(NFT_CMP_EQ, &p, sizeof(p)));
}

void
nftx_dest(struct nftx_rule *b, int family, const unsigned char *addr,
    uint8_t l4, uint16_t port)
{
	int v4 = family == AF_INET;

	nftx_meta_u8(b, NFT_META_NFPROTO, v4 ? NFPROTO_IPV4 : NFPROTO_IPV6);
	if (addr != NULL) {
		nftx_add(b, nftx_payload(NFT_PAYLOAD_NETWORK_HEADER,
		    v4 ? 16 : 24, v4 ? 4 : 16));
		nftx_add(b, nftx_cmp(NFT_CMP_EQ, addr, v4 ? 4 : 16));
	}
	if (l4 != 0)
		nftx_dport(b, l4, port);
}

void
nftx_redirect(struct nftx_rule *b, uint16_t port)
{
	uint16_t p = htons(port);
	const struct attr a[] = { { NFTNL_EXPR_REDIR_REG_PROTO_MIN, NFT_REG_1 },
		{ NFTNL_EXPR_REDIR_REG_PROTO_MAX, NFT_REG_1 },
		{ NFTNL_EXPR_REDIR_FLAGS, NF_NAT_RANGE_PROTO_SPECIFIED } };

	nftx_add(b, x_imm(NFT_REG_1, &p, sizeof(p)));
	nftx_add(b, x_new("redir", a, NATTR(a)));
}

struct nftnl_expr *
nftx_dnat_regs(int family, uint32_t raddr, uint32_t rproto)
{
	const struct attr a[] = { { NFTNL_EXPR_NAT_TYPE, NFT_NAT_DNAT },
		{ NFTNL_EXPR_NAT_FAMILY, family == AF_INET ? NFPROTO_IPV4 :
		    NFPROTO_IPV6 },
		{ NFTNL_EXPR_NAT_REG_ADDR_MIN, raddr },
		{ NFTNL_EXPR_NAT_REG_ADDR_MAX, raddr },
		{ NFTNL_EXPR_NAT_REG_PROTO_MIN, rproto },
		{ NFTNL_EXPR_NAT_REG_PROTO_MAX, rproto },
		{ NFTNL_EXPR_NAT_FLAGS, NF_NAT_RANGE_MAP_IPS |
		    NF_NAT_RANGE_PROTO_SPECIFIED } };

	return x_new("nat", a, NATTR(a));
}

void
nftx_dnat(struct nftx_rule *b, int family, const unsigned char *addr,
    uint16_t port)
{
	uint16_t p = htons(port);

	nftx_add(b, x_imm(NFT_REG_1, addr, family == AF_INET ? 4 : 16));
	nftx_add(b, x_imm(NFT_REG_2, &p, sizeof(p)));
	nftx_add(b, nftx_dnat_regs(family, NFT_REG_1, NFT_REG_2));
}

void
nftx_count_verdict(struct nftx_rule *b, uint32_t v)
{
	nftx_add(b, nftx_counter());
	nftx_add(b, nftx_verdict(v));
}

void
nftx_count_reject(struct nftx_rule *b, int tcp)
{
	nftx_add(b, nftx_counter());
	nftx_add(b, tcp ? nftx_reject(NFT_REJECT_TCP_RST, -1) :
	    nftx_reject(NFT_REJECT_ICMPX_UNREACH,
	    NFT_REJECT_ICMPX_ADMIN_PROHIBITED));
}

struct nftnl_chain *
nftx_chain(const char *name, const char *type, uint32_t hook, int32_t prio,
    uint32_t policy)
{
	struct nftnl_chain *c = nftnl_chain_alloc();

	if (c == NULL)
		return NULL;
	nftnl_chain_set_u32(c, NFTNL_CHAIN_FAMILY, NFPROTO_INET);
	nftnl_chain_set_u32(c, NFTNL_CHAIN_HOOKNUM, hook);
	nftnl_chain_set_s32(c, NFTNL_CHAIN_PRIO, prio);
	nftnl_chain_set_u32(c, NFTNL_CHAIN_POLICY, policy);
	if (nftnl_chain_set_str(c, NFTNL_CHAIN_TABLE, NFTCFG_TABLE) < 0 ||
	    nftnl_chain_set_str(c, NFTNL_CHAIN_NAME, name) < 0 ||
	    nftnl_chain_set_str(c, NFTNL_CHAIN_TYPE, type) < 0) {
		nftnl_chain_free(c);
		return NULL;
	}
	return c;
}

/* ---- whole rules both tables use ------------------------------------- */

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
#define CT_ESTABLISHED_RELATED \
	(NF_CT_STATE_BIT(IP_CT_ESTABLISHED) | NF_CT_STATE_BIT(IP_CT_RELATED))

int
nftx_rule_nd(struct nftnl_chain *c, const char *chain,
    const char *iifname, const unsigned char *dest,
    const unsigned char *mask, uint32_t len)
{
	struct nftx_rule b;

	nftx_start(&b, chain);
	if (iifname != NULL)
		nftx_ifname(&b, NFT_META_IIFNAME, iifname);
	nftx_nd(&b, NFTX_ND_DADDR, dest, mask, len);
	nftx_add(&b, nftx_verdict(NF_ACCEPT));
	return nftx_finish(&b, c);
}

void
nftx_nd(struct nftx_rule *b, uint32_t off, const unsigned char *addr,
    const unsigned char *mask, uint32_t len)
{
	uint8_t hop = ND_HOP_LIMIT, lo = ND_TYPE_FIRST, hi = ND_TYPE_LAST;

	nftx_meta_u8(b, NFT_META_NFPROTO, NFPROTO_IPV6);
	if (addr != NULL) {
		nftx_add(b, nftx_payload(NFT_PAYLOAD_NETWORK_HEADER, off,
		    mask != NULL ? 16 : len));
		if (mask != NULL)
			nftx_add(b, nftx_bitwise(mask, 16));
		nftx_add(b, nftx_cmp(NFT_CMP_EQ, addr, mask != NULL ? 16 : len));
	}
	nftx_add(b, nftx_payload(NFT_PAYLOAD_NETWORK_HEADER, 7, 1));
	nftx_add(b, nftx_cmp(NFT_CMP_EQ, &hop, sizeof(hop)));
	nftx_meta_u8(b, NFT_META_L4PROTO, IPPROTO_ICMPV6);
	nftx_add(b, nftx_payload(NFT_PAYLOAD_TRANSPORT_HEADER, 0, 1));
	nftx_add(b, nftx_cmp(NFT_CMP_GTE, &lo, sizeof(lo)));
	nftx_add(b, nftx_cmp(NFT_CMP_LTE, &hi, sizeof(hi)));
}

int
nftx_rule_guard(struct nftnl_chain *c, const char *chain,
    const char *iifname, const struct nftcfg_addr *g)
{
	struct nftx_rule b;

	nftx_start(&b, chain);
	if (iifname != NULL)
		nftx_ifname(&b, NFT_META_IIFNAME, iifname);
	nftx_dest(&b, g->family, g->addr, IPPROTO_TCP, g->port);
	nftx_count_verdict(&b, NF_ACCEPT);
	return nftx_finish(&b, c);
}

int
nftx_rule_lo(struct nftnl_chain *c, const char *chain, uint32_t key)
{
	struct nftx_rule b;

	nftx_start(&b, chain);
	nftx_meta_u32(&b, key, NFTX_LOOPBACK_IFINDEX);
	nftx_add(&b, nftx_verdict(NF_ACCEPT));
	return nftx_finish(&b, c);
}

int
nftx_rule_exempt(struct nftnl_chain *c, const char *chain,
    const struct nftcfg *cfg)
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

int
nftx_rules_reject(struct nftnl_chain *c, const char *chain,
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

int
nftx_rule_established(struct nftnl_chain *c, const char *chain,
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
