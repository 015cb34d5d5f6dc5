/* What the benchmark's load generator and target share: strict numbers
 * and the loopback-only address they accept. */
#ifndef EG_BENCH_COMMON_H
#define EG_BENCH_COMMON_H

#include <netinet/in.h>

/* strtonum-like: decimal only, no sign, no junk, within [min, max]. */
int bench_parse_num(const char *s, unsigned long long min,
    unsigned long long max, unsigned long long *out);

/* "IP:PORT" with IP in 127.0.0.0/8 (the bench never leaves loopback). */
int bench_parse_loopback(const char *s, struct sockaddr_in *sin);
/* The same, or IP in 10.0.0.0/8: the address of a listener in a network
 * namespace the bench made itself (bench/tenants: a tenant's listener is
 * bound to its link, out of reach of loopback). Never a routed address. */
int bench_parse_local(const char *s, struct sockaddr_in *sin);

#endif
