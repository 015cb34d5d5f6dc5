/* egress-guardctl push and status (ctl/push.h): the guard's policy and
 * state over its control socket, through ctl/client.c's HTTP client; the
 * request target of a --tenant comes from ctl/tenant.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl/cli.h"
#include "ctl/client.h"
#include "ctl/diff.h"
#include "ctl/push.h"
#include "ctl/tenant.h"
#include "plane/bundle.h"
#include "plane/bundlepeek.h"
#include "policy/policy.h"
#include "util/file.h"

static const char *const names[] = {
	"--control", "--guard-uid", "--tenant", NULL
};

/* The digest the guard must answer a push with. Computed once the bundle
 * is sent, while the guard verifies and installs it: on a 100,000-entry
 * bundle that is ~10 ms of decoding and hashing the push no longer waits
 * for. Bytes that hold no bundle are still sent (the guard says why it
 * refuses them), but no success can be believed for them: digest "". */
struct push_digest {
	const char	*buf;
	size_t		 len;
	char		 digest[POLICY_DIGEST_LEN + 1];
	char		 why[512];
};

static void
push_digest(void *arg)
{
	struct push_digest *d = arg;

	if (bundlepeek_digest(d->buf, d->len, d->digest, d->why,
	    sizeof(d->why)) == -1)
		d->digest[0] = '\0';
}

/* push --no-widen: refuses (CLI_EXIT_WIDENS) a bundle whose policy
 * admits a destination the guard's policy of now does not, with the
 * difference on stderr; 0 to go on, or an exit status. The guard's
 * policy is read when the push starts: a push by someone else in
 * between is not seen (the epoch rule still orders the two). target is
 * the push's own (ctltenant_target, "/policy"): the policy it replaces. */
static int
no_widen(const char *path, const char *buf, size_t len, const char *control,
    long guard_uid, const char *tenant, const char *target)
{
	struct policy *cur = NULL, *next;
	struct ctldiff_sum sum;
	char err[1024];

	if ((next = bundlepeek_policy(buf, len, NULL, err, sizeof(err))) == NULL) {
		fprintf(stderr, "%s: push: %s: %s\n", CLI_PROG, path, err);
		return CLI_EXIT_USAGE;
	}
	if (ctlclient_fetch_policy(control, guard_uid, target, &cur, err,
	    sizeof(err)) == -1) {
		fprintf(stderr, "%s: push: --no-widen: cannot tell what the guard "
		    "runs: %s\n", CLI_PROG, err);
		policy_free(next);
		return CLI_EXIT_FAIL;
	}
	ctldiff_compare(cur, next, NULL, &sum);
	if (sum.widens) {
		fprintf(stderr, "%s: push: %s: refused (--no-widen): it admits "
		    "what %s runs now%s%s (%s) does not, or is for another "
		    "tenant:\n", CLI_PROG, path, control, tenant != NULL ?
		    " for tenant " : "", tenant != NULL ? tenant : "",
		    cur != NULL ? policy_digest(cur) : "no policy");
		ctldiff_compare(cur, next, stderr, &sum);
		ctldiff_verdict(&sum, cur, next, stderr);
	}
	policy_free(cur);
	policy_free(next);
	return sum.widens ? CLI_EXIT_WIDENS : 0;
}

/* Takes the flag --no-widen out of argv (before any "--"): 1 when it
 * was there (more than once is a usage error, -1). */
static int
take_flag(int *argc, char **argv, const char *flag)
{
	int i, j, seen = 0;

	for (i = 1; i < *argc && strcmp(argv[i], "--") != 0; i++) {
		if (strcmp(argv[i], flag) != 0)
			continue;
		if (seen++)
			return -1;
		for (j = i; j + 1 < *argc; j++)
			argv[j] = argv[j + 1];
		(*argc)--;
		i--;
	}
	return seen;
}

/* A push the guard refused for what it is: 403 (key, signature, or
 * wrong_tenant) or 409 (epoch, tenant_mode); with --tenant also 404 (no
 * such tenant, or not in tenant mode), which a plain push never meets. */
static int
refused(int status, const char *tenant)
{
	return status == 403 || status == 409 || (tenant != NULL && status == 404);
}

int
ctlpush_cmd_push(int argc, char **argv)
{
	struct cli_opts o = { argv[0], CTLPUSH_PUSH_USAGE, names,
	    { NULL }, NULL, 1 };
	int widen = take_flag(&argc, argv, "--no-widen");
	const char *path, *control, *tenant;
	struct ctlclient_response r = { 0, NULL, 0 };
	struct push_digest d = { NULL, 0, "", "" };
	char err[1024], why[512], *buf = NULL, target[CTLTENANT_TARGET_MAX];
	size_t len = 0;
	long guard_uid;
	int rc;

	if (widen == -1)
		return cli_usage_error(o.cmd, o.usage, "--no-widen given twice",
		    NULL);
	if ((rc = ctlclient_parse_args(argc, argv, &o, "BUNDLE", &guard_uid)) != 0)
		return rc;
	path = o.operand;
	control = o.vals[0];
	tenant = o.vals[2];
	rc = CLI_EXIT_USAGE;
	if (ctltenant_target(target, sizeof(target), tenant, "/policy") == -1)
		goto out;	/* checked by ctlclient_parse_args */
	/* The guard refuses more than BUNDLE_MAX_BYTES anyway: say so here
	 * rather than send it. */
	if ((buf = file_read(path, BUNDLE_MAX_BYTES, 0, &len, err, sizeof(err))) == NULL) {
		fprintf(stderr, "%s: push: %s\n", CLI_PROG, err);
		goto out;
	}
	if (len == 0) {
		fprintf(stderr, "%s: push: %s: empty\n", CLI_PROG, path);
		goto out;
	}
	if (widen == 1 && (rc = no_widen(path, buf, len, control,
	    guard_uid, tenant, target)) != 0)
		goto out;
	rc = CLI_EXIT_USAGE;
	d.buf = buf;
	d.len = len;
	if (ctlclient_request_then(control, guard_uid, "PUT", target, buf, len,
	    push_digest, &d, &r, err, sizeof(err)) == -1) {
		fprintf(stderr, "%s: push: %s\n", CLI_PROG, err);
		goto out;
	}
	if (r.status == 200 && (d.digest[0] == '\0' ||
	    ctlclient_check_pushed(&r, d.digest, why, sizeof(why)) == -1)) {
		fprintf(stderr, "%s: push: %s: %s answered 200 but %s: the push is "
		    "not confirmed\n", CLI_PROG, path, control, d.digest[0] == '\0' ?
		    "the file holds no bundle to compare with" : why);
		goto out;
	}
	/* The exit status says what the guard did; a lost output must not
	 * read as a refusal (1) to a script when the policy took effect. */
	if (ctlclient_print_body(&r) == -1) {
		if (r.status == 200)
			fprintf(stderr, "%s: push: %s: %s answered 200: the push "
			    "took effect, but its answer was not printed\n",
			    CLI_PROG, path, control);
		else if (refused(r.status, tenant))
			rc = CLI_EXIT_FAIL;
		goto out;
	}
	if (r.status == 200) {
		rc = 0;
	} else if (refused(r.status, tenant)) {
		fprintf(stderr, "%s: push: %s: refused by %s (HTTP %d)\n",
		    CLI_PROG, path, control, r.status);
		rc = CLI_EXIT_FAIL;
	} else {
		fprintf(stderr, "%s: push: %s: %s answered HTTP %d\n", CLI_PROG,
		    path, control, r.status);
	}
out:
	free(buf);
	free(r.body);
	return rc;
}

int
ctlpush_cmd_status(int argc, char **argv)
{
	struct cli_opts o = { argv[0], CTLPUSH_STATUS_USAGE, names,
	    { NULL }, NULL, 0 };
	struct ctlclient_response r = { 0, NULL, 0 };
	const char *control;
	char err[1024];
	long guard_uid;
	int rc;

	if ((rc = ctlclient_parse_args(argc, argv, &o, "BUNDLE", &guard_uid)) != 0)
		return rc;
	control = o.vals[0];
	if (o.vals[2] != NULL)
		return ctltenant_status(o.cmd, control, guard_uid, o.vals[2]);
	rc = CLI_EXIT_USAGE;
	if (ctlclient_request(control, guard_uid, "GET", "/v1/status", NULL, 0, &r,
	    err, sizeof(err)) == -1) {
		fprintf(stderr, "%s: status: %s\n", CLI_PROG, err);
		goto out;
	}
	if (ctlclient_print_body(&r) == -1)
		goto out;	/* 2, as the table says: 0 only for a 200 shown */
	if (r.status == 200)
		rc = 0;
	else
		fprintf(stderr, "%s: status: %s answered HTTP %d\n", CLI_PROG,
		    control, r.status);
out:
	free(r.body);
	return rc;
}
