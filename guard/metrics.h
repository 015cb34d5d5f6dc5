/* Counters behind GET /metrics (Prometheus text exposition format). They
 * are bumped exactly where the decision and close log lines are written,
 * so the two always add up. Each worker bumps its own (one writer each,
 * relaxed atomic stores); the control socket reads them all, summed
 * along next, with atomic loads. */
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
	struct metrics	*next;		/* the next worker's, or NULL */
	uint64_t	dns_answers[METRICS_DNS_RCODES];
	uint64_t	dns_dropped;
	uint64_t	handoffs;	/* connections this worker handed on */
	uint64_t	dns_log_suppressed;	/* DNS listener lines held back */
};

void metrics_decision(struct metrics *m, const char *proto, enum reason r);
void metrics_dns(struct metrics *m, double seconds);
/* A tunnel or exchange closed after relaying up and down bytes. */
void metrics_bytes(struct metrics *m, uint64_t up, uint64_t down);
/* One answer of the DNS listener with rcode; -1: a message dropped. */
void metrics_dns_answer(struct metrics *m, int rcode);
/* A DNS listener decision line not written (guard/dnslog.c). */
void metrics_dns_log_suppressed(struct metrics *m);
/* A connection accepted here, handed to another worker. */
void metrics_handoff(struct metrics *m);

/* Adds m and every struct metrics after it on next into *sum (cleared
 * first; sum->next is NULL). */
void metrics_sum(const struct metrics *m, struct metrics *sum);

/* Appends the exposition text of m and every one after it on next,
 * summed. epoch is -1 with no policy; log_lost is log_lines_lost's
 * (one count for every worker: they write through one log). */
int metrics_render(const struct metrics *m, struct evbuffer *out,
    uint64_t active, long long epoch, uint64_t log_lost);

#endif
