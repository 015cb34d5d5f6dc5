/* egress-guardctl tenant add|remove|list (ctl/tenant.h): thin calls of
 * the control API through ctl/client.c. The id is the one thing read
 * here, because it goes into the request's path: only the id grammar
 * may (policy_tenant_id_ok). Whether the rest of the spec is valid is
 * the guard's to say (400 malformed, the key named). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "ctl/cli.h"
#include "ctl/client.h"
#include "ctl/tenant.h"
#include "policy/policy.h"
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

static const char *const names[] = { "--control", "--guard-uid", NULL };

static int
tenant_add(int argc, char **argv)
{
	struct cli_opts o = { "tenant add", CTLTENANT_ADD_ARGS, names,
	    { NULL }, NULL, 1 };
	char err[1024], id[POLICY_TENANT_MAX + 1], target[CTLCLIENT_TARGET_MAX];
	char *buf;
	size_t len;
	long uid;
	int rc;

	if ((rc = ctlclient_parse_args(argc, argv, &o, "SPEC.json", &uid)) != 0)
		return rc;
	if ((buf = file_read(o.operand, CTLTENANT_SPEC_MAX, 0, &len, err,
	    sizeof(err))) == NULL) {
		fprintf(stderr, "%s: tenant add: %s\n", CLI_PROG, err);
		return CLI_EXIT_USAGE;
	}
	if (ctltenant_spec_id(buf, len, id, err, sizeof(err)) == -1 ||
	    ctlclient_tenant_target(target, sizeof(target), id, "") == -1) {
		fprintf(stderr, "%s: tenant add: %s: %s\n", CLI_PROG, o.operand,
		    err);
		free(buf);
		return CLI_EXIT_USAGE;
	}
	/* The file's bytes as they are: the guard parses what was written. */
	rc = ctlclient_call(o.cmd, o.vals[0], uid, "PUT", target, buf, len);
	free(buf);
	return rc;
}

static int
tenant_remove(int argc, char **argv)
{
	struct cli_opts o = { "tenant remove", CTLTENANT_REMOVE_ARGS, names,
	    { NULL }, NULL, 1 };
	char target[CTLCLIENT_TARGET_MAX];
	long uid;
	int rc;

	if ((rc = ctlclient_parse_args(argc, argv, &o, "ID", &uid)) != 0)
		return rc;
	if (ctlclient_tenant_target(target, sizeof(target), o.operand, "") == -1)
		return cli_usage_error(o.cmd, o.usage, CLI_TENANT_ID_RULE,
		    o.operand);
	return ctlclient_call(o.cmd, o.vals[0], uid, "DELETE", target, NULL, 0);
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
	return ctlclient_call(o.cmd, o.vals[0], uid, "GET", "/v1/tenants", NULL,
	    0);
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
