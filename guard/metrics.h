/* Counters behind GET /metrics (Prometheus text exposition format). They
 * are bumped exactly where the decision and close log lines are written,
 * so the two always add up. */
#ifndef EG_METRICS_H
#define EG_METRICS_H

#include <stdint.h>

#include "guard/decide.h"

struct evbuffer;

#define METRICS_DNS_BUCKETS 10

enum metrics_proto { METRICS_CONNECT = 0, METRICS_HTTP, METRICS_SOCKS5, METRICS_TRANSPARENT,
    METRICS_NPROTO };

struct metrics {
	uint64_t	decisions[METRICS_NPROTO][REASON__COUNT];
	uint64_t	bytes_up;
	uint64_t	bytes_down;
	uint64_t	dns_buckets[METRICS_DNS_BUCKETS];	/* cumulative at render */
	uint64_t	dns_count;
	double		dns_sum;
};

void metrics_decision(struct metrics *m, const char *proto, enum reason r);
void metrics_dns(struct metrics *m, double seconds);

/* Appends the exposition text. epoch is -1 with no policy. */
int metrics_render(const struct metrics *m, struct evbuffer *out,
    uint64_t active, long long epoch);

#endif
