/* Conformance receipts and grades (docs/design.md "Receipts
 * and grades"; formats in docs/receipts.md). Library code: errors into a
 * buffer, no logging. Nothing here signs: the verifier only ever holds
 * public keys (a bundle_keyring); signing lives in ctl/receiptcmd.c. */
#ifndef EG_RECEIPT_H
#define EG_RECEIPT_H

#include <stddef.h>

#include "plane/bundle.h"

#define RECEIPT_SCHEMA		"egress-guard.conformance.v2"
#define RECEIPT_REPORT_SCHEMA	"egress-guard.conformance-report.v2"
#define RECEIPT_ENVELOPE_SCHEMA	"egress-guard.receipt-envelope.v1"
#define RECEIPT_CONTEXT		"egress-guard.sandbox-egress-conformance.v1"
#define RECEIPT_PROVIDER	"egress-guard"
#define RECEIPT_MAX_BYTES	(1u << 20)	/* report, envelope (<= BUNDLE_MAX_BYTES) */
#define RECEIPT_BINARY_MAX	(64u * 1024 * 1024)	/* hashed binary */
#define RECEIPT_SHA256_HEX	64
#define RECEIPT_NFACTS		5
#define RECEIPT_DEPLOY_KEYS	16	/* "deployment": keys, value bytes */
#define RECEIPT_DEPLOY_VALUE	256
#define RECEIPT_SUITE_ID	32	/* bytes of a suite id (SUITE_MAX_ID) */
/* Clocks differ: a ran_at up to this far ahead of the checker's is not
 * yet "in the future". */
#define RECEIPT_SKEW_S		300
/* How old a receipt admit and verify take by default, and at most. */
#define RECEIPT_MAX_AGE_DAYS	30
#define RECEIPT_MAX_AGE_LIMIT	3650

/* Total order: a grade meets every requirement at or below it. */
enum receipt_grade {
	RECEIPT_UNSUPPORTED = 0,
	RECEIPT_ADVISORY_FILTER,
	RECEIPT_SECURITY_BOUNDARY
};

/* Why a receipt got its grade. Only RECEIPT_OK gives security_boundary. */
enum receipt_reason {
	RECEIPT_OK = 0,
	RECEIPT_MALFORMED,		/* not a receipt envelope: no grade */
	RECEIPT_UNTRUSTED_SIGNER,	/* key_id not among the attesters */
	RECEIPT_BAD_SIGNATURE,		/* does not verify under that key */
	RECEIPT_REVISION_MISMATCH,	/* signed for another binary */
	RECEIPT_FACTS_INCOMPLETE,	/* a fact is false, missing or unproved */
	RECEIPT_NO_SELECTOR,		/* empty facts map: unsupported */
	RECEIPT_UNKNOWN_SUITE,		/* its suite digest is not one known here */
	RECEIPT_STALE,			/* ran_at older than the maximum age */
	RECEIPT_FUTURE			/* ran_at ahead of the clock */
};

struct receipt_verdict {
	enum receipt_grade	grade;
	enum receipt_reason	reason;
	char			key_id[BUNDLE_KEY_ID_LEN + 1];	/* "" if unknown */
	/* The suite that graded the facts (a known one), "" if none: what
	 * target the grade speaks for. */
	char			suite_id[RECEIPT_SUITE_ID + 1];
};

struct receipt_report;	/* a parsed conformance report */
struct suite_set;	/* conform/suite.h */
struct suite_grade;

/* What a verifier holds a receipt against. */
struct receipt_check {
	const struct suite_set	*suites;	/* the suites it grades by */
	const char		*sha256;	/* the binary in hand, hex */
	long long		 now;		/* seconds since the epoch */
	long long		 max_age_s;	/* oldest ran_at taken, seconds */
};

/* The five fact names in canonical (sorted) order; i < RECEIPT_NFACTS. */
const char *receipt_fact_name(size_t i);

/* "unsupported", "advisory_filter", "security_boundary". */
const char *receipt_grade_name(enum receipt_grade g);
/* Parses a grade name exactly. Returns 0, or -1 for anything else. */
int receipt_grade_parse(const char *s, enum receipt_grade *out);
/* 1 when have meets need in the total order, else 0. */
int receipt_grade_meets(enum receipt_grade have, enum receipt_grade need);
/* "ok", "malformed", "untrusted_signer", "bad_signature",
 * "revision_mismatch", "facts_incomplete", "no_selector",
 * "unknown_suite", "stale", "ran_at_in_future". */
const char *receipt_reason_name(enum receipt_reason r);

/* Parses a report (build/conformance/report.json) strictly: every key
 * known, every value typed, each case complete and self-consistent, its
 * suite one of suites, and its ran_at not ahead of now (seconds since the
 * epoch) by more than RECEIPT_SKEW_S. Returns NULL with err set on any
 * refusal. */
struct receipt_report *receipt_report_parse(const char *buf, size_t len,
    const struct suite_set *suites, long long now, char *err,
    size_t errlen);
void receipt_report_free(struct receipt_report *r);
/* The report's guard_binary: the default binary to hash. */
const char *receipt_report_guard_binary(const struct receipt_report *r);
/* The report's guard_sha256: the SHA-256 (lowercase hex) of the binary the
 * matrix ran, taken when its guards started. */
const char *receipt_report_guard_sha256(const struct receipt_report *r);
/* 0 when sha256 (the binary about to be certified) is the one the matrix
 * ran; -1 with err naming both hashes otherwise. A receipt certifies what
 * was tested, not what is on disk when it is signed. */
int receipt_report_check_binary(const struct receipt_report *r,
    const char *sha256, char *err, size_t errlen);
/* Whether the receipt will hold fact i true (see receipt_fact_name): the
 * report claims it and every case its suite requires for it passes with
 * its control's evidence. When it is false, a one-line note why in note
 * (naming the first case that made it so). */
int receipt_report_fact(const struct receipt_report *r, size_t i,
    char *note, size_t notelen);

/* The canonical receipt bytes for the report and the SHA-256 (lowercase
 * hex, RECEIPT_SHA256_HEX chars) of the guard binary that ran. Facts are
 * recomputed from the suite and the cases, never copied; the suite is
 * named by id, version and digest. Returns a malloc'd,
 * NUL-terminated buffer (*len excludes the NUL) or NULL with err set. */
char *receipt_canonical(const struct receipt_report *r, const char *sha256,
    size_t *len, char *err, size_t errlen);

/* The bytes a receipt signature covers: RECEIPT_CONTEXT, one 0x00, then
 * the canonical receipt. Shared by the signer and the verifier. Returns a
 * malloc'd buffer or NULL. */
unsigned char *receipt_signed_message(const char *canon, size_t len,
    size_t *outlen);

/* Grades an envelope (JSON bytes) against the attesters in kr and chk.
 * Returns 0 with v filled when a grade was decided (err then says why it
 * is not security_boundary, or is ""); -1 when the input is malformed
 * (v->reason RECEIPT_MALFORMED, no grade). */
int receipt_verify(const struct bundle_keyring *kr, const char *buf,
    size_t len, const struct receipt_check *chk, struct receipt_verdict *v,
    char *err, size_t errlen);

/* A receipt opened for a person to read (receipt show): what it signs and
 * how its suite grades its cases. Nothing here says the signature holds. */
struct receipt_view {
	char		 key_id[BUNDLE_KEY_ID_LEN + 1];
	const char	*revision;	/* provider_revision */
	const char	*ran_at;
	const char	*suite_id;	/* as the receipt names it */
	long long	 suite_version;
	const char	*suite_digest;
	int		 suite_known;	/* the digest is one of the suites */
	int		 signed_facts[RECEIPT_NFACTS];	/* -1 absent, 0, 1 */
	struct suite_grade *grade;	/* NULL when the suite is unknown */
	void		*priv;
};

/* Opens the envelope at buf without trusting it. Returns 0, or -1 with err
 * set (malformed). receipt_view_free releases it. */
int receipt_view_open(const char *buf, size_t len,
    const struct suite_set *suites, struct receipt_view *rv, char *err,
    size_t errlen);
void receipt_view_free(struct receipt_view *rv);

/* Seconds since the epoch of an RFC 3339 UTC time that
 * rparse_is_timestamp accepts (fractions dropped), or -1. */
long long receipt_time(const char *s, size_t len);

/* SHA-256 of a regular file of at most RECEIPT_BINARY_MAX bytes, as
 * lowercase hex (RECEIPT_SHA256_HEX chars and a NUL). Returns 0, or -1 with
 * err starting with the path. Blocking: for CLI use. */
int receipt_file_sha256(const char *path, char *hex, char *err,
    size_t errlen);

#endif
