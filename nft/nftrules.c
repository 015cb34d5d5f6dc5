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

#define IPV4_OPT_LSRR		131
#define IPV4_OPT_SSRR		137
#define DNS_PORT		53

/* ---- rules ------------------------------------------------------------- */

/* Neighbour discovery (ICMPv6 135-136) with hop limit 255 towards dest
 * (len bytes compared after masking with mask; NULL mask: exact), accepted.
 * The kernel sends ND itself, with no socket and so no uid or cgroup to
 * exempt: without these no IPv6 packet reaches even an on-link neighbour.
 * The destination keeps them on the link: a router never forwards to
 * link-local or ff02::/16, and a guard address is a destination the table
 * opens anyway. dest NULL: any destination (input: they are for us);
 * iifname, when set, limits the rule to packets arriving there. */
/* Whether IPv6 address a is among the first n of l. */
static int
has_addr6(const struct nftcfg_addr *l, size_t n, const unsigned char *a)
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
rules_nd_out(struct nftnl_chain *c, const struct nftcfg *cfg)
{
	static const unsigned char ll[16] = { 0xfe, 0x80 };
	static const unsigned char llmask[16] = { 0xff, 0xc0 };
	static const unsigned char mc[2] = { 0xff, 0x02 };
	size_t i;

	if (nftx_rule_nd(c, "output", NULL, ll, llmask, 16) == -1 ||
	    nftx_rule_nd(c, "output", NULL, mc, NULL, sizeof(mc)) == -1)
		return -1;
	/* A neighbour soliciting from its global address (the guard host
	 * answering the workload) is answered at that address. */
	for (i = 0; i < cfg->nguards; i++)
		if (cfg->guards[i].family == AF_INET6 &&
		    !has_addr6(cfg->guards, i, cfg->guards[i].addr) &&
		    nftx_rule_nd(c, "output", NULL, cfg->guards[i].addr,
		    NULL, 16) == -1)
			return -1;
	for (i = 0; i < cfg->nvia; i++)
		if (cfg->via[i].family == AF_INET6 &&
		    !has_addr6(cfg->guards, cfg->nguards, cfg->via[i].addr) &&
		    nftx_rule_nd(c, "output", NULL, cfg->via[i].addr,
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
/* oif "lo" accept / iif "lo" accept, and in the nat chain (no rewrite). */
/* The guard's own traffic in the shared layout: by cgroup where it can be
 * (no uid change leaves a cgroup), else by uid. In the nat chain the same
 * accept means "not redirected". */
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
static int
rule_output(struct nftnl_chain *c, const struct nftcfg *cfg)
{
	size_t i;

	/* Loopback is open, but not for DNS: a resolver on loopback (Docker
	 * DNATs 127.0.0.11:53 to its embedded one) forwards queries out. Nor
	 * for any other DNAT: a redirected loopback connection goes wherever
	 * the nat rule sends it; only our own redirects to the transparent
	 * and DNS listeners are let through first. */
	if (rules_srcroute(c, "output") == -1 ||
	    rules_spoofed(c, "output") == -1 ||
	    nftx_rule_exempt(c, "output", cfg) == -1 ||
	    nfttransp_rules_redirected(c, cfg) == -1 ||
	    rule_lo_dns(c, IPPROTO_UDP) == -1 ||
	    rule_lo_dns(c, IPPROTO_TCP) == -1 || rule_lo_dns(c, 0) == -1 ||
	    rule_lo_docker_dns(c) == -1 ||
	    nftx_rule_lo(c, "output", NFT_META_OIF) == -1 ||
	    rules_nd_out(c, cfg) == -1)
		return -1;
	for (i = 0; i < cfg->nguards; i++)
		if (nftx_rule_guard(c, "output", NULL, &cfg->guards[i]) == -1)
			return -1;
	if (nfttransp_rules_via(c, cfg) == -1)
		return -1;
	return nftx_rules_reject(c, "output", NULL);
}

/* ct state established,related accept; iifname limits it to one link. */
static int
rule_input(struct nftnl_chain *c)
{
	if (rules_srcroute(c, "input") == -1 ||
	    nftx_rule_lo(c, "input", NFT_META_IIF) == -1 ||
	    nftx_rule_established(c, "input", NULL) == -1)
		return -1;
	return nftx_rule_nd(c, "input", NULL, NULL, NULL, 0);
}

/* What the table holds in the workload's namespace: output, input,
 * forward, all policy drop, and in the shared layout's transparent mode
 * the nat chain that redirects. The guard side's table is nfttransp's. */
struct nftnl_chain_list *
nftrules_expected(const struct nftcfg *cfg, char *err, size_t errlen)
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

/* ---- the batch --------------------------------------------------------- */

/* A writer into the caller's buffer that names messages in b->what. */
static void
batch_start(struct nftbatch *w, void *buf, size_t size,
    struct nftrules_batch *b, char *err, size_t errlen)
{
	memset(b, 0, sizeof(*b));
	memset(w, 0, sizeof(*w));
	w->buf = buf;
	w->size = size;
	w->room = NFTRULES_MSG_MAX;
	w->max_msgs = NFTRULES_MAX_MSGS;
	w->what = b->what;
	w->err = err;
	w->errlen = errlen;
}

/* The writer's record into b; nothing usable in the buffer unless rc is
 * 0. Returns rc. */
static int
batch_done(const struct nftbatch *w, struct nftrules_batch *b, int rc)
{
	b->len = rc == 0 ? w->len : 0;
	b->seq_first = w->seq_first;
	b->seq_last = w->seq_last;
	b->nmsgs = w->nmsgs;
	return rc;
}

int
nftrules_build_apply(const struct nftcfg *cfg, uint32_t seq,
    void *buf, size_t size, struct nftrules_batch *b, char *err,
    size_t errlen)
{
	struct nftnl_chain_list *chains;
	struct nftbatch w;
	int rc = -1;

	if (b == NULL)
		return errbuf_fail(err, errlen, "no batch record");
	if ((chains = nftrules_expected(cfg, err, errlen)) == NULL)
		return -1;
	batch_start(&w, buf, size, b, err, errlen);
	if (nftbatch_begin(&w, seq) == 0 &&
	    nftbatch_replace_table(&w, NFTCFG_TABLE) == 0 &&
	    nftbatch_chains(&w, chains) == 0 && nftbatch_end(&w) == 0)
		rc = 0;
	nftnl_chain_list_free(chains);
	return batch_done(&w, b, rc);
}

int
nftrules_build_remove(uint32_t seq, void *buf, size_t size,
    struct nftrules_batch *b, char *err, size_t errlen)
{
	return nftrules_build_remove_table(NFTCFG_TABLE, seq, buf, size, b,
	    err, errlen);
}

int
nftrules_build_remove_table(const char *name, uint32_t seq, void *buf,
    size_t size, struct nftrules_batch *b, char *err, size_t errlen)
{
	struct nftbatch w;
	int rc = -1;

	if (b == NULL)
		return errbuf_fail(err, errlen, "no batch record");
	batch_start(&w, buf, size, b, err, errlen);
	if (nftbatch_begin(&w, seq) == 0 &&
	    nftbatch_table(&w, name, NFT_MSG_DELTABLE, 0, "delete") == 0 &&
	    nftbatch_end(&w) == 0)
		rc = 0;
	return batch_done(&w, b, rc);
}

const char *
nftrules_batch_what(const struct nftrules_batch *b, uint32_t seq)
{
	if (b == NULL)
		return "unknown message";
	return nftbatch_what(b->seq_first, b->seq_last, b->nmsgs, b->what[0],
	    seq);
}
