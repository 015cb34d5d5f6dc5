/* The grammar reports and signed receipts share, and the facts rule
 * (conform/rparse.c). Internal to conform/: callers use conform/receipt.h.
 * Library code: errors into a buffer, no logging. */
#ifndef EG_RPARSE_H
#define EG_RPARSE_H

#include <stddef.h>

#include <jansson.h>

#include "conform/receipt.h"

#define RPARSE_MAX_ID		64	/* bytes of a case id */
#define RPARSE_MAX_VERSION	64	/* bytes of a version */
#define RPARSE_REV_TAG		"+sha256:"

/* Per fact: what was claimed and what the cases prove. */
struct rparse_tally {
	int	 present;	/* the facts map has the key */
	int	 claimed;	/* ... with true */
	size_t	 ncases;
	size_t	 npass;
	char	 first_bad[RPARSE_MAX_ID + 1];	/* first non-passing case */
};

/* 1 when s[0..len) is all lowercase hex digits, else 0. */
int rparse_is_lower_hex(const char *s, size_t len);
/* A version: 1-64 of [A-Za-z0-9.+_~-], e.g. "0.1.0+git.ab12". */
int rparse_is_version(const char *s, size_t len);
/* RFC 3339 in UTC: YYYY-MM-DDTHH:MM:SS, optional .1-9 digits, then Z. */
int rparse_is_timestamp(const char *s, size_t len);
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
/* Validates the cases array into t[] (ncases, npass, first_bad). With
 * strict, a case that says "pass" but whose strings disagree is refused;
 * otherwise it merely does not count. Returns 0 or -1 with err set. */
int rparse_cases(json_t *cases, int strict, struct rparse_tally *t,
    char *err, size_t errlen);
/* Validates the optional "deployment" object of a report or a receipt:
 * 1-RECEIPT_DEPLOY_KEYS keys of [a-z_] (at most 32 bytes), each a string
 * of 1-RECEIPT_DEPLOY_VALUE printable ASCII bytes; "target", "layout",
 * "engine" and "image_id" required. where names the document in err.
 * Returns 0 or -1 with err set. */
int rparse_deployment(json_t *d, const char *where, char *err,
    size_t errlen);
/* 1 when the fact is claimed true and every one of its (>= 1) cases
 * passes, else 0. */
int rparse_proved(const struct rparse_tally *t);
/* Why a claimed-true fact is not proved, or "" when nothing to say. */
void rparse_note(const struct rparse_tally *t, const char *name, char *note,
    size_t notelen);

#endif
