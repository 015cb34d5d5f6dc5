/* The default-deny ruleset without a kernel: the batch is built into a
 * buffer, parsed back with libnftnl, and its expressions compared with the
 * ones meant. The parsed-back table then stands in for a kernel dump to
 * test verify's comparison. Hostile input has its own named tests. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <sys/socket.h>

#include <linux/netfilter.h>
#include <linux/netfilter/nf_conntrack_common.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/netfilter/nfnetlink.h>

#include <libmnl/libmnl.h>
#include <libnftnl/chain.h>
#include <libnftnl/expr.h>
#include <libnftnl/rule.h>
#include <libnftnl/table.h>

#include "nft/nftcg.h"
#include "nft/nftcmp.h"
#include "nft/nftrules.h"
#include "nft/nfttransp.h"

#include <sys/stat.h>
#include <unistd.h>

#define SEQ	1000u
#define EXPRS_MAX	24

/* The output chain's layout without an exemption: three source-routing
 * drops, two forged-source drops, four loopback DNS/DNAT refusals,
 * loopback, two ND rules (plus one per IPv6 guard), the guards, two
 * rejects. An exemption comes right after the forged-source drops. */
#define OUT_SRCROUTE	0
#define OUT_SPOOFED	3
#define OUT_EXEMPT	5	/* when there is one */
#define OUT_LO_DNS_UDP	5
#define OUT_LO_DNS_TCP	6
#define OUT_LO_DNAT	7
#define OUT_LO_DOCKER	8
#define OUT_LO		9
#define OUT_ND_LL	10
#define OUT_ND_MC	11
#define OUT_FIXED	12	/* rules before the per-guard ones */

/* Everything a test needs: the batch and its parsed-back objects. */
struct fx {
	struct nftcfg	 cfg;
	struct nftrules_batch	 b;
	char			*buf;
	struct nftnl_table	*table;		/* the last NEWTABLE */
	struct nftnl_chain_list	*chains;	/* NEWCHAINs, NEWRULEs attached */
	uint16_t		 types[NFTRULES_MAX_MSGS + 2];
	uint16_t		 flags[NFTRULES_MAX_MSGS + 2];
	size_t			 nmsg;
	char			 diff[8192];
	char			 err[256];
};

static struct fx *
fx_new(void)
{
	struct fx *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	f->buf = calloc(1, NFTRULES_BATCH_MAX);
	assert_non_null(f->buf);
	nftcfg_init(&f->cfg);
	return f;
}

static void
fx_free(struct fx *f)
{
	if (f->table != NULL)
		nftnl_table_free(f->table);
	if (f->chains != NULL)
		nftnl_chain_list_free(f->chains);
	free(f->buf);
	free(f);
}

static void
add_guard(struct fx *f, const char *g)
{
	if (nftcfg_add_guard(&f->cfg, g, f->err, sizeof(f->err)) != 0)
		fail_msg("refused %s: %s", g, f->err);
}

/* Walks the batch as the kernel would and rebuilds the objects. */
static void
parse_back(struct fx *f)
{
	const struct nlmsghdr *nlh;
	int len = (int)f->b.len;
	uint32_t seq = SEQ;

	f->chains = nftnl_chain_list_alloc();
	assert_non_null(f->chains);
	for (nlh = (const struct nlmsghdr *)f->buf; mnl_nlmsg_ok(nlh, len);
	    nlh = mnl_nlmsg_next(nlh, &len)) {
		uint16_t t = nlh->nlmsg_type;

		assert_true(f->nmsg < NFTRULES_MAX_MSGS + 2);
		assert_int_equal(nlh->nlmsg_seq, seq++);
		f->flags[f->nmsg] = nlh->nlmsg_flags;
		if (t == NFNL_MSG_BATCH_BEGIN || t == NFNL_MSG_BATCH_END) {
			const struct nfgenmsg *g = mnl_nlmsg_get_payload(nlh);

			assert_int_equal(ntohs(g->res_id), NFNL_SUBSYS_NFTABLES);
			f->types[f->nmsg++] = t;
			continue;
		}
		assert_int_equal(NFNL_SUBSYS_ID(t), NFNL_SUBSYS_NFTABLES);
		t = NFNL_MSG_TYPE(t);
		f->types[f->nmsg++] = t;
		if (t == NFT_MSG_NEWTABLE) {
			if (f->table != NULL)
				nftnl_table_free(f->table);
			f->table = nftnl_table_alloc();
			assert_int_equal(nftnl_table_nlmsg_parse(nlh, f->table), 0);
		} else if (t == NFT_MSG_NEWCHAIN) {
			struct nftnl_chain *c = nftnl_chain_alloc();

			assert_int_equal(nftnl_chain_nlmsg_parse(nlh, c), 0);
			nftnl_chain_list_add_tail(c, f->chains);
		} else if (t == NFT_MSG_NEWRULE) {
			struct nftnl_rule *r = nftnl_rule_alloc();
			struct nftnl_chain *c;

			assert_int_equal(nftnl_rule_nlmsg_parse(nlh, r), 0);
			c = nftnl_chain_list_lookup_byname(f->chains,
			    nftnl_rule_get_str(r, NFTNL_RULE_CHAIN));
			assert_non_null(c);
			nftnl_chain_rule_add_tail(r, c);
		}
	}
	assert_int_equal(len, 0);	/* nothing left over, nothing torn */
}

static void
build(struct fx *f)
{
	if (nftrules_build_apply(&f->cfg, SEQ, f->buf, NFTRULES_BATCH_MAX, &f->b,
	    f->err, sizeof(f->err)) != 0)
		fail_msg("build failed: %s", f->err);
	parse_back(f);
}

static struct nftnl_chain *
chain(struct fx *f, const char *name)
{
	struct nftnl_chain *c = nftnl_chain_list_lookup_byname(f->chains, name);

	assert_non_null(c);
	return c;
}

static struct nftnl_rule *
rule(struct fx *f, const char *chain_name, uint32_t index)
{
	struct nftnl_rule *r = nftnl_rule_lookup_byindex(chain(f, chain_name),
	    index);

	if (r == NULL)
		fail_msg("no rule %u in %s", index, chain_name);
	return r;
}

static size_t
nrules(struct fx *f, const char *chain_name)
{
	struct nftnl_rule_iter *it = nftnl_rule_iter_create(chain(f, chain_name));
	size_t n = 0;

	while (nftnl_rule_iter_next(it) != NULL)
		n++;
	nftnl_rule_iter_destroy(it);
	return n;
}

/* The expressions of a rule, in order (at most EXPRS_MAX). */
static size_t
exprs(struct nftnl_rule *r, struct nftnl_expr **v)
{
	struct nftnl_expr_iter *it = nftnl_expr_iter_create(r);
	struct nftnl_expr *e;
	size_t n = 0;

	while ((e = nftnl_expr_iter_next(it)) != NULL && n < EXPRS_MAX)
		v[n++] = e;
	nftnl_expr_iter_destroy(it);
	return n;
}

static void
expect_name(const struct nftnl_expr *e, const char *name)
{
	assert_string_equal(nftnl_expr_get_str(e, NFTNL_EXPR_NAME), name);
}

static void
expect_meta(const struct nftnl_expr *e, uint32_t key)
{
	expect_name(e, "meta");
	assert_int_equal(nftnl_expr_get_u32(e, NFTNL_EXPR_META_KEY), key);
	assert_int_equal(nftnl_expr_get_u32(e, NFTNL_EXPR_META_DREG), NFT_REG_1);
}

static void
expect_cmp(const struct nftnl_expr *e, uint32_t op, const void *data,
    uint32_t len)
{
	uint32_t got = 0;
	const void *d;

	expect_name(e, "cmp");
	assert_int_equal(nftnl_expr_get_u32(e, NFTNL_EXPR_CMP_SREG), NFT_REG_1);
	assert_int_equal(nftnl_expr_get_u32(e, NFTNL_EXPR_CMP_OP), op);
	d = nftnl_expr_get(e, NFTNL_EXPR_CMP_DATA, &got);
	assert_non_null(d);
	assert_int_equal(got, len);
	assert_memory_equal(d, data, len);
}

static void
expect_payload(const struct nftnl_expr *e, uint32_t base, uint32_t off,
    uint32_t len)
{
	expect_name(e, "payload");
	assert_int_equal(nftnl_expr_get_u32(e, NFTNL_EXPR_PAYLOAD_BASE), base);
	assert_int_equal(nftnl_expr_get_u32(e, NFTNL_EXPR_PAYLOAD_OFFSET), off);
	assert_int_equal(nftnl_expr_get_u32(e, NFTNL_EXPR_PAYLOAD_LEN), len);
	assert_int_equal(nftnl_expr_get_u32(e, NFTNL_EXPR_PAYLOAD_DREG),
	    NFT_REG_1);
}

static void
expect_verdict(const struct nftnl_expr *e, int verdict)
{
	expect_name(e, "immediate");
	assert_int_equal(nftnl_expr_get_u32(e, NFTNL_EXPR_IMM_DREG),
	    NFT_REG_VERDICT);
	assert_int_equal((int)nftnl_expr_get_u32(e, NFTNL_EXPR_IMM_VERDICT),
	    verdict);
}

static void
expect_refused(const char *guard, const char *why)
{
	struct nftcfg cfg;
	char err[256];
	size_t i;

	nftcfg_init(&cfg);
	memset(err, 0, sizeof(err));
	if (nftcfg_add_guard(&cfg, guard, err, sizeof(err)) != -1)
		fail_msg("accepted guard \"%s\"", guard);
	assert_int_equal(cfg.nguards, 0);
	for (i = 0; err[i] != '\0'; i++)
		assert_true(err[i] >= 0x20 && err[i] < 0x7f);
	if (why != NULL && strstr(err, why) == NULL)
		fail_msg("reason \"%s\" for \"%s\" lacks \"%s\"", err, guard, why);
}

static int
compare(struct fx *f)
{
	return nftcmp_compare(&f->cfg, f->table, f->chains, f->diff,
	    sizeof(f->diff), f->err, sizeof(f->err));
}

static void
expect_diff(struct fx *f, const char *line)
{
	int rc = compare(f);

	if (rc != 1)
		fail_msg("compare returned %d, expected 1 (diff: %s)", rc, f->diff);
	if (strstr(f->diff, line) == NULL)
		fail_msg("diff \"%s\" lacks \"%s\"", f->diff, line);
}

/* ---- the batch ---------------------------------------------------------- */

static void
test_batch_is_one_transaction_replacing_the_table(void **state)
{
	struct fx *f = fx_new();
	size_t i;

	(void)state;
	add_guard(f, "10.200.0.1:3128");
	build(f);
	assert_int_equal(f->types[0], NFNL_MSG_BATCH_BEGIN);
	assert_int_equal(f->types[f->nmsg - 1], NFNL_MSG_BATCH_END);
	/* add; delete; add: replaces an existing table in the same
	 * transaction and also works when there is none. */
	assert_int_equal(f->types[1], NFT_MSG_NEWTABLE);
	assert_int_equal(f->types[2], NFT_MSG_DELTABLE);
	assert_int_equal(f->types[3], NFT_MSG_NEWTABLE);
	assert_int_equal(f->b.seq_first, SEQ);
	assert_int_equal(f->b.seq_last, SEQ + f->nmsg - 1);
	assert_int_equal(f->b.nmsgs, f->nmsg - 2);
	/* Every inner message asks for an ACK; begin and end do not. */
	for (i = 1; i + 1 < f->nmsg; i++)
		assert_true(f->flags[i] & NLM_F_ACK);
	assert_false(f->flags[0] & NLM_F_ACK);
	assert_false(f->flags[f->nmsg - 1] & NLM_F_ACK);
	assert_string_equal(nftnl_table_get_str(f->table, NFTNL_TABLE_NAME),
	    "egress_guard");
	assert_int_equal(nftnl_table_get_u32(f->table, NFTNL_TABLE_FLAGS), 0);
	fx_free(f);
}

static void
test_chains_are_base_chains_with_policy_drop(void **state)
{
	static const struct {
		const char	*name;
		uint32_t	 hook;
	} want[] = {
		{ "output", NF_INET_LOCAL_OUT },
		{ "input", NF_INET_LOCAL_IN },
		{ "forward", NF_INET_FORWARD },
	};
	struct fx *f = fx_new();
	size_t i;

	(void)state;
	add_guard(f, "10.200.0.1:3128");
	build(f);
	for (i = 0; i < 3; i++) {
		struct nftnl_chain *c = chain(f, want[i].name);

		assert_string_equal(nftnl_chain_get_str(c, NFTNL_CHAIN_TYPE),
		    "filter");
		assert_int_equal(nftnl_chain_get_u32(c, NFTNL_CHAIN_HOOKNUM),
		    want[i].hook);
		assert_int_equal(nftnl_chain_get_s32(c, NFTNL_CHAIN_PRIO), 0);
		assert_int_equal(nftnl_chain_get_u32(c, NFTNL_CHAIN_POLICY),
		    NF_DROP);
	}
	assert_int_equal(nrules(f, "forward"), 0);
	fx_free(f);
}

static void
test_output_accepts_loopback_first(void **state)
{
	struct fx *f = fx_new();
	struct nftnl_expr *e[16];
	uint32_t lo = 1;

	(void)state;
	add_guard(f, "10.200.0.1:3128");
	build(f);
	assert_int_equal(exprs(rule(f, "output", OUT_LO), e), 3);
	expect_meta(e[0], NFT_META_OIF);
	expect_cmp(e[1], NFT_CMP_EQ, &lo, 4);
	expect_verdict(e[2], NF_ACCEPT);
	fx_free(f);
}

static void
expect_ct(const struct nftnl_expr *e, uint32_t key, int dir)
{
	expect_name(e, "ct");
	assert_int_equal(nftnl_expr_get_u32(e, NFTNL_EXPR_CT_KEY), key);
	assert_int_equal(nftnl_expr_get_u32(e, NFTNL_EXPR_CT_DREG), NFT_REG_1);
	assert_int_equal(nftnl_expr_is_set(e, NFTNL_EXPR_CT_DIR), dir >= 0);
	if (dir >= 0)
		assert_int_equal(nftnl_expr_get_u8(e, NFTNL_EXPR_CT_DIR), dir);
}

/* Docker DNATs 127.0.0.11:53 to its resolver on a random port, before the
 * filter hook: the refusal matches the conntrack original destination
 * port, in the original direction only (replies to the exempt guard pass),
 * ahead of the loopback accept. */
static void
test_loopback_dns_refused_by_conntrack_original_port(void **state)
{
	struct fx *f = fx_new();
	struct nftnl_expr *e[16];
	uint32_t lo = 1;
	uint8_t orig = 0, udp = IPPROTO_UDP, tcp = IPPROTO_TCP;
	uint16_t dns = htons(53);
	uint32_t p;

	(void)state;
	add_guard(f, "127.0.0.1:3128");
	build(f);
	for (p = OUT_LO_DNS_UDP; p <= OUT_LO_DNS_TCP; p++) {
		assert_int_equal(exprs(rule(f, "output", p), e), 10);
		expect_meta(e[0], NFT_META_OIF);
		expect_cmp(e[1], NFT_CMP_EQ, &lo, 4);
		expect_ct(e[2], NFT_CT_DIRECTION, -1);
		expect_cmp(e[3], NFT_CMP_EQ, &orig, 1);
		expect_meta(e[4], NFT_META_L4PROTO);
		expect_cmp(e[5], NFT_CMP_EQ, p == OUT_LO_DNS_UDP ? &udp : &tcp,
		    1);
		expect_ct(e[6], NFT_CT_PROTO_DST, 0);
		expect_cmp(e[7], NFT_CMP_EQ, &dns, 2);
		expect_name(e[8], "counter");
		expect_name(e[9], "reject");
		assert_int_equal(nftnl_expr_get_u32(e[9],
		    NFTNL_EXPR_REJECT_TYPE), p == OUT_LO_DNS_UDP ?
		    NFT_REJECT_ICMPX_UNREACH : NFT_REJECT_TCP_RST);
	}
	assert_true(OUT_LO_DNS_UDP < OUT_LO && OUT_LO_DNS_TCP < OUT_LO);
	fx_free(f);
}

static void
test_loopback_dnat_of_any_kind_refused(void **state)
{
	struct fx *f = fx_new();
	struct nftnl_expr *e[16];
	uint32_t lo = 1, zero = 0, mask = 0, got = 0;
	uint8_t orig = 0;
	const void *m;

	(void)state;
	add_guard(f, "127.0.0.1:3128");
	build(f);
	assert_int_equal(exprs(rule(f, "output", OUT_LO_DNAT), e), 9);
	expect_meta(e[0], NFT_META_OIF);
	expect_cmp(e[1], NFT_CMP_EQ, &lo, 4);
	expect_ct(e[2], NFT_CT_DIRECTION, -1);
	expect_cmp(e[3], NFT_CMP_EQ, &orig, 1);
	expect_ct(e[4], NFT_CT_STATUS, -1);
	expect_name(e[5], "bitwise");
	m = nftnl_expr_get(e[5], NFTNL_EXPR_BITWISE_MASK, &got);
	assert_int_equal(got, 4);
	memcpy(&mask, m, 4);
	assert_int_equal(mask, 0x20);	/* IPS_DST_NAT */
	expect_cmp(e[6], NFT_CMP_NEQ, &zero, 4);
	expect_name(e[7], "counter");
	expect_name(e[8], "reject");
	fx_free(f);
}

/* Hostile: a workload binds a source it does not own (IPV6_FREEBIND, no
 * capability needed; a raw socket for IPv4) and connects to the guard's
 * port; the guard host answers that address over its own way out. */
static void
test_forged_source_dropped_before_exemption(void **state)
{
	struct fx *f = fx_new();
	struct nftnl_expr *e[16];
	static const unsigned char any6[16];
	uint32_t related = 4, local = 2;	/* NF_CT_STATE_BIT, RTN_LOCAL */
	uint8_t v6 = NFPROTO_IPV6, v4 = NFPROTO_IPV4;
	int i;

	(void)state;
	add_guard(f, "127.0.0.1:3128");
	assert_int_equal(nftcfg_set_exempt_uid(&f->cfg, "65534", f->err,
	    sizeof(f->err)), 0);
	build(f);
	for (i = 0; i < 2; i++) {
		int n = exprs(rule(f, "output", OUT_SPOOFED + i), e), k = 2;

		assert_int_equal(n, i == 0 ? 10 : 8);
		expect_meta(e[0], NFT_META_NFPROTO);
		expect_cmp(e[1], NFT_CMP_EQ, i == 0 ? &v6 : &v4, 1);
		if (i == 0) {	/* ip6 saddr != :: */
			expect_payload(e[2], NFT_PAYLOAD_NETWORK_HEADER, 8, 16);
			expect_cmp(e[3], NFT_CMP_NEQ, any6, 16);
			k = 4;
		}
		expect_ct(e[k], NFT_CT_STATE, -1);
		expect_cmp(e[k + 1], NFT_CMP_NEQ, &related, 4);
		expect_name(e[k + 2], "fib");
		assert_int_equal(nftnl_expr_get_u32(e[k + 2],
		    NFTNL_EXPR_FIB_RESULT), NFT_FIB_RESULT_ADDRTYPE);
		assert_int_equal(nftnl_expr_get_u32(e[k + 2],
		    NFTNL_EXPR_FIB_FLAGS), NFTA_FIB_F_SADDR);
		expect_cmp(e[k + 3], NFT_CMP_NEQ, &local, 4);
		expect_name(e[k + 4], "counter");
		expect_verdict(e[k + 5], NF_DROP);
	}
	/* the exempt guard's own packets are checked too */
	assert_int_equal(exprs(rule(f, "output", OUT_EXEMPT), e), 4);
	expect_meta(e[0], NFT_META_SKUID);
	fx_free(f);
}

/* Hostile: Docker's embedded resolver answers on a random port that any
 * uid reads in /proc/net/udp; asked there directly, the query is neither
 * port 53 nor redirected. */
static void
test_docker_resolver_address_refused_on_any_port(void **state)
{
	struct fx *f = fx_new();
	struct nftnl_expr *e[16];
	static const unsigned char docker[4] = { 127, 0, 0, 11 };
	uint32_t lo = 1;
	uint8_t orig = 0, v4 = NFPROTO_IPV4;

	(void)state;
	add_guard(f, "127.0.0.1:3128");
	build(f);
	assert_int_equal(exprs(rule(f, "output", OUT_LO_DOCKER), e), 10);
	expect_meta(e[0], NFT_META_OIF);
	expect_cmp(e[1], NFT_CMP_EQ, &lo, 4);
	expect_ct(e[2], NFT_CT_DIRECTION, -1);
	expect_cmp(e[3], NFT_CMP_EQ, &orig, 1);
	expect_meta(e[4], NFT_META_NFPROTO);
	expect_cmp(e[5], NFT_CMP_EQ, &v4, 1);
	expect_payload(e[6], NFT_PAYLOAD_NETWORK_HEADER, 16, 4);
	expect_cmp(e[7], NFT_CMP_EQ, docker, 4);
	expect_name(e[8], "counter");
	expect_name(e[9], "reject");
	assert_true(OUT_LO_DOCKER < OUT_LO);
	fx_free(f);
}

static void
expect_exthdr(const struct nftnl_expr *e, uint32_t op, uint8_t type)
{
	expect_name(e, "exthdr");
	assert_int_equal(nftnl_expr_get_u32(e, NFTNL_EXPR_EXTHDR_OP), op);
	assert_int_equal(nftnl_expr_get_u8(e, NFTNL_EXPR_EXTHDR_TYPE), type);
	assert_int_equal(nftnl_expr_get_u32(e, NFTNL_EXPR_EXTHDR_FLAGS),
	    NFT_EXTHDR_F_PRESENT);
	assert_int_equal(nftnl_expr_get_u32(e, NFTNL_EXPR_EXTHDR_DREG),
	    NFT_REG_1);
}

/* Routing headers (any type) and IPv4 LSRR/SSRR are dropped first, in
 * output and input, before any accept (the exempt guard's too). */
static void
test_source_routed_packets_dropped_before_any_accept(void **state)
{
	static const char *const chains[] = { "output", "input" };
	struct fx *f = fx_new();
	struct nftnl_expr *e[16];
	uint8_t v4 = NFPROTO_IPV4, v6 = NFPROTO_IPV6;
	uint32_t one = 1;
	size_t i;

	(void)state;
	add_guard(f, "127.0.0.1:3128");
	assert_int_equal(nftcfg_set_exempt_uid(&f->cfg, "65534", f->err,
	    sizeof(f->err)), 0);
	build(f);
	for (i = 0; i < 2; i++) {
		assert_int_equal(exprs(rule(f, chains[i], 0), e), 6);
		expect_cmp(e[1], NFT_CMP_EQ, &v6, 1);
		expect_exthdr(e[2], NFT_EXTHDR_OP_IPV6, IPPROTO_ROUTING);
		expect_cmp(e[3], NFT_CMP_EQ, &one, 4);
		expect_verdict(e[5], NF_DROP);
		assert_int_equal(exprs(rule(f, chains[i], 1), e), 6);
		expect_cmp(e[1], NFT_CMP_EQ, &v4, 1);
		expect_exthdr(e[2], NFT_EXTHDR_OP_IPV4, 131);	/* LSRR */
		expect_verdict(e[5], NF_DROP);
		assert_int_equal(exprs(rule(f, chains[i], 2), e), 6);
		expect_exthdr(e[2], NFT_EXTHDR_OP_IPV4, 137);	/* SSRR */
		expect_verdict(e[5], NF_DROP);
	}
	fx_free(f);
}

/* ND only with hop limit 255, types 135-136, towards fe80::/10, ff02::/16
 * or an IPv6 guard; always present (the kernel's own solicitations carry
 * no socket, so no exemption covers them). */
static void
test_nd_only_on_link_with_hop_limit_255(void **state)
{
	struct fx *f = fx_new();
	struct nftnl_expr *e[16];
	uint8_t v6 = NFPROTO_IPV6, hop = 255, lo = 135, hi = 136;
	uint8_t icmp6 = IPPROTO_ICMPV6, ll[16] = { 0xfe, 0x80 };
	uint8_t llmask[16] = { 0xff, 0xc0 }, mc[2] = { 0xff, 0x02 };
	uint8_t g[16];
	uint32_t got = 0;

	(void)state;
	assert_int_equal(inet_pton(AF_INET6, "fd00:200::1", g), 1);
	add_guard(f, "127.0.0.1:3128");
	build(f);
	assert_int_equal(exprs(rule(f, "output", OUT_ND_LL), e), 13);
	expect_cmp(e[1], NFT_CMP_EQ, &v6, 1);
	expect_payload(e[2], NFT_PAYLOAD_NETWORK_HEADER, 24, 16);
	expect_name(e[3], "bitwise");
	assert_memory_equal(nftnl_expr_get(e[3], NFTNL_EXPR_BITWISE_MASK,
	    &got), llmask, 16);
	expect_cmp(e[4], NFT_CMP_EQ, ll, 16);
	expect_payload(e[5], NFT_PAYLOAD_NETWORK_HEADER, 7, 1);
	expect_cmp(e[6], NFT_CMP_EQ, &hop, 1);
	expect_cmp(e[8], NFT_CMP_EQ, &icmp6, 1);
	expect_payload(e[9], NFT_PAYLOAD_TRANSPORT_HEADER, 0, 1);
	expect_cmp(e[10], NFT_CMP_GTE, &lo, 1);
	expect_cmp(e[11], NFT_CMP_LTE, &hi, 1);
	expect_verdict(e[12], NF_ACCEPT);
	assert_int_equal(exprs(rule(f, "output", OUT_ND_MC), e), 12);
	expect_payload(e[2], NFT_PAYLOAD_NETWORK_HEADER, 24, 2);
	expect_cmp(e[3], NFT_CMP_EQ, mc, 2);
	expect_cmp(e[5], NFT_CMP_EQ, &hop, 1);
	/* IPv4-only guard: nothing else takes ND anywhere. */
	assert_int_equal(nrules(f, "output"), OUT_FIXED + 1 + 2);
	assert_int_equal(exprs(rule(f, "input", 5), e), 10);
	expect_payload(e[2], NFT_PAYLOAD_NETWORK_HEADER, 7, 1);
	expect_cmp(e[3], NFT_CMP_EQ, &hop, 1);
	expect_cmp(e[7], NFT_CMP_GTE, &lo, 1);
	fx_free(f);
	/* An IPv6 guard adds exactly one, towards its own address. */
	f = fx_new();
	add_guard(f, "[fd00:200::1]:3128");
	add_guard(f, "[fd00:200::1]:3129");
	build(f);
	assert_int_equal(nrules(f, "output"), OUT_FIXED + 1 + 2 + 2);
	assert_int_equal(exprs(rule(f, "output", OUT_FIXED), e), 12);
	expect_payload(e[2], NFT_PAYLOAD_NETWORK_HEADER, 24, 16);
	expect_cmp(e[3], NFT_CMP_EQ, g, 16);
	expect_cmp(e[5], NFT_CMP_EQ, &hop, 1);
	fx_free(f);
}

/* The cgroup exemption replaces the uid one: no uid change leaves it. */
static void
test_exempt_cgroup_rule_matches_socket_cgroupv2(void **state)
{
	struct fx *f = fx_new();
	struct nftnl_expr *e[16];
	uint64_t id = 0x123456789aULL;
	size_t n;

	(void)state;
	add_guard(f, "127.0.0.1:3128");
	assert_int_equal(nftcfg_set_exempt_uid(&f->cfg, "65534", f->err,
	    sizeof(f->err)), 0);
	assert_int_equal(nftcfg_set_exempt_cgroup(&f->cfg, id, 2, f->err,
	    sizeof(f->err)), 0);
	build(f);
	assert_int_equal(exprs(rule(f, "output", OUT_EXEMPT), e), 4);
	expect_name(e[0], "socket");
	assert_int_equal(nftnl_expr_get_u32(e[0], NFTNL_EXPR_SOCKET_KEY),
	    NFT_SOCKET_CGROUPV2);
	assert_int_equal(nftnl_expr_get_u32(e[0], NFTNL_EXPR_SOCKET_LEVEL), 2);
	expect_cmp(e[1], NFT_CMP_EQ, &id, 8);
	expect_name(e[2], "counter");
	expect_verdict(e[3], NF_ACCEPT);
	/* one exemption, and no skuid rule anywhere */
	n = nrules(f, "output");
	assert_int_equal(n, OUT_FIXED + 1 + 1 + 2);
	while (n-- > 0) {
		size_t k = exprs(rule(f, "output", (uint32_t)n), e);

		if (k > 0 && strcmp(nftnl_expr_get_str(e[0], NFTNL_EXPR_NAME),
		    "meta") == 0)
			assert_int_not_equal(nftnl_expr_get_u32(e[0],
			    NFTNL_EXPR_META_KEY), NFT_META_SKUID);
	}
	assert_int_equal(compare(f), 0);
	fx_free(f);
}

static void
test_refuses_root_cgroup_exemption(void **state)
{
	struct nftcfg cfg;
	char err[256];

	(void)state;
	nftcfg_init(&cfg);
	assert_int_equal(nftcfg_set_exempt_cgroup(&cfg, 1, 0, err,
	    sizeof(err)), -1);
	assert_non_null(strstr(err, "root cgroup"));
	assert_int_equal(nftcfg_set_exempt_cgroup(&cfg, 0, 1, err,
	    sizeof(err)), -1);
	assert_int_equal(nftcfg_set_exempt_cgroup(&cfg, 7,
	    NFTCFG_CGROUP_LEVEL_MAX + 1, err, sizeof(err)), -1);
	assert_int_equal(cfg.has_exempt_cgroup, 0);
}

static void
test_ipv4_guard_rule_matches_daddr_and_dport(void **state)
{
	struct fx *f = fx_new();
	struct nftnl_expr *e[16];
	uint8_t v4 = NFPROTO_IPV4, tcp = IPPROTO_TCP;
	uint8_t addr[4] = { 10, 200, 0, 1 };
	uint16_t port = htons(3128);

	(void)state;
	add_guard(f, "10.200.0.1:3128");
	build(f);
	/* the fixed rules, the guard, tcp reset, icmpx */
	assert_int_equal(nrules(f, "output"), OUT_FIXED + 3);
	assert_int_equal(exprs(rule(f, "output", OUT_FIXED), e), 10);
	expect_meta(e[0], NFT_META_NFPROTO);
	expect_cmp(e[1], NFT_CMP_EQ, &v4, 1);
	expect_payload(e[2], NFT_PAYLOAD_NETWORK_HEADER, 16, 4);
	expect_cmp(e[3], NFT_CMP_EQ, addr, 4);
	expect_meta(e[4], NFT_META_L4PROTO);
	expect_cmp(e[5], NFT_CMP_EQ, &tcp, 1);
	expect_payload(e[6], NFT_PAYLOAD_TRANSPORT_HEADER, 2, 2);
	expect_cmp(e[7], NFT_CMP_EQ, &port, 2);
	expect_name(e[8], "counter");
	expect_verdict(e[9], NF_ACCEPT);
	fx_free(f);
}

static void
test_ipv6_guard_rule_matches_ip6_daddr_and_dport(void **state)
{
	struct fx *f = fx_new();
	struct nftnl_expr *e[16];
	uint8_t v6 = NFPROTO_IPV6, tcp = IPPROTO_TCP;
	uint8_t addr[16];
	uint16_t port = htons(8443);

	(void)state;
	assert_int_equal(inet_pton(AF_INET6, "fd00:200::1", addr), 1);
	add_guard(f, "[fd00:200::1]:8443");
	build(f);
	/* the fixed rules, ND to the guard, the guard, tcp reset, icmpx */
	assert_int_equal(nrules(f, "output"), OUT_FIXED + 4);
	assert_int_equal(exprs(rule(f, "output", OUT_FIXED + 1), e), 10);
	expect_meta(e[0], NFT_META_NFPROTO);
	expect_cmp(e[1], NFT_CMP_EQ, &v6, 1);
	expect_payload(e[2], NFT_PAYLOAD_NETWORK_HEADER, 24, 16);
	expect_cmp(e[3], NFT_CMP_EQ, addr, 16);
	expect_meta(e[4], NFT_META_L4PROTO);
	expect_cmp(e[5], NFT_CMP_EQ, &tcp, 1);
	expect_payload(e[6], NFT_PAYLOAD_TRANSPORT_HEADER, 2, 2);
	expect_cmp(e[7], NFT_CMP_EQ, &port, 2);
	expect_name(e[8], "counter");
	expect_verdict(e[9], NF_ACCEPT);
	assert_int_equal(nrules(f, "input"), 6);
	fx_free(f);
}

static void
test_reject_rules_reset_tcp_and_prohibit_the_rest(void **state)
{
	struct fx *f = fx_new();
	struct nftnl_expr *e[16];
	uint8_t tcp = IPPROTO_TCP;
	size_t n;

	(void)state;
	add_guard(f, "10.200.0.1:3128");
	build(f);
	n = nrules(f, "output");
	assert_int_equal(exprs(rule(f, "output", (uint32_t)n - 2), e), 4);
	expect_meta(e[0], NFT_META_L4PROTO);
	expect_cmp(e[1], NFT_CMP_EQ, &tcp, 1);
	expect_name(e[2], "counter");
	expect_name(e[3], "reject");
	assert_int_equal(nftnl_expr_get_u32(e[3], NFTNL_EXPR_REJECT_TYPE),
	    NFT_REJECT_TCP_RST);
	assert_false(nftnl_expr_is_set(e[3], NFTNL_EXPR_REJECT_CODE));
	assert_int_equal(exprs(rule(f, "output", (uint32_t)n - 1), e), 2);
	expect_name(e[0], "counter");
	expect_name(e[1], "reject");
	assert_int_equal(nftnl_expr_get_u32(e[1], NFTNL_EXPR_REJECT_TYPE),
	    NFT_REJECT_ICMPX_UNREACH);
	assert_int_equal(nftnl_expr_get_u8(e[1], NFTNL_EXPR_REJECT_CODE),
	    NFT_REJECT_ICMPX_ADMIN_PROHIBITED);
	fx_free(f);
}

static void
test_exempt_uid_rule_matches_skuid(void **state)
{
	struct fx *f = fx_new();
	struct nftnl_expr *e[16];
	uint32_t uid = 65534;

	(void)state;
	add_guard(f, "127.0.0.1:3128");
	assert_int_equal(nftcfg_set_exempt_uid(&f->cfg, "65534", f->err,
	    sizeof(f->err)), 0);
	build(f);
	/* After the forged-source drops, before the loopback refusals. */
	assert_int_equal(nrules(f, "output"), OUT_FIXED + 1 + 1 + 2);
	assert_int_equal(exprs(rule(f, "output", OUT_EXEMPT), e), 4);
	expect_meta(e[0], NFT_META_SKUID);
	expect_cmp(e[1], NFT_CMP_EQ, &uid, 4);
	expect_name(e[2], "counter");
	expect_verdict(e[3], NF_ACCEPT);
	fx_free(f);
}

static void
test_input_accepts_loopback_and_established_only(void **state)
{
	struct fx *f = fx_new();
	struct nftnl_expr *e[16];
	uint32_t lo = 1, zero = 0, mask, got = 0;
	const void *m;

	(void)state;
	add_guard(f, "10.200.0.1:3128");
	build(f);
	/* source-routing drops, loopback, replies, ND */
	assert_int_equal(nrules(f, "input"), 6);
	assert_int_equal(exprs(rule(f, "input", 3), e), 3);
	expect_meta(e[0], NFT_META_IIF);
	expect_cmp(e[1], NFT_CMP_EQ, &lo, 4);
	assert_int_equal(exprs(rule(f, "input", 4), e), 4);
	expect_name(e[0], "ct");
	assert_int_equal(nftnl_expr_get_u32(e[0], NFTNL_EXPR_CT_KEY),
	    NFT_CT_STATE);
	expect_name(e[1], "bitwise");
	m = nftnl_expr_get(e[1], NFTNL_EXPR_BITWISE_MASK, &got);
	assert_int_equal(got, 4);
	memcpy(&mask, m, 4);
	assert_int_equal(mask, 2 | 4);	/* established | related */
	expect_cmp(e[2], NFT_CMP_NEQ, &zero, 4);
	expect_verdict(e[3], NF_ACCEPT);
	fx_free(f);
}

static void
test_guard_order_does_not_change_the_batch(void **state)
{
	struct fx *a = fx_new(), *b = fx_new();

	(void)state;
	add_guard(a, "10.200.0.1:3128");
	add_guard(a, "[fd00::1]:3128");
	add_guard(a, "10.0.0.1:80");
	add_guard(b, "[fd00::1]:3128");
	add_guard(b, "10.0.0.1:80");
	add_guard(b, "10.200.0.1:3128");
	build(a);
	build(b);
	assert_int_equal(a->b.len, b->b.len);
	assert_memory_equal(a->buf, b->buf, a->b.len);
	fx_free(a);
	fx_free(b);
}

static void
test_batch_names_each_message(void **state)
{
	struct fx *f = fx_new();

	(void)state;
	add_guard(f, "10.200.0.1:3128");
	build(f);
	assert_string_equal(nftrules_batch_what(&f->b, SEQ), "the batch as a whole");
	assert_string_equal(nftrules_batch_what(&f->b, SEQ + 4), "chain output");
	assert_string_equal(nftrules_batch_what(&f->b, SEQ + 7),
	    "output rule #1 (exthdr rt exists counter drop)");
	assert_string_equal(nftrules_batch_what(&f->b, SEQ + 7 + OUT_LO_DNAT),
	    "output rule #8 (oif \"lo\" ct direction original ct status dnat "
	    "counter reject with icmpx admin-prohibited)");
	assert_string_equal(nftrules_batch_what(&f->b, SEQ + 7 + OUT_FIXED),
	    "output rule #13 (ip daddr 10.200.0.1 tcp dport 3128 counter accept)");
	assert_string_equal(nftrules_batch_what(&f->b, SEQ + 500),
	    "unknown message");
	fx_free(f);
}

static void
test_largest_batch_fits_the_documented_buffer(void **state)
{
	struct fx *f = fx_new();
	char g[64];
	int i;

	(void)state;
	for (i = 0; i < NFTCFG_MAX_GUARDS / 2; i++) {
		snprintf(g, sizeof(g), "10.0.0.%d:3128", i + 1);
		add_guard(f, g);
		snprintf(g, sizeof(g), "[fd00:ffff:ffff:ffff:ffff:ffff:ffff:%x]:65535",
		    i + 1);
		add_guard(f, g);
	}
	assert_int_equal(nftcfg_set_exempt_uid(&f->cfg, "4294967294", f->err,
	    sizeof(f->err)), 0);
	build(f);
	assert_true(f->b.len <= NFTRULES_BATCH_MAX);
	assert_true(f->b.nmsgs <= NFTRULES_MAX_MSGS);
	assert_int_equal(nrules(f, "output"), OUT_FIXED + 1 + 32 + 64 + 2);
	assert_int_equal(compare(f), 0);
	fx_free(f);
}

static void
test_refuses_batch_buffer_too_small(void **state)
{
	struct nftcfg cfg;
	struct nftrules_batch *b = malloc(sizeof(*b));
	size_t size = NFTRULES_MSG_MAX + 100, i;
	char *buf = malloc(size + 4096), err[256];

	(void)state;
	assert_non_null(b);
	assert_non_null(buf);
	nftcfg_init(&cfg);
	assert_int_equal(nftcfg_add_guard(&cfg, "10.0.0.1:80", err,
	    sizeof(err)), 0);
	memset(buf, 0xa5, size + 4096);
	/* Room for the first messages, not for the whole batch: every
	 * message must find NFTRULES_MSG_MAX free before it is written. */
	assert_int_equal(nftrules_build_apply(&cfg, SEQ, buf, size, b, err,
	    sizeof(err)), -1);
	assert_non_null(strstr(err, "too small"));
	assert_int_equal(b->len, 0);
	/* Nothing was written past the size given. */
	for (i = size; i < size + 4096; i++)
		assert_int_equal((unsigned char)buf[i], 0xa5);
	assert_int_equal(nftrules_build_apply(&cfg, SEQ, buf, 10, b, err,
	    sizeof(err)), -1);
	free(buf);
	free(b);
}

static void
test_refuses_config_without_guard(void **state)
{
	struct nftcfg cfg;
	struct nftrules_batch *b = malloc(sizeof(*b));
	char *buf = malloc(NFTRULES_BATCH_MAX), err[256];

	(void)state;
	nftcfg_init(&cfg);
	assert_int_equal(nftrules_build_apply(&cfg, SEQ, buf,
	    NFTRULES_BATCH_MAX, b, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "guard"));
	free(buf);
	free(b);
}

static void
test_remove_batch_deletes_the_table_only(void **state)
{
	struct nftrules_batch *b = malloc(sizeof(*b));
	char buf[4 * NFTRULES_MSG_MAX], err[256];
	const struct nlmsghdr *nlh;
	struct nftnl_table *t;
	int len, n = 0;

	(void)state;
	assert_int_equal(nftrules_build_remove(SEQ, buf, sizeof(buf), b, err,
	    sizeof(err)), 0);
	len = (int)b->len;
	for (nlh = (const struct nlmsghdr *)buf; mnl_nlmsg_ok(nlh, len);
	    nlh = mnl_nlmsg_next(nlh, &len), n++) {
		if (n == 0)
			assert_int_equal(nlh->nlmsg_type, NFNL_MSG_BATCH_BEGIN);
		if (n == 2)
			assert_int_equal(nlh->nlmsg_type, NFNL_MSG_BATCH_END);
		if (n != 1)
			continue;
		assert_int_equal(NFNL_MSG_TYPE(nlh->nlmsg_type), NFT_MSG_DELTABLE);
		assert_true(nlh->nlmsg_flags & NLM_F_ACK);
		t = nftnl_table_alloc();
		assert_int_equal(nftnl_table_nlmsg_parse(nlh, t), 0);
		assert_string_equal(nftnl_table_get_str(t, NFTNL_TABLE_NAME),
		    "egress_guard");
		nftnl_table_free(t);
	}
	assert_int_equal(n, 3);
	assert_int_equal(b->seq_last, SEQ + 2);
	free(b);
}

/* ---- hostile and bad input ---------------------------------------------- */

static void
test_refuses_bad_guard_address(void **state)
{
	(void)state;
	expect_refused("10.0.0.999:80", "dotted quad");
	expect_refused("010.0.0.1:80", "dotted quad");
	expect_refused("127.1:80", "dotted quad");
	expect_refused("2130706433:80", "dotted quad");
	expect_refused("10.0.0.1", "port");
	expect_refused("10.0.0.1:", "port");
	expect_refused(":80", NULL);
	expect_refused("", NULL);
	expect_refused("10.0.0.1:80 ", NULL);
	expect_refused("10.0.0.1:80x", NULL);
	expect_refused("10.0.0.1:80\n", NULL);
	expect_refused("user@10.0.0.1:80", NULL);
	expect_refused("guard.example:3128", "host name");
}

static void
test_refuses_port_zero(void **state)
{
	(void)state;
	expect_refused("10.0.0.1:0", "port");
	expect_refused("10.0.0.1:65536", "port");
	expect_refused("10.0.0.1:080", "port");
	expect_refused("10.0.0.1:-1", NULL);
	expect_refused("10.0.0.1:+80", NULL);
}

static void
test_refuses_addresses_no_guard_can_have(void **state)
{
	(void)state;
	expect_refused("0.0.0.0:3128", "not a destination");
	expect_refused("224.0.0.1:3128", "multicast");
	expect_refused("255.255.255.255:3128", "broadcast");
	expect_refused("[::]:3128", "not a destination");
	expect_refused("[ff02::1]:3128", "multicast");
	expect_refused("[::ffff:a00:1]:3128", "IPv4-mapped");
}

static void
test_refuses_ipv6_guard_without_brackets_or_with_zone(void **state)
{
	(void)state;
	expect_refused("fd00::1:3128", "brackets");
	expect_refused("[fd00::1%eth0]:3128", "zone");
	expect_refused("[fd00::1]", "port");
	expect_refused("[fd00::1]3128", NULL);
	expect_refused("[::ffff:10.0.0.1]:3128", NULL);
}

static void
test_accepts_ipv6_guard(void **state)
{
	struct nftcfg cfg;
	char err[256], out[64];
	uint8_t addr[16];

	(void)state;
	nftcfg_init(&cfg);
	assert_int_equal(nftcfg_add_guard(&cfg, "[2001:DB8::1]:443", err,
	    sizeof(err)), 0);
	assert_int_equal(cfg.guards[0].family, AF_INET6);
	assert_int_equal(inet_pton(AF_INET6, "2001:db8::1", addr), 1);
	assert_memory_equal(cfg.guards[0].addr, addr, 16);
	assert_int_equal(cfg.guards[0].port, 443);
	assert_true(nftcfg_format_addr(&cfg.guards[0], out, sizeof(out)) > 0);
	assert_string_equal(out, "[2001:db8::1]:443");
}

static void
test_refuses_too_many_guards(void **state)
{
	struct nftcfg cfg;
	char err[256], g[32];
	int i;

	(void)state;
	nftcfg_init(&cfg);
	for (i = 0; i < NFTCFG_MAX_GUARDS; i++) {
		snprintf(g, sizeof(g), "10.0.%d.%d:3128", i / 250, i % 250 + 1);
		assert_int_equal(nftcfg_add_guard(&cfg, g, err, sizeof(err)), 0);
	}
	assert_int_equal(nftcfg_add_guard(&cfg, "10.9.9.9:3128", err,
	    sizeof(err)), -1);
	assert_non_null(strstr(err, "too many"));
	assert_int_equal(cfg.nguards, NFTCFG_MAX_GUARDS);
}

static void
test_refuses_duplicate_guard(void **state)
{
	struct nftcfg cfg;
	char err[256];

	(void)state;
	nftcfg_init(&cfg);
	assert_int_equal(nftcfg_add_guard(&cfg, "10.0.0.1:80", err,
	    sizeof(err)), 0);
	assert_int_equal(nftcfg_add_guard(&cfg, "10.0.0.1:80", err,
	    sizeof(err)), -1);
	assert_non_null(strstr(err, "twice"));
	/* Same address, another port: a second guard. */
	assert_int_equal(nftcfg_add_guard(&cfg, "10.0.0.1:81", err,
	    sizeof(err)), 0);
	assert_int_equal(cfg.nguards, 2);
}

static void
test_refuses_bad_exempt_uid(void **state)
{
	static const char *const bad[] = { "", "-1", "+5", "01", "abc", "65534 ",
		"4294967295", "99999999999999999999", "0x10" };
	struct nftcfg cfg;
	char err[256];
	size_t i;

	(void)state;
	nftcfg_init(&cfg);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (nftcfg_set_exempt_uid(&cfg, bad[i], err, sizeof(err)) != -1)
			fail_msg("accepted uid \"%s\"", bad[i]);
		assert_false(cfg.has_exempt_uid);
	}
	assert_int_equal(nftcfg_set_exempt_uid(&cfg, NULL, err, sizeof(err)), -1);
}

static void
test_refuses_exempt_uid_zero(void **state)
{
	struct nftcfg cfg;
	char err[256];

	(void)state;
	nftcfg_init(&cfg);
	assert_int_equal(nftcfg_set_exempt_uid(&cfg, "0", err, sizeof(err)), -1);
	assert_non_null(strstr(err, "root"));
	assert_false(cfg.has_exempt_uid);
}

/* ---- verify's comparison ------------------------------------------------ */

static struct nftnl_rule *
tcp_dport_accept(uint16_t p)
{
	struct nftnl_rule *r = nftnl_rule_alloc();
	struct nftnl_expr *e;
	uint8_t tcp = IPPROTO_TCP;
	uint16_t port = htons(p);

	nftnl_rule_set_str(r, NFTNL_RULE_TABLE, "egress_guard");
	nftnl_rule_set_str(r, NFTNL_RULE_CHAIN, "output");
	e = nftnl_expr_alloc("meta");
	nftnl_expr_set_u32(e, NFTNL_EXPR_META_KEY, NFT_META_L4PROTO);
	nftnl_expr_set_u32(e, NFTNL_EXPR_META_DREG, NFT_REG_1);
	nftnl_rule_add_expr(r, e);
	e = nftnl_expr_alloc("cmp");
	nftnl_expr_set_u32(e, NFTNL_EXPR_CMP_SREG, NFT_REG_1);
	nftnl_expr_set_u32(e, NFTNL_EXPR_CMP_OP, NFT_CMP_EQ);
	nftnl_expr_set(e, NFTNL_EXPR_CMP_DATA, &tcp, 1);
	nftnl_rule_add_expr(r, e);
	e = nftnl_expr_alloc("payload");
	nftnl_expr_set_u32(e, NFTNL_EXPR_PAYLOAD_DREG, NFT_REG_1);
	nftnl_expr_set_u32(e, NFTNL_EXPR_PAYLOAD_BASE, NFT_PAYLOAD_TRANSPORT_HEADER);
	nftnl_expr_set_u32(e, NFTNL_EXPR_PAYLOAD_OFFSET, 2);
	nftnl_expr_set_u32(e, NFTNL_EXPR_PAYLOAD_LEN, 2);
	nftnl_rule_add_expr(r, e);
	e = nftnl_expr_alloc("cmp");
	nftnl_expr_set_u32(e, NFTNL_EXPR_CMP_SREG, NFT_REG_1);
	nftnl_expr_set_u32(e, NFTNL_EXPR_CMP_OP, NFT_CMP_EQ);
	nftnl_expr_set(e, NFTNL_EXPR_CMP_DATA, &port, 2);
	nftnl_rule_add_expr(r, e);
	e = nftnl_expr_alloc("immediate");
	nftnl_expr_set_u32(e, NFTNL_EXPR_IMM_DREG, NFT_REG_VERDICT);
	nftnl_expr_set_u32(e, NFTNL_EXPR_IMM_VERDICT, NF_ACCEPT);
	nftnl_rule_add_expr(r, e);
	return r;
}

static struct fx *
built(void)
{
	struct fx *f = fx_new();

	add_guard(f, "10.200.0.1:3128");
	add_guard(f, "[fd00:200::1]:3128");
	assert_int_equal(nftcfg_set_exempt_uid(&f->cfg, "65534", f->err,
	    sizeof(f->err)), 0);
	build(f);
	return f;
}

static void
test_compare_accepts_what_apply_builds(void **state)
{
	struct fx *f = built();

	(void)state;
	assert_int_equal(compare(f), 0);
	assert_string_equal(f->diff, "");
	fx_free(f);
}

static void
test_compare_ignores_counter_values_and_handles(void **state)
{
	struct fx *f = built();
	struct nftnl_rule_iter *ri;
	struct nftnl_expr_iter *ei;
	struct nftnl_rule *r;
	struct nftnl_expr *e;
	uint64_t h = 40;

	(void)state;
	ri = nftnl_rule_iter_create(chain(f, "output"));
	while ((r = nftnl_rule_iter_next(ri)) != NULL) {
		nftnl_rule_set_u64(r, NFTNL_RULE_HANDLE, h++);
		ei = nftnl_expr_iter_create(r);
		while ((e = nftnl_expr_iter_next(ei)) != NULL) {
			if (strcmp(nftnl_expr_get_str(e, NFTNL_EXPR_NAME),
			    "counter") != 0)
				continue;
			nftnl_expr_set_u64(e, NFTNL_EXPR_CTR_PACKETS, 12);
			nftnl_expr_set_u64(e, NFTNL_EXPR_CTR_BYTES, 3456);
		}
		nftnl_expr_iter_destroy(ei);
	}
	nftnl_rule_iter_destroy(ri);
	assert_int_equal(compare(f), 0);
	fx_free(f);
}

static void
test_compare_names_an_added_rule(void **state)
{
	struct fx *f = built();
	size_t n;

	(void)state;
	n = nrules(f, "output");
	nftnl_chain_rule_add_tail(tcp_dport_accept(80), chain(f, "output"));
	expect_diff(f, "output: unexpected rule #");
	assert_non_null(strstr(f->diff, "(tcp dport 80 accept)"));
	/* Numbered by position in the kernel's chain. */
	{
		char want[64];

		snprintf(want, sizeof(want), "unexpected rule #%zu ", n + 1);
		assert_non_null(strstr(f->diff, want));
	}
	fx_free(f);
}

static void
test_compare_names_a_rule_inserted_first(void **state)
{
	struct fx *f = built();

	(void)state;
	nftnl_chain_rule_add(tcp_dport_accept(22), chain(f, "output"));
	expect_diff(f, "output: unexpected rule #1 (tcp dport 22 accept)");
	/* One difference, not a cascade of shifted rules. */
	assert_null(strchr(strchr(f->diff, '\n') + 1, '\n'));
	fx_free(f);
}

static void
test_compare_names_a_changed_policy(void **state)
{
	struct fx *f = built();

	(void)state;
	nftnl_chain_set_u32(chain(f, "input"), NFTNL_CHAIN_POLICY, NF_ACCEPT);
	expect_diff(f, "input: policy accept, expected drop");
	fx_free(f);
}

static void
test_compare_names_a_missing_chain(void **state)
{
	struct fx *f = built();
	struct nftnl_chain *c = chain(f, "forward");

	(void)state;
	nftnl_chain_list_del(c);
	nftnl_chain_free(c);
	expect_diff(f, "forward: chain missing");
	fx_free(f);
}

static void
test_compare_names_a_changed_guard_address(void **state)
{
	struct fx *f = built();
	struct nftcfg other;

	(void)state;
	nftcfg_init(&other);
	assert_int_equal(nftcfg_add_guard(&other, "10.200.0.9:3128", f->err,
	    sizeof(f->err)), 0);
	assert_int_equal(nftcfg_add_guard(&other, "[fd00:200::1]:3128",
	    f->err, sizeof(f->err)), 0);
	assert_int_equal(nftcfg_set_exempt_uid(&other, "65534", f->err,
	    sizeof(f->err)), 0);
	assert_int_equal(nftcmp_compare(&other, f->table, f->chains, f->diff,
	    sizeof(f->diff), f->err, sizeof(f->err)), 1);
	assert_non_null(strstr(f->diff, "output: rule #15 is (ip daddr "
	    "10.200.0.1 tcp dport 3128 counter accept), expected (ip daddr "
	    "10.200.0.9 tcp dport 3128 counter accept)"));
	fx_free(f);
}

static void
test_compare_names_a_missing_rule(void **state)
{
	struct fx *f = built();
	struct nftnl_rule *r = rule(f, "output", OUT_EXEMPT);	/* meta skuid */

	(void)state;
	nftnl_chain_rule_del(r);
	nftnl_rule_free(r);
	expect_diff(f, "output: missing rule (meta skuid 65534 counter accept)");
	fx_free(f);
}

static void
test_compare_names_a_missing_or_dormant_table(void **state)
{
	struct fx *f = built();

	(void)state;
	assert_int_equal(nftcmp_compare(&f->cfg, NULL, f->chains, f->diff,
	    sizeof(f->diff), f->err, sizeof(f->err)), 1);
	assert_non_null(strstr(f->diff, "table inet egress_guard: missing"));
	nftnl_table_set_u32(f->table, NFTNL_TABLE_FLAGS, NFT_TABLE_F_DORMANT);
	expect_diff(f, "dormant");
	fx_free(f);
}

static void
test_compare_shows_kernel_names_as_printable_ascii(void **state)
{
	struct fx *f = built();
	struct nftnl_chain *c = nftnl_chain_alloc();
	size_t i;

	(void)state;
	nftnl_chain_set_str(c, NFTNL_CHAIN_TABLE, "egress_guard");
	nftnl_chain_set_str(c, NFTNL_CHAIN_NAME, "evil\x1b[2J\n");
	nftnl_chain_list_add_tail(c, f->chains);
	expect_diff(f, "unexpected chain evil?[2J?");
	for (i = 0; f->diff[i] != '\0'; i++)
		assert_true(f->diff[i] == '\n' ||
		    (f->diff[i] >= 0x20 && f->diff[i] < 0x7f));
	fx_free(f);
}

static void
test_compare_notices_a_changed_reject_code(void **state)
{
	struct fx *f = built();
	struct nftnl_expr *e[16];
	size_t n = nrules(f, "output");

	(void)state;
	assert_int_equal(exprs(rule(f, "output", (uint32_t)n - 1), e), 2);
	nftnl_expr_set_u8(e[1], NFTNL_EXPR_REJECT_CODE, 0);	/* no-route */
	expect_diff(f, "expected (counter reject with icmpx admin-prohibited)");
	fx_free(f);
}

/* The cgroup lookups refuse what the kernel could not match as meant. */
static void
test_cgroup_path_refuses_what_is_not_a_cgroup2_folder(void **state)
{
	char err[256];
	uint64_t id = 0;
	uint32_t level = 0;

	(void)state;
	assert_int_equal(nftcg_resolve_path("/tmp", &id, &level, err,
	    sizeof(err)), -1);
	assert_non_null(strstr(err, "not on a cgroup2 file system"));
	assert_int_equal(nftcg_resolve_path("relative/x", &id, &level, err,
	    sizeof(err)), -1);
	assert_int_equal(nftcg_resolve_path("/nonexistent-egnft", &id, &level,
	    err, sizeof(err)), -1);
	assert_int_equal(nftcg_resolve_path("/etc/hostname", &id, &level, err,
	    sizeof(err)), -1);
}

static void
test_cgroup_of_pid_refuses_bad_pids(void **state)
{
	char err[256], path[NFTCG_PATH_MAX];

	(void)state;
	assert_int_equal(nftcg_path_of_pid("0", path, sizeof(path), err,
	    sizeof(err)), -1);
	assert_int_equal(nftcg_path_of_pid("12a", path, sizeof(path), err,
	    sizeof(err)), -1);
	assert_int_equal(nftcg_path_of_pid("99999999", path, sizeof(path), err,
	    sizeof(err)), -1);
	assert_int_equal(nftcg_path_of_pid(NULL, path, sizeof(path), err,
	    sizeof(err)), -1);
}

/* Where cgroup2 is mounted: this process's folder resolves to its inode
 * number (the id the kernel matches). */
static void
test_cgroup_of_own_pid_resolves_to_its_inode(void **state)
{
	char err[256], path[NFTCG_PATH_MAX], pid[32];
	struct stat st;
	uint64_t id = 0;
	uint32_t level = 0;

	(void)state;
	snprintf(pid, sizeof(pid), "%ld", (long)getpid());
	if (nftcg_path_of_pid(pid, path, sizeof(path), err, sizeof(err)) == -1) {
		print_message("no cgroup2 here (%s): skipped\n", err);
		skip();
	}
	assert_int_equal(stat(path, &st), 0);
	if (nftcg_resolve_path(path, &id, &level, err, sizeof(err)) == -1)
		fail_msg("%s: %s", path, err);
	assert_true(id == (uint64_t)st.st_ino);
}

/* ---- transparent mode (nfttransp.c) --------------------------------------- */

static void
transp(struct fx *f, int dns, const char *text)
{
	if (nfttransp_add_listener(&f->cfg, dns, text, f->err,
	    sizeof(f->err)) != 0)
		fail_msg("refused %s: %s", text, f->err);
}

/* The shared layout with both listeners in both families. */
static struct fx *
shared_built(void)
{
	struct fx *f = fx_new();

	add_guard(f, "127.0.0.1:3128");
	assert_int_equal(nftcfg_set_exempt_uid(&f->cfg, "65534", f->err,
	    sizeof(f->err)), 0);
	transp(f, 0, "127.0.0.1:3129");
	transp(f, 0, "[::1]:3130");
	transp(f, 1, "127.0.0.1:5353");
	build(f);
	return f;
}

static struct fx *
guard_side_built(void)
{
	struct fx *f = fx_new();

	add_guard(f, "10.200.0.1:3128");
	assert_int_equal(nfttransp_set_in(&f->cfg, "gd0", f->err,
	    sizeof(f->err)), 0);
	transp(f, 0, "10.200.0.1:3129");
	transp(f, 0, "[fd00:200::1]:3129");
	transp(f, 1, "10.200.0.1:5353");
	build(f);
	return f;
}

/* The index of the first rule of chain whose expressions include one
 * named name; -1 when none does. */
static int
find_expr_rule(struct fx *f, const char *chain_name, const char *name,
    uint32_t from)
{
	struct nftnl_expr *v[EXPRS_MAX];
	size_t i, n, k;

	n = nrules(f, chain_name);
	for (i = from; i < n; i++) {
		size_t m = exprs(rule(f, chain_name, (uint32_t)i), v);

		for (k = 0; k < m; k++)
			if (strcmp(nftnl_expr_get_str(v[k], NFTNL_EXPR_NAME),
			    name) == 0)
				return (int)i;
	}
	return -1;
}

static void
expect_imm(const struct nftnl_expr *e, uint32_t reg, const void *data,
    uint32_t len)
{
	uint32_t got = 0;
	const void *d;

	expect_name(e, "immediate");
	assert_int_equal(nftnl_expr_get_u32(e, NFTNL_EXPR_IMM_DREG), reg);
	d = nftnl_expr_get(e, NFTNL_EXPR_IMM_DATA, &got);
	assert_non_null(d);
	assert_int_equal(got, len);
	assert_memory_equal(d, data, len);
}

/* Shared layout: a nat output chain, ahead of Docker's DNAT (-100), that
 * never redirects the exempt guard or loopback, and redirects each
 * family's TCP to its own listener's port. */
static void
test_transparent_shared_redirects_tcp_in_nat_output(void **state)
{
	struct fx *f = shared_built();
	struct nftnl_chain *c = chain(f, "nat_output");
	struct nftnl_expr *v[EXPRS_MAX];
	uint16_t p4 = htons(3129), p6 = htons(3130);
	uint32_t skuid = 65534, lo = 1;
	size_t n, last;

	(void)state;
	assert_string_equal(nftnl_chain_get_str(c, NFTNL_CHAIN_TYPE), "nat");
	assert_int_equal(nftnl_chain_get_u32(c, NFTNL_CHAIN_HOOKNUM),
	    NF_INET_LOCAL_OUT);
	assert_int_equal(nftnl_chain_get_s32(c, NFTNL_CHAIN_PRIO), -110);
	assert_int_equal(nftnl_chain_get_u32(c, NFTNL_CHAIN_POLICY), NF_ACCEPT);
	/* #0 the exemption, before any redirect */
	n = exprs(rule(f, "nat_output", 0), v);
	expect_meta(v[0], NFT_META_SKUID);
	expect_cmp(v[1], NFT_CMP_EQ, &skuid, 4);
	expect_verdict(v[n - 1], NF_ACCEPT);
	/* the DNS redirects (udp, tcp), then oif lo accept */
	n = exprs(rule(f, "nat_output", 3), v);
	expect_meta(v[0], NFT_META_OIF);
	expect_cmp(v[1], NFT_CMP_EQ, &lo, 4);
	expect_verdict(v[2], NF_ACCEPT);
	last = nrules(f, "nat_output") - 1;
	n = exprs(rule(f, "nat_output", (uint32_t)last - 1), v);
	expect_meta(v[0], NFT_META_NFPROTO);
	expect_meta(v[2], NFT_META_L4PROTO);
	expect_name(v[4], "counter");
	expect_imm(v[5], NFT_REG_1, &p4, 2);
	expect_name(v[6], "redir");
	assert_int_equal(nftnl_expr_get_u32(v[6],
	    NFTNL_EXPR_REDIR_REG_PROTO_MIN), NFT_REG_1);
	n = exprs(rule(f, "nat_output", (uint32_t)last), v);
	expect_imm(v[5], NFT_REG_1, &p6, 2);
	assert_int_equal(n, 7);
	assert_int_equal(compare(f), 0);
	fx_free(f);
}

/* DNS to any address, udp and tcp, goes to the DNS listener before the
 * loopback accept (Docker's 127.0.0.11 included). */
static void
test_transparent_shared_redirects_dns_before_loopback(void **state)
{
	struct fx *f = shared_built();
	struct nftnl_expr *v[EXPRS_MAX];
	uint16_t p53 = htons(53), p = htons(5353);
	uint8_t udp = IPPROTO_UDP, tcp = IPPROTO_TCP;
	size_t n;

	(void)state;
	n = exprs(rule(f, "nat_output", 1), v);
	assert_int_equal(n, 9);
	expect_cmp(v[3], NFT_CMP_EQ, &udp, 1);
	expect_payload(v[4], NFT_PAYLOAD_TRANSPORT_HEADER, 2, 2);
	expect_cmp(v[5], NFT_CMP_EQ, &p53, 2);
	expect_imm(v[7], NFT_REG_1, &p, 2);
	expect_name(v[8], "redir");
	exprs(rule(f, "nat_output", 2), v);
	expect_cmp(v[3], NFT_CMP_EQ, &tcp, 1);
	fx_free(f);
}

/* The filter lets through our redirected flows only: original direction,
 * ct status dnat, to the listener's address and port, placed before the
 * loopback DNS/DNAT refusals (which they would hit). */
static void
test_transparent_shared_filter_accepts_only_redirected_flows(void **state)
{
	struct fx *f = shared_built();
	struct nftnl_expr *v[EXPRS_MAX];
	static const unsigned char lo4[4] = { 127, 0, 0, 1 };
	uint16_t p = htons(3129);
	uint32_t dnat = IPS_DST_NAT;
	size_t n;
	int first_reject;

	(void)state;
	/* srcroute (3), forged sources (2), exemption, then 2 TCP + 2 DNS
	 * redirected accepts; no oif match: the output hook still sees the
	 * first route's device */
	n = exprs(rule(f, "output", OUT_EXEMPT + 1), v);
	expect_name(v[0], "ct");
	assert_int_equal(nftnl_expr_get_u32(v[0], NFTNL_EXPR_CT_KEY),
	    NFT_CT_DIRECTION);
	expect_name(v[2], "ct");
	assert_int_equal(nftnl_expr_get_u32(v[2], NFTNL_EXPR_CT_KEY),
	    NFT_CT_STATUS);
	expect_name(v[3], "bitwise");
	assert_memory_equal(nftnl_expr_get(v[3], NFTNL_EXPR_BITWISE_MASK,
	    &(uint32_t){ 0 }), &dnat, 4);
	expect_payload(v[7], NFT_PAYLOAD_NETWORK_HEADER, 16, 4);
	expect_cmp(v[8], NFT_CMP_EQ, lo4, 4);
	expect_cmp(v[12], NFT_CMP_EQ, &p, 2);
	expect_verdict(v[n - 1], NF_ACCEPT);
	first_reject = find_expr_rule(f, "output", "reject", 0);
	assert_int_equal(first_reject, OUT_EXEMPT + 1 + 4);
	fx_free(f);
}

static void
expect_transp_refused(struct nftcfg *cfg, const char *why)
{
	char err[256];

	err[0] = '\0';
	if (nfttransp_check(cfg, err, sizeof(err)) != -1)
		fail_msg("accepted a configuration that lacks \"%s\"", why);
	if (strstr(err, why) == NULL)
		fail_msg("reason \"%s\" lacks \"%s\"", err, why);
	assert_null(nftrules_expected(cfg, err, sizeof(err)));
}

/* Without the exemption the guard's own upstream connections would be
 * redirected to itself. */
static void
test_refuses_transparent_shared_without_exemption(void **state)
{
	struct fx *f = fx_new();

	(void)state;
	add_guard(f, "127.0.0.1:3128");
	transp(f, 0, "127.0.0.1:3129");
	expect_transp_refused(&f->cfg, "exemption");
	fx_free(f);
}

/* redirect in the output hook goes to 127.0.0.1 / ::1 whatever the
 * listener: any other address would leave the redirected flows refused. */
static void
test_refuses_transparent_shared_listener_off_loopback(void **state)
{
	struct fx *f = fx_new();

	(void)state;
	add_guard(f, "127.0.0.1:3128");
	assert_int_equal(nftcfg_set_exempt_uid(&f->cfg, "65534", f->err,
	    sizeof(f->err)), 0);
	transp(f, 0, "10.0.0.1:3129");
	expect_transp_refused(&f->cfg, "127.0.0.1 or [::1]");
	fx_free(f);
}

static void
test_refuses_second_listener_of_one_family(void **state)
{
	struct fx *f = fx_new();

	(void)state;
	transp(f, 0, "127.0.0.1:3129");
	assert_int_equal(nfttransp_add_listener(&f->cfg, 0, "127.0.0.1:3139",
	    f->err, sizeof(f->err)), -1);
	assert_non_null(strstr(f->err, "given twice"));
	transp(f, 1, "[::1]:53");
	assert_int_equal(nfttransp_add_listener(&f->cfg, 1, "[::1]:54",
	    f->err, sizeof(f->err)), -1);
	assert_int_equal(nfttransp_add_listener(&f->cfg, 0, "localhost:80",
	    f->err, sizeof(f->err)), -1);
	assert_int_equal(nfttransp_add_listener(&f->cfg, 0, "0.0.0.0:80",
	    f->err, sizeof(f->err)), -1);
	assert_int_equal(nfttransp_add_listener(&f->cfg, 1, "[::1]:0",
	    f->err, sizeof(f->err)), -1);
	assert_int_equal(f->cfg.ntransparent, 1);
	assert_int_equal(f->cfg.ndns, 1);
	fx_free(f);
}

/* Guard side: nothing is forwarded (forward chain policy drop, no rule),
 * the nat prerouting chain DNATs to the listener's own address, and the
 * input chain limits every rule to the workload's link. */
static void
test_transparent_guard_side_forwards_nothing(void **state)
{
	struct fx *f = guard_side_built();
	struct nftnl_chain *c = chain(f, "forward");
	struct nftnl_expr *v[EXPRS_MAX];
	static const unsigned char a4[4] = { 10, 200, 0, 1 };
	uint16_t p = htons(3129);
	char ifname[16] = "gd0";
	size_t i, n;

	(void)state;
	assert_int_equal(nftnl_chain_get_u32(c, NFTNL_CHAIN_HOOKNUM),
	    NF_INET_FORWARD);
	assert_int_equal(nftnl_chain_get_u32(c, NFTNL_CHAIN_POLICY), NF_DROP);
	assert_int_equal(nrules(f, "forward"), 0);
	assert_null(nftnl_chain_list_lookup_byname(f->chains, "output"));
	c = chain(f, "nat_prerouting");
	assert_string_equal(nftnl_chain_get_str(c, NFTNL_CHAIN_TYPE), "nat");
	assert_int_equal(nftnl_chain_get_u32(c, NFTNL_CHAIN_HOOKNUM),
	    NF_INET_PRE_ROUTING);
	/* guard accept, dns udp, dns tcp, tcp v4, tcp v6 */
	assert_int_equal(nrules(f, "nat_prerouting"), 5);
	n = exprs(rule(f, "nat_prerouting", 3), v);
	expect_meta(v[0], NFT_META_IIFNAME);
	expect_cmp(v[1], NFT_CMP_EQ, ifname, 16);
	expect_imm(v[7], NFT_REG_1, a4, 4);
	expect_imm(v[8], NFT_REG_2, &p, 2);
	expect_name(v[9], "nat");
	assert_int_equal(nftnl_expr_get_u32(v[9], NFTNL_EXPR_NAT_TYPE),
	    NFT_NAT_DNAT);
	assert_int_equal(nftnl_expr_get_u32(v[9], NFTNL_EXPR_NAT_FAMILY),
	    NFPROTO_IPV4);
	assert_int_equal(n, 10);
	c = chain(f, "input");
	assert_int_equal(nftnl_chain_get_u32(c, NFTNL_CHAIN_POLICY), NF_ACCEPT);
	for (i = 0; i < nrules(f, "input"); i++) {
		exprs(rule(f, "input", (uint32_t)i), v);
		expect_meta(v[0], NFT_META_IIFNAME);
		expect_cmp(v[1], NFT_CMP_EQ, ifname, 16);
	}
	/* ... and ends refusing what arrived there and was not accepted */
	assert_int_equal(find_expr_rule(f, "input", "reject", 0),
	    (int)nrules(f, "input") - 2);
	assert_int_equal(compare(f), 0);
	fx_free(f);
}

/* verify notices the one change that turns the guard into a router. */
static void
test_compare_names_guard_side_forward_accept(void **state)
{
	struct fx *f = guard_side_built();
	struct nftnl_rule *r;

	(void)state;
	nftnl_chain_set_u32(chain(f, "forward"), NFTNL_CHAIN_POLICY, NF_ACCEPT);
	expect_diff(f, "forward: policy accept, expected drop");
	nftnl_chain_set_u32(chain(f, "forward"), NFTNL_CHAIN_POLICY, NF_DROP);
	assert_int_equal(compare(f), 0);
	r = rule(f, "nat_prerouting", 3);
	nftnl_rule_list_del(r);
	nftnl_rule_free(r);
	expect_diff(f, "nat_prerouting: missing rule (iifname \"gd0\" meta "
	    "nfproto ipv4 meta l4proto tcp counter dnat ip to "
	    "10.200.0.1:3129) at #4");
	fx_free(f);
}

static void
test_refuses_guard_side_misconfigurations(void **state)
{
	struct fx *f = fx_new();

	(void)state;
	assert_int_equal(nfttransp_set_in(&f->cfg, "gd0", f->err,
	    sizeof(f->err)), 0);
	expect_transp_refused(&f->cfg, "needs --transparent");
	transp(f, 0, "127.0.0.1:3129");
	expect_transp_refused(&f->cfg, "other than loopback");
	fx_free(f);
	f = fx_new();
	assert_int_equal(nfttransp_set_in(&f->cfg, "gd0", f->err,
	    sizeof(f->err)), 0);
	transp(f, 0, "10.0.0.1:3129");
	assert_int_equal(nfttransp_check(&f->cfg, f->err, sizeof(f->err)), 0);
	assert_int_equal(nftcfg_set_exempt_uid(&f->cfg, "65534", f->err,
	    sizeof(f->err)), 0);
	expect_transp_refused(&f->cfg, "takes no exemption");
	f->cfg.has_exempt_uid = 0;
	assert_int_equal(nfttransp_set_via(&f->cfg, "10.0.0.1", f->err,
	    sizeof(f->err)), 0);
	expect_transp_refused(&f->cfg, "two different namespaces");
	fx_free(f);
}

/* Interface names that are not one, or that nft would read as a
 * wildcard, never reach a rule. */
static void
test_refuses_bad_interface_names(void **state)
{
	static const char *const bad[] = { "", "eth*", "a/b", "a b", "a:b",
		".", "..", "sixteen-chars-xx", "\x1b[0m" };
	struct nftcfg cfg;
	char err[256];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		nftcfg_init(&cfg);
		if (nfttransp_set_in(&cfg, bad[i], err, sizeof(err)) != -1)
			fail_msg("--transparent-in accepted \"%s\"", bad[i]);
		if (nfttransp_set_via(&cfg, bad[i], err, sizeof(err)) != -1)
			fail_msg("--transparent-via accepted \"%s\"", bad[i]);
	}
	nftcfg_init(&cfg);
	assert_int_equal(nfttransp_set_via(&cfg, "fifteen-chars-x", err,
	    sizeof(err)), 0);
	assert_int_equal(nfttransp_set_via(&cfg, "10.0.0.1", err,
	    sizeof(err)), -1);
	nftcfg_init(&cfg);
	assert_int_equal(nfttransp_set_via(&cfg, "10.0.0.999", err,
	    sizeof(err)), -1);
	assert_int_equal(nfttransp_set_via(&cfg, "224.0.0.1", err,
	    sizeof(err)), -1);
	assert_int_equal(nfttransp_set_via(&cfg, "[fd00::1]", err,
	    sizeof(err)), 0);
	assert_int_equal(nfttransp_set_via(&cfg, "fd00::2", err,
	    sizeof(err)), -1);
	/* lo and loopback next hops: accepted once, and a workload's
	 * traffic never crosses them (the guard side's input chain would
	 * refuse its own loopback). */
	nftcfg_init(&cfg);
	assert_int_equal(nfttransp_set_in(&cfg, "lo", err, sizeof(err)), -1);
	assert_non_null(strstr(err, "lo is no link"));
	assert_int_equal(nfttransp_set_via(&cfg, "lo", err, sizeof(err)), -1);
	assert_int_equal(nfttransp_set_via(&cfg, "127.0.0.1", err,
	    sizeof(err)), -1);
	assert_non_null(strstr(err, "loopback"));
	assert_int_equal(nfttransp_set_via(&cfg, "[::1]", err, sizeof(err)), -1);
	assert_int_equal(nfttransp_set_in(&cfg, "lo0", err, sizeof(err)), 0);
}

/* Separate layout, workload side: TCP (and UDP 53) out to any address,
 * but only when the route's next hop is the guard. */
static void
test_transparent_via_matches_the_routes_next_hop(void **state)
{
	struct fx *f = fx_new();
	struct nftnl_expr *v[EXPRS_MAX];
	static const unsigned char hop[4] = { 10, 200, 0, 1 };
	uint8_t tcp = IPPROTO_TCP;
	int at;

	(void)state;
	add_guard(f, "10.200.0.1:3128");
	assert_int_equal(nfttransp_set_via(&f->cfg, "10.200.0.1", f->err,
	    sizeof(f->err)), 0);
	f->cfg.via_dns = 1;
	build(f);
	at = find_expr_rule(f, "output", "rt", 0);
	assert_true(at > 0);
	/* after the guard's own rule, before the two rejects */
	assert_int_equal(at, (int)nrules(f, "output") - 4);
	exprs(rule(f, "output", (uint32_t)at), v);
	expect_cmp(v[1], NFT_CMP_EQ, &tcp, 1);
	expect_name(v[2], "rt");
	assert_int_equal(nftnl_expr_get_u32(v[2], NFTNL_EXPR_RT_KEY),
	    NFT_RT_NEXTHOP4);
	expect_cmp(v[3], NFT_CMP_EQ, hop, 4);
	expect_verdict(v[5], NF_ACCEPT);
	assert_int_equal(find_expr_rule(f, "output", "rt", (uint32_t)at + 1),
	    at + 1);
	assert_int_equal(compare(f), 0);
	fx_free(f);
	f = fx_new();
	add_guard(f, "10.200.0.1:3128");
	f->cfg.via_dns = 1;
	expect_transp_refused(&f->cfg, "--transparent-dns needs");
	fx_free(f);
}

/* The largest transparent ruleset (shared layout, 64 guards, both
 * families and both listeners) still fits the documented bounds. */
static void
test_largest_transparent_batch_fits(void **state)
{
	struct fx *f = fx_new();
	char g[64];
	int i;

	(void)state;
	for (i = 0; i < NFTCFG_MAX_GUARDS / 2; i++) {
		snprintf(g, sizeof(g), "127.0.0.%d:3128", i + 1);
		add_guard(f, g);
		snprintf(g, sizeof(g), "[fd00:ffff:ffff:ffff:ffff:ffff:ffff:%x]:65535",
		    i + 1);
		add_guard(f, g);
	}
	assert_int_equal(nftcfg_set_exempt_uid(&f->cfg, "4294967294", f->err,
	    sizeof(f->err)), 0);
	transp(f, 0, "127.0.0.1:3129");
	transp(f, 0, "[::1]:3129");
	transp(f, 1, "127.0.0.1:53");
	transp(f, 1, "[::1]:53");
	build(f);
	assert_true(f->b.len <= NFTRULES_BATCH_MAX);
	assert_true(f->b.nmsgs <= NFTRULES_MAX_MSGS);
	assert_int_equal(compare(f), 0);
	fx_free(f);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_batch_is_one_transaction_replacing_the_table),
		cmocka_unit_test(test_chains_are_base_chains_with_policy_drop),
		cmocka_unit_test(test_output_accepts_loopback_first),
		cmocka_unit_test(test_loopback_dns_refused_by_conntrack_original_port),
		cmocka_unit_test(test_loopback_dnat_of_any_kind_refused),
		cmocka_unit_test(test_source_routed_packets_dropped_before_any_accept),
		cmocka_unit_test(test_nd_only_on_link_with_hop_limit_255),
		cmocka_unit_test(test_exempt_cgroup_rule_matches_socket_cgroupv2),
		cmocka_unit_test(test_refuses_root_cgroup_exemption),
		cmocka_unit_test(test_cgroup_path_refuses_what_is_not_a_cgroup2_folder),
		cmocka_unit_test(test_cgroup_of_pid_refuses_bad_pids),
		cmocka_unit_test(test_cgroup_of_own_pid_resolves_to_its_inode),
		cmocka_unit_test(test_ipv4_guard_rule_matches_daddr_and_dport),
		cmocka_unit_test(test_ipv6_guard_rule_matches_ip6_daddr_and_dport),
		cmocka_unit_test(test_reject_rules_reset_tcp_and_prohibit_the_rest),
		cmocka_unit_test(test_exempt_uid_rule_matches_skuid),
		cmocka_unit_test(test_forged_source_dropped_before_exemption),
		cmocka_unit_test(test_docker_resolver_address_refused_on_any_port),
		cmocka_unit_test(test_input_accepts_loopback_and_established_only),
		cmocka_unit_test(test_guard_order_does_not_change_the_batch),
		cmocka_unit_test(test_batch_names_each_message),
		cmocka_unit_test(test_largest_batch_fits_the_documented_buffer),
		cmocka_unit_test(test_refuses_batch_buffer_too_small),
		cmocka_unit_test(test_refuses_config_without_guard),
		cmocka_unit_test(test_remove_batch_deletes_the_table_only),
		cmocka_unit_test(test_refuses_bad_guard_address),
		cmocka_unit_test(test_refuses_port_zero),
		cmocka_unit_test(test_refuses_addresses_no_guard_can_have),
		cmocka_unit_test(test_refuses_ipv6_guard_without_brackets_or_with_zone),
		cmocka_unit_test(test_accepts_ipv6_guard),
		cmocka_unit_test(test_refuses_too_many_guards),
		cmocka_unit_test(test_refuses_duplicate_guard),
		cmocka_unit_test(test_refuses_bad_exempt_uid),
		cmocka_unit_test(test_refuses_exempt_uid_zero),
		cmocka_unit_test(test_compare_accepts_what_apply_builds),
		cmocka_unit_test(test_compare_ignores_counter_values_and_handles),
		cmocka_unit_test(test_compare_names_an_added_rule),
		cmocka_unit_test(test_compare_names_a_rule_inserted_first),
		cmocka_unit_test(test_compare_names_a_changed_policy),
		cmocka_unit_test(test_compare_names_a_missing_chain),
		cmocka_unit_test(test_compare_names_a_changed_guard_address),
		cmocka_unit_test(test_compare_names_a_missing_rule),
		cmocka_unit_test(test_compare_names_a_missing_or_dormant_table),
		cmocka_unit_test(test_compare_shows_kernel_names_as_printable_ascii),
		cmocka_unit_test(test_compare_notices_a_changed_reject_code),
		cmocka_unit_test(test_transparent_shared_redirects_tcp_in_nat_output),
		cmocka_unit_test(test_transparent_shared_redirects_dns_before_loopback),
		cmocka_unit_test(test_transparent_shared_filter_accepts_only_redirected_flows),
		cmocka_unit_test(test_refuses_transparent_shared_without_exemption),
		cmocka_unit_test(test_refuses_transparent_shared_listener_off_loopback),
		cmocka_unit_test(test_refuses_second_listener_of_one_family),
		cmocka_unit_test(test_transparent_guard_side_forwards_nothing),
		cmocka_unit_test(test_compare_names_guard_side_forward_accept),
		cmocka_unit_test(test_refuses_guard_side_misconfigurations),
		cmocka_unit_test(test_refuses_bad_interface_names),
		cmocka_unit_test(test_transparent_via_matches_the_routes_next_hop),
		cmocka_unit_test(test_largest_transparent_batch_fits),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
