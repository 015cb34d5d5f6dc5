/* The DNS listener's decision lines, bounded per client: a workload
 * that sends queries as fast as it can must not fill the log's disk
 * (one line per answer came to 21 MB/s in the audit). Each client
 * address has a bucket of DNSLOG_BURST lines refilled at DNSLOG_RATE a
 * second; a line beyond it is not written but counted, and the count
 * goes out as one `dns_log_suppressed` line per client at most once a
 * DNSLOG_EVERY_S (guard/logevery.c). The metrics count every answer
 * whether its line was written or not. */
#ifndef EG_DNSLOG_H
#define EG_DNSLOG_H

#include <sys/socket.h>

#define DNSLOG_CLIENTS	64	/* addresses with a bucket of their own */
#define DNSLOG_BURST	100	/* lines a client may write at once */
#define DNSLOG_RATE	20	/* lines a second a client gets back */
#define DNSLOG_IDLE_MS	10000	/* a bucket quiet this long may be reused */
#define DNSLOG_EVERY_S	1	/* one aggregate line per client per second */

struct log;
struct metrics;
struct dnslog;

/* NULL when out of memory. */
struct dnslog *dnslog_new(struct log *lg, struct metrics *m);
/* Writes the counts not yet in a line; NULL does nothing. */
void dnslog_free(struct dnslog *dl);

/* 1 when the decision line of a query from sa may be written now; 0 when
 * it is counted into its client's aggregate line instead. A client beyond
 * the DNSLOG_CLIENTS busy ones shares one bucket with every other such
 * client (logged as client "other"), so the lines of the whole listener
 * are bounded too. NULL dl admits every line. */
int dnslog_admit(struct dnslog *dl, const struct sockaddr *sa);

#endif
