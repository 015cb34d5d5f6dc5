/* Statements as text (nft/nftstmt.h). Split from nftfmt.c, which renders
 * the matches: a statement needs no match state, only the registers a
 * nat statement reads. */
#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include <linux/netfilter.h>
#include <linux/netfilter/nf_tables.h>

#include <libnftnl/expr.h>

#include "nft/nftstmt.h"

/* 1 when snprintf's n characters fit in len, else -1 (raw notation). */
static int
fits(size_t len, int n)
{
	return n < 0 || (size_t)n >= len ? -1 : 1;
}

/* A chain name from the kernel, printable ASCII only (as nftfmt writes
 * every name it did not make). */
static void
safe_name(const char *s, char *buf, size_t len)
{
	size_t i;

	(void)snprintf(buf, len, "%s", s);
	for (i = 0; buf[i] != '\0'; i++)
		if (buf[i] < 0x20 || buf[i] >= 0x7f)
			buf[i] = '?';
}

static int
verdict(const struct nftnl_expr *e, char *buf, size_t len)
{
	int v = (int)nftnl_expr_get_u32(e, NFTNL_EXPR_IMM_VERDICT);
	const char *chain = nftnl_expr_get_str(e, NFTNL_EXPR_IMM_CHAIN);
	char safe[256];

	switch (v) {
	case NF_ACCEPT:		return fits(len, snprintf(buf, len, "accept"));
	case NF_DROP:		return fits(len, snprintf(buf, len, "drop"));
	case NFT_CONTINUE:	return fits(len, snprintf(buf, len, "continue"));
	case NFT_RETURN:	return fits(len, snprintf(buf, len, "return"));
	case NFT_JUMP:
	case NFT_GOTO:
		safe_name(chain != NULL ? chain : "?", safe, sizeof(safe));
		return fits(len, snprintf(buf, len, "%s %s",
		    v == NFT_JUMP ? "jump" : "goto", safe));
	}
	return fits(len, snprintf(buf, len, "verdict %d", v));
}

static int
reject(const struct nftnl_expr *e, char *buf, size_t len)
{
	uint32_t type = nftnl_expr_get_u32(e, NFTNL_EXPR_REJECT_TYPE);
	unsigned int code = nftnl_expr_get_u8(e, NFTNL_EXPR_REJECT_CODE);
	static const char *const icmpx[] = { "no-route", "port-unreachable",
		"host-unreachable", "admin-prohibited" };

	if (type == NFT_REJECT_TCP_RST &&
	    !nftnl_expr_is_set(e, NFTNL_EXPR_REJECT_CODE))
		return fits(len, snprintf(buf, len, "reject with tcp reset"));
	if (type == NFT_REJECT_ICMPX_UNREACH && code < 4)
		return fits(len, snprintf(buf, len, "reject with icmpx %s",
		    icmpx[code]));
	return fits(len, snprintf(buf, len, "reject type %u code %u", type,
	    code));
}

/* Data an immediate loaded into reg 1 or 2 (nat addresses and ports). */
static int
load(const struct nftnl_expr *e, struct nftstmt_regs *regs)
{
	uint32_t reg = nftnl_expr_get_u32(e, NFTNL_EXPR_IMM_DREG), n = 0;
	const void *d = nftnl_expr_get(e, NFTNL_EXPR_IMM_DATA, &n);

	if (d == NULL || (reg != NFT_REG_1 && reg != NFT_REG_2) || n == 0 ||
	    n > sizeof(regs->data[0]))
		return -1;
	memcpy(regs->data[reg - NFT_REG_1], d, n);
	regs->len[reg - NFT_REG_1] = n;
	return 0;
}

/* The 2-byte port an immediate put in reg; -1 when none did. */
static int
port_in(const struct nftstmt_regs *regs, uint32_t reg)
{
	uint16_t p;

	if ((reg != NFT_REG_1 && reg != NFT_REG_2) ||
	    regs->len[reg - NFT_REG_1] != 2)
		return -1;
	memcpy(&p, regs->data[reg - NFT_REG_1], 2);
	return ntohs(p);
}

/* redirect to :PORT, dnat ip to A:PORT, dnat ip6 to [A]:PORT: the shapes
 * nfttransp builds (min == max). -1 for anything else. */
static int
nat(const struct nftnl_expr *e, int redir, const struct nftstmt_regs *regs,
    char *buf, size_t len)
{
	char addr[INET6_ADDRSTRLEN];
	uint32_t ra, fam, alen;
	int port;

	if (redir) {
		port = port_in(regs, nftnl_expr_get_u32(e,
		    NFTNL_EXPR_REDIR_REG_PROTO_MIN));
		return port < 0 ? -1 : fits(len, snprintf(buf, len,
		    "redirect to :%d", port));
	}
	ra = nftnl_expr_get_u32(e, NFTNL_EXPR_NAT_REG_ADDR_MIN);
	fam = nftnl_expr_get_u32(e, NFTNL_EXPR_NAT_FAMILY);
	port = port_in(regs, nftnl_expr_get_u32(e,
	    NFTNL_EXPR_NAT_REG_PROTO_MIN));
	alen = fam == NFPROTO_IPV4 ? 4 : 16;
	if (nftnl_expr_get_u32(e, NFTNL_EXPR_NAT_TYPE) != NFT_NAT_DNAT ||
	    port < 0 || (fam != NFPROTO_IPV4 && fam != NFPROTO_IPV6) ||
	    (ra != NFT_REG_1 && ra != NFT_REG_2) ||
	    regs->len[ra - NFT_REG_1] != alen ||
	    inet_ntop(alen == 4 ? AF_INET : AF_INET6,
	    regs->data[ra - NFT_REG_1], addr, sizeof(addr)) == NULL)
		return -1;
	return fits(len, snprintf(buf, len, alen == 4 ?
	    "dnat ip to %s:%d" : "dnat ip6 to [%s]:%d", addr, port));
}

int
nftstmt_render(const struct nftnl_expr *e, struct nftstmt_regs *regs,
    char *buf, size_t len)
{
	const char *n = nftnl_expr_get_str(e, NFTNL_EXPR_NAME);

	if (n == NULL || buf == NULL || len == 0)
		return -1;
	buf[0] = '\0';
	if (strcmp(n, "counter") == 0) {
		if (!nftnl_expr_is_set(e, NFTNL_EXPR_CTR_PACKETS))
			return fits(len, snprintf(buf, len, "counter"));
		return fits(len, snprintf(buf, len,
		    "counter packets %llu bytes %llu",
		    (unsigned long long)nftnl_expr_get_u64(e,
		    NFTNL_EXPR_CTR_PACKETS),
		    (unsigned long long)nftnl_expr_get_u64(e,
		    NFTNL_EXPR_CTR_BYTES)));
	}
	if (strcmp(n, "immediate") == 0 &&
	    nftnl_expr_get_u32(e, NFTNL_EXPR_IMM_DREG) == NFT_REG_VERDICT &&
	    nftnl_expr_is_set(e, NFTNL_EXPR_IMM_VERDICT))
		return verdict(e, buf, len);
	if (strcmp(n, "immediate") == 0 &&
	    nftnl_expr_is_set(e, NFTNL_EXPR_IMM_DATA))
		return load(e, regs);
	if (strcmp(n, "reject") == 0)
		return reject(e, buf, len);
	if (strcmp(n, "redir") == 0 || strcmp(n, "nat") == 0)
		return nat(e, n[0] == 'r', regs, buf, len);
	return -1;
}
