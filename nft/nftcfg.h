/* What the nftables rules are built from: the guard listeners the
 * workload may reach, the shared layout's exemption, and transparent
 * mode's listeners and next hops (docs/nft.md). The lowest layer of nft/:
 * the default-deny rules (nftrules.c), transparent mode's (nfttransp.c)
 * and the rule builders both share (nftx.c) read this, and it reads
 * none of them. Pure: -1 with a message in err. */
#ifndef EG_NFTCFG_H
#define EG_NFTCFG_H

#include <stddef.h>
#include <stdint.h>

#define NFTCFG_TABLE		"egress_guard"
#define NFTCFG_MAX_GUARDS	64
#define NFTCFG_IFNAME_MAX	16	/* IFNAMSIZ, NUL included */

struct nftcfg_addr {
	int		family;		/* AF_INET or AF_INET6 */
	unsigned char	addr[16];	/* network order; AF_INET uses 4 */
	uint16_t	port;
};

/* Guards are kept sorted and unique, so apply and verify see one ruleset
 * whatever order the operator named them in. */
struct nftcfg {
	struct nftcfg_addr	guards[NFTCFG_MAX_GUARDS];
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
	struct nftcfg_addr	transparent[2];
	size_t			ntransparent;
	struct nftcfg_addr	dns[2];
	size_t			ndns;
	struct nftcfg_addr	via[2];
	size_t			nvia;
	char			via_ifname[NFTCFG_IFNAME_MAX];
	int			via_dns;
	char			in_ifname[NFTCFG_IFNAME_MAX];
};

#define NFTCFG_CGROUP_LEVEL_MAX	64

void nftcfg_init(struct nftcfg *cfg);

/* "IPv4:PORT" or "[IPv6]:PORT" (docs/design.md "Destination syntax", IP
 * literals only). Refuses names, port 0, unspecified, multicast, broadcast and
 * IPv4-mapped addresses, duplicates, and more than NFTCFG_MAX_GUARDS. */
int nftcfg_add_guard(struct nftcfg *cfg, const char *text,
    char *err, size_t errlen);

/* The parse behind nftcfg_add_guard, for any listener address: "IPv4:PORT"
 * or "[IPv6]:PORT" into *g; what names it in messages ("guard"). */
int nftcfg_parse_addr(const char *text, const char *what,
    struct nftcfg_addr *g, char *err, size_t errlen);

/* Decimal uid 1..4294967294. uid 0 is refused: exempting root would exempt
 * a workload that runs as root in the shared namespace. */
int nftcfg_set_exempt_uid(struct nftcfg *cfg, const char *text,
    char *err, size_t errlen);

/* The cgroup whose sockets may go anywhere: its id (the inode number of
 * its folder on the cgroup2 file system) and its depth below the root
 * (1..NFTCFG_CGROUP_LEVEL_MAX). The root cgroup (level 0) is refused: it
 * holds every process not placed elsewhere, the workload included. Once
 * set, it replaces the uid exemption. */
int nftcfg_set_exempt_cgroup(struct nftcfg *cfg, uint64_t id,
    uint32_t level, char *err, size_t errlen);

/* "10.0.0.1:3128" / "[fd00::1]:3128". Returns the length, or -1. */
int nftcfg_format_addr(const struct nftcfg_addr *g, char *buf,
    size_t len);

/* NULL, or why g cannot be a destination (unspecified, multicast,
 * broadcast, IPv4-mapped). */
const char *nftcfg_unusable(const struct nftcfg_addr *g);

#endif
