/* Policy authority: which policy may become active. Verifies bundles
 * against the trusted public keys, enforces the epoch rule (never
 * backwards; the same epoch only with the same digest), and keeps the last
 * accepted bundle in --state-dir so the floor survives a restart. Holds no
 * private key. */
#ifndef EG_PLANE_H
#define EG_PLANE_H

#include <stddef.h>

struct config;
struct policy;
struct plane;

enum plane_verdict {
	PLANE_OK = 0,		/* new policy: install it */
	PLANE_SAME,		/* same epoch and digest as active: nothing to do */
	PLANE_MALFORMED,	/* 400 */
	PLANE_UNKNOWN_KEY,	/* 403 */
	PLANE_BAD_SIGNATURE,	/* 403 */
	PLANE_STALE_EPOCH,	/* 409: lower epoch */
	PLANE_EPOCH_CONFLICT,	/* 409: same epoch, other digest */
	PLANE_STORE_FAILED	/* 500: could not persist; nothing changed */
};

const char *plane_verdict_name(enum plane_verdict v);	/* "stale_epoch", … */
int plane_verdict_status(enum plane_verdict v);		/* HTTP status */

/* Loads --trust-key files. NULL with err on a bad key file. */
struct plane *plane_new(const struct config *cfg, char *err, size_t errlen);
void plane_free(struct plane *pl);

/* Start-up: reads --state-dir's bundle (if any) and --policy (if any) and
 * picks the policy to run, never below the persisted floor. *out is NULL
 * when there is none. Returns 0, or -1 with err (exit 2). Warnings (a
 * stale --policy ignored) go to warn. */
int plane_start(struct plane *pl, struct policy **out, char *warn, size_t warnlen,
    char *err, size_t errlen);

/* A bundle from the control socket. On PLANE_OK *out is the new policy
 * (already persisted); the caller installs it with plane_installed. */
enum plane_verdict plane_push(struct plane *pl, const char *buf, size_t len,
    struct policy **out, char *err, size_t errlen);

/* SIGHUP: reloads --policy with the same checks as a push. */
enum plane_verdict plane_reload(struct plane *pl, struct policy **out,
    char *err, size_t errlen);

/* Records that p is now active: it becomes the floor. */
void plane_installed(struct plane *pl, const struct policy *p);

/* For status: the number of trusted keys, and the key id of the signer of
 * the active policy ("" for an unsigned operator file). */
size_t plane_trusted_keys(const struct plane *pl);
const char *plane_signer(const struct plane *pl);

#endif
