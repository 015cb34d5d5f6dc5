/* Policy authority: which policy may become active. Verifies bundles
 * against the trusted public keys, enforces the epoch rule (never
 * backwards; the same epoch only with the same digest), and keeps the last
 * accepted bundle in --state-dir so the floor survives a restart. Holds no
 * private key.
 *
 * A pushed bundle, and --policy reloaded on SIGHUP, is checked on a thread
 * of its own (plane_check_*, plane_reload_start), so reading, verifying,
 * parsing and storing a large policy never stalls the event loop;
 * installing it stays on the loop. One check runs at a time. */
#ifndef EG_PLANE_H
#define EG_PLANE_H

#include <stddef.h>
#include <sys/types.h>

#include "plane/prule.h"

struct config;
struct policy;
struct plane;
struct plane_check;

const char *plane_verdict_name(enum plane_verdict v);	/* "stale_epoch", … */
int plane_verdict_status(enum plane_verdict v);		/* HTTP status */

/* Loads --trust-key files. owner is the uid the guard runs as (after any
 * --user): the state folder and its bundle may be root's or owner's,
 * no one else's. NULL with err on a bad key file. */
struct plane *plane_new(const struct config *cfg, uid_t owner, char *err,
    size_t errlen);
/* Call only with no check in flight (plane_check_finish joins it). */
void plane_free(struct plane *pl);

/* Start-up: opens --state-dir (creating the default one 0700), refuses a
 * folder, a bundle.json or a folder above that someone other than root or
 * the owner could change (util/safepath.h), reads the bundle (if any) and
 * --policy (if any) and picks the policy to run, never below the persisted
 * floor. A stored bundle signed by a key no longer trusted keeps its epoch
 * as the floor with no policy active (plane_floor_note says why). *out is
 * NULL when there is none. Returns 0, or -1 with err (exit 2). Warnings
 * (a stale --policy ignored) go to warn. */
int plane_start(struct plane *pl, struct policy **out, char *warn, size_t warnlen,
    char *err, size_t errlen);

/* A bundle from the control socket, checked on a new thread: signature,
 * canonical form, policy, epoch rule, then stored in --state-dir. body is
 * len bytes from malloc (no NUL needed), and the check takes it in every
 * case: the thread reads it in place and frees it, or it is freed at once
 * when the check cannot start. The caller copies nothing and must not
 * touch body again. When the work is done the thread writes an 8-byte 1
 * to notify_fd (an eventfd's increment) and the caller collects the
 * result with plane_check_finish. Returns PLANE_OK with *out set, or
 * PLANE_BUSY (a check is in flight) / PLANE_UNAVAILABLE (no memory, no
 * thread) with err; nothing changed then. */
enum plane_verdict plane_check_start(struct plane *pl, char *body, size_t len,
    int notify_fd, struct plane_check **out, char *err, size_t errlen);

/* 1 once the check's thread has finished its work: plane_check_finish
 * will not wait. */
int plane_check_done(const struct plane_check *c);

/* Joins the check's thread (waiting for it if needed), applies the epoch
 * rule again to the live floor, and frees c. On PLANE_OK *out is the new
 * policy, already persisted; the caller installs it with plane_installed.
 * Other verdicts leave *out NULL and err set (PLANE_SAME: nothing to do). */
enum plane_verdict plane_check_finish(struct plane *pl, struct plane_check *c,
    struct policy **out, char *err, size_t errlen);

/* SIGHUP: --policy again, with the same checks as a push, read and
 * checked on a thread of its own like plane_check_start (body aside, the
 * same contract: PLANE_BUSY, PLANE_UNAVAILABLE), collected with
 * plane_check_finish. PLANE_NO_POLICY_FILE when the guard runs without
 * --policy. */
enum plane_verdict plane_reload_start(struct plane *pl, int notify_fd,
    struct plane_check **out, char *err, size_t errlen);

/* At start (plane_start, before any thread): the same, on the calling
 * thread. PLANE_BUSY while a check is in flight. */
enum plane_verdict plane_reload(struct plane *pl, struct policy **out,
    char *err, size_t errlen);

/* Records that p is now active: it becomes the floor. */
void plane_installed(struct plane *pl, const struct policy *p);

/* For status: the number of trusted keys, and the key id of the signer of
 * the active policy ("" for an unsigned operator file). */
size_t plane_trusted_keys(const struct plane *pl);
const char *plane_signer(const struct plane *pl);

/* Before a --user drop, as root: a root-owned state folder (and its
 * bundle) becomes uid's, 0700, through the descriptor opened at start.
 * Refused, changing nothing: a folder of a third uid, and a root-owned
 * one that holds anything but the guard's own files. 0 or -1 with err. */
int plane_hand_over(struct plane *pl, uid_t uid, gid_t gid, const char *name,
    char *err, size_t errlen);
/* After the drop: whether the guard can still store there. */
int plane_state_writable(const struct plane *pl, char *err, size_t errlen);

/* For status: the state folder (NULL: --no-state), the epoch floor (-1:
 * none), and why no policy runs although there is a floor ("" if not). */
const char *plane_state_dir(const struct plane *pl);
long long plane_floor_epoch(const struct plane *pl);
const char *plane_floor_note(const struct plane *pl);

/* ---- tenant mode (docs/design.md "Tenants") ----
 * The guard's own plane holds the trusted keys and the state folder; each
 * tenant has a plane of its own sharing those keys, whose floor is the
 * bundle in STATE/tenants/ID/, and which accepts only policies that name
 * that tenant. */

/* At start, as root before any drop: STATE/tenants made (0700) and
 * checked. 0 or -1 with err. */
int plane_tenants_prepare(struct plane *pl, char *err, size_t errlen);
/* Tenant id's plane, its folder made when missing (kept when the tenant
 * is removed: re-adding it cannot roll its epoch back). Free it with
 * plane_free before its parent. NULL with err. Blocking: a few syscalls. */
struct plane *plane_tenant_new(const struct plane *parent, const char *id,
    char *err, size_t errlen);
/* Its stored bundle, if any, as plane_start reads one: *out the policy
 * (NULL: none, or its key no longer trusted; plane_floor_note says so).
 * 0 or -1 with err (a broken or another tenant's bundle). */
int plane_tenant_start(struct plane *pl, struct policy **out, char *err,
    size_t errlen);
/* The tenant a plane serves ("" for the guard's own). */
const char *plane_tenant(const struct plane *pl);
/* The tenant list (STATE/tenants.json), body (len bytes from malloc,
 * taken in every case) stored atomically as a bundle is, on a check's
 * thread (an fsync held the loop tens of milliseconds): the contract of
 * plane_check_start, collected with plane_check_finish (PLANE_OK with
 * *out NULL, or PLANE_STORE_FAILED with err). */
enum plane_verdict plane_tenants_start(struct plane *pl, char *body, size_t len,
    int notify_fd, struct plane_check **out, char *err, size_t errlen);
/* The list, read back at start: NULL and err "" when there is none; NULL
 * with err on an unsafe or unreadable file. */
char *plane_tenants_load(struct plane *pl, size_t *len, char *err, size_t errlen);

#endif
