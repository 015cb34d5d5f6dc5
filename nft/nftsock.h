/* The nftables netlink socket (libmnl): send one batch and account for
 * every ACK, and read a table back consistently. Library-like: returns -1
 * with a message in err; never prints. */
#ifndef EG_NFTSOCK_H
#define EG_NFTSOCK_H

#include <stddef.h>
#include <stdint.h>

struct nftnl_chain_list;
struct nftnl_set_list;
struct nftnl_table;
struct nftsock;

/* What the kernel refused in a batch: the first message it answered with
 * an error, and how many errors it sent in all. kernel is 0 when the batch
 * failed on this side (send, timeout, malformed reply): then whether the
 * kernel applied it is unknown. */
struct nftsock_error {
	int		kernel;
	uint32_t	seq;
	int		errnum;
	unsigned int	nerrors;
};

/* Opens and binds a NETLINK_NETFILTER socket in the calling thread's
 * network namespace; it stays bound to that namespace for its life. */
struct nftsock *nftsock_open(char *err, size_t errlen);
void nftsock_close(struct nftsock *s);

/* Reserves n consecutive sequence numbers and returns the first. */
uint32_t nftsock_seq(struct nftsock *s, uint32_t n);

/* Sends buf (a batch from seq_first to seq_last whose inner messages all
 * carry NLM_F_ACK) in one sendmsg, then reads until every inner message is
 * acknowledged or the kernel has reported errors, matching each reply by
 * port id and sequence number. Returns 0 when all were acknowledged;
 * -1 with *e and err filled otherwise. */
int nftsock_send_batch(struct nftsock *s, const void *buf, size_t len,
    uint32_t seq_first, uint32_t seq_last, struct nftsock_error *e,
    char *err, size_t errlen);

/* Reads table inet NAME, its chains and their rules (attached to each
 * chain, kernel order) as one snapshot: the ruleset generation is read
 * before and after, and the read is retried if it moved. *table is NULL
 * when the table does not exist (then *chains is an empty list). The
 * caller frees both. Returns 0, or -1 (kerrno: the kernel's errno, or 0). */
int nftsock_read_table(struct nftsock *s, const char *name,
    struct nftnl_table **table, struct nftnl_chain_list **chains,
    int *kerrno, char *err, size_t errlen);

/* Every base chain in the namespace, of every family and table (the
 * rules are not read). Bounded: at most max chains, then *more is set.
 * The caller frees *chains. Returns 0, or -1 (kerrno as above). */
int nftsock_read_base_chains(struct nftsock *s, size_t max,
    struct nftnl_chain_list **chains, int *more, int *kerrno, char *err,
    size_t errlen);

/* The sets of table inet NAME, each holding its elements, as one snapshot
 * (the generation read before and after). An absent table has no sets
 * (an empty list). The caller frees *sets. 0, or -1 (kerrno as above). */
int nftsock_read_sets(struct nftsock *s, const char *name,
    struct nftnl_set_list **sets, int *kerrno, char *err, size_t errlen);

/* Makes the socket's send buffer hold a batch of len bytes (one sendmsg
 * carries the whole transaction) and its receive buffer the nmsgs
 * acknowledgements the kernel queues before any is read. 0, or -1 with
 * err. */
int nftsock_fit_batch(struct nftsock *s, size_t len, size_t nmsgs,
    char *err, size_t errlen);

#endif
