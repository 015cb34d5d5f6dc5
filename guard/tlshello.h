/* SNI extraction from the first bytes a client sends in a tunnel, for the
 * SNI check (docs/design.md "SNI gate"). Pure: bytes in, name out; no
 * sockets, no logging, no allocation, no copy of the handshake. */
#ifndef EG_TLSHELLO_H
#define EG_TLSHELLO_H

#include <stddef.h>

#include "policy/dest.h"

#define TLSHELLO_NOT_TLS	(-2)	/* not a TLS handshake record */
#define TLSHELLO_MALFORMED	(-1)	/* TLS, but not a ClientHello we accept */
#define TLSHELLO_MORE		0	/* call again with more bytes */
#define TLSHELLO_SNI		1	/* sni holds the host name */
#define TLSHELLO_NO_SNI		2	/* complete ClientHello, no server_name */

#define TLSHELLO_INPUT_MAX	65536	/* ClientHello plus record headers */
#define TLSHELLO_RECORD_MAX	16384	/* TLSPlaintext.length (RFC 8446 5.1) */
#define TLSHELLO_SNI_SIZE	(DEST_HOST_MAX + 1)

/* b holds the first len bytes of the client stream. Call again with the
 * whole, longer buffer after each read while TLSHELLO_MORE comes back;
 * the ClientHello may be split across TCP segments and across consecutive
 * handshake records (zero-length records refused). Once len reaches
 * TLSHELLO_INPUT_MAX the answer is never TLSHELLO_MORE, so a buffer of
 * that size always ends in a verdict. The verdict on a prefix is either
 * TLSHELLO_MORE or the verdict on the whole. Bytes after the ClientHello
 * are not read.
 *
 * On TLSHELLO_SNI, sni (snilen >= TLSHELLO_SNI_SIZE, else MALFORMED) holds
 * the one host_name, normalised by dest_parse_host: lower case, one
 * trailing dot removed, NUL-terminated. A name dest refuses, an IPv6
 * literal, several host_name entries or server_name extensions, and any
 * length reaching past its enclosing structure are MALFORMED. A strict
 * dotted quad (which RFC 6066 forbids but some clients send) is returned
 * as is: the SNI check compares it with the CONNECT host like a name.
 * sni is "" on every other result. */
int tlshello_sni(const unsigned char *b, size_t len, char *sni, size_t snilen);

#endif
