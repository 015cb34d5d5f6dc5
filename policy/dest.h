/* Destination syntax shared by CONNECT targets, SOCKS5 requests and policy
 * entries (docs/design.md "Destination syntax"). Pure: bytes in, struct out. */
#ifndef EG_DEST_H
#define EG_DEST_H

#include <stddef.h>
#include <stdint.h>

#define DEST_HOST_MAX 253	/* longest normalised host, without NUL */

enum dest_kind {
	DEST_NAME = 1,		/* DNS host name, lower-cased, no trailing dot */
	DEST_IPV4,		/* strict dotted quad */
	DEST_IPV6		/* bracketed literal, stored unbracketed */
};

struct dest {
	enum dest_kind	kind;
	char		host[DEST_HOST_MAX + 1];	/* normalised, NUL-terminated */
	uint16_t	port;
	unsigned char	addr[16];	/* network order, IP literals only */
};

/* Parses "host:port" or "[v6]:port" (len bytes, no NUL needed). On success
 * fills *d with the normalised form and returns 0. On failure returns -1
 * and writes a one-line reason to err (never containing raw input bytes). */
int dest_parse_authority(const char *s, size_t len, struct dest *d,
    char *err, size_t errlen);

/* Parses a host alone (a name, a dotted quad, or an IPv6 literal in
 * brackets when brackets is 1, bare when brackets is 0). d->port is left 0. */
int dest_parse_host(const char *s, size_t len, int brackets, struct dest *d,
    char *err, size_t errlen);

/* 1 when s is a host exactly as dest_parse_host(s, len, 0, …) writes
 * it: normalised, an IPv6 literal bare. For the hosts of a canonical
 * policy, which must be, at a cost that suits a million of them. */
int dest_host_is_normal(const char *s, size_t len);

/* Parses a port: decimal 1-65535, no sign, no leading zero. */
int dest_parse_port(const char *s, size_t len, uint16_t *port);

/* "ffff:…:ffff", the longest pure-hex IPv6 text, and its NUL. */
#define DEST_V6_TEXT	40

/* An IPv6 address as this grammar writes it: RFC 5952, always pure hex
 * (inet_ntop writes ::ffff:a.b.c.d, which the grammar refuses). out
 * holds DEST_V6_TEXT bytes. */
void dest_ipv6_str(const unsigned char a[16], char *out);

/* Writes "host:port" ("[v6]:port" for IPv6) to buf. Returns the length,
 * or -1 if it did not fit. */
int dest_format(const struct dest *d, char *buf, size_t buflen);

#endif
