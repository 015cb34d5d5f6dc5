#include <time.h>
#include <unistd.h>

#include <event2/buffer.h>

#include "guard/config.h"
#include "plane/ctljson.h"
#include "plane/plane.h"
#include "policy/catalog.h"
#include "policy/policy.h"
#include "resolver/classify.h"
#include "resolver/resolver.h"
#include "util/jsonw.h"

/* The only strings we put in are our own messages, digests and
 * addresses, but they are kept inert anyway (util/jsonw.h). */
void
ctljson_str(struct evbuffer *out, const char *s)
{
	char e[JSONW_ESC_MAX];

	evbuffer_add(out, "\"", 1);
	for (; *s != '\0'; s++)
		evbuffer_add(out, e, jsonw_escape_byte((unsigned char)*s, e));
	evbuffer_add(out, "\"", 1);
}

void
ctljson_error(struct evbuffer *b, const char *error, const char *msg)
{
	evbuffer_add_printf(b, "{\"error\":");
	ctljson_str(b, error);
	evbuffer_add_printf(b, ",\"message\":");
	ctljson_str(b, msg);
	evbuffer_add_printf(b, "}\n");
}

/* "catalog":{…} or null: the catalog a policy's package managers were
 * expanded from. */
static void
catalog_of(struct evbuffer *b, const struct policy *p)
{
	if (policy_catalog_version(p) == NULL) {
		evbuffer_add_printf(b, ",\"catalog\":null");
		return;
	}
	evbuffer_add_printf(b, ",\"catalog\":{\"digest\":\"%s\",\"version\":",
	    policy_catalog_digest(p));
	ctljson_str(b, policy_catalog_version(p));
	evbuffer_add_printf(b, "}");
}

/* "granted":{"profile":N,"package_managers:npm":M,…}: how many entries
 * each part of the profile granted, none listed that granted none. */
static void
granted(struct evbuffer *b, const struct policy *p)
{
	size_t count[CATALOG_NECOSYSTEMS + 1] = { 0 }, i, n = policy_entries(p), hl;
	const char *h;
	unsigned via, first = 1;
	uint16_t port;

	for (i = 0; i < n; i++) {
		policy_entry_get(p, i, &h, &hl, &port, &via);
		if (via <= CATALOG_NECOSYSTEMS)
			count[via]++;
	}
	evbuffer_add_printf(b, ",\"granted\":{");
	for (via = 0; via <= CATALOG_NECOSYSTEMS; via++) {
		if (count[via] == 0)
			continue;
		evbuffer_add_printf(b, "%s\"%s\":%zu", first ? "" : ",",
		    policy_via_name(via), count[via]);
		first = 0;
	}
	evbuffer_add_printf(b, "}");
}

void
ctljson_policy(struct evbuffer *b, const struct policy *p, int full)
{
	const char *canon;
	size_t clen;

	if (p == NULL) {
		evbuffer_add_printf(b, "{\"epoch\":null,\"digest\":null,\"mode\":\"none\","
		    "\"entries\":0,\"loaded\":false,\"catalog\":null%s}%s",
		    full ? ",\"granted\":{},\"policy\":null" : "", full ? "\n" : "");
		return;
	}
	evbuffer_add_printf(b, "{\"epoch\":%lld,\"digest\":\"%s\",\"mode\":\"%s\","
	    "\"entries\":%zu,\"loaded\":true", policy_epoch(p), policy_digest(p),
	    policy_mode_name(policy_mode(p)), policy_entries(p));
	catalog_of(b, p);
	if (full) {
		/* The canonical bytes themselves, JSON already: every entry
		 * with the flag and ecosystem that granted it, and what
		 * `push --no-widen` compares with (their digest is "digest"). */
		granted(b, p);
		canon = policy_canonical(p, &clen);
		evbuffer_add_printf(b, ",\"policy\":");
		evbuffer_add(b, canon, clen);
	}
	evbuffer_add_printf(b, "}%s", full ? "\n" : "");
}

void
ctljson_accepted(struct evbuffer *b, const struct policy *p, size_t revoked)
{
	evbuffer_add_printf(b, "{\"epoch\":%lld,\"digest\":\"%s\",\"revoked\":%zu}\n",
	    policy_epoch(p), policy_digest(p), revoked);
}

/* [ "cidr", ... ] */
static void
cidr_list(struct evbuffer *b, const struct cidr *c, size_t n)
{
	char buf[128];
	size_t i;

	evbuffer_add_printf(b, "[");
	for (i = 0; i < n; i++) {
		(void)cidr_format(&c[i], buf, sizeof(buf));
		evbuffer_add_printf(b, "%s", i ? "," : "");
		ctljson_str(b, buf);
	}
	evbuffer_add_printf(b, "]");
}

void
ctljson_status(struct evbuffer *b, const struct ctljson_status *st)
{
	const struct config *cfg = st->cfg;
	const struct plane *pl = st->plane;
	char buf[128];
	size_t i;

	evbuffer_add_printf(b, "{\"version\":\"%s\",\"revision\":", st->version);
	ctljson_str(b, st->revision);
	/* The bytes running, not the ones on disk: a receipt certifies a
	 * hash, and admit compares it with this one. */
	evbuffer_add_printf(b, ",\"binary_sha256\":");
	if (st->binary_sha256 != NULL)
		ctljson_str(b, st->binary_sha256);
	else
		evbuffer_add_printf(b, "null");
	evbuffer_add_printf(b, ",\"listeners\":[");
	for (i = 0; i < cfg->nlisten; i++) {
		(void)dest_format(&cfg->listen[i], buf, sizeof(buf));
		evbuffer_add_printf(b, "%s", i ? "," : "");
		ctljson_str(b, buf);
	}
	evbuffer_add_printf(b, "],\"allow_ranges\":");
	cidr_list(b, cfg->allow, cfg->nallow);
	evbuffer_add_printf(b, ",\"deny_ranges\":");
	cidr_list(b, cfg->deny, cfg->ndeny);
	evbuffer_add_printf(b, ",\"dns\":");
	ctljson_str(b, resolver_servers(st->resolver));
	evbuffer_add_printf(b, ",\"active_connections\":%llu,\"uptime_s\":%lld,"
	    "\"trusted_keys\":%zu,\"policy_signer\":",
	    (unsigned long long)st->nconns,
	    (long long)(time(NULL) - st->started), plane_trusted_keys(pl));
	ctljson_str(b, plane_signer(pl));
	/* How the connections sit over the worker loops: a worker that
	 * serves far more than the others runs them on one CPU. */
	evbuffer_add_printf(b, ",\"worker_connections\":[");
	for (i = 0; i < st->nworkers; i++)
		evbuffer_add_printf(b, "%s%u", i ? "," : "", st->worker_conns[i]);
	evbuffer_add_printf(b, "]");
	/* What the process runs as now, after any --user drop: an operator
	 * sees a guard left running as root without reading its log. */
	evbuffer_add_printf(b, ",\"uid\":%u,\"running_as_root\":%s",
	    (unsigned)geteuid(), geteuid() == 0 ? "true" : "false");
	/* No state folder means no epoch floor across a restart: shown, not
	 * only warned at start. */
	evbuffer_add_printf(b, ",\"state_dir\":");
	if (plane_state_dir(pl) != NULL)
		ctljson_str(b, plane_state_dir(pl));
	else
		evbuffer_add_printf(b, "null");
	evbuffer_add_printf(b, ",\"epoch_floor\":");
	if (plane_floor_epoch(pl) >= 0)
		evbuffer_add_printf(b, "%lld", plane_floor_epoch(pl));
	else
		evbuffer_add_printf(b, "null");
	if (plane_floor_note(pl)[0] != '\0') {
		evbuffer_add_printf(b, ",\"floor_note\":");
		ctljson_str(b, plane_floor_note(pl));
	}
	/* Tenant mode: each tenant's policy is at /v1/tenants/ID/status. */
	if (st->tenants >= 0)
		evbuffer_add_printf(b, ",\"tenants\":%lld", st->tenants);
	evbuffer_add_printf(b, ",\"policy\":");
	ctljson_policy(b, st->policy, 0);
	evbuffer_add_printf(b, "}\n");
}
