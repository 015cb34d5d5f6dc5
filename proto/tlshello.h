/* The SNI gate's parser: the first bytes a client sends in a tunnel,
 * judged before any of them reaches the upstream (docs/design.md "SNI
 * gate"). Pure: bytes in, verdict out; no sockets, no logging, no
 * allocation, no copy of the handshake. */
#ifndef EG_TLSHELLO_H
#define EG_TLSHELLO_H

#include <stddef.h>
#include <stdint.h>

#include "policy/dest.h"

#define TLSHELLO_NOT_TLS	(-2)	/* not TLS in any shape: plain bytes */
#define TLSHELLO_MALFORMED	(-1)	/* TLS-shaped, but not a hello we accept */
#define TLSHELLO_MORE		0	/* call again with more bytes */
#define TLSHELLO_SNI		1	/* sni holds the host name */
#define TLSHELLO_NO_SNI		2	/* complete ClientHello, no server_name */
#define TLSHELLO_DONE		3	/* tlshello_watch: the watch is over */

#define TLSHELLO_INPUT_MAX	65536	/* ClientHello plus record headers */
#define TLSHELLO_RECORD_MAX	16384	/* TLSPlaintext.length (RFC 8446 5.1) */
#define TLSHELLO_SNI_SIZE	(DEST_HOST_MAX + 1)

/* The state of one stream's walk; the caller owns it (tlshello_init). */
struct tlshello {
	size_t		 pos;		/* stream bytes taken so far */
	size_t		 rec_left;	/* payload bytes left in this record */
	size_t		 hs_have;	/* handshake bytes taken so far */
	size_t		 hs_len;	/* the ClientHello body length, once known */
	unsigned char	 hs_hdr[4];	/* msg_type and length */
	int		 verdict;	/* TLSHELLO_MORE until decided */
	const char	*why;		/* on MALFORMED: what was refused */
	uint64_t	 examined;	/* bytes looked at, all calls together */
	char		 sni[TLSHELLO_SNI_SIZE];	/* on TLSHELLO_SNI */
	int		 early_data;	/* the hello offers 0-RTT (early_data) */
};

void tlshello_init(struct tlshello *t);

/* b holds the first len bytes of the client stream: each call passes the
 * same stream, longer (or as long), and only the bytes not seen before
 * are looked at, so a stream costs time linear in its length however it
 * is cut. Returns t->verdict; once it is not TLSHELLO_MORE it stays.
 *
 * The shapes (first byte): 0x16 must open a TLS handshake record stream
 * carrying one ClientHello; 0x14, 0x15, 0x17, 0x18 (CCS, alert, data,
 * heartbeat) and an SSLv2 CLIENT-HELLO (high bit set, third byte 1) are
 * MALFORMED at once; anything else is NOT_TLS. Every record up to the end
 * of the ClientHello must be a handshake record, version 3.0 to 3.4,
 * length 1..TLSHELLO_RECORD_MAX, and the record carrying the hello's last
 * byte must end with it (no second message behind it in that record).
 * The hello may span records (bounded by TLSHELLO_INPUT_MAX); once len
 * reaches that bound the answer is never MORE. The verdict on a prefix
 * is either MORE or the verdict on the whole. Bytes after the ClientHello
 * are not read.
 *
 * On TLSHELLO_SNI, t->sni holds the one host_name, normalised by
 * dest_parse_host: lower case, one trailing dot removed. A name dest
 * refuses, an IPv6 literal, several host_name entries or server_name
 * extensions, an unknown name type, an encrypted_client_hello (or ESNI)
 * extension, and any length reaching past its enclosing structure are
 * MALFORMED (t->why says which). A strict dotted quad (which RFC 6066
 * forbids but some clients send) is returned as is: the caller compares
 * it with the CONNECT host like a name. t->sni is "" on every other
 * result. */
int tlshello_feed(struct tlshello *t, const unsigned char *b, size_t len);

/* The one-shot form: tlshello_init and tlshello_feed on b[0 .. len), the
 * name copied to sni (snilen >= TLSHELLO_SNI_SIZE, else MALFORMED). */
int tlshello_sni(const unsigned char *b, size_t len, char *sni, size_t snilen);

/* The watch after the first hello: the client's next records until its
 * cleartext handshake is over, so that a further ClientHello (after a
 * HelloRetryRequest, or pipelined) is judged like the first. */
struct tlshello_watch {
	struct tlshello	 hello;		/* a further ClientHello, from its record */
	int		 in_hello;	/* hello holds a walk in progress */
	unsigned	 hellos, ccs, alerts;	/* records of each kind seen */
	/* Set by the caller, after tlshello_watch_init, to the first
	 * hello's early_data: application data records are then 0-RTT
	 * data that a server which answers with a HelloRetryRequest skips
	 * (RFC 8446 4.2.10) before it reads a second ClientHello, so they
	 * do not end the watch until TLSHELLO_WATCH_EARLY_MAX bytes. */
	int		 early;
	size_t		 early_bytes;	/* of such records, headers included */
	int		 verdict;	/* MALFORMED or DONE once decided, else MORE */
	const char	*why;		/* on MALFORMED: what was refused */
};

#define TLSHELLO_WATCH_HELLOS	1	/* a second ClientHello (RFC 8446 4.1.4) */
#define TLSHELLO_WATCH_CCS	1	/* compatibility mode's one CCS */
#define TLSHELLO_WATCH_ALERTS	2
/* Rejected 0-RTT a server skips: OpenSSL and BoringSSL by default 16 KiB
 * of plaintext plus record overhead; four times that, headers included.
 * A server configured to skip more could be led past the watch. */
#define TLSHELLO_WATCH_EARLY_MAX	65536

void tlshello_watch_init(struct tlshello_watch *w);

/* b[0 .. len) are the client's bytes after those the watch has released
 * (the first call: the bytes right after the first ClientHello); each call
 * passes them again, as long or longer, until *release says some may go.
 * Returns
 *  - MORE: b[0 .. *release) are judged and may go (whole CCS and alert
 *    records); call again with the bytes after them.
 *  - SNI or NO_SNI: b[0 .. *release) are one more well-formed
 *    ClientHello, its name in w->hello.sni: the caller judges it like the
 *    first and, to let it go, calls again with the bytes after it.
 *  - DONE: the handshake's cleartext is over (an application data record
 *    when the first hello offered no early_data, else once such records
 *    pass TLSHELLO_WATCH_EARLY_MAX bytes; or a handshake record whose
 *    first byte is not ClientHello's type:
 *    ClientKeyExchange, Certificate, an encrypted Finished): all may go,
 *    and the watch is not called again.
 *  - MALFORMED: close (w->why): a record of another type or with an odd
 *    header, a heartbeat, a CCS that is not the one byte 1, an alert that
 *    is not two bytes, more CCS, alerts or hellos than the TLSHELLO_WATCH_
 *    bounds (so the watch ends within a hello's cap plus a few bytes), and
 *    a handshake record starting with ClientHello's type that
 *    tlshello_feed does not take as one whole ClientHello.
 * The verdict MALFORMED or DONE stays. */
int tlshello_watch(struct tlshello_watch *w, const unsigned char *b, size_t len,
    size_t *release);

#endif
