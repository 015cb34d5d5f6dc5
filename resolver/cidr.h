/* CIDR blocks: "a.b.c.d/n" and "v6/n", parsed strictly and formatted
 * back, and the bit arithmetic on them. Pure: no I/O, no state. */
#ifndef EG_CIDR_H
#define EG_CIDR_H

#include <stddef.h>

struct cidr {
	int		family;		/* AF_INET or AF_INET6 */
	unsigned char	addr[16];	/* network order, host bits zeroed */
	unsigned int	prefix;		/* 0-32 or 0-128 */
};

/* Parses "a.b.c.d/n" or "v6/n" strictly (no host bits set beyond the
 * prefix, no leading zeros in the IPv4 part). Returns 0 or -1 with err. */
int cidr_parse(const char *s, struct cidr *out, char *err, size_t errlen);

/* Formats a CIDR back ("198.18.0.0/15"). Returns length or -1. */
int cidr_format(const struct cidr *c, char *buf, size_t len);

/* Address bytes of a family: 4 (AF_INET), 16 (AF_INET6), else 0. */
size_t cidr_family_len(int family);
/* 1 when the first prefix bits of a and net are equal. */
int cidr_prefix_match(const unsigned char *a, const unsigned char *net,
    unsigned int prefix);
/* The first and last address (len bytes each) of the block net/prefix. */
void cidr_ends(const unsigned char *net, unsigned int prefix, size_t len,
    unsigned char *first, unsigned char *last);
/* a (len bytes, network order) plus one (up) or minus one: 0, or -1 when
 * that leaves the address space (a has wrapped around). */
int cidr_step(unsigned char *a, size_t len, int up);
/* 1 when any of a's alen bytes has a bit set past the prefix. */
int cidr_host_bits_set(const unsigned char *a, size_t alen, unsigned int prefix);
/* 1 when c is a well-formed block: a known family, a prefix within it,
 * no host bits. */
int cidr_valid(const struct cidr *c);
/* 1 when a and b are the same block. */
int cidr_equal(const struct cidr *a, const struct cidr *b);

#endif
