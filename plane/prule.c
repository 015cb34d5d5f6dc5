#include <string.h>

#include "plane/prule.h"
#include "policy/policy.h"
#include "util/errbuf.h"

/* signer: the key that signed p, "" when p came unsigned. */
enum plane_verdict
prule_epoch(const struct prule_floor *f, const struct policy *p, const char *signer,
    char *err, size_t errlen)
{
	if (f->epoch < 0)
		return PLANE_OK;
	/* The floor outlives its policy when that policy's key is no longer
	 * trusted: the message says which of the two the caller ran into. */
	if (policy_epoch(p) < f->epoch) {
		errbuf_set(err, errlen, "epoch %lld is below the %s epoch %lld",
		    policy_epoch(p), f->active ? "active" : "floor", f->epoch);
		return PLANE_STALE_EPOCH;
	}
	if (policy_epoch(p) == f->epoch) {
		if (strcmp(policy_digest(p), f->digest) != 0) {
			errbuf_set(err, errlen, "epoch %lld is %s with another "
			    "digest", f->epoch, f->active ? "already active" :
			    "the floor, kept from a bundle whose key is no longer "
			    "trusted,");
			return PLANE_EPOCH_CONFLICT;
		}
		/* An unsigned file never replaces a stored bundle. */
		if (!f->active ||
		    (signer[0] != '\0' && strcmp(signer, f->signer) != 0))
			return PLANE_OK;
		return PLANE_SAME;
	}
	return PLANE_OK;
}

/* The tenant a policy names must be the plane's: a bundle signed for
 * tenant a is refused when pushed as b's, and by a guard serving no
 * tenant. A policy that names none is refused by a tenant's plane. */
enum plane_verdict
prule_tenant(const char *tenant, const struct policy *p, char *err,
    size_t errlen)
{
	const char *named = policy_tenant(p);

	if (tenant[0] == '\0' && named == NULL)
		return PLANE_OK;
	if (named != NULL && strcmp(named, tenant) == 0)
		return PLANE_OK;
	if (tenant[0] == '\0')
		errbuf_set(err, errlen, "the policy is tenant %s's; this guard serves "
		    "no tenant", named);
	else if (named == NULL)
		errbuf_set(err, errlen, "the policy names no tenant; tenant %s takes "
		    "only a policy compiled for it (compile --tenant %s)", tenant,
		    tenant);
	else
		errbuf_set(err, errlen, "the policy is tenant %s's, pushed to tenant %s",
		    named, tenant);
	return PLANE_WRONG_TENANT;
}

enum plane_verdict
prule_bundle(const struct bundle_keyring *kr, const char *buf, size_t len,
    struct policy **out, char *signer, char *err, size_t errlen)
{
	enum bundle_error why = BUNDLE_MALFORMED;

	*out = bundle_verify(kr, buf, len, signer, &why, err, errlen);
	if (*out != NULL)
		return PLANE_OK;
	switch (why) {
	case BUNDLE_UNKNOWN_KEY:	return PLANE_UNKNOWN_KEY;
	case BUNDLE_BAD_SIGNATURE:	return PLANE_BAD_SIGNATURE;
	default:			return PLANE_MALFORMED;
	}
}
