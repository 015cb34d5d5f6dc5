/* Conformance receipts and grades (docs/design.md "Receipts
 * and grades"; formats in docs/receipts.md). Library code: errors into a
 * buffer, no logging. Nothing here signs: the verifier only ever holds
 * public keys (a bundle_keyring); signing lives in ctl/receiptcmd.c. */
#ifndef EG_RECEIPT_H
#define EG_RECEIPT_H

#include <stddef.h>

#include "plane/bundle.h"

#define RECEIPT_SCHEMA		"egress-guard.conformance.v1"
#define RECEIPT_REPORT_SCHEMA	"egress-guard.conformance-report.v1"
#define RECEIPT_ENVELOPE_SCHEMA	"egress-guard.receipt-envelope.v1"
#define RECEIPT_CONTEXT		"egress-guard.sandbox-egress-conformance.v1"
#define RECEIPT_PROVIDER	"egress-guard"
#define RECEIPT_MAX_BYTES	(1u << 20)	/* report, envelope (<= BUNDLE_MAX_BYTES) */
#define RECEIPT_BINARY_MAX	(64u * 1024 * 1024)	/* hashed binary */
#define RECEIPT_SHA256_HEX	64
#define RECEIPT_NFACTS		5
#define RECEIPT_DEPLOY_KEYS	16	/* "deployment": keys, value bytes */
#define RECEIPT_DEPLOY_VALUE	256

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
	RECEIPT_NO_SELECTOR		/* empty facts map: unsupported */
};

struct receipt_verdict {
	enum receipt_grade	grade;
	enum receipt_reason	reason;
	char			key_id[BUNDLE_KEY_ID_LEN + 1];	/* "" if unknown */
};

struct receipt_report;	/* a parsed conformance report */

/* The five fact names in canonical (sorted) order; i < RECEIPT_NFACTS. */
const char *receipt_fact_name(size_t i);

/* "unsupported", "advisory_filter", "security_boundary". */
const char *receipt_grade_name(enum receipt_grade g);
/* Parses a grade name exactly. Returns 0, or -1 for anything else. */
int receipt_grade_parse(const char *s, enum receipt_grade *out);
/* 1 when have meets need in the total order, else 0. */
int receipt_grade_meets(enum receipt_grade have, enum receipt_grade need);
/* "ok", "malformed", "untrusted_signer", "bad_signature",
 * "revision_mismatch", "facts_incomplete", "no_selector". */
const char *receipt_reason_name(enum receipt_reason r);

/* Parses a report (build/conformance/report.json) strictly: every key
 * known, every value typed, each case complete and self-consistent.
 * Returns NULL with err set on any refusal. */
struct receipt_report *receipt_report_parse(const char *buf, size_t len,
    char *err, size_t errlen);
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
/* Whether the receipt will hold fact i true (see receipt_fact_name), and,
 * when the report claimed true but the cases do not prove it, a one-line
 * note why in note (else note is ""). */
int receipt_report_fact(const struct receipt_report *r, size_t i,
    char *note, size_t notelen);

/* The canonical receipt bytes for the report and the SHA-256 (lowercase
 * hex, RECEIPT_SHA256_HEX chars) of the guard binary that ran. Facts are
 * recomputed from the cases, never copied. Returns a malloc'd,
 * NUL-terminated buffer (*len excludes the NUL) or NULL with err set. */
char *receipt_canonical(const struct receipt_report *r, const char *sha256,
    size_t *len, char *err, size_t errlen);

/* The bytes a receipt signature covers: RECEIPT_CONTEXT, one 0x00, then
 * the canonical receipt. Shared by the signer and the verifier. Returns a
 * malloc'd buffer or NULL. */
unsigned char *receipt_signed_message(const char *canon, size_t len,
    size_t *outlen);

/* Grades an envelope (JSON bytes) against the attesters in kr and the
 * SHA-256 hex of the binary in hand. Returns 0 with v filled when a grade
 * was decided (err then says why it is not security_boundary, or is "");
 * -1 when the input is malformed (v->reason RECEIPT_MALFORMED, no grade). */
int receipt_verify(const struct bundle_keyring *kr, const char *buf,
    size_t len, const char *sha256, struct receipt_verdict *v, char *err,
    size_t errlen);

/* SHA-256 of a regular file of at most RECEIPT_BINARY_MAX bytes, as
 * lowercase hex (RECEIPT_SHA256_HEX chars and a NUL). Returns 0, or -1 with
 * err starting with the path. Blocking: for CLI use. */
int receipt_file_sha256(const char *path, char *hex, char *err,
    size_t errlen);

#endif
