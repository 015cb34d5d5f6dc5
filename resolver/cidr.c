/* CIDR blocks: strict text parsing and formatting, and the bit
 * arithmetic classification and the address lists use (prefix match,
 * host bits, equality). Pure: no I/O, no state. Split from
 * resolver/classify.c, which decides what an address is; this only says
 * what a range is. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>

#include "resolver/cidr.h"
#include "util/ascii.h"
#include "util/errbuf.h"
#include "util/num.h"

size_t
cidr_family_len(int family)
{
	if (family == AF_INET)
		return 4;
	if (family == AF_INET6)
		return 16;
	return 0;
}

int
cidr_prefix_match(const unsigned char *a, const unsigned char *net,
    unsigned int prefix)
{
	unsigned int whole = prefix / 8, bits = prefix % 8;
	unsigned char mask;

	if (whole > 0 && memcmp(a, net, whole) != 0)
		return 0;
	if (bits == 0)
		return 1;
	mask = (unsigned char)(0xffu << (8 - bits));
	return (a[whole] & mask) == (net[whole] & mask);
}

void
cidr_ends(const unsigned char *net, unsigned int prefix, size_t len,
    unsigned char *first, unsigned char *last)
{
	size_t i;

	for (i = 0; i < len; i++) {
		unsigned int bits = prefix > i * 8 ? prefix - i * 8 : 0;
		unsigned char mask = bits >= 8 ? 0xff :
		    (unsigned char)(0xffu << (8 - bits));

		first[i] = net[i] & mask;
		last[i] = (unsigned char)(net[i] | (unsigned char)~mask);
	}
}

int
cidr_step(unsigned char *a, size_t len, int up)
{
	size_t i = len;

	while (i-- > 0) {
		if (up ? a[i]++ != 0xff : a[i]-- != 0x00)
			return 0;
	}
	return -1;
}

int
cidr_host_bits_set(const unsigned char *a, size_t alen, unsigned int prefix)
{
	size_t i = prefix / 8;
	unsigned int bits = prefix % 8;

	if (bits != 0) {
		if (a[i] & (unsigned char)(0xffu >> bits))
			return 1;
		i++;
	}
	for (; i < alen; i++)
		if (a[i] != 0)
			return 1;
	return 0;
}

static void
set_err(char *err, size_t errlen, const char *msg)
{
	if (err != NULL && errlen > 0)
		errbuf_set(err, errlen, "%s", msg);
}

/* Strict dotted quad over s[0..len): four decimal octets 0-255, no
 * leading zeros, nothing else. */
static int
parse_v4(const char *s, size_t len, unsigned char out[4])
{
	size_t i = 0;
	long long v;
	int part;

	for (part = 0; part < 4; part++) {
		size_t start = i;

		while (i < len && s[i] != '.')
			i++;
		if (i - start == 0 || i - start > 3 ||
		    num_parse_n(s + start, i - start, 0, 255, &v) == -1)
			return -1;
		out[part] = (unsigned char)v;
		if (part < 3) {
			if (i >= len)
				return -1;
			i++;	/* the '.' */
		}
	}
	return i == len ? 0 : -1;
}

int
cidr_parse(const char *s, struct cidr *out, char *err,
    size_t errlen)
{
	/* INET6_ADDRSTRLEN counts the NUL and allows the longest v4-suffixed
	 * form; anything longer is not an address. */
	char abuf[INET6_ADDRSTRLEN];
	struct cidr c;
	const char *slash, *p;
	size_t alen, plen;
	long long prefix;
	int is_v6;

	if (s == NULL || out == NULL) {
		set_err(err, errlen, "no CIDR given");
		return -1;
	}
	for (p = s; *p != '\0'; p++) {
		unsigned char ch = (unsigned char)*p;

		if (ch == '%') {
			set_err(err, errlen, "zone id not allowed in a CIDR");
			return -1;
		}
		if (ch == '[' || ch == ']') {
			set_err(err, errlen, "brackets not allowed in a CIDR");
			return -1;
		}
		if (ch != ':' && ch != '.' && ch != '/' && !ascii_is_xdigit(ch)) {
			set_err(err, errlen,
			    "invalid character in CIDR (expected addr/prefix)");
			return -1;
		}
	}
	slash = strchr(s, '/');
	if (slash == NULL) {
		set_err(err, errlen, "missing /prefix in CIDR");
		return -1;
	}
	if (strchr(slash + 1, '/') != NULL) {
		set_err(err, errlen, "more than one '/' in CIDR");
		return -1;
	}
	alen = (size_t)(slash - s);
	plen = strlen(slash + 1);
	if (alen == 0) {
		set_err(err, errlen, "missing address in CIDR");
		return -1;
	}

	is_v6 = memchr(s, ':', alen) != NULL;
	memset(&c, 0, sizeof(c));
	if (is_v6) {
		if (alen >= sizeof(abuf)) {
			set_err(err, errlen, "IPv6 address too long");
			return -1;
		}
		memcpy(abuf, s, alen);
		abuf[alen] = '\0';
		if (inet_pton(AF_INET6, abuf, c.addr) != 1) {
			set_err(err, errlen, "invalid IPv6 address");
			return -1;
		}
		c.family = AF_INET6;
	} else {
		if (parse_v4(s, alen, c.addr) == -1) {
			set_err(err, errlen, "invalid IPv4 address (dotted "
			    "quad, decimal 0-255, no leading zeros)");
			return -1;
		}
		c.family = AF_INET;
	}

	if (plen == 0) {
		set_err(err, errlen, "missing prefix length after '/'");
		return -1;
	}
	if (num_parse_n(slash + 1, plen, 0, c.family == AF_INET ? 32 : 128,
	    &prefix) == -1) {
		set_err(err, errlen, c.family == AF_INET ?
		    "invalid prefix length (decimal 0-32, no leading zeros)" :
		    "invalid prefix length (decimal 0-128, no leading zeros)");
		return -1;
	}
	c.prefix = (unsigned int)prefix;

	if (cidr_host_bits_set(c.addr, cidr_family_len(c.family), c.prefix)) {
		set_err(err, errlen, "host bits set beyond the prefix");
		return -1;
	}
	*out = c;
	return 0;
}

int
cidr_format(const struct cidr *c, char *buf, size_t len)
{
	char abuf[INET6_ADDRSTRLEN];
	int n;

	if (c == NULL || buf == NULL || len == 0)
		return -1;
	if ((c->family != AF_INET || c->prefix > 32) &&
	    (c->family != AF_INET6 || c->prefix > 128))
		return -1;
	if (inet_ntop(c->family, c->addr, abuf, sizeof(abuf)) == NULL)
		return -1;
	n = snprintf(buf, len, "%s/%u", abuf, c->prefix);
	if (n < 0 || (size_t)n >= len)
		return -1;
	return n;
}

int
cidr_valid(const struct cidr *c)
{
	size_t alen = cidr_family_len(c->family);

	if (alen == 0 || c->prefix > alen * 8)
		return 0;
	return !cidr_host_bits_set(c->addr, alen, c->prefix);
}

int
cidr_equal(const struct cidr *a, const struct cidr *b)
{
	return a->family == b->family && a->prefix == b->prefix &&
	    memcmp(a->addr, b->addr, cidr_family_len(a->family)) == 0;
}
