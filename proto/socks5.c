/* SOCKS5 frames (RFC 1928), server side. Destinations go through the same
 * dest_parse_host as CONNECT targets, so a SOCKS5 client cannot name
 * anything an HTTP client could not: one grammar, one normal form. */
#include <stdio.h>
#include <string.h>

#include "proto/socks5.h"

#define ATYP_IPV4	0x01
#define ATYP_DOMAIN	0x03
#define ATYP_IPV6	0x04

long
socks5_parse_greeting(const unsigned char *b, size_t len, int *noauth)
{
	size_t n, i;

	if (noauth != NULL)
		*noauth = 0;
	if (len == 0)
		return 0;
	if (b == NULL || noauth == NULL)
		return -1;
	/* A SOCKS4 client (VER 4) is refused here rather than misread. */
	if (b[0] != SOCKS5_VERSION)
		return -1;
	if (len < 2)
		return 0;
	n = b[1];
	if (n == 0)
		return -1;
	if (len < 2 + n)
		return 0;
	for (i = 0; i < n; i++)
		if (b[2 + i] == SOCKS5_METHOD_NOAUTH)
			*noauth = 1;
	return (long)(2 + n);
}

static long
refuse(struct socks5_req *r, unsigned char *reply, unsigned char code)
{
	memset(r, 0, sizeof(*r));
	*reply = code;
	return -1;
}

/* A domain ATYP names a host the way a CONNECT target does: a name or a
 * strict dotted quad. dest_parse_host with brackets=1 refuses a bare IPv6
 * literal; a bracketed one parses, so its kind is refused here. */
static int
parse_domain(const unsigned char *s, size_t n, struct dest *d)
{
	if (dest_parse_host((const char *)s, n, 1, d, NULL, 0) == -1)
		return -1;
	if (d->kind == DEST_IPV6) {
		memset(d, 0, sizeof(*d));
		return -1;
	}
	return 0;
}

/* The address goes out as text and back through dest_parse_host, so it
 * carries exactly the normal form a CONNECT literal would. IPv6 is written
 * as eight full hex groups rather than with inet_ntop, which prints
 * ::ffff:a.b.c.d for mapped addresses, a form dest refuses. */
static int
parse_ipv4(const unsigned char a[4], struct dest *d)
{
	char buf[sizeof("255.255.255.255")];
	int n;

	n = snprintf(buf, sizeof(buf), "%u.%u.%u.%u", a[0], a[1], a[2], a[3]);
	if (n < 0 || (size_t)n >= sizeof(buf))
		return -1;
	return dest_parse_host(buf, (size_t)n, 0, d, NULL, 0);
}

static int
parse_ipv6(const unsigned char a[16], struct dest *d)
{
	static const char hex[] = "0123456789abcdef";
	char buf[8 * 5];
	size_t i, n = 0;

	for (i = 0; i < 16; i++) {
		if (i > 0 && i % 2 == 0)
			buf[n++] = ':';
		buf[n++] = hex[a[i] >> 4];
		buf[n++] = hex[a[i] & 0xf];
	}
	return dest_parse_host(buf, n, 0, d, NULL, 0);
}

long
socks5_parse_request(const unsigned char *b, size_t len,
    struct socks5_req *r, unsigned char *reply)
{
	size_t alen, need;
	const unsigned char *addr;
	unsigned char atyp;
	int rc;

	if (r == NULL || reply == NULL)
		return -1;
	memset(r, 0, sizeof(*r));
	if (len == 0)
		return 0;
	if (b == NULL)
		return refuse(r, reply, SOCKS5_REP_SYNTAX);
	/* Wire order: each verdict rests only on the bytes before it. */
	if (b[0] != SOCKS5_VERSION)
		return refuse(r, reply, SOCKS5_REP_SYNTAX);
	if (len < 2)
		return 0;
	if (b[1] != SOCKS5_CMD_CONNECT)
		return refuse(r, reply, SOCKS5_REP_CMD_UNSUPPORTED);
	if (len < 3)
		return 0;
	if (b[2] != 0)
		return refuse(r, reply, SOCKS5_REP_SYNTAX);
	if (len < 4)
		return 0;
	atyp = b[3];
	switch (atyp) {
	case ATYP_IPV4:
		alen = 4;
		addr = b + 4;
		break;
	case ATYP_IPV6:
		alen = 16;
		addr = b + 4;
		break;
	case ATYP_DOMAIN:
		if (len < 5)
			return 0;
		alen = b[4];
		if (alen == 0)
			return refuse(r, reply, SOCKS5_REP_SYNTAX);
		addr = b + 5;
		break;
	default:
		return refuse(r, reply, SOCKS5_REP_ATYP_UNSUPPORTED);
	}
	need = (size_t)(addr - b) + alen + 2;
	if (len < need)
		return 0;
	if (atyp == ATYP_IPV4)
		rc = parse_ipv4(addr, &r->dest);
	else if (atyp == ATYP_IPV6)
		rc = parse_ipv6(addr, &r->dest);
	else
		rc = parse_domain(addr, alen, &r->dest);
	if (rc == -1)
		return refuse(r, reply, SOCKS5_REP_SYNTAX);
	r->dest.port = (uint16_t)(addr[alen] << 8 | addr[alen + 1]);
	if (r->dest.port == 0)
		return refuse(r, reply, SOCKS5_REP_SYNTAX);
	r->cmd = SOCKS5_CMD_CONNECT;
	return (long)need;
}

size_t
socks5_reply(unsigned char out[SOCKS5_REPLY_LEN], unsigned char code)
{
	memset(out, 0, SOCKS5_REPLY_LEN);
	out[0] = SOCKS5_VERSION;
	out[1] = code;
	out[3] = ATYP_IPV4;
	return SOCKS5_REPLY_LEN;
}
