/* egress-guardctl receipt show RECEIPT [--attesters DIR]: what a receipt
 * certifies, fact by fact, in plain text. A person deciding whether to
 * trust a grade reads here which cases it rests on and what each negative
 * control saw; `receipt verify` and `admit` decide, this only explains.
 * The CLI layer: it prints. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "conform/receipt.h"
#include "conform/suite.h"
#include "ctl/cli.h"
#include "ctl/receiptcmd.h"
#include "ctl/receiptshow.h"
#include "plane/bundle.h"
#include "util/errbuf.h"
#include "util/file.h"

/* The signer line: checked against DIR when given, else said unchecked. */
static void
show_signer(const char *buf, size_t len, const struct receipt_view *rv,
    const struct suite_set *suites, const char *dir)
{
	struct bundle_keyring *kr;
	struct receipt_verdict v;
	struct receipt_check chk;
	char err[1024];
	const char *hash;

	printf("signer:   %s", rv->key_id);
	if (dir == NULL) {
		printf(" (not checked: give --attesters DIR)\n");
		return;
	}
	if ((kr = bundle_keyring_new()) == NULL ||
	    receiptcmd_load_attesters(kr, dir, err, sizeof(err)) == -1) {
		printf(" (attesters unreadable)\n");
		bundle_keyring_free(kr);
		return;
	}
	/* Only who signed and whether it verifies: the revision is checked
	 * against itself and age is not judged here. */
	hash = rv->revision + strlen(rv->revision) - RECEIPT_SHA256_HEX;
	chk = (struct receipt_check){ suites, hash, (long long)time(NULL),
	    (long long)RECEIPT_MAX_AGE_LIMIT * 86400 };
	if (receipt_verify(kr, buf, len, &chk, &v, err, sizeof(err)) == -1)
		printf(" (malformed: %s)\n", err);
	else if (v.reason == RECEIPT_UNTRUSTED_SIGNER)
		printf(" (NOT among the attesters in %s)\n", dir);
	else if (v.reason == RECEIPT_BAD_SIGNATURE)
		printf(" (signature does NOT verify)\n");
	else
		printf(" (an attester in %s; the signature verifies)\n", dir);
	bundle_keyring_free(kr);
}

/* Whether fact f holds as verify grades it: its suite's cases prove it
 * and the attester signed it true. */
static int
fact_true(const struct receipt_view *rv, size_t f)
{
	return rv->grade->proved[f] && rv->signed_facts[f] == 1;
}

/* One fact: its verdict, then each case its suite requires. Evidence is
 * the harness's text, signed but not trusted to be printable. */
static void
show_fact(const struct receipt_view *rv, size_t f)
{
	const struct suite_grade *g = rv->grade;
	const struct suite_case *c;
	char ev[ERRBUF_SHOW_BUF];
	size_t i;

	printf("\nfact %s: %s (%zu of %zu required cases pass%s)\n",
	    receipt_fact_name(f), fact_true(rv, f) ? "TRUE" : "FALSE",
	    g->npass[f], g->nrequired[f], g->proved[f] && !fact_true(rv, f) ?
	    "; the receipt does not sign it true" : "");
	for (i = 0; i < g->ncases; i++) {
		c = &g->cases[i];
		if (c->fact != f)
			continue;
		if (c->evidence != NULL)
			errbuf_show(c->evidence, strlen(c->evidence), ev);
		if (c->status == SUITE_CASE_PASS)
			printf("  pass     %-12s control reached: %s\n", c->id, ev);
		else if (c->status == SUITE_CASE_MISSING)
			printf("  MISSING  %-12s not in the receipt\n", c->id);
		else
			printf("  NO       %-12s %s (verdict %s; evidence: %s; "
			    "wanted: %s ...)\n", c->id,
			    suite_status_name(c->status),
			    c->verdict != NULL ? c->verdict : "-",
			    c->evidence != NULL && c->evidence[0] != '\0' ?
			    ev : "none", c->kind);
	}
}

int
receiptshow_cmd(int argc, char **argv)
{
	static const char *const names[] = { "--attesters", NULL };
	struct cli_opts o = { "receipt", RECEIPTCMD_RECEIPT_USAGE, names,
	    { NULL }, NULL, 1 };
	struct suite_set suites = { NULL, 0 };
	struct receipt_view rv;
	char err[1024], *buf = NULL;
	size_t len, f, ntrue = 0;
	int rc;

	memset(&rv, 0, sizeof(rv));
	if ((rc = cli_parse_opts(argc, argv, 1, &o)) != 0)
		return rc;
	if (o.operand == NULL)
		return cli_usage_error("receipt", RECEIPTCMD_RECEIPT_USAGE,
		    "missing RECEIPT", NULL);
	rc = CLI_EXIT_USAGE;
	if ((buf = file_read(o.operand, RECEIPT_MAX_BYTES, 0, &len, err,
	    sizeof(err))) == NULL) {
		fprintf(stderr, "%s: receipt show: %s\n", CLI_PROG, err);
		goto out;
	}
	if (suite_builtin_load(&suites, err, sizeof(err)) == -1) {
		fprintf(stderr, "%s: receipt show: %s\n", CLI_PROG, err);
		rc = CLI_EXIT_FAIL;
		goto out;
	}
	if (receipt_view_open(buf, len, &suites, &rv, err, sizeof(err)) == -1) {
		fprintf(stderr, "%s: receipt show: %s: malformed receipt: %s\n",
		    CLI_PROG, o.operand, err);
		goto out;
	}
	printf("receipt:  %s\n", o.operand);
	show_signer(buf, len, &rv, &suites, o.vals[0]);
	printf("binary:   %s\n", rv.revision);
	printf("ran at:   %s\n", rv.ran_at);
	printf("suite:    %s version %lld, sha256:%s", rv.suite_id,
	    rv.suite_version, rv.suite_digest);
	if (!rv.suite_known) {
		printf("\n          NOT a suite this program knows: no fact can be "
		    "graded true\n");
	} else {
		printf(" (known)\n");
		for (f = 0; f < RECEIPT_NFACTS; f++) {
			show_fact(&rv, f);
			ntrue += (size_t)fact_true(&rv, f);
		}
	}
	printf("\n%zu of %d facts proved by the suite's cases; the grade also "
	    "needs a trusted signer, the binary and its age: receipt verify\n",
	    ntrue, RECEIPT_NFACTS);
	rc = cli_print_all("", 0) == -1 ? CLI_EXIT_FAIL : 0;
out:
	receipt_view_free(&rv);
	suite_set_free(&suites);
	free(buf);
	return rc;
}
