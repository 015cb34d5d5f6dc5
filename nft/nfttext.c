/* The tenants' table in plain form (nft/nfttext.h): the tenants become
 * set elements, the rules stay the same few whatever the number of
 * tenants (a lookup in a hash set costs the same for 1 or 4096). The text
 * is what `nft tenants --dry-run` prints; nfttenant.c builds the same
 * table as netlink objects from the same elements. */
#include <arpa/inet.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "nft/nfttext.h"
#include "nft/nftx.h"
#include "policy/tspec.h"
#include "util/errbuf.h"
#include "util/mutant.h"

#define T_IPADDR	NFTX_T_IPADDR
#define T_IP6ADDR	NFTX_T_IP6ADDR
#define T_INET_PROTO	NFTX_T_INET_PROTO
#define T_INET_SERVICE	NFTX_T_INET_SERVICE
#define T_IFNAME	NFTX_T_IFNAME
#define T_BITS		NFTX_T_BITS
#define CAT2(a, b)		(((uint32_t)(a) << T_BITS) | (b))
#define CAT4(a, b, c, d)	((CAT2(CAT2(a, b), c) << T_BITS) | (d))
#define IFN		NFTTEXT_IFN

const struct nfttext_setdef nfttext_sets[NFTTEXT_NSETS] = {
	{ "links", "ifname", T_IFNAME, IFN, 0, 0 },
	{ "links6", "ifname", T_IFNAME, IFN, 0, 0 },
	{ "peers4", "ifname . ipv4_addr", CAT2(T_IFNAME, T_IPADDR), IFN + 4,
	  0, 0 },
	{ "peers6", "ifname . ipv6_addr", CAT2(T_IFNAME, T_IP6ADDR), IFN + 16,
	  0, 0 },
	{ "listen4", "ifname . ipv4_addr . inet_proto . inet_service",
	  CAT4(T_IFNAME, T_IPADDR, T_INET_PROTO, T_INET_SERVICE), IFN + 12,
	  0, 0 },
	{ "listen6", "ifname . ipv6_addr . inet_proto . inet_service",
	  CAT4(T_IFNAME, T_IP6ADDR, T_INET_PROTO, T_INET_SERVICE), IFN + 24,
	  0, 0 },
	/* Transparent tenants only: their own address (not redirected), and
	 * where the rest of their TCP goes. */
	{ "own4", "ifname . ipv4_addr", CAT2(T_IFNAME, T_IPADDR), IFN + 4,
	  0, 0 },
	{ "own6", "ifname . ipv6_addr", CAT2(T_IFNAME, T_IP6ADDR), IFN + 16,
	  0, 0 },
	{ "tproxy4", "ifname : ipv4_addr . inet_service", T_IFNAME, IFN,
	  CAT2(T_IPADDR, T_INET_SERVICE), 8 },
	{ "tproxy6", "ifname : ipv6_addr . inet_service", T_IFNAME, IFN,
	  CAT2(T_IP6ADDR, T_INET_SERVICE), 20 },
};

#define REC_LEN(s)	(nfttext_sets[s].key_len + nfttext_sets[s].data_len)

/* The listener ports of t, each with its protocol; returns how many. */
static size_t
listeners(const struct tspec *t, uint8_t proto[4], uint16_t port[4])
{
	size_t m = 0;

	proto[m] = IPPROTO_TCP;
	port[m++] = t->port;
	if (t->dns_port != 0) {
		proto[m] = IPPROTO_TCP;
		port[m++] = t->dns_port;
		proto[m] = IPPROTO_UDP;
		port[m++] = t->dns_port;
	}
	if (t->transparent_port != 0) {
		proto[m] = IPPROTO_TCP;
		port[m++] = t->transparent_port;
	}
	return m;
}

static unsigned char *
key_put(struct nfttext_keys *k, int set)
{
	unsigned char *p = k->k[set] + k->n[set]++ * REC_LEN(set);

	memset(p, 0, REC_LEN(set));
	return p;
}

void
nfttext_keys_free(struct nfttext_keys *k)
{
	int i;

	for (i = 0; i < NFTTEXT_NSETS; i++)
		free(k->k[i]);
	memset(k, 0, sizeof(*k));
}

int
nfttext_keys_build(const struct tspec *v, size_t n, struct nfttext_keys *k,
    char *err, size_t errlen)
{
	uint8_t proto[4];
	uint16_t port[4], be;
	unsigned char *p;
	size_t i, j, m, alen;
	int s, v6;

	memset(k, 0, sizeof(*k));
	if (n > TSPEC_MAX)
		return errbuf_fail(err, errlen, "more than %d tenants", TSPEC_MAX);
	for (s = 0; s < NFTTEXT_NSETS; s++) {
		m = (s == NFTTEXT_LISTEN4 || s == NFTTEXT_LISTEN6) ? 4 * n : n;
		if ((k->k[s] = calloc(m > 0 ? m : 1, REC_LEN(s))) == NULL) {
			nfttext_keys_free(k);
			return errbuf_fail(err, errlen, "out of memory");
		}
	}
	for (i = 0; i < n; i++) {
		v6 = v[i].family == AF_INET6;
		alen = v6 ? 16 : 4;
		memcpy(key_put(k, NFTTEXT_LINKS), v[i].link, strlen(v[i].link));
		if (v6)
			memcpy(key_put(k, NFTTEXT_LINKS6), v[i].link,
			    strlen(v[i].link));
		p = key_put(k, v6 ? NFTTEXT_PEERS6 : NFTTEXT_PEERS4);
		memcpy(p, v[i].link, strlen(v[i].link));
		memcpy(p + IFN, v[i].peer, alen);
		m = listeners(&v[i], proto, port);
		for (j = 0; j < m; j++) {
			p = key_put(k, v6 ? NFTTEXT_LISTEN6 : NFTTEXT_LISTEN4);
			memcpy(p, v[i].link, strlen(v[i].link));
			memcpy(p + IFN, v[i].addr, alen);
			p[IFN + alen] = proto[j];
			be = htons(port[j]);
			memcpy(p + IFN + alen + 4, &be, sizeof(be));
		}
		if (v[i].transparent_port == 0)
			continue;
		p = key_put(k, v6 ? NFTTEXT_OWN6 : NFTTEXT_OWN4);
		memcpy(p, v[i].link, strlen(v[i].link));
		memcpy(p + IFN, v[i].addr, alen);
		p = key_put(k, v6 ? NFTTEXT_TPROXY6 : NFTTEXT_TPROXY4);
		memcpy(p, v[i].link, strlen(v[i].link));
		memcpy(p + IFN, v[i].addr, alen);
		be = htons(v[i].transparent_port);
		memcpy(p + IFN + alen, &be, sizeof(be));
	}
	return 0;
}

const unsigned char *
nfttext_key(const struct nfttext_keys *k, int s, size_t i)
{
	return k->k[s] + i * REC_LEN(s);
}

/* A string that grows as written (a line per element: 4096 tenants
 * make over a megabyte); bad once a write failed. */
struct sb {
	char	*s;
	size_t	 len, cap;
	int	 bad;
};

static void sb_add(struct sb *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void
sb_add(struct sb *b, const char *fmt, ...)
{
	va_list ap;
	size_t cap;
	char *ns;
	int n;

	for (;;) {
		if (b->bad)
			return;
		/* The first pass has no buffer: it only measures (NULL + 0
		 * would be undefined, UBSan says so). */
		va_start(ap, fmt);
		n = vsnprintf(b->s != NULL ? b->s + b->len : NULL,
		    b->cap - b->len, fmt, ap);
		va_end(ap);
		if (n < 0) {
			b->bad = 1;
			return;
		}
		if ((size_t)n < b->cap - b->len) {
			b->len += (size_t)n;
			return;
		}
		cap = b->cap * 2 + (size_t)n + 1;
		if ((ns = realloc(b->s, cap)) == NULL) {
			b->bad = 1;
			return;
		}
		b->s = ns;
		b->cap = cap;
	}
}

/* One element of set s as nft writes it. */
static void
text_elem(struct sb *b, int s, const unsigned char *rec)
{
	char a[INET6_ADDRSTRLEN];
	int v6 = s == NFTTEXT_PEERS6 || s == NFTTEXT_LISTEN6 ||
	    s == NFTTEXT_OWN6 || s == NFTTEXT_TPROXY6;
	size_t alen = v6 ? 16 : 4;
	const unsigned char *p = rec + IFN;
	uint16_t port;

	sb_add(b, "\"%.*s\"", IFN, (const char *)rec);
	if (s == NFTTEXT_LINKS || s == NFTTEXT_LINKS6)
		return;
	inet_ntop(v6 ? AF_INET6 : AF_INET, p, a, sizeof(a));
	sb_add(b, " %s %s", nfttext_sets[s].data_len ? ":" : ".", a);
	if (s == NFTTEXT_PEERS4 || s == NFTTEXT_PEERS6 || s == NFTTEXT_OWN4 ||
	    s == NFTTEXT_OWN6)
		return;
	if (s == NFTTEXT_LISTEN4 || s == NFTTEXT_LISTEN6) {
		sb_add(b, " . %s", p[alen] == IPPROTO_TCP ? "tcp" : "udp");
		p += 4;
	}
	memcpy(&port, p + alen, sizeof(port));
	sb_add(b, " . %u", (unsigned int)ntohs(port));
}

char *
nfttext_table(const struct tspec *v, size_t n)
{
	struct sb b = { NULL, 0, 0, 0 };
	struct nfttext_keys k;
	size_t i;
	int s;

	if (nfttext_keys_build(v, n, &k, NULL, 0) == -1)
		return NULL;
	sb_add(&b, "table inet %s {\n", NFTTEXT_TABLE);
	for (s = 0; s < NFTTEXT_NSETS; s++) {
		sb_add(&b, "\t%s %s {\n\t\ttype %s\n",
		    nfttext_sets[s].data_len ? "map" : "set",
		    nfttext_sets[s].name, nfttext_sets[s].type);
		for (i = 0; i < k.n[s]; i++) {
			sb_add(&b, i == 0 ? "\t\telements = { " : ",\n\t\t\t     ");
			text_elem(&b, s, nfttext_key(&k, s, i));
		}
		sb_add(&b, "%s\t}\n\n", k.n[s] > 0 ? " }\n" : "");
	}
	sb_add(&b, "\tchain prerouting {\n"
	    "\t\ttype filter hook prerouting priority raw; policy accept;\n"
	    "\t\tiifname . ip saddr @peers4 accept\n"
	    "\t\tiifname . ip6 saddr @peers6 accept\n"
	    "\t\tiifname @links6 ip6 saddr fe80::/10 ip6 hoplimit 255 "
	    "icmpv6 type 135-136 accept\n"
#ifndef EG_MUTANT_NO_ANTISPOOF
	    "\t\tiifname @links counter drop\n"
#endif
	    "\t}\n\n");
	if (k.n[NFTTEXT_TPROXY4] + k.n[NFTTEXT_TPROXY6] > 0)
		sb_add(&b, "\tchain nat_prerouting {\n"
		    "\t\ttype nat hook prerouting priority dstnat - 10; "
		    "policy accept;\n"
		    "\t\tmeta nfproto ipv4 meta l4proto tcp iifname . ip daddr "
		    "@own4 accept\n"
		    "\t\tmeta nfproto ipv6 meta l4proto tcp iifname . ip6 daddr "
		    "@own6 accept\n"
		    "\t\tmeta nfproto ipv4 meta l4proto tcp counter dnat ip to "
		    "iifname map @tproxy4\n"
		    "\t\tmeta nfproto ipv6 meta l4proto tcp counter dnat ip6 to "
		    "iifname map @tproxy6\n"
		    "\t}\n\n");
	sb_add(&b, "\tchain input {\n"
	    "\t\ttype filter hook input priority filter; policy accept;\n"
	    "\t\tiifname @links6 ip6 hoplimit 255 icmpv6 type 135-136 accept\n"
	    "\t\tiifname . ip daddr . meta l4proto . th dport @listen4 "
	    "counter accept\n"
	    "\t\tiifname . ip6 daddr . meta l4proto . th dport @listen6 "
	    "counter accept\n"
	    "\t\tiifname @links counter drop\n"
	    "\t}\n\n"
	    "\tchain forward {\n"
	    "\t\ttype filter hook forward priority filter; policy accept;\n"
	    "\t\tiifname @links counter drop\n"
	    "\t\toifname @links counter drop\n"
	    "\t}\n}\n");
	nfttext_keys_free(&k);
	if (b.bad) {
		free(b.s);
		return NULL;
	}
	return b.s;
}
