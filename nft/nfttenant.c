/* The guard-side table of a tenant-mode guard (nft/nfttenant.h) as
 * netlink: its sets and their elements (nft/nfttext.h says which), the
 * rules, and the batch that installs them all (framed by nft/nftbatch.h).
 * The rules stay the same few whatever the number of tenants: the tenants
 * are set elements. */
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
#include <libnftnl/udata.h>

#include "nft/nftbatch.h"
#include "nft/nfttenant.h"
#include "nft/nfttext.h"
#include "nft/nftx.h"
#include "policy/tspec.h"
#include "util/errbuf.h"
#include "util/mutant.h"

#define IFN		NFTTEXT_IFN
/* nft's enum byteorder: BYTEORDER_HOST_ENDIAN. */
#define NFTTENANT_BYTEORDER_HOST	1
#define PRIO_RAW	(-300)
#define PRIO_DSTNAT_EARLY	(-110)	/* dstnat - 10, as --transparent-in */
/* One message's room: a chunk of the largest elements (~52 bytes each
 * with their attribute headers) and the set's names fit well inside. */
#define MSG_ROOM	(NFTTENANT_CHUNK * 64 + 1024)

/* What nft itself records for a set of a plain ifname key: the key's
 * byte order (host), without which `nft list` prints its names as "".
 * Only nft reads it; the kernel keeps it as is, verify ignores it. */
static int
set_userdata(struct nftnl_set *set, int s)
{
	struct nftnl_udata_buf *u;
	int rc = 0;

	if (nfttext_sets[s].key_type != NFTX_T_IFNAME)
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
	const struct nfttext_setdef *d = &nfttext_sets[s];
	struct nftnl_set *set = nftnl_set_alloc();

	if (set == NULL)
		return NULL;
	nftnl_set_set_u32(set, NFTNL_SET_FAMILY, NFPROTO_INET);
	nftnl_set_set_u32(set, NFTNL_SET_KEY_TYPE, d->key_type);
	nftnl_set_set_u32(set, NFTNL_SET_KEY_LEN, d->key_len);
	nftnl_set_set_u32(set, NFTNL_SET_FLAGS, d->data_len ? NFT_SET_MAP : 0);
	if (d->data_len) {
		nftnl_set_set_u32(set, NFTNL_SET_DATA_TYPE, d->data_type);
		nftnl_set_set_u32(set, NFTNL_SET_DATA_LEN, d->data_len);
	}
	/* The kernel wants an id for a set made in a batch (rules may name
	 * it by id); ours name it by name. */
	nftnl_set_set_u32(set, NFTNL_SET_ID, (uint32_t)s + 1);
	if (nftnl_set_set_str(set, NFTNL_SET_TABLE, NFTTENANT_TABLE) < 0 ||
	    nftnl_set_set_str(set, NFTNL_SET_NAME, d->name) < 0 ||
	    set_userdata(set, s) == -1) {
		nftnl_set_free(set);
		return NULL;
	}
	return set;
}

/* Adds keys [from, to) of set s to set. -1 on allocation failure. */
static int
set_add_keys(struct nftnl_set *set, const struct nfttext_keys *k, int s,
    size_t from, size_t to)
{
	const struct nfttext_setdef *d = &nfttext_sets[s];
	const unsigned char *rec;
	struct nftnl_set_elem *e;
	size_t i;

	for (i = from; i < to; i++) {
		rec = nfttext_key(k, s, i);
		if ((e = nftnl_set_elem_alloc()) == NULL)
			return -1;
		if (nftnl_set_elem_set(e, NFTNL_SET_ELEM_KEY, rec,
		    d->key_len) < 0 || (d->data_len &&
		    nftnl_set_elem_set(e, NFTNL_SET_ELEM_DATA, rec + d->key_len,
		    d->data_len) < 0)) {
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

/* The fields loaded into consecutive registers, then a lookup in set s;
 * the way nft compiles `a . b @set`. */
static void
concat_lookup(struct nftx_rule *b, const struct field *f, size_t n, int s)
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
	nftx_add(b, nftx_lookup(nfttext_sets[s].name, NFT_REG_1));
}

/* A rule: [nfproto F] [l4proto P] fields @set s [counter] verdict. */
static int
rule_lookup(struct nftnl_chain *c, const char *chain, int nfproto, int l4,
    const struct field *f, size_t n, int s, int counter, uint32_t verdict)
{
	struct nftx_rule b;

	nftx_start(&b, chain);
	if (nfproto != 0)
		nftx_meta_u8(&b, NFT_META_NFPROTO, (uint8_t)nfproto);
	if (l4 != 0)
		nftx_meta_u8(&b, NFT_META_L4PROTO, (uint8_t)l4);
	concat_lookup(&b, f, n, s);
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
	concat_lookup(&b, f, 1, NFTTEXT_LINKS6);
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

	if (rule_lookup(c, ch, NFPROTO_IPV4, 0, p4, 2, NFTTEXT_PEERS4, 0,
	    NF_ACCEPT) == -1 ||
	    rule_lookup(c, ch, NFPROTO_IPV6, 0, p6, 2, NFTTEXT_PEERS6, 0,
	    NF_ACCEPT) == -1 ||
	    rule_nd(c, ch, 1) == -1)
		return -1;
#ifndef EG_MUTANT_NO_ANTISPOOF
	/* The anti-spoofing rule: whatever came in on a tenant link and was
	 * not accepted above (that link's peer, or ND from link-local). */
	if (rule_lookup(c, ch, 0, 0, link, 1, NFTTEXT_LINKS, 1,
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
	    rule_lookup(c, ch, NFPROTO_IPV4, 0, l4, 4, NFTTEXT_LISTEN4, 1,
	    NF_ACCEPT) == -1 ||
	    rule_lookup(c, ch, NFPROTO_IPV6, 0, l6, 4, NFTTEXT_LISTEN6, 1,
	    NF_ACCEPT) == -1 ||
	    rule_lookup(c, ch, 0, 0, link, 1, NFTTEXT_LINKS, 1,
	    NF_DROP) == -1)
		return -1;
	return 0;
}

static int
chain_forward(struct nftnl_chain *c)
{
	const struct field in[] = { F_IIF }, out[] = { F_OIF };

	if (rule_lookup(c, "forward", 0, 0, in, 1, NFTTEXT_LINKS, 1,
	    NF_DROP) == -1 ||
	    rule_lookup(c, "forward", 0, 0, out, 1, NFTTEXT_LINKS, 1,
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
	uint32_t alen = nfttext_sets[s].data_len - 4;
	struct nftx_rule b;

	nftx_start(&b, chain);
	nftx_meta_u8(&b, NFT_META_NFPROTO, (uint8_t)nfproto);
	nftx_meta_u8(&b, NFT_META_L4PROTO, IPPROTO_TCP);
	nftx_add(&b, nftx_counter());
	nftx_add(&b, nftx_meta(NFT_META_IIFNAME));
	nftx_add(&b, nftx_lookup_map(nfttext_sets[s].name, NFT_REG_1,
	    NFT_REG_1));
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
	    NFTTEXT_OWN4, 0, NF_ACCEPT) == -1 ||
	    rule_lookup(c, ch, NFPROTO_IPV6, IPPROTO_TCP, o6, 2,
	    NFTTEXT_OWN6, 0, NF_ACCEPT) == -1 ||
	    rule_dnat_map(c, ch, NFPROTO_IPV4, NFTTEXT_TPROXY4) == -1 ||
	    rule_dnat_map(c, ch, NFPROTO_IPV6, NFTTEXT_TPROXY6) == -1)
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
chains_build(const struct nfttext_keys *k, char *err, size_t errlen)
{
	struct nftnl_chain_list *l = nftnl_chain_list_alloc();
	int transparent = k->n[NFTTEXT_TPROXY4] + k->n[NFTTEXT_TPROXY6] > 0;
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
	struct nfttext_keys k;
	int s;

	*sets = NULL;
	*chains = NULL;
	if (nfttext_keys_build(v, n, &k, err, errlen) == -1)
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
	nfttext_keys_free(&k);
	if (*chains == NULL)
		goto bad;
	return 0;
nomem:
	errbuf_set(err, errlen, "out of memory");
	nfttext_keys_free(&k);
bad:
	if (*sets != NULL)
		nftnl_set_list_free(*sets);
	*sets = NULL;
	return -1;
}

/* ---- the batch ------------------------------------------------------ */

/* The set, then its elements NFTTENANT_CHUNK to a message. */
static int
batch_set(struct nftbatch *w, const struct nfttext_keys *k, int s)
{
	const char *name = nfttext_sets[s].name;
	struct nftnl_set *set;
	struct nlmsghdr *nlh;
	size_t from, to;
	char *p;

	if ((p = nftbatch_room(w)) == NULL)
		return -1;
	if ((set = set_new(s)) == NULL)
		return errbuf_fail(w->err, w->errlen, "out of memory");
	nlh = nftnl_nlmsg_build_hdr(p, NFT_MSG_NEWSET, NFPROTO_INET,
	    NLM_F_CREATE | NLM_F_ACK, w->seq);
	nftnl_set_nlmsg_build_payload(nlh, set);
	nftnl_set_free(set);
	if (nftbatch_commit(w, nlh, "set %s", name) == -1)
		return -1;
	for (from = 0; from < k->n[s]; from = to) {
		to = k->n[s] - from > NFTTENANT_CHUNK ? from + NFTTENANT_CHUNK :
		    k->n[s];
		if ((p = nftbatch_room(w)) == NULL)
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
		if (nftbatch_commit(w, nlh, "set %s elements %zu-%zu", name,
		    from + 1, to) == -1)
			return -1;
	}
	return 0;
}

int
nfttenant_build_apply(const struct tspec *v, size_t n, uint32_t seq,
    struct nfttenant_batch *b, char *err, size_t errlen)
{
	struct nftbatch w = { .grow = 1, .room = MSG_ROOM,
	    .max_msgs = NFTTENANT_MAX_MSGS, .err = err, .errlen = errlen };
	struct nftnl_chain_list *chains = NULL;
	struct nfttext_keys k;
	int s, rc = -1;

	memset(b, 0, sizeof(*b));
	if (nfttext_keys_build(v, n, &k, err, errlen) == -1)
		return -1;
	if ((chains = chains_build(&k, err, errlen)) == NULL)
		goto out;
	b->seq_first = seq;
	if ((w.what = calloc(NFTTENANT_MAX_MSGS, sizeof(*w.what))) == NULL) {
		errbuf_set(err, errlen, "out of memory");
		goto out;
	}
	if (nftbatch_begin(&w, seq) == -1 ||
	    nftbatch_replace_table(&w, NFTTENANT_TABLE) == -1)
		goto out;
	for (s = 0; s < NFTTENANT_NSETS; s++)
		if (batch_set(&w, &k, s) == -1)
			goto out;
	if (nftbatch_chains(&w, chains) == -1 || nftbatch_end(&w) == -1)
		goto out;
	rc = 0;
out:
	if (w.what != NULL) {
		b->buf = w.buf;
		b->len = rc == 0 ? w.len : 0;
		b->cap = w.size;
		b->seq_first = w.seq_first;
		b->seq_last = w.seq_last;
		b->nmsgs = w.nmsgs;
		b->what = w.what;
	}
	if (chains != NULL)
		nftnl_chain_list_free(chains);
	nfttext_keys_free(&k);
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
	return nftbatch_what(b->seq_first, b->seq_last, b->nmsgs,
	    (const char *)b->what, seq);
}

char *
nfttenant_text(const struct tspec *v, size_t n)
{
	return nfttext_table(v, n);
}
