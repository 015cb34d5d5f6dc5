/* Transparent mode's rules (docs/nft.md "Transparent mode"): the
 * workload's TCP and DNS go to the guard's transparent and DNS listeners
 * without any proxy setting, by redirection, never by forwarding.
 *   shared layout (workload side, guard on loopback): a nat output chain
 *     redirects to 127.0.0.1 / [::1]; the filter accepts those flows only.
 *   separate layout, workload side: TCP (and DNS) may leave only via the
 *     guard as next hop (--transparent-via).
 *   separate layout, guard side (--transparent-in IFNAME): a nat
 *     prerouting chain DNATs what arrives on IFNAME to the listeners; the
 *     input chain accepts from IFNAME only those flows and the --guard
 *     listeners; the forward chain drops everything.
 * Pure, like nftrules: -1 with a message in err. */
#ifndef EG_NFTTRANSP_H
#define EG_NFTTRANSP_H

#include <stddef.h>

struct nftnl_chain;
struct nftnl_chain_list;
struct nftcfg;

/* Ahead of Docker's DNAT (nat output at -100): the first nat rule that
 * rewrites a connection is the only one the kernel applies. */
#define NFTTRANSP_NAT_PRIO	(-110)
#define NFTTRANSP_DNS_PORT	53

/* "IPv4:PORT" or "[IPv6]:PORT", at most one per family: the transparent
 * listener (dns 0, --transparent) or the DNS listener (dns 1,
 * --dns-listen). */
int nfttransp_add_listener(struct nftcfg *cfg, int dns,
    const char *text, char *err, size_t errlen);

/* --transparent-via: the guard as next hop, an IP literal (one per
 * family) or the interface towards it (one, not with addresses). */
int nfttransp_set_via(struct nftcfg *cfg, const char *text,
    char *err, size_t errlen);

/* --transparent-in: the interface the workload's packets arrive on, in
 * the guard's namespace. */
int nfttransp_set_in(struct nftcfg *cfg, const char *ifname,
    char *err, size_t errlen);

/* The options taken together: which layout, and what it needs. */
int nfttransp_check(const struct nftcfg *cfg, char *err,
    size_t errlen);

/* Workload side: the filter output rules that accept our own redirected
 * flows (shared layout), and the TCP/DNS via the next hop (separate
 * layout); and the nat output chain (shared layout). Nothing when the
 * mode is off. -1 on allocation failure. */
int nfttransp_rules_redirected(struct nftnl_chain *c,
    const struct nftcfg *cfg);
int nfttransp_rules_via(struct nftnl_chain *c,
    const struct nftcfg *cfg);
int nfttransp_chain_nat_output(struct nftnl_chain_list *list,
    const struct nftcfg *cfg);

/* Guard side: every chain of the table, added to list. -1 on allocation
 * failure. */
int nfttransp_chains_guard(struct nftnl_chain_list *list,
    const struct nftcfg *cfg);

/* "; transparent 127.0.0.1:3129; dns 127.0.0.1:5353; via 10.0.0.1", what
 * apply and verify print; empty when the mode is off. */
void nfttransp_describe(const struct nftcfg *cfg, char *buf,
    size_t len);

#endif
