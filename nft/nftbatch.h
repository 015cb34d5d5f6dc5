/* One nf_tables transaction written message by message: the framing both
 * tables' batches share (nft/nftrules.h for table inet egress_guard,
 * nft/nfttenant.h for the tenants' table). Batch begin, the messages,
 * batch end; each message checked to fit before and after libnftnl writes
 * it (libnftnl writes attributes without bounds), and the object each
 * sequence number carries recorded, so a kernel error can be reported
 * against the object it refused. Sending is nft/nftsock.h's. Pure: -1 with
 * a message in err. */
#ifndef EG_NFTBATCH_H
#define EG_NFTBATCH_H

#include <stddef.h>
#include <stdint.h>

#define NFTBATCH_WHAT_MAX	112

struct nftnl_chain_list;
struct nlmsghdr;

/* A batch being written. The caller sets buf and size (a fixed buffer),
 * or grow with buf NULL or malloc'd (then reallocated as needed; the
 * caller frees it, on failure too); room, the bytes any one message may
 * take; max_msgs and what, room for that many names; err and errlen.
 * nftbatch_begin sets the rest. Messages seq_first + 1 .. seq_last - 1
 * carry NLM_F_ACK; message seq_first + 1 + i is named what[i]. */
struct nftbatch {
	char		*buf;
	size_t		 len, size;	/* bytes used, bytes of buf */
	int		 grow;
	size_t		 room;
	size_t		 max_msgs;
	char		(*what)[NFTBATCH_WHAT_MAX];
	size_t		 nmsgs;
	uint32_t	 seq;		/* the next message's */
	uint32_t	 seq_first, seq_last;
	char		*err;
	size_t		 errlen;
};

/* The batch begin message, sequence numbers from seq on. 0 or -1. */
int nftbatch_begin(struct nftbatch *w, uint32_t seq);
/* The batch end message. 0 or -1. */
int nftbatch_end(struct nftbatch *w);

/* Where the next acknowledged message goes: room zeroed bytes, or NULL
 * (too many messages, no room, no memory). */
char *nftbatch_room(struct nftbatch *w);
/* Accounts for the message nlh just written at nftbatch_room's pointer,
 * named by fmt. 0, or -1 when it overran the room. */
int nftbatch_commit(struct nftbatch *w, const struct nlmsghdr *nlh,
    const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Adds (NFT_MSG_NEWTABLE) or deletes table inet NAME, named
 * "table inet NAME (WHAT)". 0 or -1. */
int nftbatch_table(struct nftbatch *w, const char *name, uint16_t type,
    uint16_t flags, const char *what);
/* Add; delete; add table inet NAME: replaces an existing table in the same
 * transaction and works when there is none. 0 or -1. */
int nftbatch_replace_table(struct nftbatch *w, const char *name);
/* Every chain of the list, then every chain's rules in order ("chain
 * output", "output rule #3 (...)"). 0 or -1. */
int nftbatch_chains(struct nftbatch *w, struct nftnl_chain_list *chains);

/* The object message seq carries in a batch from seq_first to seq_last
 * whose nmsgs names are at what (NFTBATCH_WHAT_MAX bytes each): "the batch
 * as a whole" for the begin message, "batch end", or "unknown message"
 * outside the batch. */
const char *nftbatch_what(uint32_t seq_first, uint32_t seq_last,
    size_t nmsgs, const char *what, uint32_t seq);

#endif
