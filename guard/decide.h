/* The decision steps shared by every client protocol and by `egress-guard
 * check`: one code path, so what `check` prints is what the proxy does.
 * Pure functions over the policy and the classifier. */
#ifndef EG_DECIDE_H
#define EG_DECIDE_H

#include <stddef.h>

#include "policy/dest.h"
#include "resolver/classify.h"
#include "resolver/resolver.h"

struct policy;

enum reason {
	REASON_ALLOWLISTED = 0,
	REASON_UNRESTRICTED,
	REASON_NO_POLICY,
	REASON_NOT_ALLOWLISTED,
	REASON_NON_PUBLIC_ADDRESS,
	REASON_BAD_REQUEST,
	REASON_METHOD_NOT_ALLOWED,
	REASON_HEADER_TOO_LARGE,
	REASON_HEADER_TIMEOUT,
	REASON_DNS_FAILURE,
	REASON_DNS_TIMEOUT,
	REASON_UPSTREAM_UNREACHABLE,
	REASON_UPSTREAM_TIMEOUT,
	REASON_OVERLOADED,
	REASON_SNI_MISMATCH,
	REASON_REVOKED,
	/* Transparent mode (guard/transp.c). */
	REASON_NO_ORIGINAL_DST,
	REASON_TRANSPARENT_LOOP,
	REASON_UNIDENTIFIED,
	REASON_HOST_CHANGED,
	REASON__COUNT
};

/* Wire name ("not_allowlisted"), HTTP status (0 for log-only reasons) and
 * status text. */
const char *reason_name(enum reason r);
int reason_status(enum reason r);
const char *reason_status_text(enum reason r);
/* 1 for the two allow reasons. */
int reason_is_allow(enum reason r);

/* Step "policy": p may be NULL (no policy loaded). Returns
 * REASON_ALLOWLISTED / REASON_UNRESTRICTED when admitted, else the deny
 * reason. Runs before any lookup. */
enum reason decide_policy(const struct policy *p, const struct dest *d);

/* Step "classification": classifies every address; res (n entries) may be
 * NULL. Returns 1 when every address is public, 0 otherwise (and for
 * n == 0). */
int decide_addrs(const struct classify_cfg *cfg, const struct resolver_addr *a,
    size_t n, struct classify_result *res);

/* decide_addrs for a refusal's record: when an answer is not public, why
 * names the first such one and what decided it ("answer 60 of 60:
 * 10.99.0.5 10.0.0.0/8 Private-Use"), since a decision line lists only
 * the first answers. Returns what decide_addrs returns. */
int decide_addrs_why(const struct classify_cfg *cfg,
    const struct resolver_addr *a, size_t n, char *why, size_t whylen);

/* Formats one address ("198.18.0.10" or "2001:2::10") into buf. */
void decide_addr_str(const struct resolver_addr *a, char *buf, size_t len);

#endif
