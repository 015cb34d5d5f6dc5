#ifndef EG_CHECK_H
#define EG_CHECK_H

/* `egress-guard check HOST:PORT --policy FILE [--dns …] [--allow-range …]
 * [--deny-range …]`: explains one decision for a reviewer, through the same
 * decide_* steps the proxy runs, without connecting. Exit 0 allow, 1 deny,
 * 2 error: bad flags or HOST:PORT, an unreadable policy, output not
 * written. */
int check_main(int argc, char **argv);

/* check's arguments, for its usage and the program's ("usage: " and
 * "   or: " are as wide as the continuation's indent). */
#define CHECK_ARGS \
    "HOST:PORT --policy FILE [--trust-key PUB.pem]... [--dns IP[:PORT]]...\n" \
    "       [--allow-range CIDR]... [--deny-range CIDR]... [--dns-timeout S]"

#endif
