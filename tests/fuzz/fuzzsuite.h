/* The suite fuzz_receipt grades by, and fuzz_suite starts from: one case
 * per fact, each evidence kind once. tests/fuzz/mkcorpus.py reads the
 * string below (its pieces joined, only \" escapes) to name its digest in the
 * seed receipts, and writes reports whose cases match it; so keep the
 * two in step, and rerun mkcorpus.py after any edit here. */
#ifndef EG_FUZZSUITE_H
#define EG_FUZZSUITE_H

#include <string.h>

#include "conform/suite.h"
#include "tests/fuzz/fuzz.h"

#define FUZZ_SUITE \
    "{\"schema\":\"egress-guard.conformance-suite.v1\",\"id\":\"fuzz\"," \
    "\"version\":1," \
    "\"target\":\"fuzz harness\",\"cases\":[" \
    "{\"id\":\"c-0\",\"fact\":\"exact_destination_match\"," \
    "\"expected\":\"deny\",\"control_expected\":\"allow\"," \
    "\"evidence\":\"listener\"}," \
    "{\"id\":\"c-1\",\"fact\":\"connect_time_public_address\"," \
    "\"expected\":\"deny\",\"control_expected\":\"allow\"," \
    "\"evidence\":\"resolver\"}," \
    "{\"id\":\"c-2\",\"fact\":\"redirect_recheck\"," \
    "\"expected\":\"deny\",\"control_expected\":\"allow\"," \
    "\"evidence\":\"counter\"}," \
    "{\"id\":\"c-3\",\"fact\":\"authority_separation\"," \
    "\"expected\":\"deny\",\"control_expected\":\"allow\"," \
    "\"evidence\":\"socket\"}," \
    "{\"id\":\"c-4\",\"fact\":\"default_deny\"," \
    "\"expected\":\"deny\",\"control_expected\":\"allow\"," \
    "\"evidence\":\"process\"}]}"

/* A set holding FUZZ_SUITE alone, parsed once. */
static inline void
fuzz_suite_set(struct suite_set *set)
{
	static struct suite *one[1];
	char err[256];

	one[0] = suite_parse(FUZZ_SUITE, strlen(FUZZ_SUITE), err, sizeof(err));
	if (one[0] == NULL) {
		fprintf(stderr, "fuzz suite: %s\n", err);
		abort();
	}
	set->v = one;
	set->n = 1;
}

#endif
