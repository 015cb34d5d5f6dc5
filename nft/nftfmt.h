/* Rules and chains as text, for `show`, verify's differences and error
 * messages. Pure. Bytes that came from the kernel (names other tools set)
 * are written as printable ASCII only. */
#ifndef EG_NFTFMT_H
#define EG_NFTFMT_H

#include <stddef.h>
#include <stdint.h>

struct nftnl_chain;
struct nftnl_rule;

/* One rule in nft-like syntax ("ip daddr 10.0.0.1 tcp dport 3128 counter
 * packets 3 bytes 180 accept"); expressions it does not know in libnftnl's
 * bracket notation. Returns the length written (truncated to fit). */
size_t nftfmt_rule(const struct nftnl_rule *r, char *buf, size_t len);

/* "output { type filter hook output priority 0; policy drop; }" */
size_t nftfmt_chain(const struct nftnl_chain *c, char *buf, size_t len);

/* s with every byte outside printable ASCII replaced by '?'. */
size_t nftfmt_safe(const char *s, char *buf, size_t len);

const char *nftfmt_hook(uint32_t hook);		/* "output", ... or "?" */
/* The hook's name in that family (netdev: "ingress", "egress"). */
const char *nftfmt_hook_in(uint32_t family, uint32_t hook);
const char *nftfmt_family(uint32_t family);	/* "inet", "netdev", ... */
const char *nftfmt_policy(uint32_t policy);	/* "accept", "drop" or "?" */

#endif
