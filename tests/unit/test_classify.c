/* Unit tests for resolver/classify: every row of
 * docs/design.md "Address classification" at both edges and, where
 * the neighbour is otherwise public, one address past each edge; the
 * operator rules and their order; NAT64; the strict CIDR parser. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "resolver/classify.h"

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))
#define PUB 1
#define DENY 0
#define VIA "64:ff9b::/96 NAT64 -> "

struct probe {
	const char	*addr;
	int		public;
	const char	*range;		/* expected classify_result.range */
};

static int
to_bytes(const char *text, unsigned char out[16])
{
	int family = strchr(text, ':') != NULL ? AF_INET6 : AF_INET;

	memset(out, 0, 16);
	if (inet_pton(family, text, out) != 1) {
		print_error("test bug: cannot parse %s\n", text);
		fail();
	}
	return family;
}

static void
check_probes(const struct classify_cfg *cfg, const struct probe *p, size_t n)
{
	struct classify_result res;
	unsigned char a[16];
	size_t i;
	int family, got, bad = 0;

	for (i = 0; i < n; i++) {
		family = to_bytes(p[i].addr, a);
		res.public = -1;
		res.range = NULL;
		got = classify_addr(cfg, family, a, &res);
		if (got != p[i].public || res.public != p[i].public ||
		    res.range == NULL || strcmp(res.range, p[i].range) != 0) {
			print_error("%s: got %d/%d \"%s\", want %d \"%s\"\n",
			    p[i].addr, got, res.public,
			    res.range != NULL ? res.range : "(null)",
			    p[i].public, p[i].range);
			bad++;
		}
	}
	assert_int_equal(bad, 0);
}

#define CHECK(cfg, probes) check_probes((cfg), (probes), NELEM(probes))

static struct cidr
cidr(const char *s)
{
	struct cidr c;
	char err[128];

	if (cidr_parse(s, &c, err, sizeof(err)) != 0) {
		print_error("test bug: %s: %s\n", s, err);
		fail();
	}
	return c;
}

static void
allow(struct classify_cfg *cfg, const char *s)
{
	struct cidr c = cidr(s);

	assert_int_equal(classify_cfg_allow(cfg, &c), 0);
}

static void
deny(struct classify_cfg *cfg, const char *s)
{
	struct cidr c = cidr(s);

	assert_int_equal(classify_cfg_deny(cfg, &c), 0);
}

/* Each entry an address ("198.18.0.1": a /32 or /128) or a block
 * ("198.18.30.0/24", a prefix routed locally). */
static void
set_own(struct classify_cfg *cfg, const char *const *addrs, size_t n)
{
	struct cidr *own = calloc(n + 1, sizeof(*own));
	size_t i;

	assert_non_null(own);
	for (i = 0; i < n; i++) {
		if (strchr(addrs[i], '/') != NULL) {
			own[i] = cidr(addrs[i]);
			continue;
		}
		own[i].family = to_bytes(addrs[i], own[i].addr);
		own[i].prefix = own[i].family == AF_INET ? 32 : 128;
	}
	assert_int_equal(classify_cfg_set_own(cfg, own, n), 0);
	free(own);
}

/* ---- IPv4 table ------------------------------------------------------ */

static void
test_ipv4_this_network_edges(void **state)
{
	static const struct probe p[] = {
		{ "0.0.0.0", DENY, "0.0.0.0/32 Unspecified" },
		{ "0.0.0.1", DENY, "0.0.0.0/8 This network" },
		{ "0.255.255.255", DENY, "0.0.0.0/8 This network" },
		{ "1.0.0.0", PUB, "global unicast" },
	};
	(void)state;
	CHECK(NULL, p);
}

static void
test_ipv4_private_use_edges(void **state)
{
	static const struct probe p[] = {
		{ "9.255.255.255", PUB, "global unicast" },
		{ "10.0.0.0", DENY, "10.0.0.0/8 Private-Use" },
		{ "10.255.255.255", DENY, "10.0.0.0/8 Private-Use" },
		{ "11.0.0.0", PUB, "global unicast" },
		{ "172.15.255.255", PUB, "global unicast" },
		{ "172.16.0.0", DENY, "172.16.0.0/12 Private-Use" },
		{ "172.31.255.255", DENY, "172.16.0.0/12 Private-Use" },
		{ "172.32.0.0", PUB, "global unicast" },
		{ "192.167.255.255", PUB, "global unicast" },
		{ "192.168.0.0", DENY, "192.168.0.0/16 Private-Use" },
		{ "192.168.255.255", DENY, "192.168.0.0/16 Private-Use" },
		{ "192.169.0.0", PUB, "global unicast" },
	};
	(void)state;
	CHECK(NULL, p);
}

static void
test_ipv4_shared_address_space_edges(void **state)
{
	static const char *const r = "100.64.0.0/10 Shared Address Space (CGNAT)";
	const struct probe p[] = {
		{ "100.63.255.255", PUB, "global unicast" },
		{ "100.64.0.0", DENY, r },
		{ "100.127.255.255", DENY, r },
		{ "100.128.0.0", PUB, "global unicast" },
	};
	(void)state;
	CHECK(NULL, p);
}

static void
test_ipv4_loopback_edges(void **state)
{
	static const struct probe p[] = {
		{ "126.255.255.255", PUB, "global unicast" },
		{ "127.0.0.0", DENY, "127.0.0.0/8 Loopback" },
		{ "127.0.0.1", DENY, "127.0.0.0/8 Loopback" },
		{ "127.255.255.255", DENY, "127.0.0.0/8 Loopback" },
		{ "128.0.0.0", PUB, "global unicast" },
	};
	(void)state;
	CHECK(NULL, p);
}

static void
test_ipv4_link_local_edges(void **state)
{
	static const struct probe p[] = {
		{ "169.253.255.255", PUB, "global unicast" },
		{ "169.254.0.0", DENY, "169.254.0.0/16 Link Local" },
		{ "169.254.255.255", DENY, "169.254.0.0/16 Link Local" },
		{ "169.255.0.0", PUB, "global unicast" },
	};
	(void)state;
	CHECK(NULL, p);
}

/* The whole /24 is denied, including the IANA-global anycast /32s. */
static void
test_ipv4_ietf_protocol_assignments_edges(void **state)
{
	static const char *const r = "192.0.0.0/24 IETF Protocol Assignments";
	const struct probe p[] = {
		{ "191.255.255.255", PUB, "global unicast" },
		{ "192.0.0.0", DENY, r },
		{ "192.0.0.8", DENY, r },
		{ "192.0.0.9", DENY, r },
		{ "192.0.0.10", DENY, r },
		{ "192.0.0.170", DENY, r },
		{ "192.0.0.171", DENY, r },
		{ "192.0.0.255", DENY, r },
		{ "192.0.1.0", PUB, "global unicast" },
	};
	(void)state;
	CHECK(NULL, p);
}

static void
test_ipv4_documentation_edges(void **state)
{
	static const struct probe p[] = {
		{ "192.0.1.255", PUB, "global unicast" },
		{ "192.0.2.0", DENY, "192.0.2.0/24 Documentation (TEST-NET-1)" },
		{ "192.0.2.255", DENY, "192.0.2.0/24 Documentation (TEST-NET-1)" },
		{ "192.0.3.0", PUB, "global unicast" },
		{ "198.51.99.255", PUB, "global unicast" },
		{ "198.51.100.0", DENY,
		    "198.51.100.0/24 Documentation (TEST-NET-2)" },
		{ "198.51.100.255", DENY,
		    "198.51.100.0/24 Documentation (TEST-NET-2)" },
		{ "198.51.101.0", PUB, "global unicast" },
		{ "203.0.112.255", PUB, "global unicast" },
		{ "203.0.113.0", DENY,
		    "203.0.113.0/24 Documentation (TEST-NET-3)" },
		{ "203.0.113.255", DENY,
		    "203.0.113.0/24 Documentation (TEST-NET-3)" },
		{ "203.0.114.0", PUB, "global unicast" },
	};
	(void)state;
	CHECK(NULL, p);
}

static void
test_ipv4_6to4_relay_anycast_edges(void **state)
{
	static const char *const r =
	    "192.88.99.0/24 Deprecated 6to4 Relay Anycast";
	const struct probe p[] = {
		{ "192.88.98.255", PUB, "global unicast" },
		{ "192.88.99.0", DENY, r },
		{ "192.88.99.255", DENY, r },
		{ "192.88.100.0", PUB, "global unicast" },
	};
	(void)state;
	CHECK(NULL, p);
}

static void
test_ipv4_benchmarking_edges(void **state)
{
	static const struct probe p[] = {
		{ "198.17.255.255", PUB, "global unicast" },
		{ "198.18.0.0", DENY, "198.18.0.0/15 Benchmarking" },
		{ "198.18.0.1", DENY, "198.18.0.0/15 Benchmarking" },
		{ "198.19.255.255", DENY, "198.18.0.0/15 Benchmarking" },
		{ "198.20.0.0", PUB, "global unicast" },
	};
	(void)state;
	CHECK(NULL, p);
}

/* 224/4, 240/4 and 255.255.255.255/32 are adjacent or nested: only the
 * lower neighbour of 224/4 is public. The broadcast /32 sits inside 240/4
 * and reports its own, more specific, name. */
static void
test_ipv4_multicast_reserved_broadcast_edges(void **state)
{
	static const struct probe p[] = {
		{ "223.255.255.255", PUB, "global unicast" },
		{ "224.0.0.0", DENY, "224.0.0.0/4 Multicast" },
		{ "239.255.255.255", DENY, "224.0.0.0/4 Multicast" },
		{ "240.0.0.0", DENY, "240.0.0.0/4 Reserved" },
		{ "255.255.255.254", DENY, "240.0.0.0/4 Reserved" },
		{ "255.255.255.255", DENY, "255.255.255.255/32 Limited Broadcast" },
	};
	(void)state;
	CHECK(NULL, p);
}

static void
test_as112_allowed_rows_public(void **state)
{
	static const char *const v6 =
	    "2620:4f:8000::/48 Direct Delegation AS112 Service";
	const struct probe p[] = {
		{ "192.31.195.255", PUB, "global unicast" },
		{ "192.31.196.0", PUB, "192.31.196.0/24 AS112-v4" },
		{ "192.31.196.255", PUB, "192.31.196.0/24 AS112-v4" },
		{ "192.31.197.0", PUB, "global unicast" },
		{ "192.52.192.255", PUB, "global unicast" },
		{ "192.52.193.0", PUB, "192.52.193.0/24 AMT" },
		{ "192.52.193.255", PUB, "192.52.193.0/24 AMT" },
		{ "192.52.194.0", PUB, "global unicast" },
		{ "192.175.47.255", PUB, "global unicast" },
		{ "192.175.48.0", PUB,
		    "192.175.48.0/24 Direct Delegation AS112 Service" },
		{ "192.175.48.255", PUB,
		    "192.175.48.0/24 Direct Delegation AS112 Service" },
		{ "192.175.49.0", PUB, "global unicast" },
		{ "2620:4f:7fff:ffff:ffff:ffff:ffff:ffff", PUB, "global unicast" },
		{ "2620:4f:8000::", PUB, v6 },
		{ "2620:4f:8000:ffff:ffff:ffff:ffff:ffff", PUB, v6 },
		{ "2620:4f:8001::", PUB, "global unicast" },
	};
	(void)state;
	CHECK(NULL, p);
}

static void
test_ipv4_global_unicast_public(void **state)
{
	static const struct probe p[] = {
		{ "1.1.1.1", PUB, "global unicast" },
		{ "8.8.8.8", PUB, "global unicast" },
		{ "93.184.216.34", PUB, "global unicast" },
		{ "223.255.255.254", PUB, "global unicast" },
	};
	(void)state;
	CHECK(NULL, p);
}

/* ---- IPv6 table ------------------------------------------------------ */

static void
test_ipv6_unspecified_and_loopback_refused(void **state)
{
	static const struct probe p[] = {
		{ "::", DENY, "::/128 Unspecified" },
		{ "::1", DENY, "::1/128 Loopback" },
	};
	(void)state;
	CHECK(NULL, p);
}

static void
test_ipv4_compatible_refused(void **state)
{
	static const char *const r = "::/96 IPv4-compatible (deprecated)";
	const struct probe p[] = {
		{ "::2", DENY, r },
		{ "::10.0.0.1", DENY, r },
		{ "::8.8.8.8", DENY, r },
		{ "::255.255.255.255", DENY, r },
		{ "::1:0:0", DENY, "outside 2000::/3 global unicast" },
	};
	(void)state;
	CHECK(NULL, p);
}

static void
test_ipv4_mapped_refused(void **state)
{
	static const char *const r = "::ffff:0:0/96 IPv4-mapped";
	const struct probe p[] = {
		{ "::fffe:ffff:ffff", DENY, "outside 2000::/3 global unicast" },
		{ "::ffff:0.0.0.0", DENY, r },
		{ "::ffff:8.8.8.8", DENY, r },
		{ "::ffff:10.0.0.1", DENY, r },
		{ "::ffff:169.254.169.254", DENY, r },
		{ "::ffff:255.255.255.255", DENY, r },
		{ "::1:0:0:0", DENY, "outside 2000::/3 global unicast" },
	};
	(void)state;
	CHECK(NULL, p);
}

static void
test_ipv4_translated_refused(void **state)
{
	static const char *const r = "::ffff:0:0:0/96 IPv4-translated";
	const struct probe p[] = {
		{ "::ffff:0:0:0", DENY, r },
		{ "::ffff:0:808:808", DENY, r },
		{ "::ffff:0:ffff:ffff", DENY, r },
		{ "::ffff:1:0:0", DENY, "outside 2000::/3 global unicast" },
	};
	(void)state;
	CHECK(NULL, p);
}

static void
test_nat64_with_private_embedded_refused(void **state)
{
	static const struct probe p[] = {
		{ "64:ff9b::a00:1", DENY, VIA "10.0.0.0/8 Private-Use" },
		{ "64:ff9b::10.255.255.255", DENY, VIA "10.0.0.0/8 Private-Use" },
		{ "64:ff9b::127.0.0.1", DENY, VIA "127.0.0.0/8 Loopback" },
		{ "64:ff9b::192.168.1.1", DENY, VIA "192.168.0.0/16 Private-Use" },
		{ "64:ff9b::198.18.0.1", DENY, VIA "198.18.0.0/15 Benchmarking" },
	};
	(void)state;
	CHECK(NULL, p);
}

static void
test_nat64_with_public_embedded_allowed(void **state)
{
	static const struct probe p[] = {
		{ "64:ff9b::808:808", PUB, VIA "global unicast" },
		{ "64:ff9b::1.1.1.1", PUB, VIA "global unicast" },
		{ "64:ff9b::192.31.196.1", PUB, VIA "192.31.196.0/24 AS112-v4" },
	};
	(void)state;
	CHECK(NULL, p);
}

/* Edges of 64:ff9b::/96 embed 0.0.0.0 and 255.255.255.255, both denied;
 * just outside the /96 is outside 2000::/3. */
static void
test_nat64_edges(void **state)
{
	static const struct probe p[] = {
		{ "64:ff9a:ffff:ffff:ffff:ffff:ffff:ffff", DENY,
		    "outside 2000::/3 global unicast" },
		{ "64:ff9b::", DENY, VIA "0.0.0.0/32 Unspecified" },
		{ "64:ff9b::ffff:ffff", DENY,
		    VIA "255.255.255.255/32 Limited Broadcast" },
		{ "64:ff9b::1:0:0", DENY, "outside 2000::/3 global unicast" },
		{ "64:ff9b:0:ffff:ffff:ffff:ffff:ffff", DENY,
		    "outside 2000::/3 global unicast" },
	};
	(void)state;
	CHECK(NULL, p);
}

static void
test_nat64_local_use_refused(void **state)
{
	static const char *const r =
	    "64:ff9b:1::/48 Local-use IPv4/IPv6 Translation";
	const struct probe p[] = {
		{ "64:ff9b:1::", DENY, r },
		{ "64:ff9b:1::808:808", DENY, r },
		{ "64:ff9b:1:ffff:ffff:ffff:ffff:ffff", DENY, r },
		{ "64:ff9b:2::", DENY, "outside 2000::/3 global unicast" },
	};
	(void)state;
	CHECK(NULL, p);
}

static void
test_ipv6_discard_and_dummy_prefix_refused(void **state)
{
	static const struct probe p[] = {
		{ "ff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", DENY,
		    "outside 2000::/3 global unicast" },
		{ "100::", DENY, "100::/64 Discard-Only" },
		{ "100::ffff:ffff:ffff:ffff", DENY, "100::/64 Discard-Only" },
		{ "100:0:0:1::", DENY, "100:0:0:1::/64 Dummy IPv6 Prefix" },
		{ "100:0:0:1:ffff:ffff:ffff:ffff", DENY,
		    "100:0:0:1::/64 Dummy IPv6 Prefix" },
		{ "100:0:0:2::", DENY, "outside 2000::/3 global unicast" },
	};
	(void)state;
	CHECK(NULL, p);
}

/* Teredo 2001::/32 and the rest of 2001::/23 (benchmarking, ORCHID). */
static void
test_teredo_refused(void **state)
{
	static const char *const r = "2001::/23 IETF Protocol Assignments";
	const struct probe p[] = {
		{ "2000:ffff:ffff:ffff:ffff:ffff:ffff:ffff", PUB,
		    "global unicast" },
		{ "2001::", DENY, r },
		{ "2001:0:4136:e378:8000:63bf:3fff:fdd2", DENY, r },
		{ "2001:0:ffff:ffff:ffff:ffff:ffff:ffff", DENY, r },
		{ "2001:2::1", DENY, r },
		{ "2001:20::1", DENY, r },
		{ "2001:1ff:ffff:ffff:ffff:ffff:ffff:ffff", DENY, r },
		{ "2001:200::", PUB, "global unicast" },
	};
	(void)state;
	CHECK(NULL, p);
}

static void
test_ipv6_documentation_edges(void **state)
{
	static const struct probe p[] = {
		{ "2001:db7:ffff:ffff:ffff:ffff:ffff:ffff", PUB,
		    "global unicast" },
		{ "2001:db8::", DENY, "2001:db8::/32 Documentation" },
		{ "2001:db8:ffff:ffff:ffff:ffff:ffff:ffff", DENY,
		    "2001:db8::/32 Documentation" },
		{ "2001:db9::", PUB, "global unicast" },
		{ "3ffe:ffff:ffff:ffff:ffff:ffff:ffff:ffff", PUB,
		    "global unicast" },
		{ "3fff::", DENY, "3fff::/20 Documentation" },
		{ "3fff:fff:ffff:ffff:ffff:ffff:ffff:ffff", DENY,
		    "3fff::/20 Documentation" },
		{ "3fff:1000::", PUB, "global unicast" },
	};
	(void)state;
	CHECK(NULL, p);
}

static void
test_6to4_refused(void **state)
{
	static const struct probe p[] = {
		{ "2001:ffff:ffff:ffff:ffff:ffff:ffff:ffff", PUB,
		    "global unicast" },
		{ "2002::", DENY, "2002::/16 6to4" },
		{ "2002:c0a8:101::1", DENY, "2002::/16 6to4" },
		{ "2002:808:808::1", DENY, "2002::/16 6to4" },
		{ "2002:ffff:ffff:ffff:ffff:ffff:ffff:ffff", DENY,
		    "2002::/16 6to4" },
		{ "2003::", PUB, "global unicast" },
	};
	(void)state;
	CHECK(NULL, p);
}

static void
test_srv6_sids_refused(void **state)
{
	static const struct probe p[] = {
		{ "5eff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", DENY,
		    "outside 2000::/3 global unicast" },
		{ "5f00::", DENY, "5f00::/16 Segment Routing (SRv6) SIDs" },
		{ "5f00:ffff:ffff:ffff:ffff:ffff:ffff:ffff", DENY,
		    "5f00::/16 Segment Routing (SRv6) SIDs" },
		{ "5f01::", DENY, "outside 2000::/3 global unicast" },
	};
	(void)state;
	CHECK(NULL, p);
}

static void
test_ipv6_unique_local_link_local_site_local_multicast_edges(void **state)
{
	static const struct probe p[] = {
		{ "fbff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", DENY,
		    "outside 2000::/3 global unicast" },
		{ "fc00::", DENY, "fc00::/7 Unique-Local" },
		{ "fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", DENY,
		    "fc00::/7 Unique-Local" },
		{ "fe00::", DENY, "outside 2000::/3 global unicast" },
		{ "fe7f:ffff:ffff:ffff:ffff:ffff:ffff:ffff", DENY,
		    "outside 2000::/3 global unicast" },
		{ "fe80::", DENY, "fe80::/10 Link-Local Unicast" },
		{ "febf:ffff:ffff:ffff:ffff:ffff:ffff:ffff", DENY,
		    "fe80::/10 Link-Local Unicast" },
		{ "fec0::", DENY, "fec0::/10 Site-Local (deprecated)" },
		{ "feff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", DENY,
		    "fec0::/10 Site-Local (deprecated)" },
		{ "ff00::", DENY, "ff00::/8 Multicast" },
		{ "ff02::1", DENY, "ff00::/8 Multicast" },
		{ "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", DENY,
		    "ff00::/8 Multicast" },
	};
	(void)state;
	CHECK(NULL, p);
}

static void
test_outside_2000_3_refused(void **state)
{
	static const char *const r = "outside 2000::/3 global unicast";
	const struct probe p[] = {
		{ "::1:0:0:0:0", DENY, r },
		{ "1::", DENY, r },
		{ "1fff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", DENY, r },
		{ "2000::", PUB, "global unicast" },
		{ "3fff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", PUB,
		    "global unicast" },
		{ "4000::", DENY, r },
		{ "8000::1", DENY, r },
		{ "e000::1", DENY, r },
	};
	(void)state;
	CHECK(NULL, p);
}

static void
test_ipv6_global_unicast_public(void **state)
{
	static const struct probe p[] = {
		{ "2606:4700:4700::1111", PUB, "global unicast" },
		{ "2a00:1450:4001::200e", PUB, "global unicast" },
		{ "2001:4860:4860::8888", PUB, "global unicast" },
	};
	(void)state;
	CHECK(NULL, p);
}

static void
test_cloud_metadata_addresses_refused(void **state)
{
	static const struct probe p[] = {
		{ "169.254.169.254", DENY, "169.254.0.0/16 Link Local" },
		{ "169.254.170.2", DENY, "169.254.0.0/16 Link Local" },
		{ "100.100.100.200", DENY,
		    "100.64.0.0/10 Shared Address Space (CGNAT)" },
		{ "fd00:ec2::254", DENY, "fc00::/7 Unique-Local" },
		{ "64:ff9b::169.254.169.254", DENY,
		    VIA "169.254.0.0/16 Link Local" },
		{ "::ffff:169.254.169.254", DENY, "::ffff:0:0/96 IPv4-mapped" },
	};
	struct classify_cfg *cfg = classify_cfg_new();

	(void)state;
	assert_non_null(cfg);
	CHECK(NULL, p);
	/* The lab opening used by the test topologies changes none of it. */
	allow(cfg, "198.18.0.0/15");
	CHECK(cfg, p);
	classify_cfg_free(cfg);
}

/* ---- issue 14, finding 3: ranges never open hostile spellings --------- */

/* One case: the --allow-range set, then the probes under it. Every table
 * shares the own set below: the guard's own IPv4 192.0.2.2 (c000:202,
 * the address of the report), another own IPv4 198.18.0.1 and an own
 * IPv6 2001:db8:1::2. */
struct range_case {
	const char	*ranges[8];
	struct probe	 probes[24];
};

static const char *const hostile_own[] = { "192.0.2.2", "198.18.0.1",
    "2001:db8:1::2", "127.0.0.1", "::1" };

static void
check_range_cases(const struct range_case *rc, size_t n)
{
	size_t i, j, np;

	for (i = 0; i < n; i++) {
		struct classify_cfg *cfg = classify_cfg_new();

		assert_non_null(cfg);
		set_own(cfg, hostile_own, NELEM(hostile_own));
		for (j = 0; j < NELEM(rc[i].ranges) && rc[i].ranges[j]; j++)
			allow(cfg, rc[i].ranges[j]);
		for (np = 0; np < NELEM(rc[i].probes) &&
		    rc[i].probes[np].addr != NULL; np++)
			;
		check_probes(cfg, rc[i].probes, np);
		classify_cfg_free(cfg);
	}
}

#define OWN	"own-address"
#define MAPPED	"::ffff:0:0/96 IPv4-mapped"
#define COMPAT	"::/96 IPv4-compatible (deprecated)"

/* The report: --allow-range ::/0 (and 0.0.0.0/0) opened
 * [::ffff:c000:202] (own), [::ffff:7f00:1] (loopback), :: , ::1, 0.0.0.0.
 * Controls in the same table: what the broad ranges legitimately open. */
static void
test_broad_ranges_never_open_own_mapped_loopback_unspecified(void **state)
{
	static const struct range_case rc[] = {
	    { { "::/0", "0.0.0.0/0" }, {
		{ "::ffff:c000:202", DENY, OWN },
		{ "::ffff:192.0.2.3", DENY, MAPPED },
		{ "::ffff:7f00:1", DENY, MAPPED },
		{ "::ffff:8.8.8.8", DENY, MAPPED },
		{ "::ffff:0.0.0.0", DENY, MAPPED },
		{ "::c000:202", DENY, OWN },
		{ "::127.0.0.1", DENY, COMPAT },
		{ "::8.8.8.8", DENY, COMPAT },
		{ "::ffff:0:192.0.2.2", DENY, OWN },
		{ "::ffff:0:127.0.0.1", DENY,
		    "::ffff:0:0:0/96 IPv4-translated" },
		{ "::", DENY, "::/128 Unspecified" },
		{ "::1", DENY, "::1/128 Loopback" },
		{ "0.0.0.0", DENY, "0.0.0.0/32 Unspecified" },
		{ "0.1.2.3", DENY, "0.0.0.0/8 This network" },
		{ "127.0.0.1", DENY, "127.0.0.0/8 Loopback" },
		{ "192.0.2.2", DENY, OWN },
		{ "198.18.0.1", DENY, OWN },
		{ "2001:db8:1::2", DENY, OWN },
		{ "10.0.0.1", DENY, "10.0.0.0/8 Private-Use" },
		{ "fe80::1", DENY, "fe80::/10 Link-Local Unicast" },
		{ "fd00::1", DENY, "fc00::/7 Unique-Local" },
		/* controls: the ranges are in force */
		{ "4000::1", PUB, "allow-range ::/0" },
		{ "2a00:1::1", PUB, "global unicast" },
		{ "8.8.8.8", PUB, "global unicast" },
	    } },
	};
	(void)state;
	check_range_cases(rc, NELEM(rc));
}

/* Naming the embedding block itself opens nothing: the kernel connects
 * to the IPv4 address inside, which only an IPv4 range could name. */
static void
test_explicit_mapped_compatible_ranges_open_nothing(void **state)
{
	static const struct range_case rc[] = {
	    { { "::ffff:0:0/96", "::/96", "::ffff:0:0:0/96", "::/128",
		"198.18.0.0/15" }, {
		{ "::ffff:198.18.1.10", DENY, MAPPED },
		{ "::ffff:8.8.8.8", DENY, MAPPED },
		{ "::198.18.1.10", DENY, COMPAT },
		{ "::ffff:0:198.18.1.10", DENY,
		    "::ffff:0:0:0/96 IPv4-translated" },
		{ "::", DENY, "::/128 Unspecified" },
		/* control: the IPv4 spelling under the IPv4 range */
		{ "198.18.1.10", PUB, "allow-range 198.18.0.0/15" },
	    } },
	};
	(void)state;
	check_range_cases(rc, NELEM(rc));
}

/* Loopback opens only for a range inside it, never through a wider one,
 * a mapped or a NAT64 spelling. */
static void
test_loopback_opens_only_for_range_inside_loopback(void **state)
{
	static const struct range_case rc[] = {
	    { { "0.0.0.0/0", "64.0.0.0/2", "::/0", "::/127", "::/96" }, {
		{ "127.0.0.1", DENY, "127.0.0.0/8 Loopback" },
		{ "127.255.255.254", DENY, "127.0.0.0/8 Loopback" },
		{ "::1", DENY, "::1/128 Loopback" },
	    } },
	    { { "127.0.0.0/8", "::1/128" }, {
		{ "127.0.0.1", PUB, "allow-range 127.0.0.0/8" },
		{ "127.9.9.9", PUB, "allow-range 127.0.0.0/8" },
		{ "::1", PUB, "allow-range ::1/128" },
		{ "::ffff:127.0.0.1", DENY, MAPPED },
		{ "::127.0.0.1", DENY, COMPAT },
		{ "64:ff9b::127.0.0.1", DENY, VIA "127.0.0.0/8 Loopback" },
		{ "0.0.0.0", DENY, "0.0.0.0/32 Unspecified" },
		{ "::", DENY, "::/128 Unspecified" },
	    } },
	    { { "127.0.0.1/32" }, {
		{ "127.0.0.1", PUB, "allow-range 127.0.0.1/32" },
		{ "127.0.0.2", DENY, "127.0.0.0/8 Loopback" },
	    } },
	};
	(void)state;
	check_range_cases(rc, NELEM(rc));
}

/* Every special block needs a range inside it; a range inside a wider
 * block does not open a narrower block nested in it. Unspecified,
 * multicast and limited broadcast open for no range at all. */
static void
test_broad_range_does_not_open_nested_special_blocks(void **state)
{
	static const struct range_case rc[] = {
	    { { "0.0.0.0/1", "128.0.0.0/1", "8000::/1" }, {
		{ "10.1.2.3", DENY, "10.0.0.0/8 Private-Use" },
		{ "169.254.169.254", DENY, "169.254.0.0/16 Link Local" },
		{ "100.100.100.200", DENY,
		    "100.64.0.0/10 Shared Address Space (CGNAT)" },
		{ "198.18.1.10", DENY, "198.18.0.0/15 Benchmarking" },
		{ "fd00:ec2::254", DENY, "fc00::/7 Unique-Local" },
		{ "ff02::1", DENY, "ff00::/8 Multicast" },
	    } },
	    { { "2001::/23", "240.0.0.0/4", "224.0.0.0/4", "ff00::/8",
		"255.255.255.255/32", "0.0.0.0/8" }, {
		{ "2001:db8::1", DENY, "2001:db8::/32 Documentation" },
		{ "2001:2::1", PUB, "allow-range 2001::/23" },
		{ "255.255.255.255", DENY,
		    "255.255.255.255/32 Limited Broadcast" },
		{ "240.0.0.1", PUB, "allow-range 240.0.0.0/4" },
		{ "224.0.0.1", DENY, "224.0.0.0/4 Multicast" },
		{ "239.255.255.250", DENY, "224.0.0.0/4 Multicast" },
		{ "ff02::1", DENY, "ff00::/8 Multicast" },
		{ "0.0.0.0", DENY, "0.0.0.0/32 Unspecified" },
		{ "0.0.0.1", PUB, "allow-range 0.0.0.0/8" },
	    } },
	    { { "fe80::/10", "fd00::/8" }, {
		{ "fe80::1", PUB, "allow-range fe80::/10" },
		{ "fd00::1", PUB, "allow-range fd00::/8" },
		{ "fc00::1", DENY, "fc00::/7 Unique-Local" },
	    } },
	};
	(void)state;
	check_range_cases(rc, NELEM(rc));
}

/* The own IPv4 address embedded in every IPv6 spelling the table covers,
 * each under a range that lies inside its block (so only the own check
 * can refuse it), each with a neighbour that the same range opens. */
static void
test_own_address_refused_in_every_embedding(void **state)
{
	static const struct range_case rc[] = {
	    { { "64:ff9b:1::/48", "2002::/16", "2001::/32", "192.0.2.0/24",
		"198.18.0.0/15" }, {
		/* NAT64 well-known prefix */
		{ "64:ff9b::c000:202", DENY, VIA OWN },
		{ "64:ff9b::c000:203", PUB, VIA "allow-range 192.0.2.0/24" },
		{ "64:ff9b::198.18.0.1", DENY, VIA OWN },
		/* 64:ff9b:1::/48, RFC 6052 layouts /48, /56, /64, /96 */
		{ "64:ff9b:1:c000:2:200::", DENY, OWN },
		{ "64:ff9b:1:c000:2:300::", PUB, "allow-range 64:ff9b:1::/48" },
		{ "64:ff9b:1:c0:0:202::", DENY, OWN },
		{ "64:ff9b:1:0:c0:2:200:0", DENY, OWN },
		{ "64:ff9b:1::c000:202", DENY, OWN },
		{ "64:ff9b:1::c000:203", PUB, "allow-range 64:ff9b:1::/48" },
		/* 6to4 */
		{ "2002:c000:202::1", DENY, OWN },
		{ "2002:c612:1::1", DENY, OWN },
		{ "2002:c000:203::1", PUB, "allow-range 2002::/16" },
		/* Teredo: server, then client (obfuscated ~192.0.2.2) */
		{ "2001:0:c000:202::1", DENY, OWN },
		{ "2001:0:4136:e378:8000:63bf:3fff:fdfd", DENY, OWN },
		{ "2001:0:4136:e378:8000:63bf:3fff:fdfc", PUB,
		    "allow-range 2001::/32" },
		/* ISATAP interface identifiers under a global prefix */
		{ "2a00:1::5efe:c000:202", DENY, OWN },
		{ "2a00:1::200:5efe:c000:202", DENY, OWN },
		{ "2a00:1::5efe:c000:203", PUB, "global unicast" },
		/* the plain spellings */
		{ "192.0.2.2", DENY, OWN },
		{ "192.0.2.3", PUB, "allow-range 192.0.2.0/24" },
	    } },
	    /* an own IPv6 address inside an allow-range */
	    { { "2001:db8::/32", "::/0" }, {
		{ "2001:db8:1::2", DENY, OWN },
		{ "2001:db8:1::3", PUB, "allow-range 2001:db8::/32" },
	    } },
	};
	(void)state;
	check_range_cases(rc, NELEM(rc));
}

/* No own set yet (the interfaces could not be read): fail closed. */
static void
test_unknown_own_set_refuses_everything(void **state)
{
	static const struct probe closed[] = {
		{ "8.8.8.8", DENY, "own addresses unknown" },
		{ "2a00:1::1", DENY, "own addresses unknown" },
		{ "64:ff9b::8.8.8.8", DENY, "own addresses unknown" },
	};
	static const struct probe open[] = {
		{ "8.8.8.8", PUB, "global unicast" },
	};
	struct classify_cfg *cfg = classify_cfg_new();

	(void)state;
	assert_non_null(cfg);
	classify_cfg_own_unknown(cfg);
	CHECK(cfg, closed);
	assert_int_equal(classify_cfg_set_own(cfg, NULL, 0), 0);
	CHECK(cfg, open);
	classify_cfg_free(cfg);
}

/* ---- operator rules -------------------------------------------------- */

static void
test_allow_range_opens_only_its_range(void **state)
{
	static const struct probe p[] = {
		{ "198.17.255.255", PUB, "global unicast" },
		{ "198.18.0.0", PUB, "allow-range 198.18.0.0/15" },
		{ "198.18.0.1", PUB, "allow-range 198.18.0.0/15" },
		{ "198.19.255.255", PUB, "allow-range 198.18.0.0/15" },
		{ "198.20.0.0", PUB, "global unicast" },
		{ "10.0.0.1", DENY, "10.0.0.0/8 Private-Use" },
		{ "169.254.169.254", DENY, "169.254.0.0/16 Link Local" },
		{ "::ffff:198.18.0.1", DENY, "::ffff:0:0/96 IPv4-mapped" },
		{ "2001:2::1", DENY, "2001::/23 IETF Protocol Assignments" },
	};
	struct classify_cfg *cfg = classify_cfg_new();

	(void)state;
	assert_non_null(cfg);
	allow(cfg, "198.18.0.0/15");
	CHECK(cfg, p);
	classify_cfg_free(cfg);
}

static void
test_allow_range_ipv6(void **state)
{
	static const struct probe p[] = {
		{ "fd00:ec2::254", DENY, "fc00::/7 Unique-Local" },
		{ "fd00:1::1", PUB, "allow-range fd00:1::/64" },
		{ "fd00:1:0:1::1", DENY, "fc00::/7 Unique-Local" },
		{ "10.0.0.1", DENY, "10.0.0.0/8 Private-Use" },
	};
	struct classify_cfg *cfg = classify_cfg_new();

	(void)state;
	assert_non_null(cfg);
	allow(cfg, "fd00:1::/64");
	CHECK(cfg, p);
	classify_cfg_free(cfg);
}

static void
test_deny_range_beats_allow_range(void **state)
{
	static const struct probe p[] = {
		{ "198.18.0.1", PUB, "allow-range 198.18.0.0/15" },
		{ "198.19.0.0", DENY, "deny-range 198.19.0.0/24" },
		{ "198.19.0.255", DENY, "deny-range 198.19.0.0/24" },
		{ "198.19.1.0", PUB, "allow-range 198.18.0.0/15" },
	};
	struct classify_cfg *cfg = classify_cfg_new();

	(void)state;
	assert_non_null(cfg);
	/* Order of adding must not matter. */
	allow(cfg, "198.18.0.0/15");
	deny(cfg, "198.19.0.0/24");
	CHECK(cfg, p);
	classify_cfg_free(cfg);
}

static void
test_deny_range_refuses_public_address(void **state)
{
	static const struct probe p[] = {
		{ "8.8.8.8", DENY, "deny-range 8.8.8.0/24" },
		{ "8.8.9.8", PUB, "global unicast" },
		{ "2606:4700:4700::1111", DENY, "deny-range 2606:4700::/32" },
		{ "64:ff9b::8.8.8.8", DENY, VIA "deny-range 8.8.8.0/24" },
	};
	struct classify_cfg *cfg = classify_cfg_new();

	(void)state;
	assert_non_null(cfg);
	deny(cfg, "8.8.8.0/24");
	deny(cfg, "2606:4700::/32");
	CHECK(cfg, p);
	classify_cfg_free(cfg);
}

static void
test_own_address_beats_allow_range(void **state)
{
	static const char *const own[] = { "198.18.0.1", "2001:db8::1",
	    "192.0.2.7" };
	static const struct probe p[] = {
		{ "198.18.0.1", DENY, "own-address" },
		{ "198.18.0.2", PUB, "allow-range 198.18.0.0/15" },
		{ "2001:db8::1", DENY, "own-address" },
		{ "2001:db8::2", PUB, "allow-range 2001:db8::/32" },
		{ "192.0.2.7", DENY, "own-address" },
		{ "64:ff9b::198.18.0.1", DENY, VIA "own-address" },
	};
	struct classify_cfg *cfg = classify_cfg_new();

	(void)state;
	assert_non_null(cfg);
	allow(cfg, "198.18.0.0/15");
	allow(cfg, "2001:db8::/32");
	allow(cfg, "192.0.2.0/24");
	set_own(cfg, own, NELEM(own));
	CHECK(cfg, p);
	classify_cfg_free(cfg);
}

/* A public own address is denied too: the guard never dials itself. */
static void
test_own_public_address_refused(void **state)
{
	static const char *const own[] = { "93.184.216.34",
	    "2606:4700:4700::1111" };
	static const struct probe p[] = {
		{ "93.184.216.34", DENY, "own-address" },
		{ "93.184.216.35", PUB, "global unicast" },
		{ "2606:4700:4700::1111", DENY, "own-address" },
	};
	struct classify_cfg *cfg = classify_cfg_new();

	(void)state;
	assert_non_null(cfg);
	set_own(cfg, own, NELEM(own));
	CHECK(cfg, p);
	classify_cfg_free(cfg);
}

/* hostile: a prefix on lo ("ip addr add 198.18.30.1/24 dev lo", AnyIP)
 * makes the kernel deliver every address inside it to the guard's host,
 * not only the one getifaddrs names. Each such block is own whole, in
 * every spelling; the addresses either side of it are not. */
static void
test_hostile_own_local_prefix_every_address_refused(void **state)
{
	static const char *const own[] = { "198.18.30.0/24",
	    "2001:db8:30::/48", "127.0.0.0/8" };
	static const struct probe p[] = {
		{ "198.18.30.0", DENY, "own-address" },
		{ "198.18.30.77", DENY, "own-address" },
		{ "198.18.30.255", DENY, "own-address" },
		{ "198.18.29.255", PUB, "allow-range 198.18.0.0/15" },
		{ "198.18.31.0", PUB, "allow-range 198.18.0.0/15" },
		{ "::ffff:198.18.30.77", DENY, "own-address" },
		{ "64:ff9b::198.18.30.77", DENY, VIA "own-address" },
		{ "2002:c612:1e4d::1", DENY, "own-address" },
		{ "2001:db8:30:ffff::9", DENY, "own-address" },
		{ "2001:db8:31::9", PUB, "allow-range 2001:db8::/32" },
		/* the loopback block is the table's, as for an address */
		{ "127.0.0.1", DENY, "127.0.0.0/8 Loopback" },
	};
	struct classify_cfg *cfg = classify_cfg_new();

	(void)state;
	assert_non_null(cfg);
	allow(cfg, "198.18.0.0/15");
	allow(cfg, "2001:db8::/32");
	set_own(cfg, own, NELEM(own));
	CHECK(cfg, p);
	classify_cfg_free(cfg);
}

static void
test_own_loopback_ignored(void **state)
{
	static const char *const own[] = { "127.0.0.1", "127.1.2.3", "::1" };
	static const struct probe p[] = {
		{ "127.0.0.1", PUB, "allow-range 127.0.0.0/8" },
		{ "127.1.2.3", PUB, "allow-range 127.0.0.0/8" },
		{ "::1", PUB, "allow-range ::1/128" },
	};
	static const struct probe closed[] = {
		{ "127.0.0.1", DENY, "127.0.0.0/8 Loopback" },
		{ "::1", DENY, "::1/128 Loopback" },
	};
	struct classify_cfg *cfg = classify_cfg_new();

	(void)state;
	assert_non_null(cfg);
	set_own(cfg, own, NELEM(own));
	CHECK(cfg, closed);
	allow(cfg, "127.0.0.0/8");
	allow(cfg, "::1/128");
	CHECK(cfg, p);
	classify_cfg_free(cfg);
}

static void
test_set_own_replaces_previous_set(void **state)
{
	static const char *const first[] = { "8.8.8.8" };
	static const char *const second[] = { "1.1.1.1" };
	static const struct probe p1[] = {
		{ "8.8.8.8", DENY, "own-address" },
		{ "1.1.1.1", PUB, "global unicast" },
	};
	static const struct probe p2[] = {
		{ "8.8.8.8", PUB, "global unicast" },
		{ "1.1.1.1", DENY, "own-address" },
	};
	static const struct probe p3[] = {
		{ "8.8.8.8", PUB, "global unicast" },
		{ "1.1.1.1", PUB, "global unicast" },
	};
	struct classify_cfg *cfg = classify_cfg_new();

	(void)state;
	assert_non_null(cfg);
	set_own(cfg, first, 1);
	CHECK(cfg, p1);
	set_own(cfg, second, 1);
	CHECK(cfg, p2);
	assert_int_equal(classify_cfg_set_own(cfg, NULL, 0), 0);
	CHECK(cfg, p3);
	classify_cfg_free(cfg);
}

/* The v4 address family of an own entry must match: 8.8.8.8 as own does
 * not make an IPv6 address starting with 0808:0808 own. */
static void
test_own_address_family_must_match(void **state)
{
	static const char *const own[] = { "32.1.72.96" };	/* 2001:4860 */
	static const struct probe p[] = {
		{ "2001:4860::", PUB, "global unicast" },
		{ "32.1.72.96", DENY, "own-address" },
	};
	struct classify_cfg *cfg = classify_cfg_new();

	(void)state;
	assert_non_null(cfg);
	set_own(cfg, own, NELEM(own));
	CHECK(cfg, p);
	classify_cfg_free(cfg);
}

static void
test_allow_range_applies_to_nat64_embedded(void **state)
{
	static const struct probe p[] = {
		{ "64:ff9b::198.18.0.1", PUB, VIA "allow-range 198.18.0.0/15" },
		{ "64:ff9b::10.0.0.1", DENY, VIA "10.0.0.0/8 Private-Use" },
		{ "64:ff9b::8.8.8.8", PUB, VIA "global unicast" },
	};
	struct classify_cfg *cfg = classify_cfg_new();

	(void)state;
	assert_non_null(cfg);
	allow(cfg, "198.18.0.0/15");
	CHECK(cfg, p);
	classify_cfg_free(cfg);
}

static void
test_deny_range_applies_to_nat64_embedded(void **state)
{
	static const struct probe p[] = {
		{ "64:ff9b::198.18.0.1", PUB, VIA "allow-range 198.18.0.0/15" },
		{ "64:ff9b::198.19.0.1", DENY, VIA "deny-range 198.19.0.0/16" },
	};
	struct classify_cfg *cfg = classify_cfg_new();

	(void)state;
	assert_non_null(cfg);
	allow(cfg, "198.18.0.0/15");
	deny(cfg, "198.19.0.0/16");
	CHECK(cfg, p);
	classify_cfg_free(cfg);
}

static void
test_duplicate_range_added_once(void **state)
{
	struct classify_cfg *cfg = classify_cfg_new();
	struct cidr c;
	char buf[32];
	int i;

	(void)state;
	assert_non_null(cfg);
	allow(cfg, "198.18.0.0/15");
	allow(cfg, "198.18.0.0/15");
	/* 255 more distinct ranges still fit: the duplicate took no slot. */
	for (i = 0; i < 255; i++) {
		snprintf(buf, sizeof(buf), "10.%d.0.0/16", i);
		c = cidr(buf);
		assert_int_equal(classify_cfg_allow(cfg, &c), 0);
	}
	c = cidr("10.255.0.0/16");
	assert_int_equal(classify_cfg_allow(cfg, &c), -1);
	classify_cfg_free(cfg);
}

static void
test_allow_and_deny_lists_capped(void **state)
{
	struct classify_cfg *cfg = classify_cfg_new();
	struct cidr c;
	char buf[32];
	int i;

	(void)state;
	assert_non_null(cfg);
	for (i = 0; i < 256; i++) {
		snprintf(buf, sizeof(buf), "10.0.%d.0/24", i);
		c = cidr(buf);
		assert_int_equal(classify_cfg_allow(cfg, &c), 0);
		assert_int_equal(classify_cfg_deny(cfg, &c), 0);
	}
	c = cidr("10.1.0.0/24");
	assert_int_equal(classify_cfg_allow(cfg, &c), -1);
	assert_int_equal(classify_cfg_deny(cfg, &c), -1);
	classify_cfg_free(cfg);
}

static void
test_own_addresses_capped_and_old_set_kept(void **state)
{
	static const struct probe p[] = {
		{ "8.8.8.8", DENY, "own-address" },
		{ "10.0.0.1", DENY, "10.0.0.0/8 Private-Use" },
	};
	struct classify_cfg *cfg = classify_cfg_new();
	struct cidr *own = calloc(CLASSIFY_MAX_OWN + 76, sizeof(*own));
	size_t i;

	(void)state;
	assert_non_null(cfg);
	assert_non_null(own);
	own[0] = cidr("8.8.8.8/32");
	assert_int_equal(classify_cfg_set_own(cfg, own, 1), 0);

	for (i = 0; i < CLASSIFY_MAX_OWN + 76; i++) {
		memset(&own[i], 0, sizeof(own[i]));
		own[i].family = AF_INET;
		own[i].prefix = 32;
		own[i].addr[0] = 10;
		own[i].addr[1] = (unsigned char)(i >> 16);
		own[i].addr[2] = (unsigned char)(i >> 8);
		own[i].addr[3] = (unsigned char)i;
	}
	assert_int_equal(classify_cfg_set_own(cfg, own, CLASSIFY_MAX_OWN + 1), -1);
	CHECK(cfg, p);		/* the failed call changed nothing */
	assert_int_equal(classify_cfg_set_own(cfg, own, CLASSIFY_MAX_OWN), 0);

	/* Loopback entries are dropped before the cap is counted. */
	for (i = CLASSIFY_MAX_OWN; i < CLASSIFY_MAX_OWN + 76; i++)
		own[i].addr[0] = 127;
	assert_int_equal(classify_cfg_set_own(cfg, own, CLASSIFY_MAX_OWN + 76), 0);

	/* An unknown family, a prefix past the family, host bits set: each
	 * refuses the whole set. */
	own[5].family = 12345;
	assert_int_equal(classify_cfg_set_own(cfg, own, 10), -1);
	own[5].family = AF_INET;
	own[5].prefix = 33;
	assert_int_equal(classify_cfg_set_own(cfg, own, 10), -1);
	own[5].prefix = 24;	/* 10.0.0.5/24 */
	assert_int_equal(classify_cfg_set_own(cfg, own, 10), -1);
	assert_int_equal(classify_cfg_set_own(cfg, NULL, 3), -1);
	assert_int_equal(classify_cfg_set_own(NULL, NULL, 0), -1);

	free(own);
	classify_cfg_free(cfg);
}

/* A range text handed out in a result is owned by the config and must
 * survive later additions (the list grows). */
static void
test_range_text_stays_valid_as_cfg_grows(void **state)
{
	struct classify_cfg *cfg = classify_cfg_new();
	struct classify_result res, res64;
	struct cidr c;
	unsigned char a[16];
	char buf[32];
	int i;

	(void)state;
	assert_non_null(cfg);
	allow(cfg, "198.18.0.0/15");
	to_bytes("198.18.0.1", a);
	assert_int_equal(classify_addr(cfg, AF_INET, a, &res), 1);
	to_bytes("64:ff9b::198.18.0.1", a);
	assert_int_equal(classify_addr(cfg, AF_INET6, a, &res64), 1);
	for (i = 0; i < 200; i++) {
		snprintf(buf, sizeof(buf), "10.%d.0.0/16", i);
		c = cidr(buf);
		assert_int_equal(classify_cfg_allow(cfg, &c), 0);
	}
	assert_string_equal(res.range, "allow-range 198.18.0.0/15");
	assert_string_equal(res64.range, VIA "allow-range 198.18.0.0/15");
	classify_cfg_free(cfg);
}

static void
test_cfg_rejects_invalid_cidr_struct(void **state)
{
	struct classify_cfg *cfg = classify_cfg_new();
	struct cidr c;

	(void)state;
	assert_non_null(cfg);
	memset(&c, 0, sizeof(c));
	c.family = 99;
	assert_int_equal(classify_cfg_allow(cfg, &c), -1);
	c.family = AF_INET;
	c.prefix = 33;
	assert_int_equal(classify_cfg_deny(cfg, &c), -1);
	c.prefix = 8;
	c.addr[0] = 10;
	c.addr[3] = 1;		/* host bits */
	assert_int_equal(classify_cfg_allow(cfg, &c), -1);
	assert_int_equal(classify_cfg_allow(cfg, NULL), -1);
	assert_int_equal(classify_cfg_allow(NULL, &c), -1);
	assert_int_equal(classify_cfg_deny(NULL, &c), -1);
	classify_cfg_free(cfg);
}

static void
test_unknown_family_and_null_address_fail_closed(void **state)
{
	struct classify_result res;
	unsigned char a[16] = { 8, 8, 8, 8 };

	(void)state;
	res.range = NULL;
	assert_int_equal(classify_addr(NULL, AF_UNIX, a, &res), 0);
	assert_int_equal(res.public, 0);
	assert_non_null(res.range);
	res.range = NULL;
	assert_int_equal(classify_addr(NULL, AF_INET, NULL, &res), 0);
	assert_int_equal(res.public, 0);
	assert_non_null(res.range);
	assert_int_equal(classify_addr(NULL, AF_INET, a, NULL), 1);
}

static void
test_cfg_free_null_safe(void **state)
{
	(void)state;
	classify_cfg_free(NULL);
	classify_cfg_free(classify_cfg_new());
}

/* ---- CIDR parser ----------------------------------------------------- */

static void
expect_cidr(const char *s, int family, const char *canon)
{
	struct cidr c;
	char err[128] = "", out[64];

	if (cidr_parse(s, &c, err, sizeof(err)) != 0) {
		print_error("%s: refused: %s\n", s, err);
		fail();
	}
	assert_int_equal(c.family, family);
	assert_true(cidr_format(&c, out, sizeof(out)) > 0);
	assert_string_equal(out, canon);
}

static void
expect_refused(const char *s, const char *why)
{
	struct cidr c;
	char err[128] = "";
	size_t i;

	memset(&c, 0x5a, sizeof(c));
	if (cidr_parse(s, &c, err, sizeof(err)) != -1) {
		print_error("%s: accepted, want refused (%s)\n", s, why);
		fail();
	}
	if (strstr(err, why) == NULL) {
		print_error("%s: err \"%s\", want \"%s\"\n", s, err, why);
		fail();
	}
	/* The message never echoes the input's bytes. */
	for (i = 0; err[i] != '\0'; i++)
		assert_true(err[i] >= 0x20 && err[i] < 0x7f);
	assert_int_equal(c.family, 0x5a5a5a5a);	/* *out untouched */
}

static void
test_parse_cidr_accepts_canonical_forms(void **state)
{
	(void)state;
	expect_cidr("198.18.0.0/15", AF_INET, "198.18.0.0/15");
	expect_cidr("10.0.0.0/8", AF_INET, "10.0.0.0/8");
	expect_cidr("0.0.0.0/0", AF_INET, "0.0.0.0/0");
	expect_cidr("255.255.255.255/32", AF_INET, "255.255.255.255/32");
	expect_cidr("127.0.0.0/8", AF_INET, "127.0.0.0/8");
	expect_cidr("2001:db8::/32", AF_INET6, "2001:db8::/32");
	expect_cidr("2001:DB8::/32", AF_INET6, "2001:db8::/32");
	expect_cidr("::/0", AF_INET6, "::/0");
	expect_cidr("::1/128", AF_INET6, "::1/128");
	expect_cidr("64:ff9b::/96", AF_INET6, "64:ff9b::/96");
	expect_cidr("fd00:1:0:0:0:0:0:0/64", AF_INET6, "fd00:1::/64");
	expect_cidr("ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff/128", AF_INET6,
	    "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff/128");
}

static void
test_parse_cidr_refuses_leading_zeros(void **state)
{
	(void)state;
	expect_refused("010.0.0.0/8", "IPv4");
	expect_refused("10.00.0.0/16", "IPv4");
	expect_refused("198.018.0.0/15", "IPv4");
	expect_refused("10.0.0.000/32", "IPv4");
	expect_refused("10.0.0.0/08", "prefix");
	expect_refused("10.0.0.0/00", "prefix");
	expect_refused("2001:db8::/032", "prefix");
}

static void
test_parse_cidr_refuses_host_bits_set(void **state)
{
	(void)state;
	expect_refused("198.18.0.1/15", "host bits set");
	expect_refused("198.19.0.0/15", "host bits set");
	expect_refused("10.0.0.1/8", "host bits set");
	expect_refused("11.0.0.0/7", "host bits set");
	expect_refused("10.0.0.0/6", "host bits set");
	expect_refused("0.0.0.1/0", "host bits set");
	expect_refused("2001:db8::1/32", "host bits set");
	expect_refused("::1/127", "host bits set");
	expect_refused("fe80::1/10", "host bits set");
}

static void
test_parse_cidr_refuses_prefix_out_of_range(void **state)
{
	(void)state;
	expect_refused("10.0.0.0/33", "prefix");
	expect_refused("10.0.0.0/99999999999999999999", "prefix");
	expect_refused("2001:db8::/129", "prefix");
	expect_refused("10.0.0.0/-1", "");
	expect_refused("10.0.0.0/+8", "");
}

static void
test_parse_cidr_refuses_junk(void **state)
{
	static const char *const junk[] = {
		"", "/8", " 10.0.0.0/8", "10.0.0.0/8 ", "10.0.0.0/8\n",
		"10.0.0.0 /8", "10.0.0.0/ 8", "10.0.0.0\t/8", "10.0.0.0/8x",
		"10.0.0/8", "10.0.0.0.0/8", "10..0.0/16", ".10.0.0/8",
		"10.0.0./8", "256.0.0.0/8", "0x0a.0.0.0/8", "1a.0.0.0/8",
		"10.0.0.0//8", "10.0.0.0/8/8", "2001:db8::g/32",
		"2001:db8:::/32", "1:2:3:4:5:6:7:8:9/128", "10.0.0.0/8:",
		"10.0.0.0/8\xff", "\xc0\xae/8", "10.0.0.0,8", "localhost/8",
		"10.0.0.0/0x8", "10.0.0.0/8.0",
	};
	size_t i;

	(void)state;
	for (i = 0; i < NELEM(junk); i++)
		expect_refused(junk[i], "");
}

static void
test_parse_cidr_refuses_missing_prefix(void **state)
{
	(void)state;
	expect_refused("10.0.0.0", "missing /prefix");
	expect_refused("2001:db8::", "missing /prefix");
	expect_refused("10.0.0.0/", "missing prefix");
	expect_refused("/8", "missing address");
}

static void
test_parse_cidr_refuses_zone_id(void **state)
{
	(void)state;
	expect_refused("fe80::%eth0/64", "zone id");
	expect_refused("fe80::%1/64", "zone id");
	expect_refused("fe80::/64%eth0", "zone id");
}

static void
test_parse_cidr_refuses_brackets(void **state)
{
	(void)state;
	expect_refused("[2001:db8::]/32", "brackets");
	expect_refused("[2001:db8::/32]", "brackets");
}

static void
test_parse_cidr_refuses_overlong_input(void **state)
{
	char big[512];

	(void)state;
	memset(big, '1', sizeof(big));
	big[3] = ':';
	big[sizeof(big) - 4] = '/';
	big[sizeof(big) - 3] = '6';
	big[sizeof(big) - 2] = '4';
	big[sizeof(big) - 1] = '\0';
	expect_refused(big, "too long");
	memset(big, '1', sizeof(big));
	big[sizeof(big) - 1] = '\0';
	expect_refused(big, "");
}

static void
test_parse_cidr_error_never_echoes_input(void **state)
{
	static const char *const hostile[] = {
		"\x1b[31mevil\x07/8", "evil\"}/8", "10.0.0.0/8\r\nX-Injected: 1",
		"fe80::%\x1b[2J/64",
	};
	struct cidr c;
	char err[256];
	size_t i;

	(void)state;
	for (i = 0; i < NELEM(hostile); i++) {
		err[0] = '\0';
		assert_int_equal(cidr_parse(hostile[i], &c, err,
		    sizeof(err)), -1);
		assert_true(err[0] != '\0');
		assert_null(strstr(err, "evil"));
		assert_null(strstr(err, "Injected"));
		assert_null(strchr(err, '\x1b'));
	}
}

static void
test_parse_cidr_tolerates_small_or_null_err(void **state)
{
	struct cidr c;
	char one[1] = { 'x' }, four[4];

	(void)state;
	assert_int_equal(cidr_parse("198.18.0.1/15", &c, NULL, 0), -1);
	assert_int_equal(cidr_parse("198.18.0.1/15", &c, one, 0), -1);
	assert_int_equal(one[0], 'x');
	assert_int_equal(cidr_parse("198.18.0.1/15", &c, one, 1), -1);
	assert_int_equal(one[0], '\0');
	assert_int_equal(cidr_parse("198.18.0.1/15", &c, four,
	    sizeof(four)), -1);
	assert_int_equal(strlen(four), 3);
	assert_int_equal(cidr_parse(NULL, &c, four, sizeof(four)), -1);
	assert_int_equal(cidr_parse("10.0.0.0/8", NULL, four,
	    sizeof(four)), -1);
}

static void
test_format_cidr_refuses_small_buffer_and_bad_struct(void **state)
{
	struct cidr c = cidr("198.18.0.0/15");
	char buf[64];

	(void)state;
	assert_int_equal(cidr_format(&c, buf, sizeof(buf)), 13);
	assert_int_equal(cidr_format(&c, buf, 14), 13);
	assert_int_equal(cidr_format(&c, buf, 13), -1);
	assert_int_equal(cidr_format(&c, buf, 0), -1);
	assert_int_equal(cidr_format(&c, NULL, 10), -1);
	assert_int_equal(cidr_format(NULL, buf, sizeof(buf)), -1);
	c.prefix = 33;
	assert_int_equal(cidr_format(&c, buf, sizeof(buf)), -1);
	c.family = 99;
	c.prefix = 8;
	assert_int_equal(cidr_format(&c, buf, sizeof(buf)), -1);
}

/* A block's ends, and one step past them (wrapping is told). */
static void
test_cidr_ends_and_step_at_the_edges_of_the_space(void **state)
{
	static const unsigned char ten[4] = { 10, 0, 0, 0 }, zero6[16] = { 0 };
	unsigned char f[16], l[16];

	(void)state;
	cidr_ends(ten, 8, 4, f, l);
	assert_memory_equal(f, ((unsigned char[]){ 10, 0, 0, 0 }), 4);
	assert_memory_equal(l, ((unsigned char[]){ 10, 255, 255, 255 }), 4);
	assert_int_equal(cidr_step(l, 4, 1), 0);
	assert_memory_equal(l, ((unsigned char[]){ 11, 0, 0, 0 }), 4);
	assert_int_equal(cidr_step(f, 4, 0), 0);
	assert_memory_equal(f, ((unsigned char[]){ 9, 255, 255, 255 }), 4);
	cidr_ends(zero6, 0, 16, f, l);
	assert_int_equal(cidr_step(f, 16, 0), -1);	/* below :: */
	assert_int_equal(cidr_step(l, 16, 1), -1);	/* past ffff:...:ffff */
	cidr_ends(ten, 31, 4, f, l);
	assert_memory_equal(l, ((unsigned char[]){ 10, 0, 0, 1 }), 4);
}

/* An --allow-range that opens nothing (the guard warns at start): it lies
 * inside no block it could open, or is public already. */
static int
opens(const char *text)
{
	struct cidr c;
	char err[128];

	assert_int_equal(cidr_parse(text, &c, err, sizeof(err)), 0);
	return classify_range_opens(&c);
}

static void
test_allow_range_that_opens_nothing_is_told_apart(void **state)
{
	(void)state;
	/* They open something. */
	assert_int_equal(opens("198.18.0.0/15"), 1);
	assert_int_equal(opens("10.1.0.0/16"), 1);
	assert_int_equal(opens("127.0.0.0/8"), 1);
	assert_int_equal(opens("127.0.0.1/32"), 1);
	assert_int_equal(opens("0.0.0.0/8"), 1);	/* 0.0.0.1 and on */
	assert_int_equal(opens("2001:db8::/32"), 1);
	assert_int_equal(opens("::1/128"), 1);
	assert_int_equal(opens("::/0"), 1);	/* 4000::/2: outside 2000::/3, no row */
	assert_int_equal(opens("4000::/2"), 1);
	/* A range wider than a block never opens it; a public one has
	 * nothing to open; blocks that never open stay shut. */
	assert_int_equal(opens("0.0.0.0/0"), 0);
	assert_int_equal(opens("8.0.0.0/7"), 0);
	assert_int_equal(opens("8.8.8.0/23"), 0);
	assert_int_equal(opens("2000::/3"), 0);
	assert_int_equal(opens("0.0.0.0/32"), 0);
	assert_int_equal(opens("255.255.255.255/32"), 0);
	assert_int_equal(opens("::ffff:0:0/96"), 0);
	assert_int_equal(opens("ff00::/8"), 0);
	assert_int_equal(opens("64:ff9b::/96"), 0);	/* IPv6 ranges never open NAT64 */
	/* The edges: a range that only touches a block from outside. */
	assert_int_equal(opens("9.255.255.255/32"), 0);
	assert_int_equal(opens("11.0.0.0/32"), 0);
	assert_int_equal(opens("10.255.255.255/32"), 1);
	assert_int_equal(classify_range_opens(NULL), 0);
}

/* Thousands of own addresses (a guard with a link per tenant), given in
 * no order, with a local prefix among them: each one is found (a binary
 * search), an address between them is not, and the prefix still covers
 * its block. */
static void
test_own_addresses_thousands_found_by_search(void **state)
{
	static const struct probe p[] = {
		{ "93.184.19.134", DENY, "own-address" },	/* 4998 */
		{ "93.184.0.0", DENY, "own-address" },		/* 0 */
		{ "93.184.19.133", PUB, "global unicast" },	/* odd: not own */
		{ "93.184.39.16", PUB, "global unicast" },	/* past the last */
		{ "203.0.112.77", DENY, "own-address" },	/* the prefix */
		{ "2606:4700::1", DENY, "own-address" },
		{ "2606:4700::2", PUB, "global unicast" },
	};
	struct classify_cfg *cfg = classify_cfg_new();
	struct cidr *own = calloc(5001, sizeof(*own));
	size_t i;

	(void)state;
	assert_non_null(cfg);
	assert_non_null(own);
	for (i = 0; i < 5000; i++) {
		unsigned v = (unsigned)((i * 2654435761u) % 5000u) * 2;	/* even, shuffled */
		own[i].family = AF_INET;
		own[i].prefix = 32;
		own[i].addr[0] = 93;
		own[i].addr[1] = 184;
		own[i].addr[2] = (unsigned char)(v >> 8);
		own[i].addr[3] = (unsigned char)v;
	}
	own[5000] = cidr("203.0.112.0/24");
	own[4999] = cidr("2606:4700::1/128");
	assert_int_equal(classify_cfg_set_own(cfg, own, 5001), 0);
	CHECK(cfg, p);
	classify_cfg_free(cfg);
	free(own);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ipv4_this_network_edges),
		cmocka_unit_test(test_broad_ranges_never_open_own_mapped_loopback_unspecified),
		cmocka_unit_test(test_explicit_mapped_compatible_ranges_open_nothing),
		cmocka_unit_test(test_loopback_opens_only_for_range_inside_loopback),
		cmocka_unit_test(test_broad_range_does_not_open_nested_special_blocks),
		cmocka_unit_test(test_own_address_refused_in_every_embedding),
		cmocka_unit_test(test_unknown_own_set_refuses_everything),
		cmocka_unit_test(test_ipv4_private_use_edges),
		cmocka_unit_test(test_ipv4_shared_address_space_edges),
		cmocka_unit_test(test_ipv4_loopback_edges),
		cmocka_unit_test(test_ipv4_link_local_edges),
		cmocka_unit_test(test_ipv4_ietf_protocol_assignments_edges),
		cmocka_unit_test(test_ipv4_documentation_edges),
		cmocka_unit_test(test_ipv4_6to4_relay_anycast_edges),
		cmocka_unit_test(test_ipv4_benchmarking_edges),
		cmocka_unit_test(test_ipv4_multicast_reserved_broadcast_edges),
		cmocka_unit_test(test_as112_allowed_rows_public),
		cmocka_unit_test(test_ipv4_global_unicast_public),
		cmocka_unit_test(test_ipv6_unspecified_and_loopback_refused),
		cmocka_unit_test(test_ipv4_compatible_refused),
		cmocka_unit_test(test_ipv4_mapped_refused),
		cmocka_unit_test(test_ipv4_translated_refused),
		cmocka_unit_test(test_nat64_with_private_embedded_refused),
		cmocka_unit_test(test_nat64_with_public_embedded_allowed),
		cmocka_unit_test(test_nat64_edges),
		cmocka_unit_test(test_nat64_local_use_refused),
		cmocka_unit_test(test_ipv6_discard_and_dummy_prefix_refused),
		cmocka_unit_test(test_teredo_refused),
		cmocka_unit_test(test_ipv6_documentation_edges),
		cmocka_unit_test(test_6to4_refused),
		cmocka_unit_test(test_srv6_sids_refused),
		cmocka_unit_test(
		    test_ipv6_unique_local_link_local_site_local_multicast_edges),
		cmocka_unit_test(test_outside_2000_3_refused),
		cmocka_unit_test(test_ipv6_global_unicast_public),
		cmocka_unit_test(test_cloud_metadata_addresses_refused),
		cmocka_unit_test(test_allow_range_opens_only_its_range),
		cmocka_unit_test(test_allow_range_ipv6),
		cmocka_unit_test(test_deny_range_beats_allow_range),
		cmocka_unit_test(test_deny_range_refuses_public_address),
		cmocka_unit_test(test_own_address_beats_allow_range),
		cmocka_unit_test(test_own_public_address_refused),
		cmocka_unit_test(test_hostile_own_local_prefix_every_address_refused),
		cmocka_unit_test(test_own_loopback_ignored),
		cmocka_unit_test(test_set_own_replaces_previous_set),
		cmocka_unit_test(test_own_address_family_must_match),
		cmocka_unit_test(test_allow_range_applies_to_nat64_embedded),
		cmocka_unit_test(test_deny_range_applies_to_nat64_embedded),
		cmocka_unit_test(test_duplicate_range_added_once),
		cmocka_unit_test(test_allow_and_deny_lists_capped),
		cmocka_unit_test(test_own_addresses_capped_and_old_set_kept),
		cmocka_unit_test(test_own_addresses_thousands_found_by_search),
		cmocka_unit_test(test_range_text_stays_valid_as_cfg_grows),
		cmocka_unit_test(test_cfg_rejects_invalid_cidr_struct),
		cmocka_unit_test(test_unknown_family_and_null_address_fail_closed),
		cmocka_unit_test(test_cfg_free_null_safe),
		cmocka_unit_test(test_parse_cidr_accepts_canonical_forms),
		cmocka_unit_test(test_parse_cidr_refuses_leading_zeros),
		cmocka_unit_test(test_parse_cidr_refuses_host_bits_set),
		cmocka_unit_test(test_parse_cidr_refuses_prefix_out_of_range),
		cmocka_unit_test(test_parse_cidr_refuses_junk),
		cmocka_unit_test(test_parse_cidr_refuses_missing_prefix),
		cmocka_unit_test(test_parse_cidr_refuses_zone_id),
		cmocka_unit_test(test_parse_cidr_refuses_brackets),
		cmocka_unit_test(test_parse_cidr_refuses_overlong_input),
		cmocka_unit_test(test_parse_cidr_error_never_echoes_input),
		cmocka_unit_test(test_parse_cidr_tolerates_small_or_null_err),
		cmocka_unit_test(test_format_cidr_refuses_small_buffer_and_bad_struct),
		cmocka_unit_test(test_cidr_ends_and_step_at_the_edges_of_the_space),
		cmocka_unit_test(test_allow_range_that_opens_nothing_is_told_apart),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
