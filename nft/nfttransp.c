/* Transparent mode's rules (nft/nfttransp.h). The same table, the same
 * batch and the same verify as the default-deny: nftrules_expected()
 * calls in here for the extra rules and chains. */
#include <arpa/inet.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include <linux/netfilter.h>
#include <linux/netfilter/nf_tables.h>

#include <libnftnl/chain.h>
#include <libnftnl/expr.h>
#include <libnftnl/rule.h>

#include "nft/nftcfg.h"
#include "nft/nfttransp.h"
#include "nft/nftx.h"
#include "util/ascii.h"
#include "util/errbuf.h"
#include "util/mutant.h"

#define NAT_OUTPUT	"nat_output"
#define NAT_PREROUTING	"nat_prerouting"

/* Where redirect sends what a local socket sent (nf_nat_redirect: the
 * output hook rewrites to 127.0.0.1 or ::1, whatever the listener). */
static const unsigned char lo4[4] = { 127, 0, 0, 1 };
static const unsigned char lo6[16] = { [15] = 1 };

static int
shared(const struct nftcfg *cfg)
{
	return cfg->in_ifname[0] == '\0' &&
	    (cfg->ntransparent > 0 || cfg->ndns > 0);
}

static int
via(const struct nftcfg *cfg)
{
	return cfg->nvia > 0 || cfg->via_ifname[0] != '\0';
}

/* Appends g to a list of at most one per family, IPv4 first. */
static int
add_per_family(struct nftcfg_addr *list, size_t *n,
    const struct nftcfg_addr *g, const char *opt, char *err,
    size_t errlen)
{
	if (*n > 0 && list[0].family == g->family)
		return errbuf_fail(err, errlen, "%s given twice for one "
		    "address family (one IPv4, one IPv6)", opt);
	if (*n > 0 && g->family == AF_INET) {
		list[1] = list[0];
		list[0] = *g;
	} else {
		list[*n] = *g;
	}
	(*n)++;
	return 0;
}

int
nfttransp_add_listener(struct nftcfg *cfg, int dns,
    const char *text, char *err, size_t errlen)
{
	const char *opt = dns ? "--dns-listen" : "--transparent";
	struct nftcfg_addr g;

	if (cfg == NULL)
		return errbuf_fail(err, errlen, "no configuration");
	if (nftcfg_parse_addr(text, dns ? "DNS listener" :
	    "transparent listener", &g, err, errlen) == -1)
		return -1;
	return dns ? add_per_family(cfg->dns, &cfg->ndns, &g, opt, err,
	    errlen) : add_per_family(cfg->transparent, &cfg->ntransparent, &g,
	    opt, err, errlen);
}

/* An interface name as the kernel takes it: 1-15 bytes, no '/', ':' or
 * space, not "." or ".."; here also nothing but [A-Za-z0-9_.@-], so it
 * prints as it is and cannot be an nft wildcard. */
static int
check_ifname(const char *s, const char *opt, char *err, size_t errlen)
{
	size_t i, n = strlen(s);

	if (n == 0 || n >= NFTCFG_IFNAME_MAX)
		return errbuf_fail(err, errlen, "%s: an interface name is 1-%d "
		    "characters", opt, NFTCFG_IFNAME_MAX - 1);
	if (strcmp(s, ".") == 0 || strcmp(s, "..") == 0)
		return errbuf_fail(err, errlen, "%s: not an interface name", opt);
	for (i = 0; i < n; i++)
		if (!ascii_is_alpha((unsigned char)s[i]) &&
		    !ascii_is_digit((unsigned char)s[i]) && s[i] != '_' &&
		    s[i] != '.' && s[i] != '-' && s[i] != '@')
			return errbuf_fail(err, errlen, "%s: an interface name "
			    "takes letters, digits and _ . - @ only", opt);
	return 0;
}

/* lo is never the workload's link: as --transparent-in, the guard side's
 * input chain would refuse what arrives on the guard's own loopback; as
 * --transparent-via, nothing the workload sends would match. */
static int
check_not_lo(const char *s, const char *opt, char *err, size_t errlen)
{
	if (strcmp(s, "lo") == 0)
		return errbuf_fail(err, errlen, "%s: lo is no link to a workload: "
		    "name the interface the workload's traffic crosses", opt);
	return 0;
}

/* Anywhere in 127.0.0.0/8, or ::1 (is_loopback below: the one address a
 * shared layout's redirect reaches). */
static int
in_loopback(const struct nftcfg_addr *g)
{
	static const unsigned char v6[16] = { [15] = 1 };

	return g->family == AF_INET ? g->addr[0] == 127 :
	    memcmp(g->addr, v6, 16) == 0;
}

int
nfttransp_set_via(struct nftcfg *cfg, const char *text,
    char *err, size_t errlen)
{
	struct nftcfg_addr g;
	char buf[64];
	const char *bad;
	size_t n;

	if (cfg == NULL || text == NULL)
		return errbuf_fail(err, errlen, "--transparent-via: no value");
	memset(&g, 0, sizeof(g));
	n = strlen(text);
	if (n >= 2 && n < sizeof(buf) && text[0] == '[' && text[n - 1] == ']') {
		memcpy(buf, text + 1, n - 2);
		buf[n - 2] = '\0';
	} else {
		snprintf(buf, sizeof(buf), "%s", n < sizeof(buf) ? text : "");
	}
	if (strchr(buf, ':') != NULL || strspn(buf, "0123456789.") ==
	    strlen(buf)) {
		g.family = strchr(buf, ':') != NULL ? AF_INET6 : AF_INET;
		if (inet_pton(g.family, buf, g.addr) != 1)
			return errbuf_fail(err, errlen, "--transparent-via: bad "
			    "next hop (an IPv4 or IPv6 literal, or an interface "
			    "name)");
		if ((bad = nftcfg_unusable(&g)) != NULL)
			return errbuf_fail(err, errlen, "--transparent-via: %s",
			    bad);
		if (in_loopback(&g))
			return errbuf_fail(err, errlen, "--transparent-via: a "
			    "loopback address is never a route's next hop: give "
			    "the guard's address on the workload's link");
		if (cfg->via_ifname[0] != '\0')
			return errbuf_fail(err, errlen, "--transparent-via: "
			    "give next-hop addresses or one interface, not both");
		return add_per_family(cfg->via, &cfg->nvia, &g,
		    "--transparent-via", err, errlen);
	}
	if (check_ifname(text, "--transparent-via", err, errlen) == -1 ||
	    check_not_lo(text, "--transparent-via", err, errlen) == -1)
		return -1;
	if (cfg->via_ifname[0] != '\0' || cfg->nvia > 0)
		return errbuf_fail(err, errlen, "--transparent-via: give "
		    "next-hop addresses or one interface, not both");
	snprintf(cfg->via_ifname, sizeof(cfg->via_ifname), "%s", text);
	return 0;
}

int
nfttransp_set_in(struct nftcfg *cfg, const char *ifname,
    char *err, size_t errlen)
{
	if (cfg == NULL || ifname == NULL)
		return errbuf_fail(err, errlen, "--transparent-in: no value");
	if (cfg->in_ifname[0] != '\0')
		return errbuf_fail(err, errlen, "--transparent-in given twice");
	if (check_ifname(ifname, "--transparent-in", err, errlen) == -1 ||
	    check_not_lo(ifname, "--transparent-in", err, errlen) == -1)
		return -1;
	snprintf(cfg->in_ifname, sizeof(cfg->in_ifname), "%s", ifname);
	return 0;
}

static int
is_loopback(const struct nftcfg_addr *g)
{
	return g->family == AF_INET ? memcmp(g->addr, lo4, 4) == 0 :
	    memcmp(g->addr, lo6, 16) == 0;
}

static int
any_loopback(const struct nftcfg_addr *l, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (l[i].family == AF_INET ? l[i].addr[0] == 127 :
		    memcmp(l[i].addr, lo6, 16) == 0)
			return 1;
	return 0;
}

static int
check_guard_side(const struct nftcfg *cfg, char *err,
    size_t errlen)
{
	if (cfg->ntransparent == 0)
		return errbuf_fail(err, errlen, "--transparent-in needs "
		    "--transparent IP:PORT (the guard's transparent listener)");
	if (cfg->has_exempt_uid || cfg->has_exempt_cgroup)
		return errbuf_fail(err, errlen, "--transparent-in (the guard's "
		    "namespace) takes no exemption: exemptions are for the "
		    "workload's namespace");
	if (via(cfg) || cfg->via_dns)
		return errbuf_fail(err, errlen, "--transparent-in (the guard's "
		    "namespace) and --transparent-via (the workload's) are for "
		    "two different namespaces");
	/* A packet that arrived on a link is not rewritten to loopback
	 * (that needs route_localnet, which opens 127/8 to the link). */
	if (any_loopback(cfg->transparent, cfg->ntransparent) ||
	    any_loopback(cfg->dns, cfg->ndns))
		return errbuf_fail(err, errlen, "--transparent-in: the "
		    "listeners must be on an address of the guard's namespace "
		    "other than loopback (the link's, or any other local one)");
	return 0;
}

static int
check_listeners(const struct nftcfg_addr *l, size_t n, const char *opt,
    char *err, size_t errlen)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!is_loopback(&l[i]))
			return errbuf_fail(err, errlen, "%s in the workload's "
			    "namespace (shared layout): the redirect goes to "
			    "127.0.0.1 or [::1], so the listener must be there",
			    opt);
	return 0;
}

int
nfttransp_check(const struct nftcfg *cfg, char *err, size_t errlen)
{
	if (cfg == NULL)
		return errbuf_fail(err, errlen, "no configuration");
	if (cfg->in_ifname[0] != '\0')
		return check_guard_side(cfg, err, errlen);
	if (cfg->nguards == 0)
		return errbuf_fail(err, errlen, "at least one guard address is "
		    "needed");
	if (cfg->via_dns && !via(cfg))
		return errbuf_fail(err, errlen, "--transparent-dns needs "
		    "--transparent-via");
	if (!shared(cfg))
		return 0;
	if (via(cfg))
		return errbuf_fail(err, errlen, "--transparent/--dns-listen "
		    "without --transparent-in are for the shared layout, "
		    "--transparent-via for the separate one: not both");
	if (!cfg->has_exempt_uid && !cfg->has_exempt_cgroup)
		return errbuf_fail(err, errlen, "--transparent/--dns-listen in "
		    "the workload's namespace (shared layout) need the guard's "
		    "exemption (--exempt-cgroup-of, --exempt-cgroup or "
		    "--exempt-uid): else its own connections are redirected to "
		    "itself");
	if (check_listeners(cfg->transparent, cfg->ntransparent,
	    "--transparent", err, errlen) == -1 ||
	    check_listeners(cfg->dns, cfg->ndns, "--dns-listen", err,
	    errlen) == -1)
		return -1;
	return 0;
}

/* ---- rules ------------------------------------------------------------- */

/* The start of a rule: on the guard side limited to what arrives on the
 * workload's link. */
static void
start(struct nftx_rule *b, const char *chain, const char *iifname)
{
	nftx_start(b, chain);
	if (iifname != NULL)
		nftx_ifname(b, NFT_META_IIFNAME, iifname);
}

static void
match_l4(struct nftx_rule *b, int family, uint8_t l4)
{
	nftx_meta_u8(b, NFT_META_NFPROTO, family == AF_INET ? NFPROTO_IPV4 :
	    NFPROTO_IPV6);
	nftx_meta_u8(b, NFT_META_L4PROTO, l4);
}

/* A flow our own nat rule sent to listener g, in the original direction:
 * the rewritten destination must be the listener's address and port
 * (guard side: arriving on iifname). No "oif lo" in the shared layout: the
 * output hook keeps the device the packet was first routed to (the
 * uplink), although the redirect has rerouted it to loopback. */
static int
rule_redirected(struct nftnl_chain *c, const char *chain,
    const char *iifname, const struct nftcfg_addr *g, uint8_t l4)
{
	struct nftx_rule b;

	start(&b, chain, iifname);
	nftx_ct_original(&b);
	nftx_ct_dnat(&b);
	nftx_dest(&b, g->family, g->addr, l4, g->port);
	nftx_count_verdict(&b, NF_ACCEPT);
	return nftx_finish(&b, c);
}

static int
rules_redirected(struct nftnl_chain *c, const char *chain,
    const char *iifname, const struct nftcfg *cfg)
{
	size_t i;

	for (i = 0; i < cfg->ntransparent; i++)
		if (rule_redirected(c, chain, iifname, &cfg->transparent[i],
		    IPPROTO_TCP) == -1)
			return -1;
	for (i = 0; i < cfg->ndns; i++)
		if (rule_redirected(c, chain, iifname, &cfg->dns[i],
		    IPPROTO_UDP) == -1 ||
		    rule_redirected(c, chain, iifname, &cfg->dns[i],
		    IPPROTO_TCP) == -1)
			return -1;
	return 0;
}

int
nfttransp_rules_redirected(struct nftnl_chain *c,
    const struct nftcfg *cfg)
{
	if (!shared(cfg))
		return 0;
	return rules_redirected(c, "output", NULL, cfg);
}

/* TCP, or UDP to port 53, leaving via the guard: the route's next hop is
 * the guard's address, or the packet leaves on the guard's link. */
static int
rule_via(struct nftnl_chain *c, const struct nftcfg *cfg,
    const struct nftcfg_addr *hop, int dns)
{
	struct nftx_rule b;

	nftx_start(&b, "output");
	if (hop == NULL)
		nftx_ifname(&b, NFT_META_OIFNAME, cfg->via_ifname);
	if (dns)
		nftx_dport(&b, IPPROTO_UDP, NFTTRANSP_DNS_PORT);
	else
		nftx_meta_u8(&b, NFT_META_L4PROTO, IPPROTO_TCP);
	if (hop != NULL) {
		nftx_add(&b, nftx_rt_nexthop(hop->family));
		nftx_add(&b, nftx_cmp(NFT_CMP_EQ, hop->addr,
		    hop->family == AF_INET ? 4 : 16));
	}
	nftx_count_verdict(&b, NF_ACCEPT);
	return nftx_finish(&b, c);
}

int
nfttransp_rules_via(struct nftnl_chain *c, const struct nftcfg *cfg)
{
	size_t i, n = cfg->via_ifname[0] != '\0' ? 1 : cfg->nvia;
	int dns;

	for (i = 0; i < n; i++)
		for (dns = 0; dns <= cfg->via_dns; dns++)
			if (rule_via(c, cfg, cfg->nvia > 0 ? &cfg->via[i] : NULL,
			    dns) == -1)
				return -1;
	return 0;
}

/* Redirect (workload side, to loopback) or DNAT (guard side, to the
 * listener's address) of l4 to g, port 53 only when dns. */
static int
rule_nat(struct nftnl_chain *c, const char *chain, const char *iifname,
    const struct nftcfg_addr *g, uint8_t l4, int dns)
{
	struct nftx_rule b;

	start(&b, chain, iifname);
	if (dns)
		nftx_dest(&b, g->family, NULL, l4, NFTTRANSP_DNS_PORT);
	else
		match_l4(&b, g->family, l4);
	nftx_add(&b, nftx_counter());
	if (iifname == NULL)
		nftx_redirect(&b, g->port);
	else
		nftx_dnat(&b, g->family, g->addr, g->port);
	return nftx_finish(&b, c);
}

static int
rules_nat_dns(struct nftnl_chain *c, const char *chain, const char *iifname,
    const struct nftcfg *cfg)
{
	size_t i;

	for (i = 0; i < cfg->ndns; i++)
		if (rule_nat(c, chain, iifname, &cfg->dns[i], IPPROTO_UDP,
		    1) == -1 || rule_nat(c, chain, iifname, &cfg->dns[i],
		    IPPROTO_TCP, 1) == -1)
			return -1;
	return 0;
}

static int
rules_nat_tcp(struct nftnl_chain *c, const char *chain, const char *iifname,
    const struct nftcfg *cfg)
{
	size_t i;

#ifdef EG_MUTANT_NFT_FORWARD
	/* Mutant: the guard side redirects nothing; its forward chain
	 * accepts instead (nfttransp_expected_guard). */
	if (iifname != NULL)
		return 0;
#endif
	for (i = 0; i < cfg->ntransparent; i++)
		if (rule_nat(c, chain, iifname, &cfg->transparent[i],
		    IPPROTO_TCP, 0) == -1)
			return -1;
	return 0;
}

static int
rules_guards(struct nftnl_chain *c, const char *chain, const char *iifname,
    const struct nftcfg *cfg)
{
	size_t i;

	for (i = 0; i < cfg->nguards; i++)
		if (nftx_rule_guard(c, chain, iifname,
		    &cfg->guards[i]) == -1)
			return -1;
	return 0;
}

/* Shared layout: the exempt guard is never redirected; DNS to any address
 * goes to the DNS listener (Docker's 127.0.0.11 included: this chain runs
 * before Docker's DNAT); other loopback traffic and the --guard listeners
 * are left alone; every other TCP connection goes to the transparent
 * listener. */
int
nfttransp_chain_nat_output(struct nftnl_chain_list *list,
    const struct nftcfg *cfg)
{
	struct nftnl_chain *c;

	if (!shared(cfg))
		return 0;
	if ((c = nftx_chain(NAT_OUTPUT, "nat", NF_INET_LOCAL_OUT,
	    NFTTRANSP_NAT_PRIO, NF_ACCEPT)) == NULL)
		return -1;
	nftnl_chain_list_add_tail(c, list);
	if (nftx_rule_exempt(c, NAT_OUTPUT, cfg) == -1 ||
	    rules_nat_dns(c, NAT_OUTPUT, NULL, cfg) == -1 ||
	    nftx_rule_lo(c, NAT_OUTPUT, NFT_META_OIF) == -1 ||
	    rules_guards(c, NAT_OUTPUT, NULL, cfg) == -1 ||
	    rules_nat_tcp(c, NAT_OUTPUT, NULL, cfg) == -1)
		return -1;
	return 0;
}

/* Guard side: nat_prerouting rewrites what arrives on the link to the
 * listeners (the --guard listeners left alone); input accepts from the
 * link only those flows, the --guard listeners, replies and ND, and
 * refuses the rest at once; forward drops everything, so a packet that
 * was not redirected goes nowhere even with forwarding on. */
int
nfttransp_chains_guard(struct nftnl_chain_list *list,
    const struct nftcfg *cfg)
{
	const char *in = cfg->in_ifname;
	struct nftnl_chain *nat, *input, *fwd;
	uint32_t fwd_policy = NF_DROP;

#ifdef EG_MUTANT_NFT_FORWARD
	fwd_policy = NF_ACCEPT;
#endif
	if ((nat = nftx_chain(NAT_PREROUTING, "nat", NF_INET_PRE_ROUTING,
	    NFTTRANSP_NAT_PRIO, NF_ACCEPT)) == NULL)
		return -1;
	nftnl_chain_list_add_tail(nat, list);
	if ((input = nftx_chain("input", "filter", NF_INET_LOCAL_IN, 0,
	    NF_ACCEPT)) == NULL)
		return -1;
	nftnl_chain_list_add_tail(input, list);
	if ((fwd = nftx_chain("forward", "filter", NF_INET_FORWARD, 0,
	    fwd_policy)) == NULL)
		return -1;
	nftnl_chain_list_add_tail(fwd, list);
	if (rules_guards(nat, NAT_PREROUTING, in, cfg) == -1 ||
	    rules_nat_dns(nat, NAT_PREROUTING, in, cfg) == -1 ||
	    rules_nat_tcp(nat, NAT_PREROUTING, in, cfg) == -1 ||
	    nftx_rule_established(input, "input", in) == -1 ||
	    rules_redirected(input, "input", in, cfg) == -1 ||
	    rules_guards(input, "input", in, cfg) == -1 ||
	    nftx_rule_nd(input, "input", in, NULL, NULL, 0) == -1 ||
	    nftx_rules_reject(input, "input", in) == -1)
		return -1;
	return 0;
}

static void
describe_list(const char *what, const struct nftcfg_addr *l, size_t n,
    char *buf, size_t len, size_t *off)
{
	size_t i;
	int k;

	for (i = 0; i < n && *off + 64 < len; i++) {
		k = snprintf(buf + *off, len - *off, "%s", i == 0 ? what : " ");
		if (k > 0)
			*off += (size_t)k;
		if ((k = nftcfg_format_addr(&l[i], buf + *off,
		    len - *off)) > 0)
			*off += (size_t)k;
	}
}

void
nfttransp_describe(const struct nftcfg *cfg, char *buf, size_t len)
{
	char a[64];
	size_t off = 0, i;
	int k;

	if (buf == NULL || len == 0)
		return;
	buf[0] = '\0';
	if (cfg->in_ifname[0] != '\0' && len > 64) {
		k = snprintf(buf, len, "; transparent-in %s", cfg->in_ifname);
		if (k > 0)
			off = (size_t)k;
	}
	describe_list("; transparent ", cfg->transparent, cfg->ntransparent,
	    buf, len, &off);
	describe_list("; dns ", cfg->dns, cfg->ndns, buf, len, &off);
	if (cfg->via_ifname[0] != '\0' && off + 64 < len) {
		k = snprintf(buf + off, len - off, "; via interface %s",
		    cfg->via_ifname);
		if (k > 0)
			off += (size_t)k;
	}
	for (i = 0; i < cfg->nvia && off + 64 < len; i++) {
		if (inet_ntop(cfg->via[i].family, cfg->via[i].addr, a,
		    sizeof(a)) == NULL)
			continue;
		k = snprintf(buf + off, len - off, "%s%s", i == 0 ?
		    "; via next hop " : " ", a);
		if (k > 0)
			off += (size_t)k;
	}
	if (cfg->via_dns && off + 32 < len)
		snprintf(buf + off, len - off, " (TCP and DNS)");
}
