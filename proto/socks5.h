/* SOCKS5 (RFC 1928) server-side frame parsers: method 0x00 (no
 * authentication) and CONNECT only. Pure: bytes in, struct out; no
 * sockets, no logging. The caller owns I/O and the order of checks. */
#ifndef EG_SOCKS5_H
#define EG_SOCKS5_H

#include <stddef.h>

#include "policy/dest.h"

#define SOCKS5_VERSION		0x05
#define SOCKS5_METHOD_NOAUTH	0x00
#define SOCKS5_METHOD_NONE	0xff	/* "no acceptable methods" */
#define SOCKS5_CMD_CONNECT	0x01

#define SOCKS5_GREETING_MAX	257	/* VER NMETHODS METHODS[255] */
#define SOCKS5_REQ_MAX		262	/* longest request: 255-byte domain */
#define SOCKS5_REPLY_LEN	10

/* Reply codes the guard sends (docs/design.md "Reasons"). */
#define SOCKS5_REP_SUCCEEDED		0x00
#define SOCKS5_REP_SYNTAX		0x01	/* general failure: bad frame or destination */
#define SOCKS5_REP_DENIED		0x02	/* policy or non-public address */
#define SOCKS5_REP_DNS_FAILURE		0x04	/* host unreachable */
#define SOCKS5_REP_REFUSED		0x05	/* connection refused / unreachable */
#define SOCKS5_REP_CMD_UNSUPPORTED	0x07
#define SOCKS5_REP_ATYP_UNSUPPORTED	0x08

struct socks5_req {
	unsigned char	cmd;	/* always SOCKS5_CMD_CONNECT on success */
	struct dest	dest;	/* normalised as dest_parse_host does; port set */
};

/* Parses the method-selection message. Returns the bytes it takes (> 0),
 * 0 when more bytes are needed, -1 when malformed (VER != 5, NMETHODS 0).
 * On success *noauth is 1 if method 0x00 was offered, else 0; the server
 * then answers 05 00, or 05 FF and closes. Bytes after it are not read. */
long socks5_parse_greeting(const unsigned char *b, size_t len, int *noauth);

/* Parses a request. Returns the bytes it takes (> 0; bytes after it are
 * not read), 0 when more bytes are needed, or -1 with *reply set to the
 * code to send before closing: SOCKS5_REP_CMD_UNSUPPORTED for any command
 * but CONNECT, SOCKS5_REP_ATYP_UNSUPPORTED for an unknown ATYP,
 * SOCKS5_REP_SYNTAX for VER != 5, RSV != 0, port 0 or a destination the
 * docs/design.md grammar refuses (a domain ATYP holding an IPv6 literal
 * included). Fields are checked in wire order, so the verdict on a prefix
 * is either 0 or the verdict on the whole. *r is zeroed unless > 0. */
long socks5_parse_request(const unsigned char *b, size_t len,
    struct socks5_req *r, unsigned char *reply);

/* Writes the 10-byte reply VER=5 REP=code RSV=0 ATYP=1 0.0.0.0:0 and
 * returns its length. */
size_t socks5_reply(unsigned char out[SOCKS5_REPLY_LEN], unsigned char code);

#endif
