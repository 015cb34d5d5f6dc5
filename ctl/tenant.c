/* egress-guardctl tenant add|remove|list (ctl/tenant.h), and the tenant
 * side of push and status (ctl/push.c): thin calls of the control API
 * through ctl/client.c, which is below this file and never includes it.
 * The id is the one thing read here, because it goes into the request's
 * path: only the id grammar may (policy_tenant_id_ok). Whether the rest
 * of the spec is valid is the guard's to say (400 malformed, the key
 * named). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "ctl/cli.h"
#include "ctl/client.h"
#include "ctl/tenant.h"
#include "nft/nftcmd.h"
#include "policy/policy.h"
#include "policy/tspec.h"
#include "util/errbuf.h"
#include "util/file.h"

int
ctltenant_spec_id(const char *buf, size_t len, char *id, char *err,
    size_t errlen)
{
	char shown[ERRBUF_SHOW_BUF];
	json_error_t jerr;
	json_t *root, *v;
	const char *s;
	size_t n;
	int rc = -1;

	if ((root = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &jerr)) == NULL)
		return errbuf_fail(err, errlen, "invalid JSON at line %d column "
		    "%d: %s", jerr.line, jerr.column, errbuf_show(jerr.text,
		    strnlen(jerr.text, sizeof(jerr.text)), shown));
	if (!json_is_object(root)) {
		errbuf_set(err, errlen, "a tenant spec is a JSON object");
		goto out;
	}
	if (!json_is_string(v = json_object_get(root, "id"))) {
		errbuf_set(err, errlen, "no string \"id\": a tenant spec names "
		    "its tenant");
		goto out;
	}
	s = json_string_value(v);
	n = json_string_length(v);
	if (!policy_tenant_id_ok(s, n)) {
		errbuf_set(err, errlen, "id \"%s\": %s", errbuf_show(s, n, shown),
		    CLI_TENANT_ID_RULE);
		goto out;
	}
	memcpy(id, s, n);
	id[n] = '\0';
	rc = 0;
out:
	json_decref(root);
	return rc;
}

int
ctltenant_target(char *out, size_t outlen, const char *tenant,
    const char *rest)
{
	int n;

	/* The id is a path segment: only the id grammar may get there, never
	 * a '/', '?', space or line break of a caller's argument. */
	if (tenant == NULL)
		n = snprintf(out, outlen, "/v1%s", rest);
	else if (!policy_tenant_id_ok(tenant, strlen(tenant)))
		return -1;
	else
		n = snprintf(out, outlen, "/v1/tenants/%s%s", tenant, rest);
	return n < 0 || (size_t)n >= outlen ? -1 : 0;
}


int
ctltenant_call(const char *cmd, const char *control, long guard_uid,
    const char *method, const char *target, const char *body, size_t len,
    int *status)
{
	struct ctlclient_response r = { 0, NULL, 0 };
	char err[1024];
	int rc = CLI_EXIT_USAGE;

	/* A tenant list may be thousands of specs (TSPEC_MAX). */
	if ((strcmp(method, "GET") == 0 ? ctlclient_get(control, guard_uid,
	    target, TSPEC_LIST_MAX_BYTES, &r, err, sizeof(err)) :
	    ctlclient_request(control, guard_uid, method, target, body, len, &r,
	    err, sizeof(err))) == -1) {
		fprintf(stderr, "%s: %s: %s\n", CLI_PROG, cmd, err);
		return CLI_EXIT_USAGE;
	}
	/* The guard's answer, its {"error":…,"message":…} included: what a
	 * script reads to tell why. */
	if (ctlclient_print_body(&r) == -1) {
		if (r.status >= 200 && r.status < 300)
			fprintf(stderr, "%s: %s: %s answered %d: it took effect, "
			    "but its answer was not printed\n", CLI_PROG, cmd,
			    control, r.status);
		goto out;
	}
	if (status != NULL)
		*status = r.status;
	if (r.status >= 200 && r.status < 300) {
		rc = 0;
	} else if (r.status >= 400 && r.status < 500) {
		fprintf(stderr, "%s: %s: refused by %s (HTTP %d)\n", CLI_PROG, cmd,
		    control, r.status);
		rc = CLI_EXIT_FAIL;
	} else {
		fprintf(stderr, "%s: %s: %s answered HTTP %d\n", CLI_PROG, cmd,
		    control, r.status);
	}
out:
	free(r.body);
	return rc;
}

/* One tenant's: the exit status of every tenant call. */
int
ctltenant_status(const char *cmd, const char *control, long guard_uid,
    const char *tenant)
{
	char target[CTLTENANT_TARGET_MAX];

	if (ctltenant_target(target, sizeof(target), tenant, "/status") == -1)
		return CLI_EXIT_USAGE;
	return ctltenant_call(cmd, control, guard_uid, "GET", target, NULL, 0,
	    NULL);
}

static const char *const names[] = { "--control", "--guard-uid", NULL };
/* add and remove: and the guard-side table after the change. */
static const char *const fence_names[] = { "--control", "--guard-uid",
	"--nft-netns", NULL };

/* --nft-netns NS: the guard-side table (`nft tenants`) from the guard's
 * own list as it stands after the change (GET /v1/tenants), so that no
 * tenant's link goes unfenced until someone remembers the step. 0, or
 * CLI_EXIT_USAGE with the message printed. */
static int
fence(const char *cmd, const char *control, long guard_uid,
    const char *netns)
{
	struct ctlclient_response r = { 0, NULL, 0 };
	struct tspec *v = NULL;
	char err[1024];
	size_t n = 0;
	int rc = CLI_EXIT_USAGE;

	if (ctlclient_get(control, guard_uid, "/v1/tenants",
	    TSPEC_LIST_MAX_BYTES, &r, err, sizeof(err)) == -1)
		fprintf(stderr, "%s: %s: the tenant list: %s\n", CLI_PROG, cmd,
		    err);
	else if (r.status != 200)
		fprintf(stderr, "%s: %s: the tenant list: %s answered HTTP %d\n",
		    CLI_PROG, cmd, control, r.status);
	else if (tspec_list_parse(r.body, r.body_len, &v, &n, err,
	    sizeof(err)) == -1)
		fprintf(stderr, "%s: %s: the tenant list: %s\n", CLI_PROG, cmd,
		    err);
	else if (nftcmd_tenants_apply("tenants", netns, v, n) == 0)
		rc = 0;
	free(v);
	free(r.body);
	return rc;
}

static int
tenant_add(int argc, char **argv)
{
	struct cli_opts o = { "tenant add", CTLTENANT_ADD_ARGS, fence_names,
	    { NULL }, NULL, 1 };
	struct ctlclient_response r = { 0, NULL, 0 };
	char err[1024], id[POLICY_TENANT_MAX + 1], target[CTLTENANT_TARGET_MAX];
	char *buf;
	size_t len;
	long uid;
	int rc, st = 0;

	if ((rc = ctlclient_parse_args(argc, argv, &o, "SPEC.json", &uid)) != 0)
		return rc;
	if ((buf = file_read(o.operand, CTLTENANT_SPEC_MAX, 0, &len, err,
	    sizeof(err))) == NULL) {
		fprintf(stderr, "%s: tenant add: %s\n", CLI_PROG, err);
		return CLI_EXIT_USAGE;
	}
	if (ctltenant_spec_id(buf, len, id, err, sizeof(err)) == -1 ||
	    ctltenant_target(target, sizeof(target), id, "") == -1) {
		fprintf(stderr, "%s: tenant add: %s: %s\n", CLI_PROG, o.operand,
		    err);
		free(buf);
		return CLI_EXIT_USAGE;
	}
	/* The file's bytes as they are: the guard parses what was written. */
	rc = ctltenant_call(o.cmd, o.vals[0], uid, "PUT", target, buf, len,
	    &st);
	free(buf);
	if (rc != 0 || o.vals[2] == NULL || fence(o.cmd, o.vals[0], uid,
	    o.vals[2]) == 0)
		return rc;
	/* Fail closed: a tenant this call added is taken back rather than
	 * left serving on a link the table does not fence. One that was
	 * there before (200 unchanged) keeps the table it had. */
	if (st != 201) {
		fprintf(stderr, "%s: %s: tenant %s was already there; the table "
		    "was not re-applied\n", CLI_PROG, o.cmd, id);
	} else if (ctlclient_request(o.vals[0], uid, "DELETE", target, NULL, 0,
	    &r, err, sizeof(err)) == 0 && r.status == 200) {
		fprintf(stderr, "%s: %s: tenant %s removed again: its link "
		    "would not be fenced\n", CLI_PROG, o.cmd, id);
	} else {
		fprintf(stderr, "%s: %s: tenant %s is added but NOT fenced, and "
		    "could not be removed again: remove it (tenant remove) or "
		    "apply the table (egress-guard nft tenants)\n", CLI_PROG,
		    o.cmd, id);
	}
	free(r.body);
	return CLI_EXIT_USAGE;
}

static int
tenant_remove(int argc, char **argv)
{
	struct cli_opts o = { "tenant remove", CTLTENANT_REMOVE_ARGS,
	    fence_names, { NULL }, NULL, 1 };
	char target[CTLTENANT_TARGET_MAX];
	long uid;
	int rc;

	if ((rc = ctlclient_parse_args(argc, argv, &o, "ID", &uid)) != 0)
		return rc;
	if (ctltenant_target(target, sizeof(target), o.operand, "") == -1)
		return cli_usage_error(o.cmd, o.usage, CLI_TENANT_ID_RULE,
		    o.operand);
	rc = ctltenant_call(o.cmd, o.vals[0], uid, "DELETE", target, NULL, 0,
	    NULL);
	if (rc != 0 || o.vals[2] == NULL || fence(o.cmd, o.vals[0], uid,
	    o.vals[2]) == 0)
		return rc;
	/* Removed, but its entries stay in the table: harmless (nothing
	 * listens there now) yet not what the table should say. */
	fprintf(stderr, "%s: %s: tenant %s removed; the table still names "
	    "it\n", CLI_PROG, o.cmd, o.operand);
	return CLI_EXIT_USAGE;
}

static int
tenant_list(int argc, char **argv)
{
	struct cli_opts o = { "tenant list", CTLTENANT_LIST_ARGS, names,
	    { NULL }, NULL, 0 };
	long uid;
	int rc;

	if ((rc = ctlclient_parse_args(argc, argv, &o, "", &uid)) != 0)
		return rc;
	return ctltenant_call(o.cmd, o.vals[0], uid, "GET", "/v1/tenants", NULL,
	    0, NULL);
}

int
ctltenant_cmd(int argc, char **argv)
{
	if (argc >= 2 && strcmp(argv[1], "add") == 0)
		return tenant_add(argc - 1, argv + 1);
	if (argc >= 2 && strcmp(argv[1], "remove") == 0)
		return tenant_remove(argc - 1, argv + 1);
	if (argc >= 2 && strcmp(argv[1], "list") == 0)
		return tenant_list(argc - 1, argv + 1);
	return cli_usage_error("tenant", CTLTENANT_USAGE, argc < 2 ?
	    "missing add, remove or list" : "unknown tenant command",
	    argc < 2 ? NULL : argv[1]);
}
