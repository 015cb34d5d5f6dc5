/* egress-guardctl tenant add|remove|list: a tenant-mode guard's tenants
 * over its control socket (docs/design.md "Control API", issue 33), and
 * the request targets and calls of push and status --tenant. The guard
 * checks a spec; this side reads only its id, for the path. Above
 * ctl/client.h, below ctl/push.h. */
#ifndef EG_CTL_TENANT_H
#define EG_CTL_TENANT_H

#include <stddef.h>

/* Each command's arguments after its name, and the whole usage. */
#define CTLTENANT_ADD_ARGS	"--control PATH [--guard-uid N] " \
	"[--nft-netns NS] SPEC.json"
#define CTLTENANT_REMOVE_ARGS	"--control PATH [--guard-uid N] " \
	"[--nft-netns NS] ID"
#define CTLTENANT_LIST_ARGS	"--control PATH [--guard-uid N]"
#define CTLTENANT_USAGE		"add " CTLTENANT_ADD_ARGS "\n" \
	"       egress-guardctl tenant remove " CTLTENANT_REMOVE_ARGS "\n" \
	"       egress-guardctl tenant list " CTLTENANT_LIST_ARGS "\n" \
	"       (exit 1: refused by the guard, its reason on stdout)"
/* A spec is nine short keys (~200 bytes); a file beyond this is no spec. */
#define CTLTENANT_SPEC_MAX	(64u * 1024)
/* A request target: "/v1/tenants/" + an id + "/policy" fits. */
#define CTLTENANT_TARGET_MAX	64

/* The "id" of a tenant spec (a JSON object, no duplicate key) into id
 * (POLICY_TENANT_MAX + 1 bytes): 0, or -1 with err when buf is no JSON
 * object or its "id" is absent, no string, or no tenant id. Pure. */
int ctltenant_spec_id(const char *buf, size_t len, char *id, char *err,
    size_t errlen);

/* "/v1" + rest, or with tenant "/v1/tenants/TENANT" + rest, into out.
 * -1 when tenant is no tenant id (policy_tenant_id_ok: nothing but the
 * id grammar reaches the request line) or out is too small. Pure. */
int ctltenant_target(char *out, size_t outlen, const char *tenant,
    const char *rest);

/* One call of a subcommand that shows the guard's answer (status
 * --tenant, tenant add|remove|list): method target with the len bytes of
 * body, the answer's body on stdout (the guard's JSON error included).
 * Exit status: 0 on 2xx printed, CLI_EXIT_FAIL on 4xx (refused: the
 * reason is in the body), CLI_EXIT_USAGE otherwise (unreachable, another
 * status, the answer not written); cmd names the command on stderr.
 * *status (when not NULL) gets the HTTP status of an answer read. */
int ctltenant_call(const char *cmd, const char *control, long guard_uid,
    const char *method, const char *target, const char *body, size_t len,
    int *status);

/* status --tenant ID: GET /v1/tenants/ID/status by ctltenant_call. */
int ctltenant_status(const char *cmd, const char *control, long guard_uid,
    const char *tenant);

/* tenant add SPEC.json: PUT /v1/tenants/ID with the file's bytes;
 * remove ID: DELETE /v1/tenants/ID; list: GET /v1/tenants. The answer's
 * body on stdout; exit 0 on 2xx, 1 on 4xx (refused), 2 on usage, a bad
 * spec file, an unreachable guard or any other answer. With --nft-netns
 * NS, add and remove then apply the guard-side table (`egress-guard nft
 * tenants`, its lines on stderr) from the guard's list into NS; when
 * that fails, exit 2, and a tenant the add created is removed again
 * (fail closed: no tenant serves on a link the table does not fence).
 * argv[0] is "tenant". */
int ctltenant_cmd(int argc, char **argv);

#endif
