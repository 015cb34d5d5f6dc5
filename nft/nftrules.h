/* The default-deny ruleset for a workload's network namespace (docs/design.md
 * "nftables"): table inet egress_guard, as libnftnl objects, as one
 * netlink batch, and as the reference a dumped table is compared with.
 * Pure: no sockets, no printing; failures return -1 with a message in err. */
#ifndef EG_NFTRULES_H
#define EG_NFTRULES_H

#include <stddef.h>
#include <stdint.h>

#include "nft/nftbatch.h"
#include "nft/nftcfg.h"

struct nftnl_chain_list;
struct nftnl_table;

/* Messages between batch begin and end: 3 table + 4 chain messages, at
 * most 3 + 1 + 6 + 3 + 1 + (2 + 66) + 64 + 4 + 2 output, 3 + 3 input and
 * 1 + 4 + 1 + 64 + 2 nat rules (nfttransp.c); fewer on the guard side. */
#define NFTRULES_MAX_MSGS	256
/* Room every message must find before it is written; ours stay under 1 KiB. */
#define NFTRULES_MSG_MAX	2048
/* A caller buffer of this size always holds the largest batch. */
#define NFTRULES_BATCH_MAX	((NFTRULES_MAX_MSGS + 2) * NFTRULES_MSG_MAX)
#define NFTRULES_WHAT_MAX	NFTBATCH_WHAT_MAX

/* Which object each sequence number of a built batch carries, so a kernel
 * error can be reported against the object it refused. Messages
 * seq_first + 1 .. seq_last - 1 carry NLM_F_ACK; seq_first is the batch
 * begin and seq_last the batch end. */
struct nftrules_batch {
	size_t		len;		/* bytes of the caller's buffer used */
	uint32_t	seq_first;
	uint32_t	seq_last;
	size_t		nmsgs;
	char		what[NFTRULES_MAX_MSGS][NFTRULES_WHAT_MAX];
};

/* The batch, written with nft/nftbatch.h.
 *
 * Writes batch begin; add table; delete table; add table; chains; rules;
 * batch end into buf (size bytes; NFTRULES_BATCH_MAX always suffices) with
 * sequence numbers from seq on. The add/delete/add order replaces an
 * existing table in the same transaction and works when there is none.
 * Returns 0 and fills *b, or -1 (nothing usable in buf). */
int nftrules_build_apply(const struct nftcfg *cfg, uint32_t seq,
    void *buf, size_t size, struct nftrules_batch *b, char *err,
    size_t errlen);

/* Batch begin; delete table; batch end. The kernel answers ENOENT when the
 * table is absent. */
int nftrules_build_remove(uint32_t seq, void *buf, size_t size,
    struct nftrules_batch *b, char *err, size_t errlen);

/* The same for table inet NAME (the tenants' table, nft/nfttenant.h). */
int nftrules_build_remove_table(const char *name, uint32_t seq, void *buf,
    size_t size, struct nftrules_batch *b, char *err, size_t errlen);

/* The object message seq carries ("chain output", "output rule #3 (...)");
 * "the batch as a whole" for the begin message, "batch end", or "unknown
 * message" outside the batch. */
const char *nftrules_batch_what(const struct nftrules_batch *b, uint32_t seq);

/* The chains apply installs, each holding its rules. The caller frees the
 * list with nftnl_chain_list_free. NULL on allocation failure. */
struct nftnl_chain_list *nftrules_expected(const struct nftcfg *cfg,
    char *err, size_t errlen);

#endif
