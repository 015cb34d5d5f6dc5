/* Destination syntax (docs/design.md "Destination syntax"). Every accepted form
 * has exactly one normalised spelling, so the policy matcher can compare
 * bytes: names lower-cased without the trailing dot, dotted quads as given
 * (the grammar admits one spelling only), IPv6 in RFC 5952 form written
 * here in pure hex, never with an embedded dotted quad. Error messages are
 * fixed strings: raw input bytes never reach err. */
#include <arpa/inet.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#if defined(__SSE2__) && !defined(EG_DEST_SCALAR)
#define DEST_SSE2 1
#include <emmintrin.h>
#endif

#include "policy/dest.h"
#include "util/ascii.h"
#include "util/errbuf.h"
#include "util/num.h"

#define LABEL_MAX	63
#define V6_TEXT_MAX	(DEST_V6_TEXT - 1)

static int
fail(char *err, size_t errlen, const char *msg)
{
	if (err != NULL && errlen > 0)
		errbuf_set(err, errlen, "%s", msg);
	return -1;
}

/* Bytes that are refused wherever they appear. Returns NULL when every
 * byte may appear, else the reason for the first that may not. A '%' is a
 * zone id inside brackets, or anywhere when zone_ctx is set (a bare IPv6
 * host); elsewhere it is percent-encoding. Every form the parsers accept
 * is made of bytes this admits, so they ask it only once they have
 * refused something, for the more precise reason (refused), which then
 * wins over their own. */
static const char *
scan_bytes(const char *s, size_t len, int zone_ctx)
{
	int inbr = 0;
	size_t i;

	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c == '\0')
			return "NUL bytes are not allowed";
		if (c >= 0x80)
			return "non-ASCII bytes are not allowed (names must be A-labels)";
		if (c == ' ' || c == '\t' || c == '\n' || c == '\r' ||
		    c == '\v' || c == '\f')
			return "whitespace is not allowed";
		if (c < 0x20 || c == 0x7f)
			return "control bytes are not allowed";
		switch (c) {
		case '@':
			return "userinfo is not allowed";
		case '%':
			if (inbr || zone_ctx)
				return "IPv6 zone ids are not allowed";
			return "percent-encoding is not allowed";
		case '*':
			return "wildcards are not allowed";
		case '[':
			if (i == 0)
				inbr = 1;
			break;
		case ']':
			inbr = 0;
			break;
		}
	}
	return NULL;
}

/* Strict dotted quad: four decimal octets 0-255, no leading zeros. */
static int
parse_ipv4(const char *s, size_t len, unsigned char out[4])
{
	size_t i = 0, start;
	long long v;
	int n;

	for (n = 0; n < 4; n++) {
		start = i;
		while (i < len && s[i] != '.')
			i++;
		if (num_parse_n(s + start, i - start, 0, 255, &v) == -1)
			return -1;
		out[n] = (unsigned char)v;
		if (n < 3) {
			if (i == len)
				return -1;
			i++;	/* the dot */
		}
	}
	return i == len ? 0 : -1;
}

static char *
put_hex16(char *p, unsigned int w)
{
	static const char hex[] = "0123456789abcdef";
	int shift, started = 0;

	for (shift = 12; shift >= 0; shift -= 4) {
		unsigned int nib = (w >> shift) & 0xf;

		if (nib != 0 || started || shift == 0) {
			*p++ = hex[nib];
			started = 1;
		}
	}
	return p;
}

/* RFC 5952 text (lower case, no leading zeros, the longest run of two or
 * more zero groups compressed, the first on a tie), always pure hex:
 * inet_ntop would write ::ffff:a.b.c.d, which this grammar refuses, so the
 * normalised form would not parse again. out holds V6_TEXT_MAX + 1. */
void
dest_ipv6_str(const unsigned char a[16], char *out)
{
	unsigned int w[8];
	int i, bs = -1, bl = 0, cs = -1, cl = 0;
	char *p = out;

	for (i = 0; i < 8; i++) {
		w[i] = (unsigned int)a[2 * i] << 8 | a[2 * i + 1];
		if (w[i] == 0) {
			if (cs == -1)
				cs = i;
			cl++;
			if (cl > bl) {
				bs = cs;
				bl = cl;
			}
		} else {
			cs = -1;
			cl = 0;
		}
	}
	if (bl < 2)
		bs = -1;
	for (i = 0; i < 8;) {
		if (i == bs) {
			*p++ = ':';
			*p++ = ':';
			i += bl;
			continue;
		}
		if (i > 0 && (bs == -1 || i != bs + bl))
			*p++ = ':';
		p = put_hex16(p, w[i]);
		i++;
	}
	*p = '\0';
}

/* The text between the brackets (or a bare IPv6 host). */
static const char *
parse_ipv6(const char *s, size_t len, struct dest *d)
{
	char buf[V6_TEXT_MAX + 1];
	size_t i;

	if (len == 0)
		return "empty IPv6 literal";
	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c == '.')
			return "IPv6 literal must not embed a dotted IPv4 address";
		if (c == '%')
			return "IPv6 zone ids are not allowed";
		if (c != ':' && !ascii_is_xdigit(c))
			return "bad IPv6 literal";
	}
	if (len > V6_TEXT_MAX)
		return "bad IPv6 literal";
	memcpy(buf, s, len);
	buf[len] = '\0';
	if (inet_pton(AF_INET6, buf, d->addr) != 1)
		return "bad IPv6 literal";
	d->kind = DEST_IPV6;
	dest_ipv6_str(d->addr, d->host);
	return NULL;
}

/* "0x" followed by hex digits only (possibly none): inet_aton and the
 * WHATWG URL parser read such a last label as a number (0x7f000001 is
 * 127.0.0.1), so, like an all-digit one, it does not end a host name. */
static int
hex_number(const char *s, size_t len)
{
	size_t i;

	if (len < 2 || s[0] != '0' || (s[1] != 'x' && s[1] != 'X'))
		return 0;
	for (i = 2; i < len; i++)
		if (!ascii_is_xdigit((unsigned char)s[i]))
			return 0;
	return 1;
}

/* A parse leaves *d all zero but what it found, host's NUL padding
 * included, as a memset of the whole struct would; but compilers inline
 * that memset as rep stos, which costs more than parsing a short name and
 * shows for a policy of a million. So: the fields the parsers may leave
 * unset now, the padding at the end; every failure clears the whole
 * struct. */
static void
dest_start(struct dest *d)
{
	d->kind = 0;
	d->host[0] = '\0';
	d->port = 0;
	memset(d->addr, 0, sizeof(d->addr));
}

static int
dest_done(struct dest *d)
{
	size_t n = strnlen(d->host, sizeof(d->host));

	memset(d->host + n, 0, sizeof(d->host) - n);
	return 0;
}

/* The reason to give for bytes a parser refused: scan_bytes' when it
 * has one, else the parser's own. */
static const char *
refused(const char *why, const char *s, size_t len, int zone_ctx)
{
	const char *bytes = scan_bytes(s, len, zone_ctx);

	return bytes != NULL ? bytes : why;
}

/* The bytes of host names by class, [A-Za-z0-9_-] and the dot: one
 * table lookup per byte, built at compile time from the predicate below. */
#define HB_LABEL	1
#define HB_DIGIT	2
#define HB_UPPER	4	/* lower-cased by adding 0x20: HB_UPPER << 3 */
#define HB_DOT		8
#define HB_OTHER	16	/* in no host name */
#define HB(c)	((c) >= 'a' && (c) <= 'z' ? HB_LABEL :			\
		 (c) >= 'A' && (c) <= 'Z' ? HB_LABEL | HB_UPPER :		\
		 (c) >= '0' && (c) <= '9' ? HB_LABEL | HB_DIGIT :		\
		 (c) == '-' || (c) == '_' ? HB_LABEL :				\
		 (c) == '.' ? HB_DOT : HB_OTHER)
#define HB4(c)	HB(c), HB((c) + 1), HB((c) + 2), HB((c) + 3)
#define HB16(c)	HB4(c), HB4((c) + 4), HB4((c) + 8), HB4((c) + 12)
#define HB64(c)	HB16(c), HB16((c) + 16), HB16((c) + 32), HB16((c) + 48)

static const unsigned char host_byte[256] = {
	HB64(0), HB64(64), HB64(128), HB64(192)
};

/* Whether the len bytes at s (1 to LABEL_MAX, so no label can be too
 * long; no trailing dot left) are labels of [A-Za-z0-9_-] between single
 * dots, with no upper-case byte when refuse has HB_UPPER; lower-cased into
 * out (room for LABEL_MAX + 1 bytes) when it is not NULL. When they are,
 * *last is where the last label starts and *digits says whether it is all
 * digits. Says no to exactly what name_scan refuses, which then says why;
 * longer names go there directly. Every entry of a policy of up to
 * 1,000,000 comes through here, so it runs without a branch per byte:
 * 16 bytes at a time where SSE2 is (every x86-64), else a table lookup
 * per byte. A byte at a time with a branch at each dot (name_scan) cost
 * ~85 ns a 21-byte name, the branch-free loop ~69, SSE2 ~33; for 100,000
 * names that was the largest share of parsing a policy. EG_DEST_SCALAR
 * forces the portable one, for its tests. */
#ifdef DEST_SSE2
static int
name_plain(const char *s, size_t len, char *out, unsigned int refuse,
    size_t *last, int *digits)
{
	unsigned char in[LABEL_MAX + 1] __attribute__((aligned(16)));
	char scratch[LABEL_MAX + 1];
	uint64_t good = 0, dot = 0, up = 0, num = 0, all, tail;
	size_t i;

	if (len > LABEL_MAX)
		return 0;
	if (out == NULL)
		out = scratch;
	memset(in, 0, sizeof(in));	/* the bytes past len: never name bytes */
	memcpy(in, s, len);
	for (i = 0; i < len; i += 16) {
		__m128i c = _mm_load_si128((const __m128i *)(const void *)(in + i));
		__m128i f = _mm_or_si128(c, _mm_set1_epi8(0x20));	/* case folded */
		/* Signed compares: bytes from 0x80 are negative, in no class. */
		__m128i alpha = _mm_and_si128(_mm_cmpgt_epi8(f, _mm_set1_epi8('a' - 1)),
		    _mm_cmplt_epi8(f, _mm_set1_epi8('z' + 1)));
		__m128i digit = _mm_and_si128(_mm_cmpgt_epi8(c, _mm_set1_epi8('0' - 1)),
		    _mm_cmplt_epi8(c, _mm_set1_epi8('9' + 1)));
		__m128i dots = _mm_cmpeq_epi8(c, _mm_set1_epi8('.'));
		__m128i sign = _mm_or_si128(_mm_cmpeq_epi8(c, _mm_set1_epi8('-')),
		    _mm_cmpeq_epi8(c, _mm_set1_epi8('_')));
		__m128i upper = _mm_andnot_si128(_mm_cmpeq_epi8(c, f), alpha);

		_mm_storeu_si128((__m128i *)(void *)(out + i), _mm_add_epi8(c,
		    _mm_and_si128(upper, _mm_set1_epi8(0x20))));
		good |= (uint64_t)(unsigned int)_mm_movemask_epi8(_mm_or_si128(
		    _mm_or_si128(alpha, digit), _mm_or_si128(dots, sign))) << i;
		dot |= (uint64_t)(unsigned int)_mm_movemask_epi8(dots) << i;
		up |= (uint64_t)(unsigned int)_mm_movemask_epi8(upper) << i;
		num |= (uint64_t)(unsigned int)_mm_movemask_epi8(digit) << i;
	}
	all = (UINT64_C(1) << len) - 1;
	dot &= all;
	/* A byte in no class, upper case refused, a dot first or after a dot. */
	if ((good & all) != all || ((refuse & HB_UPPER) && (up & all)) ||
	    (dot & 1) || (dot & (dot >> 1)))
		return 0;
	*last = dot != 0 ? (size_t)(64 - __builtin_clzll(dot)) : 0;
	tail = all & ~((UINT64_C(1) << *last) - 1);
	*digits = (num & tail) == tail;
	return 1;
}
#else
static int
name_plain(const char *s, size_t len, char *out, unsigned int refuse,
    size_t *last, int *digits)
{
	char scratch[LABEL_MAX + 1];
	unsigned int bad = 0, dots = 0, prev = HB_DOT, num = 1;
	size_t i, start = 0;

	if (len > LABEL_MAX)
		return 0;
	if (out == NULL)
		out = scratch;	/* a store costs less than a branch */
	refuse |= HB_OTHER;
	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];
		unsigned int k = host_byte[c], isdot = (k & HB_DOT) != 0;

		out[i] = (char)(c + ((k & HB_UPPER) << 3));
		bad |= k & refuse;
		dots |= k & prev;	/* a dot first or after a dot */
		prev = k;
		start = isdot ? i + 1 : start;
		num = isdot | (num & (k >> 1));		/* HB_DIGIT */
	}
	if (bad || (dots & HB_DOT))
		return 0;
	*last = start;
	*digits = num & 1;
	return 1;
}
#endif

/* The reason name_plain said no, in the order a reader meets the bytes;
 * NULL when there is none. */
static const char *
name_scan(const char *s, size_t len, char *out, unsigned int refuse)
{
	size_t i, label = 0;

	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i], k = host_byte[c];

		if (out != NULL)
			out[i] = (char)(c + ((k & HB_UPPER) << 3));
		else if (k & refuse)
			return "not normalised";
		if (k & HB_LABEL) {
			if (++label > LABEL_MAX)
				return "host name label longer than 63 bytes";
			continue;
		}
		if (k & HB_OTHER)
			return "host name byte outside [A-Za-z0-9_.-]";
		if (label == 0)
			return "empty label in host name";
		label = 0;
	}
	return label == 0 ? "empty label in host name" : NULL;
}

/* A DNS name or, when the last label is a number, a strict dotted quad.
 * Checks and lower-cases in one pass: this runs for every entry of a
 * policy of up to 1,000,000. With d NULL it only checks, and refuses what
 * it would have to change: a trailing dot, an upper-case byte. */
static const char *
parse_name(const char *s, size_t len, struct dest *d)
{
	unsigned char quad[4];
	char *out = d != NULL ? d->host : NULL;
	unsigned int refuse = d != NULL ? 0 : HB_UPPER;
	const char *last, *why;
	size_t i, label;
	int digits = 1, dot = 0;

	if (d == NULL && len > 0 && s[len - 1] == '.')
		return "not normalised";
	if (len > 0 && s[len - 1] == '.') {
		len--;
		dot = 1;
		if (len > 0 && s[len - 1] == '.')
			return "only one trailing dot is allowed";
	}
	if (len == 0)
		return "empty host";
	if (len > DEST_HOST_MAX)
		return "host name longer than 253 bytes";
	if (name_plain(s, len, out, refuse, &i, &digits)) {
		last = s + i;
	} else {
		if ((why = name_scan(s, len, out, refuse)) != NULL)
			return why;
		last = memrchr(s, '.', len);
		last = last != NULL ? last + 1 : s;
		for (i = 0; i < len - (size_t)(last - s); i++)
			digits &= (host_byte[(unsigned char)last[i]] & HB_DIGIT) != 0;
	}
	if (out != NULL)
		out[len] = '\0';
	label = len - (size_t)(last - s);
	if (digits || hex_number(last, label)) {
		/* Not a host name: a dotted quad or nothing. 127.1,
		 * 2130706433 and 0177.0.0.1 end here and are refused, never
		 * read the way inet_aton would. */
		if (dot || parse_ipv4(s, len, quad) == -1)
			return "IPv4 literal must be a strict dotted quad";
		if (d != NULL) {
			d->kind = DEST_IPV4;	/* host: digits and dots, as given */
			memcpy(d->addr, quad, sizeof(quad));
		}
		return NULL;
	}
	if (d != NULL)
		d->kind = DEST_NAME;
	return NULL;
}

int
dest_parse_port(const char *s, size_t len, uint16_t *port)
{
	long long v;

	if (s == NULL || port == NULL)
		return -1;
	if (num_parse_n(s, len, 1, 65535, &v) == -1)
		return -1;
	*port = (uint16_t)v;
	return 0;
}

int
dest_parse_host(const char *s, size_t len, int brackets, struct dest *d,
    char *err, size_t errlen)
{
	const char *why;

	if (d == NULL)
		return fail(err, errlen, "no destination");
	if (s == NULL || len == 0) {
		memset(d, 0, sizeof(*d));
		return fail(err, errlen, "empty host");
	}
	dest_start(d);
	if (s[0] == '[') {
		const char *close = memchr(s, ']', len);

		if (!brackets)
			why = "IPv6 literal must not be in brackets here";
		else if (close == NULL)
			why = "unterminated IPv6 literal";
		else if ((size_t)(close - s) != len - 1)
			why = "unexpected bytes after the IPv6 literal";
		else
			why = parse_ipv6(s + 1, len - 2, d);
	} else if (memchr(s, ':', len) != NULL) {
		const char *colon = memchr(s, ':', len);

		/* One colon is never IPv6 (that has at least two): a port. */
		if (memchr(colon + 1, ':', len - (size_t)(colon - s) - 1) == NULL)
			why = "a host must not include a port";
		else if (brackets)
			why = "IPv6 literal must be in brackets";
		else
			why = parse_ipv6(s, len, d);
	} else {
		why = parse_name(s, len, d);
	}
	if (why == NULL)
		return dest_done(d);
	memset(d, 0, sizeof(*d));
	return fail(err, errlen, refused(why, s, len,
	    !brackets && memchr(s, ':', len) != NULL));
}

int
dest_host_is_normal(const char *s, size_t len)
{
	struct dest d;

	if (s == NULL || len == 0 || len > DEST_HOST_MAX || s[0] == '[')
		return 0;
	/* A name first: no name holds a colon, and names are what a policy
	 * is made of. */
	if (parse_name(s, len, NULL) == NULL)
		return 1;
	return memchr(s, ':', len) != NULL &&
	    dest_parse_host(s, len, 0, &d, NULL, 0) == 0 &&
	    strlen(d.host) == len && memcmp(d.host, s, len) == 0;
}

/* Whether an unbracketed authority with several colons is an IPv6 literal
 * that should have been bracketed (with or without a port after it). */
static int
looks_like_bare_ipv6(const char *s, size_t len)
{
	unsigned char a[16];
	char buf[V6_TEXT_MAX + 1];
	size_t cut;

	for (cut = len; cut > 0; cut--)
		if (s[cut - 1] == ':')
			break;
	if (len <= V6_TEXT_MAX) {
		memcpy(buf, s, len);
		buf[len] = '\0';
		if (inet_pton(AF_INET6, buf, a) == 1)
			return 1;
	}
	if (cut > 1 && cut - 1 <= V6_TEXT_MAX) {
		memcpy(buf, s, cut - 1);
		buf[cut - 1] = '\0';
		if (inet_pton(AF_INET6, buf, a) == 1)
			return 1;
	}
	return 0;
}

int
dest_parse_authority(const char *s, size_t len, struct dest *d,
    char *err, size_t errlen)
{
	const char *why, *port, *end;
	size_t plen, k;

	if (d == NULL)
		return fail(err, errlen, "no destination");
	if (s == NULL || len == 0) {
		memset(d, 0, sizeof(*d));
		return fail(err, errlen, "empty authority");
	}
	dest_start(d);
	end = s + len;
	if (s[0] == '[') {
		const char *close = memchr(s, ']', len);

		if (close == NULL) {
			why = "unterminated IPv6 literal";
			goto bad;
		}
		if ((why = parse_ipv6(s + 1, (size_t)(close - s) - 1, d)) != NULL)
			goto bad;
		if (close + 1 == end) {
			why = "missing port";
			goto bad;
		}
		if (close[1] != ':') {
			why = "unexpected bytes after the IPv6 literal";
			goto bad;
		}
		port = close + 2;
	} else {
		const char *colon = memchr(s, ':', len);

		if (colon == NULL) {
			why = "missing port";
			goto bad;
		}
		if (memchr(colon + 1, ':', (size_t)(end - colon - 1)) != NULL) {
			if (looks_like_bare_ipv6(s, len))
				why = "IPv6 literal must be in brackets";
			else
				why = "unexpected bytes after the port";
			goto bad;
		}
		if (colon == s) {
			why = "empty host";
			goto bad;
		}
		if ((why = parse_name(s, (size_t)(colon - s), d)) != NULL)
			goto bad;
		port = colon + 1;
	}
	plen = (size_t)(end - port);
	if (plen == 0) {
		why = "missing port";
		goto bad;
	}
	for (k = 0; k < plen && ascii_is_digit((unsigned char)port[k]); k++)
		;
	if (k > 0 && k < plen) {
		why = "unexpected bytes after the port";
		goto bad;
	}
	if (dest_parse_port(port, plen, &d->port) == -1) {
		why = "port must be 1-65535 without leading zeros";
		goto bad;
	}
	return dest_done(d);
bad:
	memset(d, 0, sizeof(*d));
	return fail(err, errlen, refused(why, s, len, 0));
}

int
dest_format(const struct dest *d, char *buf, size_t buflen)
{
	int n;

	if (d == NULL || buf == NULL || buflen == 0)
		return -1;
	if (d->kind == DEST_IPV6)
		n = snprintf(buf, buflen, "[%s]:%u", d->host, (unsigned int)d->port);
	else
		n = snprintf(buf, buflen, "%s:%u", d->host, (unsigned int)d->port);
	if (n < 0 || (size_t)n >= buflen)
		return -1;
	return n;
}
