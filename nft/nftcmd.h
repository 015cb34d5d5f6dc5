/* `egress-guard nft apply|show|verify|remove` (docs/design.md
 * "nftables"). argv[0] is "nft", argv[1] the verb. Returns the exit status:
 * 0 ok, 1 verify found a difference, 2 error (nothing was changed unless
 * the message says otherwise). With nft/nftcli.c below it, the only
 * part of nft/ that prints. */
#ifndef EG_NFTCMD_H
#define EG_NFTCMD_H

#include <stddef.h>

struct tspec;

int nftcmd_main(int argc, char **argv);

/* `nft tenants` for a list in memory (egress-guardctl tenant add|remove
 * --nft-netns): the same batch into netns (NAME, PATH or PID), the same
 * read-back, every line on stderr, named by verb. 0, or 2 (the message
 * printed). */
int nftcmd_tenants_apply(const char *verb, const char *netns,
    const struct tspec *v, size_t n);

#endif
