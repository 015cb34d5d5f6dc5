/* The grammar reports and signed receipts share, and the facts rule
 * (conform/rparse.c). Internal to conform/: callers use conform/receipt.h.
 * Library code: errors into a buffer, no logging. */
#ifndef EG_RPARSE_H
#define EG_RPARSE_H

#include <stddef.h>

#include <jansson.h>

/* The bounds the formats share; conform/receipt.h repeats the ones its
 * callers need under its own prefix (equal, checked at compile time). */
#define RPARSE_NFACTS		5
#define RPARSE_SHA256_HEX	64
#define RPARSE_MAX_BYTES	(1u << 20)	/* a report, a receipt */
#define RPARSE_DEPLOY_KEYS	16	/* "deployment": keys, value bytes */
#define RPARSE_DEPLOY_VALUE	256
#define RPARSE_MAX_ID		64	/* bytes of a case id */
#define RPARSE_MAX_VERSION	64	/* bytes of a version */
#define RPARSE_REV_TAG		"+sha256:"

/* Per fact: what the facts map claims. */
struct rparse_tally {
	int	 present;	/* the facts map has the key */
	int	 claimed;	/* ... with true */
};

/* The five fact names in canonical (sorted) order; NULL past the end. */
const char *rparse_fact_name(size_t i);
/* The index of the fact named s[0..len), or -1. */
int rparse_fact_index(const char *s, size_t len);
/* A case id: 1-64 of [A-Za-z0-9._-]. */
int rparse_is_case_id(const char *s, size_t len);

/* 1 when s[0..len) is all lowercase hex digits, else 0. */
int rparse_is_lower_hex(const char *s, size_t len);
/* A version: 1-64 of [A-Za-z0-9.+_~-], e.g. "0.1.0+git.ab12". */
int rparse_is_version(const char *s, size_t len);
/* RFC 3339 in UTC: YYYY-MM-DDTHH:MM:SS, optional .1-9 digits, then Z. */
int rparse_is_timestamp(const char *s, size_t len);
/* Seconds since the epoch of a timestamp rparse_is_timestamp accepts
 * (fractions dropped), or -1. */
long long rparse_time(const char *s, size_t len);
/* "<version>+sha256:<64 lowercase hex>"; *hash points at the hex. */
int rparse_is_revision(const char *s, size_t len, const char **hash);

/* A JSON object of at most RECEIPT_MAX_BYTES, no duplicate key; what names
 * it in err. Returns a new reference or NULL with err set. */
json_t *rparse_object(const char *buf, size_t len, const char *what,
    char *err, size_t errlen);
/* Validates a facts map (keys among the five, boolean values) into
 * t[RECEIPT_NFACTS]. Returns 0 or -1 with err set. */
int rparse_facts(json_t *facts, struct rparse_tally *t, char *err,
    size_t errlen);
/* Validates the cases array: every case complete, typed and of a known
 * fact, ids unique. With strict (a report), a case that says "pass" but
 * whose own strings disagree (observed is not expected, the control did
 * not flip or is not control_expected, no control evidence) is refused:
 * a runner bug, not something to sign. Whether a case counts is the
 * suite's decision (conform/suite.h). Returns 0 or -1 with err set. */
int rparse_cases(json_t *cases, int strict, char *err, size_t errlen);
/* Validates the optional "deployment" object of a report or a receipt:
 * 1-RECEIPT_DEPLOY_KEYS keys of [a-z_] (at most 32 bytes), each a string
 * of 1-RECEIPT_DEPLOY_VALUE printable ASCII bytes; "target", "layout",
 * "engine" and "image_id" required. where names the document in err.
 * Returns 0 or -1 with err set. */
int rparse_deployment(json_t *d, const char *where, char *err,
    size_t errlen);

#endif
