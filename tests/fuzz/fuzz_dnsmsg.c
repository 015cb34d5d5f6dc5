/* proto/dnsmsg: dnsmsg_parse_query on the input (an exact-size copy),
 * then dnsmsg_build of an answer to it, over UDP and over TCP.
 *
 * Beyond "no crash":
 *  - under 12 bytes or with QR set the message is dropped; an error
 *    carries FORMERR, NOTIMP or REFUSED, and only REFUSED (class not IN)
 *    keeps the question;
 *  - an accepted query's question is the input's bytes after the header,
 *    class IN, and its text name (when plain) spells exactly the wire
 *    labels; every proper prefix of an accepted query is refused (strict:
 *    nothing is optional once the header counts it);
 *  - an answer fits its bound (512 UDP, 4096 TCP), echoes id and
 *    question, counts exactly the records it holds, sets TC only with no
 *    record, and is itself a message the parser drops (QR set), so two
 *    guards can never answer each other in a loop. */
#include <string.h>

#include "proto/dnsmsg.h"
#include "tests/fuzz/fuzz.h"

#define PREFIX_MAX	600	/* every prefix checked below this length */

/* The wire name the text of a plain name stands for equals the question's
 * name bytes. */
static void
check_name(const struct dnsmsg_query *q)
{
	unsigned char wire[DNSMSG_NAME_WIRE_MAX + 1];
	size_t w = 0, i = 0, start;

	FUZZ_CHECK(q->name_len <= DNSMSG_NAME_TEXT_MAX);
	FUZZ_CHECK(q->name[q->name_len] == '\0');
	if (!q->name_plain)
		return;	/* label bytes may be anything, NUL included */
	FUZZ_CHECK(q->name_len == strlen(q->name));
	while (i < q->name_len) {
		start = i;
		while (i < q->name_len && q->name[i] != '.')
			i++;
		FUZZ_CHECK(i > start && i - start <= DNSMSG_LABEL_MAX);
		wire[w++] = (unsigned char)(i - start);
		memcpy(wire + w, q->name + start, i - start);
		w += i - start;
		if (i < q->name_len)
			i++;	/* the dot; a trailing one would fail above */
	}
	wire[w++] = 0;
	FUZZ_CHECK(w + 4 == q->qlen);
	FUZZ_CHECK(memcmp(wire, q->question, w) == 0);
}

static void
check_answer(const struct dnsmsg_query *q, int rcode, const uint8_t *data,
    size_t size, int udp)
{
	unsigned char out[DNSMSG_TCP_MAX];
	size_t max = udp ? DNSMSG_UDP_MAX : DNSMSG_TCP_MAX;
	size_t rdlen = q->qtype == DNSMSG_TYPE_AAAA ? 16 : 4;
	size_t n = size / rdlen, an;
	struct dnsmsg_query back;
	long len;
	int rc;

	len = dnsmsg_build(q, rcode, q->qtype, data, rdlen, n, 30, udp, out, max);
	FUZZ_CHECK(len >= DNSMSG_HEADER_LEN && (size_t)len <= max);
	FUZZ_CHECK(out[0] == q->id >> 8 && out[1] == (q->id & 0xff));
	FUZZ_CHECK((out[2] & 0x80) && (out[3] & 0x0f) == rcode);
	FUZZ_CHECK(out[4] == 0 && out[5] == (q->qlen > 0));
	an = (size_t)out[6] << 8 | out[7];
	FUZZ_CHECK((size_t)len == DNSMSG_HEADER_LEN + q->qlen + an * (12 + rdlen));
	FUZZ_CHECK(memcmp(out + DNSMSG_HEADER_LEN, q->question, q->qlen) == 0);
	if (out[2] & 0x02)
		FUZZ_CHECK(udp && an == 0 && n > 0);
	else
		FUZZ_CHECK(an == (q->qlen > 0 ? n : 0) || (!udp && an < n));
	FUZZ_CHECK(dnsmsg_parse_query(out, (size_t)len, &back, &rc) ==
	    DNSMSG_DROP);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct dnsmsg_query q, p;
	enum dnsmsg_verdict v;
	unsigned char *b;
	size_t k;
	int rc = -1, prc;

	if (size > DNSMSG_TCP_MAX)
		return 0;	/* the listener reads no longer message */
	b = (unsigned char *)fuzz_dup(data, size);
	v = dnsmsg_parse_query(b, size, &q, &rc);
	switch (v) {
	case DNSMSG_DROP:
		FUZZ_CHECK(size < DNSMSG_HEADER_LEN || (b[2] & 0x80));
		break;
	case DNSMSG_ERROR:
		FUZZ_CHECK(rc == DNSMSG_FORMERR || rc == DNSMSG_NOTIMP ||
		    rc == DNSMSG_REFUSED);
		FUZZ_CHECK((rc == DNSMSG_REFUSED) == (q.qlen > 0));
		if (rc == DNSMSG_REFUSED)
			FUZZ_CHECK(q.qclass != DNSMSG_CLASS_IN);
		check_answer(&q, rc, data, size, 1);
		break;
	case DNSMSG_QUERY:
		FUZZ_CHECK(rc == DNSMSG_NOERROR);
		FUZZ_CHECK(q.qlen >= 5 && DNSMSG_HEADER_LEN + q.qlen <= size);
		FUZZ_CHECK(memcmp(q.question, b + DNSMSG_HEADER_LEN, q.qlen) == 0);
		FUZZ_CHECK(q.qclass == DNSMSG_CLASS_IN);
		FUZZ_CHECK(q.qtype == (b[DNSMSG_HEADER_LEN + q.qlen - 4] << 8 |
		    b[DNSMSG_HEADER_LEN + q.qlen - 3]));
		check_name(&q);
		check_answer(&q, DNSMSG_NOERROR, data, size, 1);
		check_answer(&q, DNSMSG_NOERROR, data, size, 0);
		for (k = DNSMSG_HEADER_LEN; k < size && size < PREFIX_MAX; k++) {
			unsigned char *c = (unsigned char *)fuzz_dup(b, k);

			FUZZ_CHECK(dnsmsg_parse_query(c, k, &p, &prc) ==
			    DNSMSG_ERROR && prc == DNSMSG_FORMERR);
			free(c);
		}
		break;
	default:
		FUZZ_CHECK(0);
	}
	free(b);
	return 0;
}
