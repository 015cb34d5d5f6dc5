/* Counters behind GET /metrics (Prometheus text exposition format). They
 * are bumped exactly where the decision and close log lines are written,
 * so the two always add up. */
#ifndef EG_METRICS_H
#define EG_METRICS_H

#include <stdint.h>

#include "guard/decide.h"

struct evbuffer;

#define METRICS_DNS_BUCKETS 10

enum metrics_proto { METRICS_CONNECT = 0, METRICS_HTTP, METRICS_SOCKS5, METRICS_DNS,
    METRICS_TRANSPARENT, METRICS_NPROTO };

/* DNS listener answers by rcode (NOERROR … REFUSED), plus messages dropped
 * unanswered (guard/dnsd.c). */
#define METRICS_DNS_RCODES 6

struct metrics {
	uint64_t	decisions[METRICS_NPROTO][REASON__COUNT];
	uint64_t	bytes_up;
	uint64_t	bytes_down;
	uint64_t	dns_buckets[METRICS_DNS_BUCKETS];	/* cumulative at render */
	uint64_t	dns_count;
	double		dns_sum;
	uint64_t	dns_answers[METRICS_DNS_RCODES];
	uint64_t	dns_dropped;
};

void metrics_decision(struct metrics *m, const char *proto, enum reason r);
void metrics_dns(struct metrics *m, double seconds);
/* One answer of the DNS listener with rcode; -1: a message dropped. */
void metrics_dns_answer(struct metrics *m, int rcode);

/* Appends the exposition text. epoch is -1 with no policy. */
int metrics_render(const struct metrics *m, struct evbuffer *out,
    uint64_t active, long long epoch);

#endif
