/* The batch writer both tables share (nft/nftbatch.h), without a kernel:
 * a fixed and a growing buffer write the same bytes, every bound refuses
 * with its own message, and each sequence number names its object. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <linux/netfilter/nf_tables.h>
#include <linux/netfilter/nfnetlink.h>

#include <libmnl/libmnl.h>
#include <libnftnl/chain.h>

#include "nft/nftbatch.h"
#include "nft/nftrules.h"

#define SEQ	7000u

static char names[NFTRULES_MAX_MSGS][NFTBATCH_WHAT_MAX];

static struct nftnl_chain_list *
chains(void)
{
	struct nftnl_chain_list *l;
	struct nftcfg cfg;
	char err[256];

	nftcfg_init(&cfg);
	assert_int_equal(nftcfg_add_guard(&cfg, "10.0.0.1:3128", err,
	    sizeof(err)), 0);
	l = nftrules_expected(&cfg, err, sizeof(err));
	assert_non_null(l);
	return l;
}

/* A writer naming messages in what (max of them), room bytes each. */
static void
writer(struct nftbatch *w, char (*what)[NFTBATCH_WHAT_MAX], size_t max,
    size_t room, char *err, size_t errlen)
{
	memset(w, 0, sizeof(*w));
	w->room = room;
	w->max_msgs = max;
	w->what = what;
	w->err = err;
	w->errlen = errlen;
}

static int
write_all(struct nftbatch *w, struct nftnl_chain_list *l)
{
	if (nftbatch_begin(w, SEQ) == -1 ||
	    nftbatch_replace_table(w, "t") == -1 ||
	    nftbatch_chains(w, l) == -1 || nftbatch_end(w) == -1)
		return -1;
	return 0;
}

/* The same transaction into the caller's buffer and into one that grows
 * from nothing: the same bytes, the same names, the same framing. */
static void
test_fixed_and_growing_buffers_write_the_same(void **state)
{
	static char grown[NFTRULES_MAX_MSGS][NFTBATCH_WHAT_MAX];
	struct nftnl_chain_list *l = chains();
	struct nftbatch f, g;
	const struct nlmsghdr *nlh;
	char err[256];
	size_t i;
	int left, n = 0;

	(void)state;
	writer(&f, names, NFTRULES_MAX_MSGS, NFTRULES_MSG_MAX, err,
	    sizeof(err));
	f.size = NFTRULES_BATCH_MAX;
	f.buf = malloc(f.size);
	assert_non_null(f.buf);
	writer(&g, grown, NFTRULES_MAX_MSGS, NFTRULES_MSG_MAX, err,
	    sizeof(err));
	g.grow = 1;
	if (write_all(&f, l) == -1 || write_all(&g, l) == -1)
		fail_msg("%s", err);
	assert_int_equal(f.len, g.len);
	assert_memory_equal(f.buf, g.buf, f.len);
	assert_int_equal(f.nmsgs, g.nmsgs);
	for (i = 0; i < f.nmsgs; i++)
		assert_string_equal(names[i], grown[i]);
	assert_int_equal(f.seq_first, SEQ);
	assert_int_equal(f.seq_last, SEQ + f.nmsgs + 1);
	left = (int)g.len;
	for (nlh = (const struct nlmsghdr *)g.buf; mnl_nlmsg_ok(nlh, left);
	    nlh = mnl_nlmsg_next(nlh, &left), n++) {
		assert_int_equal(nlh->nlmsg_seq, SEQ + (uint32_t)n);
		if (n > 0 && (size_t)n <= g.nmsgs)
			assert_true(nlh->nlmsg_flags & NLM_F_ACK);
	}
	assert_int_equal(n, g.nmsgs + 2);
	assert_int_equal(left, 0);
	nftnl_chain_list_free(l);
	free(f.buf);
	free(g.buf);
}

/* Begin and end carry no name; a seq outside the batch is unknown. */
static void
test_names_each_sequence_number(void **state)
{
	struct nftnl_chain_list *l = chains();
	struct nftbatch w;
	char err[256];

	(void)state;
	writer(&w, names, NFTRULES_MAX_MSGS, NFTRULES_MSG_MAX, err,
	    sizeof(err));
	w.grow = 1;
	if (write_all(&w, l) == -1)
		fail_msg("%s", err);
	assert_string_equal(nftbatch_what(w.seq_first, w.seq_last, w.nmsgs,
	    names[0], SEQ), "the batch as a whole");
	assert_string_equal(nftbatch_what(w.seq_first, w.seq_last, w.nmsgs,
	    names[0], SEQ + 1), "table inet t (add)");
	assert_string_equal(nftbatch_what(w.seq_first, w.seq_last, w.nmsgs,
	    names[0], SEQ + 2), "table inet t (delete old)");
	assert_string_equal(nftbatch_what(w.seq_first, w.seq_last, w.nmsgs,
	    names[0], SEQ + 4), "chain output");
	assert_non_null(strstr(nftbatch_what(w.seq_first, w.seq_last,
	    w.nmsgs, names[0], SEQ + 7), "output rule #1 ("));
	assert_string_equal(nftbatch_what(w.seq_first, w.seq_last, w.nmsgs,
	    names[0], w.seq_last), "batch end");
	assert_string_equal(nftbatch_what(w.seq_first, w.seq_last, w.nmsgs,
	    names[0], SEQ - 1), "unknown message");
	assert_string_equal(nftbatch_what(w.seq_first, w.seq_last, w.nmsgs,
	    names[0], w.seq_last + 1), "unknown message");
	/* nothing recorded: no name is read */
	assert_string_equal(nftbatch_what(SEQ, SEQ + 3, 0, NULL, SEQ + 1),
	    "unknown message");
	nftnl_chain_list_free(l);
	free(w.buf);
}

/* hostile: more objects than the batch may carry acknowledgements for. */
static void
test_refuses_more_messages_than_its_bound(void **state)
{
	struct nftnl_chain_list *l = chains();
	struct nftbatch w;
	char err[256];

	(void)state;
	writer(&w, names, 3, NFTRULES_MSG_MAX, err, sizeof(err));
	w.grow = 1;
	assert_int_equal(nftbatch_begin(&w, SEQ), 0);
	assert_int_equal(nftbatch_replace_table(&w, "t"), 0);
	assert_int_equal(nftbatch_chains(&w, l), -1);
	assert_string_equal(err, "more than 3 messages in one batch");
	assert_int_equal(w.nmsgs, 3);
	nftnl_chain_list_free(l);
	free(w.buf);
}

/* hostile: a message longer than the room it was given is refused after
 * the fact (the buffer here is large, so nothing is overrun). */
static void
test_refuses_message_over_its_room(void **state)
{
	struct nftbatch w;
	char buf[4096], err[256];

	(void)state;
	/* begin is a bare header and fits 20 bytes; a table message does
	 * not */
	writer(&w, names, NFTRULES_MAX_MSGS, 20, err, sizeof(err));
	w.buf = buf;
	w.size = sizeof(buf);
	assert_int_equal(nftbatch_begin(&w, SEQ), 0);
	assert_int_equal(nftbatch_table(&w, "t", NFT_MSG_NEWTABLE, 0, "add"),
	    -1);
	assert_non_null(strstr(err, "message for table inet t (add) is "));
	assert_non_null(strstr(err, "over the 20 reserved"));
	assert_int_equal(w.nmsgs, 0);
}

/* hostile: a fixed buffer without room for the next message, or none at
 * all. */
static void
test_refuses_fixed_buffer_too_small(void **state)
{
	struct nftbatch w;
	char buf[64], err[256];

	(void)state;
	writer(&w, names, NFTRULES_MAX_MSGS, NFTRULES_MSG_MAX, err,
	    sizeof(err));
	assert_int_equal(nftbatch_begin(&w, SEQ), -1);
	assert_string_equal(err, "batch buffer too small (0 bytes)");
	w.buf = buf;
	w.size = sizeof(buf);
	assert_int_equal(nftbatch_begin(&w, SEQ), -1);
	assert_string_equal(err, "batch buffer too small (64 bytes)");
	assert_int_equal(w.len, 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fixed_and_growing_buffers_write_the_same),
		cmocka_unit_test(test_names_each_sequence_number),
		cmocka_unit_test(test_refuses_more_messages_than_its_bound),
		cmocka_unit_test(test_refuses_message_over_its_room),
		cmocka_unit_test(test_refuses_fixed_buffer_too_small),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
