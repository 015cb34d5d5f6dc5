/* Rules as text. The renderer knows the shapes nftrules builds and their
 * common neighbours, the way `nft list` shows them; anything else it
 * writes in libnftnl's bracket notation rather than guess. */
#include <arpa/inet.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include <linux/netfilter.h>
#include <linux/netfilter/nf_conntrack_common.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/rtnetlink.h>

#include <libnftnl/chain.h>
#include <libnftnl/common.h>
#include <libnftnl/expr.h>
#include <libnftnl/rule.h>

#include "nft/nftfmt.h"
#include "nft/nftstmt.h"

/* Loopback's index in every network namespace. */
#define LOOPBACK_IFINDEX	1u
#define ND_NEIGHBOR_SOLICIT	135
#define ND_NEIGHBOR_ADVERT	136
#define IPV4_OPT_LSRR		131
#define IPV4_OPT_SSRR		137

/* A bounded string builder that truncates and stays NUL-terminated. */
struct sb {
	char	*buf;
	size_t	 len;
	size_t	 off;
};

static void sb_add(struct sb *s, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void
sb_add(struct sb *s, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (s->len == 0 || s->off >= s->len - 1)
		return;
	va_start(ap, fmt);
	n = vsnprintf(s->buf + s->off, s->len - s->off, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n > s->len - 1 - s->off)
		n = (int)(s->len - 1 - s->off);
	s->off += (size_t)n;
}

/* Bytes that came from the kernel (names other tools set) are shown only
 * as printable ASCII, so a crafted chain name cannot drive the terminal. */
static void
sb_safe(struct sb *s, const char *str, size_t max)
{
	size_t i, n = strnlen(str, max);

	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)str[i];

		sb_add(s, "%c", c >= 0x20 && c < 0x7f ? (char)c : '?');
	}
}

static void
sb_hex(struct sb *s, const unsigned char *p, uint32_t len)
{
	uint32_t i;

	sb_add(s, "0x");
	for (i = 0; i < len; i++)
		sb_add(s, "%02x", p[i]);
}

/* Renders a rule the way `nft` would, for the shapes nftrules builds and
 * common neighbours; anything else in libnftnl's bracket notation. Protocol
 * matches (meta nfproto/l4proto) are held back and dropped when a later
 * header match implies them, as `nft` does. */
struct rf {
	struct sb			*s;
	const struct nftnl_expr		*load;	/* reg 1 loaded, not yet used */
	const struct nftnl_expr		*mask;	/* bitwise applied to it */
	const struct nftnl_expr		*last;	/* load of the previous cmp */
	int				 range;	/* that cmp opened a range */
	size_t				 range_at;	/* where its ">= " is */
	int				 nfproto;
	int				 l4proto;
	char				 dep[2][32];
	int				 depkind[2];	/* 1 nfproto, 2 l4proto */
	int				 ndep;
};

static void
rf_word(struct rf *f)
{
	if (f->s->off > 0)
		sb_add(f->s, " ");
}

static void
rf_raw(struct rf *f, const struct nftnl_expr *e)
{
	char tmp[256];

	tmp[0] = '\0';
	nftnl_expr_snprintf(tmp, sizeof(tmp), e, NFTNL_OUTPUT_DEFAULT, 0);
	rf_word(f);
	sb_add(f->s, "[");
	sb_safe(f->s, tmp, sizeof(tmp));
	sb_add(f->s, "]");
}

/* Prints the protocol matches held back: nothing later implied them. */
static void
rf_deps(struct rf *f)
{
	int i;

	for (i = 0; i < f->ndep; i++) {
		rf_word(f);
		sb_add(f->s, "%s", f->dep[i]);
	}
	f->ndep = 0;
}

/* A match is about to be written: first the held-back ones. */
static void
rf_begin(struct rf *f)
{
	rf_deps(f);
	rf_word(f);
}

/* The 4-byte AND mask applied to reg 1 (XOR 0) into *m; -1 otherwise. */
static int
rf_mask32(const struct rf *f, uint32_t *m)
{
	uint32_t mlen = 0, xlen = 0, x = 1;
	const void *mp, *xp;

	if (f->mask == NULL)
		return -1;
	mp = nftnl_expr_get(f->mask, NFTNL_EXPR_BITWISE_MASK, &mlen);
	xp = nftnl_expr_get(f->mask, NFTNL_EXPR_BITWISE_XOR, &xlen);
	if (mp == NULL || xp == NULL || mlen != 4 || xlen != 4)
		return -1;
	memcpy(m, mp, 4);
	memcpy(&x, xp, 4);
	return x == 0 ? 0 : -1;
}

/* Before anything that is not a match: the held-back matches, then any
 * load or mask no cmp consumed, in raw notation. */
static void
rf_flush(struct rf *f)
{
	rf_deps(f);
	if (f->load != NULL)
		rf_raw(f, f->load);
	if (f->mask != NULL)
		rf_raw(f, f->mask);
	f->load = f->mask = NULL;
}

static void
rf_drop_dep(struct rf *f, int kind)
{
	int i, j;

	for (i = j = 0; i < f->ndep; i++) {
		if (f->depkind[i] == kind)
			continue;
		if (i != j) {
			memcpy(f->dep[j], f->dep[i], sizeof(f->dep[j]));
			f->depkind[j] = f->depkind[i];
		}
		j++;
	}
	f->ndep = j;
}

static const char *
l4name(unsigned int p)
{
	switch (p) {
	case IPPROTO_TCP:	return "tcp";
	case IPPROTO_UDP:	return "udp";
	case IPPROTO_ICMP:	return "icmp";
	case IPPROTO_ICMPV6:	return "icmpv6";
	}
	return NULL;
}

static const char *
metaname(uint32_t key)
{
	switch (key) {
	case NFT_META_NFPROTO:	return "meta nfproto";
	case NFT_META_L4PROTO:	return "meta l4proto";
	case NFT_META_OIF:	return "oif";
	case NFT_META_IIF:	return "iif";
	case NFT_META_OIFNAME:	return "oifname";
	case NFT_META_IIFNAME:	return "iifname";
	case NFT_META_SKUID:	return "meta skuid";
	case NFT_META_SKGID:	return "meta skgid";
	case NFT_META_MARK:	return "meta mark";
	case NFT_META_PROTOCOL:	return "meta protocol";
	}
	return NULL;
}

static void
ctstate(struct sb *s, uint32_t v)
{
	static const struct {
		uint32_t	 bit;
		const char	*name;
	} st[] = {
		{ NF_CT_STATE_INVALID_BIT, "invalid" },
		{ NF_CT_STATE_BIT(IP_CT_ESTABLISHED), "established" },
		{ NF_CT_STATE_BIT(IP_CT_RELATED), "related" },
		{ NF_CT_STATE_BIT(IP_CT_NEW), "new" },
		{ NF_CT_STATE_UNTRACKED_BIT, "untracked" },
	};
	size_t i;
	int first = 1;

	for (i = 0; i < sizeof(st) / sizeof(st[0]); i++) {
		if (v & st[i].bit) {
			sb_add(s, "%s%s", first ? "" : ",", st[i].name);
			v &= ~st[i].bit;
			first = 0;
		}
	}
	if (v != 0 || first)
		sb_add(s, "%s0x%x", first ? "" : ",", v);
}

static const char *
cmpop(uint32_t op)
{
	switch (op) {
	case NFT_CMP_EQ:	return "";
	case NFT_CMP_NEQ:	return "!= ";
	case NFT_CMP_LT:	return "< ";
	case NFT_CMP_LTE:	return "<= ";
	case NFT_CMP_GT:	return "> ";
	case NFT_CMP_GTE:	return ">= ";
	}
	return "?? ";
}

/* ct direction, ct original proto-dst, ct status: the shapes nftrules
 * builds. -1 when it is not one of them. */
static int
rf_ct(struct rf *f, const struct nftnl_expr *ld, uint32_t op,
    const unsigned char *d, uint32_t dlen)
{
	uint32_t key = nftnl_expr_get_u32(ld, NFTNL_EXPR_CT_KEY), m = 0;
	uint16_t port;

	if (key == NFT_CT_DIRECTION && dlen == 1 && f->mask == NULL &&
	    !nftnl_expr_is_set(ld, NFTNL_EXPR_CT_DIR)) {
		rf_begin(f);
		sb_add(f->s, "ct direction %s%s", cmpop(op),
		    d[0] == 0 ? "original" : d[0] == 1 ? "reply" : "?");
		return 0;
	}
	if (key == NFT_CT_PROTO_DST && dlen == 2 && f->mask == NULL &&
	    nftnl_expr_is_set(ld, NFTNL_EXPR_CT_DIR)) {
		memcpy(&port, d, 2);
		rf_begin(f);
		sb_add(f->s, "ct %s proto-dst %s%u",
		    nftnl_expr_get_u8(ld, NFTNL_EXPR_CT_DIR) == 0 ? "original" :
		    "reply", cmpop(op), (unsigned int)ntohs(port));
		return 0;
	}
	if (key != NFT_CT_STATUS || dlen != 4 || op != NFT_CMP_NEQ ||
	    nftnl_expr_is_set(ld, NFTNL_EXPR_CT_DIR) || rf_mask32(f, &m) == -1 ||
	    memcmp(d, "\0\0\0\0", 4) != 0)
		return -1;
	rf_begin(f);
	if (m == IPS_DST_NAT)
		sb_add(f->s, "ct status dnat");
	else if (m == IPS_SRC_NAT)
		sb_add(f->s, "ct status snat");
	else
		sb_add(f->s, "ct status & 0x%x != 0", m);
	return 0;
}

/* exthdr ... exists, socket cgroupv2 level N ID. */
static int
rf_other(struct rf *f, const struct nftnl_expr *ld, const char *ln,
    uint32_t op, const unsigned char *d, uint32_t dlen)
{
	uint32_t u32 = 0, type, xop;
	uint64_t id;

	if (f->mask != NULL || op != NFT_CMP_EQ)
		return -1;
	if (strcmp(ln, "socket") == 0) {
		if (nftnl_expr_get_u32(ld, NFTNL_EXPR_SOCKET_KEY) !=
		    NFT_SOCKET_CGROUPV2 || dlen != 8)
			return -1;
		memcpy(&id, d, 8);
		rf_begin(f);
		sb_add(f->s, "socket cgroupv2 level %u %llu",
		    nftnl_expr_get_u32(ld, NFTNL_EXPR_SOCKET_LEVEL),
		    (unsigned long long)id);
		return 0;
	}
	if (dlen != 4 || !(nftnl_expr_get_u32(ld, NFTNL_EXPR_EXTHDR_FLAGS) &
	    NFT_EXTHDR_F_PRESENT))
		return -1;
	memcpy(&u32, d, 4);
	type = nftnl_expr_get_u8(ld, NFTNL_EXPR_EXTHDR_TYPE);
	xop = nftnl_expr_get_u32(ld, NFTNL_EXPR_EXTHDR_OP);
	if (xop == NFT_EXTHDR_OP_IPV6 && f->nfproto == NFPROTO_IPV6)
		rf_drop_dep(f, 1);
	if (xop == NFT_EXTHDR_OP_IPV4 && f->nfproto == NFPROTO_IPV4)
		rf_drop_dep(f, 1);
	rf_begin(f);
	if (xop == NFT_EXTHDR_OP_IPV6 && type == IPPROTO_ROUTING)
		sb_add(f->s, "exthdr rt");
	else if (xop == NFT_EXTHDR_OP_IPV4 && type == IPV4_OPT_LSRR)
		sb_add(f->s, "ip option lsrr");
	else if (xop == NFT_EXTHDR_OP_IPV4 && type == IPV4_OPT_SSRR)
		sb_add(f->s, "ip option ssrr");
	else
		sb_add(f->s, "exthdr op %u type %u", xop, type);
	sb_add(f->s, " %s", u32 == 1 ? "exists" : u32 == 0 ? "missing" : "?");
	return 0;
}

/* ip6 daddr PREFIX/LEN: a 16-byte load, a mask, a cmp. */
static int
rf_prefix(struct rf *f, const struct nftnl_expr *ld, uint32_t op,
    const unsigned char *d, uint32_t dlen)
{
	uint32_t mlen = 0, i, bits = 0;
	const unsigned char *m = nftnl_expr_get(f->mask,
	    NFTNL_EXPR_BITWISE_MASK, &mlen);
	char addr[INET6_ADDRSTRLEN];

	if (m == NULL || mlen != 16 || dlen != 16 || op != NFT_CMP_EQ ||
	    f->nfproto != NFPROTO_IPV6 ||
	    nftnl_expr_get_u32(ld, NFTNL_EXPR_PAYLOAD_BASE) !=
	    NFT_PAYLOAD_NETWORK_HEADER ||
	    nftnl_expr_get_u32(ld, NFTNL_EXPR_PAYLOAD_OFFSET) != 24 ||
	    nftnl_expr_get_u32(ld, NFTNL_EXPR_PAYLOAD_LEN) != 16)
		return -1;
	for (i = 0; i < 128; i++) {
		if (!(m[i / 8] & (0x80 >> (i % 8))))
			break;
		bits++;
	}
	rf_drop_dep(f, 1);
	rf_begin(f);
	sb_add(f->s, "ip6 daddr %s/%u", inet_ntop(AF_INET6, d, addr,
	    sizeof(addr)) ? addr : "?", bits);
	return 0;
}

/* A cmp against what reg 1 holds. Returns 0 when rendered, -1 when the
 * shape is not one it knows (the caller falls back to raw notation). */
static int
rf_match(struct rf *f, const struct nftnl_expr *cmp)
{
	const struct nftnl_expr *ld = f->load;
	const char *ln = nftnl_expr_get_str(ld, NFTNL_EXPR_NAME);
	uint32_t op = nftnl_expr_get_u32(cmp, NFTNL_EXPR_CMP_OP), dlen = 0;
	const unsigned char *d = nftnl_expr_get(cmp, NFTNL_EXPR_CMP_DATA, &dlen);
	uint32_t key, base, off, plen, u32 = 0;
	char addr[INET6_ADDRSTRLEN], name[48];
	const char *nm;

	if (d == NULL || ln == NULL ||
	    nftnl_expr_get_u32(cmp, NFTNL_EXPR_CMP_SREG) != NFT_REG_1)
		return -1;
	if (dlen == 4)
		memcpy(&u32, d, 4);
	if (strcmp(ln, "ct") == 0 && rf_ct(f, ld, op, d, dlen) == 0)
		return 0;
	if (strcmp(ln, "ct") == 0) {
		key = nftnl_expr_get_u32(ld, NFTNL_EXPR_CT_KEY);
		if (key != NFT_CT_STATE || dlen != 4)
			return -1;
		if (f->mask != NULL) {
			uint32_t m = 0;

			if (rf_mask32(f, &m) == -1 || u32 != 0 ||
			    (op != NFT_CMP_NEQ && op != NFT_CMP_EQ))
				return -1;
			rf_begin(f);
			sb_add(f->s, "ct state %s", op == NFT_CMP_EQ ? "!= " : "");
			ctstate(f->s, m);
		} else {
			rf_begin(f);
			sb_add(f->s, "ct state %s", cmpop(op));
			ctstate(f->s, u32);
		}
		return 0;
	}
	if (strcmp(ln, "rt") == 0) {
		key = nftnl_expr_get_u32(ld, NFTNL_EXPR_RT_KEY);
		if (f->mask != NULL || op != NFT_CMP_EQ ||
		    !((key == NFT_RT_NEXTHOP4 && dlen == 4) ||
		    (key == NFT_RT_NEXTHOP6 && dlen == 16)))
			return -1;
		rf_begin(f);
		sb_add(f->s, "rt %s nexthop %s", dlen == 4 ? "ip" : "ip6",
		    inet_ntop(dlen == 4 ? AF_INET : AF_INET6, d, addr,
		    sizeof(addr)) ? addr : "?");
		return 0;
	}
	if (strcmp(ln, "fib") == 0) {
		if (f->mask != NULL || dlen != 4 || (op != NFT_CMP_EQ &&
		    op != NFT_CMP_NEQ) ||
		    nftnl_expr_get_u32(ld, NFTNL_EXPR_FIB_RESULT) !=
		    NFT_FIB_RESULT_ADDRTYPE ||
		    nftnl_expr_get_u32(ld, NFTNL_EXPR_FIB_FLAGS) !=
		    NFTA_FIB_F_SADDR)
			return -1;
		rf_begin(f);
		sb_add(f->s, "fib saddr type %s", cmpop(op));
		if (u32 == RTN_LOCAL)
			sb_add(f->s, "local");
		else
			sb_add(f->s, "%u", u32);
		return 0;
	}
	if (strcmp(ln, "exthdr") == 0 || strcmp(ln, "socket") == 0)
		return rf_other(f, ld, ln, op, d, dlen);
	if (strcmp(ln, "payload") == 0 && f->mask != NULL)
		return rf_prefix(f, ld, op, d, dlen);
	if (f->mask != NULL)
		return -1;
	if (strcmp(ln, "meta") == 0) {
		key = nftnl_expr_get_u32(ld, NFTNL_EXPR_META_KEY);
		if ((nm = metaname(key)) == NULL)
			return -1;
		if ((key == NFT_META_NFPROTO || key == NFT_META_L4PROTO) &&
		    op == NFT_CMP_EQ && dlen == 1 && f->ndep < 2) {
			const char *v = key == NFT_META_L4PROTO ? l4name(d[0]) :
			    d[0] == NFPROTO_IPV4 ? "ipv4" :
			    d[0] == NFPROTO_IPV6 ? "ipv6" : NULL;

			if (v != NULL)
				snprintf(f->dep[f->ndep], sizeof(f->dep[0]),
				    "%s %s", nm, v);
			else
				snprintf(f->dep[f->ndep], sizeof(f->dep[0]),
				    "%s %u", nm, d[0]);
			f->depkind[f->ndep++] = key == NFT_META_NFPROTO ? 1 : 2;
			if (key == NFT_META_NFPROTO)
				f->nfproto = d[0];
			else
				f->l4proto = d[0];
			return 0;
		}
		rf_begin(f);
		sb_add(f->s, "%s %s", nm, cmpop(op));
		if ((key == NFT_META_OIF || key == NFT_META_IIF) && dlen == 4 &&
		    u32 == LOOPBACK_IFINDEX)
			sb_add(f->s, "\"lo\"");
		else if ((key == NFT_META_OIFNAME || key == NFT_META_IIFNAME)) {
			sb_add(f->s, "\"");
			sb_safe(f->s, (const char *)d, dlen);
			sb_add(f->s, "\"");
		} else if (dlen == 4 && key != NFT_META_MARK)
			sb_add(f->s, "%u", u32);
		else if (dlen == 1 && key == NFT_META_L4PROTO && l4name(d[0]))
			sb_add(f->s, "%s", l4name(d[0]));
		else
			sb_hex(f->s, d, dlen);
		return 0;
	}
	if (strcmp(ln, "payload") != 0)
		return -1;
	base = nftnl_expr_get_u32(ld, NFTNL_EXPR_PAYLOAD_BASE);
	off = nftnl_expr_get_u32(ld, NFTNL_EXPR_PAYLOAD_OFFSET);
	plen = nftnl_expr_get_u32(ld, NFTNL_EXPR_PAYLOAD_LEN);
	if (plen != dlen)
		return -1;
	name[0] = '\0';
	if (base == NFT_PAYLOAD_NETWORK_HEADER) {
		if (f->nfproto == NFPROTO_IPV4 && plen == 4 &&
		    (off == 12 || off == 16))
			snprintf(name, sizeof(name), "ip %s",
			    off == 12 ? "saddr" : "daddr");
		else if (f->nfproto == NFPROTO_IPV6 && plen == 16 &&
		    (off == 8 || off == 24))
			snprintf(name, sizeof(name), "ip6 %s",
			    off == 8 ? "saddr" : "daddr");
		else if (f->nfproto == NFPROTO_IPV6 && plen == 1 && off == 7) {
			rf_drop_dep(f, 1);
			rf_begin(f);
			sb_add(f->s, "ip6 hoplimit %s%u", cmpop(op), d[0]);
			return 0;
		} else if (f->nfproto == NFPROTO_IPV6 && plen == 2 &&
		    off == 24 && op == NFT_CMP_EQ) {
			unsigned char a[16] = { d[0], d[1] };

			rf_drop_dep(f, 1);
			rf_begin(f);
			sb_add(f->s, "ip6 daddr %s/16", inet_ntop(AF_INET6, a,
			    addr, sizeof(addr)) ? addr : "?");
			return 0;
		}
		if (name[0] != '\0') {
			rf_drop_dep(f, 1);
			rf_begin(f);
			sb_add(f->s, "%s %s%s", name, cmpop(op),
			    inet_ntop(plen == 4 ? AF_INET : AF_INET6, d, addr,
			    sizeof(addr)) ? addr : "?");
			return 0;
		}
	} else if (base == NFT_PAYLOAD_TRANSPORT_HEADER) {
		nm = l4name((unsigned int)f->l4proto);
		if ((f->l4proto == IPPROTO_TCP || f->l4proto == IPPROTO_UDP) &&
		    plen == 2 && (off == 0 || off == 2)) {
			uint16_t port;

			memcpy(&port, d, 2);
			rf_drop_dep(f, 2);
			rf_begin(f);
			sb_add(f->s, "%s %s %s%u", nm, off == 0 ? "sport" :
			    "dport", cmpop(op), (unsigned int)ntohs(port));
			return 0;
		}
		if ((f->l4proto == IPPROTO_ICMPV6 || f->l4proto == IPPROTO_ICMP)
		    && plen == 1 && off == 0) {
			rf_drop_dep(f, 2);
			if ((f->l4proto == IPPROTO_ICMPV6 &&
			    f->nfproto == NFPROTO_IPV6) ||
			    (f->l4proto == IPPROTO_ICMP &&
			    f->nfproto == NFPROTO_IPV4))
				rf_drop_dep(f, 1);
			rf_deps(f);
			/* A range is two cmps on one load: ">= LO" becomes
			 * "LO-HI" when "<= HI" follows (unless truncated). */
			if (f->range && op == NFT_CMP_LTE &&
			    f->range_at + 3 <= f->s->off &&
			    memcmp(f->s->buf + f->range_at, ">= ", 3) == 0) {
				memmove(f->s->buf + f->range_at,
				    f->s->buf + f->range_at + 3,
				    f->s->off - f->range_at - 3 + 1);
				f->s->off -= 3;
				f->range = 0;
				sb_add(f->s, "-%u", d[0]);
				return 0;
			}
			f->range = 0;
			rf_word(f);
			sb_add(f->s, "%s type ", nm);
			if (op == NFT_CMP_GTE) {
				f->range = 1;
				f->range_at = f->s->off;
				f->last = ld;
			}
			sb_add(f->s, "%s", cmpop(op));
			if (f->l4proto == IPPROTO_ICMPV6 &&
			    d[0] == ND_NEIGHBOR_SOLICIT)
				sb_add(f->s, "nd-neighbor-solicit");
			else if (f->l4proto == IPPROTO_ICMPV6 &&
			    d[0] == ND_NEIGHBOR_ADVERT)
				sb_add(f->s, "nd-neighbor-advert");
			else
				sb_add(f->s, "%u", d[0]);
			return 0;
		}
	}
	rf_begin(f);
	sb_add(f->s, "@%s,%u,%u %s", base == NFT_PAYLOAD_NETWORK_HEADER ? "nh" :
	    base == NFT_PAYLOAD_TRANSPORT_HEADER ? "th" : "ll", off * 8,
	    plen * 8, cmpop(op));
	sb_hex(f->s, d, dlen);
	return 0;
}

/* Whether e loads something into reg 1 (the matches nftrules builds). */
static int
loads_reg1(const struct nftnl_expr *e, const char *n)
{
	static const struct {
		const char	*name;
		uint16_t	 dreg;
	} loads[] = {
		{ "meta", NFTNL_EXPR_META_DREG },
		{ "payload", NFTNL_EXPR_PAYLOAD_DREG },
		{ "ct", NFTNL_EXPR_CT_DREG },
		{ "exthdr", NFTNL_EXPR_EXTHDR_DREG },
		{ "socket", NFTNL_EXPR_SOCKET_DREG },
		{ "rt", NFTNL_EXPR_RT_DREG },
		{ "fib", NFTNL_EXPR_FIB_DREG },
	};
	size_t i;

	for (i = 0; i < sizeof(loads) / sizeof(loads[0]); i++)
		if (strcmp(n, loads[i].name) == 0)
			return nftnl_expr_is_set(e, loads[i].dreg) &&
			    nftnl_expr_get_u32(e, loads[i].dreg) == NFT_REG_1;
	return 0;
}

size_t
nftfmt_rule(const struct nftnl_rule *r, char *buf, size_t len)
{
	struct sb s = { buf, len, 0 };
	struct nftstmt_regs regs;
	struct rf f;
	struct nftnl_expr_iter *it;
	const struct nftnl_expr *e;
	char text[320];
	const char *n;

	if (buf == NULL || len == 0)
		return 0;
	buf[0] = '\0';
	memset(&regs, 0, sizeof(regs));
	memset(&f, 0, sizeof(f));
	f.s = &s;
	f.nfproto = f.l4proto = -1;
	if (r == NULL || (it = nftnl_expr_iter_create(r)) == NULL)
		return 0;
	while ((e = nftnl_expr_iter_next(it)) != NULL) {
		n = nftnl_expr_get_str(e, NFTNL_EXPR_NAME);
		if (n == NULL)
			n = "";
		if (f.load == NULL && loads_reg1(e, n)) {
			f.last = NULL;
			f.load = e;
			continue;
		}
		if (f.load != NULL && f.mask == NULL &&
		    strcmp(n, "bitwise") == 0 &&
		    nftnl_expr_get_u32(e, NFTNL_EXPR_BITWISE_SREG) == NFT_REG_1 &&
		    nftnl_expr_get_u32(e, NFTNL_EXPR_BITWISE_DREG) == NFT_REG_1 &&
		    nftnl_expr_get_u32(e, NFTNL_EXPR_BITWISE_OP) ==
		    NFT_BITWISE_BOOL) {
			f.mask = e;
			continue;
		}
		if (f.load == NULL && f.last != NULL && strcmp(n, "cmp") == 0)
			f.load = f.last;	/* the other end of a range */
		f.last = NULL;
		if (f.load != NULL && strcmp(n, "cmp") == 0 &&
		    rf_match(&f, e) == 0) {
			f.load = f.mask = NULL;
			continue;
		}
		rf_flush(&f);
		switch (nftstmt_render(e, &regs, text, sizeof(text))) {
		case 1:
			rf_word(&f);
			sb_add(&s, "%s", text);
			break;
		case 0:
			break;
		default:
			rf_raw(&f, e);
		}
	}
	rf_flush(&f);
	nftnl_expr_iter_destroy(it);
	return s.off;
}

const char *
nftfmt_hook(uint32_t hook)
{
	switch (hook) {
	case NF_INET_PRE_ROUTING:	return "prerouting";
	case NF_INET_LOCAL_IN:		return "input";
	case NF_INET_FORWARD:		return "forward";
	case NF_INET_LOCAL_OUT:		return "output";
	case NF_INET_POST_ROUTING:	return "postrouting";
	case NF_INET_INGRESS:		return "ingress";
	}
	return "?";
}

/* netdev and arp number their hooks from 0 as well: the same number is
 * another hook there. */
const char *
nftfmt_hook_in(uint32_t family, uint32_t hook)
{
	if (family == NFPROTO_NETDEV)
		return hook == NF_NETDEV_INGRESS ? "ingress" :
		    hook == NF_NETDEV_EGRESS ? "egress" : "?";
	if (family == NFPROTO_ARP)
		return hook == 0 ? "input" : hook == 1 ? "output" :
		    hook == 2 ? "forward" : "?";
	return nftfmt_hook(hook);
}

const char *
nftfmt_family(uint32_t family)
{
	switch (family) {
	case NFPROTO_INET:	return "inet";
	case NFPROTO_IPV4:	return "ip";
	case NFPROTO_IPV6:	return "ip6";
	case NFPROTO_ARP:	return "arp";
	case NFPROTO_BRIDGE:	return "bridge";
	case NFPROTO_NETDEV:	return "netdev";
	}
	return "?";
}

const char *
nftfmt_policy(uint32_t p)
{
	return p == NF_ACCEPT ? "accept" : p == NF_DROP ? "drop" : "?";
}

size_t
nftfmt_chain(const struct nftnl_chain *c, char *buf, size_t len)
{
	struct sb s = { buf, len, 0 };
	const char *name, *type;

	if (buf == NULL || len == 0)
		return 0;
	buf[0] = '\0';
	if (c == NULL)
		return 0;
	name = nftnl_chain_get_str(c, NFTNL_CHAIN_NAME);
	type = nftnl_chain_get_str(c, NFTNL_CHAIN_TYPE);
	sb_safe(&s, name != NULL ? name : "?", 256);
	if (!nftnl_chain_is_set(c, NFTNL_CHAIN_HOOKNUM)) {
		sb_add(&s, " { }");
		return s.off;
	}
	sb_add(&s, " { type ");
	sb_safe(&s, type != NULL ? type : "?", 64);
	sb_add(&s, " hook %s priority %d;",
	    nftfmt_hook_in(nftnl_chain_is_set(c, NFTNL_CHAIN_FAMILY) ?
	    nftnl_chain_get_u32(c, NFTNL_CHAIN_FAMILY) : NFPROTO_INET,
	    nftnl_chain_get_u32(c, NFTNL_CHAIN_HOOKNUM)),
	    (int)nftnl_chain_get_s32(c, NFTNL_CHAIN_PRIO));
	if (nftnl_chain_is_set(c, NFTNL_CHAIN_POLICY))
		sb_add(&s, " policy %s;",
		    nftfmt_policy(nftnl_chain_get_u32(c, NFTNL_CHAIN_POLICY)));
	sb_add(&s, " }");
	return s.off;
}

size_t
nftfmt_safe(const char *s, char *buf, size_t len)
{
	struct sb b = { buf, len, 0 };

	if (buf == NULL || len == 0)
		return 0;
	buf[0] = '\0';
	sb_safe(&b, s != NULL ? s : "", len);
	return b.off;
}
