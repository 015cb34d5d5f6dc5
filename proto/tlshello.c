/* TLS ClientHello walk (RFC 8446 4.1.2, 5.1; RFC 5246 7.4.1.2, E.2;
 * RFC 6066 3).
 *
 * Two passes, each over every byte once. The record pass (feed) runs as
 * bytes arrive and keeps its place in struct tlshello: it checks each
 * record header and counts handshake bytes until the whole ClientHello
 * is in. Only then the message pass (walk) reads the hello's fields, once,
 * with a cursor that steps over the record headers in place: nothing is
 * buffered or copied, and no call re-reads what an earlier call took (a
 * stateless walk repeated on every read was quadratic: ten thousand
 * one-byte records fed six bytes at a time cost 0.4 s of CPU).
 *
 * The gate's strictness is the point: a server's record layer may
 * tolerate what this walk does not (Go's skips a leading alert and takes
 * any record version below 0x1000), so any TLS-shaped stream that is not
 * exactly one well-formed ClientHello in handshake records is refused
 * rather than passed as "not TLS".
 *
 * Every check depends only on bytes already taken and on positions,
 * never on len, and "need more" is only answered when the next byte is
 * past len: that is what makes a prefix's verdict MORE or final. */
#include <stdint.h>
#include <string.h>

#include "proto/tlshello.h"
#include "util/mutant.h"

#define CT_CCS		0x14
#define CT_ALERT	0x15
#define CT_HANDSHAKE	0x16
#define CT_DATA		0x17
#define CT_HEARTBEAT	0x18
#define HS_CLIENT_HELLO	0x01
#define SSL2_MT_CLIENT_HELLO	0x01
#define EXT_SERVER_NAME	0x0000
#define EXT_EARLY_DATA	0x002a
/* encrypted_client_hello (draft-ietf-tls-esni-13 and later) and the older
 * encrypted_server_name: the name the server acts on is then encrypted,
 * and the outer one proves nothing. */
#define EXT_ECH		0xfe0d
#define EXT_ESNI	0xffce
#define NAME_HOST	0x00
#define REC_HDR		5
#define REC_MINOR_MAX	4	/* 3.0 (SSLv3) .. 3.4 (never sent, tolerated) */
#define SNI_RAW_MAX	(DEST_HOST_MAX + 1)	/* 253 plus one trailing dot */
#define GO_ON		100	/* not a verdict: the record pass goes on */
/* TLSCiphertext.length: 2^14 + 2048 (RFC 5246 6.2.3; 8446 allows less). */
#define REC_CIPHER_MAX	(TLSHELLO_RECORD_MAX + 2048)

struct cursor {
	const unsigned char	*b;
	size_t			 len;		/* the hello's end: all of it is in */
	size_t			 pos;		/* next byte of b */
	size_t			 rec_left;	/* fragment bytes left in this record */
	size_t			 msg_left;	/* ClientHello body bytes left */
	int			 verdict;	/* MALFORMED once stopped */
	const char		*why;
	uint64_t		 examined;
	int			 early_data;	/* the extension was seen */
};

static int
stop(struct cursor *c, const char *why)
{
	c->verdict = TLSHELLO_MALFORMED;
	c->why = why;
	return -1;
}

/* Steps over a record header the record pass has already checked. */
static int
next_record(struct cursor *c)
{
	if (c->pos + REC_HDR > c->len)
		return stop(c, "record past the hello");
	c->rec_left = (size_t)c->b[c->pos + 3] << 8 | c->b[c->pos + 4];
	c->pos += REC_HDR;
	return 0;
}

/* Takes n handshake bytes into dst (or drops them when dst is NULL).
 * A length that reaches past the ClientHello is malformed. */
static int
take(struct cursor *c, unsigned char *dst, size_t n)
{
	size_t k;

	if (n > c->msg_left)
		return stop(c, "length past the end of the hello");
	c->msg_left -= n;
	while (n > 0) {
		if (c->rec_left == 0 && next_record(c) == -1)
			return -1;
		k = n < c->rec_left ? n : c->rec_left;
		if (k > c->len - c->pos)
			return stop(c, "record past the hello");
		if (dst != NULL) {
			memcpy(dst, c->b + c->pos, k);
			dst += k;
		}
		c->examined += k;
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
		return stop(c, "server_name too short");
	if (take16(c, &list) == -1)
		return -1;
	if (list != elen - 2 || list == 0)
		return stop(c, "server_name list length");
	while (list > 0) {
		if (list < 3)
			return stop(c, "server_name list length");
		if (take8(c, &type) == -1)
			return -1;
		if (type != NAME_HOST)
			return stop(c, "server_name type not host_name");
		if (seen)
			return stop(c, "two names in server_name");
		if (take16(c, &nlen) == -1)
			return -1;
		list -= 3;
		if (nlen == 0 || nlen > list || nlen > sizeof(raw))
			return stop(c, "server_name length");
		if (take(c, raw, nlen) == -1)
			return -1;
		list -= nlen;
		/* brackets=1 makes a bare "::1" a syntax error; a bracketed
		 * literal parses, and is no HostName either. */
		if (dest_parse_host((const char *)raw, nlen, 1, &d, NULL, 0) == -1 ||
		    d.kind == DEST_IPV6)
			return stop(c, "server_name not a host name");
		if (strlen(d.host) >= snilen)
			return stop(c, "server_name too long");
		memcpy(sni, d.host, strlen(d.host) + 1);
		seen = 1;
	}
	return 0;
}

/* The ClientHello body (the record pass has taken its 4-byte header and
 * checked it); returns SNI or NO_SNI, or -1 with c->verdict set. */
static int
walk(struct cursor *c, size_t hs, char *sni, size_t snilen)
{
	size_t n, total, type, elen;
	int have_sni = 0;

	c->msg_left = 4;
	if (take(c, NULL, 4) == -1)
		return -1;
	c->msg_left = hs;
	if (take(c, NULL, 2 + 32) == -1)	/* legacy_version, random */
		return -1;
	if (take8(c, &n) == -1)
		return -1;
	if (n > 32)
		return stop(c, "session_id longer than 32");
	if (take(c, NULL, n) == -1)
		return -1;
	if (take16(c, &n) == -1)
		return -1;
	if (n < 2 || n % 2 != 0)
		return stop(c, "cipher_suites length");
	if (take(c, NULL, n) == -1)
		return -1;
	if (take8(c, &n) == -1)
		return -1;
	if (n < 1)
		return stop(c, "no compression method");
	if (take(c, NULL, n) == -1)
		return -1;
	if (c->msg_left == 0)
		return TLSHELLO_NO_SNI;	/* a hello without extensions */

	if (take16(c, &total) == -1)
		return -1;
	if (total != c->msg_left)
		return stop(c, "extensions length");
	while (c->msg_left > 0) {
		if (take16(c, &type) == -1 || take16(c, &elen) == -1)
			return -1;
		if (elen > c->msg_left)
			return stop(c, "extension length past the hello");
		if (type == EXT_ECH || type == EXT_ESNI)
			return stop(c, "encrypted_client_hello");
		if (type == EXT_EARLY_DATA)
			c->early_data = 1;
		if (type != EXT_SERVER_NAME) {
			if (take(c, NULL, elen) == -1)
				return -1;
			continue;
		}
		/* A second server_name could be the one the server reads. */
		if (have_sni)
			return stop(c, "two server_name extensions");
		if (server_name(c, elen, sni, snilen) == -1)
			return -1;
		have_sni = 1;
	}
	return have_sni ? TLSHELLO_SNI : TLSHELLO_NO_SNI;
}

void
tlshello_init(struct tlshello *t)
{
	memset(t, 0, sizeof(*t));
	t->verdict = TLSHELLO_MORE;
}

static int
decide(struct tlshello *t, int verdict, const char *why)
{
	t->verdict = verdict;
	t->why = why;
	if (verdict != TLSHELLO_SNI)
		t->sni[0] = '\0';
	return verdict;
}

/* The first bytes' shape: TLS records, an SSLv2 hello, or plain bytes.
 * Returns GO_ON for TLS records, else the verdict (MORE while undecided). */
static int
shape(struct tlshello *t, const unsigned char *b, size_t len)
{
#ifdef EG_MUTANT_LENIENT_SNI
	/* The gate before issue 14: only 16 03 was TLS, the rest passed. */
	if (b[0] != CT_HANDSHAKE || (len > 1 && b[1] != 3))
		return decide(t, TLSHELLO_NOT_TLS, NULL);
#endif
	if (b[0] == CT_HANDSHAKE)
		return GO_ON;
	if (b[0] >= CT_CCS && b[0] <= CT_HEARTBEAT)
		return decide(t, TLSHELLO_MALFORMED, "first record not a handshake");
	/* SSLv2's two-byte record header (high bit set), then msg_type:
	 * what OpenSSL and GnuTLS take as a version-2 compatible hello. It
	 * cannot carry a server name, and this gate judges none. */
	if (b[0] & 0x80) {
		if (len < 3)
			return TLSHELLO_MORE;
		if (b[2] == SSL2_MT_CLIENT_HELLO)
			return decide(t, TLSHELLO_MALFORMED, "SSLv2 hello");
	}
	return decide(t, TLSHELLO_NOT_TLS, NULL);
}

/* Checks the record header at t->pos, as far as it has arrived. Returns
 * MORE, MALFORMED, or GO_ON once the whole header is in and good. */
static int
record_header(struct tlshello *t, const unsigned char *b, size_t len)
{
	const unsigned char *h = b + t->pos;
	size_t have = len - t->pos, rlen;

	/* The cap first: once len reaches it the answer is never MORE. */
	if (t->pos + REC_HDR > TLSHELLO_INPUT_MAX)
		return decide(t, TLSHELLO_MALFORMED, "hello larger than the cap");
	/* Only handshake records may carry the ClientHello; anything else
	 * in front of it or in its middle is an attempt to make this walk
	 * and the server's disagree. */
	if (have >= 1 && h[0] != CT_HANDSHAKE)
		return decide(t, TLSHELLO_MALFORMED, "record not a handshake");
	if (have >= 2 && h[1] != 3)
		return decide(t, TLSHELLO_MALFORMED, "record version");
	if (have >= 3 && h[2] > REC_MINOR_MAX)
		return decide(t, TLSHELLO_MALFORMED, "record version");
	if (have < REC_HDR)
		return TLSHELLO_MORE;
	rlen = (size_t)h[3] << 8 | h[4];
	if (rlen == 0 || rlen > TLSHELLO_RECORD_MAX)
		return decide(t, TLSHELLO_MALFORMED, "record length");
	t->examined += REC_HDR;
	t->pos += REC_HDR;
	t->rec_left = rlen;
	return GO_ON;
}

/* The handshake header is in: a length that can fit in the cap. */
static int
hello_header(struct tlshello *t)
{
	size_t n;

	t->hs_len = (size_t)t->hs_hdr[1] << 16 | (size_t)t->hs_hdr[2] << 8 |
	    t->hs_hdr[3];
	/* Refuse now a message that could never fit, even in full records,
	 * rather than wait for it. */
	n = (t->hs_len + 4 + TLSHELLO_RECORD_MAX - 1) / TLSHELLO_RECORD_MAX;
	if (t->hs_len + 4 + n * REC_HDR > TLSHELLO_INPUT_MAX)
		return decide(t, TLSHELLO_MALFORMED, "hello larger than the cap");
	return 0;
}

/* The whole hello is in b[0 .. t->pos): read its fields, once. */
static int
hello_body(struct tlshello *t, const unsigned char *b)
{
	struct cursor c;
	int rc;

	memset(&c, 0, sizeof(c));
	c.b = b;
	c.len = t->pos;
	rc = walk(&c, t->hs_len, t->sni, sizeof(t->sni));
	t->examined += c.examined;
	t->early_data = c.early_data;
	if (rc == -1)
		return decide(t, c.verdict, c.why);
	if (c.msg_left != 0 || c.pos != t->pos)	/* cannot be: same bytes */
		return decide(t, TLSHELLO_MALFORMED, "hello length");
	return decide(t, rc, NULL);
}

int
tlshello_feed(struct tlshello *t, const unsigned char *b, size_t len)
{
	size_t k, want;
	int rc;

	if (t->verdict != TLSHELLO_MORE)
		return t->verdict;
	if (len < t->pos)
		return decide(t, TLSHELLO_MALFORMED, "stream shrank");
	if (len == 0)
		return TLSHELLO_MORE;
	if (b == NULL)
		return decide(t, TLSHELLO_MALFORMED, "no buffer");
	if (t->pos == 0 && (rc = shape(t, b, len)) != GO_ON)
		return rc;
	for (;;) {
		if (t->rec_left == 0 &&
		    (rc = record_header(t, b, len)) != GO_ON)
			return rc;
		if (t->pos >= TLSHELLO_INPUT_MAX)
			return decide(t, TLSHELLO_MALFORMED, "hello larger than the cap");
		if (t->pos >= len)
			return TLSHELLO_MORE;
		want = t->hs_have < 4 ? 4 - t->hs_have : 4 + t->hs_len - t->hs_have;
		k = len - t->pos;
		if (k > t->rec_left)
			k = t->rec_left;
		if (k > want)
			k = want;
		if (k > TLSHELLO_INPUT_MAX - t->pos)
			k = TLSHELLO_INPUT_MAX - t->pos;
		if (t->hs_have < 4) {
			memcpy(t->hs_hdr + t->hs_have, b + t->pos, k);
			t->examined += k;
			if (t->hs_hdr[0] != HS_CLIENT_HELLO)
				return decide(t, TLSHELLO_MALFORMED,
				    "first message not a ClientHello");
			if (t->hs_have + k == 4 && hello_header(t) != 0)
				return t->verdict;
		}
		/* Body bytes are only counted here; walk reads them once. */
		t->pos += k;
		t->rec_left -= k;
		t->hs_have += k;
		if (t->hs_have < 4 || t->hs_have < 4 + t->hs_len)
			continue;
		/* The hello is complete. Anything behind it in the same
		 * record would be a second handshake message the server may
		 * read as a second ClientHello. */
		if (t->rec_left != 0)
			return decide(t, TLSHELLO_MALFORMED,
			    "record goes on past the hello");
		return hello_body(t, b);
	}
}

int
tlshello_sni(const unsigned char *b, size_t len, char *sni, size_t snilen)
{
	struct tlshello t;
	int rc;

	if (sni == NULL || snilen < TLSHELLO_SNI_SIZE)
		return TLSHELLO_MALFORMED;
	tlshello_init(&t);
	rc = tlshello_feed(&t, b, len);
	memcpy(sni, t.sni, strlen(t.sni) + 1);
	return rc;
}

/* ---- the watch after the first hello ----
 *
 * Why the client side: a server may act on a second ClientHello (OpenSSL
 * 3.0 does after its HelloRetryRequest, even one naming another host), so
 * the second must pass the first's rule before any of it reaches the
 * server. Reading the client's records needs no parse of the server's,
 * and it ends at the client's first record that cannot be a cleartext
 * ClientHello, usually the record right after the hello (or after the
 * compatibility CCS): the tunnel is then a plain relay again.
 *
 * Records are taken whole only when they are tiny (CCS, alert) or a
 * hello (tlshello_feed, on bytes that stay put: nothing is released
 * while a hello is read); the record that ends the watch is looked at
 * for its header and first byte only. */

void
tlshello_watch_init(struct tlshello_watch *w)
{
	memset(w, 0, sizeof(*w));
	w->verdict = TLSHELLO_MORE;
}

static int
watch_stop(struct tlshello_watch *w, int verdict, const char *why)
{
	w->verdict = verdict;
	w->why = why;
	return verdict;
}

/* A further hello, its first record at b: tlshello_feed's walk, which
 * stays incremental because b starts at the same byte on every call. */
static int
watch_hello(struct tlshello_watch *w, const unsigned char *b, size_t len,
    size_t *end)
{
	int rc;

	if (!w->in_hello) {
		if (w->hellos >= TLSHELLO_WATCH_HELLOS)
			return watch_stop(w, TLSHELLO_MALFORMED,
			    "a third ClientHello");
		tlshello_init(&w->hello);
		w->in_hello = 1;
	}
	rc = tlshello_feed(&w->hello, b, len);
	if (rc == TLSHELLO_MORE)
		return rc;
	if (rc != TLSHELLO_SNI && rc != TLSHELLO_NO_SNI)
		return watch_stop(w, TLSHELLO_MALFORMED, w->hello.why != NULL ?
		    w->hello.why : "second ClientHello malformed");
	w->in_hello = 0;
	w->hellos++;
	/* One retry at most (RFC 8446 4.1.4), and no 0-RTT after it: the
	 * next application data record is the encrypted flight. */
	w->early = 0;
	*end = w->hello.pos;
	return rc;
}

int
tlshello_watch(struct tlshello_watch *w, const unsigned char *b, size_t len,
    size_t *release)
{
	size_t pos = 0, rlen, end;
	const unsigned char *h;
	int rc;

	*release = 0;
	if (w->verdict != TLSHELLO_MORE)
		return w->verdict;
#ifdef EG_MUTANT_LENIENT_SNI
	/* The gate before the watch: the first hello only. */
	return watch_stop(w, TLSHELLO_DONE, NULL);
#endif
	if (w->in_hello)
		goto hello;
	for (;;) {
		h = b + pos;
		if (len - pos < 1)
			return TLSHELLO_MORE;
		/* Application data: TLS 1.3's encrypted flight, 1.2's data.
		 * Nothing in cleartext comes after it, unless it is 0-RTT
		 * data (w->early), which a server that asks for a second
		 * hello skips: then it is walked record by record, below. */
		if (h[0] == CT_DATA && !w->early)
			return watch_stop(w, TLSHELLO_DONE, NULL);
		if (h[0] < CT_CCS || h[0] > CT_DATA)
			return watch_stop(w, TLSHELLO_MALFORMED, h[0] == CT_HEARTBEAT ?
			    "heartbeat during the handshake" : "record type");
		if ((len - pos >= 2 && h[1] != 3) ||
		    (len - pos >= 3 && h[2] > REC_MINOR_MAX))
			return watch_stop(w, TLSHELLO_MALFORMED, "record version");
		if (len - pos < REC_HDR + 1)
			return TLSHELLO_MORE;
		rlen = (size_t)h[3] << 8 | h[4];
		if (rlen == 0 || rlen > REC_CIPHER_MAX)
			return watch_stop(w, TLSHELLO_MALFORMED, "record length");
		if (h[0] == CT_HANDSHAKE) {
			/* ClientKeyExchange, Certificate, or 1.2's encrypted
			 * Finished after the CCS (whose first byte is AEAD
			 * nonce or ciphertext: 1 in it is refused below). */
			if (h[REC_HDR] != HS_CLIENT_HELLO)
				return watch_stop(w, TLSHELLO_DONE, NULL);
			break;
		}
		if (h[0] == CT_DATA) {
			if (len - pos < REC_HDR + rlen)
				return TLSHELLO_MORE;	/* released whole */
			w->early_bytes += REC_HDR + rlen;
			if (w->early_bytes > TLSHELLO_WATCH_EARLY_MAX)
				return watch_stop(w, TLSHELLO_DONE, NULL);
		} else if (h[0] == CT_CCS) {
			if (++w->ccs > TLSHELLO_WATCH_CCS)
				return watch_stop(w, TLSHELLO_MALFORMED, "a second CCS");
			if (rlen != 1 || h[REC_HDR] != 1)
				return watch_stop(w, TLSHELLO_MALFORMED, "CCS not the byte 1");
		} else {
			/* A client's cleartext alert (it gives up after a
			 * HelloRetryRequest, say) passes; the alert record
			 * is counted so none can pad the watch. */
			if (rlen != 2)
				return watch_stop(w, TLSHELLO_MALFORMED, "alert length");
			if (len - pos < REC_HDR + 2)
				return TLSHELLO_MORE;
			if (++w->alerts > TLSHELLO_WATCH_ALERTS)
				return watch_stop(w, TLSHELLO_MALFORMED, "too many alerts");
		}
		pos += REC_HDR + rlen;
		*release = pos;
	}
	/* Anything before the hello is released now, so the hello's bytes
	 * start the next call's b. */
	if (pos > 0)
		return TLSHELLO_MORE;
hello:
	rc = watch_hello(w, b, len, &end);
	if (rc == TLSHELLO_SNI || rc == TLSHELLO_NO_SNI)
		*release = end;
	return rc;
}
