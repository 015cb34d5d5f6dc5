/* The tenants table without a kernel: the batch is built into memory,
 * parsed back with libnftnl (sets, their elements, chains, rules), and
 * compared with what verify expects; then tampered copies, which the
 * comparison must name. */
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
#include <linux/netfilter/nf_tables.h>
#include <linux/netfilter/nfnetlink.h>

#include <libmnl/libmnl.h>
#include <libnftnl/chain.h>
#include <libnftnl/expr.h>
#include <libnftnl/rule.h>
#include <libnftnl/set.h>
#include <libnftnl/table.h>

#include "nft/nftcmp.h"
#include "nft/nfttenant.h"
#include "policy/tspec.h"

#define SEQ	5000u
#define LIST "{\"schema\":\"egress-guard.tenants.v1\",\"tenants\":[" \
	"{\"id\":\"b\",\"link\":\"eg-b\",\"address\":\"10.81.2.1\",\"peer\":\"10.81.2.2\",\"port\":3128}," \
	"{\"id\":\"a\",\"link\":\"eg-a\",\"address\":\"10.81.1.1\",\"peer\":\"10.81.1.2\",\"port\":3128," \
	"\"dns_port\":5353,\"transparent_port\":3129}," \
	"{\"id\":\"c\",\"link\":\"eg-c\",\"address\":\"fd81:3::1\",\"peer\":\"fd81:3::2\",\"port\":8080}]}"

struct back {
	struct nftnl_table	*table;
	struct nftnl_set_list	*sets;
	struct nftnl_chain_list	*chains;
	uint16_t		 types[NFTTENANT_MAX_MSGS + 2];
	size_t			 n;
};

static struct tspec *
load(const char *doc, size_t *n)
{
	struct tspec *v;
	char err[512];

	if (tspec_list_parse(doc, strlen(doc), &v, n, err, sizeof(err)) != 0)
		fail_msg("%s", err);
	return v;
}

/* Copies the elements of tmp (a parsed NEWSETELEM), keys and map data,
 * into the set of its name in l. */
static void
add_elems(struct nftnl_set_list *l, struct nftnl_set *tmp)
{
	const char *name = nftnl_set_get_str(tmp, NFTNL_SET_NAME);
	struct nftnl_set *st = nftnl_set_list_lookup_byname(l, name);
	struct nftnl_set_elems_iter *it;
	struct nftnl_set_elem *e, *c;
	const void *k;
	uint32_t len;

	assert_non_null(st);
	it = nftnl_set_elems_iter_create(tmp);
	while ((e = nftnl_set_elems_iter_next(it)) != NULL) {
		k = nftnl_set_elem_get(e, NFTNL_SET_ELEM_KEY, &len);
		c = nftnl_set_elem_alloc();
		nftnl_set_elem_set(c, NFTNL_SET_ELEM_KEY, k, len);
		if (nftnl_set_elem_is_set(e, NFTNL_SET_ELEM_DATA)) {
			k = nftnl_set_elem_get(e, NFTNL_SET_ELEM_DATA, &len);
			nftnl_set_elem_set(c, NFTNL_SET_ELEM_DATA, k, len);
		}
		nftnl_set_elem_add(st, c);
	}
	nftnl_set_elems_iter_destroy(it);
}

/* libnftnl numbers the elements it writes (nest type 1, 2, 3, ...; the
 * kernel ignores the type) but parses only NFTA_LIST_ELEM: renumber a
 * copy before parsing it. */
static int
parse_elems(const struct nlmsghdr *nlh, struct nftnl_set *st)
{
	struct nlmsghdr *cp = malloc(nlh->nlmsg_len);
	struct nlattr *a, *e;
	int rc;

	assert_non_null(cp);
	memcpy(cp, nlh, nlh->nlmsg_len);
	mnl_attr_for_each(a, cp, sizeof(struct nfgenmsg)) {
		if (mnl_attr_get_type(a) != NFTA_SET_ELEM_LIST_ELEMENTS)
			continue;
		mnl_attr_for_each_nested(e, a)
			e->nla_type = NFTA_LIST_ELEM | NLA_F_NESTED;
	}
	rc = nftnl_set_elems_nlmsg_parse(cp, st);
	free(cp);
	return rc;
}

/* Every message of the batch, in order, into *bk; checks the framing. */
static void
parse_back(const struct nfttenant_batch *b, struct back *bk)
{
	const struct nlmsghdr *nlh;
	struct nftnl_chain *c;
	struct nftnl_rule *r;
	struct nftnl_set *st;
	uint32_t seq = SEQ;
	int left = (int)b->len;
	uint16_t t;

	memset(bk, 0, sizeof(*bk));
	bk->sets = nftnl_set_list_alloc();
	bk->chains = nftnl_chain_list_alloc();
	for (nlh = (const struct nlmsghdr *)b->buf; mnl_nlmsg_ok(nlh, left);
	    nlh = mnl_nlmsg_next(nlh, &left)) {
		assert_int_equal(nlh->nlmsg_seq, seq++);
		assert_true(bk->n < NFTTENANT_MAX_MSGS + 2);
		t = nlh->nlmsg_type == NFNL_MSG_BATCH_BEGIN ||
		    nlh->nlmsg_type == NFNL_MSG_BATCH_END ? nlh->nlmsg_type :
		    NFNL_MSG_TYPE(nlh->nlmsg_type);
		bk->types[bk->n++] = t;
		if (nlh->nlmsg_type == NFNL_MSG_BATCH_BEGIN ||
		    nlh->nlmsg_type == NFNL_MSG_BATCH_END)
			continue;
		assert_true(nlh->nlmsg_flags & NLM_F_ACK);
		switch (t) {
		case NFT_MSG_NEWTABLE:
			if (bk->table != NULL)
				nftnl_table_free(bk->table);
			bk->table = nftnl_table_alloc();
			assert_int_equal(nftnl_table_nlmsg_parse(nlh, bk->table), 0);
			break;
		case NFT_MSG_NEWSET:
			st = nftnl_set_alloc();
			assert_int_equal(nftnl_set_nlmsg_parse(nlh, st), 0);
			nftnl_set_list_add_tail(st, bk->sets);
			break;
		case NFT_MSG_NEWSETELEM:
			st = nftnl_set_alloc();
			assert_int_equal(parse_elems(nlh, st), 0);
			add_elems(bk->sets, st);
			nftnl_set_free(st);
			break;
		case NFT_MSG_NEWCHAIN:
			c = nftnl_chain_alloc();
			assert_int_equal(nftnl_chain_nlmsg_parse(nlh, c), 0);
			nftnl_chain_list_add_tail(c, bk->chains);
			break;
		case NFT_MSG_NEWRULE:
			r = nftnl_rule_alloc();
			assert_int_equal(nftnl_rule_nlmsg_parse(nlh, r), 0);
			c = nftnl_chain_list_lookup_byname(bk->chains,
			    nftnl_rule_get_str(r, NFTNL_RULE_CHAIN));
			assert_non_null(c);
			nftnl_chain_rule_add_tail(r, c);
			break;
		case NFT_MSG_DELTABLE:
			break;
		default:
			fail_msg("unexpected message type %u", t);
		}
	}
	assert_int_equal(left, 0);
	assert_int_equal(seq - 1, b->seq_last);
}

static void
back_free(struct back *bk)
{
	if (bk->table != NULL)
		nftnl_table_free(bk->table);
	nftnl_set_list_free(bk->sets);
	nftnl_chain_list_free(bk->chains);
}

/* Compares bk with what verify expects for v; returns nftcmp's result. */
static int
compare(const struct tspec *v, size_t n, const struct back *bk, char *diff,
    size_t difflen)
{
	struct nftnl_set_list *ws;
	struct nftnl_chain_list *wc;
	char err[256];
	int rc;

	assert_int_equal(nfttenant_expected(v, n, &ws, &wc, err, sizeof(err)), 0);
	rc = nftcmp_compare_table("table inet " NFTTENANT_TABLE, wc, ws,
	    bk->table, bk->chains, bk->sets, diff, difflen, err, sizeof(err));
	nftnl_set_list_free(ws);
	nftnl_chain_list_free(wc);
	return rc;
}

static void
build(const struct tspec *v, size_t n, struct nfttenant_batch *b)
{
	char err[256];

	if (nfttenant_build_apply(v, n, SEQ, b, err, sizeof(err)) != 0)
		fail_msg("%s", err);
}

static void
test_batch_shape_and_read_back_equal(void **state)
{
	struct nfttenant_batch b;
	struct back bk;
	struct tspec *v;
	size_t n, i;
	char diff[4096];

	(void)state;
	v = load(LIST, &n);
	build(v, n, &b);
	parse_back(&b, &bk);
	/* begin; add, delete, add table; per set NEWSET, then one
	 * NEWSETELEM when it has elements (own6 and tproxy6 have none: no
	 * transparent IPv6 tenant); 4 chains (nat_prerouting: a is
	 * transparent); 4 + 4 + 4 + 2 rules; end. */
	static const uint16_t want[] = { NFNL_MSG_BATCH_BEGIN,
	    NFT_MSG_NEWTABLE, NFT_MSG_DELTABLE, NFT_MSG_NEWTABLE };
	static const int elems[NFTTENANT_NSETS] = { 1, 1, 1, 1, 1, 1, 1, 0, 1, 0 };
	size_t at = 4;

	for (i = 0; i < 4; i++)
		assert_int_equal(bk.types[i], want[i]);
	for (i = 0; i < NFTTENANT_NSETS; i++) {
		assert_int_equal(bk.types[at++], NFT_MSG_NEWSET);
		if (elems[i])
			assert_int_equal(bk.types[at++], NFT_MSG_NEWSETELEM);
	}
	for (i = 0; i < 4; i++)
		assert_int_equal(bk.types[at++], NFT_MSG_NEWCHAIN);
	for (i = 0; i < 14; i++)
		assert_int_equal(bk.types[at++], NFT_MSG_NEWRULE);
	assert_int_equal(bk.types[at++], NFNL_MSG_BATCH_END);
	assert_int_equal(bk.n, at);
	assert_string_equal(nfttenant_batch_what(&b, SEQ), "the batch as a whole");
	assert_string_equal(nfttenant_batch_what(&b, SEQ + 4), "set links");
	assert_string_equal(nfttenant_batch_what(&b, SEQ + 13),
	    "set listen4 elements 1-5");
	assert_non_null(strstr(nfttenant_batch_what(&b, SEQ + 29),
	    "prerouting rule #4"));
	assert_int_equal(compare(v, n, &bk, diff, sizeof(diff)), 0);
	back_free(&bk);
	nfttenant_batch_free(&b);
	free(v);
}

static const unsigned char *
find_key(struct nftnl_set_list *l, const char *set, const unsigned char *k,
    uint32_t len)
{
	struct nftnl_set *st = nftnl_set_list_lookup_byname(l, set);
	struct nftnl_set_elems_iter *it = nftnl_set_elems_iter_create(st);
	struct nftnl_set_elem *e;
	const unsigned char *p = NULL, *q;
	uint32_t ql;

	while ((e = nftnl_set_elems_iter_next(it)) != NULL) {
		q = nftnl_set_elem_get(e, NFTNL_SET_ELEM_KEY, &ql);
		if (ql == len && memcmp(q, k, len) == 0)
			p = q;
	}
	nftnl_set_elems_iter_destroy(it);
	return p;
}

/* The key layouts nft uses: ifname 16 bytes, then each field padded to 4. */
static void
test_key_layouts(void **state)
{
	unsigned char k[40];
	struct nfttenant_batch b;
	struct back bk;
	struct nftnl_set *st;
	struct tspec *v;
	size_t n;

	(void)state;
	v = load(LIST, &n);
	build(v, n, &b);
	parse_back(&b, &bk);
	memset(k, 0, sizeof(k));
	memcpy(k, "eg-a", 4);
	inet_pton(AF_INET, "10.81.1.2", k + 16);
	assert_non_null(find_key(bk.sets, "peers4", k, 20));
	inet_pton(AF_INET, "10.81.1.1", k + 16);
	k[20] = IPPROTO_UDP;
	k[24] = 5353 >> 8;
	k[25] = 5353 & 0xff;
	assert_non_null(find_key(bk.sets, "listen4", k, 28));
	k[20] = IPPROTO_TCP;
	k[24] = 3129 >> 8;
	k[25] = 3129 & 0xff;
	assert_non_null(find_key(bk.sets, "listen4", k, 28));
	/* b has no DNS listener: no udp element of its */
	memset(k, 0, sizeof(k));
	memcpy(k, "eg-b", 4);
	inet_pton(AF_INET, "10.81.2.1", k + 16);
	k[20] = IPPROTO_UDP;
	assert_null(find_key(bk.sets, "listen4", k, 28));
	memset(k, 0, sizeof(k));
	memcpy(k, "eg-c", 4);
	inet_pton(AF_INET6, "fd81:3::2", k + 16);
	assert_non_null(find_key(bk.sets, "peers6", k, 32));
	assert_non_null(find_key(bk.sets, "links6", k, 16));
	st = nftnl_set_list_lookup_byname(bk.sets, "listen6");
	assert_int_equal(nftnl_set_get_u32(st, NFTNL_SET_KEY_LEN), 40);
	/* ifname . ip6 . inet_proto . inet_service, as nft numbers them */
	assert_int_equal(nftnl_set_get_u32(st, NFTNL_SET_KEY_TYPE),
	    (((41u << 6 | 8) << 6 | 12) << 6) | 13);
	back_free(&bk);
	nfttenant_batch_free(&b);
	free(v);
}

/* The listen4 rule loads its key the way nft does: iifname into reg 1,
 * the address into reg 2, l4proto and dport into 32-bit registers 13
 * and 14, then one lookup from reg 1. */
static void
test_concat_registers(void **state)
{
	static const uint32_t want[] = { NFT_REG_1, NFT_REG_2, 13, 14 };
	struct nfttenant_batch b;
	struct back bk;
	struct nftnl_chain *c;
	struct nftnl_rule_iter *ri;
	struct nftnl_rule *r;
	struct nftnl_expr_iter *ei;
	struct nftnl_expr *e;
	struct tspec *v;
	const char *name;
	size_t n, loads = 0;
	int seen = 0;

	(void)state;
	v = load(LIST, &n);
	build(v, n, &b);
	parse_back(&b, &bk);
	c = nftnl_chain_list_lookup_byname(bk.chains, "input");
	ri = nftnl_rule_iter_create(c);
	nftnl_rule_iter_next(ri);
	r = nftnl_rule_iter_next(ri);	/* #2: listen4 */
	ei = nftnl_expr_iter_create(r);
	nftnl_expr_iter_next(ei);	/* meta nfproto */
	nftnl_expr_iter_next(ei);	/* cmp */
	while ((e = nftnl_expr_iter_next(ei)) != NULL) {
		name = nftnl_expr_get_str(e, NFTNL_EXPR_NAME);
		if (strcmp(name, "meta") == 0 && loads < 4)
			assert_int_equal(nftnl_expr_get_u32(e,
			    NFTNL_EXPR_META_DREG), want[loads++]);
		else if (strcmp(name, "payload") == 0 && loads < 4)
			assert_int_equal(nftnl_expr_get_u32(e,
			    NFTNL_EXPR_PAYLOAD_DREG), want[loads++]);
		else if (strcmp(name, "lookup") == 0) {
			assert_string_equal(nftnl_expr_get_str(e,
			    NFTNL_EXPR_LOOKUP_SET), "listen4");
			assert_int_equal(nftnl_expr_get_u32(e,
			    NFTNL_EXPR_LOOKUP_SREG), NFT_REG_1);
			seen = 1;
		}
	}
	assert_int_equal(loads, 4);
	assert_true(seen);
	nftnl_expr_iter_destroy(ei);
	nftnl_rule_iter_destroy(ri);
	back_free(&bk);
	nfttenant_batch_free(&b);
	free(v);
}

/* Transparent tenants: the map's element (link : address . port), and
 * the DNAT that takes the port from the register after the address
 * (32-bit register 9 after an IPv4 address, 2 after an IPv6 one). No
 * transparent tenant: no nat chain at all. */
static void
test_transparent_map_and_nat(void **state)
{
	static const char *six = "{\"schema\":\"egress-guard.tenants.v1\","
	    "\"tenants\":[{\"id\":\"c\",\"link\":\"eg-c\",\"address\":"
	    "\"fd81:3::1\",\"peer\":\"fd81:3::2\",\"port\":8080,"
	    "\"transparent_port\":8081}]}";
	static const char *none = "{\"schema\":\"egress-guard.tenants.v1\","
	    "\"tenants\":[{\"id\":\"b\",\"link\":\"eg-b\",\"address\":"
	    "\"10.81.2.1\",\"peer\":\"10.81.2.2\",\"port\":3128}]}";
	struct nfttenant_batch b;
	struct back bk;
	struct nftnl_chain *c;
	struct nftnl_rule_iter *ri;
	struct nftnl_rule *r;
	struct nftnl_expr_iter *ei;
	struct nftnl_expr *e;
	struct nftnl_set *st;
	struct nftnl_set_elem *el;
	struct nftnl_set_elems_iter *it;
	unsigned char k[16], d[20];
	const void *got;
	struct tspec *v;
	uint32_t len;
	size_t n;
	int nat = 0;

	(void)state;
	v = load(six, &n);
	build(v, n, &b);
	parse_back(&b, &bk);
	st = nftnl_set_list_lookup_byname(bk.sets, "tproxy6");
	assert_int_equal(nftnl_set_get_u32(st, NFTNL_SET_FLAGS), NFT_SET_MAP);
	assert_int_equal(nftnl_set_get_u32(st, NFTNL_SET_DATA_LEN), 20);
	it = nftnl_set_elems_iter_create(st);
	el = nftnl_set_elems_iter_next(it);
	assert_non_null(el);
	memset(k, 0, sizeof(k));
	memcpy(k, "eg-c", 4);
	got = nftnl_set_elem_get(el, NFTNL_SET_ELEM_KEY, &len);
	assert_int_equal(len, 16);
	assert_memory_equal(got, k, 16);
	memset(d, 0, sizeof(d));
	inet_pton(AF_INET6, "fd81:3::1", d);
	d[16] = 8081 >> 8;
	d[17] = 8081 & 0xff;
	got = nftnl_set_elem_get(el, NFTNL_SET_ELEM_DATA, &len);
	assert_int_equal(len, 20);
	assert_memory_equal(got, d, 20);
	assert_null(nftnl_set_elems_iter_next(it));
	nftnl_set_elems_iter_destroy(it);
	c = nftnl_chain_list_lookup_byname(bk.chains, "nat_prerouting");
	assert_non_null(c);
	assert_string_equal(nftnl_chain_get_str(c, NFTNL_CHAIN_TYPE), "nat");
	assert_int_equal(nftnl_chain_get_s32(c, NFTNL_CHAIN_PRIO), -110);
	ri = nftnl_rule_iter_create(c);
	while ((r = nftnl_rule_iter_next(ri)) != NULL) {
		ei = nftnl_expr_iter_create(r);
		while ((e = nftnl_expr_iter_next(ei)) != NULL) {
			if (strcmp(nftnl_expr_get_str(e, NFTNL_EXPR_NAME), "nat"))
				continue;
			nat++;
			assert_int_equal(nftnl_expr_get_u32(e,
			    NFTNL_EXPR_NAT_REG_ADDR_MIN), NFT_REG_1);
			assert_int_equal(nftnl_expr_get_u32(e,
			    NFTNL_EXPR_NAT_REG_PROTO_MIN), nftnl_expr_get_u32(e,
			    NFTNL_EXPR_NAT_FAMILY) == NFPROTO_IPV4 ? 9 : NFT_REG_2);
		}
		nftnl_expr_iter_destroy(ei);
	}
	nftnl_rule_iter_destroy(ri);
	assert_int_equal(nat, 2);
	back_free(&bk);
	nfttenant_batch_free(&b);
	free(v);
	v = load(none, &n);
	build(v, n, &b);
	parse_back(&b, &bk);
	assert_null(nftnl_chain_list_lookup_byname(bk.chains, "nat_prerouting"));
	back_free(&bk);
	nfttenant_batch_free(&b);
	free(v);
}

/* Each kind of tampering with a table read back is named by verify. */
static void
test_verify_names_tampering(void **state)
{
	struct nfttenant_batch b;
	struct back bk;
	struct nftnl_set *st;
	struct nftnl_set_elem *e;
	struct tspec *v;
	unsigned char k[20];
	size_t n;
	char diff[4096];

	(void)state;
	v = load(LIST, &n);
	build(v, n, &b);
	parse_back(&b, &bk);
	/* hostile: a spoofed source added to peers4 */
	memset(k, 0, sizeof(k));
	memcpy(k, "eg-a", 4);
	inet_pton(AF_INET, "10.81.2.2", k + 16);
	st = nftnl_set_list_lookup_byname(bk.sets, "peers4");
	e = nftnl_set_elem_alloc();
	nftnl_set_elem_set(e, NFTNL_SET_ELEM_KEY, k, sizeof(k));
	nftnl_set_elem_add(st, e);
	assert_int_equal(compare(v, n, &bk, diff, sizeof(diff)), 1);
	assert_non_null(strstr(diff,
	    "set peers4: unexpected element \"eg-a\" . 10.81.2.2"));
	/* the reference without tenant b: its elements are unexpected */
	assert_int_equal(compare(v, 1, &bk, diff, sizeof(diff)), 1);
	assert_non_null(strstr(diff, "unexpected element \"eg-b\""));
	/* a missing set */
	nftnl_set_list_del(st);
	nftnl_set_free(st);
	assert_int_equal(compare(v, n, &bk, diff, sizeof(diff)), 1);
	assert_non_null(strstr(diff, "set peers4: missing"));
	back_free(&bk);
	nfttenant_batch_free(&b);
	free(v);
}

/* The most tenants a list holds, with every listener kind: the batch
 * stays within its message bound and each message within its room, and
 * reads back equal. */
static void
test_largest_list_fits(void **state)
{
	struct nfttenant_batch b;
	struct back bk;
	struct tspec *v = calloc(TSPEC_MAX, sizeof(*v));
	size_t i;
	char diff[256];

	(void)state;
	assert_non_null(v);
	for (i = 0; i < TSPEC_MAX; i++) {
		snprintf(v[i].id, sizeof(v[i].id), "t%04zu", i);
		snprintf(v[i].link, sizeof(v[i].link), "l%04zu", i);
		v[i].family = i % 2 ? AF_INET6 : AF_INET;
		v[i].addr[0] = 10;
		v[i].addr[1] = (unsigned char)(i >> 8);
		v[i].addr[2] = (unsigned char)i;
		v[i].addr[3] = 1;
		memcpy(v[i].peer, v[i].addr, 16);
		v[i].peer[3] = 2;
		v[i].port = 3128;
		v[i].dns_port = 53;
		v[i].transparent_port = 3129;
	}
	build(v, TSPEC_MAX, &b);
	assert_true(b.nmsgs <= NFTTENANT_MAX_MSGS);
	parse_back(&b, &bk);
	assert_int_equal(compare(v, TSPEC_MAX, &bk, diff, sizeof(diff)), 0);
	back_free(&bk);
	nfttenant_batch_free(&b);
	free(v);
}

static void
test_dry_run_text(void **state)
{
	struct tspec *v;
	size_t n;
	char *t;

	(void)state;
	v = load(LIST, &n);
	t = nfttenant_text(v, n);
	assert_non_null(t);
	assert_non_null(strstr(t, "table inet egress_guard_tenants {"));
	assert_non_null(strstr(t, "\"eg-a\" . 10.81.1.1 . udp . 5353"));
	assert_non_null(strstr(t, "\"eg-c\" . fd81:3::2"));
	assert_non_null(strstr(t, "type filter hook prerouting priority raw; "
	    "policy accept;"));
	assert_non_null(strstr(t, "iifname @links counter drop"));
	free(t);
	/* no tenants: the same table with empty sets */
	t = nfttenant_text(NULL, 0);
	assert_non_null(t);
	assert_null(strstr(t, "elements"));
	free(t);
	free(v);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_batch_shape_and_read_back_equal),
		cmocka_unit_test(test_key_layouts),
		cmocka_unit_test(test_concat_registers),
		cmocka_unit_test(test_transparent_map_and_nat),
		cmocka_unit_test(test_verify_names_tampering),
		cmocka_unit_test(test_largest_list_fits),
		cmocka_unit_test(test_dry_run_text),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
