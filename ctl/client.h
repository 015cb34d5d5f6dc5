/* A small blocking HTTP/1.1 client for the guard's control socket
 * (docs/design.md "Control API"), and what egress-guardctl's subcommands
 * that call it share: their arguments, their answer on stdout. Blocking is
 * fine: this is the CLI, never the guard. The lowest ctl layer but cli.h:
 * ctl/push.c and ctl/tenant.c include it, never the other way. */
#ifndef EG_CTL_CLIENT_H
#define EG_CTL_CLIENT_H

#include <stddef.h>

#define CTLCLIENT_HEAD_MAX	(16u * 1024)	/* response status line + headers */
#define CTLCLIENT_BODY_MAX	(1u << 20)	/* response body */
#define CTLCLIENT_TIMEOUT_S	10		/* per send/receive call */
/* GET /v1/policy's answer holds the canonical bytes: those of a pushed
 * policy are at most 3/4 of a bundle. A larger --policy file cannot be
 * read back, and push --no-widen then refuses to go on. */
#define CTLCLIENT_POLICY_MAX	(16u << 20)

struct ctlclient_response {
	int	 status;	/* 100-599 */
	char	*body;		/* malloc'd, NUL-terminated, chunking removed */
	size_t	 body_len;
};

/* Parses the response in buf[0..len). eof says the peer has closed, so a
 * body without Content-Length ends here. Returns 1 when the response is
 * complete (r filled; free r->body), 0 when more bytes are needed, -1 on
 * a malformed or oversized response with err set. Pure: no I/O. */
int ctlclient_parse_response(const char *buf, size_t len, int eof,
    struct ctlclient_response *r, char *err, size_t errlen);

/* Sends one request over the AF_UNIX stream socket at sock_path and reads
 * the answer (body may be NULL when body_len is 0; it is then sent without
 * Content-Type). The socket must be served by root, by this process's
 * user or by guard_uid (-1: none), by SO_PEERCRED, before anything is
 * sent. Returns 0 with r filled, or -1 with err naming the path. */
int ctlclient_request(const char *sock_path, long guard_uid, const char *method,
    const char *target, const char *body, size_t body_len,
    struct ctlclient_response *r, char *err, size_t errlen);

/* A GET whose answer may hold up to answer_max bytes (a tenant list of
 * thousands), as ctlclient_request. */
int ctlclient_get(const char *sock_path, long guard_uid, const char *target,
    size_t answer_max, struct ctlclient_response *r, char *err,
    size_t errlen);

/* ctlclient_request, which calls sent(arg) (when not NULL) once the last
 * byte of body is sent: work to do while the guard works on it. */
int ctlclient_request_then(const char *sock_path, long guard_uid,
    const char *method, const char *target, const char *body, size_t body_len,
    void (*sent)(void *), void *arg, struct ctlclient_response *r, char *err,
    size_t errlen);

/* 0 when the JSON answer r to a push names exactly the digest want
 * ("sha256:…"), else -1 with err. Pure. */
int ctlclient_check_pushed(const struct ctlclient_response *r, const char *want,
    char *err, size_t errlen);

/* The SHA-256 (hex, CTLCLIENT_SHA256_HEX digits and a NUL into hex) of
 * the binary the guard at sock_path runs, from its GET /v1/status.
 * Returns 0, or -1 with err: unreachable, not the guard, or no hash. */
#define CTLCLIENT_SHA256_HEX	64
int ctlclient_binary_sha256(const char *sock_path, long guard_uid, char *hex,
    char *err, size_t errlen);

struct policy;

/* The policy the guard at sock_path runs now: GET target (/v1/policy,
 * or a tenant's, ctltenant_target), its "policy" read back and its
 * digest checked against the "digest" the guard names. 0 with *out
 * (NULL: the guard runs no policy, which denies everything), or -1 with
 * err. */
int ctlclient_fetch_policy(const char *sock_path, long guard_uid,
    const char *target, struct policy **out, char *err, size_t errlen);

struct cli_opts;

/* Parses [OPERAND] --control PATH [--guard-uid N] [--tenant ID] into o
 * (vals by index: control, guard-uid, tenant, whichever of them o->names
 * lists; o->want_operand says whether an operand, named what in the
 * message, is expected). *guard_uid comes from --guard-uid, else
 * EG_GUARD_UID, else -1 (root and this user only). A --tenant that is no
 * tenant id is a usage error. Returns 0 or an exit status. */
int ctlclient_parse_args(int argc, char **argv, struct cli_opts *o,
    const char *what, long *guard_uid);

/* r's body on stdout, newline-terminated: 0, or -1 when it was not all
 * written. */
int ctlclient_print_body(const struct ctlclient_response *r);

#endif
