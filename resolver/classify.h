/* Address classification: public or not, per
 * docs/design.md "Address classification", plus the operator's
 * --allow-range / --deny-range and the guard's own interface addresses.
 * Pure: no I/O, no logging. */
#ifndef EG_CLASSIFY_H
#define EG_CLASSIFY_H

#include <stddef.h>

#include "resolver/cidr.h"

struct classify_result {
	int		public;		/* 1 public, 0 non-public */
	/* What decided it, for logs and `egress-guard check`: e.g.
	 * "10.0.0.0/8 Private-Use", "allow-range 198.18.0.0/15",
	 * "deny-range 203.0.113.0/24", "own-address",
	 * "global unicast". Static or owned by the config. */
	const char	*range;
};

struct classify_cfg;

struct classify_cfg *classify_cfg_new(void);
void classify_cfg_free(struct classify_cfg *cfg);
int classify_cfg_allow(struct classify_cfg *cfg, const struct cidr *c);
int classify_cfg_deny(struct classify_cfg *cfg, const struct cidr *c);

/* The guard's own addresses and local prefixes, at most: a tenant-mode
 * guard has an address or two on each of up to 4096 tenant links
 * (TSPEC_MAX), each with its local and broadcast routes. */
#define CLASSIFY_MAX_OWN	32768

/* Replaces the set of the guard's own addresses: blocks, so that a prefix
 * the kernel delivers locally (a local route such as 198.51.100.0/24 on
 * lo) counts whole; an interface address is a /32 or /128. Blocks inside
 * loopback are ignored (loopback is governed by the table and
 * --allow-range 127.0.0.0/8). Every block must be cidr_valid. On error
 * the old set stays in force. */
int classify_cfg_set_own(struct classify_cfg *cfg, const struct cidr *own,
    size_t n);

/* Adds n blocks to the set in force: what a change announces, before the
 * whole set is read again (a block twice is harmless). -1, the set left
 * as it was, when the set is unknown, a block is not cidr_valid, the sum
 * passes CLASSIFY_MAX_OWN or memory runs out: the caller then declares
 * the set unknown. */
int classify_cfg_add_own(struct classify_cfg *cfg, const struct cidr *add,
    size_t n);

/* The own set could not be read (or was too large to hold): every address
 * classifies non-public ("own addresses unknown") until the next
 * successful classify_cfg_set_own. Fail closed. */
void classify_cfg_own_unknown(struct classify_cfg *cfg);

/* Classifies one address (family AF_INET: 4 bytes, AF_INET6: 16 bytes).
 * cfg may be NULL: the reference table alone. Order of rules:
 *   1. own address, in any spelling that embeds it (IPv4-mapped,
 *      -compatible, -translated, NAT64 64:ff9b::/96 and 64:ff9b:1::/48,
 *      6to4, Teredo, ISATAP) → deny;
 *   2. --deny-range → deny;
 *   3. the reference table, most specific row: a row that is never a
 *      destination (unspecified, IPv4-mapped/-compatible/-translated,
 *      multicast, limited broadcast) → deny whatever the ranges say; a
 *      denied row → deny unless an --allow-range that lies INSIDE that row
 *      contains the address (so ::/0 or 0.0.0.0/0 never open loopback or
 *      any other special block; 127.0.0.0/8 and ::1/128 open loopback);
 *      64:ff9b::/96 → its embedded IPv4 under these same rules (IPv6
 *      ranges do not open it; loopback and 0.0.0.0/8 never open through
 *      it);
 *   4. IPv6 outside 2000::/3 → deny unless an --allow-range contains it;
 *      else public.
 * Returns 1 public, 0 non-public; fills *res when res is not NULL. */
int classify_addr(const struct classify_cfg *cfg, int family,
    const unsigned char *addr, struct classify_result *res);

/* 1 when c, given as --allow-range, makes public at least one address the
 * reference table alone holds non-public; 0 when it opens nothing (it
 * lies inside no block it could open: 0.0.0.0/0, a public range,
 * ::ffff:0:0/96). Own addresses and --deny-range are left out. */
int classify_range_opens(const struct cidr *c);

#endif
