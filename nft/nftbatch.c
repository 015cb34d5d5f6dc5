/* The batch writer both tables share (nft/nftbatch.h): messages one after
 * another into a fixed buffer (table inet egress_guard, nftrules.c) or a
 * growing one (the tenants' table, whose size follows the tenant list,
 * nfttenant.c). Each message finds w->room zeroed bytes before libnftnl
 * writes it, and is checked to have kept to them after. */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/netfilter.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/netfilter/nfnetlink.h>

#include <libmnl/libmnl.h>
#include <libnftnl/chain.h>
#include <libnftnl/common.h>
#include <libnftnl/rule.h>
#include <libnftnl/table.h>

#include "nft/nftbatch.h"
#include "nft/nftfmt.h"
#include "util/errbuf.h"

/* Room for one more message; acked ones count against max_msgs (the begin
 * and end messages are not acknowledged and have no name). */
static char *
room(struct nftbatch *w, int acked)
{
	size_t cap;
	char *nb;

	if (!w->grow && (w->size < w->len || w->size - w->len < w->room)) {
		errbuf_set(w->err, w->errlen, "batch buffer too small (%zu bytes)",
		    w->size);
		return NULL;
	}
	if (acked && w->nmsgs >= w->max_msgs) {
		errbuf_set(w->err, w->errlen, "more than %zu messages in one "
		    "batch", w->max_msgs);
		return NULL;
	}
	if (w->grow && w->size - w->len < w->room) {
		cap = w->size * 2 + w->room;
		if ((nb = realloc(w->buf, cap)) == NULL) {
			errbuf_set(w->err, w->errlen, "out of memory");
			return NULL;
		}
		w->buf = nb;
		w->size = cap;
	}
	memset(w->buf + w->len, 0, w->room);
	return w->buf + w->len;
}

char *
nftbatch_room(struct nftbatch *w)
{
	return room(w, 1);
}

/* what: the message's name, or NULL for begin and end. */
static int
commit(struct nftbatch *w, const struct nlmsghdr *nlh, const char *what)
{
	if (nlh->nlmsg_len > w->room)
		return errbuf_fail(w->err, w->errlen, "message for %s is %u "
		    "bytes, over the %zu reserved", what != NULL ? what : "batch",
		    (unsigned int)nlh->nlmsg_len, w->room);
	if (what != NULL)
		snprintf(w->what[w->nmsgs++], NFTBATCH_WHAT_MAX, "%s", what);
	w->len += MNL_ALIGN(nlh->nlmsg_len);
	w->seq++;
	return 0;
}

int
nftbatch_commit(struct nftbatch *w, const struct nlmsghdr *nlh,
    const char *fmt, ...)
{
	char what[NFTBATCH_WHAT_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	return commit(w, nlh, what);
}

int
nftbatch_begin(struct nftbatch *w, uint32_t seq)
{
	char *p;

	w->len = 0;
	w->nmsgs = 0;
	w->seq = seq;
	w->seq_first = seq;
	w->seq_last = 0;
	if (!w->grow && w->buf == NULL)
		return errbuf_fail(w->err, w->errlen, "batch buffer too small "
		    "(%zu bytes)", w->size);
	if ((p = room(w, 0)) == NULL)
		return -1;
	return commit(w, nftnl_batch_begin(p, w->seq), NULL);
}

int
nftbatch_end(struct nftbatch *w)
{
	char *p;

	if ((p = room(w, 0)) == NULL)
		return -1;
	w->seq_last = w->seq;
	return commit(w, nftnl_batch_end(p, w->seq), NULL);
}

int
nftbatch_table(struct nftbatch *w, const char *name, uint16_t type,
    uint16_t flags, const char *what)
{
	struct nftnl_table *t;
	struct nlmsghdr *nlh;
	char *p;

	if ((p = room(w, 1)) == NULL)
		return -1;
	if ((t = nftnl_table_alloc()) == NULL)
		return errbuf_fail(w->err, w->errlen, "out of memory");
	nftnl_table_set_u32(t, NFTNL_TABLE_FAMILY, NFPROTO_INET);
	if (type == NFT_MSG_NEWTABLE)
		nftnl_table_set_u32(t, NFTNL_TABLE_FLAGS, 0);
	if (nftnl_table_set_str(t, NFTNL_TABLE_NAME, name) < 0) {
		nftnl_table_free(t);
		return errbuf_fail(w->err, w->errlen, "out of memory");
	}
	nlh = nftnl_nlmsg_build_hdr(p, type, NFPROTO_INET, flags | NLM_F_ACK,
	    w->seq);
	nftnl_table_nlmsg_build_payload(nlh, t);
	nftnl_table_free(t);
	return nftbatch_commit(w, nlh, "table inet %s (%s)", name, what);
}

int
nftbatch_replace_table(struct nftbatch *w, const char *name)
{
	if (nftbatch_table(w, name, NFT_MSG_NEWTABLE, NLM_F_CREATE,
	    "add") == -1 ||
	    nftbatch_table(w, name, NFT_MSG_DELTABLE, 0, "delete old") == -1 ||
	    nftbatch_table(w, name, NFT_MSG_NEWTABLE, NLM_F_CREATE,
	    "add new") == -1)
		return -1;
	return 0;
}

/* The rules of chain c, named after it and numbered from 1. */
static int
chain_rules(struct nftbatch *w, struct nftnl_chain *c)
{
	const char *name = nftnl_chain_get_str(c, NFTNL_CHAIN_NAME);
	char text[NFTBATCH_WHAT_MAX], *p;
	struct nftnl_rule_iter *ri;
	struct nftnl_rule *r;
	struct nlmsghdr *nlh;
	unsigned int n;
	int rc = 0;

	if ((ri = nftnl_rule_iter_create(c)) == NULL)
		return errbuf_fail(w->err, w->errlen, "out of memory");
	for (n = 1; rc == 0 && (r = nftnl_rule_iter_next(ri)) != NULL; n++) {
		if ((p = room(w, 1)) == NULL) {
			rc = -1;
			break;
		}
		nlh = nftnl_nlmsg_build_hdr(p, NFT_MSG_NEWRULE, NFPROTO_INET,
		    NLM_F_CREATE | NLM_F_APPEND | NLM_F_ACK, w->seq);
		nftnl_rule_nlmsg_build_payload(nlh, r);
		nftfmt_rule(r, text, sizeof(text));
		rc = nftbatch_commit(w, nlh, "%s rule #%u (%s)", name, n, text);
	}
	nftnl_rule_iter_destroy(ri);
	return rc;
}

int
nftbatch_chains(struct nftbatch *w, struct nftnl_chain_list *chains)
{
	struct nftnl_chain_list_iter *ci;
	struct nftnl_chain *c;
	struct nlmsghdr *nlh;
	int pass, rc = 0;
	char *p;

	/* Pass 0 the chains, pass 1 their rules: a rule may jump to a chain
	 * made after its own. */
	for (pass = 0; pass < 2 && rc == 0; pass++) {
		if ((ci = nftnl_chain_list_iter_create(chains)) == NULL)
			return errbuf_fail(w->err, w->errlen, "out of memory");
		while (rc == 0 && (c = nftnl_chain_list_iter_next(ci)) != NULL) {
			if (pass == 1) {
				rc = chain_rules(w, c);
				continue;
			}
			if ((p = room(w, 1)) == NULL) {
				rc = -1;
				break;
			}
			nlh = nftnl_nlmsg_build_hdr(p, NFT_MSG_NEWCHAIN,
			    NFPROTO_INET, NLM_F_CREATE | NLM_F_ACK, w->seq);
			nftnl_chain_nlmsg_build_payload(nlh, c);
			rc = nftbatch_commit(w, nlh, "chain %s",
			    nftnl_chain_get_str(c, NFTNL_CHAIN_NAME));
		}
		nftnl_chain_list_iter_destroy(ci);
	}
	return rc;
}

const char *
nftbatch_what(uint32_t seq_first, uint32_t seq_last, size_t nmsgs,
    const char *what, uint32_t seq)
{
	/* Errors the kernel reports against the begin message concern the
	 * batch as a whole: no permission, or the commit itself failed. */
	if (seq == seq_first)
		return "the batch as a whole";
	if (seq == seq_last)
		return "batch end";
	if (seq > seq_first && seq < seq_last && seq - seq_first - 1 < nmsgs)
		return what + (size_t)(seq - seq_first - 1) * NFTBATCH_WHAT_MAX;
	return "unknown message";
}
