/* What the nft subcommands (nft/nftcmd.h) say to the operator: every line
 * "egress-guard nft VERB: ...", operator input echoed bounded and
 * printable, a kernel errno explained, and the reports that need no
 * options. The printing layer below nftcmd.c; nothing else in nft/
 * prints. */
#ifndef EG_NFTCLI_H
#define EG_NFTCLI_H

#include <stddef.h>
#include <stdio.h>

#define NFTCLI_ERR_MAX	512
/* What the uid exemption rests on, said wherever it is in force. */
#define UID_PRECONDITION "holds only while the workload has no " \
	"CAP_SETUID/CAP_SETGID and runs with no_new_privs"

struct nftnl_chain;
struct nftsock;
struct nftsock_error;

/* "egress-guard nft VERB: " the message, a newline. */
void nftcli_say(FILE *f, const char *verb, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* An operator's argument echoed back into buf (len bytes): printable
 * ASCII only, "..." where cut. Returns buf. */
const char *nftcli_shown(const char *s, char *buf, size_t len);

/* What a kernel errno e likely means for nftables (" (needs
 * CAP_NET_ADMIN ...)"), or "". */
const char *nftcli_hint(int e);

/* Value of "--name VALUE" or "--name=VALUE" at argv[*i] (advancing *i
 * past a separate value); NULL otherwise, with *bad set when the value is
 * missing. */
const char *nftcli_optval(int argc, char **argv, int *i, const char *name,
    int *bad);

/* Warns on stderr of every base chain in s's namespace but table inet
 * TABLE's (they see the same packets); says on out (the command's
 * stdout) when there is none. */
void nftcli_other_chains(FILE *out, const char *verb, const char *table,
    struct nftsock *s);

/* A batch did not go through: what the kernel refused (named what), or
 * err and that the outcome is unknown. */
void nftcli_refused(const char *verb, const char *what,
    const struct nftsock_error *e, const char *err);

/* Chain c and its rules as `nft show` prints them, on stdout. */
void nftcli_show_chain(const struct nftnl_chain *c);

#endif
