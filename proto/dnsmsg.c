/* DNS query parser and answer builder; see proto/dnsmsg.h. Every read is
 * checked against len before it is made; nothing here allocates. */
#include <stdio.h>
#include <string.h>

#include "proto/dnsmsg.h"

#define FLAG_QR		0x8000
#define FLAG_AA		0x0400
#define FLAG_TC		0x0200
#define FLAG_RD		0x0100
#define FLAG_RA		0x0080
#define FLAG_CD		0x0010
#define OPCODE(f)	(((f) >> 11) & 0x0f)
#define OPT_FIXED	11	/* root owner, type, class, TTL, RDLENGTH */

static uint16_t
get16(const unsigned char *b)
{
	return (uint16_t)((b[0] << 8) | b[1]);
}

static void
put16(unsigned char *b, uint16_t v)
{
	b[0] = (unsigned char)(v >> 8);
	b[1] = (unsigned char)v;
}

/* 1 when the byte can stand in the dotted text for itself: the text then
 * names exactly one wire name. */
static int
plain_byte(unsigned char c)
{
	return c >= 0x21 && c <= 0x7e && c != '.' && c != '\\';
}

/* Reads the question name at b[off]; returns the offset after it, or 0
 * when it is malformed (0 is never a valid end: the header comes first). */
static size_t
parse_name(const unsigned char *b, size_t len, size_t off,
    struct dnsmsg_query *q)
{
	size_t wire = 0, t = 0;

	q->name_plain = 1;
	for (;;) {
		unsigned char n;

		if (off >= len)
			return 0;
		n = b[off];
		/* 0xc0 is a compression pointer, 0x40 and 0x80 the extended
		 * and reserved label types: none belongs in a question, and a
		 * pointer is how a loop or a read outside the message starts. */
		if (n & 0xc0)
			return 0;
		wire += 1u + n;
		if (wire > DNSMSG_NAME_WIRE_MAX)
			return 0;
		if (n == 0)
			break;
		if (len - off - 1 < n)
			return 0;
		if (t > 0)
			q->name[t++] = '.';
		for (size_t i = 0; i < n; i++) {
			unsigned char c = b[off + 1 + i];

			if (!plain_byte(c))
				q->name_plain = 0;
			/* The text is shorter than the wire by one byte, so it
			 * always fits; the bound is kept for the reader. */
			if (t < DNSMSG_NAME_TEXT_MAX)
				q->name[t++] = (char)c;
		}
		off += 1u + n;
	}
	q->name[t] = '\0';
	q->name_len = t;
	return off + 1;
}

enum dnsmsg_verdict
dnsmsg_parse_query(const unsigned char *b, size_t len, struct dnsmsg_query *q,
    int *rcode)
{
	size_t off, qend;
	uint16_t qd, an, ns, ar;

	memset(q, 0, sizeof(*q));
	*rcode = DNSMSG_FORMERR;
	if (b == NULL || len < DNSMSG_HEADER_LEN)
		return DNSMSG_DROP;
	q->id = get16(b);
	q->flags = get16(b + 2);
	if (q->flags & FLAG_QR)
		return DNSMSG_DROP;
	if (OPCODE(q->flags) != 0) {
		*rcode = DNSMSG_NOTIMP;
		return DNSMSG_ERROR;
	}
	qd = get16(b + 4);
	an = get16(b + 6);
	ns = get16(b + 8);
	ar = get16(b + 10);
	if (qd != 1 || an != 0 || ns != 0 || ar > 1)
		return DNSMSG_ERROR;
	off = parse_name(b, len, DNSMSG_HEADER_LEN, q);
	if (off == 0 || len - off < 4)
		goto formerr;
	q->qtype = get16(b + off);
	q->qclass = get16(b + off + 2);
	qend = off + 4;
	if (ar == 0 && qend != len)
		goto formerr;
	if (ar == 1) {
		/* One OPT record (RFC 6891): root owner, TYPE 41, and its
		 * RDATA ends the message. Read for its shape only: the
		 * answer carries no OPT, so it stays within 512 bytes. */
		if (len - qend < OPT_FIXED || b[qend] != 0 ||
		    get16(b + qend + 1) != DNSMSG_TYPE_OPT ||
		    get16(b + qend + 9) != len - qend - OPT_FIXED)
			goto formerr;
	}
	memcpy(q->question, b + DNSMSG_HEADER_LEN, qend - DNSMSG_HEADER_LEN);
	q->qlen = qend - DNSMSG_HEADER_LEN;
	if (q->qclass != DNSMSG_CLASS_IN) {
		*rcode = DNSMSG_REFUSED;
		return DNSMSG_ERROR;
	}
	*rcode = DNSMSG_NOERROR;
	return DNSMSG_QUERY;
formerr:
	q->name[0] = '\0';
	q->name_len = 0;
	q->name_plain = 0;
	q->qtype = q->qclass = 0;
	return DNSMSG_ERROR;
}

long
dnsmsg_build(const struct dnsmsg_query *q, int rcode, uint16_t rrtype,
    const unsigned char *rdata, size_t rdlen, size_t n, uint32_t ttl,
    int tc, unsigned char *out, size_t max)
{
	size_t off = DNSMSG_HEADER_LEN, rr = 12 + rdlen, fit, i;
	uint16_t flags;

	if (q == NULL || out == NULL || q->qlen > sizeof(q->question) ||
	    max < DNSMSG_HEADER_LEN + q->qlen || rdlen > 0xffff ||
	    (n > 0 && rdata == NULL) || rcode < 0 || rcode > 15)
		return -1;
	flags = FLAG_QR | FLAG_RA | (q->flags & (FLAG_RD | FLAG_CD)) |
	    (uint16_t)rcode;
	if (q->qlen == 0)
		n = 0;	/* no question, no name for the owner pointer */
	fit = (max - DNSMSG_HEADER_LEN - q->qlen) / rr;
	if (n > fit) {
		if (tc) {
			flags |= FLAG_TC;
			n = 0;
		} else {
			n = fit;
		}
	}
	if (n > 0xffff)
		n = 0xffff;
	put16(out, q->id);
	put16(out + 2, flags);
	put16(out + 4, q->qlen > 0);
	put16(out + 6, (uint16_t)n);
	put16(out + 8, 0);
	put16(out + 10, 0);
	memcpy(out + off, q->question, q->qlen);
	off += q->qlen;
	for (i = 0; i < n; i++) {
		/* The owner: a pointer to the question's name at offset 12. */
		out[off] = 0xc0;
		out[off + 1] = DNSMSG_HEADER_LEN;
		put16(out + off + 2, rrtype);
		put16(out + off + 4, DNSMSG_CLASS_IN);
		put16(out + off + 6, (uint16_t)(ttl >> 16));
		put16(out + off + 8, (uint16_t)ttl);
		put16(out + off + 10, (uint16_t)rdlen);
		memcpy(out + off + 12, rdata + i * rdlen, rdlen);
		off += rr;
	}
	return (long)off;
}

const char *
dnsmsg_type_name(uint16_t t, char buf[12])
{
	static const struct { uint16_t t; const char *name; } names[] = {
		{ 1, "A" }, { 2, "NS" }, { 5, "CNAME" }, { 6, "SOA" },
		{ 12, "PTR" }, { 15, "MX" }, { 16, "TXT" }, { 28, "AAAA" },
		{ 33, "SRV" }, { 64, "SVCB" }, { 65, "HTTPS" }, { 252, "AXFR" },
		{ 255, "ANY" },
	};
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (names[i].t == t)
			return names[i].name;
	snprintf(buf, 12, "TYPE%u", (unsigned)t);
	return buf;
}

const char *
dnsmsg_rcode_name(int rcode)
{
	static const char *const names[] = {
		"NOERROR", "FORMERR", "SERVFAIL", "NXDOMAIN", "NOTIMP", "REFUSED"
	};

	if (rcode >= 0 && rcode < (int)(sizeof(names) / sizeof(names[0])))
		return names[rcode];
	return "RCODE?";
}
