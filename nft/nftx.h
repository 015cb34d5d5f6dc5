/* Expression and rule builders shared by the default-deny rules
 * (nftrules.c) and the transparent-mode rules (nfttransp.c). Internal to
 * nft/. Each builder sets exactly the attributes the kernel dumps back, so
 * a dumped rule compares equal to a built one attribute by attribute.
 * Builders return NULL on allocation failure; a rule under construction
 * (struct nftx_rule) remembers any failure and reports it once, at
 * nftx_finish. */
#ifndef EG_NFTX_H
#define EG_NFTX_H

#include <stddef.h>
#include <stdint.h>

#include "nft/nftcfg.h"

struct nftnl_chain;
struct nftnl_expr;
struct nftnl_rule;

/* The kernel gives loopback this index in every network namespace, so a
 * rule can match the index (as `nft` does for `oif lo`) without a lookup. */
#define NFTX_LOOPBACK_IFINDEX	1u
#define NFTX_IFNAME_LEN		16	/* IFNAMSIZ: what iifname compares */

/* nft's datatype numbers (nftables src/datatype.h), for set key and data
 * types; a concatenation's type is its fields' types, NFTX_T_BITS each,
 * the first field highest. */
#define NFTX_T_IPADDR		7
#define NFTX_T_IP6ADDR		8
#define NFTX_T_INET_PROTO	12
#define NFTX_T_INET_SERVICE	13
#define NFTX_T_IFNAME		41
#define NFTX_T_BITS		6

struct nftx_rule {
	struct nftnl_rule	*r;
	int			 bad;
};

void nftx_start(struct nftx_rule *b, const char *chain);
void nftx_add(struct nftx_rule *b, struct nftnl_expr *e);
/* Hands the rule to chain c; -1 (rule freed) if anything failed. */
int nftx_finish(struct nftx_rule *b, struct nftnl_chain *c);

struct nftnl_expr *nftx_meta(uint32_t key);
struct nftnl_expr *nftx_meta_reg(uint32_t key, uint32_t reg);
struct nftnl_expr *nftx_payload_reg(uint32_t base, uint32_t offset,
    uint32_t len, uint32_t reg);
/* The register of a concatenation's field at byte offset off. */
uint32_t nftx_concat_reg(uint32_t off);
struct nftnl_expr *nftx_lookup(const char *set, uint32_t sreg);
struct nftnl_expr *nftx_lookup_map(const char *set, uint32_t sreg,
    uint32_t dreg);
/* dnat ip|ip6 to the address in raddr, the port in rproto. */
struct nftnl_expr *nftx_dnat_regs(int family, uint32_t raddr,
    uint32_t rproto);
struct nftnl_expr *nftx_cmp(uint32_t op, const void *data, uint32_t len);
struct nftnl_expr *nftx_payload(uint32_t base, uint32_t offset, uint32_t len);
struct nftnl_expr *nftx_ct(uint32_t key);
struct nftnl_expr *nftx_ct_orig(uint32_t key);
struct nftnl_expr *nftx_bitwise(const void *mask, uint32_t len);
struct nftnl_expr *nftx_mask(uint32_t mask);
struct nftnl_expr *nftx_exthdr_present(uint32_t op, uint8_t type);
struct nftnl_expr *nftx_socket_cgroup(uint32_t level);
struct nftnl_expr *nftx_rt_nexthop(int family);
struct nftnl_expr *nftx_fib_saddr_type(void);
struct nftnl_expr *nftx_counter(void);
struct nftnl_expr *nftx_verdict(uint32_t v);
struct nftnl_expr *nftx_reject(uint32_t type, int code);

/* meta KEY == v (1 or 4 bytes). */
void nftx_meta_u8(struct nftx_rule *b, uint32_t key, uint8_t v);
void nftx_meta_u32(struct nftx_rule *b, uint32_t key, uint32_t v);
/* iifname / oifname (key) == name, compared over IFNAMSIZ bytes. */
void nftx_ifname(struct nftx_rule *b, uint32_t key, const char *name);
/* ct direction original. */
void nftx_ct_original(struct nftx_rule *b);
/* ct status dnat: the connection's destination was rewritten by nat. */
void nftx_ct_dnat(struct nftx_rule *b);
/* meta nfproto F, ip/ip6 daddr addr, meta l4proto l4, th dport port
 * (port in host order; addr NULL: no address match; l4 0: no protocol
 * or port match). */
void nftx_dest(struct nftx_rule *b, int family, const unsigned char *addr,
    uint8_t l4, uint16_t port);
/* l4 dport port, with its l4proto dependency (host order). */
void nftx_dport(struct nftx_rule *b, uint8_t l4, uint16_t port);
/* redirect to :port (host order), the packet's own family. */
void nftx_redirect(struct nftx_rule *b, uint16_t port);
/* dnat ip|ip6 to addr:port (port in host order). */
void nftx_dnat(struct nftx_rule *b, int family, const unsigned char *addr,
    uint16_t port);
/* counter, then the verdict. */
void nftx_count_verdict(struct nftx_rule *b, uint32_t v);
/* counter, then reject: TCP reset for tcp, else ICMPx admin-prohibited. */
void nftx_count_reject(struct nftx_rule *b, int tcp);

/* A base chain of table inet egress_guard. */
struct nftnl_chain *nftx_chain(const char *name, const char *type,
    uint32_t hook, int32_t prio, uint32_t policy);

/* Whole rules the default-deny table and transparent mode share. */
/* Each appends one kind of rule to chain c (named chain); iifname, when
 * not NULL, limits it to packets arriving on that interface. -1 on
 * allocation failure. */
int nftx_rule_nd(struct nftnl_chain *c, const char *chain,
    const char *iifname, const unsigned char *dest,
    const unsigned char *mask, uint32_t len);
/* The body of an ND rule: nfproto ipv6, [the address at off (source 8,
 * destination 24) == addr, or masked], hop limit 255, ICMPv6 135-136. */
#define NFTX_ND_SADDR	8
#define NFTX_ND_DADDR	24
void nftx_nd(struct nftx_rule *b, uint32_t off, const unsigned char *addr,
    const unsigned char *mask, uint32_t len);
int nftx_rule_guard(struct nftnl_chain *c, const char *chain,
    const char *iifname, const struct nftcfg_addr *g);
int nftx_rule_lo(struct nftnl_chain *c, const char *chain, uint32_t key);
int nftx_rule_exempt(struct nftnl_chain *c, const char *chain,
    const struct nftcfg *cfg);
int nftx_rule_established(struct nftnl_chain *c, const char *chain,
    const char *iifname);
int nftx_rules_reject(struct nftnl_chain *c, const char *chain,
    const char *iifname);


#endif
