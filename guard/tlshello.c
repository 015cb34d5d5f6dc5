/* TLS ClientHello walk (RFC 8446 4.1.2, RFC 5246 7.4.1.2, RFC 6066 3).
 *
 * Nothing is buffered or copied: a cursor walks the handshake message
 * across record boundaries, skipping each 5-byte record header as it
 * reaches it. The function is stateless, so the caller simply calls again
 * with the longer buffer; rewalking at most TLSHELLO_INPUT_MAX bytes per
 * call is cheaper than a 64 KiB reassembly buffer per connection.
 *
 * Every check depends only on bytes already walked and on positions,
 * never on len, and "need more" is only answered when the next byte is
 * past len: that is what makes a prefix's verdict MORE or final. */
#include <stdint.h>
#include <string.h>

#include "guard/tlshello.h"

#define CT_HANDSHAKE	0x16
#define HS_CLIENT_HELLO	0x01
#define EXT_SERVER_NAME	0x0000
#define NAME_HOST	0x00
#define REC_HDR		5
#define SNI_RAW_MAX	(DEST_HOST_MAX + 1)	/* 253 plus one trailing dot */

struct cursor {
	const unsigned char	*b;
	size_t			 len;
	size_t			 pos;		/* next byte of b */
	size_t			 rec_left;	/* fragment bytes left in this record */
	size_t			 msg_left;	/* ClientHello body bytes left */
	int			 verdict;	/* MORE or MALFORMED once stopped */
};

static int
stop(struct cursor *c, int verdict)
{
	c->verdict = verdict;
	return -1;
}

/* Steps over a record header. Only handshake records may carry the
 * ClientHello; anything else in the middle of it is an attempt to make
 * this walk and the server's disagree. */
static int
next_record(struct cursor *c)
{
	size_t rlen;

	if (c->pos + REC_HDR > TLSHELLO_INPUT_MAX)
		return stop(c, TLSHELLO_MALFORMED);
	if (c->pos < c->len && c->b[c->pos] != CT_HANDSHAKE)
		return stop(c, TLSHELLO_MALFORMED);
	if (c->pos + 1 < c->len && c->b[c->pos + 1] != 3)
		return stop(c, TLSHELLO_MALFORMED);
	if (c->pos + REC_HDR > c->len)
		return stop(c, TLSHELLO_MORE);
	rlen = (size_t)c->b[c->pos + 3] << 8 | c->b[c->pos + 4];
	if (rlen == 0 || rlen > TLSHELLO_RECORD_MAX)
		return stop(c, TLSHELLO_MALFORMED);
	c->pos += REC_HDR;
	c->rec_left = rlen;
	return 0;
}

/* Takes n handshake bytes into dst (or drops them when dst is NULL).
 * A length that reaches past the ClientHello is malformed at once, before
 * any byte of it is waited for. */
static int
take(struct cursor *c, unsigned char *dst, size_t n)
{
	size_t k;

	if (n > c->msg_left)
		return stop(c, TLSHELLO_MALFORMED);
	c->msg_left -= n;
	while (n > 0) {
		if (c->rec_left == 0 && next_record(c) == -1)
			return -1;
		if (c->pos >= TLSHELLO_INPUT_MAX)
			return stop(c, TLSHELLO_MALFORMED);
		if (c->pos >= c->len)
			return stop(c, TLSHELLO_MORE);
		k = n;
		if (k > c->rec_left)
			k = c->rec_left;
		if (k > c->len - c->pos)
			k = c->len - c->pos;
		if (k > TLSHELLO_INPUT_MAX - c->pos)
			k = TLSHELLO_INPUT_MAX - c->pos;
		if (dst != NULL) {
			memcpy(dst, c->b + c->pos, k);
			dst += k;
		}
		c->pos += k;
		c->rec_left -= k;
		n -= k;
	}
	return 0;
}

static int
take8(struct cursor *c, size_t *v)
{
	unsigned char x;

	if (take(c, &x, 1) == -1)
		return -1;
	*v = x;
	return 0;
}

static int
take16(struct cursor *c, size_t *v)
{
	unsigned char x[2];

	if (take(c, x, 2) == -1)
		return -1;
	*v = (size_t)x[0] << 8 | x[1];
	return 0;
}

/* ServerNameList with exactly one HostName (RFC 6066 3: "MUST NOT contain
 * more than one name of the same name_type"; no other type is defined,
 * and an unknown one has no length we could skip by). */
static int
server_name(struct cursor *c, size_t elen, char *sni, size_t snilen)
{
	unsigned char raw[SNI_RAW_MAX];
	size_t list, type, nlen;
	struct dest d;
	int seen = 0;

	if (elen < 2)
		return stop(c, TLSHELLO_MALFORMED);
	if (take16(c, &list) == -1)
		return -1;
	if (list != elen - 2 || list == 0)
		return stop(c, TLSHELLO_MALFORMED);
	while (list > 0) {
		if (list < 3)
			return stop(c, TLSHELLO_MALFORMED);
		if (take8(c, &type) == -1)
			return -1;
		if (type != NAME_HOST || seen)
			return stop(c, TLSHELLO_MALFORMED);
		if (take16(c, &nlen) == -1)
			return -1;
		list -= 3;
		if (nlen == 0 || nlen > list || nlen > sizeof(raw))
			return stop(c, TLSHELLO_MALFORMED);
		if (take(c, raw, nlen) == -1)
			return -1;
		list -= nlen;
		/* brackets=1 makes a bare "::1" a syntax error; a bracketed
		 * literal parses, and is no HostName either. */
		if (dest_parse_host((const char *)raw, nlen, 1, &d, NULL, 0) == -1 ||
		    d.kind == DEST_IPV6)
			return stop(c, TLSHELLO_MALFORMED);
		if (strlen(d.host) >= snilen)
			return stop(c, TLSHELLO_MALFORMED);
		memcpy(sni, d.host, strlen(d.host) + 1);
		seen = 1;
	}
	return 0;
}

static int
walk(struct cursor *c, char *sni, size_t snilen)
{
	unsigned char hdr[3];
	size_t hs, n, total, type, elen;
	int have_sni = 0;

	/* The handshake header is read before the body length is known. */
	c->msg_left = 4;
	if (take8(c, &n) == -1)
		return -1;
	if (n != HS_CLIENT_HELLO)
		return stop(c, TLSHELLO_MALFORMED);
	if (take(c, hdr, 3) == -1)
		return -1;
	hs = (size_t)hdr[0] << 16 | (size_t)hdr[1] << 8 | hdr[2];
	/* Refuse now a message that could never fit in the input cap, even
	 * in full records, rather than wait for it. */
	n = (hs + 4 + TLSHELLO_RECORD_MAX - 1) / TLSHELLO_RECORD_MAX;
	if (hs + 4 + n * REC_HDR > TLSHELLO_INPUT_MAX)
		return stop(c, TLSHELLO_MALFORMED);
	c->msg_left = hs;

	if (take(c, NULL, 2 + 32) == -1)	/* legacy_version, random */
		return -1;
	if (take8(c, &n) == -1)
		return -1;
	if (n > 32)
		return stop(c, TLSHELLO_MALFORMED);
	if (take(c, NULL, n) == -1)
		return -1;
	if (take16(c, &n) == -1)
		return -1;
	if (n < 2 || n % 2 != 0)
		return stop(c, TLSHELLO_MALFORMED);
	if (take(c, NULL, n) == -1)
		return -1;
	if (take8(c, &n) == -1)
		return -1;
	if (n < 1)
		return stop(c, TLSHELLO_MALFORMED);
	if (take(c, NULL, n) == -1)
		return -1;
	if (c->msg_left == 0)
		return TLSHELLO_NO_SNI;	/* a hello without extensions */

	if (take16(c, &total) == -1)
		return -1;
	if (total != c->msg_left)
		return stop(c, TLSHELLO_MALFORMED);
	while (c->msg_left > 0) {
		if (take16(c, &type) == -1 || take16(c, &elen) == -1)
			return -1;
		if (elen > c->msg_left)
			return stop(c, TLSHELLO_MALFORMED);
		if (type != EXT_SERVER_NAME) {
			if (take(c, NULL, elen) == -1)
				return -1;
			continue;
		}
		/* A second server_name could be the one the server reads. */
		if (have_sni)
			return stop(c, TLSHELLO_MALFORMED);
		if (server_name(c, elen, sni, snilen) == -1)
			return -1;
		have_sni = 1;
	}
	return have_sni ? TLSHELLO_SNI : TLSHELLO_NO_SNI;
}

int
tlshello_sni(const unsigned char *b, size_t len, char *sni, size_t snilen)
{
	struct cursor c;
	int rc;

	if (sni == NULL || snilen < TLSHELLO_SNI_SIZE)
		return TLSHELLO_MALFORMED;
	sni[0] = '\0';
	if (len == 0)
		return TLSHELLO_MORE;
	if (b == NULL)
		return TLSHELLO_MALFORMED;
	/* SSLv2-style hellos (first byte 0x80) and plain text end here. */
	if (b[0] != CT_HANDSHAKE || (len > 1 && b[1] != 3))
		return TLSHELLO_NOT_TLS;
	memset(&c, 0, sizeof(c));
	c.b = b;
	c.len = len;
	rc = walk(&c, sni, snilen);
	if (rc == -1)
		rc = c.verdict;
	if (rc != TLSHELLO_SNI)
		sni[0] = '\0';
	return rc;
}
