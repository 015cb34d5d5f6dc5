/* The default-deny ruleset for a workload's network namespace (docs/design.md
 * "nftables"): table inet egress_guard, as libnftnl objects, as one
 * netlink batch, and as the reference a dumped table is compared with.
 * Pure: no sockets, no printing; failures return -1 with a message in err. */
#ifndef EG_NFTRULES_H
#define EG_NFTRULES_H

#include <stddef.h>
#include <stdint.h>

struct nftnl_chain_list;
struct nftnl_table;

#define NFTRULES_TABLE		"egress_guard"
#define NFTRULES_MAX_GUARDS	64
/* Messages between batch begin and end: 3 table + 3 chain messages, at
 * most 3 + 1 + 3 + 1 + (2 + 64) + 64 + 2 output and 3 + 3 input rules. */
#define NFTRULES_MAX_MSGS	160
/* Room every message must find before it is written; ours stay under 1 KiB. */
#define NFTRULES_MSG_MAX	2048
/* A caller buffer of this size always holds the largest batch. */
#define NFTRULES_BATCH_MAX	((NFTRULES_MAX_MSGS + 2) * NFTRULES_MSG_MAX)
#define NFTRULES_WHAT_MAX	112

struct nftrules_guard {
	int		family;		/* AF_INET or AF_INET6 */
	unsigned char	addr[16];	/* network order; AF_INET uses 4 */
	uint16_t	port;
};

/* Guards are kept sorted and unique, so apply and verify see one ruleset
 * whatever order the operator named them in. */
struct nftrules_config {
	struct nftrules_guard	guards[NFTRULES_MAX_GUARDS];
	size_t			nguards;
	int			has_exempt_uid;
	uint32_t		exempt_uid;
	/* The cgroup v2 exemption (socket cgroupv2 level L ID); when set, the
	 * uid is not used. */
	int			has_exempt_cgroup;
	uint64_t		exempt_cgroup_id;
	uint32_t		exempt_cgroup_level;
};

#define NFTRULES_CGROUP_LEVEL_MAX	64

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

void nftrules_config_init(struct nftrules_config *cfg);

/* "IPv4:PORT" or "[IPv6]:PORT" (docs/design.md "Destination syntax", IP
 * literals only). Refuses names, port 0, unspecified, multicast, broadcast and
 * IPv4-mapped addresses, duplicates, and more than NFTRULES_MAX_GUARDS. */
int nftrules_add_guard(struct nftrules_config *cfg, const char *text,
    char *err, size_t errlen);

/* Decimal uid 1..4294967294. uid 0 is refused: exempting root would exempt
 * a workload that runs as root in the shared namespace. */
int nftrules_set_exempt_uid(struct nftrules_config *cfg, const char *text,
    char *err, size_t errlen);

/* The cgroup whose sockets may go anywhere: its id (the inode number of
 * its folder on the cgroup2 file system) and its depth below the root
 * (1..NFTRULES_CGROUP_LEVEL_MAX). The root cgroup (level 0) is refused: it
 * holds every process not placed elsewhere, the workload included. Once
 * set, it replaces the uid exemption. */
int nftrules_set_exempt_cgroup(struct nftrules_config *cfg, uint64_t id,
    uint32_t level, char *err, size_t errlen);

/* "10.0.0.1:3128" / "[fd00::1]:3128". Returns the length, or -1. */
int nftrules_format_guard(const struct nftrules_guard *g, char *buf,
    size_t len);

/* Writes batch begin; add table; delete table; add table; chains; rules;
 * batch end into buf (size bytes; NFTRULES_BATCH_MAX always suffices) with
 * sequence numbers from seq on. The add/delete/add order replaces an
 * existing table in the same transaction and works when there is none.
 * Returns 0 and fills *b, or -1 (nothing usable in buf). */
int nftrules_build_apply(const struct nftrules_config *cfg, uint32_t seq,
    void *buf, size_t size, struct nftrules_batch *b, char *err,
    size_t errlen);

/* Batch begin; delete table; batch end. The kernel answers ENOENT when the
 * table is absent. */
int nftrules_build_remove(uint32_t seq, void *buf, size_t size,
    struct nftrules_batch *b, char *err, size_t errlen);

/* The object message seq carries ("chain output", "output rule #3 (...)");
 * "the batch as a whole" for the begin message, "batch end", or "unknown
 * message" outside the batch. */
const char *nftrules_batch_what(const struct nftrules_batch *b, uint32_t seq);

/* The chains apply installs, each holding its rules. The caller frees the
 * list with nftnl_chain_list_free. NULL on allocation failure. */
struct nftnl_chain_list *nftrules_expected(const struct nftrules_config *cfg,
    char *err, size_t errlen);

/* Compares a dumped table (NULL: absent) and its chains (each holding its
 * rules, in kernel order) with what apply installs. Expressions are compared
 * attribute by attribute; handles and counter values are ignored. Returns 0
 * when identical, 1 when they differ (one line per difference in diff,
 * "output: unexpected rule #5 (...)"), -1 on failure. */
int nftrules_compare(const struct nftrules_config *cfg,
    const struct nftnl_table *table, const struct nftnl_chain_list *chains,
    char *diff, size_t difflen, char *err, size_t errlen);

#endif
