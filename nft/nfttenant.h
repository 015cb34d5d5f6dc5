/* The guard-side table of a tenant-mode guard (docs/nft.md "Tenants"):
 * table inet egress_guard_tenants in the GUARD's namespace, built from a
 * tenant list (policy/tspec.h). On a tenant's link only its peer may be a
 * source (prerouting, priority raw), only its own address and listener
 * ports are reached (input), nothing is forwarded; a transparent
 * tenant's other TCP is DNATed to its transparent listener. Sets with
 * concatenated keys (iifname . ip saddr, ...) carry the tenants, so the
 * rules are the same few for 1 or 4096 tenants. Pure: -1 with a message
 * in err; the caller sends the batch (nft/nftsock.h). */
#ifndef EG_NFTTENANT_H
#define EG_NFTTENANT_H

#include <stddef.h>
#include <stdint.h>

#include "nft/nftbatch.h"
#include "nft/nfttext.h"

#define NFTTENANT_TABLE		NFTTEXT_TABLE
/* The sets and maps of the table (nft/nfttext.h): their number and a
 * message bound. Elements go NFTTENANT_CHUNK to a message; 4096 tenants,
 * all of them transparent, make about 300 messages. */
#define NFTTENANT_NSETS		NFTTEXT_NSETS
#define NFTTENANT_CHUNK		128
#define NFTTENANT_MAX_MSGS	1024
#define NFTTENANT_WHAT_MAX	NFTBATCH_WHAT_MAX

struct nftnl_chain_list;
struct nftnl_set_list;
struct tspec;

/* One batch in a growing buffer: begin; add, delete, add table; sets;
 * their elements; chains; rules; end. what[i] names the object message
 * seq_first + 1 + i carries. */
struct nfttenant_batch {
	char		*buf;
	size_t		 len, cap;
	uint32_t	 seq_first, seq_last;
	size_t		 nmsgs;
	char		(*what)[NFTTENANT_WHAT_MAX];
};

/* What apply sends, as libnftnl objects (sets holding their elements,
 * chains holding their rules): the reference verify compares with. The
 * caller frees both lists. 0 or -1. */
int nfttenant_expected(const struct tspec *v, size_t n,
    struct nftnl_set_list **sets, struct nftnl_chain_list **chains,
    char *err, size_t errlen);

/* The apply batch, sequence numbers from seq on (at most
 * NFTTENANT_MAX_MSGS + 2 of them). 0 or -1; nfttenant_batch_free after
 * either. */
int nfttenant_build_apply(const struct tspec *v, size_t n, uint32_t seq,
    struct nfttenant_batch *b, char *err, size_t errlen);
void nfttenant_batch_free(struct nfttenant_batch *b);
/* The object message seq carries, as nftrules_batch_what says it. */
const char *nfttenant_batch_what(const struct nfttenant_batch *b,
    uint32_t seq);

/* The table as `nft -f` reads it (what --dry-run prints): malloc'd,
 * NUL-terminated; NULL on ENOMEM. Written by nft/nfttext.h. */
char *nfttenant_text(const struct tspec *v, size_t n);

#endif
