/* DNS messages (RFC 1035) for the guard's DNS listener (guard/dnsd.c):
 * the parser of a workload's query and the builder of the answer. Pure:
 * bytes in, struct out; no sockets, no logging. Strict on purpose: one
 * question, opcode QUERY, no compression in the question, and nothing
 * after it but one EDNS OPT record (docs/design.md "DNS listener"). */
#ifndef EG_DNSMSG_H
#define EG_DNSMSG_H

#include <stddef.h>
#include <stdint.h>

#define DNSMSG_HEADER_LEN	12
#define DNSMSG_UDP_MAX		512	/* answered over UDP; more sets TC */
#define DNSMSG_TCP_MAX		4096	/* a query or answer over TCP */
#define DNSMSG_NAME_WIRE_MAX	255	/* RFC 1035 2.3.4, with the root byte */
#define DNSMSG_LABEL_MAX	63
/* The dotted text of the longest wire name, without a trailing dot. */
#define DNSMSG_NAME_TEXT_MAX	253

#define DNSMSG_TYPE_A		1
#define DNSMSG_TYPE_AAAA	28
#define DNSMSG_TYPE_OPT		41
#define DNSMSG_CLASS_IN		1

enum dnsmsg_rcode {
	DNSMSG_NOERROR = 0,
	DNSMSG_FORMERR = 1,
	DNSMSG_SERVFAIL = 2,
	DNSMSG_NXDOMAIN = 3,
	DNSMSG_NOTIMP = 4,
	DNSMSG_REFUSED = 5
};

struct dnsmsg_query {
	uint16_t	id;
	uint16_t	flags;		/* the query's; RD and CD go back */
	uint16_t	qtype;
	uint16_t	qclass;
	/* The question (name, type, class) exactly as received, echoed in
	 * the answer so the name keeps the client's case; qlen 0 when the
	 * parser refused the message before reading it whole. */
	unsigned char	question[DNSMSG_NAME_WIRE_MAX + 4];
	size_t		qlen;
	/* The name as dotted text, case as received, no trailing dot ("" is
	 * the root). Meaningful only when name_plain is 1: every label byte
	 * is printable ASCII other than '.' and '\\', so the text stands for
	 * exactly one wire name. */
	char		name[DNSMSG_NAME_TEXT_MAX + 1];
	size_t		name_len;
	int		name_plain;
};

enum dnsmsg_verdict {
	DNSMSG_QUERY = 0,	/* one question to decide */
	DNSMSG_ERROR,		/* answer *rcode at once (question echoed if qlen) */
	DNSMSG_DROP		/* never answered: under 12 bytes, or QR set */
};

/* Parses a query of len bytes. Checks, in wire order: 12-byte header
 * (else DROP), QR 0 (else DROP: a response is never answered, so two
 * resolvers cannot be made to loop), opcode QUERY (else NOTIMP), QDCOUNT
 * 1, ANCOUNT 0, NSCOUNT 0, ARCOUNT 0 or 1 (else FORMERR); the name: labels
 * of 1-63 bytes, 255 bytes in all, no compression pointer and no other
 * label type (FORMERR); type and class present (FORMERR); nothing after
 * them unless ARCOUNT is 1, and then exactly one OPT record with the root
 * owner that ends the message (FORMERR); class IN (else REFUSED, question
 * echoed). *rcode is set for DNSMSG_ERROR. q->id and q->flags are filled
 * whenever the header was read. */
enum dnsmsg_verdict dnsmsg_parse_query(const unsigned char *b, size_t len,
    struct dnsmsg_query *q, int *rcode);

/* Writes the answer to q into out (room for max bytes, max at least
 * DNSMSG_UDP_MAX): QR 1, opcode 0, AA 0, RA 1, RD and CD copied, rcode,
 * the question echoed when q->qlen > 0 (QDCOUNT 1, else 0), then n
 * records of type rrtype, class IN, ttl, each rdlen bytes from rdata, the
 * owner a pointer to the question's name. When they do not all fit in
 * max bytes: with tc set, none is written and TC is set (the client asks
 * again over TCP); without, as many as fit are written. Returns the
 * length, or -1 if max cannot hold the header and question. */
long dnsmsg_build(const struct dnsmsg_query *q, int rcode, uint16_t rrtype,
    const unsigned char *rdata, size_t rdlen, size_t n, uint32_t ttl,
    int tc, unsigned char *out, size_t max);

/* "A", "AAAA", "MX", … or "TYPE<n>", for logs. buf holds 12 bytes. */
const char *dnsmsg_type_name(uint16_t t, char buf[12]);

/* "NOERROR", "NXDOMAIN", …, "RCODE<n>". */
const char *dnsmsg_rcode_name(int rcode);

#endif
