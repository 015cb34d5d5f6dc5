#include <string.h>

#include <event2/buffer.h>

#include "guard/metrics.h"

static const char *const proto_names[METRICS_NPROTO] = {
	"connect", "http", "socks5", "dns", "transparent"
};
static const char *const rcode_names[METRICS_DNS_RCODES] = {
	"NOERROR", "FORMERR", "SERVFAIL", "NXDOMAIN", "NOTIMP", "REFUSED"
};
static const double dns_bounds[METRICS_DNS_BUCKETS] = {
	0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.5, 1, 5
};

/* One writer per counter (its worker): a relaxed load and store is an
 * increment no reader sees torn. */
static void
bump(uint64_t *v, uint64_t by)
{
	__atomic_store_n(v, __atomic_load_n(v, __ATOMIC_RELAXED) + by, __ATOMIC_RELAXED);
}

static uint64_t
get(const uint64_t *v)
{
	return __atomic_load_n(v, __ATOMIC_RELAXED);
}

void
metrics_decision(struct metrics *m, const char *proto, enum reason r)
{
	int p;

	for (p = 0; p < METRICS_NPROTO; p++)
		if (strcmp(proto, proto_names[p]) == 0)
			break;
	if (p == METRICS_NPROTO || (unsigned)r >= REASON__COUNT)
		return;
	bump(&m->decisions[p][r], 1);
}

void
metrics_dns(struct metrics *m, double seconds)
{
	int i;

	for (i = 0; i < METRICS_DNS_BUCKETS; i++) {
		if (seconds <= dns_bounds[i]) {
			bump(&m->dns_buckets[i], 1);
			break;
		}
	}
	bump(&m->dns_count, 1);
	{
		double sum;
		__atomic_load(&m->dns_sum, &sum, __ATOMIC_RELAXED);
		sum += seconds;
		__atomic_store(&m->dns_sum, &sum, __ATOMIC_RELAXED);
	}
}

void
metrics_bytes(struct metrics *m, uint64_t up, uint64_t down)
{
	bump(&m->bytes_up, up);
	bump(&m->bytes_down, down);
}

void
metrics_sum(const struct metrics *m, struct metrics *sum)
{
	int p, r, i;

	memset(sum, 0, sizeof(*sum));
	for (; m != NULL; m = m->next) {
		double d;
		for (p = 0; p < METRICS_NPROTO; p++)
			for (r = 0; r < REASON__COUNT; r++)
				sum->decisions[p][r] += get(&m->decisions[p][r]);
		sum->bytes_up += get(&m->bytes_up);
		sum->bytes_down += get(&m->bytes_down);
		for (i = 0; i < METRICS_DNS_BUCKETS; i++)
			sum->dns_buckets[i] += get(&m->dns_buckets[i]);
		sum->dns_count += get(&m->dns_count);
		for (i = 0; i < METRICS_DNS_RCODES; i++)
			sum->dns_answers[i] += get(&m->dns_answers[i]);
		sum->dns_dropped += get(&m->dns_dropped);
		sum->handoffs += get(&m->handoffs);
		sum->dns_log_suppressed += get(&m->dns_log_suppressed);
		__atomic_load(&m->dns_sum, &d, __ATOMIC_RELAXED);
		sum->dns_sum += d;
	}
}

void
metrics_dns_answer(struct metrics *m, int rcode)
{
	if (rcode >= 0 && rcode < METRICS_DNS_RCODES)
		bump(&m->dns_answers[rcode], 1);
	else
		bump(&m->dns_dropped, 1);
}

void
metrics_dns_log_suppressed(struct metrics *m)
{
	bump(&m->dns_log_suppressed, 1);
}

void
metrics_handoff(struct metrics *m)
{
	bump(&m->handoffs, 1);
}

int
metrics_render(const struct metrics *all, struct evbuffer *out, uint64_t active,
    long long epoch, uint64_t log_lost)
{
	struct metrics sum, *m = &sum;
	uint64_t cum = 0;
	int p, r, i;

	metrics_sum(all, &sum);
	evbuffer_add_printf(out,
	    "# HELP egress_guard_decisions_total Requests decided, by decision, reason and client protocol.\n"
	    "# TYPE egress_guard_decisions_total counter\n");
	for (p = 0; p < METRICS_NPROTO; p++) {
		for (r = 0; r < REASON__COUNT; r++) {
			if (m->decisions[p][r] == 0)
				continue;
			evbuffer_add_printf(out,
			    "egress_guard_decisions_total{decision=\"%s\",reason=\"%s\",proto=\"%s\"} %llu\n",
			    reason_is_allow((enum reason)r) ? "allow" : "deny",
			    reason_name((enum reason)r), proto_names[p],
			    (unsigned long long)m->decisions[p][r]);
		}
	}
	evbuffer_add_printf(out,
	    "# HELP egress_guard_active_connections Client connections open now.\n"
	    "# TYPE egress_guard_active_connections gauge\n"
	    "egress_guard_active_connections %llu\n"
	    "# HELP egress_guard_bytes_total Bytes relayed by closed tunnels, by direction (up: client to upstream).\n"
	    "# TYPE egress_guard_bytes_total counter\n"
	    "egress_guard_bytes_total{direction=\"up\"} %llu\n"
	    "egress_guard_bytes_total{direction=\"down\"} %llu\n"
	    "# HELP egress_guard_dns_seconds Time to resolve a name (A and AAAA together).\n"
	    "# TYPE egress_guard_dns_seconds histogram\n",
	    (unsigned long long)active, (unsigned long long)m->bytes_up,
	    (unsigned long long)m->bytes_down);
	for (i = 0; i < METRICS_DNS_BUCKETS; i++) {
		cum += m->dns_buckets[i];
		evbuffer_add_printf(out, "egress_guard_dns_seconds_bucket{le=\"%g\"} %llu\n",
		    dns_bounds[i], (unsigned long long)cum);
	}
	evbuffer_add_printf(out,
	    "egress_guard_dns_seconds_bucket{le=\"+Inf\"} %llu\n"
	    "egress_guard_dns_seconds_sum %.6f\n"
	    "egress_guard_dns_seconds_count %llu\n"
	    "# HELP egress_guard_policy_epoch Epoch of the active policy (-1: none loaded).\n"
	    "# TYPE egress_guard_policy_epoch gauge\n"
	    "egress_guard_policy_epoch %lld\n",
	    (unsigned long long)m->dns_count, m->dns_sum,
	    (unsigned long long)m->dns_count, epoch);
	evbuffer_add_printf(out,
	    "# HELP egress_guard_dns_answers_total Answers of the DNS listener, by rcode.\n"
	    "# TYPE egress_guard_dns_answers_total counter\n");
	for (i = 0; i < METRICS_DNS_RCODES; i++)
		evbuffer_add_printf(out, "egress_guard_dns_answers_total{rcode=\"%s\"} %llu\n",
		    rcode_names[i], (unsigned long long)m->dns_answers[i]);
	evbuffer_add_printf(out,
	    "# HELP egress_guard_dns_dropped_total Messages to the DNS listener left unanswered (short, a response, oversized).\n"
	    "# TYPE egress_guard_dns_dropped_total counter\n"
	    "egress_guard_dns_dropped_total %llu\n", (unsigned long long)m->dns_dropped);
	evbuffer_add_printf(out,
	    "# HELP egress_guard_dns_log_lines_suppressed_total DNS listener decision lines not written (per-client bound); their answers are counted above.\n"
	    "# TYPE egress_guard_dns_log_lines_suppressed_total counter\n"
	    "egress_guard_dns_log_lines_suppressed_total %llu\n",
	    (unsigned long long)m->dns_log_suppressed);
	evbuffer_add_printf(out,
	    "# HELP egress_guard_handoffs_total Connections a worker accepted and handed to a less loaded worker.\n"
	    "# TYPE egress_guard_handoffs_total counter\n"
	    "egress_guard_handoffs_total %llu\n", (unsigned long long)m->handoffs);
	evbuffer_add_printf(out,
	    "# HELP egress_guard_log_lines_lost_total Log lines lost: the log could not take them (a full disk, a reader that does not read).\n"
	    "# TYPE egress_guard_log_lines_lost_total counter\n"
	    "egress_guard_log_lines_lost_total %llu\n", (unsigned long long)log_lost);
	return 0;
}
