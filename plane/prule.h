/* The rules a policy change must pass before it may become active, as
 * pure functions of the change and what is active (docs/design.md "Policy
 * authority", "Tenants"): the epoch never goes backwards, the same epoch
 * only with the same digest; a policy is the tenant's it is pushed to.
 * The lowest layer of plane/: no file, no thread, no key. */
#ifndef EG_PRULE_H
#define EG_PRULE_H

#include <stddef.h>

#include "plane/bundle.h"
#include "policy/policy.h"

enum plane_verdict {
	PLANE_OK = 0,		/* new policy: install it */
	PLANE_SAME,		/* same epoch and digest as active: nothing to do */
	PLANE_MALFORMED,	/* 400 */
	PLANE_UNKNOWN_KEY,	/* 403 */
	PLANE_BAD_SIGNATURE,	/* 403 */
	PLANE_STALE_EPOCH,	/* 409: lower epoch */
	PLANE_EPOCH_CONFLICT,	/* 409: same epoch, other digest */
	PLANE_STORE_FAILED,	/* 500: could not persist; nothing changed */
	PLANE_BUSY,		/* 503: another change is being checked */
	PLANE_UNAVAILABLE,	/* 503: no memory or thread to check it */
	PLANE_NO_POLICY_FILE,	/* SIGHUP only: the guard runs without --policy */
	PLANE_WRONG_TENANT	/* 403: signed for another tenant, or none */
};

/* The active policy's epoch and digest: what the epoch rule compares
 * with. */
struct prule_floor {
	long long	 epoch;		/* -1: no policy accepted yet */
	char		 digest[POLICY_DIGEST_LEN + 1];
	/* 0: read from a stored bundle whose key is no longer trusted. It
	 * holds the epoch, but its policy is not active, so the same epoch
	 * and digest signed by a trusted key is news, not "unchanged". */
	int		 active;
	/* Who signed the active policy; "" for an unsigned --policy file
	 * (or none). The same policy signed by another key is news too: it
	 * must replace the stored bundle, or a restart after the old key is
	 * removed (a rotation) would find no trusted policy. */
	char		 signer[BUNDLE_KEY_ID_LEN + 1];
};

/* p against the floor f; signer: the key that signed p, "" when p came
 * unsigned. PLANE_OK (news: install it), PLANE_SAME (nothing to do),
 * PLANE_STALE_EPOCH or PLANE_EPOCH_CONFLICT with err. */
enum plane_verdict prule_epoch(const struct prule_floor *f, const struct policy *p,
    const char *signer, char *err, size_t errlen);

/* A bundle's bytes verified against the keyring: *out the policy and
 * signer its key id on PLANE_OK; else PLANE_UNKNOWN_KEY,
 * PLANE_BAD_SIGNATURE or PLANE_MALFORMED with err. */
enum plane_verdict prule_bundle(const struct bundle_keyring *kr, const char *buf,
    size_t len, struct policy **out, char *signer, char *err, size_t errlen);

/* The tenant p names must be tenant ("" for a guard serving none):
 * PLANE_OK, or PLANE_WRONG_TENANT with err. */
enum plane_verdict prule_tenant(const char *tenant, const struct policy *p,
    char *err, size_t errlen);

#endif
