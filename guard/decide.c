#include <arpa/inet.h>
#include <sys/socket.h>

#include <stdio.h>
#include <string.h>

#include "guard/decide.h"
#include "policy/policy.h"
#include "util/errbuf.h"
#include "util/mutant.h"

static const struct {
	const char	*name;
	int		 status;
	const char	*text;
} reasons[REASON__COUNT] = {
	[REASON_ALLOWLISTED]		= { "allowlisted", 200, "OK" },
	[REASON_UNRESTRICTED]		= { "unrestricted", 200, "OK" },
	[REASON_NO_POLICY]		= { "no_policy", 403, "Forbidden" },
	[REASON_NOT_ALLOWLISTED]	= { "not_allowlisted", 403, "Forbidden" },
	[REASON_NON_PUBLIC_ADDRESS]	= { "non_public_address", 403, "Forbidden" },
	[REASON_BAD_REQUEST]		= { "bad_request", 400, "Bad Request" },
	[REASON_METHOD_NOT_ALLOWED]	= { "method_not_allowed", 405, "Method Not Allowed" },
	[REASON_HEADER_TOO_LARGE]	= { "header_too_large", 431, "Request Header Fields Too Large" },
	[REASON_HEADER_TIMEOUT]		= { "header_timeout", 408, "Request Timeout" },
	[REASON_DNS_FAILURE]		= { "dns_failure", 502, "Bad Gateway" },
	[REASON_DNS_TIMEOUT]		= { "dns_timeout", 504, "Gateway Timeout" },
	[REASON_UPSTREAM_UNREACHABLE]	= { "upstream_unreachable", 502, "Bad Gateway" },
	[REASON_UPSTREAM_TIMEOUT]	= { "upstream_timeout", 504, "Gateway Timeout" },
	[REASON_OVERLOADED]		= { "overloaded", 503, "Service Unavailable" },
	[REASON_SNI_MISMATCH]		= { "sni_mismatch", 0, "" },
	[REASON_REVOKED]		= { "revoked", 403, "Forbidden" },
	[REASON_NO_ORIGINAL_DST]	= { "no_original_dst", 0, "" },
	[REASON_TRANSPARENT_LOOP]	= { "transparent_loop", 0, "" },
	[REASON_UNIDENTIFIED]		= { "unidentified", 0, "" },
	[REASON_HOST_CHANGED]		= { "host_changed", 400, "Bad Request" },
};

const char *
reason_name(enum reason r)
{
	return (unsigned)r < REASON__COUNT ? reasons[r].name : "internal_error";
}

int
reason_status(enum reason r)
{
	return (unsigned)r < REASON__COUNT ? reasons[r].status : 500;
}

const char *
reason_status_text(enum reason r)
{
	return (unsigned)r < REASON__COUNT ? reasons[r].text : "Internal Server Error";
}

int
reason_is_allow(enum reason r)
{
	return r == REASON_ALLOWLISTED || r == REASON_UNRESTRICTED;
}

enum reason
decide_policy(const struct policy *p, const struct dest *d)
{
	if (p == NULL)
		return REASON_NO_POLICY;
	if (!policy_admits(p, d->host, d->port))
		return REASON_NOT_ALLOWLISTED;
	return policy_mode(p) == POLICY_UNRESTRICTED ? REASON_UNRESTRICTED :
	    REASON_ALLOWLISTED;
}

int
decide_addrs(const struct classify_cfg *cfg, const struct resolver_addr *a,
    size_t n, struct classify_result *res)
{
	size_t i;
	int all = n > 0;

#ifdef EG_MUTANT_NO_CLASSIFY
	/* Test-only mutant (make conformance-mutants): the matrix must catch
	 * a guard that skips classification. */
	return all;
#endif
	/* No early exit: every answer is classified, so logs and `check`
	 * show each one. */
	for (i = 0; i < n; i++) {
		if (!classify_addr(cfg, a[i].family, a[i].addr,
		    res != NULL ? &res[i] : NULL))
			all = 0;
	}
	return all;
}

int
decide_addrs_why(const struct classify_cfg *cfg, const struct resolver_addr *a,
    size_t n, char *why, size_t whylen)
{
	struct classify_result res;
	char addr[INET6_ADDRSTRLEN];
	size_t i;

	if (decide_addrs(cfg, a, n, NULL))
		return 1;
	errbuf_set(why, whylen, "no answer");
	for (i = 0; i < n; i++) {
		if (classify_addr(cfg, a[i].family, a[i].addr, &res))
			continue;
		decide_addr_str(&a[i], addr, sizeof(addr));
		errbuf_set(why, whylen, "answer %zu of %zu: %s %s", i + 1, n,
		    addr, res.range != NULL ? res.range : "non-public");
		break;
	}
	return 0;
}

void
decide_addr_str(const struct resolver_addr *a, char *buf, size_t len)
{
	char v6[DEST_V6_TEXT];

	/* IPv6 in the grammar's own spelling, so that an address copied
	 * from a log line or `check` into a policy parses. */
	if (a->family == AF_INET6) {
		dest_ipv6_str(a->addr, v6);
		if (len > strlen(v6))
			memcpy(buf, v6, strlen(v6) + 1);
		else
			snprintf(buf, len, "?");	/* never a partial address */
		return;
	}
	if (inet_ntop(a->family, a->addr, buf, (socklen_t)len) == NULL)
		snprintf(buf, len, "?");
}
