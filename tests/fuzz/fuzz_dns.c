/* DNS answer classification: the bytes go to c-ares' ares_parse_a_reply
 * and ares_parse_aaaa_reply exactly as resolver/resolver.c's answer_cb
 * hands them over, then every address that comes back is classified with
 * resolver/classify's classify_addr, with the reference table alone
 * (cfg NULL) and with a cfg holding allow, deny and own addresses. The
 * first 4 and 16 input bytes are also classified directly as addresses,
 * so the classifier is explored even where c-ares refuses the answer.
 *
 * Beyond "no crash":
 *  - every address has the family and length resolver.c copies;
 *  - a verdict is 0 or 1 and always names the range that decided it;
 *  - the security-relevant rows hold whatever the bytes: the private,
 *    loopback, link-local, CGNAT, multicast and reserved IPv4 blocks, the
 *    IPv4-mapped and unique-local/link-local IPv6 blocks and everything
 *    outside 2000::/3 (but NAT64) are never public with the table alone;
 *    64:ff9b::/96 classifies as its embedded IPv4;
 *  - with the cfg, rules apply in classify.h's order: own address (also
 *    inside an ISATAP identifier), --deny-range, the never-a-destination
 *    rows (unspecified, mapped, compatible, translated, multicast,
 *    broadcast) whatever the ranges, NAT64 recursing with the same cfg,
 *    then an --allow-range (each lies inside its table row), then the
 *    table. */
#include <arpa/inet.h>
#include <netdb.h>
#include <string.h>

#include <ares.h>

#include "resolver/classify.h"
#include "tests/fuzz/fuzz.h"

#define NTTL	32

static struct classify_cfg *cfg;

static const char *const allow_txt[] = {
	"198.18.0.0/15", "10.99.0.0/16", "2001:2::/48", "fd00::/8", NULL
};
static const char *const deny_txt[] = {
	"8.8.8.0/24", "198.18.7.0/24", "2606:4700::/32", NULL
};
static struct cidr allow_c[4], deny_c[3];
static const int own_fam[] = { AF_INET, AF_INET6, AF_INET };
static unsigned char own_addr[3][16];
static struct cidr own_c[3];

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	char err[128], back[64];
	size_t i;

	(void)argc;
	(void)argv;
	FUZZ_CHECK((cfg = classify_cfg_new()) != NULL);
	for (i = 0; allow_txt[i] != NULL; i++) {
		FUZZ_CHECK(cidr_parse(allow_txt[i], &allow_c[i], err,
		    sizeof(err)) == 0);
		FUZZ_CHECK(cidr_format(&allow_c[i], back, sizeof(back)) > 0);
		FUZZ_CHECK(strcmp(back, allow_txt[i]) == 0);
		FUZZ_CHECK(classify_cfg_allow(cfg, &allow_c[i]) == 0);
	}
	for (i = 0; deny_txt[i] != NULL; i++) {
		FUZZ_CHECK(cidr_parse(deny_txt[i], &deny_c[i], err,
		    sizeof(err)) == 0);
		FUZZ_CHECK(classify_cfg_deny(cfg, &deny_c[i]) == 0);
	}
	FUZZ_CHECK(inet_pton(AF_INET, "198.18.0.1", own_addr[0]) == 1);
	FUZZ_CHECK(inet_pton(AF_INET6, "2001:2::1", own_addr[1]) == 1);
	FUZZ_CHECK(inet_pton(AF_INET, "10.99.0.1", own_addr[2]) == 1);
	for (i = 0; i < 3; i++) {
		own_c[i].family = own_fam[i];
		own_c[i].prefix = own_fam[i] == AF_INET ? 32 : 128;
		memcpy(own_c[i].addr, own_addr[i], 16);
	}
	FUZZ_CHECK(classify_cfg_set_own(cfg, own_c, 3) == 0);
	return 0;
}

static int
in_prefix(const unsigned char *a, const unsigned char *net, unsigned int prefix)
{
	unsigned int i;

	for (i = 0; i < prefix; i++) {
		unsigned int m = 0x80u >> (i % 8);
		if ((a[i / 8] & m) != (net[i / 8] & m))
			return 0;
	}
	return 1;
}

static int
in_list(int family, const unsigned char *a, const struct cidr *c,
    size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (c[i].family == family && in_prefix(a, c[i].addr, c[i].prefix))
			return 1;
	return 0;
}

static int
is_nat64(const unsigned char *a)
{
	static const unsigned char p[12] = { 0x00, 0x64, 0xff, 0x9b };

	return memcmp(a, p, 12) == 0;
}

/* Rows that must never be public with the table alone. */
static int
must_deny(int family, const unsigned char *a)
{
	static const struct { unsigned char net[4]; unsigned int len; } v4[] = {
		{ { 0 }, 8 }, { { 10 }, 8 }, { { 100, 64 }, 10 }, { { 127 }, 8 },
		{ { 169, 254 }, 16 }, { { 172, 16 }, 12 }, { { 192, 168 }, 16 },
		{ { 224 }, 4 }, { { 240 }, 4 },
	};
	static const struct { unsigned char net[16]; unsigned int len; } v6[] = {
		{ { 0 }, 96 }, { { [10] = 0xff, [11] = 0xff }, 96 },
		{ { 0xfc }, 7 }, { { 0xfe, 0x80 }, 10 }, { { 0xff }, 8 },
	};
	size_t i;

	if (family == AF_INET) {
		for (i = 0; i < sizeof(v4) / sizeof(v4[0]); i++)
			if (in_prefix(a, v4[i].net, v4[i].len))
				return 1;
		return 0;
	}
	for (i = 0; i < sizeof(v6) / sizeof(v6[0]); i++)
		if (in_prefix(a, v6[i].net, v6[i].len))
			return 1;
	return (a[0] & 0xe0) != 0x20 && !is_nat64(a);
}

static int
is_own(int family, const unsigned char *a)
{
	size_t i;

	for (i = 0; i < 3; i++)
		if (own_fam[i] == family &&
		    memcmp(own_addr[i], a, family == AF_INET ? 4 : 16) == 0)
			return 1;
	return 0;
}

/* Never a destination, whatever the ranges say (issue 14): unspecified,
 * IPv4-compatible/-mapped/-translated, multicast, limited broadcast. */
static int
never(int family, const unsigned char *a)
{
	static const unsigned char v6_loop[16] = { [15] = 1 };
	static const unsigned char z[10];

	if (family == AF_INET)
		return (a[0] == 0 && a[1] == 0 && a[2] == 0 && a[3] == 0) ||
		    (a[0] & 0xf0) == 0xe0 ||
		    (a[0] == 255 && a[1] == 255 && a[2] == 255 && a[3] == 255);
	if (memcmp(a, z, 10) == 0 && ((a[10] == 0 && a[11] == 0 &&
	    memcmp(a, v6_loop, 16) != 0) || (a[10] == 0xff && a[11] == 0xff)))
		return 1;
	if (memcmp(a, z, 8) == 0 && a[8] == 0xff && a[9] == 0xff &&
	    a[10] == 0 && a[11] == 0)
		return 1;
	return a[0] == 0xff;
}

/* An own IPv4 address in an ISATAP interface identifier: the one
 * embedding the cfg's ranges (fd00::/8, 2001:2::/48) can carry. */
static int
own_in_isatap(int family, const unsigned char *a)
{
	return family == AF_INET6 && (a[8] & 0xfd) == 0 && a[9] == 0 &&
	    a[10] == 0x5e && a[11] == 0xfe && is_own(AF_INET, a + 12);
}

static int
classify_checked(const struct classify_cfg *c, int family, const unsigned char *a)
{
	struct classify_result res = { -1, NULL };
	int v = classify_addr(c, family, a, &res);

	FUZZ_CHECK(v == 0 || v == 1);
	FUZZ_CHECK(res.public == v && res.range != NULL && res.range[0] != '\0');
	FUZZ_CHECK(classify_addr(c, family, a, NULL) == v);
	return v;
}

static void
classify_all(int family, const unsigned char *a)
{
	int bare = classify_checked(NULL, family, a), with, want;

	if (must_deny(family, a))
		FUZZ_CHECK(bare == 0);
	if (family == AF_INET6 && is_nat64(a))
		FUZZ_CHECK(bare == classify_checked(NULL, AF_INET, a + 12));

	with = classify_checked(cfg, family, a);
	if (is_own(family, a) || in_list(family, a, deny_c, 3) ||
	    never(family, a) || own_in_isatap(family, a))
		want = 0;
	else if (family == AF_INET6 && is_nat64(a))
		want = classify_checked(cfg, AF_INET, a + 12);
	else if (in_list(family, a, allow_c, 4))
		want = 1;	/* every cfg range lies inside its table row */
	else
		want = bare;
	FUZZ_CHECK(with == want);
}

static void
answer(const unsigned char *buf, int len, int family)
{
	struct ares_addrttl t4[NTTL];
	struct ares_addr6ttl t6[NTTL];
	struct hostent *he = NULL;
	size_t alen = family == AF_INET ? 4 : 16;
	int st, n = 0, nt = NTTL, st2;
	char **p;

	/* As resolver.c's answer_cb calls it. */
	st = family == AF_INET ? ares_parse_a_reply(buf, len, &he, NULL, NULL) :
	    ares_parse_aaaa_reply(buf, len, &he, NULL, NULL);
	if (st != ARES_SUCCESS) {
		FUZZ_CHECK(he == NULL);
		return;
	}
	FUZZ_CHECK(he != NULL && he->h_addrtype == family &&
	    (size_t)he->h_length == alen);
	for (p = he->h_addr_list; p != NULL && *p != NULL; p++, n++)
		classify_all(family, (const unsigned char *)*p);

	/* The TTL form of the same call sees the same addresses. */
	st2 = family == AF_INET ? ares_parse_a_reply(buf, len, NULL, t4, &nt) :
	    ares_parse_aaaa_reply(buf, len, NULL, t6, &nt);
	FUZZ_CHECK(st2 == ARES_SUCCESS);
	FUZZ_CHECK(nt == (n < NTTL ? n : NTTL));
	for (int i = 0; i < nt; i++)
		FUZZ_CHECK(memcmp(he->h_addr_list[i], family == AF_INET ?
		    (const void *)&t4[i].ipaddr : (const void *)&t6[i].ip6addr,
		    alen) == 0);
	ares_free_hostent(he);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	unsigned char *b;

	if (size > 65535)
		return 0;	/* a DNS message over TCP is at most 64 KiB */
	if (size >= 4)
		classify_all(AF_INET, data);
	if (size >= 16)
		classify_all(AF_INET6, data);
	b = (unsigned char *)fuzz_dup(data, size);
	answer(b, (int)size, AF_INET);
	answer(b, (int)size, AF_INET6);
	free(b);
	return 0;
}
