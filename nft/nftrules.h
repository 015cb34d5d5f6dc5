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
/* Messages between batch begin and end: 3 table + 4 chain messages, at
 * most 3 + 1 + 6 + 3 + 1 + (2 + 66) + 64 + 4 + 2 output, 3 + 3 input and
 * 1 + 4 + 1 + 64 + 2 nat rules (nfttransp.c); fewer on the guard side. */
#define NFTRULES_MAX_MSGS	256
/* Room every message must find before it is written; ours stay under 1 KiB. */
#define NFTRULES_MSG_MAX	2048
/* A caller buffer of this size always holds the largest batch. */
#define NFTRULES_BATCH_MAX	((NFTRULES_MAX_MSGS + 2) * NFTRULES_MSG_MAX)
#define NFTRULES_WHAT_MAX	112
#define NFTRULES_IFNAME_MAX	16	/* IFNAMSIZ, NUL included */

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
	/* Transparent mode (nfttransp.h), one listener per family each.
	 * Workload side, shared layout: transparent/dns (loopback) set.
	 * Workload side, separate layout: via (next hops, port 0) or
	 * via_ifname, and via_dns. Guard side: in_ifname with transparent
	 * and dns; the table is then another one altogether. */
	struct nftrules_guard	transparent[2];
	size_t			ntransparent;
	struct nftrules_guard	dns[2];
	size_t			ndns;
	struct nftrules_guard	via[2];
	size_t			nvia;
	char			via_ifname[NFTRULES_IFNAME_MAX];
	int			via_dns;
	char			in_ifname[NFTRULES_IFNAME_MAX];
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

/* The parse behind nftrules_add_guard, for any listener address: "IPv4:PORT"
 * or "[IPv6]:PORT" into *g; what names it in messages ("guard"). */
int nftrules_parse_addr(const char *text, const char *what,
    struct nftrules_guard *g, char *err, size_t errlen);

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

/* The batch (nft/nftbatch.c).
 *
 * Writes batch begin; add table; delete table; add table; chains; rules;
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

/* ---- internal to nft/ (the rules nfttransp.c shares) ------------------ */

struct nftnl_chain;

/* NULL, or why g cannot be a destination (unspecified, multicast,
 * broadcast, IPv4-mapped). */
const char *nftrules_unusable(const struct nftrules_guard *g);
/* Each appends one kind of rule to chain c (named chain); iifname, when
 * not NULL, limits it to packets arriving on that interface. -1 on
 * allocation failure. */
int nftrules_rule_nd(struct nftnl_chain *c, const char *chain,
    const char *iifname, const unsigned char *dest,
    const unsigned char *mask, uint32_t len);
int nftrules_rule_guard(struct nftnl_chain *c, const char *chain,
    const char *iifname, const struct nftrules_guard *g);
int nftrules_rule_lo(struct nftnl_chain *c, const char *chain, uint32_t key);
int nftrules_rule_exempt(struct nftnl_chain *c, const char *chain,
    const struct nftrules_config *cfg);
int nftrules_rule_established(struct nftnl_chain *c, const char *chain,
    const char *iifname);
int nftrules_rules_reject(struct nftnl_chain *c, const char *chain,
    const char *iifname);

#endif
