/* Statements as text, for nftfmt_rule: counter, verdicts, reject,
 * redirect and dnat, the way `nft list` writes them. Pure. */
#ifndef EG_NFTSTMT_H
#define EG_NFTSTMT_H

#include <stddef.h>
#include <stdint.h>

struct nftnl_expr;

/* What immediates have loaded into registers 1 and 2 so far in a rule:
 * the addresses and ports a later redirect or dnat names. Zero it per
 * rule. */
struct nftstmt_regs {
	unsigned char	data[2][16];
	uint32_t	len[2];
};

/* Writes statement e into buf (truncated to fit): 1 when written, 0 when
 * e was a data load kept in regs (nothing to write), -1 when it is not a
 * statement of a known shape (the caller falls back to raw notation).
 * Names that came from the kernel (a jump's chain) are written as
 * printable ASCII only. */
int nftstmt_render(const struct nftnl_expr *e, struct nftstmt_regs *regs,
    char *buf, size_t len);

#endif
