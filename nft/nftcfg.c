/* The rules' configuration (nft/nftcfg.h): listener addresses parsed and
 * kept sorted, the exemption, transparent mode's settings. */
#include <arpa/inet.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "nft/nftcfg.h"
#include "policy/dest.h"
#include "util/errbuf.h"
#include "util/num.h"

void
nftcfg_init(struct nftcfg *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
}

static int
guard_cmp(const struct nftcfg_addr *a, const struct nftcfg_addr *b)
{
	int c;

	if (a->family != b->family)
		return a->family == AF_INET ? -1 : 1;
	if ((c = memcmp(a->addr, b->addr, sizeof(a->addr))) != 0)
		return c;
	return (a->port > b->port) - (a->port < b->port);
}

/* Addresses no packet to a listener can carry as its destination. */
const char *
nftcfg_unusable(const struct nftcfg_addr *g)
{
	static const unsigned char zero[16];
	const unsigned char *a = g->addr;

	if (g->family == AF_INET) {
		if (memcmp(a, zero, 4) == 0)
			return "0.0.0.0 is not a destination";
		if (a[0] >= 224 && a[0] <= 239)
			return "a multicast address cannot be a listener";
		if (a[0] == 255 && a[1] == 255 && a[2] == 255 && a[3] == 255)
			return "the broadcast address cannot be a listener";
		return NULL;
	}
	if (memcmp(a, zero, 16) == 0)
		return ":: is not a destination";
	if (a[0] == 0xff)
		return "a multicast address cannot be a listener";
	/* A socket connecting to ::ffff:a.b.c.d sends IPv4 packets, which an
	 * ip6 daddr rule never matches. */
	if (memcmp(a, zero, 10) == 0 && a[10] == 0xff && a[11] == 0xff)
		return "IPv4-mapped address: give the IPv4 address instead";
	return NULL;
}

int
nftcfg_parse_addr(const char *text, const char *what,
    struct nftcfg_addr *g, char *err, size_t errlen)
{
	struct dest d;
	char why[128];
	const char *bad;

	if (text == NULL)
		return errbuf_fail(err, errlen, "no %s address", what);
	if (dest_parse_authority(text, strlen(text), &d, why, sizeof(why)) == -1)
		return errbuf_fail(err, errlen, "bad %s address: %s "
		    "(expected IPv4:PORT or [IPv6]:PORT)", what, why);
	if (d.kind != DEST_IPV4 && d.kind != DEST_IPV6)
		return errbuf_fail(err, errlen, "bad %s address: a host name; "
		    "rules take IP literals only (IPv4:PORT or [IPv6]:PORT)",
		    what);
	memset(g, 0, sizeof(*g));
	g->family = d.kind == DEST_IPV4 ? AF_INET : AF_INET6;
	memcpy(g->addr, d.addr, g->family == AF_INET ? 4 : 16);
	g->port = d.port;
	if ((bad = nftcfg_unusable(g)) != NULL)
		return errbuf_fail(err, errlen, "bad %s address: %s", what, bad);
	return 0;
}

int
nftcfg_add_guard(struct nftcfg *cfg, const char *text, char *err,
    size_t errlen)
{
	struct nftcfg_addr g;
	size_t i;
	int c;

	if (cfg == NULL || text == NULL)
		return errbuf_fail(err, errlen, "no guard address");
	if (cfg->nguards >= NFTCFG_MAX_GUARDS)
		return errbuf_fail(err, errlen, "too many guard addresses (at most %d)",
		    NFTCFG_MAX_GUARDS);
	if (nftcfg_parse_addr(text, "guard", &g, err, errlen) == -1)
		return -1;
	for (i = 0; i < cfg->nguards; i++) {
		c = guard_cmp(&g, &cfg->guards[i]);
		if (c == 0)
			return errbuf_fail(err, errlen, "guard address given twice");
		if (c < 0)
			break;
	}
	memmove(&cfg->guards[i + 1], &cfg->guards[i],
	    (cfg->nguards - i) * sizeof(cfg->guards[0]));
	cfg->guards[i] = g;
	cfg->nguards++;
	return 0;
}

int
nftcfg_set_exempt_uid(struct nftcfg *cfg, const char *text,
    char *err, size_t errlen)
{
	long long v;

	if (cfg == NULL || num_parse(text, 0, 4294967294LL, &v) == -1)
		return errbuf_fail(err, errlen, "bad exempt uid: expected a decimal "
		    "uid 1-4294967294");
	if (v == 0)
		return errbuf_fail(err, errlen, "exempt uid 0 refused: it would exempt "
		    "a workload running as root; run the guard as its own user");
	cfg->has_exempt_uid = 1;
	cfg->exempt_uid = (uint32_t)v;
	return 0;
}

int
nftcfg_set_exempt_cgroup(struct nftcfg *cfg, uint64_t id,
    uint32_t level, char *err, size_t errlen)
{
	if (cfg == NULL || id == 0)
		return errbuf_fail(err, errlen, "bad exempt cgroup: no id");
	if (level == 0)
		return errbuf_fail(err, errlen, "exempt cgroup refused: it is the root "
		    "cgroup, which holds every process not placed elsewhere "
		    "(the workload too)");
	if (level > NFTCFG_CGROUP_LEVEL_MAX)
		return errbuf_fail(err, errlen, "exempt cgroup refused: deeper than "
		    "%d levels", NFTCFG_CGROUP_LEVEL_MAX);
	cfg->has_exempt_cgroup = 1;
	cfg->exempt_cgroup_id = id;
	cfg->exempt_cgroup_level = level;
	return 0;
}

int
nftcfg_format_addr(const struct nftcfg_addr *g, char *buf, size_t len)
{
	char a[INET6_ADDRSTRLEN];
	int n;

	if (inet_ntop(g->family, g->addr, a, sizeof(a)) == NULL)
		return -1;
	n = snprintf(buf, len, g->family == AF_INET6 ? "[%s]:%u" : "%s:%u",
	    a, (unsigned int)g->port);
	if (n < 0 || (size_t)n >= len)
		return -1;
	return n;
}

