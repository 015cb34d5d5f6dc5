/* verify's comparison: a dumped table against what apply installs
 * (docs/design.md "nftables"). Pure: no sockets, no printing. */
#ifndef EG_NFTCMP_H
#define EG_NFTCMP_H

#include <stddef.h>

struct nftnl_chain_list;
struct nftnl_set_list;
struct nftnl_table;
struct nftcfg;

/* Compares a dumped table (NULL: absent) and its chains (each holding its
 * rules, in kernel order) with what apply installs for cfg. Expressions are
 * compared attribute by attribute; handles and counter values are ignored.
 * Returns 0 when identical, 1 when they differ (one line per difference in
 * diff, "output: unexpected rule #5 (...)"), -1 on failure. */
int nftcmp_compare(const struct nftcfg *cfg,
    const struct nftnl_table *table, const struct nftnl_chain_list *chains,
    char *diff, size_t difflen, char *err, size_t errlen);

/* The same for any table: label ("table inet NAME") names it in the
 * differences; want and wsets (NULL: none) are what apply sends, sets
 * what was read back (nftsock_read_sets). Sets are compared by key type,
 * length, flags and elements (as sets of keys: order is the kernel's). */
int nftcmp_compare_table(const char *label,
    const struct nftnl_chain_list *want, const struct nftnl_set_list *wsets,
    const struct nftnl_table *table, const struct nftnl_chain_list *chains,
    const struct nftnl_set_list *sets, char *diff, size_t difflen,
    char *err, size_t errlen);

#endif
