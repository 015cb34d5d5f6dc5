/* guard/ifaddr.c's reading of rtnetlink notifications: what a change adds
 * to the guard's own set before the whole set is read again. Every
 * address an RTM_NEWADDR names and every local route's prefix is taken;
 * removals add nothing; anything malformed, an error or an overrun is -1
 * (the caller then refuses every address until the re-read); and with
 * classify_cfg_add_own the added address is refused while the others
 * stay public. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <arpa/inet.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <cmocka.h>

#include "guard/ifaddr.h"
#include "resolver/cidr.h"
#include "resolver/classify.h"

/* One datagram of notifications being built. */
struct dgram {
	unsigned char	buf[4096];
	size_t		len;
};

static struct nlmsghdr *
msg_begin(struct dgram *d, uint16_t type, size_t body)
{
	struct nlmsghdr *nh = (struct nlmsghdr *)(void *)(d->buf + d->len);

	memset(nh, 0, NLMSG_SPACE(body));
	nh->nlmsg_type = type;
	nh->nlmsg_len = (uint32_t)NLMSG_LENGTH(body);
	return nh;
}

static void
msg_attr(struct nlmsghdr *nh, uint16_t type, const void *data, size_t len)
{
	struct rtattr *a = (struct rtattr *)(void *)((char *)nh +
	    NLMSG_ALIGN(nh->nlmsg_len));

	a->rta_type = type;
	a->rta_len = (unsigned short)RTA_LENGTH(len);
	memcpy(RTA_DATA(a), data, len);
	nh->nlmsg_len = (uint32_t)(NLMSG_ALIGN(nh->nlmsg_len) + RTA_ALIGN(a->rta_len));
}

static void
msg_end(struct dgram *d, struct nlmsghdr *nh)
{
	d->len += NLMSG_ALIGN(nh->nlmsg_len);
}

static void
newaddr(struct dgram *d, uint16_t type, int family, const char *local,
    const char *brd)
{
	unsigned char a[16];
	struct nlmsghdr *nh = msg_begin(d, type, sizeof(struct ifaddrmsg));
	struct ifaddrmsg *ifa = NLMSG_DATA(nh);
	size_t alen = family == AF_INET ? 4 : 16;

	ifa->ifa_family = (unsigned char)family;
	ifa->ifa_prefixlen = family == AF_INET ? 24 : 64;
	assert_int_equal(inet_pton(family, local, a), 1);
	msg_attr(nh, IFA_ADDRESS, a, alen);
	msg_attr(nh, IFA_LOCAL, a, alen);
	if (brd != NULL) {
		assert_int_equal(inet_pton(family, brd, a), 1);
		msg_attr(nh, IFA_BROADCAST, a, alen);
	}
	msg_end(d, nh);
}

static void
newroute(struct dgram *d, uint16_t type, unsigned char rtype, int family,
    const char *dst, unsigned char plen)
{
	unsigned char a[16];
	struct nlmsghdr *nh = msg_begin(d, type, sizeof(struct rtmsg));
	struct rtmsg *rt = NLMSG_DATA(nh);

	rt->rtm_family = (unsigned char)family;
	rt->rtm_type = rtype;
	rt->rtm_dst_len = plen;
	assert_int_equal(inet_pton(family, dst, a), 1);
	msg_attr(nh, RTA_DST, a, family == AF_INET ? 4 : 16);
	msg_end(d, nh);
}

/* 1 when c is family/text/prefix. */
static int
is_block(const struct cidr *c, int family, const char *text,
    unsigned int prefix)
{
	unsigned char a[16] = { 0 };

	return inet_pton(family, text, a) == 1 && c->family == family &&
	    c->prefix == prefix && memcmp(c->addr, a, family == AF_INET ?
	    4 : 16) == 0;
}

static void
test_new_addresses_and_local_routes_are_added(void **state)
{
	struct dgram d = { { 0 }, 0 };
	struct cidr add[16];
	size_t n = 0;

	(void)state;
	newaddr(&d, RTM_NEWADDR, AF_INET, "10.82.0.1", "10.82.0.3");
	newaddr(&d, RTM_NEWADDR, AF_INET6, "fd82::1", NULL);
	newroute(&d, RTM_NEWROUTE, RTN_LOCAL, AF_INET, "198.51.100.0", 24);
	/* A unicast route is not the host's: nothing added. */
	newroute(&d, RTM_NEWROUTE, RTN_UNICAST, AF_INET, "203.0.113.0", 24);
	assert_int_equal(ifaddr_announced(d.buf, d.len, add, 16, &n), 0);
	/* IPv4: address, local, broadcast; IPv6: address, local; the route. */
	assert_int_equal(n, 6);
	assert_true(is_block(&add[0], AF_INET, "10.82.0.1", 32));
	assert_true(is_block(&add[2], AF_INET, "10.82.0.3", 32));
	assert_true(is_block(&add[3], AF_INET6, "fd82::1", 128));
	assert_true(is_block(&add[5], AF_INET, "198.51.100.0", 24));
}

static void
test_removals_add_nothing(void **state)
{
	struct dgram d = { { 0 }, 0 };
	struct cidr add[4];
	size_t n = 0;

	(void)state;
	newaddr(&d, RTM_DELADDR, AF_INET, "10.82.0.1", "10.82.0.3");
	newroute(&d, RTM_DELROUTE, RTN_LOCAL, AF_INET, "198.51.100.0", 24);
	assert_int_equal(ifaddr_announced(d.buf, d.len, add, 4, &n), 0);
	assert_int_equal(n, 0);
}

static void
test_hostile_malformed_or_lost_is_refused(void **state)
{
	struct dgram d = { { 0 }, 0 };
	struct nlmsghdr *nh;
	struct cidr add[4];
	size_t n = 0;

	(void)state;
	/* Cut in the middle of its header. */
	newaddr(&d, RTM_NEWADDR, AF_INET, "10.82.0.1", NULL);
	assert_int_equal(ifaddr_announced(d.buf, 8, add, 4, &n), -1);
	/* Its length past the datagram. */
	nh = (struct nlmsghdr *)(void *)d.buf;
	nh->nlmsg_len += 64;
	assert_int_equal(ifaddr_announced(d.buf, d.len, add, 4, &n), -1);
	/* An IPv4 address of 16 bytes. */
	memset(&d, 0, sizeof(d));
	nh = msg_begin(&d, RTM_NEWADDR, sizeof(struct ifaddrmsg));
	((struct ifaddrmsg *)NLMSG_DATA(nh))->ifa_family = AF_INET;
	msg_attr(nh, IFA_LOCAL, "0123456789abcdef", 16);
	msg_end(&d, nh);
	assert_int_equal(ifaddr_announced(d.buf, d.len, add, 4, &n), -1);
	/* An overrun: messages were lost. */
	memset(&d, 0, sizeof(d));
	nh = msg_begin(&d, NLMSG_OVERRUN, 0);
	msg_end(&d, nh);
	assert_int_equal(ifaddr_announced(d.buf, d.len, add, 4, &n), -1);
}

static void
test_hostile_more_than_room_is_refused(void **state)
{
	struct dgram d = { { 0 }, 0 };
	struct cidr add[2];
	size_t n = 0;

	(void)state;
	newaddr(&d, RTM_NEWADDR, AF_INET, "10.82.0.1", "10.82.0.3");
	assert_int_equal(ifaddr_announced(d.buf, d.len, add, 2, &n), -1);
}

/* The whole path the watch takes: the set read, a change announced, the
 * new address refused at once while every other address stays public. */
static void
test_announced_address_refused_others_stay_public(void **state)
{
	struct classify_cfg *cfg = classify_cfg_new();
	struct dgram d = { { 0 }, 0 };
	struct cidr own[1], add[8];
	struct classify_result v;
	unsigned char a[4];
	char err[128];
	size_t n = 0;

	(void)state;
	assert_non_null(cfg);
	assert_int_equal(cidr_parse("198.18.0.1/32", own, err, sizeof(err)), 0);
	assert_int_equal(classify_cfg_set_own(cfg, own, 1), 0);
	newaddr(&d, RTM_NEWADDR, AF_INET, "8.8.4.4", NULL);
	assert_int_equal(ifaddr_announced(d.buf, d.len, add, 8, &n), 0);
	assert_int_equal(classify_cfg_add_own(cfg, add, n), 0);
	inet_pton(AF_INET, "8.8.4.4", a);
	assert_int_equal(classify_addr(cfg, AF_INET, a, &v), 0);
	assert_string_equal(v.range, "own-address");
	inet_pton(AF_INET, "8.8.8.8", a);
	assert_int_equal(classify_addr(cfg, AF_INET, a, &v), 1);
	/* Control: an unknown set (what a lost message leaves) refuses
	 * that one too, and takes no additions. */
	classify_cfg_own_unknown(cfg);
	assert_int_equal(classify_addr(cfg, AF_INET, a, &v), 0);
	assert_int_equal(classify_cfg_add_own(cfg, add, n), -1);
	classify_cfg_free(cfg);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_new_addresses_and_local_routes_are_added),
		cmocka_unit_test(test_removals_add_nothing),
		cmocka_unit_test(test_hostile_malformed_or_lost_is_refused),
		cmocka_unit_test(test_hostile_more_than_room_is_refused),
		cmocka_unit_test(test_announced_address_refused_others_stay_public),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
