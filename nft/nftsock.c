/* The nftables netlink socket. Unlike libnftnl's examples, nothing here
 * exits or trusts a single reply: every reply is matched by port id and
 * sequence number, every ACK of a batch is accounted for, reads are
 * bounded in time (SO_RCVTIMEO) and in count, and a dump is read to its
 * end even when it is of no use, so the next request starts clean. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>

#include <linux/netfilter.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netlink.h>

#include <libmnl/libmnl.h>
#include <libnftnl/chain.h>
#include <libnftnl/common.h>
#include <libnftnl/gen.h>
#include <libnftnl/rule.h>
#include <libnftnl/set.h>
#include <libnftnl/table.h>

#include "nft/nftsock.h"
#include "util/errbuf.h"

#define RECV_TIMEOUT_S	5
/* Above the 32 KiB the kernel puts in one dump datagram at most. */
#define RBUF_WORDS	(64 * 1024 / 4)
/* Bound on the datagrams read for one request. */
#define MAX_DATAGRAMS	100000
/* Snapshot attempts while other writers keep changing the ruleset. */
#define READ_ATTEMPTS	4
#define REQ_SIZE	1024
/* What one acknowledgement costs the receive buffer, rounded up (an
 * skb's truesize: its data, struct sk_buff and skb_shared_info). */
#define ACK_TRUESIZE	2048

struct nftsock {
	struct mnl_socket	*nl;
	uint32_t		 portid;
	uint32_t		 seq;
	uint32_t		 rbuf[RBUF_WORDS];	/* netlink alignment */
};

struct nftsock *
nftsock_open(char *err, size_t errlen)
{
	struct timeval tv = { RECV_TIMEOUT_S, 0 };
	struct nftsock *s;
	int fd, one = 1;

	if ((s = calloc(1, sizeof(*s))) == NULL) {
		errbuf_fail(err, errlen, "out of memory");
		return NULL;
	}
	if ((s->nl = mnl_socket_open2(NETLINK_NETFILTER, SOCK_CLOEXEC)) == NULL) {
		errbuf_fail(err, errlen, "netlink socket: %s", strerror(errno));
		goto bad;
	}
	if (mnl_socket_bind(s->nl, 0, MNL_SOCKET_AUTOPID) < 0) {
		errbuf_fail(err, errlen, "netlink bind: %s", strerror(errno));
		goto bad;
	}
	fd = mnl_socket_get_fd(s->nl);
	if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) == -1) {
		errbuf_fail(err, errlen, "SO_RCVTIMEO: %s", strerror(errno));
		goto bad;
	}
	/* Error ACKs then carry only the refused message's header; the
	 * sequence number is what names it. Harmless where unsupported. */
	(void)setsockopt(fd, SOL_NETLINK, NETLINK_CAP_ACK, &one, sizeof(one));
	s->portid = mnl_socket_get_portid(s->nl);
	s->seq = (uint32_t)time(NULL);
	return s;
bad:
	nftsock_close(s);
	return NULL;
}

void
nftsock_close(struct nftsock *s)
{
	if (s == NULL)
		return;
	if (s->nl != NULL)
		mnl_socket_close(s->nl);
	free(s);
}

uint32_t
nftsock_seq(struct nftsock *s, uint32_t n)
{
	uint32_t first = s->seq;

	s->seq += n;
	return first;
}

/* One datagram into s->rbuf; -1 with errno (EAGAIN: timed out, or nothing
 * queued with MSG_DONTWAIT). Only the kernel (port 0) may answer us. */
static int
rcv(struct nftsock *s, int flags)
{
	struct sockaddr_nl sa;
	struct iovec iov = { s->rbuf, sizeof(s->rbuf) };
	struct msghdr m;
	ssize_t n;

	for (;;) {
		memset(&m, 0, sizeof(m));
		memset(&sa, 0, sizeof(sa));
		m.msg_name = &sa;
		m.msg_namelen = sizeof(sa);
		m.msg_iov = &iov;
		m.msg_iovlen = 1;
		n = recvmsg(mnl_socket_get_fd(s->nl), &m, flags);
		if (n >= 0 || errno != EINTR)
			break;
	}
	if (n < 0)
		return -1;
	if (m.msg_flags & MSG_TRUNC) {
		errno = EMSGSIZE;
		return -1;
	}
	if (m.msg_namelen != sizeof(sa) || sa.nl_pid != 0) {
		errno = EPROTO;
		return -1;
	}
	return (int)n;
}

static int
send_all(struct nftsock *s, const void *buf, size_t len, char *err,
    size_t errlen)
{
	ssize_t n = mnl_socket_sendto(s->nl, buf, len);

	if (n < 0)
		return errbuf_fail(err, errlen, "netlink send: %s", strerror(errno));
	if ((size_t)n != len)
		return errbuf_fail(err, errlen, "netlink send: short write");
	return 0;
}

int
nftsock_send_batch(struct nftsock *s, const void *buf, size_t len,
    uint32_t seq_first, uint32_t seq_last, struct nftsock_error *e,
    char *err, size_t errlen)
{
	const struct nlmsghdr *nlh;
	const struct nlmsgerr *ne;
	unsigned char *seen = NULL;
	size_t expected, got = 0;
	uint32_t idx, span;
	unsigned int rounds;
	int n, drain = 0, rc = -1;

	memset(e, 0, sizeof(*e));
	if (seq_last - seq_first < 2 || seq_last - seq_first > 65536)
		return errbuf_fail(err, errlen, "bad batch sequence range");
	span = seq_last - seq_first;
	expected = span - 1;
	if ((seen = calloc(span + 1, 1)) == NULL)
		return errbuf_fail(err, errlen, "out of memory");
	if (send_all(s, buf, len, err, errlen) == -1)
		goto out;
	for (rounds = 0; got < expected && rounds < MAX_DATAGRAMS; rounds++) {
		/* The kernel queues every answer while it handles our send;
		 * once it has reported an error, what is not queued yet is
		 * not coming. */
		if ((n = rcv(s, drain ? MSG_DONTWAIT : 0)) < 0) {
			if (errno == EAGAIN && drain)
				break;
			if (errno == EAGAIN)
				errbuf_fail(err, errlen, "no answer from the kernel "
				    "within %d s (%zu of %zu messages "
				    "acknowledged)", RECV_TIMEOUT_S, got,
				    expected);
			else
				errbuf_fail(err, errlen, "reading acknowledgements: %s",
				    strerror(errno));
			goto out;
		}
		for (nlh = (const struct nlmsghdr *)s->rbuf; mnl_nlmsg_ok(nlh, n);
		    nlh = mnl_nlmsg_next(nlh, &n)) {
			if (nlh->nlmsg_pid != s->portid ||
			    nlh->nlmsg_seq - seq_first > span) {
				errbuf_fail(err, errlen, "reply for another request "
				    "(seq %u, port %u)", nlh->nlmsg_seq,
				    nlh->nlmsg_pid);
				goto out;
			}
			idx = nlh->nlmsg_seq - seq_first;
			if (nlh->nlmsg_type != NLMSG_ERROR ||
			    nlh->nlmsg_len < NLMSG_HDRLEN + sizeof(*ne)) {
				errbuf_fail(err, errlen, "unexpected reply (type %u, "
				    "%u bytes) to a batch", nlh->nlmsg_type,
				    nlh->nlmsg_len);
				goto out;
			}
			ne = mnl_nlmsg_get_payload(nlh);
			if (ne->error != 0) {
				if (e->nerrors++ == 0) {
					e->kernel = 1;
					e->seq = nlh->nlmsg_seq;
					e->errnum = ne->error < 0 ? -ne->error :
					    ne->error;
				}
				drain = 1;
			} else if (idx == 0 || idx == span) {
				errbuf_fail(err, errlen, "acknowledgement for the batch "
				    "%s, which asked for none",
				    idx == 0 ? "begin" : "end");
				goto out;
			} else if (seen[idx]) {
				errbuf_fail(err, errlen, "two acknowledgements for "
				    "message %u", nlh->nlmsg_seq);
				goto out;
			}
			if (idx > 0 && idx < span && !seen[idx]) {
				seen[idx] = 1;
				got++;
			}
		}
	}
	if (e->kernel) {
		errbuf_fail(err, errlen, "%s", strerror(e->errnum));
		goto out;
	}
	if (got < expected) {
		errbuf_fail(err, errlen, "%zu of %zu messages never acknowledged",
		    expected - got, expected);
		goto out;
	}
	rc = 0;
out:
	free(seen);
	return rc;
}

/* One request and all its replies. Data messages go to cb (which returns
 * -1 to mark the answer unusable; reading still goes on to the end). The
 * end is NLMSG_DONE for a dump, the ACK or error for anything else. */
struct req {
	uint16_t	 reply;		/* NFT_MSG_NEW... expected back */
	int		(*cb)(const struct nlmsghdr *, void *);
	void		*data;
	int		 interrupted;	/* NLM_F_DUMP_INTR: retry */
	int		 kerrno;
};

static int
request(struct nftsock *s, const struct nlmsghdr *q, struct req *r, char *err,
    size_t errlen)
{
	const struct nlmsghdr *nlh;
	const struct nlmsgerr *ne;
	unsigned int rounds;
	int n, done = 0, bad = 0;

	r->interrupted = 0;
	r->kerrno = 0;
	if (send_all(s, q, q->nlmsg_len, err, errlen) == -1)
		return -1;
	for (rounds = 0; !done && rounds < MAX_DATAGRAMS; rounds++) {
		if ((n = rcv(s, 0)) < 0) {
			if (errno == EAGAIN)
				return errbuf_fail(err, errlen, "no answer from the "
				    "kernel within %d s", RECV_TIMEOUT_S);
			return errbuf_fail(err, errlen, "netlink receive: %s",
			    strerror(errno));
		}
		for (nlh = (const struct nlmsghdr *)s->rbuf;
		    !done && mnl_nlmsg_ok(nlh, n); nlh = mnl_nlmsg_next(nlh, &n)) {
			if (nlh->nlmsg_pid != s->portid ||
			    nlh->nlmsg_seq != q->nlmsg_seq)
				return errbuf_fail(err, errlen, "reply for another "
				    "request (seq %u, port %u)",
				    nlh->nlmsg_seq, nlh->nlmsg_pid);
			if (nlh->nlmsg_flags & NLM_F_DUMP_INTR)
				r->interrupted = 1;
			switch (nlh->nlmsg_type) {
			case NLMSG_NOOP:
				break;
			case NLMSG_DONE:
				done = 1;
				if (mnl_nlmsg_get_payload_len(nlh) >= sizeof(int)) {
					int v;

					memcpy(&v, mnl_nlmsg_get_payload(nlh),
					    sizeof(v));
					if (v < 0)
						r->kerrno = -v;
				}
				break;
			case NLMSG_ERROR:
				done = 1;
				if (nlh->nlmsg_len < NLMSG_HDRLEN + sizeof(*ne))
					return errbuf_fail(err, errlen, "short netlink "
					    "error message");
				ne = mnl_nlmsg_get_payload(nlh);
				if (ne->error != 0)
					r->kerrno = ne->error < 0 ? -ne->error :
					    ne->error;
				break;
			default:
				if (NFNL_SUBSYS_ID(nlh->nlmsg_type) !=
				    NFNL_SUBSYS_NFTABLES ||
				    NFNL_MSG_TYPE(nlh->nlmsg_type) != r->reply) {
					bad = 1;
					errbuf_fail(err, errlen, "unexpected reply type "
					    "0x%x", nlh->nlmsg_type);
				} else if (!bad && r->cb(nlh, r->data) == -1) {
					bad = 1;
					errbuf_fail(err, errlen, "cannot parse the "
					    "kernel's reply");
				}
			}
		}
	}
	if (!done)
		return errbuf_fail(err, errlen, "reply never ended");
	if (r->kerrno != 0)
		return errbuf_fail(err, errlen, "%s", strerror(r->kerrno));
	return bad ? -1 : 0;
}

static int
gen_cb(const struct nlmsghdr *nlh, void *data)
{
	struct nftnl_gen *g = nftnl_gen_alloc();
	int rc = -1;

	if (g == NULL)
		return -1;
	if (nftnl_gen_nlmsg_parse(nlh, g) == 0 &&
	    nftnl_gen_is_set(g, NFTNL_GEN_ID)) {
		*(uint32_t *)data = nftnl_gen_get_u32(g, NFTNL_GEN_ID);
		rc = 0;
	}
	nftnl_gen_free(g);
	return rc;
}

static int
read_gen(struct nftsock *s, uint32_t *gen, int *kerrno, char *err,
    size_t errlen)
{
	uint32_t qbuf[REQ_SIZE / 4];
	struct nlmsghdr *q;
	struct req r = { NFT_MSG_NEWGEN, gen_cb, gen, 0, 0 };
	int rc;

	memset(qbuf, 0, sizeof(qbuf));
	q = nftnl_nlmsg_build_hdr((char *)qbuf, NFT_MSG_GETGEN, AF_UNSPEC,
	    NLM_F_ACK, nftsock_seq(s, 1));
	*gen = 0;
	rc = request(s, q, &r, err, errlen);
	*kerrno = r.kerrno;
	return rc;
}

struct snap {
	const char		*name;
	struct nftnl_table	*table;
	struct nftnl_chain_list	*chains;
};

static int
table_cb(const struct nlmsghdr *nlh, void *data)
{
	struct snap *sn = data;
	struct nftnl_table *t;

	if (sn->table != NULL || (t = nftnl_table_alloc()) == NULL)
		return -1;
	if (nftnl_table_nlmsg_parse(nlh, t) < 0) {
		nftnl_table_free(t);
		return -1;
	}
	sn->table = t;
	return 0;
}

static int
chain_cb(const struct nlmsghdr *nlh, void *data)
{
	struct snap *sn = data;
	struct nftnl_chain *c;
	const char *t;

	if ((c = nftnl_chain_alloc()) == NULL)
		return -1;
	if (nftnl_chain_nlmsg_parse(nlh, c) < 0) {
		nftnl_chain_free(c);
		return -1;
	}
	/* The kernel cannot filter chain dumps by table. */
	t = nftnl_chain_get_str(c, NFTNL_CHAIN_TABLE);
	if (t == NULL || strcmp(t, sn->name) != 0) {
		nftnl_chain_free(c);
		return 0;
	}
	nftnl_chain_list_add_tail(c, sn->chains);
	return 0;
}

static int
rule_cb(const struct nlmsghdr *nlh, void *data)
{
	struct snap *sn = data;
	struct nftnl_chain *c;
	struct nftnl_rule *r;
	const char *t, *cn;

	if ((r = nftnl_rule_alloc()) == NULL)
		return -1;
	if (nftnl_rule_nlmsg_parse(nlh, r) < 0)
		goto bad;
	t = nftnl_rule_get_str(r, NFTNL_RULE_TABLE);
	cn = nftnl_rule_get_str(r, NFTNL_RULE_CHAIN);
	if (t == NULL || cn == NULL)
		goto bad;
	if (strcmp(t, sn->name) != 0) {
		nftnl_rule_free(r);
		return 0;
	}
	if ((c = nftnl_chain_list_lookup_byname(sn->chains, cn)) == NULL)
		goto bad;	/* not one snapshot: the caller retries */
	nftnl_chain_rule_add_tail(r, c);
	return 0;
bad:
	nftnl_rule_free(r);
	return -1;
}

static void
snap_free(struct snap *sn)
{
	if (sn->table != NULL)
		nftnl_table_free(sn->table);
	if (sn->chains != NULL)
		nftnl_chain_list_free(sn->chains);
	sn->table = NULL;
	sn->chains = NULL;
}

/* One GET for the table in t (or the rules selected by r), answered
 * through rq. */
static int
get(struct nftsock *s, uint16_t msg, uint16_t flags, struct req *rq,
    const struct nftnl_table *t, struct nftnl_rule *r, char *err,
    size_t errlen)
{
	uint32_t qbuf[REQ_SIZE / 4];
	struct nlmsghdr *q;

	memset(qbuf, 0, sizeof(qbuf));
	q = nftnl_nlmsg_build_hdr((char *)qbuf, msg, NFPROTO_INET, flags,
	    nftsock_seq(s, 1));
	if (t != NULL)
		nftnl_table_nlmsg_build_payload(q, t);
	if (r != NULL)
		nftnl_rule_nlmsg_build_payload(q, r);
	return request(s, q, rq, err, errlen);
}

/* One attempt: table, chains, rules. Returns 0, -1 on failure, 1 when the
 * answer is not a consistent snapshot (worth another attempt). */
static int
read_once(struct nftsock *s, struct snap *sn, int *kerrno, char *err,
    size_t errlen)
{
	struct nftnl_table *t = nftnl_table_alloc();
	struct nftnl_rule *r = nftnl_rule_alloc();
	struct req rq = { 0, NULL, NULL, 0, 0 };
	int rc = -1;

	*kerrno = 0;
	if ((sn->chains = nftnl_chain_list_alloc()) == NULL || t == NULL ||
	    r == NULL || nftnl_table_set_str(t, NFTNL_TABLE_NAME, sn->name) < 0 ||
	    nftnl_rule_set_str(r, NFTNL_RULE_TABLE, sn->name) < 0) {
		errbuf_fail(err, errlen, "out of memory");
		goto out;
	}
	nftnl_table_set_u32(t, NFTNL_TABLE_FAMILY, NFPROTO_INET);
	nftnl_rule_set_u32(r, NFTNL_RULE_FAMILY, NFPROTO_INET);
	rq = (struct req){ NFT_MSG_NEWTABLE, table_cb, sn, 0, 0 };
	rc = get(s, NFT_MSG_GETTABLE, NLM_F_ACK, &rq, t, NULL, err, errlen);
	if (rc == -1 && rq.kerrno == ENOENT) {
		rc = 0;		/* absent: an empty snapshot */
		goto out;
	}
	if (rc == 0 && sn->table == NULL)
		rc = errbuf_fail(err, errlen, "the kernel sent no table");
	if (rc == 0) {
		rq = (struct req){ NFT_MSG_NEWCHAIN, chain_cb, sn, 0, 0 };
		rc = get(s, NFT_MSG_GETCHAIN, NLM_F_DUMP, &rq, NULL, NULL, err,
		    errlen);
	}
	/* The rule dump, unlike the chain dump, is filtered by table in the
	 * kernel. */
	if (rc == 0 && !rq.interrupted) {
		rq = (struct req){ NFT_MSG_NEWRULE, rule_cb, sn, 0, 0 };
		rc = get(s, NFT_MSG_GETRULE, NLM_F_DUMP, &rq, NULL, r, err,
		    errlen);
	}
	*kerrno = rq.kerrno;
	if (rc == 0 && rq.interrupted)
		rc = 1;
out:
	if (t != NULL)
		nftnl_table_free(t);
	if (r != NULL)
		nftnl_rule_free(r);
	return rc;
}

int
nftsock_read_table(struct nftsock *s, const char *name,
    struct nftnl_table **table, struct nftnl_chain_list **chains,
    int *kerrno, char *err, size_t errlen)
{
	struct snap sn = { name, NULL, NULL };
	uint32_t g1, g2;
	int attempt, rc;

	*table = NULL;
	*chains = NULL;
	*kerrno = 0;
	for (attempt = 0; attempt < READ_ATTEMPTS; attempt++) {
		if (read_gen(s, &g1, kerrno, err, errlen) == -1)
			return -1;
		rc = read_once(s, &sn, kerrno, err, errlen);
		if (rc == -1 && *kerrno == 0 && attempt + 1 < READ_ATTEMPTS) {
			/* e.g. a rule of a chain created after the chain
			 * dump: the generation check below tells. */
			rc = 1;
		}
		if (rc == -1) {
			snap_free(&sn);
			return -1;
		}
		if (read_gen(s, &g2, kerrno, err, errlen) == -1) {
			snap_free(&sn);
			return -1;
		}
		if (rc == 0 && g1 == g2) {
			*table = sn.table;
			*chains = sn.chains;
			return 0;
		}
		snap_free(&sn);
	}
	return errbuf_fail(err, errlen, "the ruleset kept changing while it was "
	    "read (%d attempts)", READ_ATTEMPTS);
}

struct bases {
	struct nftnl_chain_list	*list;
	size_t			 n;
	size_t			 max;
	int			 more;
};

static int
base_cb(const struct nlmsghdr *nlh, void *data)
{
	struct bases *b = data;
	struct nftnl_chain *c;

	if ((c = nftnl_chain_alloc()) == NULL)
		return -1;
	if (nftnl_chain_nlmsg_parse(nlh, c) < 0) {
		nftnl_chain_free(c);
		return -1;
	}
	if (!nftnl_chain_is_set(c, NFTNL_CHAIN_HOOKNUM)) {
		nftnl_chain_free(c);
		return 0;
	}
	if (b->n >= b->max) {
		b->more = 1;
		nftnl_chain_free(c);
		return 0;
	}
	nftnl_chain_list_add_tail(c, b->list);
	b->n++;
	return 0;
}

int
nftsock_read_base_chains(struct nftsock *s, size_t max,
    struct nftnl_chain_list **chains, int *more, int *kerrno, char *err,
    size_t errlen)
{
	struct bases b = { NULL, 0, max, 0 };
	struct req rq = { NFT_MSG_NEWCHAIN, base_cb, &b, 0, 0 };
	uint32_t qbuf[REQ_SIZE / 4];
	struct nlmsghdr *q;
	int attempt, rc = -1;

	*chains = NULL;
	*more = 0;
	*kerrno = 0;
	for (attempt = 0; attempt < READ_ATTEMPTS; attempt++) {
		if ((b.list = nftnl_chain_list_alloc()) == NULL)
			return errbuf_fail(err, errlen, "out of memory");
		b.n = 0;
		b.more = 0;
		rq.interrupted = 0;
		rq.kerrno = 0;
		memset(qbuf, 0, sizeof(qbuf));
		q = nftnl_nlmsg_build_hdr((char *)qbuf, NFT_MSG_GETCHAIN,
		    NFPROTO_UNSPEC, NLM_F_DUMP, nftsock_seq(s, 1));
		rc = request(s, q, &rq, err, errlen);
		*kerrno = rq.kerrno;
		if (rc == 0 && !rq.interrupted) {
			*chains = b.list;
			*more = b.more;
			return 0;
		}
		nftnl_chain_list_free(b.list);
		if (rc == -1)
			return -1;
	}
	return errbuf_fail(err, errlen, "the ruleset kept changing while it was "
	    "read (%d attempts)", READ_ATTEMPTS);
}

/* ---- sets ------------------------------------------------------------ */

static int
set_cb(const struct nlmsghdr *nlh, void *data)
{
	struct nftnl_set_list *l = data;
	struct nftnl_set *st;

	if ((st = nftnl_set_alloc()) == NULL)
		return -1;
	if (nftnl_set_nlmsg_parse(nlh, st) < 0) {
		nftnl_set_free(st);
		return -1;
	}
	nftnl_set_list_add_tail(st, l);
	return 0;
}

static int
elem_cb(const struct nlmsghdr *nlh, void *data)
{
	return nftnl_set_elems_nlmsg_parse(nlh, data) < 0 ? -1 : 0;
}

/* One attempt: the sets of table inet name, then each one's elements.
 * 0, -1, or 1 when a dump was interrupted (worth another attempt). */
static int
sets_once(struct nftsock *s, const char *name, struct nftnl_set_list *l,
    int *kerrno, char *err, size_t errlen)
{
	struct req rq = { NFT_MSG_NEWSET, set_cb, l, 0, 0 };
	struct nftnl_set_list_iter *it;
	uint32_t qbuf[REQ_SIZE / 4];
	struct nftnl_set *q, *st;
	struct nlmsghdr *nlh;
	int rc;

	if ((q = nftnl_set_alloc()) == NULL ||
	    nftnl_set_set_str(q, NFTNL_SET_TABLE, name) < 0) {
		if (q != NULL)
			nftnl_set_free(q);
		return errbuf_fail(err, errlen, "out of memory");
	}
	memset(qbuf, 0, sizeof(qbuf));
	nlh = nftnl_nlmsg_build_hdr((char *)qbuf, NFT_MSG_GETSET, NFPROTO_INET,
	    NLM_F_DUMP, nftsock_seq(s, 1));
	nftnl_set_nlmsg_build_payload(nlh, q);
	nftnl_set_free(q);
	rc = request(s, nlh, &rq, err, errlen);
	*kerrno = rq.kerrno;
	if (rc == -1)
		return -1;
	if (rq.interrupted)
		return 1;
	if ((it = nftnl_set_list_iter_create(l)) == NULL)
		return errbuf_fail(err, errlen, "out of memory");
	while (rc == 0 && (st = nftnl_set_list_iter_next(it)) != NULL) {
		rq = (struct req){ NFT_MSG_NEWSETELEM, elem_cb, st, 0, 0 };
		memset(qbuf, 0, sizeof(qbuf));
		nlh = nftnl_nlmsg_build_hdr((char *)qbuf, NFT_MSG_GETSETELEM,
		    NFPROTO_INET, NLM_F_DUMP, nftsock_seq(s, 1));
		nftnl_set_elems_nlmsg_build_payload(nlh, st);
		rc = request(s, nlh, &rq, err, errlen);
		*kerrno = rq.kerrno;
		if (rc == 0 && rq.interrupted)
			rc = 1;
	}
	nftnl_set_list_iter_destroy(it);
	return rc;
}

int
nftsock_read_sets(struct nftsock *s, const char *name,
    struct nftnl_set_list **sets, int *kerrno, char *err, size_t errlen)
{
	struct nftnl_set_list *l;
	uint32_t g1, g2;
	int attempt, rc;

	*sets = NULL;
	*kerrno = 0;
	for (attempt = 0; attempt < READ_ATTEMPTS; attempt++) {
		if (read_gen(s, &g1, kerrno, err, errlen) == -1)
			return -1;
		if ((l = nftnl_set_list_alloc()) == NULL)
			return errbuf_fail(err, errlen, "out of memory");
		rc = sets_once(s, name, l, kerrno, err, errlen);
		if (rc == -1 && *kerrno == ENOENT) {
			rc = 0;		/* no such table: no sets */
			*kerrno = 0;
		}
		if (rc == -1 || read_gen(s, &g2, kerrno, err, errlen) == -1) {
			nftnl_set_list_free(l);
			return -1;
		}
		if (rc == 0 && g1 == g2) {
			*sets = l;
			return 0;
		}
		nftnl_set_list_free(l);
	}
	return errbuf_fail(err, errlen, "the ruleset kept changing while it was "
	    "read (%d attempts)", READ_ATTEMPTS);
}

/* Raises the socket's buffer opt (SO_SNDBUF, SO_RCVBUF) to want bytes:
 * the FORCE option passes [wr]mem_max with CAP_NET_ADMIN, the plain one
 * is the try without it. 0, or -1 when it stays smaller. */
static int
grow_buf(int fd, int opt, int force, int want)
{
	int cur = 0;
	socklen_t sl = sizeof(cur);

	if (getsockopt(fd, SOL_SOCKET, opt, &cur, &sl) == 0 && cur >= want)
		return 0;
	if (setsockopt(fd, SOL_SOCKET, force, &want, sizeof(want)) != 0 &&
	    setsockopt(fd, SOL_SOCKET, opt, &want, sizeof(want)) != 0)
		return -1;
	sl = sizeof(cur);
	return getsockopt(fd, SOL_SOCKET, opt, &cur, &sl) == 0 && cur >= want ?
	    0 : -1;
}

/* A batch larger than the socket's send buffer is refused whole
 * (EMSGSIZE), and the kernel queues one acknowledgement per message
 * while it handles the send: each is a buffer of its own (about 1 KiB of
 * the receive buffer's accounting), and past the receive buffer they are
 * dropped (ENOBUFS, the outcome unknown). Raise both for this batch. */
int
nftsock_fit_batch(struct nftsock *s, size_t len, size_t nmsgs, char *err,
    size_t errlen)
{
	int fd = mnl_socket_get_fd(s->nl);

	if (len > (size_t)INT32_MAX / 4 || nmsgs > 65536)
		return errbuf_fail(err, errlen, "batch of %zu bytes too large", len);
	if (grow_buf(fd, SO_SNDBUF, SO_SNDBUFFORCE, (int)len + 4096) == -1)
		return errbuf_fail(err, errlen, "cannot raise the netlink send "
		    "buffer to %zu bytes for the batch (needs CAP_NET_ADMIN)",
		    len + 4096);
	if (grow_buf(fd, SO_RCVBUF, SO_RCVBUFFORCE,
	    (int)(nmsgs * ACK_TRUESIZE) + 65536) == -1)
		return errbuf_fail(err, errlen, "cannot raise the netlink receive "
		    "buffer to %zu bytes for %zu acknowledgements (needs "
		    "CAP_NET_ADMIN)", nmsgs * ACK_TRUESIZE + 65536, nmsgs);
	return 0;
}
