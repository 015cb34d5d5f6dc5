/* The batch half of nftrules.h: the expected table (nftrules_expected)
 * written as one nf_tables transaction into the caller's buffer, and the
 * record of which object each sequence number carries. Split from
 * nftrules.c, which says what the table holds. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <linux/netfilter.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/netfilter/nfnetlink.h>

#include <libmnl/libmnl.h>
#include <libnftnl/chain.h>
#include <libnftnl/common.h>
#include <libnftnl/rule.h>
#include <libnftnl/table.h>

#include "nft/nftfmt.h"
#include "nft/nftrules.h"
#include "util/errbuf.h"

/* Writes messages one after another into the caller's buffer. Before each
 * message it checks that NFTRULES_MSG_MAX bytes are free, since libnftnl
 * writes attributes without bounds; after, that the message kept to it. */
struct bw {
	char			*buf;
	size_t			 size;
	struct nftrules_batch	*b;
	uint32_t		 seq;
	char			*err;
	size_t			 errlen;
};

static char *
bw_room(struct bw *w, int acked)
{
	if (w->size < w->b->len || w->size - w->b->len < NFTRULES_MSG_MAX) {
		errbuf_fail(w->err, w->errlen, "batch buffer too small (%zu bytes)",
		    w->size);
		return NULL;
	}
	if (acked && w->b->nmsgs >= NFTRULES_MAX_MSGS) {
		errbuf_fail(w->err, w->errlen, "more than %d messages in one batch",
		    NFTRULES_MAX_MSGS);
		return NULL;
	}
	memset(w->buf + w->b->len, 0, NFTRULES_MSG_MAX);
	return w->buf + w->b->len;
}

static int
bw_commit(struct bw *w, const struct nlmsghdr *nlh, const char *what)
{
	if (nlh->nlmsg_len > NFTRULES_MSG_MAX)
		return errbuf_fail(w->err, w->errlen, "message for %s is %u bytes, "
		    "over the %d reserved", what != NULL ? what : "batch",
		    (unsigned int)nlh->nlmsg_len,
		    NFTRULES_MSG_MAX);
	if (what != NULL)
		snprintf(w->b->what[w->b->nmsgs++], NFTRULES_WHAT_MAX, "%s",
		    what);
	w->b->len += MNL_ALIGN(nlh->nlmsg_len);
	w->seq++;
	return 0;
}

static int
bw_begin(struct bw *w, void *buf, size_t size, uint32_t seq,
    struct nftrules_batch *b)
{
	char *p;

	memset(b, 0, sizeof(*b));
	w->buf = buf;
	w->size = size;
	w->b = b;
	w->seq = seq;
	b->seq_first = seq;
	if (buf == NULL || (p = bw_room(w, 0)) == NULL)
		return errbuf_fail(w->err, w->errlen, "batch buffer too small (%zu "
		    "bytes)", size);
	return bw_commit(w, nftnl_batch_begin(p, w->seq), NULL);
}

static int
bw_end(struct bw *w)
{
	char *p;

	if ((p = bw_room(w, 0)) == NULL)
		return -1;
	w->b->seq_last = w->seq;
	return bw_commit(w, nftnl_batch_end(p, w->seq), NULL);
}

static int
bw_table(struct bw *w, const char *name, uint16_t type, uint16_t flags,
    const char *what)
{
	struct nlmsghdr *nlh;
	char *p;

	if ((p = bw_room(w, 1)) == NULL)
		return -1;
	if ((nlh = nftrules_table_msg(p, name, type, flags, w->seq)) == NULL)
		return errbuf_fail(w->err, w->errlen, "out of memory");
	return bw_commit(w, nlh, what);
}

struct nlmsghdr *
nftrules_table_msg(char *p, const char *name, uint16_t type, uint16_t flags,
    uint32_t seq)
{
	struct nftnl_table *t;
	struct nlmsghdr *nlh;

	if ((t = nftnl_table_alloc()) == NULL)
		return NULL;
	nftnl_table_set_u32(t, NFTNL_TABLE_FAMILY, NFPROTO_INET);
	if (type == NFT_MSG_NEWTABLE)
		nftnl_table_set_u32(t, NFTNL_TABLE_FLAGS, 0);
	if (nftnl_table_set_str(t, NFTNL_TABLE_NAME, name) < 0) {
		nftnl_table_free(t);
		return NULL;
	}
	nlh = nftnl_nlmsg_build_hdr(p, type, NFPROTO_INET, flags | NLM_F_ACK,
	    seq);
	nftnl_table_nlmsg_build_payload(nlh, t);
	nftnl_table_free(t);
	return nlh;
}

int
nftrules_build_apply(const struct nftcfg *cfg, uint32_t seq,
    void *buf, size_t size, struct nftrules_batch *b, char *err,
    size_t errlen)
{
	struct bw w = { .err = err, .errlen = errlen };
	struct nftnl_chain_list *chains;
	struct nftnl_chain_list_iter *ci = NULL;
	struct nftnl_rule_iter *ri;
	struct nftnl_chain *c;
	struct nftnl_rule *r;
	struct nlmsghdr *nlh;
	char what[NFTRULES_WHAT_MAX], text[NFTRULES_WHAT_MAX];
	const char *name;
	unsigned int n;
	char *p;
	int rc = -1;

	if (b == NULL)
		return errbuf_fail(err, errlen, "no batch record");
	if ((chains = nftrules_expected(cfg, err, errlen)) == NULL)
		return -1;
	if (bw_begin(&w, buf, size, seq, b) == -1 ||
	    bw_table(&w, NFTCFG_TABLE, NFT_MSG_NEWTABLE, NLM_F_CREATE,
	    "table inet " NFTCFG_TABLE " (add)") == -1 ||
	    bw_table(&w, NFTCFG_TABLE, NFT_MSG_DELTABLE, 0,
	    "table inet " NFTCFG_TABLE " (delete old)") == -1 ||
	    bw_table(&w, NFTCFG_TABLE, NFT_MSG_NEWTABLE, NLM_F_CREATE,
	    "table inet " NFTCFG_TABLE " (add new)") == -1)
		goto out;
	if ((ci = nftnl_chain_list_iter_create(chains)) == NULL) {
		errbuf_fail(err, errlen, "out of memory");
		goto out;
	}
	while ((c = nftnl_chain_list_iter_next(ci)) != NULL) {
		name = nftnl_chain_get_str(c, NFTNL_CHAIN_NAME);
		if ((p = bw_room(&w, 1)) == NULL)
			goto out;
		nlh = nftnl_nlmsg_build_hdr(p, NFT_MSG_NEWCHAIN, NFPROTO_INET,
		    NLM_F_CREATE | NLM_F_ACK, w.seq);
		nftnl_chain_nlmsg_build_payload(nlh, c);
		errbuf_set(what, sizeof(what), "chain %s", name);
		if (bw_commit(&w, nlh, what) == -1)
			goto out;
	}
	nftnl_chain_list_iter_destroy(ci);
	if ((ci = nftnl_chain_list_iter_create(chains)) == NULL) {
		errbuf_fail(err, errlen, "out of memory");
		goto out;
	}
	while ((c = nftnl_chain_list_iter_next(ci)) != NULL) {
		name = nftnl_chain_get_str(c, NFTNL_CHAIN_NAME);
		if ((ri = nftnl_rule_iter_create(c)) == NULL) {
			errbuf_fail(err, errlen, "out of memory");
			goto out;
		}
		for (n = 1; (r = nftnl_rule_iter_next(ri)) != NULL; n++) {
			if ((p = bw_room(&w, 1)) == NULL)
				break;
			nlh = nftnl_nlmsg_build_hdr(p, NFT_MSG_NEWRULE,
			    NFPROTO_INET, NLM_F_CREATE | NLM_F_APPEND |
			    NLM_F_ACK, w.seq);
			nftnl_rule_nlmsg_build_payload(nlh, r);
			nftfmt_rule(r, text, sizeof(text));
			errbuf_set(what, sizeof(what), "%s rule #%u (%s)", name, n,
			    text);
			if (bw_commit(&w, nlh, what) == -1)
				break;
		}
		nftnl_rule_iter_destroy(ri);
		if (r != NULL)
			goto out;
	}
	if (bw_end(&w) == -1)
		goto out;
	rc = 0;
out:
	if (ci != NULL)
		nftnl_chain_list_iter_destroy(ci);
	nftnl_chain_list_free(chains);
	if (rc == -1)
		b->len = 0;
	return rc;
}

int
nftrules_build_remove(uint32_t seq, void *buf, size_t size,
    struct nftrules_batch *b, char *err, size_t errlen)
{
	return nftrules_build_remove_table(NFTCFG_TABLE, seq, buf, size, b,
	    err, errlen);
}

int
nftrules_build_remove_table(const char *name, uint32_t seq, void *buf,
    size_t size, struct nftrules_batch *b, char *err, size_t errlen)
{
	struct bw w = { .err = err, .errlen = errlen };
	char what[NFTRULES_WHAT_MAX];

	if (b == NULL)
		return errbuf_fail(err, errlen, "no batch record");
	snprintf(what, sizeof(what), "table inet %s (delete)", name);
	if (bw_begin(&w, buf, size, seq, b) == -1 ||
	    bw_table(&w, name, NFT_MSG_DELTABLE, 0, what) == -1 ||
	    bw_end(&w) == -1) {
		b->len = 0;
		return -1;
	}
	return 0;
}

const char *
nftrules_batch_what(const struct nftrules_batch *b, uint32_t seq)
{
	if (b == NULL)
		return "unknown message";
	/* Errors the kernel reports against the begin message concern the
	 * batch as a whole: no permission, or the commit itself failed. */
	if (seq == b->seq_first)
		return "the batch as a whole";
	if (seq == b->seq_last)
		return "batch end";
	if (seq > b->seq_first && seq < b->seq_last &&
	    seq - b->seq_first - 1 < b->nmsgs)
		return b->what[seq - b->seq_first - 1];
	return "unknown message";
}

