/* `egress-guard nft apply|show|verify|remove` (docs/design.md
 * "nftables"). argv[0] is "nft", argv[1] the verb. Returns the exit status:
 * 0 ok, 1 verify found a difference, 2 error (nothing was changed unless
 * the message says otherwise). With nft/nftcli.c below it, the only
 * part of nft/ that prints. */
#ifndef EG_NFTCMD_H
#define EG_NFTCMD_H

int nftcmd_main(int argc, char **argv);

#endif
