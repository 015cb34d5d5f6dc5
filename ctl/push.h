/* egress-guardctl push and status: a signed bundle to the guard, and its
 * state, over its control socket (docs/design.md "Control API"). */
#ifndef EG_CTL_PUSH_H
#define EG_CTL_PUSH_H

#define CTLPUSH_PUSH_USAGE	"BUNDLE --control PATH [--guard-uid N] [--tenant ID] [--no-widen]"
#define CTLPUSH_STATUS_USAGE	"--control PATH [--guard-uid N] [--tenant ID]"

/* push BUNDLE --control PATH: PUT /v1/policy. With --no-widen, first
 * CLI_EXIT_WIDENS (nothing sent) when the bundle's policy admits a
 * destination the guard's does not (ctl/diff.h), 1 when that cannot be
 * told. Prints the answer's body;
 * exit 0 on a 200 that names the pushed bundle's digest, 1 on 403 or 409
 * (refused), 2 otherwise: the guard cannot be reached, the socket is
 * served by another uid, or a 200 names another digest. With --tenant
 * ID: PUT /v1/tenants/ID/policy (--no-widen reads GET
 * /v1/tenants/ID/policy), and 404 is a refusal (1) too. status --control
 * PATH: GET /v1/status; exit 0 on 200, 2 otherwise; with --tenant ID
 * GET /v1/tenants/ID/status, exit status as ctltenant_call. argv[0] is
 * the subcommand name. */
int ctlpush_cmd_push(int argc, char **argv);
int ctlpush_cmd_status(int argc, char **argv);

#endif
