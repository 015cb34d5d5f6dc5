/* Strict incremental framing of the chunked transfer coding (RFC 9112
 * 7.1), so a body is forwarded exactly and nothing after it can reach the
 * peer as part of it. Pure: no sockets, no logging, no allocation.
 * chunked_feed does not decode: the caller forwards what is counted
 * verbatim; chunked_decode also says which of those bytes are data. */
#ifndef EG_CHUNKED_H
#define EG_CHUNKED_H

#include <stddef.h>
#include <stdint.h>

#define CHUNKED_LINE_MAX	4096	/* chunk-size line, extensions and CRLF */
#define CHUNKED_TRAILER_MAX	16384	/* trailer section with its final CRLF */
#define CHUNKED_MAX_TRAILERS	100

/* Stack-allocatable; the fields are private to proto/chunked.c. */
struct chunked {
	int		state;
	unsigned int	ndigits;	/* hex digits of the chunk-size so far */
	uint64_t	left;		/* chunk-size, then data bytes left */
	size_t		line;		/* bytes of the current chunk-size line */
	size_t		trailer;	/* bytes of the trailer section */
	unsigned int	nfields;	/* trailer fields */
	char		tname[20];	/* a trailer field's name, lower case, cut */
	size_t		tname_len;	/* its whole length */
};

void chunked_init(struct chunked *c);

/* Reads up to len bytes of a chunked body from where the last call
 * stopped. Returns how many belong to the body (>= 0; the caller forwards
 * exactly those) and sets *done to 1 once the last chunk, the trailer
 * section and the final CRLF are in: the count then stops there, and any
 * bytes after it are the next message's. Returns -1, now and on every
 * later call, on anything outside the grammar:
 *   chunk-size   1-16 hex digits, value < 2^63; nothing before them
 *   chunk-ext    *( ";" token [ "=" ( token / quoted-string ) ] ), no
 *                whitespace anywhere (BWS refused), no obs-text
 *   line ends    CRLF only: bare LF, CR without LF, NUL and other control
 *                bytes are refused; chunk data is followed by exactly CRLF
 *   trailer      token ":" OWS value OWS CRLF (value: VCHAR, SP, HTAB),
 *                no obs-fold, at most CHUNKED_MAX_TRAILERS fields, none
 *                named for framing, routing or one hop (Content-Length,
 *                Transfer-Encoding, Host, Connection, Keep-Alive, TE,
 *                Trailer, Upgrade, Proxy-*): the body is forwarded
 *                verbatim, and a peer that merges trailers into the
 *                header section would act on them
 * Feeding the body in any split gives the same total as one call. */
long chunked_feed(struct chunked *c, const char *b, size_t len, int *done);

/* chunked_feed for a caller that removes the framing (an HTTP/1.0 client
 * must never see a chunked body): the same grammar and the same count,
 * but it stops at the end of the first run of chunk data. Of the bytes it
 * returns, [*data_off, *data_off + *data_len) are chunk data and end the
 * run (*data_len is 0 when there were none); the rest is framing. Call
 * again with the bytes after the returned count. */
long chunked_decode(struct chunked *c, const char *b, size_t len, int *done,
    size_t *data_off, size_t *data_len);

/* Chunk data announced and not yet returned: while a chunk-size is read,
 * its value so far; inside chunk data, the bytes still to come; else 0.
 * Lets a caller that keeps the data refuse a chunk past its own bound
 * before the data arrives. */
uint64_t chunked_pending(const struct chunked *c);

/* For a Transfer-Encoding field value (len bytes): 1 if it is a list of
 * transfer codings whose last is "chunked" (case-insensitive; OWS around
 * commas and empty elements allowed), 0 if the list is well-formed but
 * does not end in chunked (then the body has no chunked framing), -1 if
 * malformed: an element that is not a bare token (parameters, quotes,
 * inner whitespace, control or non-ASCII bytes), chunked applied twice,
 * or no element at all. */
int chunked_te_is_final_chunked(const char *v, size_t len);

#endif
