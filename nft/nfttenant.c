/* The guard-side table of a tenant-mode guard (nft/nfttenant.h): the
 * tenants become set elements, the rules stay the same few whatever the
 * number of tenants (a lookup in a hash set costs the same for 1 or
 * 4096). Key layouts are nft's own, so `nft list` reads them back:
 * ifname 16 bytes, ipv4_addr 4, ipv6_addr 16, inet_proto 1 and
 * inet_service 2 (network order), each field padded to 4 bytes. */
#include <arpa/inet.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <linux/netfilter.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/netfilter/nfnetlink.h>

#include <libmnl/libmnl.h>
#include <libnftnl/chain.h>
#include <libnftnl/common.h>
#include <libnftnl/expr.h>
#include <libnftnl/rule.h>
#include <libnftnl/set.h>
#include <libnftnl/table.h>
#include <libnftnl/udata.h>

#include "nft/nftfmt.h"
#include "nft/nftrules.h"
#include "nft/nfttenant.h"
#include "nft/nftx.h"
#include "policy/tspec.h"
#include "util/errbuf.h"
#include "util/mutant.h"

#define T_IPADDR	NFTX_T_IPADDR
#define T_IP6ADDR	NFTX_T_IP6ADDR
#define T_INET_PROTO	NFTX_T_INET_PROTO
#define T_INET_SERVICE	NFTX_T_INET_SERVICE
#define T_IFNAME	NFTX_T_IFNAME
#define T_BITS		NFTX_T_BITS
#define CAT2(a, b)		(((uint32_t)(a) << T_BITS) | (b))
#define CAT4(a, b, c, d)	((CAT2(CAT2(a, b), c) << T_BITS) | (d))

#define IFN	16	/* ifname: IFNAMSIZ bytes, NUL padded */
/* nft's enum byteorder: BYTEORDER_HOST_ENDIAN. */
#define NFTTENANT_BYTEORDER_HOST	1
#define PRIO_RAW	(-300)
#define PRIO_DSTNAT_EARLY	(-110)	/* dstnat - 10, as --transparent-in */
/* One message's room: a chunk of the largest elements (~52 bytes each
 * with their attribute headers) and the set's names fit well inside. */
#define MSG_ROOM	(NFTTENANT_CHUNK * 64 + 1024)

enum { S_LINKS, S_LINKS6, S_PEERS4, S_PEERS6, S_LISTEN4, S_LISTEN6,
	S_OWN4, S_OWN6, S_TPROXY4, S_TPROXY6 };

/* A set, or a map when data_len is not 0. */
static const struct setdef {
	const char	*name;
	const char	*type;		/* as nft writes it */
	uint32_t	 key_type;
	uint32_t	 key_len;
	uint32_t	 data_type;
	uint32_t	 data_len;
} setdefs[NFTTENANT_NSETS] = {
	{ "links", "ifname", T_IFNAME, IFN, 0, 0 },
	{ "links6", "ifname", T_IFNAME, IFN, 0, 0 },
	{ "peers4", "ifname . ipv4_addr", CAT2(T_IFNAME, T_IPADDR), IFN + 4,
	  0, 0 },
	{ "peers6", "ifname . ipv6_addr", CAT2(T_IFNAME, T_IP6ADDR), IFN + 16,
	  0, 0 },
	{ "listen4", "ifname . ipv4_addr . inet_proto . inet_service",
	  CAT4(T_IFNAME, T_IPADDR, T_INET_PROTO, T_INET_SERVICE), IFN + 12,
	  0, 0 },
	{ "listen6", "ifname . ipv6_addr . inet_proto . inet_service",
	  CAT4(T_IFNAME, T_IP6ADDR, T_INET_PROTO, T_INET_SERVICE), IFN + 24,
	  0, 0 },
	/* Transparent tenants only: their own address (not redirected), and
	 * where the rest of their TCP goes. */
	{ "own4", "ifname . ipv4_addr", CAT2(T_IFNAME, T_IPADDR), IFN + 4,
	  0, 0 },
	{ "own6", "ifname . ipv6_addr", CAT2(T_IFNAME, T_IP6ADDR), IFN + 16,
	  0, 0 },
	{ "tproxy4", "ifname : ipv4_addr . inet_service", T_IFNAME, IFN,
	  CAT2(T_IPADDR, T_INET_SERVICE), 8 },
	{ "tproxy6", "ifname : ipv6_addr . inet_service", T_IFNAME, IFN,
	  CAT2(T_IP6ADDR, T_INET_SERVICE), 20 },
};

#define REC_LEN(s)	(setdefs[s].key_len + setdefs[s].data_len)

/* The elements of every set, one after another, REC_LEN bytes each: the
 * key, then a map's data. */
struct keys {
	unsigned char	*k[NFTTENANT_NSETS];
	size_t		 n[NFTTENANT_NSETS];
};

/* The listener ports of t, each with its protocol; returns how many. */
static size_t
listeners(const struct tspec *t, uint8_t proto[4], uint16_t port[4])
{
	size_t m = 0;

	proto[m] = IPPROTO_TCP;
	port[m++] = t->port;
	if (t->dns_port != 0) {
		proto[m] = IPPROTO_TCP;
		port[m++] = t->dns_port;
		proto[m] = IPPROTO_UDP;
		port[m++] = t->dns_port;
	}
	if (t->transparent_port != 0) {
		proto[m] = IPPROTO_TCP;
		port[m++] = t->transparent_port;
	}
	return m;
}

static unsigned char *
key_put(struct keys *k, int set)
{
	unsigned char *p = k->k[set] + k->n[set]++ * REC_LEN(set);

	memset(p, 0, REC_LEN(set));
	return p;
}

static void
keys_free(struct keys *k)
{
	int i;

	for (i = 0; i < NFTTENANT_NSETS; i++)
		free(k->k[i]);
	memset(k, 0, sizeof(*k));
}

static int
keys_build(const struct tspec *v, size_t n, struct keys *k, char *err,
    size_t errlen)
{
	uint8_t proto[4];
	uint16_t port[4], be;
	unsigned char *p;
	size_t i, j, m, alen;
	int s, v6;

	memset(k, 0, sizeof(*k));
	if (n > TSPEC_MAX)
		return errbuf_fail(err, errlen, "more than %d tenants", TSPEC_MAX);
	for (s = 0; s < NFTTENANT_NSETS; s++) {
		m = (s == S_LISTEN4 || s == S_LISTEN6) ? 4 * n : n;
		if ((k->k[s] = calloc(m > 0 ? m : 1, REC_LEN(s))) == NULL) {
			keys_free(k);
			return errbuf_fail(err, errlen, "out of memory");
		}
	}
	for (i = 0; i < n; i++) {
		v6 = v[i].family == AF_INET6;
		alen = v6 ? 16 : 4;
		memcpy(key_put(k, S_LINKS), v[i].link, strlen(v[i].link));
		if (v6)
			memcpy(key_put(k, S_LINKS6), v[i].link, strlen(v[i].link));
		p = key_put(k, v6 ? S_PEERS6 : S_PEERS4);
		memcpy(p, v[i].link, strlen(v[i].link));
		memcpy(p + IFN, v[i].peer, alen);
		m = listeners(&v[i], proto, port);
		for (j = 0; j < m; j++) {
			p = key_put(k, v6 ? S_LISTEN6 : S_LISTEN4);
			memcpy(p, v[i].link, strlen(v[i].link));
			memcpy(p + IFN, v[i].addr, alen);
			p[IFN + alen] = proto[j];
			be = htons(port[j]);
			memcpy(p + IFN + alen + 4, &be, sizeof(be));
		}
		if (v[i].transparent_port == 0)
			continue;
		p = key_put(k, v6 ? S_OWN6 : S_OWN4);
		memcpy(p, v[i].link, strlen(v[i].link));
		memcpy(p + IFN, v[i].addr, alen);
		p = key_put(k, v6 ? S_TPROXY6 : S_TPROXY4);
		memcpy(p, v[i].link, strlen(v[i].link));
		memcpy(p + IFN, v[i].addr, alen);
		be = htons(v[i].transparent_port);
		memcpy(p + IFN + alen, &be, sizeof(be));
	}
	return 0;
}

/* What nft itself records for a set of a plain ifname key: the key's
 * byte order (host), without which `nft list` prints its names as "".
 * Only nft reads it; the kernel keeps it as is, verify ignores it. */
static int
set_userdata(struct nftnl_set *set, int s)
{
	struct nftnl_udata_buf *u;
	int rc = 0;

	if (setdefs[s].key_type != T_IFNAME)
		return 0;
	if ((u = nftnl_udata_buf_alloc(64)) == NULL)
		return -1;
	if (!nftnl_udata_put_u32(u, NFTNL_UDATA_SET_KEYBYTEORDER,
	    NFTTENANT_BYTEORDER_HOST) ||
	    nftnl_set_set_data(set, NFTNL_SET_USERDATA, nftnl_udata_buf_data(u),
	    nftnl_udata_buf_len(u)) < 0)
		rc = -1;
	nftnl_udata_buf_free(u);
	return rc;
}

/* A set (no elements yet) of the table. */
static struct nftnl_set *
set_new(int s)
{
	struct nftnl_set *set = nftnl_set_alloc();

	if (set == NULL)
		return NULL;
	nftnl_set_set_u32(set, NFTNL_SET_FAMILY, NFPROTO_INET);
	nftnl_set_set_u32(set, NFTNL_SET_KEY_TYPE, setdefs[s].key_type);
	nftnl_set_set_u32(set, NFTNL_SET_KEY_LEN, setdefs[s].key_len);
	nftnl_set_set_u32(set, NFTNL_SET_FLAGS, setdefs[s].data_len ?
	    NFT_SET_MAP : 0);
	if (setdefs[s].data_len) {
		nftnl_set_set_u32(set, NFTNL_SET_DATA_TYPE, setdefs[s].data_type);
		nftnl_set_set_u32(set, NFTNL_SET_DATA_LEN, setdefs[s].data_len);
	}
	/* The kernel wants an id for a set made in a batch (rules may name
	 * it by id); ours name it by name. */
	nftnl_set_set_u32(set, NFTNL_SET_ID, (uint32_t)s + 1);
	if (nftnl_set_set_str(set, NFTNL_SET_TABLE, NFTTENANT_TABLE) < 0 ||
	    nftnl_set_set_str(set, NFTNL_SET_NAME, setdefs[s].name) < 0 ||
	    set_userdata(set, s) == -1) {
		nftnl_set_free(set);
		return NULL;
	}
	return set;
}

/* Adds keys [from, to) of set s to set. -1 on allocation failure. */
static int
set_add_keys(struct nftnl_set *set, const struct keys *k, int s,
    size_t from, size_t to)
{
	const unsigned char *rec;
	struct nftnl_set_elem *e;
	size_t i;

	for (i = from; i < to; i++) {
		rec = k->k[s] + i * REC_LEN(s);
		if ((e = nftnl_set_elem_alloc()) == NULL)
			return -1;
		if (nftnl_set_elem_set(e, NFTNL_SET_ELEM_KEY, rec,
		    setdefs[s].key_len) < 0 || (setdefs[s].data_len &&
		    nftnl_set_elem_set(e, NFTNL_SET_ELEM_DATA,
		    rec + setdefs[s].key_len, setdefs[s].data_len) < 0)) {
			nftnl_set_elem_free(e);
			return -1;
		}
		nftnl_set_elem_add(set, e);
	}
	return 0;
}

/* ---- rules ---------------------------------------------------------- */

/* One field of a concatenated key: a meta key, or len bytes of a header. */
struct field {
	uint32_t	meta;		/* 0: a payload */
	uint32_t	base, off, len;
};

#define F_IIF	{ NFT_META_IIFNAME, 0, 0, IFN }
#define F_OIF	{ NFT_META_OIFNAME, 0, 0, IFN }
#define F_L4	{ NFT_META_L4PROTO, 0, 0, 1 }
#define F_SADDR4 { 0, NFT_PAYLOAD_NETWORK_HEADER, 12, 4 }
#define F_SADDR6 { 0, NFT_PAYLOAD_NETWORK_HEADER, 8, 16 }
#define F_DADDR4 { 0, NFT_PAYLOAD_NETWORK_HEADER, 16, 4 }
#define F_DADDR6 { 0, NFT_PAYLOAD_NETWORK_HEADER, 24, 16 }
#define F_DPORT	{ 0, NFT_PAYLOAD_TRANSPORT_HEADER, 2, 2 }

/* The fields loaded into consecutive registers, then a lookup in set;
 * the way nft compiles `a . b @set`. */
static void
concat_lookup(struct nftx_rule *b, const struct field *f, size_t n,
    const char *set)
{
	uint32_t off = 0;
	size_t i;

	for (i = 0; i < n; i++) {
		uint32_t reg = nftx_concat_reg(off);

		if (f[i].meta != 0)
			nftx_add(b, nftx_meta_reg(f[i].meta, reg));
		else
			nftx_add(b, nftx_payload_reg(f[i].base, f[i].off,
			    f[i].len, reg));
		off += (f[i].len + 3) / 4 * 4;
	}
	nftx_add(b, nftx_lookup(set, NFT_REG_1));
}

/* A rule: [nfproto F] [l4proto P] fields @set [counter] verdict. */
static int
rule_lookup(struct nftnl_chain *c, const char *chain, int nfproto, int l4,
    const struct field *f, size_t n, const char *set, int counter,
    uint32_t verdict)
{
	struct nftx_rule b;

	nftx_start(&b, chain);
	if (nfproto != 0)
		nftx_meta_u8(&b, NFT_META_NFPROTO, (uint8_t)nfproto);
	if (l4 != 0)
		nftx_meta_u8(&b, NFT_META_L4PROTO, (uint8_t)l4);
	concat_lookup(&b, f, n, set);
	if (counter)
		nftx_add(&b, nftx_counter());
	nftx_add(&b, nftx_verdict(verdict));
	return nftx_finish(&b, c);
}

/* iifname @links6 [ip6 saddr fe80::/10] ip6 hoplimit 255 icmpv6 type
 * 135-136 accept: neighbour solicitation and advertisement only, as on
 * every other table of this project (docs/nft.md "Neighbour
 * discovery"); on prerouting from link-local sources only, which is
 * where a peer's own solicitations come from before it has an address. */
static int
rule_nd(struct nftnl_chain *c, const char *chain, int linklocal)
{
	static const unsigned char ll[16] = { 0xfe, 0x80 };
	static const unsigned char mask[16] = { 0xff, 0xc0 };
	const struct field f[] = { F_IIF };
	struct nftx_rule b;

	nftx_start(&b, chain);
	concat_lookup(&b, f, 1, setdefs[S_LINKS6].name);
	nftx_nd(&b, NFTX_ND_SADDR, linklocal ? ll : NULL, mask, 16);
	nftx_add(&b, nftx_verdict(NF_ACCEPT));
	return nftx_finish(&b, c);
}

static int
chain_prerouting(struct nftnl_chain *c)
{
	const char *ch = "prerouting";
	const struct field p4[] = { F_IIF, F_SADDR4 }, p6[] = { F_IIF, F_SADDR6 };
	const struct field link[] = { F_IIF };

	if (rule_lookup(c, ch, NFPROTO_IPV4, 0, p4, 2, setdefs[S_PEERS4].name, 0,
	    NF_ACCEPT) == -1 ||
	    rule_lookup(c, ch, NFPROTO_IPV6, 0, p6, 2, setdefs[S_PEERS6].name, 0,
	    NF_ACCEPT) == -1 ||
	    rule_nd(c, ch, 1) == -1)
		return -1;
#ifndef EG_MUTANT_NO_ANTISPOOF
	/* The anti-spoofing rule: whatever came in on a tenant link and was
	 * not accepted above (that link's peer, or ND from link-local). */
	if (rule_lookup(c, ch, 0, 0, link, 1, setdefs[S_LINKS].name, 1,
	    NF_DROP) == -1)
		return -1;
#else
	(void)link;
#endif
	return 0;
}

static int
chain_input(struct nftnl_chain *c)
{
	const char *ch = "input";
	const struct field l4[] = { F_IIF, F_DADDR4, F_L4, F_DPORT };
	const struct field l6[] = { F_IIF, F_DADDR6, F_L4, F_DPORT };
	const struct field link[] = { F_IIF };

	if (rule_nd(c, ch, 0) == -1 ||
	    rule_lookup(c, ch, NFPROTO_IPV4, 0, l4, 4, setdefs[S_LISTEN4].name, 1,
	    NF_ACCEPT) == -1 ||
	    rule_lookup(c, ch, NFPROTO_IPV6, 0, l6, 4, setdefs[S_LISTEN6].name, 1,
	    NF_ACCEPT) == -1 ||
	    rule_lookup(c, ch, 0, 0, link, 1, setdefs[S_LINKS].name, 1,
	    NF_DROP) == -1)
		return -1;
	return 0;
}

static int
chain_forward(struct nftnl_chain *c)
{
	const struct field in[] = { F_IIF }, out[] = { F_OIF };

	if (rule_lookup(c, "forward", 0, 0, in, 1, setdefs[S_LINKS].name, 1,
	    NF_DROP) == -1 ||
	    rule_lookup(c, "forward", 0, 0, out, 1, setdefs[S_LINKS].name, 1,
	    NF_DROP) == -1)
		return -1;
	return 0;
}

/* Transparent tenants (transparent_port set): TCP arriving on their link
 * for any address but their own goes to their transparent listener, as
 * `apply --transparent-in` does for one link: DNAT to the listener's own
 * address (not redirect, which picks the link's first address), so the
 * input chain sees it as the tenant's own address and port. */
static int
rule_dnat_map(struct nftnl_chain *c, const char *chain, int nfproto, int s)
{
	uint32_t alen = setdefs[s].data_len - 4;
	struct nftx_rule b;

	nftx_start(&b, chain);
	nftx_meta_u8(&b, NFT_META_NFPROTO, (uint8_t)nfproto);
	nftx_meta_u8(&b, NFT_META_L4PROTO, IPPROTO_TCP);
	nftx_add(&b, nftx_counter());
	nftx_add(&b, nftx_meta(NFT_META_IIFNAME));
	nftx_add(&b, nftx_lookup_map(setdefs[s].name, NFT_REG_1, NFT_REG_1));
	nftx_add(&b, nftx_dnat_regs(nfproto == NFPROTO_IPV4 ? AF_INET : AF_INET6,
	    NFT_REG_1, nftx_concat_reg(alen)));
	return nftx_finish(&b, c);
}

static int
chain_nat(struct nftnl_chain *c)
{
	const char *ch = "nat_prerouting";
	const struct field o4[] = { F_IIF, F_DADDR4 }, o6[] = { F_IIF, F_DADDR6 };

	if (rule_lookup(c, ch, NFPROTO_IPV4, IPPROTO_TCP, o4, 2,
	    setdefs[S_OWN4].name, 0, NF_ACCEPT) == -1 ||
	    rule_lookup(c, ch, NFPROTO_IPV6, IPPROTO_TCP, o6, 2,
	    setdefs[S_OWN6].name, 0, NF_ACCEPT) == -1 ||
	    rule_dnat_map(c, ch, NFPROTO_IPV4, S_TPROXY4) == -1 ||
	    rule_dnat_map(c, ch, NFPROTO_IPV6, S_TPROXY6) == -1)
		return -1;
	return 0;
}

/* The nftx builders name table egress_guard; this one is another. */
static int
retable(struct nftnl_chain *c)
{
	struct nftnl_rule_iter *it;
	struct nftnl_rule *r;
	int rc = 0;

	if (nftnl_chain_set_str(c, NFTNL_CHAIN_TABLE, NFTTENANT_TABLE) < 0 ||
	    (it = nftnl_rule_iter_create(c)) == NULL)
		return -1;
	while ((r = nftnl_rule_iter_next(it)) != NULL)
		if (nftnl_rule_set_str(r, NFTNL_RULE_TABLE, NFTTENANT_TABLE) < 0)
			rc = -1;
	nftnl_rule_iter_destroy(it);
	return rc;
}

/* The nat chain only when a tenant is transparent: a nat chain turns
 * connection tracking on for every packet of the namespace, and a full
 * conntrack table would refuse every tenant's new connections. */
static const struct chaindef {
	const char	*name;
	const char	*type;
	uint32_t	 hook;
	int32_t		 prio;
	int		 transparent;
	int		(*rules)(struct nftnl_chain *);
} chaindefs[] = {
	{ "prerouting", "filter", NF_INET_PRE_ROUTING, PRIO_RAW, 0,
	  chain_prerouting },
	{ "nat_prerouting", "nat", NF_INET_PRE_ROUTING, PRIO_DSTNAT_EARLY, 1,
	  chain_nat },
	{ "input", "filter", NF_INET_LOCAL_IN, 0, 0, chain_input },
	{ "forward", "filter", NF_INET_FORWARD, 0, 0, chain_forward },
};
#define NCHAINS	(sizeof(chaindefs) / sizeof(chaindefs[0]))

static struct nftnl_chain_list *
chains_build(const struct keys *k, char *err, size_t errlen)
{
	struct nftnl_chain_list *l = nftnl_chain_list_alloc();
	int transparent = k->n[S_TPROXY4] + k->n[S_TPROXY6] > 0;
	struct nftnl_chain *c;
	size_t i;

	for (i = 0; l != NULL && i < NCHAINS; i++) {
		if (chaindefs[i].transparent && !transparent)
			continue;
		c = nftx_chain(chaindefs[i].name, chaindefs[i].type, chaindefs[i].hook,
		    chaindefs[i].prio, NF_ACCEPT);
		if (c == NULL)
			break;
		nftnl_chain_list_add_tail(c, l);
		if (chaindefs[i].rules(c) == -1 || retable(c) == -1)
			break;
	}
	if (l == NULL || i < NCHAINS) {
		if (l != NULL)
			nftnl_chain_list_free(l);
		errbuf_set(err, errlen, "out of memory");
		return NULL;
	}
	return l;
}

int
nfttenant_expected(const struct tspec *v, size_t n,
    struct nftnl_set_list **sets, struct nftnl_chain_list **chains,
    char *err, size_t errlen)
{
	struct nftnl_set *set;
	struct keys k;
	int s;

	*sets = NULL;
	*chains = NULL;
	if (keys_build(v, n, &k, err, errlen) == -1)
		return -1;
	if ((*sets = nftnl_set_list_alloc()) == NULL)
		goto nomem;
	for (s = 0; s < NFTTENANT_NSETS; s++) {
		if ((set = set_new(s)) == NULL)
			goto nomem;
		nftnl_set_list_add_tail(set, *sets);
		if (set_add_keys(set, &k, s, 0, k.n[s]) == -1)
			goto nomem;
	}
	*chains = chains_build(&k, err, errlen);
	keys_free(&k);
	if (*chains == NULL)
		goto bad;
	return 0;
nomem:
	errbuf_set(err, errlen, "out of memory");
	keys_free(&k);
bad:
	if (*sets != NULL)
		nftnl_set_list_free(*sets);
	*sets = NULL;
	return -1;
}

/* ---- the batch ------------------------------------------------------ */

struct tw {
	struct nfttenant_batch	*b;
	uint32_t		 seq;
	char			*err;
	size_t			 errlen;
};

/* Room for one more message of at most MSG_ROOM bytes, zeroed. */
static char *
tw_room(struct tw *w, int acked)
{
	struct nfttenant_batch *b = w->b;
	size_t cap;
	char *nb;

	if (acked && b->nmsgs >= NFTTENANT_MAX_MSGS) {
		errbuf_set(w->err, w->errlen, "more than %d messages in one "
		    "batch", NFTTENANT_MAX_MSGS);
		return NULL;
	}
	if (b->cap - b->len < MSG_ROOM) {
		cap = b->cap * 2 + MSG_ROOM;
		if ((nb = realloc(b->buf, cap)) == NULL) {
			errbuf_set(w->err, w->errlen, "out of memory");
			return NULL;
		}
		b->buf = nb;
		b->cap = cap;
	}
	memset(b->buf + b->len, 0, MSG_ROOM);
	return b->buf + b->len;
}

static int
tw_commit(struct tw *w, const struct nlmsghdr *nlh, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int
tw_commit(struct tw *w, const struct nlmsghdr *nlh, const char *fmt, ...)
{
	struct nfttenant_batch *b = w->b;
	va_list ap;

	if (nlh->nlmsg_len > MSG_ROOM)
		return errbuf_fail(w->err, w->errlen, "a message of %u bytes, "
		    "over the %d reserved", (unsigned int)nlh->nlmsg_len,
		    MSG_ROOM);
	if (fmt != NULL) {
		va_start(ap, fmt);
		vsnprintf(b->what[b->nmsgs++], NFTTENANT_WHAT_MAX, fmt, ap);
		va_end(ap);
	}
	b->len += MNL_ALIGN(nlh->nlmsg_len);
	w->seq++;
	return 0;
}

static int
tw_begin(struct tw *w, struct nfttenant_batch *b, uint32_t seq)
{
	char *p;

	memset(b, 0, sizeof(*b));
	w->b = b;
	w->seq = seq;
	b->seq_first = seq;
	if ((b->what = calloc(NFTTENANT_MAX_MSGS, sizeof(*b->what))) == NULL)
		return errbuf_fail(w->err, w->errlen, "out of memory");
	if ((p = tw_room(w, 0)) == NULL)
		return -1;
	return tw_commit(w, nftnl_batch_begin(p, w->seq), NULL);
}

static int
tw_end(struct tw *w)
{
	char *p;

	if ((p = tw_room(w, 0)) == NULL)
		return -1;
	w->b->seq_last = w->seq;
	return tw_commit(w, nftnl_batch_end(p, w->seq), NULL);
}

static int
tw_table(struct tw *w, uint16_t type, uint16_t flags, const char *what)
{
	struct nlmsghdr *nlh;
	char *p;

	if ((p = tw_room(w, 1)) == NULL)
		return -1;
	if ((nlh = nftrules_table_msg(p, NFTTENANT_TABLE, type, flags,
	    w->seq)) == NULL)
		return errbuf_fail(w->err, w->errlen, "out of memory");
	return tw_commit(w, nlh, "table inet " NFTTENANT_TABLE " (%s)", what);
}

/* The set, then its elements NFTTENANT_CHUNK to a message. */
static int
tw_set(struct tw *w, const struct keys *k, int s)
{
	struct nftnl_set *set;
	struct nlmsghdr *nlh;
	size_t from, to;
	char *p;
	int rc;

	if ((p = tw_room(w, 1)) == NULL)
		return -1;
	if ((set = set_new(s)) == NULL)
		return errbuf_fail(w->err, w->errlen, "out of memory");
	nlh = nftnl_nlmsg_build_hdr(p, NFT_MSG_NEWSET, NFPROTO_INET,
	    NLM_F_CREATE | NLM_F_ACK, w->seq);
	nftnl_set_nlmsg_build_payload(nlh, set);
	nftnl_set_free(set);
	if (tw_commit(w, nlh, "set %s", setdefs[s].name) == -1)
		return -1;
	for (from = 0; from < k->n[s]; from = to) {
		to = k->n[s] - from > NFTTENANT_CHUNK ? from + NFTTENANT_CHUNK :
		    k->n[s];
		if ((p = tw_room(w, 1)) == NULL)
			return -1;
		if ((set = set_new(s)) == NULL ||
		    set_add_keys(set, k, s, from, to) == -1) {
			if (set != NULL)
				nftnl_set_free(set);
			return errbuf_fail(w->err, w->errlen, "out of memory");
		}
		nlh = nftnl_nlmsg_build_hdr(p, NFT_MSG_NEWSETELEM, NFPROTO_INET,
		    NLM_F_CREATE | NLM_F_ACK, w->seq);
		nftnl_set_elems_nlmsg_build_payload(nlh, set);
		nftnl_set_free(set);
		rc = tw_commit(w, nlh, "set %s elements %zu-%zu",
		    setdefs[s].name, from + 1, to);
		if (rc == -1)
			return -1;
	}
	return 0;
}

static int
tw_chains(struct tw *w, struct nftnl_chain_list *chains)
{
	struct nftnl_chain_list_iter *ci;
	struct nftnl_rule_iter *ri;
	struct nftnl_chain *c;
	struct nftnl_rule *r;
	struct nlmsghdr *nlh;
	char text[NFTTENANT_WHAT_MAX], *p;
	const char *name;
	unsigned int i;
	int pass, rc = 0;

	/* Pass 0 the chains, pass 1 their rules. */
	for (pass = 0; pass < 2 && rc == 0; pass++) {
		if ((ci = nftnl_chain_list_iter_create(chains)) == NULL)
			return errbuf_fail(w->err, w->errlen, "out of memory");
		while (rc == 0 && (c = nftnl_chain_list_iter_next(ci)) != NULL) {
			name = nftnl_chain_get_str(c, NFTNL_CHAIN_NAME);
			if (pass == 0) {
				if ((p = tw_room(w, 1)) == NULL) {
					rc = -1;
					break;
				}
				nlh = nftnl_nlmsg_build_hdr(p, NFT_MSG_NEWCHAIN,
				    NFPROTO_INET, NLM_F_CREATE | NLM_F_ACK, w->seq);
				nftnl_chain_nlmsg_build_payload(nlh, c);
				rc = tw_commit(w, nlh, "chain %s", name);
				continue;
			}
			if ((ri = nftnl_rule_iter_create(c)) == NULL) {
				rc = errbuf_fail(w->err, w->errlen, "out of memory");
				break;
			}
			for (i = 1; rc == 0 && (r = nftnl_rule_iter_next(ri)) != NULL;
			    i++) {
				if ((p = tw_room(w, 1)) == NULL) {
					rc = -1;
					break;
				}
				nlh = nftnl_nlmsg_build_hdr(p, NFT_MSG_NEWRULE,
				    NFPROTO_INET, NLM_F_CREATE | NLM_F_APPEND |
				    NLM_F_ACK, w->seq);
				nftnl_rule_nlmsg_build_payload(nlh, r);
				nftfmt_rule(r, text, sizeof(text));
				rc = tw_commit(w, nlh, "%s rule #%u (%s)", name, i,
				    text);
			}
			nftnl_rule_iter_destroy(ri);
		}
		nftnl_chain_list_iter_destroy(ci);
	}
	return rc;
}

int
nfttenant_build_apply(const struct tspec *v, size_t n, uint32_t seq,
    struct nfttenant_batch *b, char *err, size_t errlen)
{
	struct tw w = { .err = err, .errlen = errlen };
	struct nftnl_chain_list *chains = NULL;
	struct keys k;
	int s, rc = -1;

	memset(b, 0, sizeof(*b));
	if (keys_build(v, n, &k, err, errlen) == -1)
		return -1;
	if ((chains = chains_build(&k, err, errlen)) == NULL)
		goto out;
	if (tw_begin(&w, b, seq) == -1 ||
	    tw_table(&w, NFT_MSG_NEWTABLE, NLM_F_CREATE, "add") == -1 ||
	    tw_table(&w, NFT_MSG_DELTABLE, 0, "delete old") == -1 ||
	    tw_table(&w, NFT_MSG_NEWTABLE, NLM_F_CREATE, "add new") == -1)
		goto out;
	for (s = 0; s < NFTTENANT_NSETS; s++)
		if (tw_set(&w, &k, s) == -1)
			goto out;
	if (tw_chains(&w, chains) == -1 || tw_end(&w) == -1)
		goto out;
	rc = 0;
out:
	if (chains != NULL)
		nftnl_chain_list_free(chains);
	keys_free(&k);
	if (rc == -1)
		b->len = 0;
	return rc;
}

void
nfttenant_batch_free(struct nfttenant_batch *b)
{
	if (b == NULL)
		return;
	free(b->buf);
	free(b->what);
	memset(b, 0, sizeof(*b));
}

const char *
nfttenant_batch_what(const struct nfttenant_batch *b, uint32_t seq)
{
	if (b == NULL)
		return "unknown message";
	if (seq == b->seq_first)
		return "the batch as a whole";
	if (seq == b->seq_last)
		return "batch end";
	if (seq > b->seq_first && seq < b->seq_last &&
	    seq - b->seq_first - 1 < b->nmsgs)
		return b->what[seq - b->seq_first - 1];
	return "unknown message";
}

/* ---- text ----------------------------------------------------------- */

struct sb {
	char	*s;
	size_t	 len, cap;
	int	 bad;
};

static void sb_add(struct sb *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void
sb_add(struct sb *b, const char *fmt, ...)
{
	va_list ap;
	size_t cap;
	char *ns;
	int n;

	for (;;) {
		if (b->bad)
			return;
		va_start(ap, fmt);
		n = vsnprintf(b->s + b->len, b->cap - b->len, fmt, ap);
		va_end(ap);
		if (n < 0) {
			b->bad = 1;
			return;
		}
		if ((size_t)n < b->cap - b->len) {
			b->len += (size_t)n;
			return;
		}
		cap = b->cap * 2 + (size_t)n + 1;
		if ((ns = realloc(b->s, cap)) == NULL) {
			b->bad = 1;
			return;
		}
		b->s = ns;
		b->cap = cap;
	}
}

/* One element of set s as nft writes it. */
static void
text_elem(struct sb *b, int s, const unsigned char *rec)
{
	char a[INET6_ADDRSTRLEN];
	int v6 = s == S_PEERS6 || s == S_LISTEN6 || s == S_OWN6 ||
	    s == S_TPROXY6;
	size_t alen = v6 ? 16 : 4;
	const unsigned char *p = rec + IFN;
	uint16_t port;

	sb_add(b, "\"%.*s\"", IFN, (const char *)rec);
	if (s == S_LINKS || s == S_LINKS6)
		return;
	inet_ntop(v6 ? AF_INET6 : AF_INET, p, a, sizeof(a));
	sb_add(b, " %s %s", setdefs[s].data_len ? ":" : ".", a);
	if (s == S_PEERS4 || s == S_PEERS6 || s == S_OWN4 || s == S_OWN6)
		return;
	if (s == S_LISTEN4 || s == S_LISTEN6) {
		sb_add(b, " . %s", p[alen] == IPPROTO_TCP ? "tcp" : "udp");
		p += 4;
	}
	memcpy(&port, p + alen, sizeof(port));
	sb_add(b, " . %u", (unsigned int)ntohs(port));
}

char *
nfttenant_text(const struct tspec *v, size_t n)
{
	struct sb b = { NULL, 0, 0, 0 };
	struct keys k;
	size_t i;
	int s;

	if (keys_build(v, n, &k, NULL, 0) == -1)
		return NULL;
	sb_add(&b, "table inet %s {\n", NFTTENANT_TABLE);
	for (s = 0; s < NFTTENANT_NSETS; s++) {
		sb_add(&b, "\t%s %s {\n\t\ttype %s\n", setdefs[s].data_len ?
		    "map" : "set", setdefs[s].name, setdefs[s].type);
		for (i = 0; i < k.n[s]; i++) {
			sb_add(&b, i == 0 ? "\t\telements = { " : ",\n\t\t\t     ");
			text_elem(&b, s, k.k[s] + i * REC_LEN(s));
		}
		sb_add(&b, "%s\t}\n\n", k.n[s] > 0 ? " }\n" : "");
	}
	sb_add(&b, "\tchain prerouting {\n"
	    "\t\ttype filter hook prerouting priority raw; policy accept;\n"
	    "\t\tiifname . ip saddr @peers4 accept\n"
	    "\t\tiifname . ip6 saddr @peers6 accept\n"
	    "\t\tiifname @links6 ip6 saddr fe80::/10 ip6 hoplimit 255 "
	    "icmpv6 type 135-136 accept\n"
#ifndef EG_MUTANT_NO_ANTISPOOF
	    "\t\tiifname @links counter drop\n"
#endif
	    "\t}\n\n");
	if (k.n[S_TPROXY4] + k.n[S_TPROXY6] > 0)
		sb_add(&b, "\tchain nat_prerouting {\n"
		    "\t\ttype nat hook prerouting priority dstnat - 10; "
		    "policy accept;\n"
		    "\t\tmeta nfproto ipv4 meta l4proto tcp iifname . ip daddr "
		    "@own4 accept\n"
		    "\t\tmeta nfproto ipv6 meta l4proto tcp iifname . ip6 daddr "
		    "@own6 accept\n"
		    "\t\tmeta nfproto ipv4 meta l4proto tcp counter dnat ip to "
		    "iifname map @tproxy4\n"
		    "\t\tmeta nfproto ipv6 meta l4proto tcp counter dnat ip6 to "
		    "iifname map @tproxy6\n"
		    "\t}\n\n");
	sb_add(&b, "\tchain input {\n"
	    "\t\ttype filter hook input priority filter; policy accept;\n"
	    "\t\tiifname @links6 ip6 hoplimit 255 icmpv6 type 135-136 accept\n"
	    "\t\tiifname . ip daddr . meta l4proto . th dport @listen4 "
	    "counter accept\n"
	    "\t\tiifname . ip6 daddr . meta l4proto . th dport @listen6 "
	    "counter accept\n"
	    "\t\tiifname @links counter drop\n"
	    "\t}\n\n"
	    "\tchain forward {\n"
	    "\t\ttype filter hook forward priority filter; policy accept;\n"
	    "\t\tiifname @links counter drop\n"
	    "\t\toifname @links counter drop\n"
	    "\t}\n}\n");
	keys_free(&k);
	if (b.bad) {
		free(b.s);
		return NULL;
	}
	return b.s;
}
