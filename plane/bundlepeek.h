/* What a bundle says, without trusting it: the policy inside an envelope
 * whose signature is not (or cannot be) checked. For two uses only: the
 * guard keeps a stored bundle's epoch as its floor when the key that
 * signed it is no longer trusted (key rotation), and egress-guardctl
 * compares the digest the guard answers with the one it pushed. Never a
 * policy to enforce. */
#ifndef EG_BUNDLEPEEK_H
#define EG_BUNDLEPEEK_H

#include <stddef.h>

#include "plane/bundle.h"

/* The policy inside the bundle JSON at buf (schema checked, signature
 * not), and its key id (BUNDLE_KEY_ID_LEN + 1 bytes) when key_id is not
 * NULL. NULL with err when the bytes are no bundle. */
struct policy *bundlepeek_policy(const char *buf, size_t len, char *key_id,
    char *err, size_t errlen);

/* The digest of the policy inside the bundle at buf (what a guard that
 * installs it answers with), without parsing that policy: "sha256:" and
 * 64 hex digits into digest (POLICY_DIGEST_LEN + 1 bytes). -1 with err
 * when the bytes are no bundle. For egress-guardctl push: parsing a
 * 100,000-entry policy to learn its digest cost 230 ms. */
int bundlepeek_digest(const char *buf, size_t len, char *digest, char *err,
    size_t errlen);

#endif
